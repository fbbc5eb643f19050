/* Branch-trace reconstruction from a taken-branch trace (TBT), the method this
 * project is built around ("edge profiling from taken-branch traces", seed 000):
 *
 * 1. The sample's LBR entries, newest first, are the taken branches T.
 * 2. Walking the binary from each entry's target to the next newer entry's
 *    source adds every conditional branch passed on the way as not taken, which
 *    rebuilds the complete branch trace (the "CBT") between the oldest entry and
 *    the newest. A sample whose records contradict the binary — an unconditional
 *    branch inside a range, a range that runs backwards, a source that is no
 *    branch, code that is not there — is dropped and counted.
 * 3. When the branch that triggered the sample (the precise sample IP) completed
 *    not taken, the walk goes on to it and appends it as not taken.
 * 4. A window of the newest outcomes is kept (trace_window) and each kept outcome
 *    is added to the edge counters with the sample's weight.
 *
 * Entries whose range leaves the binary (another DSO, the kernel) are kept as
 * taken outcomes; the ranges next to them are not walked. */
#ifndef PMUSIM_PROFILER_TRACE_H
#define PMUSIM_PROFILER_TRACE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/binary.h"
#include "profiler/perfdata.h"

/* One branch outcome of the rebuilt trace. */
struct br_outcome {
	uint64_t from;   /* the branch instruction */
	uint64_t to;     /* its target when taken, the next instruction when not */
	uint64_t insn;   /* instructions retired before this branch since the trace start */
	uint64_t cycle;  /* LBR cycles up to the taken branch at or after it */
	uint8_t kind;    /* enum br_kind; BK_NONE when the source is outside the binary */
	uint8_t taken;
};

/* Why a sample was dropped (index into trace_stats.dropped). */
enum trace_drop {
	DROP_NONE = 0,
	DROP_NO_BRANCHES,    /* empty branch stack */
	DROP_NOT_A_BRANCH,   /* an entry's source is not a branch instruction in the binary */
	DROP_UNCOND_IN_RANGE,/* an unconditional branch lies between two entries */
	DROP_BACKWARDS,      /* a range that runs backwards */
	DROP_OFF_TEXT,       /* a range that leaves the code */
	DROP_TOO_LONG,       /* a range longer than TRACE_MAX_WALK instructions */
	DROP_SHORT,          /* too few outcomes for the window */
	DROP_NO_OP_DATA,     /* ibs: no op sample payload (profiler/ibs_op.h) to read */
	DROP_COUNT
};

/* Short names of the reasons ("not_a_branch", …), for reports. */
const char *trace_drop_name(enum trace_drop why);

#define TRACE_MAX_WALK 65536
#define TRACE_MAX_OUT 4096

/* What triggered the samples (the event that overflowed). */
enum trigger {
	TRIG_TAKEN = 0,    /* taken branches retired */
	TRIG_BRANCHES,     /* branches retired */
	TRIG_INSNS,        /* instructions retired */
	TRIG_CYCLES,       /* cycles */
	TRIG_COND,         /* conditional branches retired (taken or not) */
	TRIG_COND_TAKEN,   /* taken conditional branches */
	TRIG_CALL,         /* near calls, direct and indirect */
	TRIG_RET,          /* near returns */
	TRIG_INDIRECT,     /* indirect jumps and calls */
	TRIG_COUNT
};

/* 1 when outcome o is an event of the trigger (branch triggers only: taken,
 * branches and the kinds above; 0 for instructions and cycles). */
int trigger_counts(int trigger, const struct br_outcome *o);

/* Flags of trace_rebuild. */
#define TRACE_APPEND_TRIGGER 1u /* a not-taken conditional branch at the IP is appended */
#define TRACE_DEDUP_NEWEST 2u   /* a newest entry repeating the one before is one branch */
#define TRACE_IP_AFTER_NEWEST 4u /* the instruction at the IP retired after the newest entry
                                  * even if it is that entry's branch (pmusim says so) */

