/* Partial inlining of hot calls, the stage of choosing super-regions that
 * removes call instructions from replacement code: a binary rewriter's
 * replacement code holds no call, so a hot call inside a kept region either
 * gets a copy (a clone) of the callee's hot blocks in its place, or becomes an
 * exit of the region (the replacement jumps to the callee as the call would,
 * with the original return address pushed, and control comes back to the
 * original code after it, outside the replacement).
 *
 * Input: a selection (profiler/region_prune.h) of a graph g with regions rg and
 * counts f. Discovery does not follow calls (region_cfg.h): a callee has blocks
 * in g only when it was sampled itself, as part of some region, kept or not
 * (a 7-instruction callee of a hot loop is typically a region dropped as tiny).
 *
 * Sites. A call site is a block of the replacement code whose terminator is a
 * call (RCFG_CALL): a kept block of a kept region, or a block of a clone
 * (below). Every one is listed, whatever its count, since the rewriter must
 * turn each call of its replacement code into a clone or an exit. Its count is
 * the rprune count or bound of its block (0 when it has neither: a bridge),
 * scaled in a clone. Indirect calls (kind BK_CALL_IND, or no callee) are never
 * inlined (their targets differ per execution; they stay exits,
 * RINLINE_WHY_INDIRECT). A region's sites are considered hottest first from a
 * worklist: its own sites at the start, a clone's sites added when the clone
 * is made, and each time the first waiting by count descending, then call
 * address ascending, then depth ascending (the region's own sites first),
 * then the parent clone's index ascending (the clone made first). A direct
 * site is inlined when all of the following hold; else the first that fails,
 * in this order, is its reason:
 *   - a block of g starts at the callee (rcfg_block_at(g, callee)): its entry
 *     E; else RINLINE_WHY_NO_CODE (not sampled, not explored, or code falling
 *     into the callee so that its entry is inside a block);
 *   - E is the entry of neither the clone holding the site nor any clone that
 *     clone is nested in (RINLINE_WHY_RECURSIVE). The region's own code is no
 *     clone: a call in it to a function whose code the region holds (a
 *     self-recursive region) is inlined once, and the clone's own call is
 *     recursive;
 *   - the site's depth (1 for a call in the region's own code, 1 + its
 *     clone's depth in a clone) is at most max_depth (RINLINE_WHY_DEPTH);
 *   - its count is above 0 and at least min_call_fraction x the region's
 *     hottest count (rprune_region.hottest) (RINLINE_WHY_COLD);
 *   - E has a count above 0 (RINLINE_WHY_EMPTY: the body, below, would be
 *     empty), the body holds at most max_callee_insns instructions
 *     (RINLINE_WHY_TOO_BIG), and the region's inlined instructions so far plus
 *     the body's are at most max_region_insns (RINLINE_WHY_BUDGET).
 *
 * Bodies. The body of callee entry E is the set of blocks reachable from E
 * through in-graph edges of kinds RCFG_FALL, RCFG_TAKEN, RCFG_INDIRECT and
 * RCFG_CALL_RETURN (an inner call's return point is part of the callee), through
 * blocks that are warm: a block is warm when it has a count
 * (rprune_block.count when rprune_block.counted: the rprune count or bound) at
 * least cold_fraction x E's count and above 0 (E itself must be: a callee
 * whose entry has no count above 0 is RINLINE_WHY_EMPTY). Blocks of the body
 * are those of the callee's region as the graph has them, whether that region
 * was kept or not; a body never holds a block of the caller's own region
 * unless the callee's code is shared with it (then the clone copies it: a clone
 * is a copy, the original stays). Inner calls of the body are sites of their
 * own (depth + 1), considered in the hottest-first order above with the rest.
 *
 * Counts. A clone's block counts are the callee's scaled by the site's share of
 * the callee's calls: scale = count(site) / count(E), capped at 1 (count(E) is
 * all the executions of E, from every caller and from outside the graph), so
 * clone count(b) = scale x count(b). When the calling block is the graph's only
 * way into E from outside the body (no other caller, no jump in), flow
 * conservation says E runs once per execution of the call when the two counts
 * differ by no more than sampling noise (rinline_options.sample_weight; with
 * exact counts a difference is other callers outside the graph), and the scale is the
 * calling block's own (1 in own code, the parent clone's in a clone): the
 * callee's counts, from its many sampled instructions, say how often rather
 * than the call's block alone. A caller discovery did not explore makes that
 * an overestimate; the exact replay measures it. A clone's instructions weigh
 * sum over its blocks of count x ninsns, its weight.
 *
 * Returns. The clone's returns (blocks of kind BK_RET in the body) go to the
 * site's return point (rinline_site.ret, the call's fall-through address and
 * its call-return edge's target; rcfg_block_at(g, ret) when in the graph)
 * instead of leaving; its other exits (edges leaving the body, edges to cold
 * blocks, indirect jumps without target) are exits of the region.
 *
 * The result depends only on the inputs (no pointer order, no hash order). */
#ifndef PMUSIM_PROFILER_REGION_INLINE_H
#define PMUSIM_PROFILER_REGION_INLINE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/region_cfg.h"
#include "profiler/region_flow.h"
#include "profiler/region_graph.h"
#include "profiler/region_prune.h"

