/* PMU: counters, overflow interrupts with period + random delta, skid and
 * pipeline refill, LBR freeze on PMI (see pmu.h). The fast path handles a whole
 * retired block with a few additions; a block in which a counter overflows or a
 * pending PMI lands is replayed instruction by instruction (pmu_overflow.c). */
#include "pmu_model/pmu_state.h"

#include "common/grow.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"

static int check_config(const struct pmu_config *cfg, const struct cpu_model *cpu, char *msg,
			size_t ml)
{
	uint32_t gp = 0;
	int fixed_instr = 0, fixed_cyc = 0;
	if (cfg->nctr > PMU_MAX_COUNTERS) {
		snprintf(msg, ml, "too many events (at most %d)", PMU_MAX_COUNTERS);
		return PMUSIM_ERR_ARG;
	}
	for (uint32_t i = 0; i < cfg->nctr; i++) {
		if ((unsigned)cfg->ctr[i].ev >= EV_COUNT) {
			snprintf(msg, ml, "unknown event %d", (int)cfg->ctr[i].ev);
			return PMUSIM_ERR_ARG;
		}
		if (cfg->ctr[i].ev == EV_INSTRUCTIONS && !fixed_instr)
			fixed_instr = 1;
		else if (cfg->ctr[i].ev == EV_CYCLES && !fixed_cyc)
			fixed_cyc = 1;
		else
			gp++;
	}
	if (cfg->reload != PMU_RELOAD_OVERFLOW && cfg->reload != PMU_RELOAD_INTERRUPT) {
		snprintf(msg, ml, "unknown reload %d", (int)cfg->reload);
		return PMUSIM_ERR_ARG;
	}
	if (gp > cpu->nr_gp_counters) {
		snprintf(msg, ml, "%u events need programmable counters; the %s model has %u "
			 "(instructions and cycles use fixed counters)", gp, cpu->name, cpu->nr_gp_counters);
		return PMUSIM_ERR_ARG;
	}
	return 0;
}

int pmu_new(const struct pmu_config *cfg, struct pmu_sample_sink sink, struct pmu **out,
	    char *msg, size_t ml)
{
	const struct cpu_model *cpu = cfg->cpu ? cfg->cpu : cpu_model_default();
	int err = check_config(cfg, cpu, msg, ml);
	if (err < 0)
		return err;
	struct pmu *p = calloc(1, sizeof(*p));
	if (!p)
		return PMUSIM_ERR_NOMEM;
	p->cfg = *cfg;
	p->cpu = cpu;
	p->sink = sink;
	p->nctr = cfg->nctr;
	p->mis_q = (uint64_t)cpu->mispredict_cycles * 4;
	p->taken_q = cpu->taken_branch_q > cpu->cost_q[IC_BRANCH] ? cpu->taken_branch_q - cpu->cost_q[IC_BRANCH] : 0;
	p->rep_q = cpu->rep_iter_q;
	for (int ev = 0; ev < EV_COUNT; ev++)
		for (int k = 0; k < BK_COUNT; k++)
			for (int t = 0; t < 2; t++)
				p->term_inc[ev][k][t] = (uint8_t)pmu_term_events((enum pmu_event)ev, k, t, 0, 0);
	if ((err = lbr_init(&p->lbr, cfg->lbr_depth ? cfg->lbr_depth : 4,
			    cfg->lbr_depth ? cfg->lbr_filter : 0)) < 0) {
		snprintf(msg, ml, "LBR depth must be 4, 8, 16, 32 or 64, not %u", cfg->lbr_depth);
		free(p);
		return err;
	}
	if ((err = bpred_init(&p->bp, cpu)) < 0) {
		free(p);
		return err;
	}
	if ((err = pmu_op_init(p, msg, ml)) < 0) {
		pmu_free(p);
		return err;
	}
	for (uint32_t i = 0; i < p->nctr; i++) {
		p->ctr[i].ev = cfg->ctr[i].ev;
		p->ctr[i].period = cfg->ctr[i].period;
		if (cfg->ctr[i].freq) {
			uint64_t t = (uint64_t)cpu->mhz * 1000000 / cfg->ctr[i].freq;
			p->ctr[i].target = p->ctr[i].period = t ? t : 1;
		}
		rng_init(&p->rng[i], pmu_counter_seed(cfg, i));
		if (p->ctr[i].period) {
			p->ctr[i].left = p->ctr[i].cur = pmu_next_period(p, i);
			p->sampled[p->nsampled++] = i;
		} else {
			p->ctr[i].left = UINT64_MAX;
		}
	}
	*out = p;
	return 0;
}

