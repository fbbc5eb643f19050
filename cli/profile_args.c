/* Shared options of report and validate (see profile_args.h). */
#include "cli/profile_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/program.h"
#include "common/err.h"

void profile_args_init(struct profile_args *a)
{
	memset(a, 0, sizeof(*a));
	a->input = "perf.data";
	a->io.event = -1;
	a->po.method = METHOD_CBT;
}

int profile_args_option(struct profile_args *a, int code, const char *arg, const char *cmd)
{
	uint64_t v;
	switch (code) {
	case 'i': a->input = arg; return 0;
	case PA_O_BINARY: a->io.binary = arg; return 0;
	case PA_O_BINARY_DIR: a->io.binary_dir = arg; return 0;
	case PA_O_METHOD:
		if ((a->po.method = prof_method_parse(arg)) < 0)
			return fprintf(stderr, "%s: unknown method '%s' (cbt, taken, ranges, ip, calls)\n", cmd, arg), -1;
		return 0;
	case PA_O_CBT:
	case PA_O_SPAN:
	case PA_O_EVENT:
		if ((code == PA_O_EVENT ? option_u64 : option_positive)(
			    cmd, code == PA_O_CBT ? "--cbt" : code == PA_O_SPAN ? "--span" : "--event", arg, &v) < 0)
			return -1;
		if (code == PA_O_CBT)
			a->po.cbt = v;
		else if (code == PA_O_SPAN)
			a->po.span = v;
		else
			a->io.event = (int)v;
		return 0;
	default: return 1;
	}
}

int profile_args_parse(struct profile_args *a, int argc, char **argv, const struct option *opts,
		       const char *usage, const char *cmd, int (*own)(void *ctx, int code, char *arg),
		       void *ctx)
{
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "hi:o:", opts, NULL)) != -1) {
		int r = profile_args_option(a, c, optarg, cmd);
		if (r > 0 && c == 'h') {
			fputs(usage, stdout);
			exit(0);
		}
		if (r > 0)
			r = c != '?' && c != ':' ? own(ctx, c, optarg) : 1;
		if (r < 0)
			return -1;
		if (r > 0) {
			fprintf(stderr, "%s: unknown or incomplete option '%s' (see %s --help)\n", cmd,
				argv[optind - 1], cmd);
			return -1;
		}
	}
	if (optind < argc)
		return fprintf(stderr, "%s: unexpected argument '%s'\n", cmd, argv[optind]), -1;
	return 0;
}

int profile_args_load(const struct profile_args *a, struct profile **prof, struct binary **bin,
		      const char *cmd)
{
	char msg[512] = "";
	int err = input_profile(a->input, &a->io, &a->po, prof, bin, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", cmd, msg[0] ? msg : pmusim_strerror(err));
		return -1;
	}
	return 0;
}