#define RINLINE_MAX_DEPTH_DEFAULT 2
#define RINLINE_MAX_CALLEE_INSNS_DEFAULT 200
#define RINLINE_MAX_REGION_INSNS_DEFAULT 1000
#define RINLINE_MIN_CALL_FRACTION_DEFAULT 0.01
#define RINLINE_NONE ((size_t)-1)

struct rinline_options {
	/* Deepest chain of inlined calls (1: calls in the region's own code
	 * only; 0: inline nothing). Default RINLINE_MAX_DEPTH_DEFAULT. */
	unsigned max_depth;
	/* Largest body inlined, in instructions. Default RINLINE_MAX_CALLEE_INSNS_DEFAULT. */
	uint64_t max_callee_insns;
	/* Instructions all clones of one region may add. Default
	 * RINLINE_MAX_REGION_INSNS_DEFAULT. */
	uint64_t max_region_insns;
	/* A site counted below this fraction of its region's hottest count is
	 * not inlined. In [0, 1]. Default RINLINE_MIN_CALL_FRACTION_DEFAULT. */
	double min_call_fraction;
	/* A body block counted below this fraction of the callee entry's count is
	 * cold and left out. In [0, 1]. Default RPRUNE_COLD_FRACTION_DEFAULT. */
	double cold_fraction;
	/* The weight one op sample adds (hot_code total / samples), 0 when the
	 * counts are exact (a truth). With samples, a site whose block is the only
	 * way into the callee and whose count agrees with the callee entry's within
	 * three standard deviations of their sampling noise (a count c of a block of
	 * n instructions from samples of weight w varies by c x w / n) scales its
	 * clone as one execution of E per call (see Counts above). Default 0. */
	double sample_weight;
};

void rinline_options_init(struct rinline_options *o);

/* Why a call site is not inlined. */
enum rinline_why {
	RINLINE_WHY_INLINED = 0,
	RINLINE_WHY_INDIRECT,  /* an indirect call */
	RINLINE_WHY_NO_CODE,   /* no block of the graph starts at the callee */
	RINLINE_WHY_RECURSIVE, /* the callee is already on its chain of callers */
	RINLINE_WHY_DEPTH,     /* deeper than max_depth */
	RINLINE_WHY_COLD,      /* count 0, or below min_call_fraction x hottest */
	RINLINE_WHY_EMPTY,     /* the callee's entry has no count */
	RINLINE_WHY_TOO_BIG,   /* body over max_callee_insns */
	RINLINE_WHY_BUDGET,    /* the region's max_region_insns would be passed */
};

/* A call site in a kept region: inlined (a clone) or an exit, and why. */
struct rinline_site {
	size_t region;   /* index in rg->region[] */
	size_t block;    /* the calling block's index in g->block[] */
	size_t parent;   /* the clone the block is copied in (index in rinline.clone[]),
	                  * RINLINE_NONE in the region's own code */
	uint64_t call;   /* the call instruction's address */
	uint64_t ret;    /* its return point (the call's fall-through) */
	uint64_t callee; /* the direct target; 0 for an indirect call */
	unsigned depth;  /* 1 + the parent clone's depth (1 in own code) */
	double count;    /* the calling block's count (scaled in a clone), 0 when none */
	uint8_t why;     /* enum rinline_why */
	size_t clone;    /* RINLINE_WHY_INLINED: its clone's index; else RINLINE_NONE */
};

/* A copy of a callee's hot blocks for one site. */
struct rinline_clone {
	size_t site;   /* index in rinline.site[] */
	size_t entry;  /* the callee's entry block (g index) */
	size_t *block; /* the body's blocks (g indices), ascending */
	size_t nblock;
	double *count;   /* count[k]: block[k]'s scaled count */
	double scale;    /* count(site) / count(entry), capped at 1 */
	uint64_t ninsns; /* instructions of the body */
	double weight;   /* sum of count[k] x ninsns of block[k] */
	unsigned depth;  /* its site's depth */
};

struct rinline_region {
	size_t *site; /* its sites (indices in rinline.site[]), in the order considered */
	size_t nsite;
	uint64_t inlined_insns; /* instructions of its clones */
	double inlined_weight;  /* their weight */
};

struct rinline {
	struct rinline_site *site; /* by region, each region's in the order considered */
	size_t nsite;
	struct rinline_clone *clone; /* in the order inlined */
	size_t nclone;
	struct rinline_region *region; /* region[i] is rg->region[i]'s; no site when dropped */
	size_t nregion;
	uint64_t *ip; /* the selection's cover (rprune.ip) with every clone's
	               * instructions added: sorted ascending, each once */
	size_t nip;
};

/* Inlines the hot calls of p's kept regions (opt NULL: defaults). 0 with *out
 * set (free with rinline_free), or a negative pmusim_err with a one-line reason
 * in msg: PMUSIM_ERR_ARG for an option out of range (NaN included) or inputs
 * that do not belong together, PMUSIM_ERR_NOMEM. Nothing passed in is kept. */
int rinline_run(const struct rcfg *g, const struct rgraph *rg, const struct rflow *f,
                const struct rprune *p, const struct rinline_options *opt, struct rinline **out,
                char *msg, size_t msglen);

void rinline_free(struct rinline *in);

/* The selection with its clones as a cover for region_overlap_of (points into in). */
struct region_cover rinline_cover(const struct rinline *in);

/* Short name of an enum rinline_why ("inlined", "indirect", "no_code",
 * "recursive", "depth", "cold", "empty", "too_big", "budget"). */
const char *rinline_why_name(int why);

#endif
