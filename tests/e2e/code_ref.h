/* A program's code as binutils sees it, and the exact executions and cycles of its basic
 * blocks from a pmusim truth JSON, for end-to-end tests that place samples in
 * instructions and blocks. The instructions, their lengths and what kind of branch each
 * is come from `objdump -d` (GNU's own decoder: no Capstone, nothing of pmusim's); the
 * counts come from the truth's "blocks" (its runs: a start, a number of instructions,
 * executions, cycles) and, when written with --truth-insns, its "insns" (every
 * instruction's retirements and program cycles), read as text.
 *
 * Basic blocks here: the truth's runs overlap (a loop entered at its top and re-entered
 * by its back edge gives two runs that share their tail), so the runs are cut at every
 * run's first instruction and after every run's last one; each piece is a basic block,
 * whose instructions all execute the same number of times (the sum of the executions of
 * the runs that hold it). */
#ifndef PMUSIM_TESTS_E2E_CODE_REF_H
#define PMUSIM_TESTS_E2E_CODE_REF_H

#include <stddef.h>
#include <stdint.h>

/* What objdump's mnemonic says an instruction is (prefixes such as bnd, notrack, lock,
 * rep, data16 and segment overrides skipped): a near branch or not. */
enum code_branch {
	CODE_NO_BRANCH = 0,
	CODE_COND, /* j<cc>, jrcxz, jecxz, loop, loope, loopne */
	CODE_JMP,  /* jmp */
	CODE_CALL, /* call */
	CODE_RET,  /* ret */
};

struct code_insn {
	uint64_t addr;
	uint32_t len;         /* bytes objdump lists for it */
	uint8_t branch;       /* enum code_branch */
	uint8_t mem_operand;  /* its operands have a memory reference ("[") */
	uint64_t target;      /* a direct branch's target as objdump prints it, else 0 */
	/* after code_blocks: */
	uint64_t count;       /* executions: those of the runs that hold it */
	uint64_t retired;     /* the truth's "insns" figure (0 without them): count, but
	                       * for a run cut short (--max-insns), which "blocks" counts
	                       * as an execution and "insns" as the instructions it retired */
	uint64_t cycles;      /* program cycles (the truth's "insns"; 0 without them) */
	int64_t block;        /* index into code.block, -1 when never executed */
};

struct code_block {
	size_t first;         /* index of its first instruction in code.insn */
	uint32_t n;           /* instructions */
	uint64_t count;       /* executions */
	uint64_t cycles;      /* the sum of its instructions' cycles */
};

struct code {
	struct code_insn *insn; /* ascending addresses */
	size_t n;
	struct code_block *block; /* ascending addresses */
	size_t nblocks;
	uint64_t instructions;  /* the sum over blocks of n * count */
	uint64_t cycles;        /* the sum over blocks of cycles */
	int have_cycles;        /* the truth had "insns" */
};

/* Every instruction `objdump -d` lists in prog. 0, or -1 with a reason in msg. */
int code_read(const char *prog, struct code *c, char *msg, size_t msglen);

/* The instruction at addr, or NULL. */
const struct code_insn *code_at(const struct code *c, uint64_t addr);

/* Fills the counts and basic blocks from a truth JSON of prog. 0, or -1 with a reason
 * in msg: a run that starts where objdump has no instruction, crosses a gap in its
 * listing or runs past it, or an "insns" line of an instruction objdump does not list
 * or no run holds. */
int code_blocks(struct code *c, const char *truth_json, char *msg, size_t msglen);

void code_free(struct code *c);

#endif
