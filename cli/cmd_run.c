/* pmusim run: runs a program as qemu-user would, stdin/stdout/stderr passed
 * through, exiting with its status; --truth/--truth-json write exact ground truth. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/dbr_replay.h"
#include "cli/program.h"
#include "cli/run_callgrind.h"

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
	"  --callgrind FILE  the run's exact profile in callgrind's format, for\n"
	"                    callgrind_annotate and kcachegrind: per instruction Ir,\n"
	"                    Cycles (the timing model's), Bc/Bcm and Bi/Bim (conditional\n"
	"                    and indirect branches, mispredicted), calls with inclusive\n"
	"                    costs (docs/ci.md)\n"
	"  --empty-block-hook  the engine alone, for make bench: the block hook does\n"
	"                    nothing, so no instruction is counted and threads change only\n"
	"                    when one blocks\n"
	"  -h, --help        this text\n"
	"\n"
	"exit status: the program's; 124 when --max-insns stopped it; 125 when every thread\n"
	"waits forever (deadlock); 2 on pmusim errors.\n";

enum { RUN_O_DBR_REGIONS = PROG_OPT_END, RUN_O_DBR_REPORT, RUN_O_CALLGRIND };

struct run_args {
	struct program p;
	struct dbr_replay dbr;
	struct run_callgrind cg;
};

static int run_option(void *ctx, int c, char *arg)
{
	struct run_args *a = ctx;
	switch (c) {
	case 'E': a->p.so.empty_block_hook = 1; return 0;
	case RUN_O_DBR_REGIONS: a->dbr.regions = arg; return 0;
	case RUN_O_DBR_REPORT: a->dbr.report = arg; return 0;
	case RUN_O_CALLGRIND: a->cg.path = arg; return 0;
	default: return 1;
	}
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
	struct program *p = &a->p;
	static const struct option opts[] = {PROG_LONG_OPTIONS, {"empty-block-hook", no_argument, 0, 'E'},
					     {"dbr-regions", required_argument, 0, RUN_O_DBR_REGIONS},
					     {"dbr-report", required_argument, 0, RUN_O_DBR_REPORT},
					     {"callgrind", required_argument, 0, RUN_O_CALLGRIND},
					     {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	if (program_init(p, "pmusim run", argc) < 0)
		return -1;
	int rc = program_parse(p, argc, argv, "+h" PROG_SHORT_OPTIONS, opts, run_usage, run_option, a);
	if (rc)
		return rc;
	if (a->dbr.report && !a->dbr.regions)
		return fprintf(stderr, "pmusim run: --dbr-report writes the replay of --dbr-regions R.json: give one\n"),
		       -1;
	if (a->cg.path && (p->so.dbr || p->live.on || p->dbr.path))
		return fprintf(stderr,
			       "pmusim run: --callgrind profiles the program as it is: not with --dbr or --dbr-install\n"),
		       -1;
	return 0;
}

int cmd_run_parse(int argc, char **argv)
{
	struct run_args a = {0};
	int rc = parse_args(argc, argv, &a);
	run_callgrind_free(&a.cg);
	dbr_replay_free(&a.dbr);
	program_free(&a.p);
	return rc;
}

int cmd_run(int argc, char **argv)
{
	struct run_args a = {0};
	struct program *p = &a.p;
	int status = EXIT_PMUSIM_ERROR;
	int rc = parse_args(argc, argv, &a);
	if (rc) {
		status = rc == CLI_HELP ? 0 : EXIT_PMUSIM_ERROR;
		goto out;
	}
	if ((a.dbr.regions && dbr_replay_open(&a.dbr, p) < 0) || run_callgrind_open(&a.cg, p) < 0 ||
	    program_load(p) < 0 || (a.dbr.regions && dbr_replay_attach(&a.dbr, p) < 0) ||
	    run_callgrind_attach(&a.cg, p) < 0)
		goto out;
	program_run(p);
	status = program_status(p);
	if (program_write_truth(p) < 0 || dbr_replay_write(&a.dbr, p) < 0 || run_callgrind_write(&a.cg, p) < 0)
		status = EXIT_PMUSIM_ERROR;
out:
	run_callgrind_free(&a.cg);
	dbr_replay_free(&a.dbr);
	program_free(p);
	return status;
}
