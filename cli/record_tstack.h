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
	uint8_t *stack;                /* --tstack-dwarf, --call-graph dwarf: the stack dump */
	size_t capstack;
	struct placed { char *path; uint64_t bias; } *placed; /* files whose functions the unit has */
	size_t nplaced, capplaced;
	struct tstack_area *replay;    /* history mode: the stacks rebuilt, per thread */
	size_t nreplay, capreplay;
};

/* Parses the option values: 0 or -1 (message printed). tstack_parse_period reads a
 * time; opt names the option in the message (--ibs-window reads its times with it). */
int tstack_parse_period(const char *opt, const char *arg, uint64_t *ns);
int tstack_parse_threads(const char *arg, int *which);
int tstack_parse_mode(const char *arg, enum tstack_mode *mode);

/* Creates the unit in the machine (its block consumer added now: consumers
 * added later see each block after the unit), applies markers (by address or
 * by a symbol of the program) and gives it the program's function entries for
 * the tail-call heuristic. With truth, the machine keeps its true stacks too.
 * 0 or -1 (message printed). */
int tstack_recording_init(struct tstack_recording *tr, struct sim *sim, struct truth *truth);
/* Adds the tracer (the periodic snapshots of --tstack) as a block consumer:
 * after the PMU's, whose clock it reads. 0 or -1 (message printed). */
int tstack_recording_trace(struct tstack_recording *tr);

/* Thread tid's stack as the unit has it now, as a PERF_SAMPLE_CALLCHAIN:
 * PERF_CONTEXT_USER, ip, the return addresses innermost first; in tr->chain,
 * *n entries (valid until the next call). 0 or a negative pmusim_err. */
int tstack_recording_chain(struct tstack_recording *tr, uint32_t tid, uint64_t ip, size_t *n);
/* The machine's own reading of thread tid's stack now (sim_true_stack: its
 * registers and memory, not the unit) added to the truth as a snapshot at ip.
 * Overwrites tr->chain. 0 or a negative pmusim_err. */
int tstack_recording_truth(struct tstack_recording *tr, uint32_t tid, uint32_t pid, uint64_t ip);
/* What `perf record --call-graph dwarf,SIZE` puts in a sample: thread tid's
 * registers now (perf's x86-64 mask TSTACK_REGS_MASK; IP replaced by ip) into
 * regs (24 entries) and SIZE bytes of its stack from RSP (fewer where the
 * mapping ends) into tr->stack; s gets them and an empty callchain. at: where
 * the thread stands (ip in a run not rewritten); inside an indirect jump's
 * compare chain, RSP and the dump are the program's (sim_dbr_sp_off), the
 * scratch register and the flags the chain's. 0 or a negative pmusim_err. */
int tstack_dump_stack(struct tstack_recording *tr, uint32_t tid, uint64_t ip, uint64_t at, uint32_t size,
		      struct perf_sample *s, uint64_t *regs);

/* The functions of a library mapped later, for the tail-call heuristic. */
void tstack_recording_add_functions(struct tstack_recording *tr, const char *path, uint64_t bias);
void tstack_recording_free(struct tstack_recording *tr);

#endif
