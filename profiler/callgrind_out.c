/* An exact profile in callgrind's format (see profiler/callgrind_out.h). */
#include "profiler/callgrind_out.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"

#define NEV 6 /* Ir Cycles Bc Bcm Bi Bim */

struct icost {
	uint64_t addr;
	uint64_t v[NEV];
};

static int by_addr(const void *a, const void *b)
{
	const struct icost *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Every instruction that ran with its costs, by address (runs that share
 * instructions, entered at different places, add up). */
static int gather(const struct cg_source *src, struct icost **out, size_t *nout)
{
	size_t nr, n = 0, cap = 0;
	const struct fc_run *runs = func_costs_runs(src->fc, &nr);
	struct icost *c = NULL;
	for (size_t id = 0; id < nr; id++) {
		const struct block_info *bi = runs[id].bi;
		const struct pmu_insn_figures *fig = bi ? src->insn(src->ctx, (uint32_t)id) : NULL;
		if (!fig)
			continue;
		for (uint32_t i = 0; i < bi->ninsns; i++) {
			int term = i + 1 == bi->ninsns;
			if (!fig[i].retired && !fig[i].cycles && !term)
				continue;
			struct icost *nc = grow_array(c, &cap, n + 1, sizeof(*nc));
			if (!nc)
				return free(c), PMUSIM_ERR_NOMEM;
			c = nc;
			c[n] = (struct icost){bi->start + bi->off[i], {fig[i].retired, fig[i].cycles}};
			if (term)
				memcpy(&c[n].v[2], runs[id].branch, sizeof(runs[id].branch));
			n++;
		}
	}
	if (n)
		arrays_sort(c, n, sizeof(*c), by_addr);
	size_t w = 0;
	for (size_t i = 0; i < n; i++) {
		if (w && c[w - 1].addr == c[i].addr) {
			for (int k = 0; k < NEV; k++)
				c[w - 1].v[k] += c[i].v[k];
		} else {
			c[w++] = c[i];
		}
	}
	*out = c;
	*nout = w;
	return 0;
}

/* Names compressed as callgrind writes them: "(id) name" the first time, "(id)" after. */
struct names {
	char **s;
	size_t n, cap;
};

static int name_id(struct names *t, const char *s, int *is_new)
{
	for (size_t i = 0; i < t->n; i++)
		if (strcmp(t->s[i], s) == 0)
			return *is_new = 0, (int)i + 1;
	char **ns = grow_array(t->s, &t->cap, t->n + 1, sizeof(*ns));
	if (!ns || !(ns[t->n] = strdup(s)))
		return PMUSIM_ERR_NOMEM;
	t->s = ns;
	*is_new = 1;
	return (int)++t->n;
}

static int put_name(FILE *f, const char *key, struct names *t, const char *s)
{
	int is_new, id = name_id(t, s, &is_new);
	if (id < 0)
		return id;
	if (is_new)
		fprintf(f, "%s=(%d) %s\n", key, id, s);
	else
		fprintf(f, "%s=(%d)\n", key, id);
	return 0;
}

static void put_costs(FILE *f, uint64_t addr, const uint64_t *v)
{
	int last = NEV;
	while (last > 1 && !v[last - 1])
		last--; /* trailing zeros may be left out */
	fprintf(f, "0x%" PRIx64, addr);
	for (int k = 0; k < last; k++)
		fprintf(f, " %" PRIu64, v[k]);
	fputc('\n', f);
}

static void edge_costs(const struct fc_edge *e, uint64_t *v)
{
	static const int kind[NEV] = {FC_INSNS, FC_CYCLES, FC_COND, FC_COND_MISSES, FC_IND, FC_IND_MISSES};
	for (int k = 0; k < NEV; k++)
		v[k] = e->incl.v[kind[k]];
}

int callgrind_write(FILE *f, const struct cg_source *src)
{
	struct icost *c;
	size_t n, ne;
	int err = gather(src, &c, &n);
	if (err < 0)
		return err;
	const struct fc_edge *edge = func_costs_edges(src->fc, &ne);
	uint64_t total[NEV] = {0};
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < NEV; k++)
			total[k] += c[i].v[k];
	fprintf(f, "# callgrind format\nversion: 1\ncreator: %s\npid: %" PRIu32 "\ncmd: %s\npart: 1\n\n", src->creator,
		src->pid, src->cmd);
	fprintf(f, "positions: instr\nevents: Ir Cycles Bc Bcm Bi Bim\nsummary:");
	for (int k = 0; k < NEV; k++)
		fprintf(f, " %" PRIu64, total[k]);
	fprintf(f, "\n\n");
	struct names obs = {0}, fns = {0}, fls = {0};
	char name[512];
	uint64_t cur_fn = UINT64_MAX;
	const char *cur_ob = NULL;
	size_t e = 0;
	for (size_t i = 0; i < n && !err; i++) {
		uint64_t fn = src->func_of(src->ctx, c[i].addr);
		if (fn != cur_fn) {
			const char *ob = src->object_of(src->ctx, fn ? fn : c[i].addr);
			if ((!cur_ob || strcmp(ob, cur_ob) != 0) && (err = put_name(f, "ob", &obs, ob)) < 0)
				break;
			cur_ob = ob;
			if ((err = put_name(f, "fl", &fls, "???")) < 0 ||
			    (err = put_name(f, "fn", &fns, src->name_of(src->ctx, fn, name, sizeof(name)))) < 0)
				break;
			cur_fn = fn;
		}
		put_costs(f, c[i].addr, c[i].v);
		/* the calls made at this instruction (edges are sorted by site) */
		while (e < ne && edge[e].site < c[i].addr)
			e++;
		for (; e < ne && edge[e].site == c[i].addr && !err; e++) {
			uint64_t v[NEV];
			const char *cob = src->object_of(src->ctx, edge[e].callee ? edge[e].callee : c[i].addr);
			if (strcmp(cob, cur_ob) != 0 && (err = put_name(f, "cob", &obs, cob)) < 0)
				break;
			if ((err = put_name(f, "cfi", &fls, "???")) < 0 ||
			    (err = put_name(f, "cfn", &fns, src->name_of(src->ctx, edge[e].callee, name, sizeof(name)))) < 0)
				break;
			fprintf(f, "calls=%" PRIu64 " 0x%" PRIx64 "\n", edge[e].calls, edge[e].callee);
			edge_costs(&edge[e], v);
			put_costs(f, c[i].addr, v);
		}
	}
	if (!err) {
		fprintf(f, "\ntotals:");
		for (int k = 0; k < NEV; k++)
			fprintf(f, " %" PRIu64, total[k]);
		fputc('\n', f);
	}
	struct names *all[] = {&obs, &fns, &fls};
	for (int t = 0; t < 3; t++) {
		for (size_t i = 0; i < all[t]->n; i++)
			free(all[t]->s[i]);
		free(all[t]->s);
	}
	free(c);
	return err < 0 ? err : ferror(f) ? PMUSIM_ERR_IO : 0;
}
