/* Pruning and selection, the last stage of choosing super-regions for a binary
 * rewriter from op samples: from the regions of a hot graph
 * (profiler/region_graph.h) and its counts (profiler/region_flow.h), the blocks
 * of each region worth rewriting, and the regions worth keeping at all. Every
 * threshold is an option of struct rprune_options.
 *
 * Counts. A block's count is its rflow count when rflow has one (source other
 * than RFLOW_B_NONE). When it has none, the larger of the sum of its in-graph
 * in-edges' counts and the sum of its out-edges' counts, over the edges rflow
 * observed or decided, is a lower bound of its executions (bound = 1); a bound
 * only ever shows a block hot, never cold, since the true count may be higher.
 * A block with neither has no count. A region's hottest count is the largest
 * count of its anchors: blocks counted from their own or their chain's samples
 * (RFLOW_B_SAMPLES, RFLOW_B_CHAIN), so that a noisy difference of estimates
 * (RFLOW_B_FLOW) does not set the scale. A region without an anchor has
 * nothing hot.
 *
 * Blocks, in this order (a block dropped by one step is out of the later ones):
 *  1. a block with a count (or bound) of at least cold_fraction x the region's
 *     hottest count, and above 0, is hot (RPRUNE_B_HOT). A block whose rflow
 *     count is below that is cold (RPRUNE_B_COLD). A block with no count, or a
 *     bound below it (code exploration added, the hops > 0 kind, or code a
 *     sampled block reaches without a conditional branch but whose count no
 *     equation fixed), is kept only when it lies on a path hot -> ... -> hot of
 *     in-graph edges whose inner blocks all have no count (RPRUNE_B_BRIDGE:
 *     rewriting the hot code around it needs it); otherwise RPRUNE_B_UNSAMPLED;
 *  2. of the blocks kept so far, one that is no anchor and from which no hot
 *     anchor is reachable through kept blocks is a dead end (RPRUNE_B_DEAD_END):
 *     control that enters it never comes back to sampled hot code, so the
 *     rewritten region can leave to the original code there. Anchors are kept
 *     (a hot anchor needs itself); so is everything between two of them.
 *
 * Regions, judged on their blocks kept by 1 and 2, first reason that applies:
 *  - no block kept: RPRUNE_R_EMPTY;
 *  - fewer than min_insns instructions kept: RPRUNE_R_FEW_INSNS;
 *  - kept weight below min_share of the total: RPRUNE_R_LOW_SHARE;
 *  - a loop (rgraph_loop) whose header is kept and whose iterations per entry
 *    reach min_iterations: kept, RPRUNE_R_LOOP;
 *  - kept weight at least loop_share of the total: kept, RPRUNE_R_SHARE;
 *  - else RPRUNE_R_ITERATIONS.
 * The blocks kept by 1 and 2 of a dropped region are dropped with it
 * (RPRUNE_B_REGION).
 *
 * Iterations per entry of a loop: its header's count over the executions that
 * entered the loop from outside, the entries' counts minus the counts of the
 * in-edges from the loop's own blocks into its entries (back edges, for a
 * natural loop). Entering from outside includes from code not in the graph,
 * which rflow does not count (its open entry model), hence the difference.
 * Undecided in-edges from inside are taken as 0, which can only overstate the
 * entries: the result is a lower bound (a loop with no known back edge
 * iterates 1 time per entry as far as this tells). The header's count must be
 * rflow's (a lower bound there would overstate the iterations); without one,
 * or when an entry has none, the loop counts 0 iterations. When noise leaves
 * no entry (inner in-edges at least the entries' counts), the loop iterates
 * without end as far as the estimates tell: INFINITY.
 *
 * Shares are of total (hot_code.total: every sampled weight of the process,
 * in the graph or not); 0 when total is not above 0. The result depends only
 * on the inputs. */
#ifndef PMUSIM_PROFILER_REGION_PRUNE_H
#define PMUSIM_PROFILER_REGION_PRUNE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/region_cfg.h"
#include "profiler/region_compare.h"
#include "profiler/region_flow.h"
#include "profiler/region_graph.h"

#define RPRUNE_COLD_FRACTION_DEFAULT 0.01
#define RPRUNE_MIN_ITERATIONS_DEFAULT 4.0
#define RPRUNE_LOOP_SHARE_DEFAULT 0.10
#define RPRUNE_MIN_INSNS_DEFAULT 8
#define RPRUNE_MIN_SHARE_DEFAULT 0.001

