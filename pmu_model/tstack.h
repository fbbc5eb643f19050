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
 * On a call (direct or indirect) the unit pushes {callee, return address}; on a
 * return it pops. History mode appends ENTRY and EXIT records instead, so the
 * area holds the thread's whole entry/exit history. A push that would pass the
 * area's length raises an interrupt: the OS allocates a larger area, copies
 * the entries and updates the start and length registers; nothing is lost.
 *
 * Markers treat instructions that enter or leave routines without call or ret
 * as one: by address, "call" (push at it, callee = where it goes) or "return"
 * (pop); and the tail-call heuristic: a direct jump whose target is a known
 * function entry (tstack_add_function) replaces the top entry's callee.
 * No Unicorn, no I/O. */
#ifndef PMUSIM_PMU_MODEL_TSTACK_H
#define PMUSIM_PMU_MODEL_TSTACK_H

#include <stddef.h>
#include <stdint.h>

#include "pmu_model/block.h"

enum tstack_mode { TSTACK_STACK = 0, TSTACK_HISTORY };
enum tstack_kind { TSTACK_ENTRY = 0, TSTACK_EXIT };
enum tstack_marker { TSTACK_MARK_CALL = 0, TSTACK_MARK_RETURN };

struct tstack_entry {
	uint64_t callee;     /* the routine entered */
	uint64_t ret;        /* the call site's return address (0 for markers and tail calls) */
	uint64_t insn;       /* instructions retired (all threads) when it was pushed */
	uint8_t kind;        /* enum tstack_kind, history mode */
};

/* A thread's work area and its registers. */
struct tstack_area {
	uint32_t tid;
	uint64_t start;      /* start-address register (where the OS put it) */
	uint64_t length;     /* length register: entries it holds */
	uint64_t top;        /* top-of-stack register: entries in use */
	struct tstack_entry *mem;
};

/* The OS side: an area for a thread that has none, and a larger one on
 * overflow. alloc sets start (an address of the OS's choosing) and mem for
 * length entries; grow moves the entries to a new area of new_length and
 * updates start, length and mem. Both return 0 or a negative pmusim_err.
 * NULL callbacks: the unit allocates from the host heap itself. */
struct tstack_os {
	int (*alloc)(void *ctx, struct tstack_area *a, uint64_t length);
	int (*grow)(void *ctx, struct tstack_area *a, uint64_t new_length);
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

/* The area of a thread (NULL when it has none yet) and the current one. */
const struct tstack_area *tstack_area(const struct tstack_unit *u, uint32_t tid);
const struct tstack_area *tstack_current(const struct tstack_unit *u);
/* Overflow interrupts taken so far. */
uint64_t tstack_overflows(const struct tstack_unit *u);
/* Areas, in the order their threads first ran. */
size_t tstack_nareas(const struct tstack_unit *u);
const struct tstack_area *tstack_area_at(const struct tstack_unit *u, size_t i);

#endif
