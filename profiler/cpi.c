/* Fine-grained CPI from samples (see cpi.h). */
#include "profiler/cpi.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/decode.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/symtab.h"
#include "profiler/keytab.h"
#include "profiler/lbr_range.h"

/* What the samples say of one instruction address. */
struct addr_stat {
	uint64_t addr;
	double insns;      /* estimated executions from the LBR ranges (S1) */
	double ip_insns;   /* from the instructions event's IPs */
	double cycles;     /* cycles of the cycles event's samples at it */
	double free_cycles; /* of those, the ones no branch stack placed in a run */
	double lbr_cycles; /* cycles from the LBR entries' cycle fields */
	double esum;       /* executions of the LBR runs that contain it */
	uint64_t n_insn;   /* LBR samples whose ranges hold it (not ranges: the ranges
	                    * of one sample are not independent) */
	uint64_t last;     /* the last of them (cpi_stats.lbr_samples' count then) */
	uint64_t n_ip, n_cyc, n_free, n_lbr_cyc;
};

/* What the LBR ranges say of one code run. */
struct run_stat {
	const struct block_info *run;
	double execs, lbr_cycles;
	double cycles;     /* cycles samples placed in it by their branch stacks */
	uint64_t visits, n_lbr_cyc, n_cyc;
	uint64_t samples, last; /* LBR samples that walked it, the last of them */
};

/* The LBR samples whose ranges passed through a function. */
struct fn_stat {
	uint64_t samples, last;
};

struct cpi {
	struct cpi_opts o;
	struct cpi_stats st;
	struct keytab *addr_ix, *run_ix, *fn_ix;
	struct fn_stat *f;
	size_t nf, fcap;
	const struct symtab *syms; /* of the LBR samples' binary */
	struct addr_stat *a;
	size_t na, acap;
	struct run_stat *r;
	size_t nr, rcap;
	uint32_t *sorted; /* address indices by address (valid when !dirty) */
	int dirty;        /* esum and sorted need computing */
	/* the runs of the range being walked */
	const struct block_info **walk;
	size_t nwalk, wcap;
};

struct cpi *cpi_new(const struct cpi_opts *o)
{
	struct cpi *c = calloc(1, sizeof(*c));
	if (!c)
		return NULL;
	c->o = *o;
	c->addr_ix = keytab_new();
	c->run_ix = keytab_new();
	c->fn_ix = keytab_new();
	if (!c->addr_ix || !c->run_ix || !c->fn_ix) {
		cpi_free(c);
		return NULL;
	}
	return c;
}

void cpi_free(struct cpi *c)
{
	if (!c)
		return;
	keytab_free(c->addr_ix);
	keytab_free(c->run_ix);
	keytab_free(c->fn_ix);
	free(c->f);
	free(c->a);
	free(c->r);
	free(c->sorted);
	free(c->walk);
	free(c);
}

static struct addr_stat *addr_at(struct cpi *c, uint64_t addr)
{
	int added;
	long i = keytab_put(c->addr_ix, &addr, sizeof(addr), &added);
	if (i < 0)
		return NULL;
	if (added) {
		struct addr_stat *a = grow_array(c->a, &c->acap, c->na + 1, sizeof(*a));
		if (!a)
			return NULL; /* the key stays; its slot is made at the next call */
		c->a = a;
		while (c->na <= (size_t)i)
			c->a[c->na++] = (struct addr_stat){.addr = addr};
		c->dirty = 1;
	}
	return &c->a[i];
}

static const struct addr_stat *addr_find(const struct cpi *c, uint64_t addr)
{
	long i = keytab_find(c->addr_ix, &addr, sizeof(addr));
	return i < 0 || (size_t)i >= c->na ? NULL : &c->a[i];
}

static struct run_stat *run_at(struct cpi *c, const struct block_info *run)
{
	int added;
	long i = keytab_put(c->run_ix, &run->start, sizeof(run->start), &added);
	if (i < 0)
		return NULL;
	if (added) {
		struct run_stat *r = grow_array(c->r, &c->rcap, c->nr + 1, sizeof(*r));
		if (!r)
			return NULL;
		c->r = r;
		while (c->nr <= (size_t)i)
			c->r[c->nr++] = (struct run_stat){.run = run};
		c->dirty = 1;
	}
	return &c->r[i];
}

static const struct run_stat *run_find(const struct cpi *c, uint64_t start)
{
	long i = keytab_find(c->run_ix, &start, sizeof(start));
	return i < 0 || (size_t)i >= c->nr ? NULL : &c->r[i];
}

