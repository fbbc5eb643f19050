/* The straight-line code between two taken branches of a branch stack: from
 * an entry's target (e(k+1).to) through the next newer entry's source
 * (e(k).from), both included. Everything in between retired exactly once per
 * time the pair appears: it holds no taken branch, so it is made of code runs
 * (pmu_model/block.h) that end in a conditional branch not taken, a system
 * call or a REP string instruction, and a last run that ends at e(k).from.
 * This is the unit of instruction counting of LBR-based profiles (perf script
 * -F brstackinsn prints one per entry; the CPI method's instruction frequency
 * counts every instruction of each range once). */
#ifndef PMUSIM_PROFILER_LBR_RANGE_H
#define PMUSIM_PROFILER_LBR_RANGE_H

#include <stdint.h>

#include "profiler/binary.h"

/* Called for every run of the range in order, with its instructions that
 * retired in the range (all of them: the last run ends at e(k).from, its
 * terminator). Returns 0, or a negative pmusim_err that stops the walk. */
typedef int (*lbr_range_fn)(void *ctx, const struct block_info *run, uint32_t n);

/* Why a range cannot be walked (negative results of lbr_range_walk). */
enum lbr_range_err {
	/* below every pmusim_err, so that a callback's error passes through */
	LBR_RANGE_FOREIGN = -101,   /* an end lies outside the binary's code */
	LBR_RANGE_BACKWARDS = -102, /* from lies before to */
	LBR_RANGE_UNCOND = -103,    /* an unconditional transfer lies inside */
	LBR_RANGE_NOT_BRANCH = -104,/* from is not a branch instruction */
	LBR_RANGE_TOO_LONG = -105,  /* more than LBR_RANGE_MAX instructions */
	LBR_RANGE_OFF_TEXT = -106,  /* the walk meets undecodable or trapping code */
};

#define LBR_RANGE_MAX 65536u

/* Walks the range from `to` through `from`, calling fn (may be NULL) per run.
 * Returns the number of instructions of the range (>= 1, from included), an
 * lbr_range_err, or fn's error. */
int64_t lbr_range_walk(struct binary *b, uint64_t to, uint64_t from, lbr_range_fn fn, void *ctx);

/* Short name of an lbr_range_err ("foreign", "backwards", …; "error" for others). */
const char *lbr_range_err_name(int64_t err);

#endif
