/* pmusim run: runs a program as qemu-user would, stdin/stdout/stderr passed
 * through, exiting with its status; --truth/--truth-json write exact ground truth. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/dbr_live.h"
#include "cli/dbr_replay.h"
#include "cli/program.h"

static const char run_usage[] =
	"usage: pmusim run [options] [--] PROG [ARGS...]\n"
	"\n"
	"Runs the x86-64 Linux program PROG (static, or dynamic with its ld.so) on the\n"
	"emulated CPU with stdin, stdout and stderr passed through, and exits with its\n"
	"exit status (128+N when it dies of signal N, after a one-line report on stderr).\n"
	"\n"
	"options:\n" PROG_OPTIONS_HELP
	"  --dbr-regions R.json  replay the run exactly against the replacement code of\n"
	"                    the regions `report --regions --format json` selected for\n"
	"                    this program: entries per patch point, instructions inside,\n"
	"                    exits per edge, loop trip counts, beside the samples'\n"
	"                    estimate (docs/regions.md); text on stderr at the end\n"
	"  --dbr-report FILE with --dbr-regions: the replay as JSON in FILE\n"
	"  --dbr             the live rewriter: op samples every --dbr-period\n"
	"                    instructions, and at the end of each window of\n"
	"                    --dbr-window instructions the regions the selector keeps\n"
	"                    from that window's samples installed (--dbr-layout) and the\n"
	"                    installed ones whose share of its samples fell below\n"
	"                    --dbr-unpatch unpatched; -v says when (docs/regions.md)\n"
	"  --dbr-window N    instructions per window (default 1000000)\n"
	"  --dbr-period N    op sampling period in instructions (default 256)\n"
	"  --dbr-unpatch F   share of a window's samples below which an installed region\n"
	"                    is unpatched (0..1, default 0.01)\n"
	"  --empty-block-hook  the engine alone, for make bench: the block hook does\n"
	"                    nothing, so no instruction is counted and threads change only\n"
	"                    when one blocks\n"
	"  -h, --help        this text\n"
	"\n"
	"exit status: the program's; 124 when --max-insns stopped it; 125 when every thread\n"
	"waits forever (deadlock); 2 on pmusim errors.\n";

enum { RUN_O_DBR_REGIONS = PROG_OPT_END, RUN_O_DBR_REPORT, RUN_O_DBR, RUN_O_DBR_WINDOW, RUN_O_DBR_PERIOD,
       RUN_O_DBR_UNPATCH };

struct run_args {
	struct program p;
	struct dbr_replay dbr;
	struct dbr_live live;
};

static int run_option(void *ctx, int c, char *arg)
{
	struct run_args *a = ctx;
	switch (c) {
	case 'E': a->p.so.empty_block_hook = 1; return 0;
	case RUN_O_DBR_REGIONS: a->dbr.regions = arg; return 0;
	case RUN_O_DBR_REPORT: a->dbr.report = arg; return 0;
	case RUN_O_DBR: a->live.on = 1; return 0;
	case RUN_O_DBR_WINDOW: return dbr_live_option(&a->live, a->p.cmd, "--dbr-window", arg);
	case RUN_O_DBR_PERIOD: return dbr_live_option(&a->live, a->p.cmd, "--dbr-period", arg);
	case RUN_O_DBR_UNPATCH: return dbr_live_option(&a->live, a->p.cmd, "--dbr-unpatch", arg);
	default: return 1;
	}
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = {0};
	struct program *p = &a.p;
	dbr_live_init(&a.live);
	int status = EXIT_PMUSIM_ERROR;
	static const struct option opts[] = {PROG_LONG_OPTIONS, {"empty-block-hook", no_argument, 0, 'E'},
					     {"dbr-regions", required_argument, 0, RUN_O_DBR_REGIONS},
					     {"dbr-report", required_argument, 0, RUN_O_DBR_REPORT},
					     {"dbr", no_argument, 0, RUN_O_DBR},
					     {"dbr-window", required_argument, 0, RUN_O_DBR_WINDOW},
					     {"dbr-period", required_argument, 0, RUN_O_DBR_PERIOD},
					     {"dbr-unpatch", required_argument, 0, RUN_O_DBR_UNPATCH},
					     {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	if (program_init(p, "pmusim run", argc) < 0 ||
	    program_parse(p, argc, argv, "+h" PROG_SHORT_OPTIONS, opts, run_usage, run_option, &a) < 0)
		goto out;
	if (a.dbr.report && !a.dbr.regions) {
		fprintf(stderr, "pmusim run: --dbr-report writes the replay of --dbr-regions R.json: give one\n");
		goto out;
	}
	if (a.live.on && p->dbr.path) {
		fprintf(stderr, "pmusim run: --dbr selects regions as the program runs; --dbr-install installs "
			"them from R.json: give one\n");
		goto out;
	}
	p->so.dbr |= a.live.on;
	if ((a.dbr.regions && dbr_replay_open(&a.dbr, p) < 0) || program_load(p) < 0 ||
	    (a.dbr.regions && dbr_replay_attach(&a.dbr, p) < 0) || (a.live.on && dbr_live_start(&a.live, p) < 0))
		goto out;
	program_run(p);
	dbr_live_tell(&a.live);
	status = program_status(p);
	if (program_write_truth(p) < 0 || dbr_replay_write(&a.dbr, p) < 0)
		status = EXIT_PMUSIM_ERROR;
out:
	dbr_replay_free(&a.dbr);
	program_free(p);
	dbr_live_free(&a.live);
	return status;
}
