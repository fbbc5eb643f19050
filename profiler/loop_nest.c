/* Loop nest of a flow graph (profiler/loop_nest.h): natural loops of back
 * edges found by walking back from their sources (Aho, Lam, Sethi, Ullman,
 * "Compilers", 2nd ed., 9.6), irreducible cycles as the strongly connected
 * components left once the back edges are removed (ibid. 9.7). */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "profiler/loop_nest.h"
#include "profiler/size_list.h"

/* One loop while it is built, in nodes. */
struct lwork {
	size_t header;
	struct size_list body, entry;
	int irreducible;
};

/* The graph and the scratch the search shares. */
struct lnw {
	const struct fg_csr *succ, *pred;
	size_t lo, hi, n;
	const size_t *pre, *last;
	uint8_t *mark;
	size_t *stack, *comp;
	struct lwork *loop;
	size_t nloop;
};

static int is_node(const struct lnw *w, size_t v)
{
	return v >= w->lo && v <= w->hi;
}

static int dominates(const struct lnw *w, size_t a, size_t b)
{
	return w->pre[a] <= w->pre[b] && w->pre[b] <= w->last[a];
}

static struct lwork *new_loop(struct lnw *w, size_t header, int irreducible)
{
	struct lwork *l = realloc(w->loop, (w->nloop + 1) * sizeof(*l));
	if (!l)
		return NULL;
	w->loop = l;
	l = &w->loop[w->nloop++];
	memset(l, 0, sizeof(*l));
	l->header = header;
	l->irreducible = irreducible;
	return size_list_push(&l->entry, header) ? NULL : l;
}

/* Walks back from the sources of h's back edges, stopping at h; nat_of[h] is
 * the loop's index. mark[] is left clear. */
static int natural_loop(struct lnw *w, size_t h, size_t *nat_of)
{
	struct lwork *l = NULL;
	size_t top = 0;
	for (size_t k = w->pred->off[h]; k < w->pred->off[h + 1]; k++) {
		size_t s = w->pred->adj[k];
		if (!is_node(w, s) || !dominates(w, h, s))
			continue;
		if (!l) {
			if (!(l = new_loop(w, h, 0)) || size_list_push(&l->body, h))
				return PMUSIM_ERR_NOMEM;
			nat_of[h] = w->nloop - 1;
			w->mark[h] = 1;
		}
		if (!w->mark[s]) {
			w->mark[s] = 1;
			w->stack[top++] = s;
		}
		while (top) {
			size_t v = w->stack[--top];
			if (v != h && size_list_push(&l->body, v))
				return PMUSIM_ERR_NOMEM;
			for (size_t j = w->pred->off[v]; j < w->pred->off[v + 1]; j++) {
				size_t p = w->pred->adj[j];
				/* h dominates v: no path from the root (no block) avoids h */
				assert(is_node(w, p));
				if (!w->mark[p]) {
					w->mark[p] = 1;
					w->stack[top++] = p;
				}
			}
		}
	}
	if (!l)
		return 0;
	for (size_t i = 0; i < l->body.n; i++)
		w->mark[l->body.v[i]] = 0;
	size_list_sort(l->body.v, l->body.n);
	return 0;
}

/* One component of the graph without back edges (its nodes node[0 .. n]):
 * its body with the natural loops headed inside it, then its entries. */
static int irreducible_loop(struct lnw *w, const size_t *node, size_t n, const size_t *nat_of)
{
	struct size_list body = {0};
	struct lwork *l = NULL;
	int err = PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct size_list *nb = NULL;
		if (nat_of[node[i]] != SIZE_MAX)
			nb = &w->loop[nat_of[node[i]]].body;
		for (size_t k = 0; k < (nb ? nb->n : 1); k++) {
			size_t v = nb ? nb->v[k] : node[i];
			if (!w->mark[v] && size_list_push(&body, v))
				goto out;
			w->mark[v] = 1;
		}
	}
	size_list_sort(body.v, body.n);
	for (size_t i = 0; i < body.n; i++) {
		size_t v = body.v[i];
		int entered = 0;
		for (size_t k = w->pred->off[v]; k < w->pred->off[v + 1]; k++)
			entered |= !w->mark[w->pred->adj[k]];
		if (entered && !l && !(l = new_loop(w, v, 1)))
			goto out;
		if (entered && l->header != v && size_list_push(&l->entry, v))
			goto out;
	}
	assert(l); /* every block is reached from the pseudo-entry */
	for (size_t i = 0; i < body.n; i++)
		w->mark[body.v[i]] = 0;
	l->body = body;
	return 0;
out:
	for (size_t i = 0; i < body.n; i++)
		w->mark[body.v[i]] = 0;
	free(body.v);
	return err;
}

/* Groups the block nodes by component: node[start[c] .. start[c + 1]]. */
static int by_component(const struct lnw *w, size_t ncomp, size_t **start, size_t **node)
{
	*start = calloc(ncomp + 2, sizeof(size_t));
	*node = malloc(w->n * sizeof(size_t));
	if (!*start || !*node)
		return PMUSIM_ERR_NOMEM;
	for (size_t v = w->lo; v <= w->hi; v++)
		(*start)[w->comp[v] + 2]++;
	for (size_t c = 0; c < ncomp; c++)
		(*start)[c + 2] += (*start)[c + 1];
	for (size_t v = w->lo; v <= w->hi; v++)
		(*node)[(*start)[w->comp[v] + 1]++] = v;
	return 0;
}

