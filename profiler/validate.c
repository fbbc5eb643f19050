/* Truth files and overlap arithmetic (see validate.h). */
#include "profiler/validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/fdata.h"
#include "common/infile.h"

struct named {
	char name[512];
	uint64_t addr;
};

static int cmp_named(const void *a, const void *b)
{
	return strcmp(((const struct named *)a)->name, ((const struct named *)b)->name);
}

static struct named *name_table(const struct symtab *st, size_t *n)
{
	*n = symtab_count(st);
	struct named *t = calloc(*n + 1, sizeof(*t));
	if (!t)
		return NULL;
	for (size_t i = 0; i < *n; i++) {
		symtab_bolt_name(symtab_at(st, i), t[i].name, sizeof(t[i].name));
		t[i].addr = symtab_at(st, i)->addr;
	}
	arrays_sort(t, *n, sizeof(*t), cmp_named);
	return t;
}

/* "1 name off" or "0 dso off" -> address; 0 when the name is unknown. A dso
 * that names none of the binary's other mappings (libraries, "//anon") is the
 * program's. */
static int resolve(const struct named *t, size_t n, const struct binary *bin, const char *is_sym,
		   const char *name, const char *off, uint64_t *addr)
{
	uint64_t o = strtoull(off, NULL, 16);
	if (strcmp(is_sym, "0") == 0) {
		const struct fdata_region *r;
		size_t nr = binary_regions(bin, &r);
		if (!fdata_region_resolve(r, nr, name, o, addr))
			*addr = binary_bias(bin) + o;
		return 1;
	}
	struct named key;
	snprintf(key.name, sizeof(key.name), "%s", name);
	const struct named *hit = arrays_find(&key, t, n, sizeof(*t), cmp_named);
	if (!hit)
		return 0;
	*addr = hit->addr + o;
	return 1;
}

static void classify(struct binary *bin, uint64_t from, uint64_t to, int *kind, int *taken)
{
	const struct block_info *r = binary_run(bin, from);
	*kind = r && r->term == from ? r->kind : BK_NONE;
	*taken = !(*kind == BK_COND && to == r->end && r->target != r->end);
}

int fdata_read_edges(const char *path, struct binary *bin, struct edges *out, size_t *unknown,
		     char *msg, size_t ml)
{
	const char *why;
	FILE *f = infile_fopen(path, &why);
	if (!f)
		return pmusim_fail(msg, ml, PMUSIM_ERR_IO, "cannot read %s: %s", path, why);
	size_t nt;
	struct named *t = name_table(binary_symtab(bin), &nt);
	char line[2048];
	int err = t ? 0 : PMUSIM_ERR_NOMEM;
	unsigned lineno = 0;
	*unknown = 0;
	while (!err && fgets(line, sizeof(line), f)) {
		lineno++;
		struct fdata_line fl;
		if (line[strspn(line, " \t\r\n")] == 0 || strncmp(line, "no_lbr", 6) == 0 ||
		    strncmp(line, "boltedcollection", 16) == 0)
			continue;
		if (fdata_parse_line(line, &fl) < 0) {
			err = pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT,
					  "%s:%u: not an fdata line (8 fields; the count a finite number, 0 or more)",
					  path, lineno);
			break;
		}
		char f1[512], f2[512], f3[64], f4[512], f5[512], f6[64];
		uint64_t from, to;
		sscanf(fl.key, "%511s %511s %63s %511s %511s %63s", f1, f2, f3, f4, f5, f6);
		if (!resolve(t, nt, bin, f1, f2, f3, &from) || !resolve(t, nt, bin, f4, f5, f6, &to)) {
			(*unknown)++;
			continue;
		}
		int kind, taken;
		classify(bin, from, to, &kind, &taken);
		err = edges_add(out, from, to, kind, taken, fl.count);
	}
	fclose(f);
	free(t);
	return err;
}

int edge_is_taken(const struct edge *e)
{
	return e->taken;
}

int edge_is_call(const struct edge *e)
{
	return e->kind == BK_CALL || e->kind == BK_CALL_IND;
}

static double total(const struct edge *e, size_t n, int (*in)(const struct edge *))
{
	double s = 0;
	for (size_t i = 0; i < n; i++)
		if (!in || in(&e[i]))
			s += e[i].w;
	return s;
}

/* Overlap of p and q restricted to edges `in` accepts (every edge for NULL). */
static double subset_overlap(struct edges *p, const struct edge *q, size_t nq, int (*in)(const struct edge *),
			     double *max_rel)
{
	size_t np;
	const struct edge *pe = edges_sorted(p, &np);
	double P = total(pe, np, in), Q = total(q, nq, in), sum = 0;
	if (P <= 0 || Q <= 0)
		return P <= 0 && Q <= 0 ? 1.0 : 0.0;
	for (size_t i = 0; i < nq; i++) {
		if (in && !in(&q[i]))
			continue;
		double qn = q[i].w / Q, pn = edges_weight(p, q[i].from, q[i].to) / P;
		sum += pn < qn ? pn : qn;
		if (max_rel && qn >= 0.01 && fabs(pn - qn) / qn > *max_rel)
			*max_rel = fabs(pn - qn) / qn;
	}
	return sum;
}

void overlap_compute(struct edges *p, struct edges *q, struct overlap *r)
{
	size_t nq, np;
	const struct edge *qe = edges_sorted(q, &nq);
	memset(r, 0, sizeof(*r));
	edges_sorted(p, &np);
	r->truth_edges = nq;
	r->profile_edges = np;
	r->all = subset_overlap(p, qe, nq, NULL, &r->hot_max_rel_err);
	r->taken = subset_overlap(p, qe, nq, edge_is_taken, NULL);
	r->calls = subset_overlap(p, qe, nq, edge_is_call, NULL);
}
