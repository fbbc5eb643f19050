/* A region set: the replacement code a binary rewriter's agent would install
 * for a selection of hot super-regions (docs/regions.md), described by the
 * original instructions each piece copies, so that an exact replay of a run
 * (profiler/region_replay.h) can tell which executions the replacement would
 * have captured. It is what `pmusim report --regions --format json` writes
 * under each kept region's "replacement" and `pmusim run --dbr-regions` reads.
 *
 * Pieces. A region's replacement code is a set of blocks, each a copy of an
 * original block of the hot graph (profiler/region_cfg.h): the region's own
 * blocks (clone 0), and the blocks of each inlined call's clone
 * (profiler/region_inline.h; clone k >= 1 is clone[k - 1]). Control enters the
 * replacement only at a patch point (profiler/region_patch.h: the 5-byte jump
 * written over an original instruction sends every execution of it there) and
 * stays in it while it follows a successor link:
 *   - from a block to a block of the same clone along an in-graph edge of kind
 *     fall, taken or indirect (an indirect jump's replacement compares its
 *     target with the targets the selection knows and jumps to their copies);
 *   - from a block ending in an inlined call to its clone's entry block (the
 *     replacement pushes the original return address and jumps to the copy);
 *   - from a clone's block ending in a return to the block at its call's
 *     return point in the calling clone (or own code), when that is there.
 * Every other transfer leaves the replacement for the original code: an edge
 * to a block not copied, a call not inlined (the replacement jumps to the
 * original call, which runs in the original code, so that the processor's
 * return stack sees a call; a call that is itself a patch point is done in the
 * replacement instead: it pushes the original return address and jumps to the
 * original callee), a return outside a clone, a trap. Either way the callee
 * returns to the original code, and the replacement holds no call
 * instruction.
 *
 * Which blocks are copied: the selection's kept blocks of the region
 * (profiler/region_prune.h), the blocks of patch points and every block a
 * patch point reaches through in-graph fall, taken or indirect edges without
 * passing a loop block (rpatch's dominator points stand before their loops on
 * such paths, which may hold blocks the selection cut as cold), of those only
 * what some patch point reaches through successor links (an agent installs no
 * code that nothing enters); a region without a patch point has no
 * replacement.
 *
 * Estimate. From the selection's counts only (no exact counts), the share of
 * each copied block's executions that run inside, p(B):
 *   - 1 for a block whose first instruction is a patch point;
 *   - for another block of own code, the in-edges of the graph into it weighted
 *     by their estimated counts (the flow's count where decided or observed,
 *     else the source's count shared among its undecided out-edges, in
 *     proportion when estimates send out more than the count): the weight of
 *     those from copied blocks that link to it (a call-return edge when the
 *     call is inlined: its clone returns inside), each times p of its source
 *     (1 when the source holds a patch point), over the weight of them all;
 *   - for a clone's block, p of its call's block.
 * So a block whose predecessors all run inside is inside on every execution,
 * however noisy the counts, and one entered from the original code (after a
 * call that is not inlined, from a block not copied) in the proportion of
 * those edges. The estimated instructions inside are p(B) x count(B) x its
 * instructions (less a call not inlined, which runs outside), summed (a block with a patch point at instruction i > 0: p
 * for the instructions before i, every execution from i on); over the hot
 * code's total, the samples' estimate of the share of execution the
 * replacement runs, which the exact replay measures. The equations are solved
 * exactly per region (Gauss-Jordan elimination, up to RSET_DENSE_MAX unknowns;
 * a larger region's blocks without a point get p = 0, a lower bound); an
 * unknown they leave free (a cycle whose in-edges all count 0) gets 0.
 * Entries from code discovery did not explore are not in the graph, so the
 * estimate takes them to be none.
 *
 * Addresses are the recorded process's; the set applies to another run of the
 * same program laid out the same way (pmusim's runs are deterministic). */
