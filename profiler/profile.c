/* The profiling methods (see profile.h). */
#include "profiler/profile.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

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
		/* umasks as pmusim's events (Ice Lake: pmu_model/events.c) */
		if ((config & 0xff) == 0xc4) {
			switch ((config >> 8) & 0xff) {
			case 0x20: return TRIG_TAKEN;
			case 0x11: return TRIG_COND;
			case 0x01: return TRIG_COND_TAKEN;
			case 0x02: return TRIG_CALL;
			case 0x08: return TRIG_RET;
			case 0x80: return TRIG_INDIRECT;
			default: return TRIG_BRANCHES;
			}
		}
		if ((config & 0xffff) == 0x00c0)
			return TRIG_INSNS; /* INST_RETIRED.ANY_P */
	}
	return TRIG_CYCLES;
}

struct profile {
	struct profile_opts o;
	struct binary *bin;
	struct edges *e;
	struct profile_stats st;
	uint64_t depth;   /* most LBR entries of a sample so far: the recording's LBR depth */
	uint64_t full_taken; /* widest taken-trigger window so far (taken branches) */
	uint32_t *census;    /* census: per sample, entries << 16 | events of the trigger */
	size_t ncensus, census_cap;
	struct br_outcome out[TRACE_MAX_OUT];
};

int profile_new(const struct profile_opts *o, struct binary *bin, struct profile **out)
{
	struct profile *p = calloc(1, sizeof(*p));
	if (!p || !(p->e = edges_new())) {
		free(p);
		return PMUSIM_ERR_NOMEM;
	}
	p->o = *o;
	p->bin = bin;
	*out = p;
	return 0;
}

void profile_free(struct profile *p)
{
	if (!p)
		return;
	edges_free(p->e);
	free(p->census);
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

/* Census: how many events of the trigger the sample's trace holds. */
static int count_events(struct profile *p, const struct perf_sample *s, int trigger, size_t n)
{
	uint32_t events = 0;
	for (size_t i = 0; i < n; i++)
		events += (uint32_t)trigger_counts(trigger, &p->out[i]);
	if (p->ncensus == p->census_cap) {
		size_t cap = p->census_cap ? 2 * p->census_cap : 1024;
		uint32_t *c = realloc(p->census, cap * sizeof(*c));
		if (!c)
			return PMUSIM_ERR_NOMEM;
		p->census = c;
		p->census_cap = cap;
	}
	uint32_t nbr = s->nbr < 0xffff ? (uint32_t)s->nbr : 0xffff;
	p->census[p->ncensus++] = nbr << 16 | (events < 0xffff ? events : 0xffff);
	p->st.used++;
	return 0;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t profile_census_window(struct profile *p, double q)
{
	uint32_t depth = 0;
	for (size_t i = 0; i < p->ncensus; i++)
		if (p->census[i] >> 16 > depth)
			depth = p->census[i] >> 16;
	size_t k = 0; /* full traces only: an LBR emptied by a context switch says nothing */
	for (size_t i = 0; i < p->ncensus; i++)
		if (p->census[i] >> 16 == depth)
			p->census[k++] = p->census[i] & 0xffff;
	if (k == 0)
		return 1;
	qsort(p->census, k, sizeof(*p->census), cmp_u32);
	uint32_t e = p->census[(size_t)(q * (double)(k - 1))];
	return e > 2 ? e - 1 : 1;
}

static int add_cbt(struct profile *p, const struct perf_sample *s, int trigger, int whole)
{
	enum trace_drop why;
	uint64_t end_insn, end_cycle;
	unsigned flags = (p->o.skylake_dup ? TRACE_DEDUP_NEWEST : 0) |
			 (trigger == TRIG_BRANCHES || (p->o.precise && trigger != TRIG_TAKEN) ? TRACE_APPEND_TRIGGER : 0);
	size_t n = trace_rebuild(p->bin, s, flags, p->out, &why, &end_insn, &end_cycle);
	if (n == 0)
		return drop(p, why);
	if (whole) /* ranges: everything, once per sample */
		return p->st.used++, add_outcomes(p, p->out, n, 1.0);
	if (p->o.census)
		return count_events(p, s, trigger, n);
	double w;
	uint64_t cbt = p->o.cbt && p->o.cbt < s->nbr ? p->o.cbt : s->nbr;
	if (trigger >= TRIG_COND) /* events per window: no more than a trace holds */
		cbt = p->o.cbt ? p->o.cbt : 1;
	/* every full trace spans at least entries - 1 instructions and cycles (one
	 * entry fewer if the newest was a Skylake duplicate). A sample with fewer
	 * entries than the LBR holds saw it emptied by a context switch: its window
	 * is as long as the others' (weight period / span), it just has less in it. */
	if (s->nbr > p->depth)
		p->depth = s->nbr;
	uint64_t span = p->o.span ? p->o.span : (p->depth > 2 ? p->depth - 2 : 1);
	size_t first = trace_window(p->out, n, trigger, cbt, span, end_insn, end_cycle,
				    s->period ? s->period : 1, &w);
	if (first >= n)
		return drop(p, DROP_SHORT);
	if (trigger == TRIG_TAKEN) {
		/* a window cut short by an emptied LBR still stands for period / full */
		uint64_t period = s->period ? s->period : 1, c = (uint64_t)((double)period / w + 0.5);
		if (c > p->full_taken)
			p->full_taken = c;
		w = (double)period / (double)p->full_taken;
	}
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

int profile_add(struct profile *p, const struct perf_sample *s, int trigger)
{
	p->st.samples++;
	switch (p->o.method) {
	case METHOD_CBT: return add_cbt(p, s, trigger, 0);
	case METHOD_RANGES: return add_cbt(p, s, trigger, 1);
	case METHOD_TAKEN: return add_entries(p, s, 0);
	case METHOD_CALLS: return add_entries(p, s, 1);
	default: return add_ip(p, s);
	}
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
