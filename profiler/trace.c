/* Branch-trace reconstruction and the CBT window (see trace.h): the steps of the
 * taken-branch-trace to complete-branch-trace method, walking code runs of the
 * shared decode cache between consecutive LBR entries. */
#include "profiler/trace.h"

#include "common/decode.h"

enum walk_end { WALK_OK = 0, WALK_FOREIGN = -1 };

const char *trace_drop_name(enum trace_drop why)
{
	static const char *const names[DROP_COUNT] = {
		"none", "no_branches", "not_a_branch", "unconditional_in_range", "backwards",
		"off_text", "too_long", "short", "no_op_data",
	};
	return (unsigned)why < DROP_COUNT ? names[why] : "?";
}

struct walker {
	struct binary *b;
	struct br_outcome *out;
	size_t k;
	uint64_t insn, cycle;
};

static int push(struct walker *w, uint64_t from, uint64_t to, int kind, int taken)
{
	if (w->k >= TRACE_MAX_OUT)
		return DROP_TOO_LONG;
	w->out[w->k++] = (struct br_outcome){from, to, w->insn, w->cycle, (uint8_t)kind, (uint8_t)taken};
	return 0;
}

/* Walks from `from` to the instruction at `to`, adding the conditional branches
 * passed as not taken. must_branch: `to` must be a branch (an LBR source).
 * *kind gets the kind of the run ending at `to` (BK_NONE if `to` ends no run).
 * Returns WALK_OK, WALK_FOREIGN (not both ends in the binary) or a trace_drop. */
static int walk(struct walker *w, uint64_t from, uint64_t to, int must_branch, int *kind)
{
	*kind = BK_NONE;
	if (!binary_has_code(w->b, from) || !binary_has_code(w->b, to))
		return WALK_FOREIGN;
	if (to < from)
		return DROP_BACKWARDS;
	uint64_t a = from, steps = 0;
	for (;;) {
		const struct block_info *r = binary_run(w->b, a);
		if (!r || r->kind == BK_TRAP)
			return DROP_OFF_TEXT;
		if (to >= r->start && to < r->end) {
			int idx = block_insn_index(r, to);
			if (idx < 0 || (must_branch && (to != r->term || !br_kind_is_branch(r->kind))))
				return DROP_NOT_A_BRANCH;
			w->insn += (uint64_t)idx;
			*kind = to == r->term ? r->kind : BK_NONE;
			return WALK_OK;
		}
		if (to < r->start)
			return DROP_BACKWARDS;
		if (r->kind != BK_COND && r->kind != BK_SYSCALL && r->kind != BK_REP && r->kind != BK_NONE)
			return DROP_UNCOND_IN_RANGE;
		w->insn += r->ninsns - 1u; /* the instructions before the terminator */
		if (r->kind == BK_COND) {
			int err = push(w, r->term, r->end, BK_COND, 0);
			if (err)
				return err;
		}
		w->insn++;
		steps += r->ninsns;
		if (steps > TRACE_MAX_WALK)
			return DROP_TOO_LONG;
		a = r->end;
	}
}

/* The kind of the branch at an LBR source when no walk ended there. */
static int source_kind(struct binary *b, uint64_t from, int *kind)
{
	*kind = BK_NONE;
	if (!binary_has_code(b, from))
		return 0;
	const struct block_info *r = binary_run(b, from);
	if (!r || r->term != from || !br_kind_is_branch(r->kind))
		return DROP_NOT_A_BRANCH;
	*kind = r->kind;
	return 0;
}

/* After the newest entry: on to the sample IP, appending a not-taken trigger.
 * The trace's end (w->insn) is left at the IP's own position, whatever the
 * instruction there, so that the last `span` instructions are the same number
 * of positions for every sample: the IP and the span - 1 before it. An IP at
 * the newest entry's branch is that entry, unless the recording says the
 * branch ran again, not taken, after it. */
static void walk_to_ip(struct walker *w, const struct perf_sample *s, size_t newest, int append_trigger,
		       int ip_after)
{
	const struct perf_branch *e0 = &s->br[newest];
	if (s->ip == e0->from && !ip_after) { /* the IP is the newest entry, counted already */
		w->insn--;
		return;
	}
	struct walker save = *w;
	int kind, r = walk(w, e0->to, s->ip, 0, &kind);
	if (r != WALK_OK) { /* not precise or not reachable: the trace ends at the newest entry */
		*w = save;
		return;
	}
	if (append_trigger && kind == BK_COND) {
		const struct block_info *run = binary_run(w->b, s->ip);
		if (run && run->term == s->ip)
			push(w, s->ip, run->end, BK_COND, 0);
	}
}

