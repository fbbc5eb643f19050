/* The retired-block stream: the one record type through which execution reaches
 * every consumer (ground truth, and from #3 the PMU model). It lives on the
 * consumer side so pmu_model/ never depends on sim/.
 *
 * A *code run* (struct block_info) is the straight-line sequence of instructions
 * from a start address up to and including the first control transfer, REP
 * string instruction, SYSCALL or trapping instruction (its terminator). Runs are
 * keyed by start address, so a jump into the middle of a run starts a new,
 * overlapping run. A *retired block* (struct retired_block) says that the first
 * `ninsns` instructions of a run retired, in one go, on one thread. */
#ifndef PMUSIM_PMU_MODEL_BLOCK_H
#define PMUSIM_PMU_MODEL_BLOCK_H

#include <stdint.h>

/* How a code run ends. */
enum br_kind {
	BK_NONE = 0,  /* no terminator retired: the run was cut (emulator block limit, stop) */
	BK_COND,      /* conditional branch: jcc, loop*, j*cxz */
	BK_JMP,       /* direct unconditional jump */
	BK_JMP_IND,   /* indirect jump (register or memory) */
	BK_CALL,      /* direct near call */
	BK_CALL_IND,  /* indirect near call */
	BK_RET,       /* near return */
	BK_SYSCALL,   /* syscall instruction: not a branch, control returns to the next insn */
	BK_REP,       /* REP-prefixed string instruction: not a branch */
	BK_TRAP,      /* int3, int n, ud2, hlt, undecodable bytes: execution faults here */
	BK_COUNT
};

/* Instruction classes for the timing model (pmu_model/ from #3). */
enum insn_class {
	IC_ALU = 0,   /* simple integer ops, moves between registers, lea */
	IC_MUL,
	IC_DIV,
	IC_LOAD,      /* integer op or move that reads memory */
	IC_STORE,     /* writes memory (read-modify-write counts as store) */
	IC_BRANCH,    /* any control transfer */
	IC_STRING,    /* string instruction (with or without REP) */
	IC_SIMD,      /* SSE/x87 floating point and vector */
	IC_SYSCALL,
	IC_NOP,
	IC_OTHER,     /* cpuid, rdtsc, fences, … */
	IC_COUNT
};

/* Flags of a code run. */
#define BI_REP_ECX     0x01  /* REP uses ECX (0x67 address-size prefix) */
#define BI_REP_COND    0x02  /* repe/repne cmps/scas: may stop before the count runs out */
#define BI_COND_EQ_FT  0x04  /* conditional branch whose target is its own fall-through */

/* Condition of a BK_COND terminator (x86 cc encoding 0..15, plus the count forms). */
enum br_cond {
	CC_O = 0, CC_NO, CC_B, CC_AE, CC_E, CC_NE, CC_BE, CC_A,
	CC_S, CC_NS, CC_P, CC_NP, CC_L, CC_GE, CC_LE, CC_G,
	CC_LOOP, CC_LOOPE, CC_LOOPNE, CC_JCXZ, CC_JECXZ, CC_JRCXZ
};

struct block_info {
	uint64_t start;   /* address of the first instruction */
	uint64_t end;     /* address just past the last instruction (the fall-through) */
	uint64_t term;    /* address of the last instruction */
	uint64_t target;  /* static target of a direct branch; 0 otherwise */
	uint32_t id;      /* dense index, unique among live runs of one decode cache */
	uint16_t ninsns;  /* instructions in the run, terminator included */
	uint8_t kind;     /* enum br_kind of the terminator */
	uint8_t cond;     /* enum br_cond when kind == BK_COND */
	uint8_t flags;    /* BI_* */
	uint8_t term_len; /* length in bytes of the terminator */
	const uint16_t *off;   /* off[i]: offset of instruction i from start; off[ninsns] = end - start */
	const uint8_t *cls;    /* cls[i]: enum insn_class of instruction i */
};

/* REP string instructions (retired_block.rep_part). An execution of a REP begins when
 * the thread reaches the instruction by program flow, with requested = the count
 * register (RCX, ECX under 0x67), and ends when the instruction retires (the count
 * ran out or its repe/repne condition ended it). When a fault or a signal takes the
 * thread to a handler in the middle of it, the part done so far is reported in the
 * block being retired (RB_REP_LEFT); if the handler returns into the REP, the rest is
 * a further part of the same execution (RB_REP_RESUMED: same requested count, the
 * execution is not counted again); if it does not (siglongjmp, death), the execution
 * ends there. A block carrying a part may retire no instruction (ninsns 0: the REP,
 * first of its run, was left). */
