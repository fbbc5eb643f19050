/* perf's options refused on purpose (see perf_refusals.h). The spellings are
 * perf 6.1's (perf record/report/stat/script --help). */
#include "cli/perf_refusals.h"

#include <stdio.h>
#include <string.h>

#include "common/wordlist.h"

struct refusal {
	const char *cmd;      /* the subcommand, without "pmusim " */
	const char *spellings; /* space-separated, each with its dashes */
	const char *why;
};

#define ONE_PROGRAM                                                                                    \
	"pmusim runs the one program it starts, with its threads and children, on one simulated CPU: there " \
	"is no system or CPU to watch"
#define READ_WITH_PERF "perf reads pmusim's files: use perf's own command on the file"

static const struct refusal refusals[] = {
	{"record", "-a --all-cpus -C --cpu", ONE_PROGRAM},
	{"record", "-p --pid -t --tid",
	 "a running process cannot be moved onto the simulator: start it with pmusim record -- PROG"},
	{"record", "--no-inherit -i", "threads and child processes are always followed"},
	{"record", "-T --timestamp --sample-cpu", "every sample has its (simulated) TIME already, and there is one CPU"},
	{"record", "-d --data -W --weight --user-regs",
	 "no data addresses or weights are modelled (--call-graph dwarf writes the user registers)"},
	{"record", "--switch-output -m --mmap-pages -z --compression-level",
	 "the file is written whole: never split, compressed or memory-mapped"},
	{"record", "-s --stat", "no per-thread counts: pmusim stat counts the whole program exactly"},
	{"report", "-g --call-graph --children --no-children",
	 "pmusim report --stacks gives per-function totals, call paths and a flame graph; perf report -g reads "
	 "the file"},
	{"report", "-b --branch-stack --branch-history -n --show-nr-samples --percent-limit -F --fields",
	 READ_WITH_PERF " (perf report -i FILE)"},
	{"stat", "-a --all-cpus -C --cpu -A --no-aggr -p --pid -t --tid --per-thread --per-core --per-socket",
	 ONE_PROGRAM},
	{"stat", "-r --repeat",
	 "the same command gives the same counts every time (deterministic): repeating measures nothing"},
	{"stat", "-d --detailed -M --metrics",
	 "only the modelled events exist (pmusim list); insn per cycle and miss rates are printed as perf prints "
	 "them"},
	{"script", "-D --dump-raw-trace --header --header-only --show-task-events --show-mmap-events "
		   "--show-switch-events --show-namespace-events --show-lost-events --show-round-events "
		   "--show-bpf-events --show-cgroup-events --show-text-poke-events",
	 READ_WITH_PERF " (perf script -i FILE)"},
};

/* arg's option name: "--cpu=0" -> "--cpu", "-C0" -> "-C"; into buf. */
static const char *option_name(const char *arg, char *buf, size_t n)
{
	size_t len = arg[0] == '-' && arg[1] == '-' ? strcspn(arg, "=") : arg[0] == '-' && arg[1] ? 2 : strlen(arg);
	snprintf(buf, n, "%.*s", (int)len, arg);
	return buf;
}

const char *perf_refusal(const char *cmd, const char *arg)
{
	const char *sub = strncmp(cmd, "pmusim ", 7) == 0 ? cmd + 7 : cmd;
	char name[64];
	option_name(arg, name, sizeof(name));
	for (size_t i = 0; i < sizeof(refusals) / sizeof(refusals[0]); i++)
		if (strcmp(refusals[i].cmd, sub) == 0 && word_listed(refusals[i].spellings, ' ', name))
			return refusals[i].why;
	return NULL;
}

void cli_unknown_option(const char *cmd, const char *arg)
{
	const char *why = perf_refusal(cmd, arg);
	char name[64];
	if (why)
		fprintf(stderr, "%s: perf's %s is refused: %s\n", cmd, option_name(arg, name, sizeof(name)), why);
	else
		fprintf(stderr, "%s: unknown or incomplete option '%s' (see %s --help)\n", cmd, arg, cmd);
}
