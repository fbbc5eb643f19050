/* The op sampler (pmu.h, "Instruction-based op sampling"): an IBS-style
 * counter of retired instructions or cycles that tags the instruction at which
 * its interval runs out and reports it when it retires. It rides on the PMU's
 * clock: a block in which it tags is replayed instruction by instruction
 * (pmu_replay calls pmu_op_step), any other only moves its count. */
#include "pmu_model/pmu_state.h"

#include <stdio.h>

#include "common/err.h"

/* The hardware randomises the low 7 bits of the initial count (AMD PPR,
 * IbsOpCurCnt), so an interval is the period less 0..127. */
#define OP_RANDOM_BITS 127u

static uint64_t draw(struct pmu *p)
{
	const struct pmu_op_config *c = &p->cfg.op;
	return c->period - (c->no_random ? 0 : rng_uniform(&p->op.rng, OP_RANDOM_BITS));
}

int pmu_op_init(struct pmu *p, char *msg, size_t ml)
{
	const struct pmu_op_config *c = &p->cfg.op;
	if (!c->period)
		return 0;
	if (c->period % 16) {
		snprintf(msg, ml, "an op sampling period is a multiple of 16, not %llu",
			 (unsigned long long)c->period);
		return PMUSIM_ERR_ARG;
	}
	if (!c->no_random && c->period <= OP_RANDOM_BITS) {
		snprintf(msg, ml, "an op sampling period with random low bits is at least 128, not %llu",
			 (unsigned long long)c->period);
		return PMUSIM_ERR_ARG;
	}
	if (c->window_every && (!c->window_on || c->window_on > c->window_every)) {
		snprintf(msg, ml, "an op sampling window is on for 1 to %llu of its %llu cycles",
			 (unsigned long long)c->window_every, (unsigned long long)c->window_every);
		return PMUSIM_ERR_ARG;
	}
	uint16_t max_q = 0;
	for (int k = 0; k < IC_COUNT; k++)
		max_q = p->cpu->cost_q[k] > max_q ? p->cpu->cost_q[k] : max_q;
	/* refills owed at once: an op sample's, and a PMI's when a sampling
	 * counter's lands at the same instruction */
	uint64_t refills = 1;
	for (uint32_t i = 0; i < p->cfg.nctr; i++)
		if (p->cfg.ctr[i].period || p->cfg.ctr[i].freq)
			refills = 2;
	/* whole cycles an instruction adds: its quarter cycles (cost, a branch's
	 * misprediction and redirect, the refills owed) over 4, plus one for the
	 * rounding of the cycle it starts in */
	p->op.cmax = (max_q + p->mis_q + p->taken_q + refills * p->cfg.refill_cycles * 4) / 4 + 1;
	/* its own stream: adding or removing other counters leaves its draws alone */
	rng_init(&p->op.rng, p->cfg.seed ^ 0x49425320u /* "IBS " */ ^ 0x4f502d6f70ULL << 24);
	p->op.on = 1;
	if (!c->window_every)
		p->op.left = p->op.cur = draw(p);
	return 0;
}

static inline int in_window(const struct pmu_op_config *c, uint64_t cycle)
{
	return cycle % c->window_every < c->window_on;
}

int pmu_op_fast(const struct pmu *p, uint32_t n, uint64_t q_end)
{
	const struct pmu_op_config *c = &p->cfg.op;
	uint64_t c0 = p->q >> 2, c1 = q_end >> 2;
	uint64_t ev = c->count_ops ? n : c1 - c0;
	if (c->window_every) {
		uint64_t w = c0 / c->window_every;
		if (w != c1 / c->window_every)
			return 0; /* a window may open in it */
		if (!in_window(c, c0))
			return 1; /* off all along: within one window the phase only grows */
		if (!in_window(c, c1) || p->op.win != w + 1)
			return 0; /* the window closes in it, or its first interval starts in it */
	}
	return ev < p->op.left;
}

void pmu_op_commit(struct pmu *p, uint32_t n, uint64_t q_end)
{
	const struct pmu_op_config *c = &p->cfg.op;
	uint64_t c0 = p->q >> 2, c1 = q_end >> 2;
	if (c->window_every && !in_window(c, c0))
		return;
	p->op.left -= c->count_ops ? n : c1 - c0;
}

