/* Pettis–Hansen greedy chains (PLDI 1990, "Profile guided code positioning",
 * 4.1 basic block positioning): join chains along the hottest links first,
 * tail to head only, then place the chains by heat. */
#include "profiler/dbr_layout.h"

#include <assert.h>
#include <stdlib.h>

#include "common/arrays.h"
#include "common/err.h"

#define NONE UINT32_MAX

static int link_cmp(const void *a, const void *b)
{
	const struct dbr_link *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* Union-find root: the representative of the chain holding b. */
static uint32_t chain_of(uint32_t *uf, uint32_t b)
{
	while (uf[b] != b) {
		uf[b] = uf[uf[b]];
		b = uf[b];
	}
	return b;
}

struct chain {
	uint32_t head;
	double heat;
};

static int chain_cmp(const void *a, const void *b)
{
	const struct chain *x = a, *y = b;
	if (x->heat != y->heat)
		return x->heat > y->heat ? -1 : 1;
	return x->head < y->head ? -1 : x->head > y->head;
}

/* Joins along the links: next[]/prev[] become the chains' fall-through order. */
static void join(uint32_t n, struct dbr_link *link, size_t nlink, uint32_t *next, uint32_t *prev,
                 uint32_t *uf)
{
	for (uint32_t b = 0; b < n; b++)
		next[b] = prev[b] = NONE, uf[b] = b;
	arrays_sort(link, nlink, sizeof(*link), link_cmp);
	for (size_t k = 0; k < nlink; k++) {
		uint32_t a = link[k].from, z = link[k].to;
		if (a >= n || z >= n || next[a] != NONE || prev[z] != NONE)
			continue;
		uint32_t ra = chain_of(uf, a), rz = chain_of(uf, z);
		if (ra == rz) /* z heads a's own chain: joining would close a cycle */
			continue;
		next[a] = z, prev[z] = a, uf[rz] = ra;
	}
}

int dbr_layout_chains(uint32_t n, const double *heat, struct dbr_link *link, size_t nlink,
                      uint32_t *order)
{
	uint32_t *next = malloc((n + 1) * sizeof(*next)), *prev = malloc((n + 1) * sizeof(*prev));
	uint32_t *uf = malloc((n + 1) * sizeof(*uf));
	struct chain *ch = malloc((n + 1) * sizeof(*ch));
	if (!next || !prev || !uf || !ch) {
		free(next), free(prev), free(uf), free(ch);
		return PMUSIM_ERR_NOMEM;
	}
	join(n, link, nlink, next, prev, uf);
	uint32_t nch = 0;
	for (uint32_t b = 0; b < n; b++) {
		if (prev[b] != NONE)
			continue;
		struct chain c = {b, heat[b]};
		for (uint32_t x = next[b]; x != NONE; x = next[x])
			if (heat[x] > c.heat)
				c.heat = heat[x];
		ch[nch++] = c;
	}
	arrays_sort(ch, nch, sizeof(*ch), chain_cmp);
	uint32_t k = 0;
	for (uint32_t i = 0; i < nch; i++)
		for (uint32_t x = ch[i].head; x != NONE; x = next[x])
			order[k++] = x;
	assert(k == n); /* no cycles: every block is on exactly one chain */
	free(next), free(prev), free(uf), free(ch);
	return 0;
}