static int collect_run(void *ctx, const struct block_info *run, uint32_t n)
{
	(void)n; /* a range holds every instruction of each of its runs */
	struct cpi *c = ctx;
	const struct block_info **w = grow_array(c->walk, &c->wcap, c->nwalk + 1, sizeof(*w));
	if (!w)
		return PMUSIM_ERR_NOMEM;
	c->walk = w;
	c->walk[c->nwalk++] = run;
	return 0;
}

/* Counts the current LBR sample once for the function holding addr. */
static int fn_sampled(struct cpi *c, uint64_t addr)
{
	const struct sym *f = c->syms ? symtab_lookup(c->syms, addr) : NULL;
	if (!f)
		return 0;
	int added;
	long i = keytab_put(c->fn_ix, &f->addr, sizeof(f->addr), &added);
	if (i < 0)
		return PMUSIM_ERR_NOMEM;
	if (added) {
		struct fn_stat *g = grow_array(c->f, &c->fcap, c->nf + 1, sizeof(*g));
		if (!g)
			return PMUSIM_ERR_NOMEM;
		c->f = g;
		while (c->nf <= (size_t)i)
			c->f[c->nf++] = (struct fn_stat){0, 0};
	}
	if (c->f[i].last != c->st.lbr_samples) {
		c->f[i].last = c->st.lbr_samples;
		c->f[i].samples++;
	}
	return 0;
}

/* Adds one range's runs with weight w; cyc: the range's LBR cycles (< 0: none). */
static int add_range(struct cpi *c, uint64_t ninsns, double w, double cyc)
{
	for (size_t k = 0; k < c->nwalk; k++) {
		const struct block_info *run = c->walk[k];
		struct run_stat *rs = run_at(c, run);
		if (!rs)
			return PMUSIM_ERR_NOMEM;
		if (rs->last != c->st.lbr_samples) {
			/* a run lies in one function: the first visit per sample counts it */
			int err = fn_sampled(c, run->start);
			if (err)
				return err;
		}
		rs->execs += w;
		rs->visits++;
		if (rs->last != c->st.lbr_samples) {
			rs->last = c->st.lbr_samples;
			rs->samples++;
		}
		double per_insn = cyc >= 0 ? w * cyc / (double)ninsns : 0;
		if (cyc >= 0) {
			rs->lbr_cycles += per_insn * run->ninsns;
			rs->n_lbr_cyc++;
		}
		for (uint32_t i = 0; i < run->ninsns; i++) {
			struct addr_stat *a = addr_at(c, run->start + run->off[i]);
			if (!a)
				return PMUSIM_ERR_NOMEM;
			a->insns += w;
			if (a->last != c->st.lbr_samples) {
				a->last = c->st.lbr_samples;
				a->n_insn++;
			}
			if (cyc >= 0) {
				a->lbr_cycles += per_insn;
				a->n_lbr_cyc++;
			}
		}
	}
	c->st.insns += w * (double)ninsns;
	return 0;
}

int cpi_add_lbr(struct cpi *c, struct binary *bin, const struct perf_sample *s)
{
	if (s->nbr < 2)
		return 0;
	c->st.lbr_samples++;
	c->syms = binary_symtab(bin);
	double w = (double)s->period / (double)(s->nbr - 1);
	for (uint64_t k = 0; k + 1 < s->nbr; k++) {
		c->nwalk = 0;
		int64_t n = lbr_range_walk(bin, s->br[k + 1].to, s->br[k].from, collect_run, c);
		if (n == PMUSIM_ERR_NOMEM)
			return PMUSIM_ERR_NOMEM;
		if (n <= 0) {
			c->st.ranges_dropped++;
			continue;
		}
		c->st.ranges++;
		/* perf_branch_entry.cycles: cycles since the previous entry retired,
		 * i.e. of the range that ends at this entry's branch; 0 = unknown */
		double cyc = s->br[k].cycles ? (double)s->br[k].cycles : -1;
		if (cyc < 0)
			c->st.lbr_no_cycles++;
		int err = add_range(c, (uint64_t)n, w, cyc);
		if (err)
			return err;
	}
	return 0;
}

int cpi_add_insn_ip(struct cpi *c, const struct perf_sample *s)
{
	struct addr_stat *a = addr_at(c, s->ip);
	if (!a)
		return PMUSIM_ERR_NOMEM;
	a->ip_insns += (double)s->period;
	a->n_ip++;
	c->st.insn_samples++;
	c->st.ip_insns += (double)s->period;
	return 0;
}

