/* The output of `pmusim uniformity`: text, JSON and the z plot. */
#ifndef PMUSIM_CLI_UNIFORMITY_REPORT_H
#define PMUSIM_CLI_UNIFORMITY_REPORT_H

#include <stdint.h>
#include <stdio.h>

#include "cli/uniformity_runs.h"
#include "profiler/uniformity.h"

struct unif_report {
	const char *program;
	int method; /* enum prof_method */
	size_t k;
	uint64_t seed, pmu_seed0;
	const struct unif_opts *opts;
	const struct unif_run *runs; /* k of them: samples, edge names */
	const struct unif_result *r;
};

/* The summary, the verdict and the biased edges (or, when none is, the hottest
 * tested ones). */
void unif_report_text(FILE *f, const struct unif_report *u);
/* One JSON object (keys in `pmusim uniformity --help`). */
void unif_report_json(FILE *f, const struct unif_report *u);
/* The plot of z against the exact count (profiler/svg.h) into of, an output of outs
 * opened before the runs (committed here); 0, or -1 with a message printed. */
struct outputs;
struct outfile;
int unif_report_svg(struct outputs *outs, struct outfile *of, const struct unif_report *u);

#endif
