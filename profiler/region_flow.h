/* Count inference on a hot control-flow graph (profiler/region_cfg.h): how
 * often each block and each edge executed, estimated from the weights the graph
 * carries, for choosing and laying out super-regions.
 *
 * Units. A hot weight is in instructions: an op sample's period estimates the
 * executions of the instruction it tagged, and a truth gives every instruction
 * its executions. So a block's weight estimates ninsns x its executions, and an
 * observed edge's weight (a jcc's taken or fall weight, an indirect target's)
 * already estimates that edge's executions: taken + fall of a jcc estimates the
 * jcc's executions, which are its block's. (Weights of a cycle-mode profile are
 * cycles, not instructions: the counts below are then meaningless.)
 *
 * Block counts. count(b) = weight(b) / ninsns(b). Fall-through chains pool
 * theirs: a link is an edge a -> b with
 *   - kind RCFG_FALL and b a block of the graph (b != a),
 *   - the only out-edge of a (edges leaving the graph count), and a's
 *     terminator is not a return, a trap nor an indirect jump (no exit),
 *   - the only in-edge of b among the graph's edges;
 * a chain is a maximal sequence of blocks joined by links (a ring of links is
 * one chain too). Its blocks execute equally often unless code outside the
 * graph jumps into the chain past its head, which this assumes it does not
 * (exploration saw every edge of the code it explored, so that takes an
 * unexplored jump to the instruction after a syscall, a REP instruction or a
 * cut). A chain's count is the sum of its weights over the sum of its
 * instructions; a chain of one block is its own samples. A chain of weight 0
 * gives no count (in op mode, unsampled is not never executed).
 *
 * Edge counts. Unknowns: the count of every edge not observed, the count of
 * every block with no weight, and the flow between each block and the outside
 * of the graph. Equations, per block b:
 *   out(b): sum of b's out-edges (those leaving the graph too) [+ exit(b)] = count(b)
 *   in(b):  sum of b's in-edges within the graph [+ entry(b)]          = count(b)
 * exit(b) is a free unknown when b's terminator is a return, a trap or an
 * indirect jump (op samples need not have seen all of its targets); calls are
 * taken to return (their call-return edge carries the call's count). entry(b)
 * is a free unknown (the outside is no node with an equation of its own) when
 * b may be entered from code not in the graph, by the entry model:
 *   RFLOW_ENTRY_OPEN (default): every block but a chain link's target. Sound for
 *     any graph rcfg_discover gives: exploration goes forward, so it does not
 *     see the predecessors of a block it did not explore (a loop's preheader).
 *   RFLOW_ENTRY_CLOSED: only blocks without an in-edge in the graph. For graphs
 *     known to hold every edge into their blocks (a hand-made graph, a whole
 *     function); on others it decides wrong counts.
 * An equation holding a free unknown only tells that unknown, so it is not
 * used. The others are solved by propagation: an equation with exactly one
 * unknown left decides it; repeat until none has. Nothing is guessed: an edge
 * no equation decides stays RFLOW_UNDECIDED.
 *
 * Completeness. With RFLOW_ENTRY_OPEN propagation decides every unknown the
 * equations determine (an equation left with two or more unknowns and no free
 * one is a chain target's in(b) or an out(b) without exit; such equations
 * cannot form a cycle through a third one, so no determined unknown hides
 * behind one). With RFLOW_ENTRY_CLOSED it may not: two jccs with the same two
 * targets, neither observed, tie four unknowns in a cycle of equations, and an
 * edge whose count only their sum fixes stays undecided.
 *
 * Noise. Observed edges and sampled counts are estimates, so a decided count
 * is a difference of estimates and may come out negative; it is reported as
 * computed and counted in rflow.nnegative. With exact input (a truth) every
 * decided count is exact, and with integer counts below 2^53 so is the double. */
#ifndef PMUSIM_PROFILER_REGION_FLOW_H
#define PMUSIM_PROFILER_REGION_FLOW_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/region_cfg.h"

enum rflow_entry_model {
	RFLOW_ENTRY_OPEN = 0,
	RFLOW_ENTRY_CLOSED,
};

struct rflow_options {
	int entry; /* enum rflow_entry_model; default RFLOW_ENTRY_OPEN */
};

/* Where a block's count comes from. */
enum rflow_block_source {
	RFLOW_B_NONE = 0, /* nowhere: count is 0 and means unknown */
	RFLOW_B_SAMPLES,  /* its own weight (a chain of one block) */
	RFLOW_B_CHAIN,    /* its fall-through chain's pooled weight (two blocks or more) */
	RFLOW_B_FLOW,     /* no weight on its chain; decided by an equation */
};

/* Where an edge's count comes from. */
enum rflow_edge_source {
	RFLOW_UNDECIDED = 0, /* no equation decides it: count is 0 and means unknown */
	RFLOW_OBSERVED,      /* rcfg_edge.weight */
	RFLOW_DECIDED,       /* decided by an equation */
};

struct rflow_block {
	double count;   /* estimated executions */
	uint8_t source; /* enum rflow_block_source */
	size_t chain;   /* index of the first block of its chain (itself when alone);
	                 * for a ring, its lowest index */
};

struct rflow_edge {
	double count;   /* estimated executions */
	uint8_t source; /* enum rflow_edge_source */
};

struct rflow {
	struct rflow_block *block; /* block[i] is g->block[i]'s */
	size_t nblock;
	struct rflow_edge *edge; /* edge[i] is g->edge[i]'s */
	size_t nedge;
	size_t nobserved, ndecided, nundecided; /* edges by source */
	size_t nnegative;                       /* decided counts below 0 (block or edge) */
};

/* Fills o with the defaults. */
void rflow_options_init(struct rflow_options *o);

/* Infers the counts of g (opt NULL: defaults). 0 with *out set (free with
 * rflow_free), or a negative pmusim_err with a one-line reason in msg:
 * PMUSIM_ERR_ARG for an unknown entry model or a malformed graph (a block of
 * no instruction, an edge whose from or to is no block, a block whose edges are
 * not its run of g->edge), PMUSIM_ERR_NOMEM. g is read, not kept. */
int rflow_infer(const struct rcfg *g, const struct rflow_options *opt, struct rflow **out,
                char *msg, size_t msglen);

void rflow_free(struct rflow *f);

/* Short names: of an enum rflow_block_source ("none", "samples", "chain",
 * "flow"), of an enum rflow_edge_source ("undecided", "observed", "decided"). */
const char *rflow_block_source_name(int source);
const char *rflow_edge_source_name(int source);

#endif
