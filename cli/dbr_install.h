/* `--dbr-install R.json` (run, stat, record): the replacement code of the regions
 * `pmusim report --regions --format json` selected for this program, emitted
 * (profiler/dbr_code.h) and installed in the guest before it starts
 * (sim_dbr_install): the program runs the rewritten code, its output unchanged;
 * the PMU model counts what the rewritten code does (its cycles, branches,
 * LBR), while the ground truth is the original program's (sim/dbr_map.h).
 * --dbr-layout identity|hot chooses the layout (default hot). */
#ifndef PMUSIM_CLI_DBR_INSTALL_H
#define PMUSIM_CLI_DBR_INSTALL_H

#include <stddef.h>
#include <stdint.h>

struct program;
struct rset;
struct dbr_code;

struct dbr_install {
	const char *path; /* --dbr-install */
	int identity;     /* --dbr-layout identity (else hot) */
	int layout_given; /* --dbr-layout was on the command line */
	struct rset *set;
	struct dbr_code **code; /* per region installed */
	size_t ncode;
	uint64_t bytes;
	size_t skipped;
};

/* --dbr-layout's value; 0 or -1 (message printed). */
int dbr_install_layout(struct dbr_install *d, const char *cmd, const char *arg);
/* Before sim_new: reads R.json (one line and -1 when it cannot be used). */
int dbr_install_open(struct dbr_install *d, struct program *p);
/* After sim_new: emits and installs every region of the set that lies in the
 * program's own code (a region in a shared library is not installed: one line
 * says so). 0 or -1 (message printed). */
int dbr_install_apply(struct dbr_install *d, struct program *p);
/* After the run: with -v, what ran in replacement code; a warning whenever
 * replacement instructions were not in the map (the truth would be wrong). */
void dbr_install_tell(const struct dbr_install *d, const struct program *p);
void dbr_install_free(struct dbr_install *d);

#endif
