/* Patch points of a region (profiler/region_graph.h), the stage of choosing
 * super-regions that says where a binary rewriter's agent writes its jumps:
 * entry instructions of the region's hot loops where a 5-byte `jmp rel32`
 * (E9 + rel32) overwriting the instruction's first bytes sends control into
 * the replacement code, while other threads run the program.
 *
 * Instructions. Instruction i of block b qualifies as a patch point when
 *   - it is at least 5 bytes long (off[i + 1] - off[i] >= 5): the jump then
 *     changes bytes of that instruction only, so a thread stopped at any
 *     instruction boundary resumes on the old instruction or the new jump,
 *     never on a torn pair (RPATCH_WHY_SHORT otherwise);
 *   - its block executed: weight > 0, or a count > 0 in the flow given
 *     (RPATCH_WHY_NOT_EXECUTED): a patch on cold code redirects nothing;
 *   - no edge of the graph (in-graph or leaving) targets a byte of its first
 *     5 but the first, nor its first byte when i > 0 (RPATCH_WHY_EDGE_INSIDE):
 *     such a jump would land inside the rel32;
 *   - no other block's bytes [start, end) meet its first 5
 *     (RPATCH_WHY_OVERLAP): overlapping code is another instruction stream
 *     (region_cfg.h) that the write would change.
 * Only what discovery explored is known: a jump from code it did not explore
 * into the middle of the instruction, or a stream it did not see, is not.
 * The instruction may be the block's terminator (a jcc rel32, a jmp rel32):
 * the replacement code starts with it, relocated. Patching instruction i > 0
 * of a block is allowed: control enters a block only at its start (blocks
 * are split where an edge lands), and instructions before the terminator do
 * not branch, so control entering b passes instruction i.
 *
 * The write. Intel SDM vol. 3A, 8.1.3 "Handling Self- and Cross-Modifying
 * Code" gives one protocol for code other processors may execute: write the
 * code, then have each executing processor execute a serializing instruction
 * before it runs the new code; without it, what a processor fetches while the
 * bytes change is implementation-specific. A live patch cannot stop every
 * thread, so in practice the agent either
 *   - RPATCH_STORE_ATOMIC: the 5 bytes lie within one aligned 8-byte word
 *     ((addr & 7) <= 3); one locked 8-byte compare-and-exchange writes them
 *     with the word's 3 other bytes unchanged, and aligned quadword accesses
 *     are atomic (SDM vol. 3A, 8.1.1 "Guaranteed Atomic Operations"), so the
 *     instruction fetch sees the old word or the new, as hot-patchers that
 *     align their patch sites rely on; or
 *   - RPATCH_STORE_INT3: the 5 bytes cross an 8-byte boundary, so no single
 *     aligned store holds them; the int3-first protocol of Linux's
 *     text_poke_bp (arch/x86/kernel/alternative.c) applies: write int3 (CC)
 *     on the first byte, synchronize every core, write bytes 1 .. 4,
 *     synchronize, write the jump's opcode on byte 0, synchronize; a thread
 *     that meets the int3 meanwhile is sent to the replacement by the trap
 *     handler. The protocol suits every patch point; the atomic store is the
 *     cheaper choice where it is valid.
 *
 * Coverage. The targets start as the region's outermost loops. A target is
 * covered when each of its entries (rgraph_loop.entry: the header of a
 * natural loop, every entry of an irreducible one) has a patch point at
 *   - a qualifying instruction of the entry block itself (the first one, by
 *     address), or
 *   - a qualifying instruction of a block d up the entry's dominator tree
 *     (idom, within the region) that lies in no loop of the region and from
 *     which every path stays in the region until it reaches a loop block: the
 *     blocks d reaches before any loop block have no exit (RCFG_EXIT, an
 *     out-edge leaving the graph, no out-edge); calls count as returning.
 *     Control from d then runs in the replacement until a loop, so d is as
 *     good as the entry; from a dominator where control may leave, executions
 *     that never reach the loop would be redirected, and an exit is where
 *     discovery's view of the code ends. The walk goes up past blocks with
 *     no qualifying instruction and stops at the first that is in a loop
 *     (RPATCH_UP_LOOP), has a path leaving (RPATCH_UP_EXIT), or at the
 *     pseudo-entry (RPATCH_UP_ENTRY).
 * Dominance is that of the region's graph: code discovery did not explore may
 * enter a loop elsewhere (region_flow.h's open entry model says the same).
 * A target with an entry no point can cover is RPATCH_UNCOVERED, and its
 * child loops become targets in its place (each covered, if at all, at its
 * own entries, as their dominators lie in a loop); a loop inside a covered
 * target is RPATCH_BY_OUTER: control reaches it from outside the target only
 * through the target's entries, and the replacement holds it.
 *
 * Minimal. Each entry's candidates lie on its path up the dominator tree, so
 * the fewest points that cover every target's entries are found greedily:
 * take the entries by the depth of their highest candidate, deepest first,
 * and give each entry not yet covered its highest candidate (the classic
 * exchange argument: any point covering that entry covers no entry the
 * highest one does not). Then each point moves down to the deepest block
 * that still covers every entry it covers, so a point is as near its loop as
 * the count allows: a dominator takes the place of entry-block points (two
 * entries of an irreducible loop, two loops behind one branch) only when it
 * saves points. Ties go to the lower block index; the result depends only on
 * the inputs. */
#ifndef PMUSIM_PROFILER_REGION_PATCH_H
#define PMUSIM_PROFILER_REGION_PATCH_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/region_cfg.h"
#include "profiler/region_flow.h"
#include "profiler/region_graph.h"

