/* The loop nest of a flow graph (profiler/flowgraph.h) whose dominator tree is
 * known, for profiler/region_graph.h. The graph's nodes lo .. hi are its
 * blocks; the others (a pseudo-entry, a pseudo-exit) must lie on no cycle.
 *
 * An edge s -> h between blocks whose target dominates its source is a back
 * edge; the natural loop of header h is h and every block that reaches the
 * source of one of h's back edges without passing through h (one loop per
 * header, self-loops included). Cycles with no dominating header survive the
 * removal of back edges (a graph is reducible iff none does: Aho, Lam, Sethi,
 * Ullman, "Compilers", 2nd ed., 9.6-9.7); each strongly connected component of
 * two or more blocks of the graph without back edges is a loop flagged
 * irreducible, of that component's blocks and those of the natural loops
 * headed inside it. A loop's entries are its blocks with a predecessor outside
 * it (a natural loop's: its header; an irreducible loop has two or more), an
 * irreducible loop's header its lowest entry. Loops nest or are apart: a
 * loop's parent is the smallest loop holding it, its depth 1 + its parent's
 * (1 when outermost). */
#ifndef PMUSIM_PROFILER_LOOP_NEST_H
#define PMUSIM_PROFILER_LOOP_NEST_H

#include <stddef.h>

#include "profiler/flowgraph.h"

#define LOOP_NEST_NONE ((size_t)-1) /* no parent */

struct loop_nest_loop {
	size_t header;
	size_t *node; /* its blocks, sorted, header included */
	size_t nnode;
	size_t *entry; /* sorted */
	size_t nentry;
	size_t parent; /* index in the loop array, LOOP_NEST_NONE when outermost */
	unsigned depth;
	int irreducible;
};

/* The loops of the graph succ (pred its reverse) over blocks lo .. hi, given
 * its dominator tree's intervals pre/last (fg_dom_intervals). 0 with *out set
 * to *nloop loops sorted by (header, outer first), to free with
 * loop_nest_free; or PMUSIM_ERR_NOMEM. */
int loop_nest_find(const struct fg_csr *succ, const struct fg_csr *pred, size_t lo, size_t hi,
                   const size_t *pre, const size_t *last, struct loop_nest_loop **out,
                   size_t *nloop);

void loop_nest_free(struct loop_nest_loop *loop, size_t nloop);

#endif
