/* Region candidates of a hot control-flow graph (profiler/region_graph.h):
 * components by union-find, terminal edges to one pseudo-entry and one
 * pseudo-exit, dominators and post-dominators (profiler/flowgraph.h), and the
 * loop nest (profiler/loop_nest.h) of each region's graph. */
#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "profiler/flowgraph.h"
#include "profiler/loop_nest.h"
#include "profiler/region_graph.h"
#include "profiler/size_list.h"

/* One region's graph: node 0 is the pseudo-entry, node 1 + i is block[i] of
 * the region, node nb + 1 the pseudo-exit. Node order is block order, so a
 * sorted list of nodes maps to a sorted list of blocks. */
struct rwork {
	const struct rcfg *g;
	struct rgraph_region *r;
	const size_t *gpos; /* gpos[b]: block b's position in its region */
	size_t nb, n;
	struct size_list from, to; /* the edges of the graph */
	struct fg_csr succ, pred;
	size_t *idom, *ipdom, *pre, *last, *stack, *comp;
	uint8_t *mark;
};

static int add_edge(struct rwork *w, size_t u, size_t v)
{
	return size_list_push(&w->from, u) || size_list_push(&w->to, v) ? PMUSIM_ERR_NOMEM : 0;
}

static int rebuild(struct rwork *w)
{
	fg_csr_fini(&w->succ);
	fg_csr_fini(&w->pred);
	if (fg_csr_build(&w->succ, w->n, w->from.v, w->to.v, w->from.n) ||
	    fg_csr_build(&w->pred, w->n, w->to.v, w->from.v, w->from.n))
		return PMUSIM_ERR_NOMEM;
	return 0;
}

/* Of the block nodes not seen, one per source component in c (no edge into it
 * from another unseen node): its lowest node, or its highest. */
static int pick_sources(struct rwork *w, const struct fg_csr *c, int highest, struct size_list *out)
{
	size_t ncomp, *pick = NULL;
	uint8_t *member = calloc(w->n, 1), *has_in = NULL;
	int err = PMUSIM_ERR_NOMEM;
	if (!member)
		goto out;
	for (size_t v = 1; v <= w->nb; v++)
		member[v] = !w->mark[v];
	if (fg_scc(c, member, NULL, w->comp, &ncomp))
		goto out;
	has_in = calloc(ncomp + 1, 1);
	pick = malloc((ncomp + 1) * sizeof(*pick));
	if (!has_in || !pick)
		goto out;
	for (size_t i = 0; i < ncomp; i++)
		pick[i] = SIZE_MAX;
	for (size_t u = 1; u <= w->nb; u++) {
		if (!member[u])
			continue;
		size_t cu = w->comp[u];
		if (pick[cu] == SIZE_MAX || highest)
			pick[cu] = u; /* nodes ascend: first is lowest, last highest */
		for (size_t k = c->off[u]; k < c->off[u + 1]; k++)
			if (member[c->adj[k]] && w->comp[c->adj[k]] != cu)
				has_in[w->comp[c->adj[k]]] = 1;
	}
	for (size_t v = 1; v <= w->nb; v++)
		if (member[v] && !has_in[w->comp[v]] && pick[w->comp[v]] == v && size_list_push(out, v))
			goto out;
	err = 0;
out:
	free(member);
	free(has_in);
	free(pick);
	return err;
}

/* Entries: blocks without predecessor, then one per cycle still unreached. */
static int add_entries(struct rwork *w, struct size_list *entry, struct size_list *cycle)
{
	memset(w->mark, 0, w->n);
	for (size_t v = 1; v <= w->nb; v++)
		if (w->pred.off[v] == w->pred.off[v + 1]) {
			if (size_list_push(entry, v))
				return PMUSIM_ERR_NOMEM;
			fg_reach(&w->succ, v, w->mark, w->stack);
		}
	if (pick_sources(w, &w->succ, 0, cycle))
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < cycle->n; i++)
		if (size_list_push(entry, cycle->v[i]))
			return PMUSIM_ERR_NOMEM;
	size_list_sort(entry->v, entry->n);
	for (size_t i = 0; i < entry->n; i++)
		if (add_edge(w, 0, entry->v[i]))
			return PMUSIM_ERR_NOMEM;
	return 0;
}