size_t trace_rebuild(struct binary *b, const struct perf_sample *s, unsigned flags,
		     struct br_outcome *out, enum trace_drop *why, uint64_t *end_insn,
		     uint64_t *end_cycle)
{
	struct walker w = {.b = b, .out = out};
	*why = DROP_NONE;
	if (s->nbr == 0) {
		*why = DROP_NO_BRANCHES;
		return 0;
	}
	size_t newest = (flags & TRACE_DEDUP_NEWEST) && s->nbr >= 2 && s->br[0].from == s->br[1].from &&
			s->br[0].to == s->br[1].to;
	for (size_t i = s->nbr; i-- > newest;) {
		const struct perf_branch *e = &s->br[i];
		int kind = BK_NONE, r = WALK_FOREIGN;
		w.cycle += e->cycles; /* the not-taken branches before e retired by e's cycle */
		if (i + 1 < s->nbr)
			r = walk(&w, s->br[i + 1].to, e->from, 1, &kind);
		if (r == WALK_FOREIGN)
			r = source_kind(b, e->from, &kind);
		if (r == 0)
			r = push(&w, e->from, e->to, kind, 1);
		if (r > 0) {
			*why = (enum trace_drop)r;
			return 0;
		}
		w.insn++;
	}
	walk_to_ip(&w, s, newest, (flags & TRACE_APPEND_TRIGGER) != 0, (flags & TRACE_IP_AFTER_NEWEST) != 0);
	*end_insn = w.insn;
	*end_cycle = w.cycle;
	return w.k;
}

int trigger_counts(int trigger, const struct br_outcome *o)
{
	switch (trigger) {
	case TRIG_TAKEN: return o->taken;
	case TRIG_BRANCHES: return 1;
	case TRIG_COND: return o->kind == BK_COND;
	case TRIG_COND_TAKEN: return o->kind == BK_COND && o->taken;
	case TRIG_CALL: return o->kind == BK_CALL || o->kind == BK_CALL_IND;
	case TRIG_RET: return o->kind == BK_RET;
	case TRIG_INDIRECT: return o->kind == BK_JMP_IND || o->kind == BK_CALL_IND;
	default: return 0;
	}
}

/* The window in units of the triggering event (see trace.h). */
static size_t event_window(const struct br_outcome *o, size_t n, int trigger, uint64_t c, uint64_t period,
			   double *weight)
{
	size_t i = n;
	uint64_t seen = 0;
	while (i-- > 0)
		if (trigger_counts(trigger, &o[i]) && ++seen == c + 1)
			break;
	if (seen == 0)
		return n;
	*weight = (double)period / (double)c;
	return seen == c + 1 ? i + 1 : 0;
}

size_t trace_window(const struct br_outcome *o, size_t n, int trigger, uint64_t cbt, uint64_t span,
		    uint64_t end_insn, uint64_t end_cycle, uint64_t period, double *weight)
{
	*weight = 0;
	if (n == 0 || cbt == 0)
		return n;
	if (trigger >= TRIG_COND)
		return event_window(o, n, trigger, cbt, period, weight);
	if (trigger == TRIG_BRANCHES) {
		if (n < cbt)
			return n;
		*weight = (double)period / (double)cbt;
		return n - cbt;
	}
	if (trigger == TRIG_TAKEN) {
		size_t ntaken = 0, i = n;
		for (size_t j = 0; j < n; j++)
			ntaken += o[j].taken;
		if (ntaken < 2)
			return n;
		uint64_t c = cbt < ntaken ? cbt : ntaken - 1; /* the window needs the taken branch before it */
		if (c == 0)
			return n;
		for (uint64_t seen = 0; i-- > 0;)
			if (o[i].taken && ++seen == c + 1)
				break;
		*weight = (double)period / (double)c;
		return i + 1;
	}
	(void)end_cycle;
	if (trigger != TRIG_INSNS || span == 0 || end_insn < o[0].insn || end_insn - o[0].insn < span)
		return n;
	size_t i = n;
	while (i > 0 && end_insn - o[i - 1].insn < span)
		i--;
	*weight = (double)period / (double)span;
	return i;
}

size_t trace_newest_taken(const struct br_outcome *o, size_t n)
{
	size_t i = n;
	while (i > 0 && !o[i - 1].taken)
		i--;
	return i ? i - 1 : n;
}

size_t trace_cycle_window(const struct br_outcome *o, size_t n, int64_t x, uint64_t span, uint64_t period,
			  size_t *end, double *weight, int *truncated)
{
	*weight = span ? (double)period / (double)span : 0;
	*truncated = 0;
	size_t newest = trace_newest_taken(o, n);
	if (n == 0 || span == 0 || newest == n) {
		*end = 0;
		return 0;
	}
	size_t hi = newest + 1;
	while (hi > 0 && (int64_t)o[hi - 1].cycle >= x)
		hi--;
	size_t lo = hi;
	while (lo > 0 && (int64_t)o[lo - 1].cycle >= x - (int64_t)span)
		lo--;
	*truncated = x - (int64_t)span <= (int64_t)o[0].cycle;
	*end = hi;
	return lo;
}
