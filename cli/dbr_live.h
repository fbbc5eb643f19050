/* `pmusim run --dbr`: the live rewriter. The run plays a dynamic binary
 * rewriter's service and agent for the program it runs: op samples
 * (instruction mode, --dbr-period) in windows of --dbr-window instructions; at
 * the end of each window the selector of docs/regions.md runs on that window's
 * samples (mapped back to the program's addresses) and the regions it keeps are
 * emitted (profiler/dbr_code.h, --dbr-layout) and installed
 * (sim_dbr_install: the patch takes effect at the next block, outside the
 * engine); an installed region whose share of a window's samples falls below
 * --dbr-unpatch is unpatched (its code stays for a thread inside it). With -v,
 * one line per installation and unpatching and a summary at the end. */
#ifndef PMUSIM_CLI_DBR_LIVE_H
#define PMUSIM_CLI_DBR_LIVE_H

#include <stddef.h>
#include <stdint.h>

#include "cli/report_regions.h"

struct program;
struct pmu;
struct binary;
struct hot_build;
struct live_region;

struct dbr_live {
	int on;           /* --dbr */
	int given;        /* --dbr-window, --dbr-period or --dbr-unpatch was given */
	uint64_t window;  /* --dbr-window: instructions per window */
	uint64_t period;  /* --dbr-period: op sampling period (instructions) */
	double unpatch;   /* --dbr-unpatch: share of a window's samples below which a region goes */
	struct region_args args;
	struct program *p;
	struct pmu *pmu;
	struct binary *bin;
	struct hot_build *hb;
	struct live_region *reg;
	size_t nreg, capreg;
	uint64_t windows, installed, unpatched, samples;
	uint64_t covered; /* samples of the window on code of a patched region */
	int failed; /* out of memory: no more selections */
};

#define DBR_LIVE_WINDOW 1000000
#define DBR_LIVE_PERIOD 256
#define DBR_LIVE_UNPATCH 0.01

void dbr_live_init(struct dbr_live *d);
/* --dbr-window, --dbr-period, --dbr-unpatch values: 0 or -1 (one line printed). */
int dbr_live_option(struct dbr_live *d, const char *cmd, const char *opt, const char *arg);
/* After program_load (sim_options.dbr set): the op sampler and the windows. 0 or
 * -1 (message printed). */
int dbr_live_start(struct dbr_live *d, struct program *p);
/* After the run: with -v the summary. */
void dbr_live_tell(const struct dbr_live *d);
void dbr_live_free(struct dbr_live *d);

#endif
