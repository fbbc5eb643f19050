/* pmusim record -g / --call-graph: a callchain in every sample of the -e
 * events, as perf record -g gives one. Three sources:
 *  - tstack (-g): the thread-stack unit's work area of the sampled thread
 *    (cli/record_tstack.h), exact: the return addresses of the calls in
 *    progress, innermost first;
 *  - dwarf[,SIZE]: no chain; the registers and SIZE bytes of stack from RSP
 *    (PERF_SAMPLE_REGS_USER, PERF_SAMPLE_STACK_USER), as perf record
 *    --call-graph dwarf writes them, for perf's unwinder;
 *  - fp: the frame-pointer walk Linux does for a user callchain
 *    (arch/x86/events/core.c, perf_callchain_user: from RBP, pairs {saved RBP,
 *    return address} until a read fails or perf_event_max_stack, 127, entries).
 * Where: the chain, the registers and the stack are the thread's where the
 * machine takes the interrupt, after the block holding the sample's
 * instruction: its first address is the instruction the thread goes on at,
 * which the sample's IP (the eventing instruction, as PEBS gives it) precedes
 * in the same block. Real hardware does the same: the kernel takes a PEBS
 * sample's callchain from the interrupt's registers, not the PEBS record's.
 * With the truth asked for, each sample adds the machine's own reading of the
 * same stack at the same moment to the truth's "stack_snapshots", in sample
 * order, for pmusim validate --stacks. */
#ifndef PMUSIM_CLI_RECORD_CALLGRAPH_H
#define PMUSIM_CLI_RECORD_CALLGRAPH_H

#include <stdint.h>

#include "cli/record_tstack.h"
#include "profiler/perfdata.h"

enum callgraph_mode { CG_NONE = 0, CG_TSTACK, CG_DWARF, CG_FP };

#define CG_DWARF_DEFAULT 8192u /* perf record --call-graph dwarf's default dump size */
#define CG_FP_MAX_STACK 127u   /* kernel.perf_event_max_stack's default */

struct callgraph_options {
	enum callgraph_mode mode;
	uint32_t dwarf_size;
};

/* Parses --call-graph's MODE[,SIZE] (tstack, dwarf[,SIZE], fp); refuses lbr
 * and anything else with one line naming cmd. 0 or -1. */
int callgraph_parse(const char *cmd, const char *spec, struct callgraph_options *o);

/* The sample_type bits and the attr's register mask and stack size a mode
 * adds to the events sampled. */
uint64_t callgraph_sample_type(const struct callgraph_options *o);

/* Fills the callchain (and for dwarf the registers and stack) of s, a sample
 * of thread tid of process pid that goes on at at (pmu_sample.next; in a
 * rewritten run, the program's instruction there, sim_dbr_where), from tr (its
 * unit for tstack; its machine, buffers and truth for all modes); regs: room
 * for 24 registers. With tr->truth, adds the machine's reading of the stack as
 * a snapshot. 0 or a negative pmusim_err. */
int callgraph_fill(const struct callgraph_options *o, struct tstack_recording *tr, uint32_t tid, uint32_t pid,
		   uint64_t at, struct perf_sample *s, uint64_t *regs);

#endif
