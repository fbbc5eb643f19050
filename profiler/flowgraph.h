/* Graph algorithms on a directed graph in compressed form (nodes 0 .. n-1, a
 * node's successors adj[off[v] .. off[v+1]]), for the region analyses of
 * profiler/region_graph.h: reachability, strongly connected components,
 * immediate dominators and a dominance test in constant time. Every function
 * returns 0 or PMUSIM_ERR_NOMEM; arrays passed in are the caller's. */
#ifndef PMUSIM_PROFILER_FLOWGRAPH_H
#define PMUSIM_PROFILER_FLOWGRAPH_H

#include <stddef.h>
#include <stdint.h>

struct fg_csr {
	size_t n;
	size_t *off; /* n + 1 entries */
	size_t *adj;
};

/* c from the m edges from[k] -> to[k] (each below n), each node's edges in
 * their order in from[]. Free with fg_csr_fini (also after a failure). */
int fg_csr_build(struct fg_csr *c, size_t n, const size_t *from, const size_t *to, size_t m);
void fg_csr_fini(struct fg_csr *c);

/* Sets seen[v] for every v reachable from root (root included), seen[] left as
 * it is elsewhere; nodes already seen are not gone through. stack: n entries. */
void fg_reach(const struct fg_csr *c, size_t root, uint8_t *seen, size_t *stack);

/* Strongly connected components of the nodes v with member[v], through the
 * edges between members whose slot k in adj has no skip[k] (skip NULL: none
 * skipped). comp[v]: its component (0 .. *ncomp-1, in reverse topological
 * order of the condensation), SIZE_MAX when v is no member. */
int fg_scc(const struct fg_csr *c, const uint8_t *member, const uint8_t *skip, size_t *comp,
           size_t *ncomp);

/* Immediate dominators from root: idom[v] for every v reachable from root
 * (idom[root] = root), SIZE_MAX for the others. pred is succ reversed. */
int fg_dominators(const struct fg_csr *succ, const struct fg_csr *pred, size_t root, size_t *idom);

/* Preorder numbers of the tree idom (as fg_dominators gives it): pre[v], and
 * last[v] the highest preorder number in v's subtree (SIZE_MAX for nodes not in
 * the tree), so that a dominates b iff pre[a] <= pre[b] <= last[a]. */
int fg_dom_intervals(size_t n, const size_t *idom, size_t root, size_t *pre, size_t *last);

#endif
