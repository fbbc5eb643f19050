/* pmusim: the command-line front end; one file per subcommand (cli/cmd_*.c). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
	"usage: pmusim <command> [options] [-- PROG [ARGS...]]\n"
	"\n"
	"Runs unmodified static x86-64 Linux programs on an emulated CPU and counts\n"
	"exactly what they execute.\n"
	"\n"
	"commands:\n"
	"  run        run a program; optionally write its exact branch/call ground truth\n"
	"\n"
	"`pmusim COMMAND --help` describes a command's options.\n"
	"exit status: the program's own for `run` (128+N when it dies of signal N);\n"
	"2 when pmusim itself fails (bad option, unreadable or unsupported program).\n";

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 ||
	    strcmp(argv[1], "help") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_PMUSIM_ERROR : 0;
	}
	if (strcmp(argv[1], "--version") == 0) {
		puts("pmusim 0.1");
		return 0;
	}
	if (strcmp(argv[1], "run") == 0)
		return cmd_run(argc - 1, argv + 1);
	fprintf(stderr, "pmusim: unknown command '%s' (see pmusim --help)\n", argv[1]);
	return EXIT_PMUSIM_ERROR;
}
