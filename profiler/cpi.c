/* Fine-grained CPI from samples (see cpi.h). */
#include "profiler/cpi_internal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/decode.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/symtab.h"
#include "profiler/keytab.h"
#include "profiler/lbr_range.h"

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

/* The number of key in ix; on first sight its element (size bytes) of the
 * array *arr (*n elements, capacity *cap) is made, zeroed, and *added set.
 * -1 when memory ran out. */
static long slot(struct keytab *ix, uint64_t key, void **arr, size_t *n, size_t *cap, size_t size, int *added)
{
	long i = keytab_put(ix, &key, sizeof(key), added);
	if (i < 0 || (size_t)i < *n)
		return i;
	char *g = grow_array(*arr, cap, (size_t)i + 1, size);
	if (!g)
		return -1; /* the key stays; its element is made at the next call */
	*arr = g;
	memset(g + *n * size, 0, ((size_t)i + 1 - *n) * size);
	*n = (size_t)i + 1;
	*added = 1;
	return i;
}

static struct addr_stat *addr_at(struct cpi *c, uint64_t addr)
{
	int added;
	long i = slot(c->addr_ix, addr, (void **)&c->a, &c->na, &c->acap, sizeof(*c->a), &added);
	if (i < 0)
		return NULL;
	if (added) {
		c->a[i].addr = addr;
		c->dirty = 1;
	}
	return &c->a[i];
}

const struct addr_stat *cpi_addr_find(const struct cpi *c, uint64_t addr)
{
	long i = keytab_find(c->addr_ix, &addr, sizeof(addr));
	return i < 0 || (size_t)i >= c->na ? NULL : &c->a[i];
}

static struct run_stat *run_at(struct cpi *c, const struct block_info *run)
{
	int added;
	long i = slot(c->run_ix, run->start, (void **)&c->r, &c->nr, &c->rcap, sizeof(*c->r), &added);
	if (i < 0)
		return NULL;
	if (added) {
		c->r[i].run = run;
		c->dirty = 1;
	}
	return &c->r[i];
}

const struct run_stat *cpi_run_find(const struct cpi *c, uint64_t start)
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
	long i = slot(c->fn_ix, f->addr, (void **)&c->f, &c->nf, &c->fcap, sizeof(*c->f), &added);
	if (i < 0)
		return PMUSIM_ERR_NOMEM;
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
		a = &c->a[keytab_find(c->addr_ix, &s->ip, sizeof(s->ip))]; /* run_at may have moved it */
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