/* Exit blocks: where control may leave, then one per sink cycle that cannot
 * reach one (a sink component of the graph is a source one of its reverse). */
static int add_exits(struct rwork *w, struct size_list *exit_block, struct size_list *sink)
{
	memset(w->mark, 0, w->n);
	for (size_t v = 1; v <= w->nb; v++) {
		const struct rcfg_block *b = &w->g->block[w->r->block[v - 1]];
		int leaves = (b->flags & RCFG_EXIT) || w->succ.off[v] == w->succ.off[v + 1];
		for (size_t k = 0; k < b->nedge; k++)
			leaves |= w->g->edge[b->first_edge + k].out != RCFG_IN;
		if (leaves) {
			if (size_list_push(exit_block, v))
				return PMUSIM_ERR_NOMEM;
			fg_reach(&w->pred, v, w->mark, w->stack);
		}
	}
	if (pick_sources(w, &w->pred, 1, sink))
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < sink->n; i++)
		if (size_list_push(exit_block, sink->v[i]))
			return PMUSIM_ERR_NOMEM;
	size_list_sort(exit_block->v, exit_block->n);
	for (size_t i = 0; i < exit_block->n; i++)
		if (add_edge(w, exit_block->v[i], w->nb + 1))
			return PMUSIM_ERR_NOMEM;
	return 0;
}

/* Moves the nodes of s into a block list *out (sorted when s is). */
static int to_blocks(const struct rwork *w, struct size_list *s, size_t **out, size_t *n)
{
	*out = malloc((s->n ? s->n : 1) * sizeof(size_t));
	if (!*out)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < s->n; i++)
		(*out)[i] = w->r->block[s->v[i] - 1];
	*n = s->n;
	return 0;
}

/* The loops of the blocks (nodes 1 .. nb), their node lists turned into
 * block lists in place (the mapping keeps them sorted) and handed over. */
static int loops_out(struct rwork *w)
{
	struct loop_nest_loop *ln;
	size_t n;
	if (loop_nest_find(&w->succ, &w->pred, 1, w->nb, w->pre, w->last, &ln, &n))
		return PMUSIM_ERR_NOMEM;
	w->r->loop = calloc(n + 1, sizeof(*w->r->loop));
	if (!w->r->loop) {
		loop_nest_free(ln, n);
		return PMUSIM_ERR_NOMEM;
	}
	w->r->nloop = n;
	for (size_t i = 0; i < n; i++) {
		struct rgraph_loop *o = &w->r->loop[i];
		for (size_t k = 0; k < ln[i].nnode; k++)
			ln[i].node[k] = w->r->block[ln[i].node[k] - 1];
		for (size_t k = 0; k < ln[i].nentry; k++)
			ln[i].entry[k] = w->r->block[ln[i].entry[k] - 1];
		o->header = w->r->block[ln[i].header - 1];
		o->block = ln[i].node, o->nblock = ln[i].nnode;
		o->entry = ln[i].entry, o->nentry = ln[i].nentry;
		o->parent = ln[i].parent == LOOP_NEST_NONE ? RGRAPH_NONE : ln[i].parent;
		o->depth = ln[i].depth;
		o->irreducible = ln[i].irreducible;
	}
	free(ln); /* its lists now belong to the region */
	return 0;
}

static int trees_out(struct rwork *w)
{
	struct rgraph_region *r = w->r;
	r->idom = malloc(w->nb * sizeof(size_t));
	r->ipdom = malloc(w->nb * sizeof(size_t));
	if (!r->idom || !r->ipdom)
		return PMUSIM_ERR_NOMEM;
	for (size_t v = 1; v <= w->nb; v++) {
		size_t d = w->idom[v], p = w->ipdom[v];
		assert(d != SIZE_MAX && p != SIZE_MAX && d <= w->nb && p >= 1);
		r->idom[v - 1] = d == 0 ? RGRAPH_ENTRY : r->block[d - 1];
		r->ipdom[v - 1] = p == w->nb + 1 ? RGRAPH_EXIT : r->block[p - 1];
	}
	return 0;
}

