/* The profiling methods (see profile.h). */
#include "profiler/profile.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

/* With instruction or cycle triggers and no --span, the window is the 10th
 * percentile of the spans of the first CALIBRATE samples (deterministic, and
 * bounded memory: those samples are held until then). */
#define CALIBRATE 256

static const char *const method_names[METHOD_COUNT] = {"cbt", "taken", "ranges", "ip", "calls"};

int prof_method_parse(const char *name)
{
	for (int i = 0; i < METHOD_COUNT; i++)
		if (strcmp(name, method_names[i]) == 0)
			return i;
	return -1;
}

const char *prof_method_name(int method)
{
	return method >= 0 && method < METHOD_COUNT ? method_names[method] : "?";
}

int trigger_of_event(uint32_t type, uint64_t config)
{
	if (type == PERF_TYPE_HARDWARE) {
		switch (config) {
		case PERF_COUNT_HW_INSTRUCTIONS: return TRIG_INSNS;
		case PERF_COUNT_HW_BRANCH_INSTRUCTIONS: return TRIG_BRANCHES;
		default: return TRIG_CYCLES;
		}
	}
	if (type == PERF_TYPE_RAW) {
		/* Intel BR_INST_RETIRED (event 0xc4): umask 0x20 near_taken, 0x00 all */
		if ((config & 0xff) == 0xc4)
			return (config & 0xff00) == 0x2000 ? TRIG_TAKEN : TRIG_BRANCHES;
		if ((config & 0xffff) == 0x00c0)
			return TRIG_INSNS; /* INST_RETIRED.ANY_P */
	}
	return TRIG_CYCLES;
}

struct held {
	struct perf_sample s;
	int trigger;
};

struct profile {
	struct profile_opts o;
	struct binary *bin;
	struct edges *e;
	struct profile_stats st;
	struct br_outcome out[TRACE_MAX_OUT];
	int calibrating;             /* span still to be chosen */
	struct held held[CALIBRATE]; /* samples held until then (branches copied) */
	struct perf_branch *held_br;
	size_t nheld;
};

int profile_new(const struct profile_opts *o, struct binary *bin, struct profile **out)
{
	struct profile *p = calloc(1, sizeof(*p));
	if (!p || !(p->e = edges_new())) {
		free(p);
		return PMUSIM_ERR_NOMEM;
	}
	p->o = *o;
	p->calibrating = o->method == METHOD_CBT && o->span == 0;
	p->bin = bin;
	*out = p;
	return 0;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	edges_free(p->e);
	free(p->held_br);
	free(p);
}

static int add_outcomes(struct profile *p, const struct br_outcome *o, size_t n, double w)
{
	for (size_t i = 0; i < n; i++)
		if (edges_add(p->e, o[i].from, o[i].to, o[i].kind, o[i].taken, w) < 0)
			return PMUSIM_ERR_NOMEM;
	p->st.outcomes += n;
	return 0;
}

static int drop(struct profile *p, enum trace_drop why)
{
	p->st.dropped++;
	p->st.drop[why]++;
	return 0;
}

static int add_cbt(struct profile *p, const struct perf_sample *s, int trigger, int whole)
{
	enum trace_drop why;
	uint64_t end_insn, end_cycle;
	size_t n = trace_rebuild(p->bin, s, trigger == TRIG_BRANCHES, p->out, &why, &end_insn, &end_cycle);
	if (n == 0)
		return drop(p, why);
	if (whole) /* ranges: everything, once per sample */
		return p->st.used++, add_outcomes(p, p->out, n, 1.0);
	double w;
	uint64_t cbt = p->o.cbt && p->o.cbt < s->nbr ? p->o.cbt : s->nbr;
	size_t first = trace_window(p->out, n, trigger, cbt, p->o.span, end_insn, end_cycle,
				    s->period ? s->period : 1, &w);
	if (first >= n)
		return drop(p, DROP_SHORT);
	p->st.used++;
	return add_outcomes(p, p->out + first, n - first, w);
}

/* Kind of the branch at addr from the binary (BK_NONE outside it). */
static int kind_at(struct profile *p, uint64_t addr, const struct block_info **run)
{
	*run = binary_run(p->bin, addr);
	return *run && (*run)->term == addr ? (*run)->kind : BK_NONE;
}

