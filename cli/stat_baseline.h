/* pmusim stat --json: a CI baseline of one run, as one JSON document (docs/ci.md
 * describes it): what it is a baseline of (the program's name, build id and
 * arguments, pmusim's version, the options that change numbers), the exit
 * status, every counted event's exact count, and per function the exact self
 * and inclusive costs (profiler/func_costs.h). Nothing in it depends on the
 * host, the working directory, the time or the user: the same program, named by
 * the same path (argv[0], which the program's stack holds), options and pmusim
 * give the same bytes; so does the kind of file its standard streams are (a
 * terminal makes stdio ask isatty). `pmusim diff` reads it back. */
#ifndef PMUSIM_CLI_STAT_BASELINE_H
#define PMUSIM_CLI_STAT_BASELINE_H

#include <stdio.h>

#include "cli/eventlist.h"
#include "cli/program.h"
#include "pmu_model/pmu.h"
#include "profiler/func_costs.h"

#define BASELINE_FORMAT 1

/* Writes the baseline of the run p made (status: its exit status) to f; fc
 * finished. 0 or a negative pmusim_err. */
int baseline_write(FILE *f, const struct program *p, const struct pmu *pmu, const struct eventlist *el,
		   struct func_costs *fc, int status);

#endif
