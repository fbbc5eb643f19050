/* The PMU's overflows and interrupts (see pmu.h, pmu_state.h): periods with
 * their random delta (a generator per counter) and frequency mode, the reload
 * at the overflow or by the PMI handler, overflows joining a pending PMI, the
 * PMI's delivery with the frozen LBR, and the replay of a block in which a
 * counter overflows or a PMI lands. */
#include "pmu_model/pmu_state.h"

#include <stdlib.h>

/* The identity is numbered so that no two counters of one configuration share
 * a number (index among its event's counters times EV_COUNT, plus the event
 * counted from cycles), and the number is spread by an odd multiplier and
 * xored into the seed: both steps are one-to-one, so distinct counters get
 * distinct seeds and so distinct xoshiro states (rng_init is one-to-one in its
 * first word). The first cycles counter gets number 0: a recording of cycles
 * alone draws the very stream all counters shared before they had their own. */
uint64_t pmu_counter_seed(const struct pmu_config *cfg, uint32_t i)
{
	uint64_t same = 0;
	for (uint32_t j = 0; j < i; j++)
		same += cfg->ctr[j].ev == cfg->ctr[i].ev;
	uint64_t ident = same * EV_COUNT + ((uint64_t)cfg->ctr[i].ev + EV_COUNT - EV_CYCLES) % EV_COUNT;
	return cfg->seed ^ 0x504d552d64656c74ULL /* "PMU-delt" */ ^ ident * 0x9e3779b97f4a7c15ULL;
}

uint64_t pmu_next_period(struct pmu *p, uint32_t c)
{
	struct counter *k = &p->ctr[c];
	return k->period + (p->cfg.delta ? rng_uniform(&p->rng[c], p->cfg.delta) : 0);
}

/* Frequency mode: the kernel's estimate of the period that gives one sample
 * per target cycles (events of the interval that just ended scaled to the
 * target time), approached by an eighth of the difference per overflow as
 * kernel/events/core.c perf_adjust_period does. */
static void adapt_period(struct counter *k, uint64_t now)
{
	uint64_t elapsed = now > k->last ? now - k->last : 1;
	k->last = now;
	unsigned __int128 want = (unsigned __int128)k->cur * k->target / elapsed;
	if (want > (1ULL << 62))
		want = 1ULL << 62;
	int64_t d = (int64_t)want - (int64_t)k->period;
	d = (d + 7) / 8;
	k->period = (uint64_t)((int64_t)k->period + d);
	if (k->period == 0)
		k->period = 1;
}

uint64_t pmu_term_events(enum pmu_event ev, int kind, int taken, int mis, uint64_t rep)
{
	switch (ev) {
	case EV_BRANCHES: return br_kind_is_branch(kind);
	case EV_BRANCH_MISSES: return (uint64_t)mis;
	case EV_NEAR_TAKEN: return br_kind_is_branch(kind) && taken;
	case EV_COND: return kind == BK_COND;
	case EV_COND_TAKEN: return kind == BK_COND && taken;
	case EV_NEAR_CALL: return kind == BK_CALL || kind == BK_CALL_IND;
	case EV_NEAR_RETURN: return kind == BK_RET;
	case EV_INDIRECT: return kind == BK_JMP_IND || kind == BK_CALL_IND;
	case EV_REP_ITERATIONS: return kind == BK_REP ? rep : 0;
	default: return 0;
	}
}

static void deliver_pmi(struct pmu *p, uint64_t ip, uint64_t next, uint32_t tid, int ip_is_newest)
{
	uint32_t nbr = 0;
	if (p->cfg.lbr_depth) {
		lbr_freeze(&p->lbr);
		nbr = lbr_read(&p->lbr, p->snap);
	}
	for (uint32_t c = 0; c < p->nctr; c++) {
		if (!p->pend_period[c])
			continue;
		struct pmu_sample s = {
			.counter = c, .tid = tid, .ip = ip, .next = next, .cycle = p->q >> 2,
			.period = p->pend_period[c], .nbr = nbr, .br = p->snap,
			.ip_after_newest = (uint8_t)(nbr && !ip_is_newest),
		};
		/* a cycles counter: one sample per overflow, each with its own cycle */
		for (uint32_t k = 0; k < p->novf[c] || (k == 0 && !p->novf[c]); k++) {
			if (p->novf[c]) {
				s.period = p->ovf[c][k].period;
				s.ovf_after_newest = nbr ? (int64_t)(p->ovf[c][k].cycle - p->lbr.last_cycle) : 0;
			}
			p->samples++;
			if (p->sink.sample)
				p->sink.sample(p->sink.ctx, &s);
		}
		p->pend_period[c] = 0;
		p->novf[c] = 0;
		if (p->cfg.reload == PMU_RELOAD_INTERRUPT) { /* the handler sets the next period */
			p->ctr[c].last = p->q >> 2; /* frequency mode: counting starts again now */
			p->ctr[c].left = p->ctr[c].cur = pmu_next_period(p, c);
		}
	}
	if (p->cfg.lbr_depth)
		lbr_unfreeze(&p->lbr);
	p->pending = 0;
	p->debt_q += (uint64_t)p->cfg.refill_cycles * 4;
}

/* Notes an overflow of cycles counter c at `cycle` for the pending PMI. Without
 * memory for it, it joins the one before (its period added, its cycle lost). */
