/* pmusim record --tstack: the thread-stack unit (pmu_model/tstack.h) keeps every
 * thread's call stack in a work area the machine's OS side put in guest memory
 * (sim.h, "Call stacks"); this is the tracing application. Every --tstack-period
 * of simulated time it wakes and copies the work areas of the threads of
 * interest (the running one, all, or the suspended ones) out of guest memory,
 * and writes each as a sample of the event "pmusim_tstack": IP = where the
 * thread is (the next instruction of the running one; where a suspended one
 * goes on), PID/TID, TIME, PERIOD = the tracing period in ns, and a
 * PERF_SAMPLE_CALLCHAIN as perf_event.h lays it out for user stacks:
 * PERF_CONTEXT_USER, IP, then the return addresses of the calls in progress,
 * innermost first (frames entered by a "call" marker have none and are left
 * out; a signal frame's return address is read from the frame's saved RIP,
 * which the handler may have changed). With the truth asked for, the
 * machine's true stack of the same thread at the same moment goes to the
 * truth ("stack_snapshots").
 *
 * --tstack-start N sets the control bit only once N instructions retired:
 * tracking starts with calls in progress, which the unit never sees; the truth
 * then holds the calls made from that moment on (sim_true_stacks_start).
 *
 * History mode: the areas hold entry/exit records; the tracer drains them at
 * every wake-up and rebuilds each thread's stack from them (tstack_replay).
 *
 * The DWARF baseline (--tstack-dwarf SIZE): instead of the work area, each
 * snapshot carries the thread's registers (PERF_SAMPLE_REGS_USER, perf's x86
 * mask 0xff0fff) and SIZE bytes of its stack from RSP (PERF_SAMPLE_STACK_USER)
 * with an empty callchain, as `perf record --call-graph dwarf,SIZE` writes
 * them, so that perf unwinds the stacks itself; the same run with the unit
 * gives the same snapshots (the machine is deterministic) to compare. */
#ifndef PMUSIM_CLI_RECORD_TSTACK_H
#define PMUSIM_CLI_RECORD_TSTACK_H

#include <stdint.h>

#include "pmu_model/pmu.h"
#include "pmu_model/tstack.h"
#include "profiler/perfdata.h"
#include "sim/sim.h"
#include "sim/truth.h"

#define TSTACK_EVENT_NAME "pmusim_tstack"
#define TSTACK_REGS_MASK 0xff0fffULL     /* perf's PERF_REGS_MASK for x86-64: no DS, ES, FS, GS */
#define TSTACK_DWARF_MAX 64992u          /* stack bytes that still fit a sample record */

enum tstack_threads { TSTACK_RUNNING = 0, TSTACK_ALL, TSTACK_SUSPENDED };

struct tstack_options {
	int on;
	enum tstack_mode mode;
	uint64_t period_ns;            /* default 10 ms */
	uint64_t area_entries;         /* default 256 */
	int threads;                   /* enum tstack_threads */
	uint32_t dwarf_stack;          /* --tstack-dwarf: stack bytes per snapshot, 0: off */
	uint64_t start;                /* --tstack-start: instructions before the control bit is set */
	const char *marks[64];         /* "call:WHERE" / "return:WHERE" */
	size_t nmarks;
};

struct tstack_recording {
	struct tstack_options opt;
	struct tstack_unit *unit;      /* the machine's */
	struct sim *sim;
	struct truth *truth;           /* NULL without --truth/--truth-json */
	struct perfdata_writer *w;     /* set once the file is open */
	uint64_t id;
	uint64_t (*now_ns)(void *ctx);
	void *ctx;
	/* now_ns is clock's cycles * 1000 / clock_mhz: a block before the next
	 * snapshot is a comparison of cycles (next_cycle) */
	const struct pmu *clock;
	uint32_t clock_mhz;
	uint64_t next_ns;
	uint64_t next_cycle;           /* the first cycle at which now_ns reaches next_ns */
	uint64_t insns;                /* retired so far, all threads */
	int started;                   /* the control bit is set */
	int err;
	uint64_t snapshots, frames;
	uint64_t *chain;
	size_t capchain;
	uint8_t *buf;                  /* bytes copied out of a work area */
	size_t capbuf;
	uint8_t *stack;                /* --tstack-dwarf: the stack dump */
	struct placed { char *path; uint64_t bias; } *placed; /* files whose functions the unit has */
	size_t nplaced, capplaced;
	struct tstack_area *replay;    /* history mode: the stacks rebuilt, per thread */
	size_t nreplay, capreplay;
};

/* Parses the option values: 0 or -1 (message printed). */
int tstack_parse_period(const char *arg, uint64_t *ns);
int tstack_parse_threads(const char *arg, int *which);
int tstack_parse_mode(const char *arg, enum tstack_mode *mode);

/* Creates the unit in the machine, applies markers (by address or by a symbol
 * of the program) and gives it the program's function entries for the
 * tail-call heuristic, and adds the tracer after it. 0 or -1 (message printed). */
int tstack_recording_init(struct tstack_recording *tr, struct sim *sim, struct truth *truth);
/* The functions of a library mapped later, for the tail-call heuristic. */
void tstack_recording_add_functions(struct tstack_recording *tr, const char *path, uint64_t bias);
void tstack_recording_free(struct tstack_recording *tr);

#endif