/* 1 when pmusim says the instruction at the sample IP retired after the newest
 * entry's branch (perfdata.h PERFDATA_RAW_IP_AFTER). */
static int ip_after_newest(const struct perf_sample *s)
{
	uint32_t tag, flags;
	if (s->raw_size < PERFDATA_RAW_LBR_SIZE)
		return 0;
	memcpy(&tag, s->raw, 4);
	memcpy(&flags, s->raw + 4, 4);
	return tag == PERFDATA_RAW_LBR_TAG && (flags & PERFDATA_RAW_IP_AFTER);
}

/* The code run a sample's IP retired in, from its branch stack: the walk from
 * the target of the newest taken branch before it (the newest entry, or the
 * one before when the IP is the newest entry's own branch) through
 * not-taken branches to the IP. NULL when the walk does not reach it. */
static const struct block_info *run_of_sample(struct binary *bin, const struct perf_sample *s)
{
	uint64_t from = s->br[0].to;
	if (s->ip == s->br[0].from && !ip_after_newest(s)) {
		if (s->nbr < 2)
			return NULL;
		from = s->br[1].to;
	}
	uint64_t a = from;
	for (uint32_t steps = 0; steps < LBR_RANGE_MAX && a <= s->ip;) {
		const struct block_info *r = binary_run(bin, a);
		if (!r || r->kind == BK_TRAP)
			return NULL;
		if (s->ip >= r->start && s->ip < r->end)
			return block_insn_index(r, s->ip) >= 0 ? r : NULL;
		if (r->kind != BK_COND && r->kind != BK_SYSCALL && r->kind != BK_REP && r->kind != BK_NONE)
			return NULL;
		steps += r->ninsns;
		a = r->end;
	}
	return NULL;
}

int cpi_add_cycles(struct cpi *c, struct binary *bin, const struct perf_sample *s)
{
	struct addr_stat *a = addr_at(c, s->ip);
	if (!a)
		return PMUSIM_ERR_NOMEM;
	double w = (double)s->period + c->o.cycles_adjust;
	a->cycles += w;
	a->n_cyc++;
	c->st.cycle_samples++;
	c->st.cycles += w;
	const struct block_info *run = bin && s->nbr ? run_of_sample(bin, s) : NULL;
	struct run_stat *rs = run ? run_at(c, run) : NULL;
	if (run && !rs)
		return PMUSIM_ERR_NOMEM;
	if (rs) {
		rs->cycles += w;
		rs->n_cyc++;
		c->st.cycles_placed++;
	} else {
		a = &c->a[keytab_find(c->addr_ix, &s->ip, sizeof(s->ip))];
		a->free_cycles += w;
		a->n_free++;
	}
	return 0;
}

const struct cpi_stats *cpi_stats(const struct cpi *c)
{
	return &c->st;
}

const struct cpi_opts *cpi_opts(const struct cpi *c)
{
	return &c->o;
}

static int lbr_insns(const struct cpi *c)
{
	return c->o.insns_from == CPI_INSNS_LBR;
}

static int lbr_cycles(const struct cpi *c)
{
	return c->o.cycles_from == CPI_CYCLES_LBR;
}

static int by_addr(const void *x, const void *y, void *ctx)
{
	const struct cpi *c = ctx;
	uint64_t a = c->a[*(const uint32_t *)x].addr, b = c->a[*(const uint32_t *)y].addr;
	return (a > b) - (a < b);
}

/* The executions of the LBR runs over each address, and the addresses in order. */
static int finish(struct cpi *c)
{
	if (!c->dirty)
		return 0;
	for (size_t i = 0; i < c->na; i++)
		c->a[i].esum = 0;
	for (size_t k = 0; k < c->nr; k++) {
		const struct block_info *run = c->r[k].run;
		for (uint32_t i = 0; i < run->ninsns; i++) {
			long j = keytab_find(c->addr_ix, &(uint64_t){run->start + run->off[i]}, sizeof(uint64_t));
			if (j >= 0 && (size_t)j < c->na)
				c->a[j].esum += c->r[k].execs;
		}
	}
	uint32_t *s = realloc(c->sorted, (c->na ? c->na : 1) * sizeof(*s));
	if (!s)
		return PMUSIM_ERR_NOMEM;
	c->sorted = s;
	for (size_t i = 0; i < c->na; i++)
		s[i] = (uint32_t)i;
	qsort_r(s, c->na, sizeof(*s), by_addr, c);
	c->dirty = 0;
	return 0;
}

