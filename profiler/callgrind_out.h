/* An exact profile in callgrind's format (Valgrind's "Callgrind Format
 * Specification", valgrind.org/docs/manual/cl-format.html), for
 * callgrind_annotate, kcachegrind and qcachegrind: `positions: instr`, events
 * Ir (instructions retired), Cycles (the timing model's), Bc and Bcm
 * (conditional branches and their mispredictions), Bi and Bim (indirect jumps
 * and calls and their mispredictions); a cost line per instruction that ran,
 * grouped by object file and function; and per call site and callee, the calls
 * and their inclusive costs (calls= lines), from profiler/func_costs.h's
 * shadow stacks. Functions are named by their symbols (a local whose name
 * another function has too gets BOLT's "/N"), the file of each as "???", as
 * callgrind names code without debugging information.
 * No Unicorn; the same inputs give the same bytes. */
#ifndef PMUSIM_PROFILER_CALLGRIND_OUT_H
#define PMUSIM_PROFILER_CALLGRIND_OUT_H

#include <stdint.h>
#include <stdio.h>

#include "pmu_model/pmu.h"
#include "profiler/func_costs.h"

struct cg_source {
	struct func_costs *fc;  /* with detail, finished */
	/* the figures of run id's instructions (pmu_insn_figures), NULL for none */
	const struct pmu_insn_figures *(*insn)(void *ctx, uint32_t id);
	/* the function holding addr (its first instruction; 0: no symbol), its name
	 * and the host path of the file mapped there ("???" when none) */
	uint64_t (*func_of)(void *ctx, uint64_t addr);
	const char *(*name_of)(void *ctx, uint64_t func, char *buf, size_t len);
	const char *(*object_of)(void *ctx, uint64_t addr);
	void *ctx;
	const char *creator, *cmd; /* the header's creator and cmd lines */
	uint32_t pid;
};

/* Writes the profile to f; 0, PMUSIM_ERR_NOMEM, or PMUSIM_ERR_IO. */
int callgrind_write(FILE *f, const struct cg_source *src);

#endif
