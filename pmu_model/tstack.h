/* The thread-stack unit (seed: "autonomous hardware-assisted thread stack
 * tracking"), fed by the retired-block stream: the modelled processor keeps
 * each thread's call stack in a work area of its own, with no help from the
 * program, so a tracer only has to copy the areas now and then.
 *
 * Registers: a control bit (tracking on/off: it may start at any moment, with
 * calls already in progress; a return with no matching entry is a no-op), and
 * per area a start-address register, a length register (entries) and a
 * top-of-stack register; a current-area register names the running thread's
 * area and changes at every context switch (a block marked new_context of
 * another thread). The OS side (sim/ in the machine, a callback here) gives
 * every thread an area when it first runs, of the size the tracer asked for.
 *
 * On a call (direct or indirect) the unit pushes {callee, return address,
 * stack pointer after the call (where the return address is), stamp}. A
 * return that goes through an entry (where the ret went is its return address,
 * or it has none: a marker's; its slot lies below the new stack pointer) pops
 * every entry whose slot lies below the new stack pointer (frames a longjmp or
 * an exception left too); a return that matches no entry is a no-op. History mode appends ENTRY and EXIT records instead, so the area holds
 * the thread's whole entry/exit history. A push that would pass the area's
 * length raises an interrupt: the OS allocates a larger area (twice the
 * length), copies the entries and updates the start and length registers;
 * nothing is lost.
 *
 * Entries as they lie in the area (32 bytes, little-endian, like struct
 * tstack_entry): +0 callee, +8 return address, +16 stack pointer, +24 stamp
 * (bits 0..59: instructions retired, all threads, when it was written; bit 63:
 * an EXIT record of history mode, bit 62: the EXIT is an indirect jump that
 * may unwind frames, bit 61: a tail call replacing the newest routine, bit 60:
 * a signal frame, or on an EXIT, the signal's return).
 * History records: ENTRY {callee, return address, RSP}; EXIT {the ret or jump,
 * where it went, RSP after it}; tail call {the routine jumped to}.
 *
 * Signals: to the processor a signal delivery is an interrupt and an
 * interrupt return into the handler, and rt_sigreturn another such pair back
 * to the interrupted instruction; the OS tells the unit of both
 * (tstack_signal_enter, tstack_signal_return). The delivery pushes two
 * entries, as the frames lie in the signal frame the OS built: the
 * interrupted frame {restorer, the interrupted IP, the slot of the saved RIP},
 * marked as a signal frame, then the handler {handler, restorer, the frame's
 * pretcode slot} (the handler is entered as if called from the restorer, which
 * is where its ret goes). A callchain so reads handler, restorer, interrupted
 * IP, the interrupted code's callers — the frames perf's DWARF unwinder shows
 * (__restore_rt, then the interrupted function). The handler's ret pops its
 * entry; the sigreturn pops every entry down to the newest signal frame and
 * it; a siglongjmp out of the handler pops them as any longjmp does.
 *
 * Leaving routines without ret: an indirect jump that raises the stack pointer
 * above entries' slots pops them (longjmp, siglongjmp: the unwind heuristic,
 * needs rb->sp). Markers treat other instructions as a call or a return, by
 * address, instead of what they are: "call" pushes at it (callee = where it
 * goes, return address 0), "return" pops the entries whose slots lie below
 * the stack pointer after it (just the newest when that is not known). A
 * marked branch is seen when its block retires; the machine tells the unit
 * about any other marked instruction (tstack_mark_retired), since RSP inside
 * a block is not in the retired-block record. The tail-call heuristic: a
 * jump, direct or indirect, whose target is a known function entry
 * (tstack_add_function) replaces the newest entry's callee (an indirect jump
 * through the PLT is one too).
 * No Unicorn, no I/O. */
#ifndef PMUSIM_PMU_MODEL_TSTACK_H
#define PMUSIM_PMU_MODEL_TSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "pmu_model/block.h"

enum tstack_mode { TSTACK_STACK = 0, TSTACK_HISTORY };
enum tstack_marker { TSTACK_MARK_CALL = 0, TSTACK_MARK_RETURN };

struct tstack_entry {
	uint64_t callee;     /* the routine entered (history EXIT: the ret or jump that left) */
	uint64_t ret;        /* the call site's return address (0 for markers) */
	uint64_t sp;         /* stack pointer after the call: its return address's slot (0: not known) */
	uint64_t stamp;      /* instructions retired (all threads) when written | TSTACK_EXIT_BIT */
};
#define TSTACK_EXIT_BIT (1ULL << 63)
#define TSTACK_UNWIND_BIT (1ULL << 62)
#define TSTACK_TAIL_BIT (1ULL << 61)
#define TSTACK_SIGNAL_BIT (1ULL << 60)
#define TSTACK_STAMP_MASK (TSTACK_SIGNAL_BIT - 1)
#define TSTACK_ENTRY_SIZE 32