/* Rebuilds the branch trace of one sample, oldest outcome first, into out (room
 * for TRACE_MAX_OUT). With TRACE_APPEND_TRIGGER the walk goes on to the sample
 * IP and, if it is a conditional branch that is not the newest entry, appends it
 * as not taken (a precise IP of an event that the branch itself caused or that
 * retired with it); otherwise the walk still reaches the IP so that the trace's
 * instruction span ends there. TRACE_DEDUP_NEWEST is for Skylake recordings:
 * the LBR there may hold the newest branch twice when the PMI arrives (BOLT's
 * perf2bolt "Skylake fix"); pmusim's LBR never does, and legitimately repeats
 * an entry when a loop's only taken branch is its back edge. *end_insn and *end_cycle get the
 * instruction and cycle position of the trace's end (the sample point; *end_insn
 * is the position of the IP's instruction itself, the one the outcomes' insn
 * counts up to, also when the IP is the newest entry or the appended branch;
 * when the IP cannot be reached, the position after the newest entry). Returns
 * the number of outcomes, or 0 with *why set when the sample must be dropped. */
size_t trace_rebuild(struct binary *b, const struct perf_sample *s, unsigned flags,
		     struct br_outcome *out, enum trace_drop *why, uint64_t *end_insn,
		     uint64_t *end_cycle);

/* The window of a rebuilt trace that the CBT method keeps, for a trigger:
 * - TRIG_BRANCHES: the newest `cbt` outcomes;
 * - TRIG_TAKEN: the newest `cbt` taken outcomes and the not-taken ones after the
 *   (cbt+1)-th newest taken (so every branch execution is covered by exactly
 *   `cbt` sample points; needs cbt < taken outcomes);
 * - TRIG_COND … TRIG_INDIRECT: the window is cut in units of the triggering
 *   event, as for TRIG_TAKEN: every outcome after the (cbt+1)-th newest event
 *   (trigger_counts), so that each branch execution lies in the windows of the
 *   `cbt` events that follow it, whatever the other branches between them. A
 *   trace holding fewer than cbt+1 events is kept whole (its window reaches back
 *   before the LBR's oldest entry, where nothing can be seen) with the same
 *   weight; one without the triggering event is kept none of;
 * - TRIG_INSNS: the outcomes in the last `span` instructions before the sample
 *   (end_insn: the sample IP's position), which needs the trace to span at least
 *   that much;
 * - TRIG_CYCLES: see trace_cycle_window (trace_window keeps none).
 * Each kept outcome stands for weight = period / cbt (period / span) executions,
 * so every branch execution is counted with the same expectation. Returns the
 * index of the first kept outcome and sets *weight; returns n (keep none) when
 * the trace is too short. */
size_t trace_window(const struct br_outcome *o, size_t n, int trigger, uint64_t cbt, uint64_t span,
		    uint64_t end_insn, uint64_t end_cycle, uint64_t period, double *weight);

/* The window of a cycle-triggered sample: the outcomes whose cycle (that of the
 * taken branch at or after them, br_outcome.cycle) lies in [x - span, x), where
 * x is the cycle of the counter's overflow on the trace's clock. Every cycle is
 * equally likely to be an overflow, so a branch retiring at cycle t is in the
 * window exactly when x falls in (t, t + span]: `span` cycles out of every
 * `period`, whatever the code around it (docs/cycle-windows.md). Outcomes after
 * the newest taken branch (the walk to the sample IP) are never in it: the
 * taken branch that closes them retires after the overflow. The window must
 * not reach back to the oldest entry (x - span > o[0].cycle): the not-taken
 * branches before it are not in the trace; a window that does is kept as far
 * as the trace goes, and *truncated is set. Returns the first kept index and
 * sets *end (exclusive; first == *end: an empty window, a legitimate count of
 * zero) and *weight = period / span. */
size_t trace_cycle_window(const struct br_outcome *o, size_t n, int64_t x, uint64_t span, uint64_t period,
			  size_t *end, double *weight, int *truncated);

/* The index of the newest taken outcome of a trace (n: none). */
size_t trace_newest_taken(const struct br_outcome *o, size_t n);

#endif
