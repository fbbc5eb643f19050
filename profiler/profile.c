/* The profiling methods (see profile.h). */
#include "profiler/profile.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "profiler/ibs_op.h"

static const char *const method_names[METHOD_COUNT] = {"cbt", "taken", "ranges", "ip", "calls", "ibs"};

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
	uint64_t *census;    /* census: per sample, entries << 48 | reach (trace_reach) */
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
	p->depth = o->lbr_depth;
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

/* Census: how far back the sample's trace reaches, in units of the trigger
 * (see profile_census_window). */
static int census_add(struct profile *p, const struct perf_sample *s, uint64_t reach)
{
	if (p->ncensus == p->census_cap) {
		size_t cap = p->census_cap ? 2 * p->census_cap : 1024;
		uint64_t *c = realloc(p->census, cap * sizeof(*c));
		if (!c)
			return PMUSIM_ERR_NOMEM;
		p->census = c;
		p->census_cap = cap;
	}
	uint64_t nbr = s->nbr < 0xffff ? s->nbr : 0xffff, max = (1ull << 48) - 1;
	p->census[p->ncensus++] = nbr << 48 | (reach < max ? reach : max);
	p->st.used++;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

uint64_t profile_census_window(struct profile *p, double q)
{
	uint64_t depth = 0, mask = (1ull << 48) - 1;
	for (size_t i = 0; i < p->ncensus; i++)
		if (p->census[i] >> 48 > depth)
			depth = p->census[i] >> 48;
	size_t k = 0; /* full traces only: an LBR emptied by a context switch says nothing */
	for (size_t i = 0; i < p->ncensus; i++)
		if (p->census[i] >> 48 == depth)
			p->census[k++] = p->census[i] & mask;
	if (k == 0)
		return 1;
	arrays_sort(p->census, k, sizeof(*p->census), cmp_u64);
	uint64_t e = p->census[(size_t)(q * (double)(k - 1))];
	return e > 1 ? e : 1;
}

/* 1 when the sample carries pmusim's payload (perfdata.h PERFDATA_RAW_LBR_TAG). */
static int pmusim_payload(const struct perf_sample *s)
{
	uint32_t tag;
	return s->raw_size >= PERFDATA_RAW_LBR_SIZE && (memcpy(&tag, s->raw, 4), tag == PERFDATA_RAW_LBR_TAG);
}

/* The cycle of a cycle-triggered sample's overflow on its trace's clock (that
 * of br_outcome.cycle). pmusim's recordings say it (perfdata.h,
 * PERFDATA_RAW_LBR_TAG). Real ones do not: the cycles between the newest entry
 * and the overflow are then estimated as the instructions walked from the
 * newest entry to the sample IP at the trace's own cycles per instruction (an
 * approximation: docs/cycle-windows.md). */
static int64_t overflow_cycle(const struct perf_sample *s, const struct br_outcome *o, size_t n,
			      uint64_t end_insn, uint64_t end_cycle, int *exact)
{
	int64_t d;
	*exact = 0;
	if (pmusim_payload(s)) {
		memcpy(&d, s->raw + 8, 8);
		*exact = 1;
		return (int64_t)end_cycle + d;
	}
	size_t newest = trace_newest_taken(o, n);
	if (newest == n || newest == 0 || o[newest].insn <= o[0].insn || end_insn <= o[newest].insn)
		return (int64_t)end_cycle;
	double cpi = (double)(o[newest].cycle - o[0].cycle) / (double)(o[newest].insn - o[0].insn);
	return (int64_t)end_cycle + (int64_t)((double)(end_insn - o[newest].insn) * cpi + 0.5);
}

/* How far back a trace reaches: events of the trigger before its newest one,
 * instructions or cycles before the sample point that the trace covers whole. */
static uint64_t trace_reach(const struct br_outcome *o, size_t n, int trigger, uint64_t end_insn, int64_t x)
{
	if (trigger == TRIG_INSNS)
		return end_insn >= o[0].insn ? end_insn - o[0].insn : 0;
	if (trigger == TRIG_CYCLES)
		return x - 1 > (int64_t)o[0].cycle ? (uint64_t)(x - 1 - (int64_t)o[0].cycle) : 0;
	uint64_t events = 0;
	for (size_t i = 0; i < n; i++)
		events += (uint64_t)trigger_counts(trigger, &o[i]);
	return events ? events - 1 : 0;
}

static int add_cbt(struct profile *p, const struct perf_sample *s, int trigger, int whole)
{
	enum trace_drop why;
	uint64_t end_insn, end_cycle;
	unsigned flags = (p->o.skylake_dup ? TRACE_DEDUP_NEWEST : 0) |
			 (trigger == TRIG_BRANCHES || (p->o.precise && trigger != TRIG_TAKEN) ? TRACE_APPEND_TRIGGER : 0);
	uint32_t pf = 0;
	if (pmusim_payload(s) && (memcpy(&pf, s->raw + 4, 4), pf & PERFDATA_RAW_IP_AFTER))
		flags |= TRACE_IP_AFTER_NEWEST;
	size_t n = trace_rebuild(p->bin, s, flags, p->out, &why, &end_insn, &end_cycle);
	if (n == 0)
		return drop(p, why);
	if (whole) /* ranges: everything, once per sample */
		return p->st.used++, add_outcomes(p, p->out, n, 1.0);
	int exact = 0;
	int64_t x = trigger == TRIG_CYCLES ? overflow_cycle(s, p->out, n, end_insn, end_cycle, &exact) : 0;
	if (s->nbr > p->depth)
		p->depth = s->nbr;
	if (p->o.census)
		return census_add(p, s, trace_reach(p->out, n, trigger, end_insn, x));
	double w;
	uint64_t cbt = p->o.cbt && p->o.cbt < s->nbr ? p->o.cbt : s->nbr;
	if (trigger >= TRIG_COND) /* events per window: no more than a trace holds */
		cbt = p->o.cbt ? p->o.cbt : 1;
	/* every full trace spans at least entries - 1 instructions and cycles (one
	 * entry fewer if the newest was a Skylake duplicate). A sample with fewer
	 * entries than the LBR holds saw it emptied by a context switch: its window
	 * is as long as the others' (weight period / span), it just has less in it. */
	uint64_t span = p->o.span ? p->o.span : (p->depth > 2 ? p->depth - 2 : 1);
	if (trigger == TRIG_CYCLES) {
		size_t end;
		int cut;
		size_t first = trace_cycle_window(p->out, n, x, span, s->period ? s->period : 1, &end, &w, &cut);
		p->st.used++;
		p->st.truncated += (uint64_t)(cut && s->nbr == p->depth); /* a partial LBR holds less anyway */
		p->st.estimated += (uint64_t)!exact;
		return add_outcomes(p, p->out + first, end - first, w);
	}
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

static int add_ibs(struct profile *p, const struct perf_sample *s)
{
	struct ibs_op op;
	if (!s->raw_size || ibs_op_decode(s->raw, s->raw_size, &op) < 0)
		return drop(p, DROP_NO_OP_DATA);
	p->st.used++;
	if (!op.branch)
		return 0;
	const struct block_info *r;
	int kind = kind_at(p, s->ip, &r);
	double w = (double)(s->period ? s->period : 1);
	p->st.outcomes++;
	if (kind == BK_COND && !op.taken)
		return edges_add(p->e, s->ip, r->end, kind, 0, w) < 0 ? PMUSIM_ERR_NOMEM : 0;
	if (kind == BK_NONE) /* code the binary does not have: the op's own word */
		kind = op.ret ? BK_RET : BK_JMP_IND;
	return edges_add(p->e, s->ip, op.br_target, kind, 1, w) < 0 ? PMUSIM_ERR_NOMEM : 0;
}

int profile_add(struct profile *p, const struct perf_sample *s, int trigger)
{
	p->st.samples++;
	switch (p->o.method) {
	case METHOD_CBT: return add_cbt(p, s, trigger, 0);
	case METHOD_RANGES: return add_cbt(p, s, trigger, 1);
	case METHOD_TAKEN: return add_entries(p, s, 0);
	case METHOD_CALLS: return add_entries(p, s, 1);
	case METHOD_IBS: return add_ibs(p, s);
	default: return add_ip(p, s);
	}
}

uint64_t profile_depth(const struct profile *p)
{
	return p->depth;
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