void pmu_free(struct pmu *p)
{
	if (!p)
		return;
	bpred_fini(&p->bp);
	for (uint32_t c = 0; c < PMU_MAX_COUNTERS; c++)
		free(p->ovf[c]);
	free(p->cost);
	free(p->run_cyc);
	free(p->ia);
	free(p->ia_base);
	free(p);
}

uint64_t pmu_block_cost_q(const struct cpu_model *cpu, const struct block_info *bi, uint32_t n)
{
	uint64_t q = 0;
	for (uint32_t i = 0; i < n; i++)
		q += cpu->cost_q[bi->cls[i] < IC_COUNT ? bi->cls[i] : IC_OTHER];
	return q;
}

/* Makes room for run id in the per-run arrays (cost, run_cyc): 0, or -1 out of memory. */
static int grow_runs(struct pmu *p, uint32_t id)
{
	if (id < p->ncost)
		return 0;
	uint32_t nn = p->ncost ? p->ncost : 1024;
	while (nn <= id)
		nn *= 2;
	uint32_t *c = realloc(p->cost, nn * sizeof(*c));
	if (!c)
		return -1;
	memset(c + p->ncost, 0, (nn - p->ncost) * sizeof(*c));
	p->cost = c;
	if (p->attr) {
		uint64_t *r = realloc(p->run_cyc, nn * sizeof(*r));
		if (!r)
			return -1; /* cost grew; ncost stays: both arrays hold ncost entries */
		memset(r + p->ncost, 0, (nn - p->ncost) * sizeof(*r));
		p->run_cyc = r;
	}
	p->ncost = nn;
	return 0;
}

static uint64_t block_cost_miss(struct pmu *p, const struct block_info *bi, uint32_t n)
{
	if (n != bi->ninsns || grow_runs(p, bi->id) < 0)
		return pmu_block_cost_q(p->cpu, bi, n);
	uint64_t q = pmu_block_cost_q(p->cpu, bi, n);
	if (q < UINT32_MAX)
		p->cost[bi->id] = (uint32_t)q + 1;
	return q;
}

static inline uint64_t block_cost(struct pmu *p, const struct block_info *bi, uint32_t n)
{
	if (n == bi->ninsns && bi->id < p->ncost && p->cost[bi->id])
		return p->cost[bi->id] - 1;
	return block_cost_miss(p, bi, n);
}

/* Events of one sampling counter in a block that retired n instructions up to
 * quarter cycle q_end and ended as kind/taken (enum pmu_event per counter). */
static inline uint64_t block_events(const struct pmu *p, const struct counter *k, uint32_t n,
				    uint64_t q_end, unsigned kind, unsigned taken, int mis, uint64_t rep)
{
	switch (k->ev) {
	case EV_INSTRUCTIONS: return n;
	case EV_CYCLES: return (q_end >> 2) - (p->q >> 2);
	case EV_BRANCH_MISSES: return (uint64_t)mis;
	case EV_REP_ITERATIONS: return kind == BK_REP ? rep : 0;
	default: return p->term_inc[k->ev][kind][taken];
	}
}

static void retire_insns(struct pmu *p, const struct retired_block *rb);

static void pmu_retire(void *ctx, const struct retired_block *rb)
{
	struct pmu *p = ctx;
	if (rb->new_context)
		lbr_reset(&p->lbr);
	if (rb->ninsns)
		retire_insns(p, rb);
	if (rb->rep_part & RB_REP_LEFT)
		pmu_rep_left(p, rb);
}

/* The branch predictor's verdict on a block's terminator (*mis) and the extra
 * quarter cycles it costs: misprediction, taken-branch redirect, REP iterations. */
static inline uint64_t terminator_q(struct pmu *p, const struct block_info *bi, unsigned kind, unsigned taken,
				    uint64_t next, uint64_t rep_iters, int *mis)
{
	*mis = 0;
	if (kind == BK_COND) {
		*mis = bpred_cond(&p->bp, bi->term, (int)taken);
		return (uint64_t)*mis * p->mis_q + taken * p->taken_q;
	}
	if (br_kind_is_branch((int)kind)) {
		*mis = bpred_update(&p->bp, (int)kind, bi->term, bi->end, (int)taken, next);
		return (uint64_t)*mis * p->mis_q + p->taken_q;
	}
	return kind == BK_REP ? rep_iters * p->rep_q : 0;
}

