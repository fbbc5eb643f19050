/* pmusim run: runs a program as qemu-user would, stdin/stdout/stderr passed
 * through, exiting with its status; --truth/--truth-json write exact ground truth. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/program.h"

static const char run_usage[] =
	"usage: pmusim run [options] [--] PROG [ARGS...]\n"
	"\n"
	"Runs the x86-64 Linux program PROG (static, or dynamic with its ld.so) on the\n"
	"emulated CPU with stdin, stdout and stderr passed through, and exits with its\n"
	"exit status (128+N when it dies of signal N, after a one-line report on stderr).\n"
	"\n"
	"options:\n" PROG_OPTIONS_HELP
	"  --empty-block-hook  the engine alone, for make bench: the block hook does\n"
	"                    nothing, so no instruction is counted and threads change only\n"
	"                    when one blocks\n"
	"  -h, --help        this text\n"
	"\n"
	"exit status: the program's; 124 when --max-insns stopped it; 125 when every thread\n"
	"waits forever (deadlock); 2 on pmusim errors.\n";

static int run_option(void *ctx, int c, char *arg)
{
	struct program *p = ctx;
	(void)arg;
	if (c != 'E')
		return 1;
	p->so.empty_block_hook = 1;
	return 0;
}

int cmd_run(int argc, char **argv)
{
	struct program p;
	int status = EXIT_PMUSIM_ERROR;
	static const struct option opts[] = {PROG_LONG_OPTIONS, {"empty-block-hook", no_argument, 0, 'E'},
					     {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	if (program_init(&p, "pmusim run", argc) < 0 ||
	    program_parse(&p, argc, argv, "+h" PROG_SHORT_OPTIONS, opts, run_usage, run_option, &p) < 0 || program_load(&p) < 0)
		goto out;
	program_run(&p);
	status = program_status(&p);
	if (program_write_truth(&p) < 0)
		status = EXIT_PMUSIM_ERROR;
out:
	program_free(&p);
	return status;
}
