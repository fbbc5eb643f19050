/* Edge map: open addressing on (from, to), linear probing (Knuth vol. 3, 6.4). */
#include "profiler/edges.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"

struct edges {
	struct edge *slot; /* w < 0: empty */
	size_t cap, n;
	struct edge *sorted;
	int dirty;
};

static size_t hash(uint64_t from, uint64_t to, size_t cap)
{
	uint64_t h = from * 0x9e3779b97f4a7c15ULL ^ (to + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
	return (size_t)(h ^ (h >> 29)) & (cap - 1);
}

static int grow(struct edges *e)
{
	size_t cap = e->cap ? 2 * e->cap : 1024;
	struct edge *s = malloc(cap * sizeof(*s));
	if (!s)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < cap; i++)
		s[i].w = -1;
	for (size_t i = 0; i < e->cap; i++) {
		if (e->slot[i].w < 0)
			continue;
		size_t h = hash(e->slot[i].from, e->slot[i].to, cap);
		while (s[h].w >= 0)
			h = (h + 1) & (cap - 1);
		s[h] = e->slot[i];
	}
	free(e->slot);
	e->slot = s;
	e->cap = cap;
	return 0;
}

struct edges *edges_new(void)
{
	struct edges *e = calloc(1, sizeof(*e));
	if (e && grow(e) < 0) {
		free(e);
		return NULL;
	}
	return e;
}

void edges_free(struct edges *e)
{
	if (!e)
		return;
	free(e->slot);
	free(e->sorted);
	free(e);
}

static struct edge *find(const struct edges *e, uint64_t from, uint64_t to)
{
	size_t h = hash(from, to, e->cap);
	while (e->slot[h].w >= 0) {
		if (e->slot[h].from == from && e->slot[h].to == to)
			return &e->slot[h];
		h = (h + 1) & (e->cap - 1);
	}
	return &e->slot[h];
}

int edges_add(struct edges *e, uint64_t from, uint64_t to, int kind, int taken, double w)
{
	if (2 * (e->n + 1) > e->cap && grow(e) < 0)
		return PMUSIM_ERR_NOMEM;
	struct edge *s = find(e, from, to);
	if (s->w < 0) {
		*s = (struct edge){from, to, 0, (uint8_t)kind, (uint8_t)(taken != 0)};
		e->n++;
	}
	s->w += w;
	e->dirty = 1;
	return 0;
}

double edges_weight(const struct edges *e, uint64_t from, uint64_t to)
{
	const struct edge *s = find(e, from, to);
	return s->w < 0 ? 0 : s->w;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

const struct edge *edges_sorted(struct edges *e, size_t *n)
{
	if (e->dirty || !e->sorted) {
		struct edge *s = realloc(e->sorted, (e->n + 1) * sizeof(*s));
		if (!s) {
			*n = 0;
			return NULL;
		}
		size_t k = 0;
		for (size_t i = 0; i < e->cap; i++)
			if (e->slot[i].w >= 0)
				s[k++] = e->slot[i];
		arrays_sort(s, k, sizeof(*s), cmp_edge);
		e->sorted = s;
		e->dirty = 0;
	}
	*n = e->n;
	return e->sorted;
}
