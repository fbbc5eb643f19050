/* Graph algorithms on a compressed graph (profiler/flowgraph.h):
 * Tarjan's strongly connected components (iterative), and immediate dominators
 * by the iterative algorithm of Cooper, Harvey and Kennedy, "A Simple, Fast
 * Dominance Algorithm" (Software Practice and Experience, 2001): idoms refined
 * in reverse postorder until they settle, two fingers walking up the tree by
 * postorder number to intersect the dominators of two predecessors. */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>

#include "common/err.h"
#include "profiler/flowgraph.h"

int fg_csr_build(struct fg_csr *c, size_t n, const size_t *from, const size_t *to, size_t m)
{
	c->n = n;
	c->off = calloc(n + 1, sizeof(*c->off));
	c->adj = malloc((m ? m : 1) * sizeof(*c->adj));
	if (!c->off || !c->adj)
		return PMUSIM_ERR_NOMEM;
	for (size_t k = 0; k < m; k++)
		c->off[from[k] + 1]++;
	for (size_t v = 0; v < n; v++)
		c->off[v + 1] += c->off[v];
	size_t *fill = malloc((n ? n : 1) * sizeof(*fill));
	if (!fill)
		return PMUSIM_ERR_NOMEM;
	for (size_t v = 0; v < n; v++)
		fill[v] = c->off[v];
	/* a counting sort keeps each node's edges in input order: deterministic */
	for (size_t k = 0; k < m; k++)
		c->adj[fill[from[k]]++] = to[k];
	free(fill);
	return 0;
}

void fg_csr_fini(struct fg_csr *c)
{
	free(c->off);
	free(c->adj);
	c->off = c->adj = NULL;
}

void fg_reach(const struct fg_csr *c, size_t root, uint8_t *seen, size_t *stack)
{
	size_t top = 0;
	if (seen[root])
		return;
	seen[root] = 1;
	stack[top++] = root;
	while (top) {
		size_t v = stack[--top];
		for (size_t k = c->off[v]; k < c->off[v + 1]; k++)
			if (!seen[c->adj[k]]) {
				seen[c->adj[k]] = 1;
				stack[top++] = c->adj[k];
			}
	}
}

struct tarjan {
	size_t *index, *low, *it, *stack, *calls;
	uint8_t *on;
	size_t next, top, ncall, ncomp;
};

static void tarjan_open(struct tarjan *t, const struct fg_csr *c, size_t v)
{
	t->index[v] = t->low[v] = t->next++;
	t->it[v] = c->off[v];
	t->stack[t->top++] = v;
	t->on[v] = 1;
	t->calls[t->ncall++] = v;
}

/* v's edges are all seen: it closes a component when nothing below reaches
 * above it. */
static void tarjan_close(struct tarjan *t, size_t v, size_t *comp)
{
	t->ncall--;
	if (t->low[v] == t->index[v]) {
		size_t w;
		do {
			w = t->stack[--t->top];
			t->on[w] = 0;
			comp[w] = t->ncomp;
		} while (w != v);
		t->ncomp++;
	}
	if (t->ncall) {
		size_t u = t->calls[t->ncall - 1];
		if (t->low[v] < t->low[u])
			t->low[u] = t->low[v];
	}
}

int fg_scc(const struct fg_csr *c, const uint8_t *member, const uint8_t *skip, size_t *comp,
           size_t *ncomp)
{
	size_t n = c->n, sz = (n ? n : 1) * sizeof(size_t);
	struct tarjan t = {.index = malloc(sz),
	                   .low = malloc(sz),
	                   .it = malloc(sz),
	                   .stack = malloc(sz),
	                   .calls = malloc(sz),
	                   .on = calloc(n + 1, 1)};
	int err = PMUSIM_ERR_NOMEM;
	if (!t.index || !t.low || !t.it || !t.stack || !t.calls || !t.on)
		goto out;
	for (size_t v = 0; v < n; v++) {
		t.index[v] = SIZE_MAX;
		comp[v] = SIZE_MAX;
	}
	for (size_t r = 0; r < n; r++) {
		if (!member[r] || t.index[r] != SIZE_MAX)
			continue;
		tarjan_open(&t, c, r);
		while (t.ncall) {
			size_t v = t.calls[t.ncall - 1];
			if (t.it[v] == c->off[v + 1]) {
				tarjan_close(&t, v, comp);
				continue;
			}
			size_t k = t.it[v]++, w = c->adj[k];
			if ((skip && skip[k]) || !member[w])
				continue;
			if (t.index[w] == SIZE_MAX)
				tarjan_open(&t, c, w);
			else if (t.on[w] && t.index[w] < t.low[v])
				t.low[v] = t.index[w];
		}
	}
	*ncomp = t.ncomp;
	err = 0;
out:
	free(t.index);
	free(t.low);
	free(t.it);
	free(t.stack);
	free(t.calls);
	free(t.on);
	return err;
}

