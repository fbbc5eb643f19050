/* The PMU's state, shared by its two halves (internal to pmu_model/): pmu.c
 * (set-up, block costs, the whole-block fast path, counts) and pmu_overflow.c
 * (periods, overflows, interrupts and the instruction-by-instruction replay
 * of a block in which one happens). */
#ifndef PMUSIM_PMU_MODEL_PMU_STATE_H
#define PMUSIM_PMU_MODEL_PMU_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "common/rng.h"
#include "pmu_model/bpred.h"
#include "pmu_model/pmu.h"

/* Counts are derived from a few accumulators (instructions, quarter cycles,
 * terminators by kind and outcome, mispredictions, REP iterations), so a
 * counting-only counter costs nothing per block; only sampling counters are
 * visited per block, to find their overflows. */
/* One overflow of a cycles counter waiting for its PMI. */
struct pend_ovf {
	uint64_t period, cycle;
};

struct counter {
	enum pmu_event ev;
	uint64_t period;   /* 0: counting */
	uint64_t left;     /* events until the next overflow (sampling); UINT64_MAX
	                    * while stopped from its overflow to the PMI (reload at
	                    * the interrupt) */
	uint64_t cur;      /* period of the interval in progress */
	uint64_t target;   /* frequency mode: cycles between samples; 0 off */
	uint64_t last;     /* frequency mode: cycle of the last overflow */
};

/* The op sampler (pmu.h, "Instruction-based op sampling"). */
struct op_state {
	int on;
	uint64_t left;      /* events until the tag */
	uint64_t cur;       /* the interval in progress */
	uint64_t win;       /* windows: index of the window the interval started in, + 1 (0: none) */
	uint64_t cmax;      /* cycle mode: most whole cycles one instruction other than a REP adds */
	uint64_t samples;
	uint64_t lost;      /* intervals run out with a tag in flight, or in a REP left */
	struct rng rng;
};

struct pmu {
	/* what a whole block's retirement touches first, together */
	uint64_t q;         /* quarter cycles so far */
	uint64_t debt_q;    /* refill cycles to charge to the next instruction */
	uint64_t insns, mispredicts;
	int pending;        /* a PMI is pending (land says when) */
	uint32_t nsampled;
	uint32_t *cost;     /* cached full-run cost (quarter cycles + 1) by run id, 0 unknown */
	uint32_t ncost;     /* entries of cost (and of run_cyc when attributing) */
	uint64_t *run_cyc;  /* pmu_attribute_runs: program cycles by run id; NULL off */
	uint64_t charged_q; /* refill quarter cycles charged to instructions so far */
	int attr, attr_lost; /* attributing; an array could not grow (figures incomplete) */
	/* pmu_attribute_insns: program cycles and retirements per instruction of
	 * every run (ia, flat; ia_base[run id] - 1 is its first entry, 0 none) */
	int attr_insn;
	struct pmu_insn_figures *ia;
	size_t nia, ia_cap;
	uint32_t *ia_base;
	uint32_t nia_base;
	uint64_t mis_q, taken_q, rep_q; /* extra quarter cycles: misprediction, taken branch, REP iteration */
	uint64_t term[BK_COUNT][2]; /* retired terminators by kind and taken */
	struct bpred bp;
	struct lbr lbr;
	uint32_t sampled[PMU_MAX_COUNTERS]; /* indices of the sampling counters */
	struct counter ctr[PMU_MAX_COUNTERS];
	uint32_t nctr;
	struct pmu_config cfg;
	const struct cpu_model *cpu;
	struct pmu_sample_sink sink;
	uint64_t samples, rep_iters;
	uint8_t term_inc[EV_COUNT][BK_COUNT][2]; /* branch events a terminator counts */
	/* the pending PMI */
	uint64_t land;      /* instruction number (1-based) or quarter cycle it lands at */
	uint64_t pend_period[PMU_MAX_COUNTERS]; /* 0: counter not in it */
	struct pend_ovf *ovf[PMU_MAX_COUNTERS]; /* cycles counters: every overflow of the PMI */
	uint32_t novf[PMU_MAX_COUNTERS], ovf_cap[PMU_MAX_COUNTERS];
	struct lbr_entry snap[LBR_MAX_DEPTH];
	struct rng rng[PMU_MAX_COUNTERS]; /* each counter's --delta draws (pmu_counter_seed) */
	struct op_state op;
};

/* A retired block as the replay sees it. */
struct blk {
	const struct retired_block *rb;
	const struct block_info *bi;
	uint32_t n;
	int kind, taken, mis;
	uint64_t term_extra_q; /* REP iterations and misprediction, on the terminator */
};

/* The seed of counter i's generator: pmu_config.seed and the counter's
 * identity (its event, its index among the counters of that event), distinct
 * for distinct identities. */
uint64_t pmu_counter_seed(const struct pmu_config *cfg, uint32_t i);
/* The next interval of sampling counter c: its period plus the random delta
 * (pmu_config.delta), drawn afresh from c's own generator. */
uint64_t pmu_next_period(struct pmu *p, uint32_t c);
/* What one retired block (or, in the slow path, its terminator) adds to an
 * event other than instructions and cycles. */
uint64_t pmu_term_events(enum pmu_event ev, int kind, int taken, int mis, uint64_t rep);
/* Replays block b instruction by instruction (a counter overflows in it or a
 * PMI lands in it): p->q and p->insns advance per instruction. */
void pmu_replay(struct pmu *p, const struct blk *b);
/* The per-instruction figures of run bi (pmu_attribute_insns), made on first
 * use; NULL (and attr_lost set) when memory ran out. */
struct pmu_insn_figures *pmu_insn_slots(struct pmu *p, const struct block_info *bi);
/* The op sampler (pmu_op.c). pmu_op_init: after cfg and cpu are set; 0 or
 * PMUSIM_ERR_ARG with a reason in msg. pmu_op_fast: 1 when a block retiring
 * n instructions up to quarter cycle q_end tags nothing (the caller then calls
 * pmu_op_commit with the same figures once it commits the block), 0 when it
 * must be replayed. pmu_op_step: the replay's instruction i of b retired (q0:
 * the quarter cycle before it). pmu_op_lost: a REP left in the middle added the
 * quarter cycles from q0 to p->q without retiring. */
int pmu_op_init(struct pmu *p, char *msg, size_t ml);
int pmu_op_fast(const struct pmu *p, uint32_t n, uint64_t q_end);
void pmu_op_commit(struct pmu *p, uint32_t n, uint64_t q_end);
void pmu_op_step(struct pmu *p, const struct blk *b, uint32_t i, uint64_t q0);
void pmu_op_lost(struct pmu *p, uint64_t q0);

/* The iterations of a REP left in the middle (see pmu_overflow.c). */
void pmu_rep_left(struct pmu *p, const struct retired_block *rb);

#endif
