/* Branch predictor of the timing model: a gshare direction predictor (2-bit
 * counters indexed by branch address XOR global history; McFarling, "Combining
 * Branch Predictors", DEC WRL TN-36, 1993), a tagless buffer of last targets for
 * indirect jumps and calls, and a return stack buffer. Direct jumps and calls
 * are always predicted (their target is decoded). Embedded struct; no I/O. */
#ifndef PMUSIM_PMU_MODEL_BPRED_H
#define PMUSIM_PMU_MODEL_BPRED_H

#include <stdint.h>

#include "pmu_model/block.h"
#include "pmu_model/cpu_model.h"

struct bpred {
	uint8_t *pht;         /* 2-bit counters, 0..3, >= 2 predicts taken */
	uint64_t *btb;        /* last target per indirect site slot */
	uint64_t *rsb;        /* return addresses, circular */
	uint32_t pht_mask, btb_mask, hist_mask;
	uint32_t hist;
	uint32_t rsb_depth, rsb_top;
};

/* 0, or PMUSIM_ERR_NOMEM. */
int bpred_init(struct bpred *bp, const struct cpu_model *cpu);
void bpred_fini(struct bpred *bp);

/* Predicts the terminator of a retired block and learns its outcome. Returns 1
 * when the branch was mispredicted, 0 when predicted (or not a branch).
 * fallthrough is the address after the terminator (a call's return address). */
int bpred_update(struct bpred *bp, int kind, uint64_t pc, uint64_t fallthrough, int taken,
		 uint64_t next);

/* bpred_update for a conditional branch, inline for the PMU's hot path. */
static inline int bpred_cond(struct bpred *bp, uint64_t pc, int taken)
{
	/* branch-free: the guest's outcomes are often unpredictable for the host too */
	static const uint8_t next[4][2] = {{0, 1}, {0, 2}, {1, 3}, {2, 3}};
	uint32_t t = taken != 0;
	uint8_t *c = &bp->pht[((uint32_t)pc ^ bp->hist) & bp->pht_mask];
	int miss = (int)((uint32_t)(*c >> 1) ^ t);
	*c = next[*c & 3][t];
	bp->hist = ((bp->hist << 1) | t) & bp->hist_mask;
	return miss;
}

#endif
