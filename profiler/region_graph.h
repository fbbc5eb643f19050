/* Region candidates of a hot control-flow graph (profiler/region_cfg.h), the
 * second stage of choosing super-regions for a binary rewriter: the graph cut
 * into its connected parts, each given one pseudo-entry and one pseudo-exit so
 * that compiler analyses apply, with its dominator and post-dominator trees and
 * its loop nest.
 *
 * Regions. Two blocks are in one region when an in-graph edge (out RCFG_IN)
 * joins them, in either direction; call-return edges join a call to its return
 * point like any other edge. Regions are the weakly connected components of
 * that relation, numbered by their lowest block index.
 *
 * Terminal edges. Each region is seen as a graph of its blocks plus two nodes,
 * the pseudo-entry and the pseudo-exit:
 *   - entries: the pseudo-entry has an edge to every block with no in-graph
 *     predecessor (a region holds every in-graph edge of its blocks, so no
 *     block has one from outside). Discovery explores forward from samples, so
 *     a loop may have no block without a predecessor; then in every set of
 *     blocks not reached from the other entries and not entered from other such
 *     blocks (a source strongly connected component of what is unreached), the
 *     lowest-indexed block becomes an entry too (cycle_entry);
 *   - exits: every block where control may leave (RCFG_EXIT set, an out-edge
 *     that leaves, or no out-edge at all) has an edge to the pseudo-exit. A
 *     block that cannot reach one (an infinite loop) would have no
 *     post-dominator; in every set of such blocks that control cannot leave (a
 *     sink strongly connected component), the highest-indexed block, often the
 *     loop's latch, gets an edge to the pseudo-exit too (sink).
 * So every block is reached from the pseudo-entry and reaches the pseudo-exit.
 *
 * Dominators. idom[i] is the immediate dominator of block[i] in that graph
 * (RGRAPH_ENTRY when it is the pseudo-entry), ipdom[i] its immediate
 * post-dominator (RGRAPH_EXIT when it is the pseudo-exit).
 *
 * Loops (profiler/loop_nest.h). An in-graph edge s -> h whose target
 * dominates its source is a back edge; the natural loop of header h is h and
 * every block that reaches the source of one of h's back edges without
 * passing through h (one loop per header, self-loops included). Cycles with
 * no dominating header (a loop entered at two blocks) survive the removal of
 * back edges; each strongly connected component of more than one block of the
 * graph without back edges is a loop flagged irreducible: its blocks are that
 * component's and those of the natural loops headed inside it, its header the
 * lowest-indexed of its entries (it has two or more). A loop's entries are its
 * blocks with a predecessor outside it, the pseudo-entry included (a natural
 * loop's: its header). The graph is reducible iff no loop is flagged. Loops
 * nest by inclusion (a loop's parent is the smallest loop holding it, depth 1
 * for the outermost).
 *
 * Block numbers are indices into the rcfg's block[], edge numbers into its
 * edge[]. Every array is sorted ascending; loops are sorted by (header, outer
 * first). The result depends only on the rcfg. */
#ifndef PMUSIM_PROFILER_REGION_GRAPH_H
#define PMUSIM_PROFILER_REGION_GRAPH_H

#include <stddef.h>

#include "profiler/region_cfg.h"

#define RGRAPH_NONE ((size_t)-1)  /* no parent loop */
#define RGRAPH_ENTRY ((size_t)-2) /* the pseudo-entry, as an idom */
#define RGRAPH_EXIT ((size_t)-3)  /* the pseudo-exit, as an ipdom */

struct rgraph_loop {
	size_t header;
	size_t *block; /* its blocks, header included */
	size_t nblock;
	size_t *entry; /* its blocks with a predecessor outside it; {header} when natural */
	size_t nentry;
	size_t parent;  /* index in the region's loop[], RGRAPH_NONE when outermost */
	unsigned depth; /* 1 + its parent's depth; 1 when outermost */
	int irreducible;
};

struct rgraph_region {
	size_t *block; /* its blocks */
	size_t nblock;
	size_t *entry; /* blocks with an edge from the pseudo-entry */
	size_t nentry;
	size_t *cycle_entry; /* the entries chosen because a cycle had none (subset of entry) */
	size_t ncycle_entry;
	size_t *exit; /* its edges that leave the graph (out != RCFG_IN) */
	size_t nexit;
	size_t *exit_block; /* blocks with an edge to the pseudo-exit */
	size_t nexit_block;
	size_t *sink; /* the exit blocks chosen for infinite loops (subset of exit_block) */
	size_t nsink;
	size_t *idom;  /* idom[i]: block[i]'s immediate dominator, or RGRAPH_ENTRY */
	size_t *ipdom; /* ipdom[i]: block[i]'s immediate post-dominator, or RGRAPH_EXIT */
	struct rgraph_loop *loop;
	size_t nloop;
	double weight; /* sum of its blocks' weights */
};

struct rgraph {
	struct rgraph_region *region; /* by lowest block index */
	size_t nregion;
};

/* The regions of g. 0 with *out set (free with rgraph_free; no region when g
 * has no block), or a negative pmusim_err with a one-line reason in msg:
 * PMUSIM_ERR_ARG when g is inconsistent (an edge's from is not the block whose
 * edge range holds it, an in-graph edge's to is no block, edge ranges out of
 * bounds), PMUSIM_ERR_NOMEM. g is not kept. */
int rgraph_build(const struct rcfg *g, struct rgraph **out, char *msg, size_t msglen);

void rgraph_free(struct rgraph *rg);

/* The position of block b in r->block[] (and so in idom[], ipdom[]), or
 * RGRAPH_NONE when b is not in r. */
size_t rgraph_pos(const struct rgraph_region *r, size_t b);

#endif