static int terminals(struct rwork *w)
{
	struct rgraph_region *r = w->r;
	struct size_list entry = {0}, cycle = {0}, exit_block = {0}, sink = {0};
	int err = PMUSIM_ERR_NOMEM;
	if (add_entries(w, &entry, &cycle) || add_exits(w, &exit_block, &sink) || rebuild(w) ||
	    to_blocks(w, &entry, &r->entry, &r->nentry) ||
	    to_blocks(w, &cycle, &r->cycle_entry, &r->ncycle_entry) ||
	    to_blocks(w, &exit_block, &r->exit_block, &r->nexit_block) ||
	    to_blocks(w, &sink, &r->sink, &r->nsink))
		goto out;
	err = 0;
out:
	free(entry.v);
	free(cycle.v);
	free(exit_block.v);
	free(sink.v);
	return err;
}

/* The region's own edges: in-graph ones between its blocks, and its exits. */
static int region_edges(struct rwork *w)
{
	struct size_list exit = {0};
	for (size_t i = 0; i < w->nb; i++) {
		const struct rcfg_block *b = &w->g->block[w->r->block[i]];
		w->r->weight += b->weight;
		for (size_t k = b->first_edge; k < b->first_edge + b->nedge; k++) {
			const struct rcfg_edge *e = &w->g->edge[k];
			if ((e->out != RCFG_IN && size_list_push(&exit, k)) ||
			    (e->out == RCFG_IN && add_edge(w, i + 1, w->gpos[e->to] + 1))) {
				free(exit.v);
				return PMUSIM_ERR_NOMEM;
			}
		}
	}
	size_list_sort(exit.v, exit.n);
	w->r->exit = exit.v ? exit.v : malloc(sizeof(size_t));
	w->r->nexit = exit.n;
	return w->r->exit ? rebuild(w) : PMUSIM_ERR_NOMEM;
}

static int analyse(const struct rcfg *g, const size_t *gpos, struct rgraph_region *r)
{
	struct rwork w = {.g = g, .r = r, .gpos = gpos, .nb = r->nblock, .n = r->nblock + 2};
	size_t sz = w.n * sizeof(size_t);
	int err = PMUSIM_ERR_NOMEM;
	w.idom = malloc(sz), w.ipdom = malloc(sz), w.pre = malloc(sz), w.last = malloc(sz);
	w.stack = malloc(sz), w.comp = malloc(sz), w.mark = calloc(w.n, 1);
	if (!w.idom || !w.ipdom || !w.pre || !w.last || !w.stack || !w.comp || !w.mark)
		goto out;
	if (region_edges(&w) || terminals(&w) || fg_dominators(&w.succ, &w.pred, 0, w.idom) ||
	    fg_dominators(&w.pred, &w.succ, w.nb + 1, w.ipdom) ||
	    fg_dom_intervals(w.n, w.idom, 0, w.pre, w.last) || trees_out(&w) || loops_out(&w))
		goto out;
	err = 0;
out:
	fg_csr_fini(&w.succ);
	fg_csr_fini(&w.pred);
	free(w.from.v), free(w.to.v), free(w.idom), free(w.ipdom), free(w.pre), free(w.last);
	free(w.stack), free(w.comp), free(w.mark);
	return err;
}

static int check_input(const struct rcfg *g, char *msg, size_t msglen)
{
	for (size_t i = 0; i < g->nblock; i++) {
		const struct rcfg_block *b = &g->block[i];
		if (b->first_edge > g->nedge || b->nedge > g->nedge - b->first_edge)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "rgraph: block %zu's edges out of bounds", i);
		for (size_t k = b->first_edge; k < b->first_edge + b->nedge; k++) {
			const struct rcfg_edge *e = &g->edge[k];
			if (e->from != i)
				return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
				                   "rgraph: edge %zu is block %zu's, from %zu", k,
				                   i, e->from);
			if (e->out == RCFG_IN && e->to >= g->nblock)
				return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
				                   "rgraph: edge %zu goes to no block", k);
		}
	}
	return 0;
}

