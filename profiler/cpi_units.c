/* The CPI estimate of a unit and the rows of a report (see cpi.h). */
#include <math.h>
#include <stdlib.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"
#include "profiler/cpi_internal.h"

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
	const struct addr_stat *a = cpi_addr_find(c, addr);
	if (a)
		add_addr(c, a, 1.0, out);
}

void cpi_block(struct cpi *c, struct binary *bin, uint64_t start, struct cpi_row *out)
{
	*out = (struct cpi_row){.start = start, .end = start};
	if (finish(c) < 0)
		return;
	const struct run_stat *rs = cpi_run_find(c, start);
	const struct block_info *run = rs ? rs->run : binary_run(bin, start);
	if (!run)
		return;
	out->end = run->end;
	if (!lbr_insns(c)) { /* the sums over the run's addresses */
		for (uint32_t i = 0; i < run->ninsns; i++) {
			const struct addr_stat *a = cpi_addr_find(c, run->start + run->off[i]);
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
		const struct addr_stat *a = cpi_addr_find(c, run->start + run->off[i]);
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
	arrays_sort(*rows, *n, sizeof(**rows), hotter);
	return 0;
}