/* A block's figures joined to the totals when no counter overflowed in it. */
static inline void commit_block(struct pmu *p, const struct block_info *bi, uint32_t n, unsigned kind,
				unsigned taken, int mis, uint64_t q_end, uint64_t next, uint64_t rep_iters)
{
	p->term[kind][taken]++;
	p->mispredicts += (uint64_t)mis;
	if (kind == BK_REP)
		p->rep_iters += rep_iters;
	p->q = q_end;
	if (p->debt_q) { /* rare: only after a PMI */
		p->charged_q += p->debt_q;
		p->debt_q = 0;
	}
	p->insns += n;
	if (p->lbr.filter)
		lbr_record(&p->lbr, bi->term, next, taken ? (int)kind : BK_NONE, mis, q_end >> 2);
}

/* The block's retired instructions: the fast path, or a replay when a counter
 * overflows or a PMI lands in it. */
static void retire_insns(struct pmu *p, const struct retired_block *rb)
{
	const struct block_info *bi = rb->info;
	uint32_t n = rb->ninsns;
	unsigned kind = rb->kind, taken = rb->taken != 0;
	int mis;
	uint64_t extra = terminator_q(p, bi, kind, taken, rb->next, rb->rep_iters, &mis);
	uint64_t q_end = p->q + p->debt_q + block_cost(p, bi, n) + extra;
	uint64_t inc[PMU_MAX_COUNTERS];
	if (p->attr_insn) { /* attributing per instruction: each one's cycles */
		struct blk b = {rb, bi, n, (int)kind, (int)taken, mis, extra};
		pmu_replay(p, &b);
		return;
	}
	if (p->nsampled || p->pending || p->op.on) {
		int slow = p->pending && (p->cfg.skid_in_cycles ? q_end >= p->land : p->insns + n >= p->land);
		slow |= p->op.on && !pmu_op_fast(p, n, q_end);
		for (uint32_t j = 0; j < p->nsampled; j++) {
			const struct counter *k = &p->ctr[p->sampled[j]];
			inc[j] = block_events(p, k, n, q_end, kind, taken, mis, rb->rep_iters);
			slow |= inc[j] >= k->left;
		}
		if (slow) {
			struct blk b = {rb, bi, n, (int)kind, (int)taken, mis, extra};
			pmu_replay(p, &b);
			return;
		}
		for (uint32_t j = 0; j < p->nsampled; j++)
			p->ctr[p->sampled[j]].left -= inc[j];
		if (p->op.on)
			pmu_op_commit(p, n, q_end);
	}
	commit_block(p, bi, n, kind, taken, mis, q_end, rb->next, rb->rep_iters);
}

/* Replays a whole block in which a counter overflows or a PMI lands. */
__attribute__((noinline)) static void replay_whole(struct pmu *p, const struct block_info *bi, uint64_t next,
						   uint32_t tid, unsigned flags, int mis, uint64_t extra)
{
	struct retired_block rb;
	retired_block_whole(&rb, bi, next, 0, tid, flags);
	struct blk b = {&rb, bi, bi->ninsns, bi->kind, (int)(flags & RB_WHOLE_TAKEN), mis, extra};
	pmu_replay(p, &b);
}

/* pmu_whole's general case: a new context, a REP, several sampling counters, a
 * pending PMI or refill cycles to charge, a run whose cost is not cached yet. */