/* The sample of instruction i of b, tagged when the count reached the interval. */
static void take_sample(struct pmu *p, const struct blk *b, uint32_t i, uint64_t tag_to_ret)
{
	const struct block_info *bi = b->bi;
	int term = i + 1 == b->n && b->kind != BK_NONE;
	struct pmu_op_sample s = {
		.tid = b->rb->tid, .ip = bi->start + bi->off[i], .insn = p->insns, .cycle = p->q >> 2,
		.interval = p->op.cur, .tag_to_ret = tag_to_ret, .kind = term ? (uint8_t)b->kind : BK_NONE,
	};
	if (term && br_kind_is_branch(b->kind)) {
		s.branch = 1;
		s.taken = b->taken != 0;
		s.mispredicted = b->mis != 0;
		s.ret = b->kind == BK_RET;
		s.target = s.taken ? b->rb->next : b->kind == BK_COND ? bi->target : 0;
	}
	s.microcoded = term && b->kind == BK_REP;
	if (p->sink.op_memory)
		p->sink.op_memory(p->sink.ctx, s.insn, s.ip, &s.mem);
	if (!s.mem.addr_valid)
		s.mem.addr = 0;
	p->op.samples++;
	if (p->sink.op_sample)
		p->sink.op_sample(p->sink.ctx, &s);
	/* its interrupt costs the refill, as any PMI's */
	p->debt_q += (uint64_t)p->cfg.refill_cycles * 4;
}

/* Whether the counter counts what ends at cycle c1: always without windows;
 * with them, only inside a window, and the first thing to end in a window
 * arms the unit afresh (the service re-arms it when the window opens). */
static int counting(struct pmu *p, uint64_t c1)
{
	const struct pmu_op_config *c = &p->cfg.op;
	if (!c->window_every)
		return 1;
	if (!in_window(c, c1))
		return 0;
	uint64_t w = c1 / c->window_every + 1;
	if (p->op.win != w) {
		p->op.win = w;
		p->op.left = p->op.cur = draw(p);
	}
	return 1;
}

/* Counts x cycles that follow an expiry, the tag of which is in flight (or
 * never retires): the next interval counts from the expiry on, so they count
 * toward it, and an interval they run out is lost (one tag in flight). */
static void count_after_expiry(struct pmu *p, uint64_t x)
{
	p->op.left = p->op.cur = draw(p);
	while (x >= p->op.left) {
		x -= p->op.left;
		p->op.lost++;
		p->op.left = p->op.cur = draw(p);
	}
	p->op.left -= x;
}

void pmu_op_step(struct pmu *p, const struct blk *b, uint32_t i, uint64_t q0)
{
	const struct pmu_op_config *c = &p->cfg.op;
	uint64_t c0 = q0 >> 2, c1 = p->q >> 2;
	if (!counting(p, c1))
		return;
	uint64_t ev = c->count_ops ? 1 : c1 - c0;
	if (!ev)
		return;
	if (ev < p->op.left) {
		p->op.left -= ev;
		return;
	}
	if (c->count_ops) {
		take_sample(p, b, i, c1 - c0);
		p->op.left = p->op.cur = draw(p);
		return;
	}
	/* the count was reached left cycles into the instruction; the cycles
	 * after that count toward the next interval (no dead time: each cycle is
	 * as likely to be the one an interval runs out in) */
	uint64_t after = ev - p->op.left;
	take_sample(p, b, i, after);
	count_after_expiry(p, after);
}

void pmu_op_lost(struct pmu *p, uint64_t q0)
{
	const struct pmu_op_config *c = &p->cfg.op;
	uint64_t c0 = q0 >> 2, c1 = p->q >> 2;
	/* a window that opened since the interval began replaces it first, as
	 * for an instruction that retires */
	if (c->count_ops || !counting(p, c1))
		return;
	if (c1 - c0 < p->op.left) {
		p->op.left -= c1 - c0;
		return;
	}
	/* the tagged op never retires (the REP was left): no sample */
	p->op.lost++;
	count_after_expiry(p, c1 - c0 - p->op.left);
}

