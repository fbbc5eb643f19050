/* pmusim run: runs a program as qemu-user would, stdin/stdout/stderr passed
 * through, exiting with its status; --truth/--truth-json write exact ground truth. */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/err.h"
#include "common/outfile.h"
#include "sim/sim.h"
#include "sim/truth.h"

extern char **environ;

static const char run_usage[] =
	"usage: pmusim run [options] [--] PROG [ARGS...]\n"
	"\n"
	"Runs the static x86-64 Linux program PROG on the emulated CPU with stdin,\n"
	"stdout and stderr passed through, and exits with its exit status (128+N when\n"
	"it dies of signal N, after a one-line report on stderr).\n"
	"\n"
	"options:\n"
	"  --seed N          seed for getrandom, AT_RANDOM and rdrand (default 0)\n"
	"  --max-insns N     stop after exactly N instructions (exit status 124)\n"
	"  --strict          an unsupported system call is fatal (exit 2) instead of\n"
	"                    returning ENOSYS to the program\n"
	"  --truth FILE      write exact branch, call and return edges in BOLT fdata\n"
	"                    syntax (\"1 sym off 1 sym off mispreds count\")\n"
	"  --truth-json FILE write all exact counts as JSON (instructions, branches,\n"
	"                    transfers, functions, REP sites, blocks)\n"
	"  --env NAME=VALUE  set a variable in the program's environment (repeatable)\n"
	"  --clear-env       start the program with an empty environment\n"
	"  -h, --help        this text\n"
	"\n"
	"exit status: the program's; 124 when --max-insns stopped it; 2 on pmusim errors.\n";

#define EXIT_LIMIT 124

static volatile int interrupted;

static void on_sigint(int sig)
{
	(void)sig;
	interrupted = 1;
}

static int parse_u64(const char *s, uint64_t *out)
{
	char *end;
	errno = 0;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s || *end || s[0] == '-')
		return -1;
	*out = v;
	return 0;
}

static int write_truth(struct sim *sim, struct truth *t, const char *fdata, const char *json,
		       const char *prog)
{
	struct outfile o;
	int err;
	const char *base = strrchr(prog, '/') ? strrchr(prog, '/') + 1 : prog;
	if (fdata) {
		if ((err = outfile_open(&o, fdata)) < 0) {
			fprintf(stderr, "pmusim: cannot write %s: %s\n", fdata, pmusim_strerror(err));
			return err;
		}
		err = truth_write_fdata(t, o.f, sim_symtab(sim), base, sim_load_bias(sim));
		err = err < 0 ? (outfile_abort(&o), err) : outfile_commit(&o);
		if (err < 0) {
			fprintf(stderr, "pmusim: cannot write %s: %s\n", fdata, pmusim_strerror(err));
			return err;
		}
	}
	if (json) {
		if ((err = outfile_open(&o, json)) < 0) {
			fprintf(stderr, "pmusim: cannot write %s: %s\n", json, pmusim_strerror(err));
			return err;
		}
		err = truth_write_json(t, o.f, sim_symtab(sim), prog);
		err = err < 0 ? (outfile_abort(&o), err) : outfile_commit(&o);
		if (err < 0) {
			fprintf(stderr, "pmusim: cannot write %s: %s\n", json, pmusim_strerror(err));
			return err;
		}
	}
	return 0;
}

struct run_args {
	struct sim_options so;
	const char *truth, *truth_json;
	char **env;
	size_t nenv;
	int clear_env;
};

static int build_env(struct run_args *a)
{
	size_t n = 0;
	if (!a->clear_env)
		while (environ[n])
			n++;
	char **env = calloc(n + a->nenv + 1, sizeof(char *));
	if (!env)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int overridden = 0;
		for (size_t j = 0; j < a->nenv; j++) {
			size_t l = strcspn(a->env[j], "=");
			if (strncmp(environ[i], a->env[j], l) == 0 && environ[i][l] == '=')
				overridden = 1;
		}
		if (!overridden)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < a->nenv; j++)
		env[k++] = a->env[j];
	a->so.envp = env;
	return 0;
}