__attribute__((noinline)) static void whole_general(struct pmu *p, const struct block_info *bi, uint64_t next,
						    uint64_t sp, uint32_t tid, unsigned flags)
{
	unsigned kind = bi->kind, taken = flags & RB_WHOLE_TAKEN;
	if ((flags & RB_WHOLE_NEW_CONTEXT) || kind == BK_REP || p->nsampled > 1 || p->op.on) {
		struct retired_block rb;
		retired_block_whole(&rb, bi, next, sp, tid, flags);
		pmu_retire(p, &rb);
		return;
	}
	uint32_t n = bi->ninsns;
	int mis;
	uint64_t extra = terminator_q(p, bi, kind, taken, next, 0, &mis);
	uint64_t q_end = p->q + p->debt_q + block_cost(p, bi, n) + extra;
	if (p->nsampled || p->pending) {
		int slow = p->pending && (p->cfg.skid_in_cycles ? q_end >= p->land : p->insns + n >= p->land);
		struct counter *k = &p->ctr[p->sampled[0]];
		uint64_t inc = p->nsampled ? block_events(p, k, n, q_end, kind, taken, mis, 0) : 0;
		if (slow || (p->nsampled && inc >= k->left)) {
			replay_whole(p, bi, next, tid, flags, mis, extra);
			return;
		}
		if (p->nsampled)
			k->left -= inc;
	}
	commit_block(p, bi, n, kind, taken, mis, q_end, next, 0);
}

/* Program cycles of run id: what the cycles counter counted while the block
 * retired (the clock's whole cycles since q0) less the refill charged in it
 * since charged0 (whole cycles: the refill is A * 4 quarter cycles). */
static inline void attribute(struct pmu *p, uint32_t id, uint64_t q0, uint64_t charged0)
{
	if (id >= p->ncost && grow_runs(p, id) < 0) {
		p->attr_lost = 1;
		return;
	}
	p->run_cyc[id] += ((p->q >> 2) - (q0 >> 2)) - ((p->charged_q - charged0) >> 2);
}

static void pmu_retire_attr(void *ctx, const struct retired_block *rb)
{
	struct pmu *p = ctx;
	uint64_t q0 = p->q, c0 = p->charged_q;
	pmu_retire(p, rb);
	attribute(p, rb->info->id, q0, c0);
}

__attribute__((noinline)) static void whole_general_attr(struct pmu *p, const struct block_info *bi, uint64_t next,
							 uint64_t sp, uint32_t tid, unsigned flags)
{
	uint64_t q0 = p->q, c0 = p->charged_q;
	whole_general(p, bi, next, sp, tid, flags);
	attribute(p, bi->id, q0, c0);
}

__attribute__((noinline)) static void replay_whole_attr(struct pmu *p, const struct block_info *bi, uint64_t next,
							uint32_t tid, unsigned flags, int mis, uint64_t extra)
{
	uint64_t q0 = p->q, c0 = p->charged_q;
	replay_whole(p, bi, next, tid, flags, mis, extra);
	attribute(p, bi->id, q0, c0);
}

/* retire_insns for a block that ran its whole run (block_sink.whole): the same
 * figures without a retired_block. The common case (at most one sampling
 * counter, nothing pending, the run's cost cached) stays in few registers; the
 * rest is whole_general. attr (a constant): also add the block's cycles to its
 * run (one indexed add in the common case: no refill is due there). */
static inline __attribute__((always_inline)) void whole_block(struct pmu *p, const struct block_info *bi,
							      uint64_t next, uint64_t sp, uint32_t tid,
							      unsigned flags, const int attr)
{
	unsigned kind = bi->kind, taken = flags & RB_WHOLE_TAKEN;
	uint32_t id = bi->id;
	if (__builtin_expect((flags & RB_WHOLE_NEW_CONTEXT) | (kind == BK_REP) | (p->nsampled > 1) | p->pending | p->op.on |
				     (p->debt_q != 0) | (id >= p->ncost),
			     0) ||
	    !p->cost[id]) {
		if (attr)
			whole_general_attr(p, bi, next, sp, tid, flags);
		else
			whole_general(p, bi, next, sp, tid, flags);
		return;
	}
	int mis;
	uint64_t extra = kind == BK_JMP ? p->taken_q : terminator_q(p, bi, kind, taken, next, 0, &mis);
	if (kind == BK_JMP)
		mis = 0;
	uint64_t q_end = p->q + p->cost[id] - 1 + extra;
	if (p->nsampled) {
		struct counter *k = &p->ctr[p->sampled[0]];
		uint64_t inc = block_events(p, k, bi->ninsns, q_end, kind, taken, mis, 0);
		if (inc >= k->left) {
			if (attr)
				replay_whole_attr(p, bi, next, tid, flags, mis, extra);
			else
				replay_whole(p, bi, next, tid, flags, mis, extra);
			return;
		}
		k->left -= inc;
	}
	if (attr)
		p->run_cyc[id] += (q_end >> 2) - (p->q >> 2);
	commit_block(p, bi, bi->ninsns, kind, taken, mis, q_end, next, 0);
}