/* A thread's work area and its registers. */
struct tstack_area {
	uint32_t tid;
	uint64_t start;      /* start-address register (where the OS put it) */
	uint64_t length;     /* length register: entries it holds */
	uint64_t top;        /* top-of-stack register: entries in use */
	struct tstack_entry *mem;
};

/* The OS side: an area for a thread that has none, a larger one on overflow,
 * and freeing it when the thread is gone. alloc sets start (an address of the
 * OS's choosing) and mem (length zeroed entries, which the OS may also show at
 * start in the thread's address space); grow moves the entries to a new area
 * of new_length and updates start, length and mem. Both return 0 or a negative
 * pmusim_err. NULL callbacks: the unit allocates from the host heap itself. */
struct tstack_os {
	int (*alloc)(void *ctx, struct tstack_area *a, uint64_t length);
	int (*grow)(void *ctx, struct tstack_area *a, uint64_t new_length);
	void (*release)(void *ctx, struct tstack_area *a);
	void *ctx;
};

struct tstack_config {
	enum tstack_mode mode;
	uint64_t area_entries;  /* the size the tracer tells the OS (>= 1) */
	int enabled;            /* the control bit at the start */
};

struct tstack_unit;

int tstack_new(const struct tstack_config *cfg, struct tstack_os os, struct tstack_unit **out);
void tstack_free(struct tstack_unit *u);
struct block_sink tstack_sink(struct tstack_unit *u);

/* The control bit (tracking can start at any moment). */
void tstack_enable(struct tstack_unit *u, int on);
/* Markers by address, and function entries for the tail-call heuristic. */
int tstack_add_marker(struct tstack_unit *u, uint64_t addr, enum tstack_marker kind);
int tstack_add_function(struct tstack_unit *u, uint64_t entry);
/* The marker at addr (enum tstack_marker), or -1. */
int tstack_marker_at(const struct tstack_unit *u, uint64_t addr);
/* A marked instruction that is not a branch retired on thread tid: next is
 * the instruction after it, sp the stack pointer after it. Called in program
 * order with the retired blocks (before the block holding the instruction
 * retires, or right after it when the instruction ended its block). */
void tstack_mark_retired(struct tstack_unit *u, uint32_t tid, uint64_t addr, uint64_t next, uint64_t sp);

/* A signal delivered to thread tid, after the interrupted block retired and
 * before the handler's first block (see "Signals" above). */
struct tstack_signal {
	uint32_t tid;
	uint64_t ip;        /* the interrupted instruction: where the thread goes on */
	uint64_t ip_slot;   /* where the frame keeps the saved RIP */
	uint64_t handler;
	uint64_t restorer;  /* the handler's return address (sa_restorer) */
	uint64_t frame;     /* RSP at the handler's entry: the slot holding restorer */
};
void tstack_signal_enter(struct tstack_unit *u, const struct tstack_signal *sig);
/* rt_sigreturn of thread tid, going on at ip with the stack pointer sp:
 * the entries down to the newest signal frame go, that one too (none: those
 * whose slots lie below sp). Before the block of the system call retires. */
void tstack_signal_return(struct tstack_unit *u, uint32_t tid, uint64_t ip, uint64_t sp);

/* The OS tells the unit about threads: one was created (its area is allocated
 * now; with copy_from, a thread whose entries it starts with: fork copies the
 * parent's stack), one executed a new program (its area empties: reset, which
 * is also a tracer resetting the top register after draining a history), one
 * ended (its area is freed). created: 0 or a negative pmusim_err. */
int tstack_thread_created(struct tstack_unit *u, uint32_t tid, uint32_t copy_from);
void tstack_thread_reset(struct tstack_unit *u, uint32_t tid);
void tstack_thread_exited(struct tstack_unit *u, uint32_t tid);

/* A tracer's reading of history records: applies n records to stack (entries
 * on the host heap, grown with realloc as needed) as the stack mode would.
 * 0 or PMUSIM_ERR_NOMEM. */
int tstack_replay(struct tstack_area *stack, const struct tstack_entry *rec, size_t n);

/* The area of a thread (NULL when it has none yet) and the current one. */
const struct tstack_area *tstack_area(const struct tstack_unit *u, uint32_t tid);
const struct tstack_area *tstack_current(const struct tstack_unit *u);
/* Overflow interrupts taken so far. */
uint64_t tstack_overflows(const struct tstack_unit *u);
/* Areas, in the order their threads first ran. */
size_t tstack_nareas(const struct tstack_unit *u);
const struct tstack_area *tstack_area_at(const struct tstack_unit *u, size_t i);

#endif