static int add_entries(struct profile *p, const struct perf_sample *s, int calls_only)
{
	if (s->nbr == 0)
		return drop(p, DROP_NO_BRANCHES);
	double w = (double)(s->period ? s->period : 1) / (double)s->nbr;
	for (uint64_t i = 0; i < s->nbr; i++) {
		const struct block_info *r;
		int kind = kind_at(p, s->br[i].from, &r);
		if (calls_only && kind != BK_CALL && kind != BK_CALL_IND)
			continue;
		if (edges_add(p->e, s->br[i].from, s->br[i].to, kind, 1, w) < 0)
			return PMUSIM_ERR_NOMEM;
		p->st.outcomes++;
	}
	p->st.used++;
	return 0;
}

static int add_ip(struct profile *p, const struct perf_sample *s)
{
	const struct block_info *r;
	int kind = kind_at(p, s->ip, &r);
	double w = (double)(s->period ? s->period : 1);
	p->st.used++;
	if (kind == BK_COND)
		return edges_add(p->e, s->ip, r->target, kind, 1, w / 2) < 0 ||
			       edges_add(p->e, s->ip, r->end, kind, 0, w / 2) < 0
			   ? PMUSIM_ERR_NOMEM : 0;
	if (kind == BK_JMP || kind == BK_CALL)
		return edges_add(p->e, s->ip, r->target, kind, 1, w);
	return 0; /* not a branch, or its target is not known without an LBR */
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* Chooses the span from the held samples and feeds them. */
static int calibrate(struct profile *p)
{
	uint64_t spans[CALIBRATE];
	size_t n = 0;
	for (size_t i = 0; i < p->nheld; i++) {
		enum trace_drop why;
		uint64_t ei, ec;
		const struct held *h = &p->held[i];
		size_t k = trace_rebuild(p->bin, &h->s, 0, p->out, &why, &ei, &ec);
		if (k)
			spans[n++] = h->trigger == TRIG_CYCLES ? ec - p->out[0].cycle : ei - p->out[0].insn;
	}
	qsort(spans, n, sizeof(spans[0]), cmp_u64);
	p->o.span = n ? spans[n / 10] : 1;
	if (p->o.span == 0)
		p->o.span = 1;
	p->calibrating = 0;
	int err = 0;
	for (size_t i = 0; i < p->nheld && !err; i++) {
		p->st.samples--; /* counted when held */
		err = profile_add(p, &p->held[i].s, p->held[i].trigger);
	}
	p->nheld = 0;
	return err;
}

static int hold(struct profile *p, const struct perf_sample *s, int trigger)
{
	if (!p->held_br && !(p->held_br = malloc(CALIBRATE * 64 * sizeof(*p->held_br))))
		return PMUSIM_ERR_NOMEM;
	struct held *h = &p->held[p->nheld];
	h->s = *s;
	h->s.nbr = s->nbr < 64 ? s->nbr : 64;
	h->trigger = trigger;
	if (h->s.nbr)
		memcpy(p->held_br + 64 * p->nheld, s->br, h->s.nbr * sizeof(*s->br));
	h->s.br = p->held_br + 64 * p->nheld;
	return ++p->nheld == CALIBRATE ? calibrate(p) : 0;
}

int profile_add(struct profile *p, const struct perf_sample *s, int trigger)
{
	p->st.samples++;
	if (p->calibrating) {
		if (trigger == TRIG_INSNS || trigger == TRIG_CYCLES)
			return hold(p, s, trigger);
		if (!p->nheld)
			p->calibrating = 0;
	}
	switch (p->o.method) {
	case METHOD_CBT: return add_cbt(p, s, trigger, 0);
	case METHOD_RANGES: return add_cbt(p, s, trigger, 1);
	case METHOD_TAKEN: return add_entries(p, s, 0);
	case METHOD_CALLS: return add_entries(p, s, 1);
	default: return add_ip(p, s);
	}
}

int profile_finish(struct profile *p)
{
	return p->calibrating && p->nheld ? calibrate(p) : 0;
}

uint64_t profile_span(const struct profile *p)
{
	return p->o.span;
}

struct edges *profile_edges(struct profile *p)
{
	return p->e;
}

const struct profile_stats *profile_stats(const struct profile *p)
{
	return &p->st;
}

struct binary *profile_binary(const struct profile *p)
{
	return p->bin;
}
