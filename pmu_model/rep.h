/* The REP unit (seed: "enabling tracing of repeat instructions"): hardware that
 * traces REP-prefixed string instructions, fed by the retired-block stream. A
 * REP string instruction is one instruction that runs its count register down
 * (RCX, or ECX under a 0x67 prefix) or stops early on a condition (repe/repne
 * cmps/scas); the block stream hands over each REP execution whole, with the
 * count at its first execution (rep_count) and the iterations done (rep_iters) —
 * or in parts, when a fault or signal took the thread to a handler in the middle
 * of it (pmu_model/block.h, RB_REP_*).
 *
 * What one execution is: it begins when the thread reaches the REP by program
 * flow and ends when the REP retires. A handler that returns into a REP it
 * interrupted (a page fault fixed by mprotect, a timer's signal) does not begin
 * another execution: the seed copies the count register into RCR at a REP's
 * *first* execution, and the REP an IRET or rt_sigreturn goes back to is that
 * execution's continuation, not a first execution — the operating system saves
 * the unit's state (RCR, the execution counter) with the interrupted context and
 * restores it with that context, as it does for any register the interrupted
 * instruction depends on. So requested stays what the program asked for (300
 * bytes, not 300 and then the 200 left), and an interruption the program cannot
 * see (a kernel interrupt on real hardware) changes no figure. A REP whose handler
 * never returns to it (siglongjmp, death by the signal) ends where it was left,
 * with the iterations done so far.
 *
 * Registers modelled:
 * - control register: RE (repeat enable), SSE (single-step: the trace handler
 *   follows a REP iteration by iteration), TBE (taken-branch enable: completed
 *   taken branches are recorded too);
 * - repeat-count register (RCR): the count register copied at a REP's first
 *   execution; at its last execution RCR − count = iterations actually done;
 * - instruction-information buffer (IIB): N entries filled round robin between
 *   a start and an end pointer, each tagged REP or BRANCH; when it is full the
 *   full flag raises an interrupt, the handler drains it and resets the pointers.
 *   The in-memory variant (REP_MEMBUFFER) writes the entries as bytes to memory
 *   named by a buffer-pointer register, an IB-size register (bytes) and a
 *   next-entry register (offset of the next entry); an entry that would not
 *   fit sets the full flag and interrupts, the handler reads the entries back
 *   from memory and resets next-entry. Entry layout (REP_MEM_ENTRY bytes,
 *   little-endian): u8 kind, u8 end, u8 has_actual, u8 resumed, u32 tid, u64 site,
 *   u64 to, u64 requested, u64 actual, u64 insn. The memory is the unit's own
 *   (at the nominal address REP_MEM_BASE), not the guest's;
 * - REP counters: a REP-occurrence counter one step from overflow (each REP
 *   completion interrupts) and a REP-execution counter counting the iterations
 *   of the REP in progress, read by the handler.
 *
 * Modes (how a REP reaches the handler):
 * - REP_FIRST: interrupt at the first execution; the record has the requested
 *   count (from RCR); the actual count is not known in this mode;
 * - REP_LAST: interrupt at the last execution; requested (RCR) and actual
 *   (RCR − count) are both known; also when the REP is left in the middle
 *   (end REP_END_INTERRUPTED, actual = iterations so far) and, for a REP a handler
 *   returned into, at the end of the continuation (resumed set, actual = the
 *   iterations since it went on: the execution counter restarts at each entry);
 * - REP_BUFFER / REP_MEMBUFFER: the unit writes REP records (requested and
 *   actual) and, with TBE, branch records into the buffer; a full buffer
 *   interrupts; REP_COUNTER: the occurrence counter interrupts at each REP
 *   completion and the handler reads RCR and the execution counter.
 * With SSE set the unit also traps after every iteration of a REP (a STEP
 * record: the count register before it and the iteration's index), so the
 * handler follows the REP iteration by iteration; the STEPs of a REP come
 * before its REP record (modes last, counter) or after it (first).
 * In REP_FIRST only a first execution interrupts (a continuation is none).
 * Interrupts are taken at instruction boundaries and never change a count:
 * a PMI that lands inside a REP sees the same figures as one that does not.
 * No Unicorn, no I/O: records go to the sink. */
