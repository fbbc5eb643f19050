/* Discovery of the hot control-flow graph, the first stage of choosing
 * super-regions for a binary rewriter from op samples (profiler/hot_code.h):
 * basic blocks found by forward disassembly from the sampled instructions, with
 * no symbols and no debug information.
 *
 * Exploration. Every sampled IP that binary_run can decode starts a code run
 * (pmu_model/block.h: straight-line code up to its first branch); from each run
 * explored, its terminator's successors are followed:
 *   - conditional branch: taken -> its target, fall-through -> the next insn;
 *   - direct jump: taken -> its target;
 *   - indirect jump: indirect -> each target hot->target records for it, none
 *     when it records none (the block is then an exit);
 *   - direct or indirect call: call-return -> the next instruction (calls are
 *     region boundaries: the callee is recorded, not entered); the call's
 *     indirect targets stay in hot->target;
 *   - syscall, REP string instruction, a run cut at DECODE_MAX_INSNS:
 *     fall-through -> the next instruction;
 *   - return, trap (int3, ud2, hlt, undecodable bytes...): none, an exit.
 * Hops count conditional branches: a run holding a sampled instruction is at 0
 * hops; a successor through a conditional branch (either way) is one hop
 * further than its predecessor, through any other edge as far. A run whose
 * fewest hops exceed opt->max_hops is not explored: the edges to it stay,
 * marked as leaving the graph (RCFG_OUT_HOPS). So is an edge to an address
 * binary_run cannot give (no code of the binary there: JIT or anonymous
 * memory, another library not added; RCFG_OUT_NOCODE).
 *
 * Blocks. Blocks are keyed by start address, and x86 instructions may overlap:
 * a jump into the middle of an instruction starts another instruction stream,
 * a block of its own that may share bytes with another. A block starts at
 *   - the target of an edge from an explored run that lands on code explored
 *     (a run's start or an instruction boundary inside it: the run is split
 *     there, the first part falls through to the second);
 *   - a sampled IP that is no instruction boundary inside another explored run
 *     (without symbols, the earliest sampled instruction of straight-line code
 *     is the best start known);
 *   - the first instruction two streams share after overlapping code (where
 *     they resynchronise), so that each instruction belongs to one block.
 * A block runs along its stream up to the next block start on that stream or
 * to its run's terminator. A block that stops before a terminator has kind
 * BK_NONE and one fall-through edge to the block after it.
 *
 * The result depends only on the sets in hot and on the code, not on the order
 * of hot's arrays (they are sorted here) nor on the order of exploration,
 * except when opt->max_blocks cuts the exploration short (rcfg.partial). */
#ifndef PMUSIM_PROFILER_REGION_CFG_H
#define PMUSIM_PROFILER_REGION_CFG_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/binary.h"
#include "profiler/hot_code.h"

#define RCFG_MAX_HOPS_DEFAULT 2
#define RCFG_MAX_BLOCKS_DEFAULT 100000

struct rcfg_options {
	/* How many conditional branches away from sampled code exploration goes
	 * (0: sampled runs and what they reach without a conditional branch).
	 * Default RCFG_MAX_HOPS_DEFAULT. */
	unsigned max_hops;
	/* Guard: at most this many code runs are explored; past it the graph is
	 * partial and edges to runs not explored leave it (RCFG_OUT_LIMIT).
	 * Must be at least 1. Default RCFG_MAX_BLOCKS_DEFAULT. */
	size_t max_blocks;
};

/* Fills o with the defaults. */
void rcfg_options_init(struct rcfg_options *o);

/* Flags of a block. */
#define RCFG_SAMPLED 0x1 /* one of its instructions is in hot->ip */
#define RCFG_CALL 0x2    /* ends in a call (BK_CALL or BK_CALL_IND) */
/* RCFG_EXIT: control may leave the graph here (a return, a trap, an indirect
 * jump without a recorded target, or an out-edge that leaves). */
#define RCFG_EXIT 0x4