static void add_addr(const struct cpi *c, const struct addr_stat *a, double share, struct cpi_row *out)
{
	out->insns += (lbr_insns(c) ? a->insns : a->ip_insns) * share;
	/* LBR: the samples of its most sampled address (those of different
	 * addresses overlap); the IPs: every sample */
	if (lbr_insns(c))
		out->n_insn = a->n_insn > out->n_insn ? a->n_insn : out->n_insn;
	else
		out->n_insn += a->n_ip;
	out->cycles += (lbr_cycles(c) ? a->lbr_cycles : a->cycles) * share;
	out->n_cyc += lbr_cycles(c) ? a->n_lbr_cyc : a->n_cyc;
}

static size_t lower_bound(const struct cpi *c, uint64_t addr)
{
	size_t lo = 0, hi = c->na;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->a[c->sorted[mid]].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The function's row from the sorted address at index i on; returns the index
 * after its addresses. */
static size_t function_from(const struct cpi *c, const struct symtab *st, size_t i, struct cpi_row *out)
{
	const struct addr_stat *a0 = &c->a[c->sorted[i]];
	const struct sym *f = symtab_lookup(st, a0->addr);
	*out = (struct cpi_row){.start = f ? f->addr : a0->addr,
				.name = f ? symtab_perf_alias(st, f)->name : NULL};
	do {
		const struct addr_stat *a = &c->a[c->sorted[i++]];
		add_addr(c, a, 1.0, out);
		out->end = a->addr + 1;
	} while (f && i < c->na && symtab_lookup(st, c->a[c->sorted[i]].addr) == f);
	if (f && f->size)
		out->end = f->addr + f->size;
	if (f && lbr_insns(c)) { /* the LBR samples through it (those of its addresses overlap) */
		long k = keytab_find(c->fn_ix, &f->addr, sizeof(f->addr));
		out->n_insn = k >= 0 && (size_t)k < c->nf ? c->f[k].samples : out->n_insn;
	}
	return i;
}

void cpi_function(struct cpi *c, struct binary *bin, uint64_t addr, struct cpi_row *out)
{
	*out = (struct cpi_row){.start = addr, .end = addr};
	const struct symtab *st = binary_symtab(bin);
	const struct sym *f = symtab_lookup(st, addr);
	if (finish(c) < 0 || !f)
		return;
	size_t i = lower_bound(c, f->addr);
	if (i < c->na && symtab_lookup(st, c->a[c->sorted[i]].addr) == f)
		function_from(c, st, i, out);
	else
		*out = (struct cpi_row){.start = f->addr, .end = f->addr + f->size,
					.name = symtab_perf_alias(st, f)->name};
}

void cpi_insn(struct cpi *c, uint64_t addr, struct cpi_row *out)
{
	*out = (struct cpi_row){.start = addr, .end = addr + 1};
	const struct addr_stat *a = addr_find(c, addr);
	if (a)
		add_addr(c, a, 1.0, out);
}

void cpi_block(struct cpi *c, struct binary *bin, uint64_t start, struct cpi_row *out)
{
	*out = (struct cpi_row){.start = start, .end = start};
	if (finish(c) < 0)
		return;
	const struct run_stat *rs = run_find(c, start);
	const struct block_info *run = rs ? rs->run : binary_run(bin, start);
	if (!run)
		return;
	out->end = run->end;
	if (!lbr_insns(c)) { /* the sums over the run's addresses */
		for (uint32_t i = 0; i < run->ninsns; i++) {
			const struct addr_stat *a = addr_find(c, run->start + run->off[i]);
			if (a)
				add_addr(c, a, 1.0, out);
		}
		return;
	}
	double e = rs ? rs->execs : 0;
	out->insns = e * run->ninsns;
	out->n_insn = rs ? rs->samples : 0;
	if (lbr_cycles(c)) {
		out->cycles = rs ? rs->lbr_cycles : 0;
		out->n_cyc = rs ? rs->n_lbr_cyc : 0;
		return;
	}
	/* the cycles samples placed in this run by their branch stacks, and a share
	 * of the others at its addresses: shared among the runs over each address
	 * by their executions (with no run seen over it, all of them) */
	out->cycles = rs ? rs->cycles : 0;
	out->n_cyc = rs ? rs->n_cyc : 0;
	for (uint32_t i = 0; i < run->ninsns; i++) {
		const struct addr_stat *a = addr_find(c, run->start + run->off[i]);
		if (!a || !a->free_cycles)
			continue;
		double share = a->esum > 0 ? e / a->esum : 1.0;
		out->cycles += a->free_cycles * share;
		out->n_cyc += a->n_free;
	}
}

double cpi_row_cpi(const struct cpi_row *r)
{
	return r->insns > 0 ? r->cycles / r->insns : 0;
}

double cpi_row_ipc(const struct cpi_row *r)
{
	return r->cycles > 0 ? r->insns / r->cycles : 0;
}

double cpi_row_rel_err(const struct cpi_row *r)
{
	if (!r->n_insn || !r->n_cyc)
		return 1;
	return sqrt(1.0 / (double)r->n_insn + 1.0 / (double)r->n_cyc);
}

static int hotter(const void *x, const void *y)
{
	const struct cpi_row *a = x, *b = y;
	if (a->cycles != b->cycles)
		return a->cycles < b->cycles ? 1 : -1;
	return (a->start > b->start) - (a->start < b->start);
}

/* The run that holds addr as a straight sweep of its function's code from the
 * function's start finds it (the run at addr itself without a function). */
static const struct block_info *swept_run(struct binary *bin, uint64_t addr)
{
	const struct sym *f = symtab_lookup(binary_symtab(bin), addr);
	uint64_t a = f ? f->addr : addr;
	for (int steps = 0; steps < 65536; steps++) {
		const struct block_info *r = binary_run(bin, a);
		if (!r)
			break;
		if (addr >= r->start && addr < r->end)
			return r;
		if (r->end <= a || r->end > addr)
			break;
		a = r->end;
	}
	return binary_run(bin, addr);
}

static int push_row(struct cpi_row **rows, size_t *n, size_t *cap, const struct cpi_row *r)
{
	struct cpi_row *g = grow_array(*rows, cap, *n + 1, sizeof(*g));
	if (!g)
		return PMUSIM_ERR_NOMEM;
	*rows = g;
	g[(*n)++] = *r;
	return 0;
}

static int block_rows(struct cpi *c, struct binary *bin, struct cpi_row **rows, size_t *n, size_t *cap)
{
	struct keytab *seen = keytab_new();
	if (!seen)
		return PMUSIM_ERR_NOMEM;
	int err = 0;
	/* the runs the LBR saw, then the runs of addresses no such run covers */
	for (size_t k = 0; !err && lbr_insns(c) && k < c->nr; k++)
		if (keytab_put(seen, &c->r[k].run->start, sizeof(uint64_t), NULL) < 0)
			err = PMUSIM_ERR_NOMEM;
	for (size_t i = 0; !err && i < c->na; i++) {
		const struct addr_stat *a = &c->a[c->sorted[i]];
		if ((lbr_insns(c) && a->esum > 0) || (!a->insns && !a->ip_insns && !a->cycles))
			continue;
		const struct block_info *r = swept_run(bin, a->addr);
		if (r && keytab_put(seen, &r->start, sizeof(uint64_t), NULL) < 0)
			err = PMUSIM_ERR_NOMEM;
	}
	for (size_t k = 0; !err && k < keytab_count(seen); k++) {
		struct cpi_row row;
		cpi_block(c, bin, *(const uint64_t *)keytab_key(seen, k, NULL), &row);
		if (row.insns > 0 || row.cycles > 0)
			err = push_row(rows, n, cap, &row);
	}
	keytab_free(seen);
	return err;
}

int cpi_rows(struct cpi *c, struct binary *bin, enum cpi_unit by, struct cpi_row **rows, size_t *n)
{
	*rows = NULL;
	*n = 0;
	size_t cap = 0;
	int err = finish(c);
	if (err)
		return err;
	if (by == CPI_BY_BLOCK) {
		err = block_rows(c, bin, rows, n, &cap);
	} else if (by == CPI_BY_INSN) {
		for (size_t i = 0; !err && i < c->na; i++) {
			struct cpi_row row;
			cpi_insn(c, c->a[c->sorted[i]].addr, &row);
			if (row.insns > 0 || row.cycles > 0)
				err = push_row(rows, n, &cap, &row);
		}
	} else {
		const struct symtab *st = binary_symtab(bin);
		for (size_t i = 0; !err && i < c->na;) {
			struct cpi_row row;
			i = function_from(c, st, i, &row);
			if (row.insns > 0 || row.cycles > 0)
				err = push_row(rows, n, &cap, &row);
		}
	}
	if (err) {
		free(*rows);
		*rows = NULL;
		*n = 0;
		return err;
	}
	qsort(*rows, *n, sizeof(**rows), hotter);
	return 0;
}
