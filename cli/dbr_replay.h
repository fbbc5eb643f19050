/* `pmusim run --dbr-regions R.json`: the exact replay of the run against the
 * replacement code of a region selection (profiler/region_replay.h), R.json being
 * what `pmusim report --regions --format json` wrote for the same program. The
 * report goes to --dbr-report FILE as JSON, else as text on stderr when the
 * program has ended. */
#ifndef PMUSIM_CLI_DBR_REPLAY_H
#define PMUSIM_CLI_DBR_REPLAY_H

#include "cli/program.h"
#include "profiler/region_replay.h"
#include "profiler/region_set.h"

struct dbr_replay {
	const char *regions; /* --dbr-regions */
	const char *report;  /* --dbr-report */
	struct outfile *out;
	struct rset *set;
	struct rreplay *rp;
};

struct jv;
/* 1 when the parsed report JSON doc names no program or the file at path. */
int dbr_regions_of_program(const struct jv *doc, const char *path);
/* Before program_load: reads R.json (one line and -1 when it cannot be used) and
 * opens the report's output. */
int dbr_replay_open(struct dbr_replay *d, struct program *p);
/* After program_load: the replay's sink on the program pmusim starts; 0 or -1. */
int dbr_replay_attach(struct dbr_replay *d, struct program *p);
/* After the run: the report written; 0 or -1 (one line printed). */
int dbr_replay_write(struct dbr_replay *d, struct program *p);
void dbr_replay_free(struct dbr_replay *d);

#endif