static void add_overflow(struct pmu *p, uint32_t c, uint64_t period, uint64_t cycle)
{
	if (p->novf[c] == p->ovf_cap[c]) {
		uint32_t cap = p->ovf_cap[c] ? 2 * p->ovf_cap[c] : 4;
		struct pend_ovf *o = realloc(p->ovf[c], cap * sizeof(*o));
		if (!o && p->novf[c]) {
			p->ovf[c][p->novf[c] - 1].period += period;
			return;
		}
		if (!o)
			return; /* the sample keeps the summed period, without a cycle */
		p->ovf[c] = o;
		p->ovf_cap[c] = cap;
	}
	p->ovf[c][p->novf[c]++] = (struct pend_ovf){period, cycle};
}

/* Counts `ev_n` events of counter c at the current instruction; overflows
 * schedule (or join) the PMI. cycle0: the cycle before this instruction (a
 * cycles counter's overflow happens at cycle0 + the events it still needed).
 * Reload at the interrupt: the overflow stops the counter (left UINT64_MAX)
 * and the rest of ev_n is lost to sampling; deliver_pmi reloads it. */
static void count_events(struct pmu *p, uint32_t c, uint64_t ev_n, uint64_t cycle0)
{
	struct counter *k = &p->ctr[c];
	while (ev_n >= k->left) {
		cycle0 += k->left;
		if (k->ev == EV_CYCLES)
			add_overflow(p, c, k->cur, cycle0);
		ev_n -= k->left;
		p->pend_period[c] += k->cur;
		if (!p->pending) {
			p->pending = 1;
			p->land = p->cfg.skid_in_cycles ? p->q + p->cfg.skid * 4 : p->insns + p->cfg.skid;
		}
		if (k->target) /* a cycles counter's overflow cycle is exact; others: this instruction's */
			adapt_period(k, k->ev == EV_CYCLES ? cycle0 : p->q >> 2);
		if (p->cfg.reload == PMU_RELOAD_INTERRUPT) {
			k->left = UINT64_MAX;
			return;
		}
		k->left = k->cur = pmu_next_period(p, c);
	}
	k->left -= ev_n;
}

void pmu_replay(struct pmu *p, const struct blk *b)
{
	struct pmu_insn_figures *ia = p->attr_insn ? pmu_insn_slots(p, b->bi) : NULL;
	for (uint32_t i = 0; i < b->n; i++) {
		int term = i + 1 == b->n && b->kind != BK_NONE;
		uint64_t q0 = p->q, c0 = p->charged_q;
		p->q += p->cpu->cost_q[b->bi->cls[i] < IC_COUNT ? b->bi->cls[i] : IC_OTHER] + p->debt_q;
		p->charged_q += p->debt_q;
		p->debt_q = 0;
		if (term)
			p->q += b->term_extra_q;
		p->insns++;
		if (ia) { /* the program's cycles of this instruction: attribute()'s rule */
			ia[i].cycles += ((p->q >> 2) - (q0 >> 2)) - ((p->charged_q >> 2) - (c0 >> 2));
			ia[i].retired++;
		}
		if (term) {
			p->term[b->kind][b->taken != 0]++;
			p->mispredicts += (uint64_t)b->mis;
			p->rep_iters += b->kind == BK_REP ? b->rb->rep_iters : 0;
		}
		for (uint32_t j = 0; j < p->nsampled; j++) {
			uint32_t c = p->sampled[j];
			enum pmu_event ev = p->ctr[c].ev;
			uint64_t e = ev == EV_INSTRUCTIONS ? 1
				   : ev == EV_CYCLES	   ? (p->q >> 2) - (q0 >> 2)
				   : term ? pmu_term_events(ev, b->kind, b->taken, b->mis, b->rb->rep_iters) : 0;
			if (e)
				count_events(p, c, e, q0 >> 2);
		}
		if (p->op.on)
			pmu_op_step(p, b, i, q0);
		uint32_t head = p->lbr.head, count = p->lbr.count;
		if (term && b->taken && p->lbr.filter)
			lbr_record(&p->lbr, b->bi->term, b->rb->next, b->kind, b->mis, p->q >> 2);
		if (p->pending && (p->cfg.skid_in_cycles ? p->q >= p->land : p->insns >= p->land))
			deliver_pmi(p, b->bi->start + b->bi->off[i], b->rb->next, b->rb->tid,
				    p->lbr.head != head || p->lbr.count != count);
	}
}

/* The iterations of a REP left in the middle (a fault in one of them): they ran but
 * the REP did not retire, so REP iterations and their cycles count and instructions
 * do not; an overflow among them interrupts at the REP. */
void pmu_rep_left(struct pmu *p, const struct retired_block *rb)
{
	uint64_t it = rb->rep_iters, q0 = p->q;
	if (!it)
		return;
	p->q += it * p->rep_q;
	p->rep_iters += it;
	struct pmu_insn_figures *ia = p->attr_insn ? pmu_insn_slots(p, rb->info) : NULL;
	if (ia) /* the REP's iterations, without its retirement */
		ia[rb->info->ninsns - 1].cycles += (p->q >> 2) - (q0 >> 2);
	for (uint32_t j = 0; j < p->nsampled; j++) {
		uint32_t c = p->sampled[j];
		enum pmu_event ev = p->ctr[c].ev;
		uint64_t e = ev == EV_REP_ITERATIONS ? it : ev == EV_CYCLES ? (p->q >> 2) - (q0 >> 2) : 0;
		if (e)
			count_events(p, c, e, q0 >> 2);
	}
	if (p->op.on)
		pmu_op_lost(p, q0);
	/* the REP did not retire: the newest LBR entry is a branch before it */
	if (p->pending && (p->cfg.skid_in_cycles ? p->q >= p->land : p->insns >= p->land))
		deliver_pmi(p, rb->info->term, rb->next, rb->tid, 0);
}
