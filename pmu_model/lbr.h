/* The Last Branch Record buffer: a ring of the most recent taken branches that
 * pass the filter (LBR_SELECT), read newest first as the LBR MSRs and perf's
 * branch stack present them (Intel SDM vol. 3B, 17.4.8 "LBR Stack" and 17.10
 * "LBR_INFO": mispredict bit, 16-bit saturating cycle count since the previous
 * LBR update). While frozen (FREEZE_LBRS_ON_PMI, SDM 17.4.7) nothing is recorded.
 * Embedded struct, no I/O. */
#ifndef PMUSIM_PMU_MODEL_LBR_H
#define PMUSIM_PMU_MODEL_LBR_H

#include <stdint.h>

#include "pmu_model/block.h"

#define LBR_MAX_DEPTH 64

/* Filter bits (perf's -j names; LBR_SELECT semantics: which taken branches are kept). */
#define LBR_F_COND     (1u << 0)  /* taken conditional branches ("cond") */
#define LBR_F_JMP      (1u << 1)  /* direct jumps (part of "any" only) */
#define LBR_F_IND_JMP  (1u << 2)  /* indirect jumps ("ind_jmp") */
#define LBR_F_CALL     (1u << 3)  /* direct calls ("call") */
#define LBR_F_IND_CALL (1u << 4)  /* indirect calls ("ind_call") */
#define LBR_F_RET      (1u << 5)  /* returns ("any_ret") */
#define LBR_F_ANY_CALL (LBR_F_CALL | LBR_F_IND_CALL)
#define LBR_F_ANY      (LBR_F_COND | LBR_F_JMP | LBR_F_IND_JMP | LBR_F_ANY_CALL | LBR_F_RET)

struct lbr_entry {
	uint64_t from, to;
	uint16_t cycles;   /* since the previous recorded branch, saturating at 65535 */
	uint8_t mispred;   /* 1 mispredicted, 0 predicted */
	uint8_t kind;      /* enum br_kind */
};

struct lbr {
	uint32_t depth;    /* 4, 8, 16, 32 or 64 */
	uint32_t mask;     /* 2 * depth - 1 */
	uint32_t filter;   /* LBR_F_* */
	uint32_t head;     /* index of the newest entry */
	uint32_t count;    /* valid entries, <= depth */
	int frozen;
	uint64_t last_cycle; /* cycle of the previous recorded branch */
	/* twice the depth: the slot after the newest entry is never a live one,
	 * so lbr_record can write it before knowing whether the filter keeps it */
	struct lbr_entry ring[2 * LBR_MAX_DEPTH];
};

/* 0, or PMUSIM_ERR_ARG for a depth that is not 4, 8, 16, 32 or 64. */
int lbr_init(struct lbr *l, uint32_t depth, uint32_t filter);

/* The filter bit a taken branch of this kind falls under (0 if none). */
static inline uint32_t lbr_kind_bit(int kind)
{
	static const uint32_t bits[BK_COUNT] = {
		[BK_COND] = LBR_F_COND, [BK_JMP] = LBR_F_JMP, [BK_JMP_IND] = LBR_F_IND_JMP,
		[BK_CALL] = LBR_F_CALL, [BK_CALL_IND] = LBR_F_IND_CALL, [BK_RET] = LBR_F_RET,
	};
	return (unsigned)kind < BK_COUNT ? bits[kind] : 0;
}

/* Records a taken branch retiring at cycle `cycle` if the filter keeps it and
 * the buffer is not frozen. Branch-free (taken/not-taken is the guest's data). */
static inline void lbr_record(struct lbr *l, uint64_t from, uint64_t to, int kind, int mispred,
			      uint64_t cycle)
{
	uint32_t keep = (lbr_kind_bit(kind) & l->filter) != 0 && !l->frozen;
	uint32_t slot = (l->head + 1) & l->mask;
	struct lbr_entry *e = &l->ring[slot];
	uint64_t dc = cycle - l->last_cycle;
	e->from = from;
	e->to = to;
	e->cycles = dc > 0xffff ? 0xffff : (uint16_t)dc;
	e->mispred = (uint8_t)(mispred != 0);
	e->kind = (uint8_t)kind;
	l->head = keep ? slot : l->head;
	l->last_cycle = keep ? cycle : l->last_cycle;
	l->count += keep & (l->count < l->depth);
}

/* Empties the buffer (Linux resets the LBR MSRs when another task is switched
 * in and the stack is not saved per task: intel_pmu_lbr_sched_task). */
static inline void lbr_reset(struct lbr *l) { l->count = 0; }

static inline void lbr_freeze(struct lbr *l) { l->frozen = 1; }
static inline void lbr_unfreeze(struct lbr *l) { l->frozen = 0; }

/* Copies the entries newest first into out (room for l->depth); returns how many. */
uint32_t lbr_read(const struct lbr *l, struct lbr_entry *out);

/* Parses perf's -j list ("any,u", "any_call", "ind_call,cond") into LBR_F_*.
 * Privilege words u/k/hv are accepted (guest code is all user; k and hv alone
 * keep nothing). Returns 0, or PMUSIM_ERR_ARG with *bad pointing into spec at the
 * offending word, which runs to the next comma or the end. */
int lbr_parse_filter(const char *spec, uint32_t *filter, const char **bad, int *user);

#endif
