/* pmusim run --callgrind FILE: the run's exact profile in callgrind's format
 * (profiler/callgrind_out.h), for callgrind_annotate and kcachegrind. */
#ifndef PMUSIM_CLI_RUN_CALLGRIND_H
#define PMUSIM_CLI_RUN_CALLGRIND_H

#include "cli/outputs.h"
#include "cli/program.h"
#include "pmu_model/pmu.h"
#include "profiler/func_costs.h"

struct run_callgrind {
	const char *path;       /* --callgrind, NULL: none */
	struct outfile *out;
	struct pmu *pmu;        /* the timing model, cycles per instruction */
	struct func_costs *fc;
};

/* Before program_load: the output opened and the PMU given to p; 0 or -1 (message
 * printed). */
int run_callgrind_open(struct run_callgrind *cg, struct program *p);
/* After program_load: the sinks; 0 or -1. */
int run_callgrind_attach(struct run_callgrind *cg, struct program *p);
/* After the run: the file written and committed; 0 or -1. */
int run_callgrind_write(struct run_callgrind *cg, struct program *p);
void run_callgrind_free(struct run_callgrind *cg);

#endif
