/* The K recordings of `pmusim uniformity`: each run is a child process that
 * records the program (`pmusim record` with its own --pmu-seed and the run's
 * exact truth) into a private directory, builds the edge profile with the
 * chosen method, reads the truth through the same binary and hands both back as
 * a file of edges; at most `jobs` children run at a time. The parent reads the
 * runs in their order, so the results do not depend on jobs or timing.
 *
 * Every file lives under one temporary directory ($TMPDIR, else /tmp,
 * "pmusim-uniformity.XXXXXX") that is removed whatever happens: success, a failed
 * run, or SIGINT, SIGTERM or SIGHUP unless ignored (the children are stopped
 * first, then the directory is removed and pmusim dies of the same signal).
 * Children die with their parent (PR_SET_PDEATHSIG). */
#ifndef PMUSIM_CLI_UNIFORMITY_RUNS_H
#define PMUSIM_CLI_UNIFORMITY_RUNS_H

#include <stddef.h>
#include <stdint.h>

#include "cli/profile_args.h"
#include "profiler/uniformity.h"

struct unif_spec {
	char **record_argv;     /* "record", options, NULL-terminated; no -o, --truth, --pmu-seed */
	char **prog_argv;       /* PROG ARGS, NULL-terminated */
	uint64_t pmu_seed0;     /* run i records with --pmu-seed pmu_seed0 + i */
	size_t k;               /* runs */
	unsigned jobs;          /* children at a time (>= 1) */
	const char *stdin_path; /* the program's standard input in every run; NULL: /dev/null */
	const struct profile_args *pa; /* method, window, binary; its input is ignored */
};

/* One run's result. */
struct unif_run {
	struct unif_obs *obs;      /* every edge of the profile or the truth */
	char **from_sym, **to_sym; /* their names ("sym+0xoff", else the address) */
	size_t n;
	uint64_t samples, used, dropped;
	size_t unresolved; /* truth lines naming no function of the binary */
	char *binary;      /* the profiled binary's path */
};

/* Runs the k recordings; 0 with runs[0..k-1] filled, or -1 after one line on
 * stderr (a run whose program exited with a status other than 0 or 124 — the
 * --max-insns limit —, a failed recording or profile, no temporary directory).
 * On SIGINT, SIGTERM or SIGHUP it does not return (see above). */
int unif_runs(const struct unif_spec *s, struct unif_run *runs, const char *cmd);
void unif_run_free(struct unif_run *r);

#endif