static size_t uf_find(size_t *up, size_t x)
{
	while (up[x] != x) {
		up[x] = up[up[x]]; /* path halving */
		x = up[x];
	}
	return x;
}

/* The components, numbered by lowest block; gpos[b]: b's place in its own. */
static int partition(const struct rcfg *g, struct rgraph *rg, size_t *gpos)
{
	size_t *up = malloc((g->nblock + 1) * sizeof(size_t));
	size_t *id = malloc((g->nblock + 1) * sizeof(size_t));
	int err = PMUSIM_ERR_NOMEM;
	if (!up || !id)
		goto out;
	for (size_t i = 0; i < g->nblock; i++)
		up[i] = i, id[i] = RGRAPH_NONE;
	for (size_t i = 0; i < g->nblock; i++)
		for (size_t k = 0; k < g->block[i].nedge; k++) {
			const struct rcfg_edge *e = &g->edge[g->block[i].first_edge + k];
			if (e->out == RCFG_IN)
				up[uf_find(up, i)] = uf_find(up, e->to);
		}
	for (size_t i = 0; i < g->nblock; i++) {
		size_t root = uf_find(up, i);
		if (id[root] == RGRAPH_NONE)
			id[root] = rg->nregion++;
	}
	rg->region = calloc(rg->nregion + 1, sizeof(*rg->region));
	if (!rg->region)
		goto out;
	for (size_t i = 0; i < g->nblock; i++)
		rg->region[id[uf_find(up, i)]].nblock++;
	for (size_t c = 0; c < rg->nregion; c++) {
		rg->region[c].block = malloc(rg->region[c].nblock * sizeof(size_t));
		if (!rg->region[c].block)
			goto out;
		rg->region[c].nblock = 0;
	}
	for (size_t i = 0; i < g->nblock; i++) {
		struct rgraph_region *r = &rg->region[id[uf_find(up, i)]];
		gpos[i] = r->nblock;
		r->block[r->nblock++] = i;
	}
	err = 0;
out:
	free(up);
	free(id);
	return err;
}

int rgraph_build(const struct rcfg *g, struct rgraph **out, char *msg, size_t msglen)
{
	*out = NULL;
	int err = check_input(g, msg, msglen);
	if (err)
		return err;
	struct rgraph *rg = calloc(1, sizeof(*rg));
	size_t *gpos = malloc((g->nblock + 1) * sizeof(size_t));
	err = PMUSIM_ERR_NOMEM;
	if (!rg || !gpos || partition(g, rg, gpos))
		goto fail;
	for (size_t c = 0; c < rg->nregion; c++)
		if (analyse(g, gpos, &rg->region[c]))
			goto fail;
	free(gpos);
	*out = rg;
	return 0;
fail:
	free(gpos);
	rgraph_free(rg);
	return pmusim_fail(msg, msglen, err, "rgraph: out of memory");
}

static void region_fini(struct rgraph_region *r)
{
	for (size_t i = 0; i < r->nloop; i++) {
		free(r->loop[i].block);
		free(r->loop[i].entry);
	}
	free(r->loop);
	free(r->block);
	free(r->entry);
	free(r->cycle_entry);
	free(r->exit);
	free(r->exit_block);
	free(r->sink);
	free(r->idom);
	free(r->ipdom);
}

void rgraph_free(struct rgraph *rg)
{
	if (!rg)
		return;
	for (size_t c = 0; c < rg->nregion; c++)
		region_fini(&rg->region[c]);
	free(rg->region);
	free(rg);
}

size_t rgraph_pos(const struct rgraph_region *r, size_t b)
{
	const size_t *p = arrays_find(&b, r->block, r->nblock, sizeof(size_t), size_list_cmp);
	return p ? (size_t)(p - r->block) : RGRAPH_NONE;
}