struct rcfg_block {
	uint64_t start;  /* its first instruction */
	uint64_t end;    /* just past its last instruction */
	uint64_t target; /* direct target of its terminator (jcc, jmp, call); 0 otherwise */
	uint64_t callee; /* a direct call's target; 0 otherwise */
	uint16_t *off;   /* off[i]: offset of instruction i from start, off[ninsns] =
	                  * end - start; owned by the graph */
	uint32_t ninsns;
	uint32_t hops;            /* conditional branches from sampled code (see above) */
	uint8_t kind;             /* enum br_kind of its last instruction; BK_NONE when the
	                           * block stops at the start of the next one */
	uint8_t flags;            /* RCFG_SAMPLED | RCFG_CALL | RCFG_EXIT */
	double weight;            /* sum of the hot weights of its instructions */
	size_t first_edge, nedge; /* its out-edges: rcfg.edge[first_edge ..] */
};

enum rcfg_edge_kind {
	RCFG_FALL = 0,    /* fall-through: jcc not taken, syscall, REP, split block */
	RCFG_TAKEN,       /* direct jump, or jcc taken */
	RCFG_INDIRECT,    /* indirect jump to a target hot->target records */
	RCFG_CALL_RETURN, /* from a call to its return point */
};

/* Why an edge leaves the graph. */
enum rcfg_out {
	RCFG_IN = 0,     /* it does not: to is a block */
	RCFG_OUT_HOPS,   /* its target is more than max_hops away from sampled code */
	RCFG_OUT_NOCODE, /* binary_run cannot give code at its target */
	RCFG_OUT_LIMIT,  /* max_blocks stopped exploration before its target */
};

#define RCFG_NO_BLOCK SIZE_MAX

struct rcfg_edge {
	size_t from;      /* index of its source block */
	size_t to;        /* index of its target block, RCFG_NO_BLOCK when it leaves */
	uint64_t to_addr; /* its target address */
	uint8_t kind;     /* enum rcfg_edge_kind */
	uint8_t out;      /* enum rcfg_out */
	uint8_t observed; /* 1 when hot says its weight: a jcc's taken or fall
	                   * weight in hot->branch, an indirect target's in hot->target */
	double weight;    /* that weight; 0 when not observed */
};

struct rcfg {
	struct rcfg_block *block; /* sorted by start, each start once */
	size_t nblock;
	struct rcfg_edge *edge; /* sorted by (from, kind, to_addr) */
	size_t nedge;
	double weight; /* sum of the blocks' weights (of hot->total, the rest
	                * lies on code not in the graph) */
	size_t runs;   /* code runs explored */
	int partial;   /* 1 when max_blocks cut the exploration short */
};

/* Discovers the graph around hot's sampled IPs in code (opt NULL: defaults).
 * 0 with *out set (free with rcfg_free; an empty graph when no sampled IP has
 * code), or a negative pmusim_err with a one-line reason in msg:
 * PMUSIM_ERR_ARG for max_blocks 0, PMUSIM_ERR_NOMEM. code's decode cache is used
 * and may grow; hot is not kept. */
int rcfg_discover(struct binary *code, const struct hot_code *hot, const struct rcfg_options *opt,
                  struct rcfg **out, char *msg, size_t msglen);

void rcfg_free(struct rcfg *g);

/* The block starting at addr, NULL when none. */
const struct rcfg_block *rcfg_block_at(const struct rcfg *g, uint64_t addr);

/* The block with an instruction starting at addr, NULL when none (each
 * instruction belongs to at most one block). */
const struct rcfg_block *rcfg_block_holding(const struct rcfg *g, uint64_t addr);

/* Short name of an enum rcfg_edge_kind ("fall", "taken", "indirect", "call_ret"),
 * of an enum rcfg_out ("in", "hops", "nocode", "limit"). */
const char *rcfg_edge_kind_name(int kind);
const char *rcfg_out_name(int out);

#endif
