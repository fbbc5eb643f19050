/* Exact per-function costs of a run, self and inclusive, from the retired-block
 * stream: what a CI baseline records of each function (pmusim stat --json) and
 * what a callgrind profile shows.
 *
 * Self: every instruction counts for the function whose symbol covers it (a run
 * that falls from one function into the next is split, and enters the next one
 * there); a run's cycles and mispredictions (the clock's increase while it
 * retired) and its branch count go to the function of its last instruction
 * that retired (its terminator's, as the truth's do, unless the run was cut); a
 * function's
 * calls are the call instructions that went to its first instruction.
 *
 * Inclusive: each thread keeps a shadow stack of frames, as callgrind does. A
 * call pushes a frame of the callee; a return pops the newest frame whose
 * return address is where it went, and every frame above it (longjmp); a jump
 * to the first instruction of another function replaces the newest frame (a
 * tail call); a run in a function below on the stack, reached by no call or
 * return, pops down to it (a signal's return, a longjmp by jump); a run in any
 * other function reached so pushes a frame for it (a signal handler, the
 * thread's first function). A frame's inclusive cost is the thread's costs
 * from its push to its pop; a function counts only its outermost frame on a
 * thread's stack (recursion is not counted twice). Frames still open at the end
 * close there (func_costs_finish). So inclusive >= self, and the thread's first
 * function's inclusive is the thread's whole cost.
 * No Unicorn, no I/O. */
#ifndef PMUSIM_PROFILER_FUNC_COSTS_H
#define PMUSIM_PROFILER_FUNC_COSTS_H

#include <stddef.h>
#include <stdint.h>

#include "common/symtab.h"
#include "pmu_model/block.h"

/* The costs kept: the first FC_BASE_KINDS are a baseline's (cli/stat_baseline.h);
 * the conditional and indirect (jmp, call through a register or memory) branches
 * and their mispredictions are callgrind's Bc, Bcm, Bi, Bim (a run's
 * mispredictions are its terminator's). */
enum fc_kind {
	FC_INSNS, FC_CYCLES, FC_BRANCHES, FC_MISSES,
	FC_COND, FC_COND_MISSES, FC_IND, FC_IND_MISSES,
	FC_NKIND
};
#define FC_BASE_KINDS 4

struct fc_cost {
	uint64_t v[FC_NKIND];
};

/* The timing model's running totals, read after it took each block: cycles and
 * mispredicted branches so far (NULL functions: 0). */
struct fc_clock {
	uint64_t (*cycles)(void *ctx);
	uint64_t (*misses)(void *ctx);
	void *ctx;
};

struct fc_func {
	uint64_t addr;           /* the symbol's address; 0: code no symbol covers */
	struct fc_cost self, incl;
	uint64_t calls;          /* call instructions to its first instruction */
};

struct func_costs;

/* Costs by the functions of st (its size checked at every block: a table that
 * grows as libraries map is followed). NULL when out of memory. */
struct func_costs *func_costs_new(const struct symtab *st, struct fc_clock clock);
void func_costs_free(struct func_costs *fc);

/* The sink to add after the timing model's. */
struct block_sink func_costs_sink(struct func_costs *fc);

/* Detail for a per-instruction profile (profiler/callgrind_out.h), asked before
 * the run: the runs seen and each one's branch costs at its terminator, and the
 * call edges, each with its calls and the inclusive costs of the frames it
 * pushed (every frame, recursive ones too, as callgrind counts call costs). */
void func_costs_keep_detail(struct func_costs *fc);

struct fc_run {
	const struct block_info *bi; /* as first seen (the decode cache keeps it) */
	uint64_t branch[4];           /* at its terminator: FC_COND..FC_IND_MISSES */
};
/* The runs seen, by id (bi NULL: none of that id); with detail. */
const struct fc_run *func_costs_runs(const struct func_costs *fc, size_t *n);

struct fc_edge {
	uint64_t site;   /* the call instruction */
	uint64_t callee; /* the function's address (0: no symbol) */
	uint64_t calls;
	struct fc_cost incl;
};
/* The call edges (by site, then callee); with detail; after func_costs_finish. */
const struct fc_edge *func_costs_edges(struct func_costs *fc, size_t *n);

/* Closes every open frame (the end of the run). */
void func_costs_finish(struct func_costs *fc);

/* The functions that ran, by address (the one without a symbol, addr 0, first
 * when any code ran outside every symbol); after func_costs_finish (the list is
 * sorted in place); valid until func_costs_free. */
const struct fc_func *func_costs_list(struct func_costs *fc, size_t *n);

/* 0, or PMUSIM_ERR_NOMEM when memory ran out during the run (the costs are then
 * incomplete). */
int func_costs_error(const struct func_costs *fc);

#endif