#ifndef PMUSIM_PROFILER_REGION_SET_H
#define PMUSIM_PROFILER_REGION_SET_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/region_cfg.h"
#include "profiler/region_flow.h"
#include "profiler/region_graph.h"
#include "profiler/region_inline.h"
#include "profiler/region_patch.h"
#include "profiler/region_prune.h"

#define RSET_NONE UINT32_MAX
#define RSET_DENSE_MAX 2048 /* unknowns of a region's estimate solved exactly */

struct rset_block {
	uint64_t start; /* its original first instruction */
	uint16_t *off;  /* off[i]: instruction i's offset from start; off[ninsns] = length */
	uint32_t ninsns;
	uint32_t clone; /* 0: the region's own code; k: clone[k - 1] */
	uint32_t *succ; /* successor links: indices in the region's block[] */
	uint32_t nsucc;
	uint8_t kind;  /* enum br_kind of its last instruction */
	double count;  /* estimated executions (a clone's scaled) */
	double inside; /* estimated executions the replacement captures (x above) */
};

struct rset_clone {
	uint64_t call;   /* the inlined call instruction */
	uint64_t ret;    /* its return point */
	uint64_t callee; /* its target: the entry block's start */
	uint32_t parent; /* the clone holding the call: 0 own code, k clone[k - 1] */
	uint32_t entry;  /* its entry block (index in block[]) */
	double scale;
};

struct rset_point {
	uint64_t addr;  /* the patched instruction */
	uint32_t block; /* its block (own code) */
	uint32_t insn;  /* its index there */
	uint8_t len;
};

/* A loop of the region's own code, for trip counts: its header and blocks. */
struct rset_loop {
	uint32_t header;
	uint32_t *block; /* ascending */
	uint32_t nblock;
};

struct rset_region {
	uint64_t start;           /* the region's lowest block address (report's "start") */
	struct rset_block *block; /* own blocks by address, then each clone's by address */
	uint32_t nblock;
	struct rset_clone *clone;
	uint32_t nclone;
	struct rset_point *point; /* by address */
	uint32_t npoint;
	struct rset_loop *loop; /* the region's loops whose header is copied */
	uint32_t nloop;
	double est_insns; /* estimated instructions run inside */
};

struct rset {
	struct rset_region *region; /* the kept regions with a replacement, in the order given */
	size_t nregion;
	double total;     /* the hot code's total weight (instructions) */
	double est_insns; /* sum of the regions' */
	double est_share; /* est_insns / total (0 when total is 0) */
};

/* The region set of a selection: region indices order[0 .. norder) of rg (the
 * kept ones, in the order the report lists them), with patch[r] rpatch's points
 * of region r, inl the inlined calls (NULL: none). 0 with *out set (free with
 * rset_free), or a negative pmusim_err with a one-line reason in msg. */
int rset_build(const struct rcfg *g, const struct rgraph *rg, const struct rflow *f,
               const struct rprune *p, struct rpatch *const *patch, const struct rinline *inl,
               const size_t *order, size_t norder, double total, struct rset **out, char *msg,
               size_t msglen);

void rset_free(struct rset *s);

/* One region's replacement as a JSON object (the "replacement" member of a
 * region in report's JSON): {"blocks": [{"start", "off", "clone", "kind",
 * "succ", "count", "inside"}...], "clones": [...], "points": [...],
 * "loops": [...], "est_insns"}. Addresses as "0x..." strings. */
void rset_write_region_json(FILE *f, const struct rset_region *r);

struct jv;
/* The set from a parsed report JSON (common/json_read.h): every region with a
 * "replacement" member, and the document's "total". 0 with *out, or
 * PMUSIM_ERR_FORMAT with a one-line reason naming the member that is wrong
 * (links out of range, offsets not ascending, a point not on an instruction
 * of its block...), PMUSIM_ERR_NOMEM. */
int rset_from_json(const struct jv *doc, struct rset **out, char *msg, size_t msglen);

#endif