struct rprune_options {
	/* A block counted below this fraction of its region's hottest count is
	 * cold. In [0, 1]. Default RPRUNE_COLD_FRACTION_DEFAULT (1 %). */
	double cold_fraction;
	/* Iterations per entry a loop needs to keep its region. At least 0.
	 * Default RPRUNE_MIN_ITERATIONS_DEFAULT. */
	double min_iterations;
	/* A region without such a loop is kept when its kept weight is at least this
	 * share of the total. In [0, 1]. Default RPRUNE_LOOP_SHARE_DEFAULT (10 %). */
	double loop_share;
	/* A region keeping fewer instructions is tiny. Default RPRUNE_MIN_INSNS_DEFAULT. */
	uint64_t min_insns;
	/* A region keeping less than this share of the total is tiny. In [0, 1].
	 * Default RPRUNE_MIN_SHARE_DEFAULT (0.1 %). */
	double min_share;
};

/* Fills o with the defaults. */
void rprune_options_init(struct rprune_options *o);

/* Why a block is kept or dropped (see above). */
enum rprune_block_why {
	RPRUNE_B_HOT = 0, /* kept */
	RPRUNE_B_BRIDGE,  /* kept */
	RPRUNE_B_COLD,
	RPRUNE_B_UNSAMPLED,
	RPRUNE_B_DEAD_END,
	RPRUNE_B_REGION,
};

/* Why a region is kept or dropped. */
enum rprune_region_why {
	RPRUNE_R_LOOP = 0, /* kept */
	RPRUNE_R_SHARE,    /* kept */
	RPRUNE_R_EMPTY,
	RPRUNE_R_FEW_INSNS,
	RPRUNE_R_LOW_SHARE,
	RPRUNE_R_ITERATIONS,
};

struct rprune_block {
	uint8_t kept;
	uint8_t why;     /* enum rprune_block_why */
	uint8_t counted; /* 1 when count below is a count or a bound */
	uint8_t bound;   /* 1 when it is the in/out-edge bound */
	double count;
};

struct rprune_region {
	uint8_t kept;
	uint8_t why;       /* enum rprune_region_why */
	size_t nkept;      /* blocks kept by steps 1 and 2 */
	uint64_t ninsns;   /* their instructions */
	double weight;     /* their weight */
	double share;      /* weight / total */
	double hottest;    /* the region's hottest count (0: no anchor) */
	double iterations; /* the best iterations per entry of a loop with a kept
	                    * header (0 when none) */
	size_t loop;       /* that loop's index in the region's loop[], RGRAPH_NONE */
	double *loop_iterations; /* loop_iterations[i]: iterations per entry of the
	                          * region's loop[i] (the bound above), whether its
	                          * header is kept or not; NULL when it has no loop */
};

struct rprune {
	struct rprune_block *block; /* block[i] is g->block[i]'s */
	size_t nblock;
	struct rprune_region *region; /* region[i] is rg->region[i]'s */
	size_t nregion;
	uint64_t *ip; /* the kept instructions' addresses (kept blocks of kept
	               * regions), sorted ascending, each once */
	size_t nip;
	size_t nkept_region;
	double weight; /* the kept blocks' weight, kept regions only */
	double share;  /* weight / total */
};

/* Selects from g's regions rg with counts f (opt NULL: defaults); total is the
 * hot code's total weight (hot_code.total). 0 with *out set (free with
 * rprune_free), or a negative pmusim_err with a one-line reason in msg:
 * PMUSIM_ERR_ARG for an option out of range (NaN included) or inputs that do
 * not belong together (f's or rg's blocks not g's), PMUSIM_ERR_NOMEM. Nothing
 * passed in is kept. */
int rprune_select(const struct rcfg *g, const struct rgraph *rg, const struct rflow *f,
                  double total, const struct rprune_options *opt, struct rprune **out, char *msg,
                  size_t msglen);

void rprune_free(struct rprune *p);

/* The selection as a cover for region_overlap_of (points into p). */
struct region_cover rprune_cover(const struct rprune *p);

/* Short names: of an enum rprune_block_why ("hot", "bridge", "cold",
 * "unsampled", "dead_end", "region"), of an enum rprune_region_why ("loop",
 * "share", "empty", "few_insns", "low_share", "iterations"). */
const char *rprune_block_why_name(int why);
const char *rprune_region_why_name(int why);

#endif