static int find_loops(struct lnw *w)
{
	size_t *nat_of = malloc(w->n * sizeof(*nat_of)), ncomp, *start = NULL, *node = NULL;
	uint8_t *skip = calloc(w->succ->off[w->n] + 1, 1), *member = calloc(w->n, 1);
	int err = PMUSIM_ERR_NOMEM;
	if (!nat_of || !skip || !member)
		goto out;
	memset(w->mark, 0, w->n);
	for (size_t v = 0; v < w->n; v++)
		nat_of[v] = SIZE_MAX;
	for (size_t h = w->lo; h <= w->hi; h++)
		if (natural_loop(w, h, nat_of))
			goto out;
	for (size_t u = w->lo; u <= w->hi; u++) {
		member[u] = 1;
		for (size_t k = w->succ->off[u]; k < w->succ->off[u + 1]; k++)
			skip[k] = is_node(w, w->succ->adj[k]) && dominates(w, w->succ->adj[k], u);
	}
	if (fg_scc(w->succ, member, skip, w->comp, &ncomp) || by_component(w, ncomp, &start, &node))
		goto out;
	/* a self-loop is a back edge: only a cycle of two or more blocks stays */
	for (size_t c = 0; c < ncomp; c++)
		if (start[c + 1] - start[c] > 1 &&
		    irreducible_loop(w, node + start[c], start[c + 1] - start[c], nat_of))
			goto out;
	err = 0;
out:
	free(nat_of);
	free(skip);
	free(member);
	free(start);
	free(node);
	return err;
}

static int cmp_loop_out(const void *a, const void *b)
{
	const struct lwork *x = a, *y = b;
	if (x->header != y->header)
		return (x->header > y->header) - (x->header < y->header);
	return (x->body.n < y->body.n) - (x->body.n > y->body.n);
}

/* Parents and depths, loops taken largest first: each block's innermost loop
 * so far is then the smallest loop holding every loop still to come that
 * holds the block. */
static int nest(struct lnw *w, struct loop_nest_loop *out)
{
	size_t *by_size = malloc((w->nloop + 1) * sizeof(size_t));
	size_t *inner = malloc(w->n * sizeof(size_t));
	if (!by_size || !inner) {
		free(by_size);
		free(inner);
		return PMUSIM_ERR_NOMEM;
	}
	for (size_t i = 0; i < w->nloop; i++) {
		/* insertion by (size descending, index): loops are few */
		size_t j = i;
		for (; j > 0 && w->loop[by_size[j - 1]].body.n < w->loop[i].body.n; j--)
			by_size[j] = by_size[j - 1];
		by_size[j] = i;
	}
	for (size_t v = 0; v < w->n; v++)
		inner[v] = LOOP_NEST_NONE;
	for (size_t i = 0; i < w->nloop; i++) {
		size_t x = by_size[i];
		const struct lwork *l = &w->loop[x];
		struct loop_nest_loop *o = &out[x];
		o->parent = inner[l->header];
		o->depth = o->parent == LOOP_NEST_NONE ? 1 : out[o->parent].depth + 1;
		for (size_t k = 0; k < l->body.n; k++) {
			/* loops nest or are apart: each block of x has x's parent innermost */
			assert(inner[l->body.v[k]] == o->parent);
			inner[l->body.v[k]] = x;
		}
	}
	free(by_size);
	free(inner);
	return 0;
}

/* The loops found, sorted, nested, and handed over as out's lists. */
static int loops_out(struct lnw *w, struct loop_nest_loop **out)
{
	if (w->nloop > 1)
		arrays_sort(w->loop, w->nloop, sizeof(*w->loop), cmp_loop_out);
	*out = calloc(w->nloop + 1, sizeof(**out));
	if (!*out || nest(w, *out))
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < w->nloop; i++) {
		struct lwork *l = &w->loop[i];
		struct loop_nest_loop *o = &(*out)[i];
		size_list_sort(l->entry.v, l->entry.n);
		o->header = l->header;
		o->irreducible = l->irreducible;
		o->node = l->body.v, o->nnode = l->body.n;
		o->entry = l->entry.v, o->nentry = l->entry.n;
		l->body.v = l->entry.v = NULL;
	}
	return 0;
}

int loop_nest_find(const struct fg_csr *succ, const struct fg_csr *pred, size_t lo, size_t hi,
                   const size_t *pre, const size_t *last, struct loop_nest_loop **out,
                   size_t *nloop)
{
	struct lnw w = {
	    .succ = succ, .pred = pred, .lo = lo, .hi = hi, .n = succ->n, .pre = pre, .last = last};
	int err = PMUSIM_ERR_NOMEM;
	*out = NULL;
	*nloop = 0;
	w.mark = calloc(w.n + 1, 1);
	w.stack = malloc((w.n + 1) * sizeof(size_t));
	w.comp = malloc((w.n + 1) * sizeof(size_t));
	if (!w.mark || !w.stack || !w.comp || find_loops(&w) || loops_out(&w, out))
		goto out;
	*nloop = w.nloop;
	err = 0;
out:
	if (err) {
		free(*out);
		*out = NULL;
	}
	for (size_t i = 0; i < w.nloop; i++) {
		free(w.loop[i].body.v);
		free(w.loop[i].entry.v);
	}
	free(w.loop);
	free(w.mark);
	free(w.stack);
	free(w.comp);
	return err;
}

void loop_nest_free(struct loop_nest_loop *loop, size_t nloop)
{
	if (!loop)
		return;
	for (size_t i = 0; i < nloop; i++) {
		free(loop[i].node);
		free(loop[i].entry);
	}
	free(loop);
}
