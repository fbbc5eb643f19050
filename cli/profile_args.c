/* Shared options of report and validate (see profile_args.h). */
#include "cli/profile_args.h"

#include <errno.h>
#include <stdio.h>
#include <strings.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/perf_refusals.h"
#include "cli/program.h"
#include "common/err.h"
#include "profiler/perfdata.h"

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
		a->method_given = 1;
		if ((a->po.method = prof_method_parse(arg)) < 0)
			return fprintf(stderr, "%s: unknown method '%s' (cbt, taken, ranges, ip, calls, ibs)\n", cmd, arg), -1;
		return 0;
	case PA_O_CBT:
	case PA_O_SPAN:
	case PA_O_EVENT:
		if (code == PA_O_EVENT && parse_u64(arg, &v) < 0) {
			a->event_name = arg; /* an event's name: resolved against the recording */
			return 0;
		}
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
	optind = 0; /* a fresh parse (program_parse) */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "hi:o:s:", opts, NULL)) != -1) { /* -s: report's --sort, as perf */
		int r = profile_args_option(a, c, optarg, cmd);
		if (r > 0 && c == 'h') {
			fputs(usage, stdout);
			return CLI_HELP;
		}
		if (r > 0)
			r = c != '?' && c != ':' ? own(ctx, c, optarg) : 1;
		if (r < 0)
			return -1;
		if (r > 0) {
			/* the option's word, not its value given apart ("-s x") */
			cli_unknown_option(cmd, optarg && optind >= 2 && optarg == argv[optind - 1] ? argv[optind - 2]
												: argv[optind - 1]);
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

/* Standard input into an unlinked file of $TMPDIR, read through /proc/self/fd
 * (so that nothing stays behind when a signal such as SIGPIPE ends pmusim);
 * 0 or -1 (message printed). */
static int copy_stdin(struct profile_args *a, const char *cmd)
{
	const char *dir = getenv("TMPDIR") && getenv("TMPDIR")[0] ? getenv("TMPDIR") : "/tmp";
	char path[4096];
	snprintf(path, sizeof(path), "%s/pmusim-stdin.XXXXXX", dir);
	int fd = mkstemp(path);
	if (fd < 0)
		return fprintf(stderr, "%s: cannot copy standard input to %s: %s\n", cmd, path, strerror(errno)), -1;
	unlink(path);
	char buf[65536];
	ssize_t n;
	int ok = 1;
	while (ok && (n = read(0, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		ok = n > 0 && write(fd, buf, (size_t)n) == n;
	}
	if (!ok) {
		fprintf(stderr, "%s: cannot copy standard input: %s\n", cmd, strerror(errno));
		close(fd);
		return -1;
	}
	if (!(a->stdin_copy = malloc(40)))
		return close(fd), fprintf(stderr, "%s: out of memory\n", cmd), -1;
	snprintf(a->stdin_copy, 40, "/proc/self/fd/%d", fd);
	a->stdin_fd = fd;
	a->input = a->stdin_copy;
	return 0;
}

/* "cycles" names "cycles" and "cycles:u"; case does not matter (perf's event names). */
static int event_matches(const char *recorded, const char *want)
{
	size_t n = strcspn(recorded, ":");
	return strcasecmp(recorded, want) == 0 || (strlen(want) == n && strncasecmp(recorded, want, n) == 0);
}

int profile_args_resolve(struct profile_args *a, const char *cmd)
{
	if (strcmp(a->input, "-") == 0 && copy_stdin(a, cmd) < 0)
		return -1;
	if (!a->event_name)
		return 0;
	struct perfdata *pd;
	char msg[512] = "";
	int err = perfdata_open(a->input, &pd, msg, sizeof(msg));
	if (err < 0)
		return fprintf(stderr, "%s: --event %s needs a perf.data: %s\n", cmd, a->event_name,
			       msg[0] ? msg : pmusim_strerror(err)), -1;
	size_t n = perfdata_nevents(pd);
	char names[400] = "";
	a->io.event = -1;
	for (size_t i = 0; i < n; i++) {
		const char *name = perfdata_event(pd, i)->name;
		if (name && a->io.event < 0 && event_matches(name, a->event_name))
			a->io.event = (int)i;
		size_t used = strlen(names);
		snprintf(names + used, sizeof(names) - used, "%s%s", i ? ", " : "", name ? name : "?");
	}
	perfdata_close(pd);
	if (a->io.event < 0)
		return fprintf(stderr, "%s: %s has no event '%s' (it has: %s)\n", cmd, a->input, a->event_name,
			       names), -1;
	return 0;
}

void profile_args_fini(struct profile_args *a)
{
	if (a->stdin_copy) {
		close(a->stdin_fd);
		free(a->stdin_copy);
		a->stdin_copy = NULL;
	}
}