#define RB_REP_RAN     0x1  /* this block carries a part of a REP execution (rep_* valid) */
#define RB_REP_RESUMED 0x2  /* the part continues an execution begun in an earlier part */
#define RB_REP_LEFT    0x4  /* the REP did not retire: the part ended in the middle of it */

struct retired_block {
	const struct block_info *info;
	uint64_t next;      /* address that executes next (the target when taken) */
	uint64_t rep_iters; /* REP parts: iterations performed in this part */
	uint32_t tid;       /* guest thread id */
	uint32_t ninsns;    /* instructions retired, <= info->ninsns */
	uint8_t kind;       /* info->kind, or BK_NONE when the terminator did not retire */
	uint8_t taken;      /* branches: 1 when taken (always 1 for jmp/call/ret) */
	uint8_t run_start;  /* 1 when entered by a control transfer or at program start */
	uint8_t new_context;/* 1 for the first block after a context switch or an execve
	                     * (another thread or address space runs from here on) */
	uint64_t rep_count; /* REP parts: the count register (masked to ECX under 0x67)
	                     * when the execution began (its requested count) */
	uint64_t sp;        /* RSP after the block, for calls, returns and indirect jumps when
	                     * a consumer asked for it (sim_tstack_new,
	                     * sim_track_true_stacks); 0 otherwise. After
	                     * a call it is where the return address was pushed. */
	uint64_t rep_left;  /* REP parts: the count register when the part ended (not 0
	                     * at a retirement: the condition ended it) */
	uint8_t rep_part;   /* RB_REP_* (0: no REP part) */
};

/* Flags of block_sink.whole: the retired_block fields of the same names. */
#define RB_WHOLE_TAKEN       0x1
#define RB_WHOLE_RUN_START   0x2
#define RB_WHOLE_NEW_CONTEXT 0x4

/* A consumer's table of whole-block counts by run and outcome, which the
 * stream may keep for it instead of calling it (block_sink.counts):
 * n[id * 4 + (run_start << 1 | taken)] counts the whole retirements of run id
 * (id < cap) ending so. The stream adds 1 itself only to a count that is not 0,
 * for a run whose kind's bit (1 << kind) is in kinds, in a block that starts no
 * new context; it calls whole() for every other block, so the consumer sees the
 * first of each. The consumer owns n and may grow it (n and cap change). */
struct block_counts {
	uint64_t *n;
	uint32_t cap;
	uint32_t kinds;
};

/* Consumer of the stream. Called once per retired block, in program order:
 * retire() with the block; or, when the consumer has whole() and the block ran
 * its whole run (ninsns == info->ninsns, kind == info->kind) with no REP part,
 * whole() with the same figures passed in registers, so that the common case
 * builds no record in memory; or, with counts, not at all when the stream
 * counted the block there. */
struct block_sink {
	void (*retire)(void *ctx, const struct retired_block *rb);
	void *ctx;
	void (*whole)(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
		      unsigned flags);
	struct block_counts *counts;
};

/* The retired_block that block_sink.whole's arguments stand for. */
static inline void retired_block_whole(struct retired_block *rb, const struct block_info *bi, uint64_t next,
				       uint64_t sp, uint32_t tid, unsigned flags)
{
	rb->info = bi;
	rb->next = next;
	rb->tid = tid;
	rb->ninsns = bi->ninsns;
	rb->kind = bi->kind;
	rb->taken = (uint8_t)(flags & RB_WHOLE_TAKEN);
	rb->run_start = (uint8_t)((flags & RB_WHOLE_RUN_START) != 0);
	rb->new_context = (uint8_t)((flags & RB_WHOLE_NEW_CONTEXT) != 0);
	rb->sp = sp;
	rb->rep_part = 0;
	rb->rep_iters = rb->rep_count = rb->rep_left = 0;
}

/* Short lower-case name ("cond", "jmp", "call_ind", …) of a br_kind. */
const char *br_kind_name(int kind);

/* 1 when a retired block of this kind is a branch for LBR/edge purposes. */
static inline int br_kind_is_branch(int kind)
{
	return kind >= BK_COND && kind <= BK_RET;
}

#endif
