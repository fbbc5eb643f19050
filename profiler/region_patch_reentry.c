/* Re-entry points at loop entries (region_patch.h). */
#include <stdlib.h>

#include "common/arrays.h"
#include "common/err.h"
#include "profiler/region_patch.h"

#define NO_INSN UINT32_MAX

/* The first instruction of block b that may hold a point, or NO_INSN. */
static uint32_t first_qualifying(const struct rcfg *g, const struct rflow *flow, size_t b)
{
	for (uint32_t i = 0; i < g->block[b].ninsns; i++)
		if (rpatch_insn_why(g, flow, b, i) == RPATCH_WHY_OK)
			return i;
	return NO_INSN;
}

/* A point and its index before the sort, for the renumbering. */
struct ranked {
	struct rpatch_point p;
	size_t old;
};

static int cmp_ranked(const void *a, const void *b)
{
	const struct ranked *x = a, *y = b;
	return (x->p.addr > y->p.addr) - (x->p.addr < y->p.addr);
}

int rpatch_add_reentry(const struct rcfg *g, const struct rgraph_region *r,
                       const struct rflow *flow, struct rpatch *p, char *msg, size_t msglen)
{
	size_t cap = p->npoint;
	for (size_t l = 0; l < r->nloop; l++)
		cap += r->loop[l].nentry;
	struct ranked *rk = calloc(cap + 1, sizeof(*rk));
	size_t *newix = calloc(cap + 1, sizeof(*newix));
	struct rpatch_point *pt = calloc(cap + 1, sizeof(*pt));
	if (!rk || !newix || !pt) {
		free(rk), free(newix), free(pt);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rpatch: out of memory");
	}
	size_t n = 0;
	for (; n < p->npoint; n++)
		rk[n] = (struct ranked){p->point[n], n};
	for (size_t l = 0; l < r->nloop && l < p->nloop; l++) {
		if (p->loop[l].status == RPATCH_UNCOVERED)
			continue;
		for (size_t k = 0; k < r->loop[l].nentry; k++) {
			size_t b = r->loop[l].entry[k];
			int known = 0;
			for (size_t j = 0; j < n && !known; j++)
				known = rk[j].p.block == b;
			uint32_t i = known ? NO_INSN : first_qualifying(g, flow, b);
			if (i == NO_INSN)
				continue;
			const struct rcfg_block *kb = &g->block[b];
			unsigned len = kb->off[i + 1] - kb->off[i];
			uint64_t addr = kb->start + kb->off[i];
			rk[n] = (struct ranked){{b, i, addr, (uint8_t)(len > UINT8_MAX ? UINT8_MAX : len),
			                         (uint8_t)rpatch_store_of(addr), 0, 1},
			                        n};
			n++;
		}
	}
	if (n)
		arrays_sort(rk, n, sizeof(*rk), cmp_ranked);
	for (size_t j = 0; j < n; j++) {
		pt[j] = rk[j].p;
		newix[rk[j].old] = j;
	}
	for (size_t l = 0; l < p->nloop; l++)
		if (p->loop[l].point)
			for (size_t k = 0; k < r->loop[l].nentry; k++)
				p->loop[l].point[k] = newix[p->loop[l].point[k]];
	free(p->point);
	p->point = pt;
	p->npoint = n;
	free(rk);
	free(newix);
	return 0;
}