static void pmu_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
		      unsigned flags)
{
	whole_block(ctx, bi, next, sp, tid, flags, 0);
}

static void pmu_whole_attr(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
			   unsigned flags)
{
	whole_block(ctx, bi, next, sp, tid, flags, 1);
}

struct block_sink pmu_block_sink(struct pmu *p)
{
	if (p->attr_insn) /* every block as a retired_block, to the replay */
		return (struct block_sink){.retire = pmu_retire_attr, .ctx = p};
	if (p->attr)
		return (struct block_sink){.retire = pmu_retire_attr, .ctx = p, .whole = pmu_whole_attr};
	return (struct block_sink){.retire = pmu_retire, .ctx = p, .whole = pmu_whole};
}

int pmu_attribute_runs(struct pmu *p)
{
	if (p->attr)
		return 0;
	if (p->ncost) {
		p->run_cyc = calloc(p->ncost, sizeof(*p->run_cyc));
		if (!p->run_cyc)
			return PMUSIM_ERR_NOMEM;
	}
	p->attr = 1;
	return 0;
}

int pmu_attribute_insns(struct pmu *p)
{
	if (!p->attr)
		return PMUSIM_ERR_ARG;
	p->attr_insn = 1;
	return 0;
}

struct pmu_insn_figures *pmu_insn_slots(struct pmu *p, const struct block_info *bi)
{
	uint32_t id = bi->id;
	if (id >= p->nia_base) {
		uint32_t nn = p->nia_base ? p->nia_base : 1024;
		while (nn <= id)
			nn *= 2;
		uint32_t *b = realloc(p->ia_base, nn * sizeof(*b));
		if (!b)
			return p->attr_lost = 1, NULL;
		memset(b + p->nia_base, 0, (nn - p->nia_base) * sizeof(*b));
		p->ia_base = b;
		p->nia_base = nn;
	}
	if (!p->ia_base[id]) {
		struct pmu_insn_figures *f = grow_array(p->ia, &p->ia_cap, p->nia + bi->ninsns, sizeof(*f));
		if (!f || p->nia + bi->ninsns >= UINT32_MAX)
			return p->attr_lost = 1, NULL;
		p->ia = f;
		memset(f + p->nia, 0, bi->ninsns * sizeof(*f));
		p->ia_base[id] = (uint32_t)p->nia + 1;
		p->nia += bi->ninsns;
	}
	return &p->ia[p->ia_base[id] - 1];
}

const struct pmu_insn_figures *pmu_insn_figures(const struct pmu *p, uint32_t id)
{
	return id < p->nia_base && p->ia_base[id] ? &p->ia[p->ia_base[id] - 1] : NULL;
}

int pmu_run_cycles(const struct pmu *p, const uint64_t **cyc, uint32_t *n)
{
	if (!p->attr)
		return PMUSIM_ERR_ARG;
	if (p->attr_lost)
		return PMUSIM_ERR_NOMEM;
	*cyc = p->run_cyc;
	*n = p->run_cyc ? p->ncost : 0;
	return 0;
}

uint64_t pmu_count(const struct pmu *p, uint32_t i)
{
	if (i >= p->nctr)
		return 0;
	switch (p->ctr[i].ev) {
	case EV_INSTRUCTIONS: return p->insns;
	case EV_CYCLES: return p->q >> 2;
	case EV_BRANCH_MISSES: return p->mispredicts;
	case EV_REP_ITERATIONS: return p->rep_iters;
	default: {
		uint64_t n = 0;
		for (int k = 0; k < BK_COUNT; k++)
			for (int t = 0; t < 2; t++)
				n += p->term[k][t] * pmu_term_events(p->ctr[i].ev, k, t, 0, 0);
		return n;
	}
	}
}

uint64_t pmu_cycles(const struct pmu *p)
{
	return (p->q + p->debt_q) >> 2;
}

uint64_t pmu_instructions(const struct pmu *p)
{
	return p->insns;
}

uint64_t pmu_samples(const struct pmu *p)
{
	return p->samples;
}

uint64_t pmu_mispredicts(const struct pmu *p)
{
	return p->mispredicts;
}