#ifndef PMUSIM_PMU_MODEL_REP_H
#define PMUSIM_PMU_MODEL_REP_H

#include <stddef.h>
#include <stdint.h>

#include "pmu_model/block.h"

/* REP_PATCH is the software method (sim_rep_patch in sim/sim.h), not the unit's. */
enum rep_mode { REP_FIRST = 0, REP_LAST, REP_BUFFER, REP_MEMBUFFER, REP_COUNTER, REP_PATCH, REP_MODE_COUNT };

/* Why a REP stopped. */
enum rep_end {
	REP_END_COUNT = 0,   /* the count register ran out */
	REP_END_CONDITION,   /* repe/repne: the condition ended it with count left */
	REP_END_INTERRUPTED, /* left in the middle: a fault or signal took the thread to a
	                      * handler, or the run stopped (not known in REP_FIRST); a
	                      * resumed record may continue it */
};

#define REP_MEM_ENTRY 48
#define REP_MEM_BASE  0x7ee000000000ULL

#define REP_F_RE  0x1u
#define REP_F_SSE 0x2u
#define REP_F_TBE 0x4u

enum rep_entry_kind { REP_ENTRY_REP = 0, REP_ENTRY_BRANCH, REP_ENTRY_STEP };

/* One record the handler gets (an IIB entry, or what an interrupt reads). */
struct rep_record {
	uint8_t kind;        /* enum rep_entry_kind */
	uint8_t end;         /* enum rep_end (REP records) */
	uint8_t has_actual;  /* 0 in REP_FIRST mode */
	uint8_t resumed;     /* REP: continues an execution an earlier record (end
	                      * REP_END_INTERRUPTED) began; requested is that one's */
	uint32_t tid;
	uint64_t site;       /* REP, STEP: the instruction; BRANCH: from */
	uint64_t to;         /* BRANCH: target */
	uint64_t requested;  /* REP: the count register at the first execution;
	                      * STEP: the count register before this iteration */
	uint64_t actual;     /* REP: iterations done (since the REP was entered or went
	                      * on); STEP: this iteration's index in its execution (0-based) */
	uint64_t insn;       /* instructions retired before the record's instruction */
};

struct rep_handler {
	/* one interrupt: the records it reads (a drained buffer, or one REP) */
	void (*interrupt)(void *ctx, const struct rep_record *r, size_t n);
	void *ctx;
};

struct rep_config {
	enum rep_mode mode;
	uint32_t control;    /* REP_F_*: RE is needed for anything to happen */
	uint32_t entries;    /* buffer modes: IIB entries (>= 1) */
};

struct rep_unit;

/* 0, or PMUSIM_ERR_ARG (bad mode, no buffer entries) / PMUSIM_ERR_NOMEM. */
int rep_unit_new(const struct rep_config *cfg, struct rep_handler h, struct rep_unit **out);
void rep_unit_free(struct rep_unit *u);
/* The block sink that feeds u. */
struct block_sink rep_unit_sink(struct rep_unit *u);
/* The run ended: a buffer mode drains what is left (one last interrupt). */
void rep_unit_flush(struct rep_unit *u);

/* Registers, as the handler reads them. */
uint64_t rep_unit_rcr(const struct rep_unit *u);          /* repeat-count register */
uint64_t rep_unit_exec_counter(const struct rep_unit *u); /* iterations of the last REP */
uint64_t rep_unit_occurrences(const struct rep_unit *u);  /* REP executions seen */
uint64_t rep_unit_interrupts(const struct rep_unit *u);
uint32_t rep_unit_buffer_fill(const struct rep_unit *u);  /* entries between start and end */
/* REP_MEMBUFFER: the memory and its buffer-pointer, IB-size and next-entry registers. */
const uint8_t *rep_unit_memory(const struct rep_unit *u, uint64_t *bp, uint64_t *ibsize, uint64_t *next);

/* "first", "last", "buffer", "membuffer", "counter"; -1 for another name. */
int rep_mode_parse(const char *name);
const char *rep_mode_name(int mode);

#endif
