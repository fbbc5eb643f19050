/* The branch instructions of a program's own functions, as GNU objdump's
 * disassembly shows them. Part of the native reference (tests/ref/): it shares
 * no code and no decoding rule with pmusim (no common/decode.c, no Capstone);
 * what is a branch, and where it goes, is read from `objdump -d` text. */
#ifndef PMUSIM_TESTS_REF_OBJDUMP_SITES_H
#define PMUSIM_TESTS_REF_OBJDUMP_SITES_H

#include <stddef.h>
#include <stdint.h>

/* The control transfers objdump names: conditional (jcc, loop*, jcxz/jecxz/jrcxz),
 * direct and indirect jmp, direct and indirect call, ret. Far transfers (ljmp,
 * lcall, lret, iret) are not sites. SITE_REP: a REP string instruction (a table of
 * its own: sites_load_rep). */
enum site_kind { SITE_COND, SITE_JMP, SITE_JMP_IND, SITE_CALL, SITE_CALL_IND, SITE_RET, SITE_REP };

/* One branch instruction and what the native run counted at it. */
struct site {
	uint64_t addr;
	uint64_t next;   /* the next instruction's address (fall-through, return address) */
	uint64_t target; /* direct branches: the destination objdump prints; else 0 */
	enum site_kind kind;
	size_t func;  /* index in site_table.funcs */
	uint8_t orig; /* the instruction's first byte, while an INT3 replaces it */
	int addr32;   /* SITE_REP: its memory operands are 32-bit registers ("(%esi)"): an
	               * address-size prefix, so ECX is the count register */
	uint64_t executions, taken, not_taken; /* taken/not_taken: SITE_COND only */
};

/* An own function: [start, end) covers every instruction objdump lists under its label. */
struct site_func {
	char name[256];
	uint64_t start, end;
};

struct site_table {
	struct site *sites; /* sorted by addr */
	size_t nsites;
	struct site_func *funcs; /* in the order objdump lists them */
	size_t nfuncs;
};

/* Fills t with the branch sites of prog's functions named by own: an ELF object
 * (its defined text symbols, read with `nm --defined-only`: the workload's NAME.o
 * that the static program was linked from) or a text file of function names, one
 * a line. Every name must label exactly one function in prog's disassembly (a
 * name defined twice would be ambiguous). Returns 0, or -1 with a message in err. */
int sites_load(struct site_table *t, const char *prog, const char *own, char *err, size_t errlen);

/* The same for the REP string instructions instead of the branches: every
 * instruction objdump lists with a rep, repz or repnz prefix before movs, stos,
 * cmps, scas, lods, ins or outs (with or without a b/w/l/q suffix), kind SITE_REP. */
int sites_load_rep(struct site_table *t, const char *prog, const char *own, char *err,
                   size_t errlen);

/* The site at addr, or NULL. */
struct site *sites_find(const struct site_table *t, uint64_t addr);

/* The kind's name, as pmusim's --truth-json spells kinds: "cond", "jmp",
 * "jmp_ind", "call", "call_ind", "ret". */
const char *site_kind_name(enum site_kind k);

void sites_free(struct site_table *t);

#endif
