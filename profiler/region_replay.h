/* The exact replay of a run against a region set (profiler/region_set.h): a
 * consumer of the retired-block stream (pmu_model/block.h) that follows every
 * executed instruction of every thread and tells, exactly, what the
 * replacement code of the set would have run had an agent installed it before
 * the program started: per region the entries through each patch point, the
 * exits per exit edge, the instructions executed inside, and per loop its
 * header's executions inside and the loop's entries, hence its trip count.
 * No real rewriter can measure these; a sample-based estimate
 * (rset.est_share) is checked against them.
 *
 * Rules, per thread, instruction by instruction (the replacement's control
 * flow, region_set.h):
 *   - outside, an instruction that is a patch point enters its region at the
 *     point's block and instruction; any other runs in the original code;
 *   - inside block B, expecting B's instruction i: that instruction stays
 *     inside; any other address is an exit (an interruption: a signal handler
 *     or a fault took the thread elsewhere), and the instruction is then
 *     handled as outside;
 *   - inside, after B's last instruction: an instruction at the start of a
 *     block that B links to stays inside, in that block; any other is an
 *     exit of B's region by the edge (B's last instruction, the address), and
 *     is then handled as outside (an exit to a patch point enters again, as
 *     the original code's jump there would);
 *   - inside, expecting the call that ends a block with no link into a clone
 *     (a call not inlined) and is no patch point of the region: the
 *     replacement has left for the original call, which is handled as outside;
 *     the exit is counted by the edge (the call, the address of the thread's
 *     next instruction), when that instruction comes (none when the thread's
 *     stream ends first).
 * A block entered inside that is a loop's header counts an execution of the
 * header; a block of a loop entered inside from a block not in the loop, or
 * through a patch point, counts an entry of the loop (trip count: header
 * executions over entries). Instructions are those retired (a REP
 * string instruction is one, however many iterations).
 *
 * Cost: one array look-up per retired block outside the replacement (each
 * code run is looked up for patch points once, by its decode-cache id), one
 * comparison per instruction inside. */
#ifndef PMUSIM_PROFILER_REGION_REPLAY_H
#define PMUSIM_PROFILER_REGION_REPLAY_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pmu_model/block.h"
#include "profiler/region_set.h"

/* How control left the replacement. */
enum rreplay_exit_kind {
	RREPLAY_EXIT_EDGE =
	    0, /* after a block's last instruction, to an address it does not link */
	RREPLAY_EXIT_INTERRUPT, /* inside a block, to another instruction than its next */
};

struct rreplay_exit {
	uint64_t from; /* the last instruction run inside */
	uint64_t to;   /* the next instruction run */
	uint8_t kind;  /* enum rreplay_exit_kind */
	uint8_t br;    /* enum br_kind of from's block's terminator (EDGE) */
	uint64_t count;
};

struct rreplay_region {
	uint64_t entries;          /* through its patch points */
	uint64_t *point_entries;   /* point_entries[k]: through point[k] */
	uint64_t insns;            /* instructions executed inside */
	uint64_t *block_execs;     /* block_execs[b]: entries into block b inside (at its
	                            * start, or at a patch point's instruction) */
	uint64_t *header_execs;    /* per loop: its header's executions inside */
	uint64_t *loop_entries;    /* per loop: entries of the loop */
	struct rreplay_exit *exit; /* sorted by (from, to, kind) once rreplay_finish ran */
	size_t nexit;
	uint64_t exits; /* their sum */
};

struct rreplay;

/* A replay of s (kept, not copied: it must outlive the replay). 0 with *out,
 * or PMUSIM_ERR_NOMEM. */
int rreplay_new(const struct rset *s, struct rreplay **out);
void rreplay_free(struct rreplay *r);

/* The block sink to add to the machine (sim_add_image_sink: the process the
 * set was selected for). */
struct block_sink rreplay_sink(struct rreplay *r);

/* Ends the replay (threads still inside stay counted as they are; sorts the
 * exits). 0 or PMUSIM_ERR_NOMEM (an exit could not be recorded during the
 * run: the figures are then incomplete). */
int rreplay_finish(struct rreplay *r);

/* Results, after rreplay_finish: per region of the set, region[i] is
 * s->region[i]'s; the instructions retired in all (inside or not). */
const struct rreplay_region *rreplay_region(const struct rreplay *r, size_t i);
uint64_t rreplay_total(const struct rreplay *r);
uint64_t rreplay_inside(const struct rreplay *r);

/* The replay as text (a summary, then per region) or as JSON; 0 or PMUSIM_ERR_IO. */
int rreplay_write_text(FILE *f, const struct rreplay *r);
int rreplay_write_json(FILE *f, const struct rreplay *r);

#endif
