/* Options shared by `pmusim report` and `pmusim validate`: the recording, the
 * binary, the method and its window. */
#ifndef PMUSIM_CLI_PROFILE_ARGS_H
#define PMUSIM_CLI_PROFILE_ARGS_H

#include <getopt.h>

#include "profiler/input.h"

enum { PA_O_BINARY = 300, PA_O_BINARY_DIR, PA_O_METHOD, PA_O_CBT, PA_O_SPAN, PA_O_EVENT, PA_O_END };

#define PROFILE_LONG_OPTIONS                                                                        \
	{"input", required_argument, 0, 'i'}, {"binary", required_argument, 0, PA_O_BINARY},           \
	{"binary-dir", required_argument, 0, PA_O_BINARY_DIR},                                         \
	{"method", required_argument, 0, PA_O_METHOD}, {"cbt", required_argument, 0, PA_O_CBT},        \
	{"span", required_argument, 0, PA_O_SPAN}, {"event", required_argument, 0, PA_O_EVENT}

#define PROFILE_OPTIONS_HELP                                                                         \
	"  -i, --input FILE     perf.data from pmusim record or perf record -b, or the text\n"     \
	"                       of perf script -F [pid,]ip,brstack (default ./perf.data)\n"                                                       \
	"  --binary PROG        the program (default: the executable mapping in FILE whose\n"        \
	"                       build id or name matches, else the first one)\n"                     \
	"  --binary-dir DIR     look the mapped program up in DIR (recorded elsewhere)\n"           \
	"  --method M           cbt (default), taken, ranges, ip, calls\n"                           \
	"  --cbt N              CBT size: branch outcomes kept per sample (default and\n"            \
	"                       maximum: the TBT size, i.e. the LBR entries)\n"                       \
	"  --span N             window in instructions or cycles for instruction- and\n"             \
	"                       cycle-triggered samples (default: the LBR entries - 2,\n"   \
	"                       which every full trace spans)\n"                              \
	"  --event EV           use the samples of event EV of FILE: its index (default 0)\n" \
	"                       or its name (cycles, br_inst_retired.near_taken)\n"

struct profile_args {
	const char *input;
	int method_given;       /* --method was on the command line */
	const char *event_name; /* --event given as a name; resolved by profile_args_event */
	char *stdin_copy;       /* -i -: the path of the (unlinked) copy of standard input */
	int stdin_fd;           /*   and its descriptor */
	struct input_opts io;
	struct profile_opts po;
};

void profile_args_init(struct profile_args *a);
/* Handles a shared option: 0 handled, -1 bad value (message printed), 1 not one. */
int profile_args_option(struct profile_args *a, int code, const char *arg, const char *cmd);
/* Parses the whole command line: the shared options, -h/--help (prints usage,
 * returns CLI_HELP), the command's own options through own (0 handled, -1 bad
 * value with a message printed, 1 not its option). No operands are accepted.
 * 0, CLI_HELP or -1; starts afresh as program_parse does. */
int profile_args_parse(struct profile_args *a, int argc, char **argv, const struct option *opts,
		       const char *usage, const char *cmd, int (*own)(void *ctx, int code, char *arg),
		       void *ctx);

/* Resolves -i - (standard input, copied to a temporary file as perf.data
 * must be read with seeks) and --event NAME (the index of the event of that
 * name, case-insensitive, with or without a ":u"-style modifier). 0, or -1 with
 * a message printed. */
int profile_args_resolve(struct profile_args *a, const char *cmd);
/* Closes the copy of standard input, if any. */
void profile_args_fini(struct profile_args *a);

/* Reads the recording into a profile; 0, or -1 with a message printed. */
int profile_args_load(const struct profile_args *a, struct profile **prof, struct binary **bin,
		      const char *cmd);

#endif