#define RPATCH_JMP_LEN 5 /* E9 rel32 */
#define RPATCH_NONE ((size_t)-1)

/* How the agent writes a patch point's 5 bytes (see above). */
enum rpatch_store {
	RPATCH_STORE_ATOMIC = 0, /* within one aligned 8-byte word: one locked store */
	RPATCH_STORE_INT3,       /* across an 8-byte boundary: the int3-first protocol */
};

/* Why an instruction, or a block (its first instruction of 5 bytes or more,
 * the block as a whole for NOT_EXECUTED and SHORT), is no patch point. */
enum rpatch_why {
	RPATCH_WHY_OK = 0,
	RPATCH_WHY_NOT_EXECUTED, /* its block has weight 0 and no count > 0 */
	RPATCH_WHY_SHORT,        /* no instruction of 5 bytes or more */
	RPATCH_WHY_EDGE_INSIDE,  /* an edge targets its first 5 bytes past its start */
	RPATCH_WHY_OVERLAP,      /* another block's bytes meet its first 5 */
};

/* Why the walk up an entry's dominator tree found nothing. */
enum rpatch_up {
	RPATCH_UP_NONE = 0, /* none: the loop is not uncovered */
	RPATCH_UP_ENTRY,    /* reached the pseudo-entry */
	RPATCH_UP_LOOP,     /* the next dominator lies in a loop */
	RPATCH_UP_EXIT,     /* a path from the next dominator leaves the region before a loop */
};

enum rpatch_status {
	RPATCH_COVERED = 0, /* a target whose entries all have a patch point */
	RPATCH_BY_OUTER,    /* inside a covered target */
	RPATCH_UNCOVERED,   /* a target with an entry no point can cover */
};

struct rpatch_point {
	size_t block;  /* index in the rcfg's block[] */
	uint32_t insn; /* index of the instruction in the block */
	uint64_t addr; /* its address */
	uint8_t len;   /* its length, >= RPATCH_JMP_LEN */
	uint8_t store; /* enum rpatch_store */
	size_t nentry; /* loop entries it covers */
	uint8_t reentry; /* 1: a re-entry point (rpatch_add_reentry), covering none */
};

struct rpatch_loop {
	uint8_t status; /* enum rpatch_status */
	size_t by;      /* RPATCH_BY_OUTER: the covered target holding it (index in the
	                 * region's loop[]); RPATCH_NONE otherwise */
	size_t *point;  /* RPATCH_COVERED: point[k] covers the loop's entry[k] (index in
	                 * rpatch.point[]); NULL otherwise */
	/* RPATCH_UNCOVERED: its lowest entry no point covers, why that block is
	 * none, and why no dominator is; RPATCH_NONE, RPATCH_WHY_OK, RPATCH_UP_NONE
	 * otherwise. */
	size_t entry;
	uint8_t why, up;
};

struct rpatch {
	struct rpatch_point *point; /* sorted by address */
	size_t npoint;
	struct rpatch_loop *loop; /* loop[i] is the region's loop[i]'s */
	size_t nloop;
	size_t ncovered, nby_outer, nuncovered; /* loops by status */
};

/* Whether instruction insn of block b of g qualifies as a patch point (flow
 * may be NULL: weights only). RPATCH_WHY_OK or the first reason it does not,
 * in enum order. */
int rpatch_insn_why(const struct rcfg *g, const struct rflow *flow, size_t b, uint32_t insn);

/* RPATCH_STORE_ATOMIC when the 5 bytes at addr lie within one aligned 8-byte
 * word, else RPATCH_STORE_INT3. */
int rpatch_store_of(uint64_t addr);

/* The patch points of region r of g's regions (flow NULL: block weights
 * only). 0 with *out set (free with rpatch_free), or a negative pmusim_err
 * with a one-line reason in msg: PMUSIM_ERR_ARG when flow's blocks are not
 * g's or a block of r is no block of g, PMUSIM_ERR_NOMEM. Nothing is kept. */
int rpatch_find(const struct rcfg *g, const struct rgraph_region *r, const struct rflow *flow,
                struct rpatch **out, char *msg, size_t msglen);

/* Re-entry points. The points above are the fewest that send control into the
 * replacement before each loop; control that leaves the replacement by an exit
 * discovery did not see (or a rare one the replacement does not copy) would then
 * run the rest of the loop, every later iteration, in the original code. So
 * every entry of every loop p covers or holds (RPATCH_COVERED, RPATCH_BY_OUTER)
 * that has no point in its own block gets one at the block's first qualifying
 * instruction (rpatch_insn_why), when it has one: the next iteration run in the
 * original code passes it and goes back into the replacement. Inside the
 * replacement these bytes never run, so such points cost nothing while control
 * stays there. Added points have reentry set and nentry 0; p's points stay
 * sorted by address and its loops' point[] indices are renumbered. 0, or
 * PMUSIM_ERR_NOMEM with a one-line reason in msg (p unchanged). */
int rpatch_add_reentry(const struct rcfg *g, const struct rgraph_region *r,
                       const struct rflow *flow, struct rpatch *p, char *msg, size_t msglen);

void rpatch_free(struct rpatch *p);

/* Short names: "atomic", "int3"; "ok", "not_executed", "short",
 * "edge_inside", "overlap"; "none", "entry", "loop", "exit"; "covered",
 * "by_outer", "uncovered". */
const char *rpatch_store_name(int store);
const char *rpatch_why_name(int why);
const char *rpatch_up_name(int up);
const char *rpatch_status_name(int status);

#endif
