/* gshare + indirect-target buffer + return stack buffer (see bpred.h). */
#include "pmu_model/bpred.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

int bpred_init(struct bpred *bp, const struct cpu_model *cpu)
{
	memset(bp, 0, sizeof(*bp));
	size_t npht = (size_t)1 << cpu->gshare_bits, nbtb = (size_t)1 << cpu->btb_bits;
	bp->pht = malloc(npht);
	bp->btb = calloc(nbtb, sizeof(uint64_t));
	bp->rsb = calloc(cpu->rsb_depth ? cpu->rsb_depth : 1, sizeof(uint64_t));
	if (!bp->pht || !bp->btb || !bp->rsb) {
		bpred_fini(bp);
		return PMUSIM_ERR_NOMEM;
	}
	memset(bp->pht, 1, npht); /* weakly not taken */
	bp->pht_mask = (uint32_t)(npht - 1);
	bp->btb_mask = (uint32_t)(nbtb - 1);
	bp->hist_mask = (uint32_t)((1u << cpu->hist_bits) - 1);
	bp->rsb_depth = cpu->rsb_depth ? cpu->rsb_depth : 1;
	return 0;
}

void bpred_fini(struct bpred *bp)
{
	free(bp->pht);
	free(bp->btb);
	free(bp->rsb);
	memset(bp, 0, sizeof(*bp));
}

static int predict_indirect(struct bpred *bp, uint64_t pc, uint64_t next)
{
	uint64_t *slot = &bp->btb[(pc ^ (pc >> 12)) & bp->btb_mask];
	int miss = *slot != next;
	*slot = next;
	return miss;
}

static void rsb_push(struct bpred *bp, uint64_t ret)
{
	bp->rsb_top = (bp->rsb_top + 1) % bp->rsb_depth;
	bp->rsb[bp->rsb_top] = ret;
}

int bpred_update(struct bpred *bp, int kind, uint64_t pc, uint64_t fallthrough, int taken,
		 uint64_t next)
{
	switch (kind) {
	case BK_COND:
		return bpred_cond(bp, pc, taken);
	case BK_JMP_IND:
		return predict_indirect(bp, pc, next);
	case BK_CALL:
		rsb_push(bp, fallthrough);
		return 0;
	case BK_CALL_IND:
		rsb_push(bp, fallthrough);
		return predict_indirect(bp, pc, next);
	case BK_RET: {
		uint64_t guess = bp->rsb[bp->rsb_top];
		bp->rsb[bp->rsb_top] = 0;
		bp->rsb_top = (bp->rsb_top + bp->rsb_depth - 1) % bp->rsb_depth;
		return guess != next;
	}
	default:
		return 0;
	}
}