/* Postorder of the nodes reached from root: order[0 .. *nord], po[v] its number
 * (SIZE_MAX when not reached). */
static int postorder(const struct fg_csr *succ, size_t root, size_t *po, size_t *order,
                     size_t *nord)
{
	size_t n = succ->n, sz = (n ? n : 1) * sizeof(size_t), top = 0, k = 0;
	size_t *stack = malloc(sz), *it = malloc(sz);
	if (!stack || !it) {
		free(stack);
		free(it);
		return PMUSIM_ERR_NOMEM;
	}
	for (size_t v = 0; v < n; v++)
		po[v] = SIZE_MAX;
	/* SIZE_MAX - 1 marks a node on the DFS stack, not yet numbered */
	po[root] = SIZE_MAX - 1;
	stack[top++] = root;
	it[root] = succ->off[root];
	while (top) {
		size_t v = stack[top - 1];
		if (it[v] == succ->off[v + 1]) {
			top--;
			po[v] = k;
			order[k++] = v;
			continue;
		}
		size_t w = succ->adj[it[v]++];
		if (po[w] == SIZE_MAX) {
			po[w] = SIZE_MAX - 1;
			it[w] = succ->off[w];
			stack[top++] = w;
		}
	}
	*nord = k;
	free(stack);
	free(it);
	return 0;
}

/* The nearest common dominator of a and b: the finger with the lower postorder
 * number is deeper in the tree (or elsewhere) and climbs first. */
static size_t intersect(const size_t *idom, const size_t *po, size_t a, size_t b)
{
	while (a != b) {
		while (po[a] < po[b])
			a = idom[a];
		while (po[b] < po[a])
			b = idom[b];
	}
	return a;
}

int fg_dominators(const struct fg_csr *succ, const struct fg_csr *pred, size_t root, size_t *idom)
{
	size_t n = succ->n, sz = (n ? n : 1) * sizeof(size_t), nord;
	size_t *po = malloc(sz), *order = malloc(sz);
	int err = PMUSIM_ERR_NOMEM;
	if (!po || !order || postorder(succ, root, po, order, &nord))
		goto out;
	for (size_t v = 0; v < n; v++)
		idom[v] = SIZE_MAX;
	idom[root] = root;
	for (int changed = 1; changed;) {
		changed = 0;
		/* reverse postorder, the root (last in postorder) skipped */
		for (size_t i = nord - 1; i-- > 0;) {
			size_t v = order[i], nd = SIZE_MAX;
			for (size_t k = pred->off[v]; k < pred->off[v + 1]; k++) {
				size_t p = pred->adj[k];
				if (idom[p] == SIZE_MAX)
					continue; /* not processed yet, or not reached */
				nd = nd == SIZE_MAX ? p : intersect(idom, po, p, nd);
			}
			assert(nd != SIZE_MAX); /* some predecessor comes before in RPO */
			if (idom[v] != nd) {
				idom[v] = nd;
				changed = 1;
			}
		}
	}
	err = 0;
out:
	free(po);
	free(order);
	return err;
}

int fg_dom_intervals(size_t n, const size_t *idom, size_t root, size_t *pre, size_t *last)
{
	size_t *from = malloc((n ? n : 1) * sizeof(size_t)),
	       *to = malloc((n ? n : 1) * sizeof(size_t));
	size_t *stack = malloc((n ? n : 1) * sizeof(size_t)), m = 0, top = 0, k = 0;
	struct fg_csr kids = {0};
	int err = PMUSIM_ERR_NOMEM;
	if (!from || !to || !stack)
		goto out;
	for (size_t v = 0; v < n; v++) {
		pre[v] = last[v] = SIZE_MAX;
		if (v != root && idom[v] != SIZE_MAX) {
			from[m] = idom[v];
			to[m++] = v;
		}
	}
	if (fg_csr_build(&kids, n, from, to, m))
		goto out;
	/* preorder; a node's last is set once its subtree is numbered, when it
	 * comes back to the top of the stack */
	stack[top++] = root;
	while (top) {
		size_t v = stack[top - 1];
		if (pre[v] == SIZE_MAX) {
			pre[v] = k++;
			for (size_t j = kids.off[v + 1]; j-- > kids.off[v];)
				stack[top++] = kids.adj[j];
		} else {
			top--;
			last[v] = k - 1;
		}
	}
	err = 0;
out:
	fg_csr_fini(&kids);
	free(from);
	free(to);
	free(stack);
	return err;
}