uint64_t pmu_op_next_min(const struct pmu *p)
{
	if (!p->op.on)
		return UINT64_MAX;
	const struct pmu_op_config *c = &p->cfg.op;
	uint64_t now = (p->q + p->debt_q) >> 2;
	uint64_t run = c->count_ops ? p->insns + p->op.left
				    : p->insns + (p->op.left + p->op.cmax - 1) / p->op.cmax;
	if (c->window_every) {
		/* a tag of the interval running (if one runs in this window), or of
		 * one that starts when a window opens: not before the next opening
		 * (or now, when this window has not started its interval yet) */
		uint64_t w = now / c->window_every + 1;
		int running = in_window(c, now) && p->op.win == w;
		uint64_t until = in_window(c, now) && !running ? 0 : c->window_every - now % c->window_every;
		/* the instructions it takes to add `until` cycles, at least one: the
		 * one that reaches the opening retires in the window, and in cycle
		 * mode all its cycles count, so it may be tagged itself */
		uint64_t later = p->insns + (until > p->op.cmax ? (until + p->op.cmax - 1) / p->op.cmax : 1);
		return running && run < later ? run : later;
	}
	return run;
}

uint64_t pmu_op_samples(const struct pmu *p)
{
	return p->op.samples;
}

uint64_t pmu_op_lost_tags(const struct pmu *p)
{
	return p->op.lost;
}

/* Whole cycles counted from quarter cycle q0 on once x more quarter cycles passed. */
static inline uint64_t counted(uint64_t q0, uint64_t x)
{
	return ((q0 + x) >> 2) - (q0 >> 2);
}

int pmu_op_may_tag(const struct pmu *p, const struct block_info *pend, uint32_t pend_n,
		   const struct block_info *bi, uint32_t *first)
{
	const struct pmu_op_config *c = &p->cfg.op;
	*first = 0;
	if (!p->op.on || !bi->ninsns)
		return 0;
	uint64_t now = p->q >> 2;
	int running = !c->window_every || (in_window(c, now) && p->op.win == now / c->window_every + 1);
	/* no interval runs yet: the next one is at least the shortest draw */
	uint64_t left = running ? p->op.left : c->period - (c->no_random ? 0 : OP_RANDOM_BITS);
	if (c->count_ops) {
		/* instructions outside a window do not count: the tag can only come later */
		uint64_t at = left; /* 1-based among what retires from now on */
		if (at <= pend_n) /* in the pending block: then the next interval starts */
			at += c->period - (c->no_random ? 0 : OP_RANDOM_BITS);
		if (at > (uint64_t)pend_n + bi->ninsns)
			return 0;
		*first = at > pend_n ? (uint32_t)(at - pend_n - 1) : 0;
		return 1;
	}
	uint64_t refill = (uint64_t)p->cfg.refill_cycles * 4;
	uint64_t extra = p->mis_q + p->taken_q + 2 * refill; /* a terminator's most, interrupts */
	uint64_t lo = 0, hi = p->debt_q;
	int pend_rep = 0;
	for (uint32_t i = 0; pend && i < pend_n && i < pend->ninsns; i++) {
		uint64_t q = p->cpu->cost_q[pend->cls[i] < IC_COUNT ? pend->cls[i] : IC_OTHER];
		lo += q;
		hi += q;
	}
	if (pend && pend_n == pend->ninsns) {
		hi += extra;
		pend_rep = pend->kind == BK_REP;
	}
	if (!pend_rep && counted(p->q, hi) >= left) {
		/* the tag may fall in the pending block; the next interval counts
		 * from there, the rest of the pending block's cycles included */
		uint64_t bhi = extra;
		for (uint32_t i = 0; i < bi->ninsns; i++)
			bhi += p->cpu->cost_q[bi->cls[i] < IC_COUNT ? bi->cls[i] : IC_OTHER];
		/* (with windows, cycles outside them do not count: no certainty) */
		if (!c->window_every && counted(p->q, lo) >= left &&
		    counted(p->q, hi + bhi) - left < c->period - (c->no_random ? 0 : OP_RANDOM_BITS))
			return 0; /* it does for sure, and the next runs out after bi */
		return 1;
	}
	if (pend_rep)
		return 1; /* its iterations may take any time */
	for (uint32_t i = 0; i < bi->ninsns; i++) {
		hi += p->cpu->cost_q[bi->cls[i] < IC_COUNT ? bi->cls[i] : IC_OTHER];
		if (i + 1 == bi->ninsns)
			hi += extra;
		if (counted(p->q, hi) >= left) {
			*first = i;
			return 1;
		}
	}
	return bi->kind == BK_REP; /* its iterations may take any time */
}
