/* pmusim: the command-line front end; one file per subcommand (cli/cmd_*.c). */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"

static const char usage[] =
	"usage: pmusim <command> [options] [-- PROG [ARGS...]]\n"
	"\n"
	"Runs unmodified x86-64 Linux programs (static or dynamic) on an emulated CPU\n"
	"with modelled performance-monitoring hardware (counters, overflow interrupts,\n"
	"LBR), counts exactly what they execute, records samples as perf.data and\n"
	"builds edge profiles from recordings (pmusim's or perf record -b's).\n"
	"\n"
	"commands:\n"
	"  run        run a program; optionally write its exact branch/call ground truth\n"
	"  stat       run a program and print exact counts of the modelled PMU events\n"
	"  record     run a program with sampling counters and an LBR; write perf.data\n"
	"  script     print the samples of a perf.data file (perf script's text)\n"
	"  report     overhead per symbol (as perf report), or the edge profile (text,\n"
	"             JSON, BOLT fdata, AutoFDO text) of a branch-stack recording\n"
	"  validate   compare a recording's edge profile with the exact truth (overlap)\n"
	"  list       the modelled events and their encodings (perf list)\n"
	"  diff       compare two baselines of `stat --json` per event and per function\n"
	"             (CI: exit 1 when a --threshold is passed)\n"
	"  uniformity record a program K times and test whether a profiling method is an\n"
	"             unbiased estimator of the exact edge counts\n"
	"\n"
	"`pmusim COMMAND --help` (or `pmusim help COMMAND`) describes a command's\n"
	"options.\n"
	"exit status: the program's own for `run` (128+N when it dies of signal N);\n"
	"2 when pmusim itself fails (bad option, unreadable or unsupported program).\n";

static const struct {
	const char *name;
	int (*fn)(int, char **);
} cmds[] = {{"run", cmd_run}, {"stat", cmd_stat}, {"record", cmd_record}, {"script", cmd_script},
	    {"report", cmd_report}, {"validate", cmd_validate}, {"uniformity", cmd_uniformity},
	    {"list", cmd_list}, {"diff", cmd_diff}};

static int (*cmd_named(const char *name))(int, char **)
{
	for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
		if (strcmp(name, cmds[i].name) == 0)
			return cmds[i].fn;
	return NULL;
}

/* `pmusim help CMD` is `pmusim CMD --help`: the command prints its own text, so
 * the two cannot differ (the man pages are made from the same output). */
static int help(int argc, char **argv)
{
	if (argc < 3) {
		fputs(usage, stdout);
		return 0;
	}
	int (*fn)(int, char **) = cmd_named(argv[2]);
	if (!fn) {
		fprintf(stderr, "pmusim help: unknown command '%s' (see pmusim --help)\n", argv[2]);
		return EXIT_PMUSIM_ERROR;
	}
	static char help_opt[] = "--help";
	char *args[] = {argv[2], help_opt, NULL};
	return fn(2, args);
}

int main(int argc, char **argv)
{
	if (argc < 2 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
		fputs(usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? EXIT_PMUSIM_ERROR : 0;
	}
	if (strcmp(argv[1], "help") == 0)
		return help(argc, argv);
	if (strcmp(argv[1], "--version") == 0) {
		/* PMUSIM_VERSION: the VERSION file, passed by the Makefile */
		puts("pmusim " PMUSIM_VERSION);
		return 0;
	}
	int (*fn)(int, char **) = cmd_named(argv[1]);
	if (fn)
		return fn(argc - 1, argv + 1);
	fprintf(stderr, "pmusim: unknown command '%s' (see pmusim --help)\n", argv[1]);
	return EXIT_PMUSIM_ERROR;
}