static int parse_args(int argc, char **argv, struct run_args *a)
{
	enum { O_SEED = 256, O_MAX, O_STRICT, O_TRUTH, O_TRUTH_JSON, O_ENV, O_CLEAR_ENV };
	static const struct option opts[] = {
		{"seed", required_argument, 0, O_SEED}, {"max-insns", required_argument, 0, O_MAX},
		{"strict", no_argument, 0, O_STRICT}, {"truth", required_argument, 0, O_TRUTH},
		{"truth-json", required_argument, 0, O_TRUTH_JSON}, {"env", required_argument, 0, O_ENV},
		{"clear-env", no_argument, 0, O_CLEAR_ENV}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0},
	};
	a->env = calloc((size_t)argc + 1, sizeof(char *));
	if (!a->env)
		return -1;
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+h", opts, NULL)) != -1) {
		switch (c) {
		case O_SEED:
			if (parse_u64(optarg, &a->so.seed) < 0)
				return fprintf(stderr, "pmusim run: --seed needs a number, not '%s'\n", optarg), -1;
			break;
		case O_MAX:
			if (parse_u64(optarg, &a->so.max_insns) < 0 || a->so.max_insns == 0)
				return fprintf(stderr, "pmusim run: --max-insns needs a positive number, not '%s'\n", optarg), -1;
			break;
		case O_STRICT: a->so.strict = 1; break;
		case O_TRUTH: a->truth = optarg; break;
		case O_TRUTH_JSON: a->truth_json = optarg; break;
		case O_ENV:
			if (!strchr(optarg, '='))
				return fprintf(stderr, "pmusim run: --env needs NAME=VALUE, not '%s'\n", optarg), -1;
			a->env[a->nenv++] = optarg;
			break;
		case O_CLEAR_ENV: a->clear_env = 1; break;
		case 'h': fputs(run_usage, stdout); exit(0);
		default:
			fprintf(stderr, "pmusim run: unknown or incomplete option '%s' (see pmusim run --help)\n",
				argv[optind - 1]);
			return -1;
		}
	}
	if (optind >= argc) {
		fprintf(stderr, "pmusim run: no program given (see pmusim run --help)\n");
		return -1;
	}
	a->so.path = argv[optind];
	a->so.argv = argv + optind;
	return build_env(a);
}

static int exit_status(const struct sim_result *res)
{
	switch (res->end) {
	case SIM_END_EXIT:
		return res->status;
	case SIM_END_SIGNAL:
		fprintf(stderr, "pmusim: %s\n", res->message);
		return 128 + res->signo;
	case SIM_END_LIMIT:
		fprintf(stderr, "pmusim: %s\n", res->message);
		return EXIT_LIMIT;
	default:
		fprintf(stderr, "pmusim: %s\n", res->message[0] ? res->message : pmusim_strerror(res->err));
		return EXIT_PMUSIM_ERROR;
	}
}

int cmd_run(int argc, char **argv)
{
	struct run_args a;
	struct sim *sim = NULL;
	struct truth *t = NULL;
	int status = EXIT_PMUSIM_ERROR;
	memset(&a, 0, sizeof(a));
	if (parse_args(argc, argv, &a) < 0)
		goto out;
	a.so.log = stderr;
	char msg[512] = "";
	int err = sim_new(&a.so, &sim, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "pmusim: %s\n", msg[0] ? msg : pmusim_strerror(err));
		goto out;
	}
	if (a.truth || a.truth_json) {
		t = truth_new();
		if (!t || sim_add_sink(sim, truth_sink(t)) < 0) {
			fprintf(stderr, "pmusim: out of memory\n");
			goto out;
		}
	}
	signal(SIGINT, on_sigint);
	signal(SIGPIPE, SIG_IGN); /* a closed pipe is the guest's SIGPIPE, not pmusim's */
	sim_set_interrupt_flag(sim, &interrupted);
	struct sim_result res;
	sim_run(sim, &res);
	fflush(stdout);
	status = exit_status(&res);
	if (t && write_truth(sim, t, a.truth, a.truth_json, a.so.path) < 0)
		status = EXIT_PMUSIM_ERROR;
out:
	truth_free(t);
	sim_free(sim);
	free(a.env);
	free((void *)a.so.envp);
	return status;
}
