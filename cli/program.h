/* What `run`, `stat` and `record` share: the options that describe the program
 * and how it runs (--seed, --max-insns, --strict, --truth, --truth-json, --env,
 * --clear-env), starting the machine with a ground-truth sink when asked,
 * running it with SIGINT handled, writing the truth files and turning the end
 * of the run into pmusim's exit status. */
#ifndef PMUSIM_CLI_PROGRAM_H
#define PMUSIM_CLI_PROGRAM_H

#include <getopt.h>
#include <stdint.h>

#include "cli/dbr_install.h"
#include "cli/dbr_live.h"
#include "cli/outputs.h"
#include "cli/progress.h"
#include "pmu_model/pmu.h"
#include "sim/sim.h"
#include "sim/truth.h"

/* getopt_long codes of the shared options (commands use codes below 256 or
 * from PROG_OPT_END on). */
enum {
	PROG_O_SEED = 256, PROG_O_MAX, PROG_O_STRICT, PROG_O_TRUTH, PROG_O_TRUTH_JSON, PROG_O_ENV,
	PROG_O_CLEAR_ENV, PROG_O_INTERP, PROG_O_QUANTUM, PROG_O_CLOCK_START, PROG_O_TRUTH_INSNS,
	PROG_O_DBR_INSTALL, PROG_O_DBR_LAYOUT, PROG_O_DBR, PROG_O_DBR_WINDOW, PROG_O_DBR_PERIOD, PROG_O_DBR_UNPATCH,
	PROG_OPT_END
};
/* Short options every command takes (add them to its optstring): -q quiet, -v verbose. */
#define PROG_SHORT_OPTIONS "qv"

#define PROG_LONG_OPTIONS                                                                        \
	{"seed", required_argument, 0, PROG_O_SEED}, {"max-insns", required_argument, 0, PROG_O_MAX}, \
	{"strict", no_argument, 0, PROG_O_STRICT}, {"truth", required_argument, 0, PROG_O_TRUTH},    \
	{"truth-json", required_argument, 0, PROG_O_TRUTH_JSON},                                     \
	{"truth-insns", no_argument, 0, PROG_O_TRUTH_INSNS},                                          \
	{"env", required_argument, 0, PROG_O_ENV}, {"clear-env", no_argument, 0, PROG_O_CLEAR_ENV}, \
	{"interp", required_argument, 0, PROG_O_INTERP}, {"quantum", required_argument, 0, PROG_O_QUANTUM}, \
	{"clock-start", required_argument, 0, PROG_O_CLOCK_START}, {"quiet", no_argument, 0, 'q'},         \
	{"dbr-install", required_argument, 0, PROG_O_DBR_INSTALL},                                  \
	{"dbr-layout", required_argument, 0, PROG_O_DBR_LAYOUT},                                    \
	{"dbr", no_argument, 0, PROG_O_DBR}, {"dbr-window", required_argument, 0, PROG_O_DBR_WINDOW}, \
	{"dbr-period", required_argument, 0, PROG_O_DBR_PERIOD},                                    \
	{"dbr-unpatch", required_argument, 0, PROG_O_DBR_UNPATCH},                                  \
	{"verbose", no_argument, 0, 'v'}

/* --help text of the shared options. */
#define PROG_OPTIONS_HELP                                                                   \
	"  --seed N          seed for getrandom, AT_RANDOM, rdrand and every random\n"        \
	"                    choice of the model (default 0)\n"                                \
	"  --max-insns N     stop after exactly N instructions (exit status 124)\n"            \
	"  --strict          an unsupported system call is fatal (exit 2) instead of\n"        \
	"                    returning ENOSYS to the program\n"                                \
	"  --truth FILE      write exact branch, call and return edges in BOLT fdata\n"        \
	"                    syntax (\"1 sym off 1 sym off mispreds count\")\n"                \
	"  --truth-json FILE write all exact counts as JSON (instructions, branches,\n"        \
	"                    transfers, functions, REP sites, blocks) and the program's\n"   \
	"                    cycles (total, per function, per block) as the timing\n"       \
	"                    model's cycles counter counts them, without interrupt costs\n" \
	"  --truth-insns     with --truth-json: every instruction's retirements and\n"      \
	"                    program cycles too (\"insns\"; slower: every block is then\n"  \
	"                    timed instruction by instruction)\n"                            \
	"  --env NAME=VALUE  set a variable in the program's environment (repeatable)\n"       \
	"  --clear-env       start the program with an empty environment\n"             \
	"  --interp PATH     program interpreter for a dynamic program instead of its\n"  \
	"                    PT_INTERP (a missing one falls back to the system's)\n"  \
	"  --quantum N[c]    instructions (cycles of the timing model with a c) a thread\n" \
	"                    runs before the next runnable one gets the simulated CPU\n" \
	"                    (default 1000000 instructions)\n"                                 \
	"  --clock-start T   the program's clock (CLOCK_REALTIME) at its start: seconds\n"   \
	"                    since 1970, or 'now' (default 2524608000, 2050-01-01: the\n"   \
	"                    same on every run, later than any file's time)\n"   \
	"  --dbr-install R.json  run the program rewritten: the replacement code of the\n" \
	"                    regions `report --regions --format json` selected for it\n" \
	"                    written into guest memory and its patch points patched\n" \
	"                    before it starts (its own code; docs/regions.md); the\n" \
	"                    model counts the rewritten code, the truth is the original's\n" \
	"  --dbr-layout L    the replacement's layout: hot (hottest successors laid out\n" \
	"                    as fall-throughs, the default) or identity (relocated copies)\n" \
	"  --dbr             the live rewriter: op samples every --dbr-period\n" \
	"                    instructions; at the end of each window of --dbr-window\n" \
	"                    instructions the regions the selector keeps from that\n" \
	"                    window's samples are installed (--dbr-layout), and those\n" \
	"                    installed whose code got less than --dbr-unpatch of its\n" \
	"                    samples unpatched; -v says when (docs/regions.md)\n" \
	"  --dbr-window N    instructions per window (default 1000000)\n" \
	"  --dbr-period N    op sampling period in instructions (default 256)\n" \
	"  --dbr-unpatch F   share of a window's samples below which an installed region\n" \
	"                    is unpatched (0..1, default 0.01)\n" \
	"  -q, --quiet       no progress line and none of pmusim's notes (errors only)\n" \
	"  -v, --verbose     say what was set up: events, periods, output files\n" \
	"                    (on a terminal, stderr shows a progress line: simulated\n" \
	"                    instructions, MIPS, samples, bytes written)\n"

struct program {
	const char *cmd;        /* "pmusim run" etc., for messages */
	struct sim_options so;
	char *prog_path, **prog_argv; /* what so.path and so.argv point to (cli/program_path.h) */
	const char *truth, *truth_json;
	int truth_insns;        /* --truth-insns */
	char **env;
	size_t nenv;
	int clear_env;
	struct sim *sim;
	struct truth *t;
	struct pmu *clock;      /* timing model for a quantum in cycles, or for the truth's
	                         * cycles when the command has no PMU of its own */
	struct pmu *cycles_pmu; /* whose program cycles --truth-json writes */
	struct sim_result res;
	struct outputs outs;    /* every output file of the command (cli/outputs.h) */
	struct outfile *truth_f, *truth_json_f;
	int quiet, verbose;     /* -q, -v */
	struct progress progress; /* a command fills samples/bytes/ctx before program_run */
	FILE *null_log;         /* pmusim's notes with -q */
	struct dbr_install dbr; /* --dbr-install, --dbr-layout */
	struct dbr_live live;   /* --dbr, --dbr-window, --dbr-period, --dbr-unpatch */
};

/* Prepares p for argument parsing (cmd names the command in messages). */
int program_init(struct program *p, const char *cmd, int argc);
/* Handles a shared option code: 1 handled, 0 not a shared option, -1 bad value
 * (message printed). */
int program_option(struct program *p, int code, const char *arg);
/* A command's own option handler: 0 handled, -1 bad value (message printed),
 * 1 not one of its options. */
typedef int (*program_own_option)(void *ctx, int code, char *arg);

/* Parses the command line: the shared options, -h/--help (prints usage and
 * returns CLI_HELP), the command's own options through own (may be NULL; 0
 * handled, -1 bad value with a message printed, 1 not its option, CLI_HELP
 * ends the parse), then PROG [ARGS...], building the guest environment. 0,
 * CLI_HELP, or -1 with a message printed. The parse starts afresh (optind = 0,
 * glibc's full reset), whatever parse came before. opts must include
 * PROG_LONG_OPTIONS and {"help", no_argument, 0, 'h'}. */
int program_parse(struct program *p, int argc, char **argv, const char *shortopts,
		  const struct option *opts, const char *usage, program_own_option own, void *ctx);

/* Opens the truth files' temporaries in p->outs (after the command's own outputs, so
 * that a clash names the command's option first); 0 or -1 (message printed).
 * program_load calls it; a command opens its own outputs before. */
int program_open_outputs(struct program *p);
/* The command's own PMU (stat, record), before program_load: with --truth-json the
 * truth's cycles are the ones it counts (pmu_attribute_runs), so that they are
 * the cycles counter's by construction; a command without one gets a PMU that
 * only keeps the clock. 0 or -1 (message printed). */
int program_use_pmu(struct program *p, struct pmu *pmu);
/* Opens the truth outputs, loads the program and adds the truth sink if asked; 0 or
 * -1 (message printed). */
int program_load(struct program *p);
/* Says which outputs were opened (with -v). */
void program_tell_outputs(const struct program *p);
/* Runs it with SIGINT stopping the guest (the outputs stay complete), with the progress
 * line on a terminal. */
void program_run(struct program *p);
/* Writes and commits the truth files if asked; 0 or -1 (message printed). */
int program_write_truth(struct program *p);
/* The exit status for the way the run ended (message printed when not an exit). */
int program_status(const struct program *p);
/* Frees p; output files not committed are removed. */
void program_free(struct program *p);

/* Parses a number as common/number.h reads them (decimal, 100k, 1e6, 0x1f); 0 or -1. */
int parse_u64(const char *s, uint64_t *out);
/* The same for the value arg of option opt: 0, or -1 with one line printed that
 * names cmd, opt, arg and what is wrong ("pmusim record: -c '1.5' is not a whole
 * number (...)"). option_positive also refuses 0. */
int option_u64(const char *cmd, const char *opt, const char *arg, uint64_t *out);
int option_positive(const char *cmd, const char *opt, const char *arg, uint64_t *out);
/* How numbers are written, for messages and --help. */
#define NUMBER_FORMS "numbers: decimal, 100k = 100000 (k, M, G: 10^3, 10^6, 10^9), 1e6, or 0x hex"

#endif
