/* Shared program options and run life cycle of run/stat/record (see program.h). */
#include "cli/program.h"
#include "cli/program_path.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

#include "cli/cli.h"
#include "cli/perf_refusals.h"
#include "common/elf_bias.h"
#include "common/err.h"
#include "common/number.h"
#include "common/outfile.h"

extern char **environ;

#define EXIT_LIMIT 124
#define EXIT_DEADLOCK 125

static volatile int interrupted;
static volatile sig_atomic_t running; /* the program runs: a stop signal must reach it */

/* How often a stop signal is repeated (as SIGALRM) while the program runs, in µs. */
#define STOP_KICK_US 50000

/* A stop signal sets the flag the simulator polls between blocks and before it waits.
 * One landing just after that check and before a blocking host call (poll with no
 * timeout, the open of a FIFO) would be lost, so until the run returns an interval
 * timer repeats it as SIGALRM, whose handler does nothing: the next one ends the call
 * with EINTR and the flag is seen. setitimer is a plain system call here. */
static void on_stop_signal(int sig)
{
	if (!interrupted)
		interrupted = sig;
	if (running) {
		struct itimerval kick = {{0, STOP_KICK_US}, {0, STOP_KICK_US}};
		setitimer(ITIMER_REAL, &kick, NULL);
	}
}

static void on_kick(int sig)
{
	(void)sig;
}

/* The signals that would end pmusim by default and can be caught: each ends the run as
 * SIGINT does (the outputs are written, exit 128+N). Without SA_RESTART, so that a host
 * call the program waits in (a FIFO's open, a read) returns at once. A signal ignored
 * when pmusim started (nohup, a background job) stays ignored. */
static void catch_stop_signals(void)
{
	static const int sigs[] = {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGUSR1, SIGUSR2, SIGXCPU, SIGVTALRM, SIGPROF};
	struct sigaction sa = {.sa_handler = on_stop_signal};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		struct sigaction cur;
		if (sigaction(sigs[i], NULL, &cur) == 0 && cur.sa_handler != SIG_IGN)
			sigaction(sigs[i], &sa, NULL);
	}
	struct sigaction kick = {.sa_handler = on_kick};
	sigemptyset(&kick.sa_mask);
	sigaction(SIGALRM, &kick, NULL);
}

int parse_u64(const char *s, uint64_t *out)
{
	return number_parse(s, out) == NUMBER_OK ? 0 : -1;
}

int option_u64(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	int st = number_parse(arg, out);
	if (st != NUMBER_OK)
		fprintf(stderr, "%s: %s '%s' %s (%s)\n", cmd, opt, arg, number_strerror(st), NUMBER_FORMS);
	return st == NUMBER_OK ? 0 : -1;
}

int option_positive(const char *cmd, const char *opt, const char *arg, uint64_t *out)
{
	if (option_u64(cmd, opt, arg, out) < 0)
		return -1;
	if (*out == 0)
		return fprintf(stderr, "%s: %s '%s': needs a positive number\n", cmd, opt, arg), -1;
	return 0;
}

int program_init(struct program *p, const char *cmd, int argc)
{
	memset(p, 0, sizeof(*p));
	p->cmd = cmd;
	catch_stop_signals(); /* from the first output file on */
	dbr_live_init(&p->live);
	outputs_init(&p->outs, cmd);
	p->env = calloc((size_t)argc + 1, sizeof(char *));
	return p->env ? 0 : -1;
}

int program_option(struct program *p, int code, const char *arg)
{
	switch (code) {
	case PROG_O_SEED:
		return option_u64(p->cmd, "--seed", arg, &p->so.seed) < 0 ? -1 : 1;
	case PROG_O_MAX:
		return option_positive(p->cmd, "--max-insns", arg, &p->so.max_insns) < 0 ? -1 : 1;
	case PROG_O_STRICT: p->so.strict = 1; return 1;
	case PROG_O_TRUTH: p->truth = arg; return 1;
	case PROG_O_TRUTH_JSON: p->truth_json = arg; return 1;
	case PROG_O_TRUTH_INSNS: p->truth_insns = 1; return 1;
	case PROG_O_ENV:
		if (!strchr(arg, '='))
			return fprintf(stderr, "%s: --env needs NAME=VALUE, not '%s'\n", p->cmd, arg), -1;
		p->env[p->nenv++] = (char *)arg;
		return 1;
	case PROG_O_CLEAR_ENV: p->clear_env = 1; return 1;
	case PROG_O_DBR_INSTALL: p->dbr.path = arg; return 1;
	case PROG_O_DBR_LAYOUT: return dbr_install_layout(&p->dbr, p->cmd, arg) < 0 ? -1 : 1;
	case PROG_O_DBR: p->live.on = 1; return 1;
	case PROG_O_DBR_WINDOW: return dbr_live_option(&p->live, p->cmd, "--dbr-window", arg) < 0 ? -1 : 1;
	case PROG_O_DBR_PERIOD: return dbr_live_option(&p->live, p->cmd, "--dbr-period", arg) < 0 ? -1 : 1;
	case PROG_O_DBR_UNPATCH: return dbr_live_option(&p->live, p->cmd, "--dbr-unpatch", arg) < 0 ? -1 : 1;
	case 'q': p->quiet = 1; return 1;
	case 'v': p->verbose = 1; return 1;
	case PROG_O_INTERP: p->so.interp = arg; return 1;
	case PROG_O_QUANTUM: {
		char num[32];
		size_t n = strlen(arg);
		p->so.quantum_cycles = n > 1 && arg[n - 1] == 'c';
		snprintf(num, sizeof(num), "%.*s", (int)(n - (size_t)p->so.quantum_cycles), arg);
		if (n >= sizeof(num))
			return fprintf(stderr, "%s: --quantum '%s' is not a number\n", p->cmd, arg), -1;
		return option_positive(p->cmd, "--quantum", num, &p->so.quantum) < 0 ? -1 : 1;
	}
	case PROG_O_CLOCK_START:
		p->so.clock_start_given = 1;
		if (strcmp(arg, "now") == 0) {
			p->so.clock_start = (uint64_t)time(NULL);
			return 1;
		}
		if (option_u64(p->cmd, "--clock-start", arg, &p->so.clock_start) < 0)
			return -1;
		if (p->so.clock_start > 253402300799ULL) /* 9999-12-31, as far as dates print in 4 digits */
			return fprintf(stderr, "%s: --clock-start '%s': needs seconds since 1970 (0 to "
				       "253402300799) or 'now'\n", p->cmd, arg), -1;
		return 1;
	default: return 0;
	}
}

static int build_env(struct program *p)
{
	size_t n = 0;
	if (!p->clear_env)
		while (environ[n])
			n++;
	char **env = calloc(n + p->nenv + 1, sizeof(char *));
	if (!env)
		return -1;
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		int overridden = 0;
		for (size_t j = 0; j < p->nenv; j++) {
			size_t l = strcspn(p->env[j], "=");
			if (strncmp(environ[i], p->env[j], l) == 0 && environ[i][l] == '=')
				overridden = 1;
		}
		if (!overridden)
			env[k++] = environ[i];
	}
	for (size_t j = 0; j < p->nenv; j++)
		env[k++] = p->env[j];
	p->so.envp = env;
	return 0;
}

static int program_args(struct program *p, int argc, char **argv, int optind_)
{
	if (optind_ >= argc) {
		fprintf(stderr, "%s: no program given (see %s --help)\n", p->cmd, p->cmd);
		return -1;
	}
	if (build_env(p) < 0)
		return fprintf(stderr, "%s: out of memory\n", p->cmd), -1;
	int e = program_path_resolve(argv + optind_, p->so.envp, &p->prog_path, &p->prog_argv);
	if (e)
		return fprintf(stderr, "%s: cannot run %s: %s\n", p->cmd, argv[optind_], strerror(e)), -1;
	p->so.path = p->prog_path;
	p->so.argv = p->prog_argv;
	return 0;
}

int program_parse(struct program *p, int argc, char **argv, const char *shortopts,
		  const struct option *opts, const char *usage, program_own_option own, void *ctx)
{
	/* 0, not 1: glibc's getopt then also forgets where it stood inside a cluster
	 * of short options of an earlier parse, whose strings may be gone */
	optind = 0;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, shortopts, opts, NULL)) != -1) {
		int r = program_option(p, c, optarg);
		if (r == 0 && c == 'h') {
			fputs(usage, stdout);
			return CLI_HELP;
		}
		if (r == 0)
			r = own && c != '?' && c != ':' ? own(ctx, c, optarg) : 1;
		else
			r = r > 0 ? 0 : -1;
		if (r == CLI_HELP)
			return CLI_HELP;
		if (r < 0)
			return -1;
		if (r > 0) {
			/* the option's word, not its value given apart ("-s x") */
			cli_unknown_option(p->cmd, optarg && optind >= 2 && optarg == argv[optind - 1] ? argv[optind - 2]
												: argv[optind - 1]);
			return -1;
		}
	}
	return program_args(p, argc, argv, optind);
}

static uint64_t clock_cycles(void *ctx)
{
	return pmu_cycles(ctx);
}

int program_open_outputs(struct program *p)
{
	if (p->truth_insns && !p->truth_json)
		return fprintf(stderr, "%s: --truth-insns adds to --truth-json FILE: give one\n", p->cmd), -1;
	if (p->truth && !p->truth_f && !(p->truth_f = outputs_open(&p->outs, "--truth", p->truth)))
		return -1;
	if (p->truth_json && !p->truth_json_f &&
	    !(p->truth_json_f = outputs_open(&p->outs, "--truth-json", p->truth_json)))
		return -1;
	return 0;
}

int program_use_pmu(struct program *p, struct pmu *pmu)
{
	p->cycles_pmu = pmu;
	if (p->truth_json && (pmu_attribute_runs(pmu) < 0 || (p->truth_insns && pmu_attribute_insns(pmu) < 0)))
		return fprintf(stderr, "%s: out of memory\n", p->cmd), -1;
	return 0;
}

int program_load(struct program *p)
{
	char msg[512] = "";
	if (program_open_outputs(p) < 0)
		return -1;
	p->so.log = stderr;
	if (p->quiet && (p->null_log = fopen("/dev/null", "we")))
		p->so.log = p->null_log;
	if (p->live.on && p->dbr.path) {
		fprintf(stderr, "%s: --dbr selects regions as the program runs, --dbr-install installs them "
			"from a file: give one\n", p->cmd);
		return -1;
	}
	if (p->live.given && !p->live.on)
		return fprintf(stderr, "%s: --dbr-window, --dbr-period and --dbr-unpatch go with --dbr\n", p->cmd), -1;
	if (p->dbr.layout_given && !p->live.on && !p->dbr.path)
		return fprintf(stderr, "%s: --dbr-layout goes with --dbr or --dbr-install\n", p->cmd), -1;
	p->so.dbr |= p->live.on;
	if (p->dbr.path && dbr_install_open(&p->dbr, p) < 0)
		return -1;
	int err = sim_new(&p->so, &p->sim, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "pmusim: %s\n", msg[0] ? msg : pmusim_strerror(err));
		return -1;
	}
	if ((p->dbr.path && dbr_install_apply(&p->dbr, p) < 0) || (p->live.on && dbr_live_start(&p->live, p) < 0))
		return -1;
	int truth_clock = p->truth_json && !p->cycles_pmu;
	if (p->so.quantum_cycles || truth_clock) {
		/* threads take turns by the timing model's cycles (without interrupt costs);
		 * or the truth's program cycles come from it, when the command has no PMU */
		struct pmu_config cfg = {.seed = p->so.seed};
		if (pmu_new(&cfg, (struct pmu_sample_sink){0}, &p->clock, msg, sizeof(msg)) < 0 ||
		    (truth_clock && program_use_pmu(p, p->clock) < 0) ||
		    sim_add_sink(p->sim, pmu_block_sink(p->clock)) < 0) {
			fprintf(stderr, "pmusim: out of memory\n");
			return -1;
		}
		if (p->so.quantum_cycles)
			sim_set_clock(p->sim, clock_cycles, p->clock);
	}
	if (p->truth || p->truth_json) {
		p->t = truth_new();
		if (!p->t || sim_add_image_sink(p->sim, truth_sink(p->t)) < 0 || sim_rep_reference(p->sim, p->t) < 0) {
			fprintf(stderr, "pmusim: out of memory\n");
			return -1;
		}
	}
	return 0;
}

void program_tell_outputs(const struct program *p)
{
	for (size_t i = 0; i < p->outs.n; i++) {
		fprintf(stderr, "%s: %s %s: %s\n", p->cmd, p->outs.o[i].opt, p->outs.o[i].path,
			p->outs.o[i].renamed ? "written to a temporary, renamed into place when complete"
			       : "written in place when the run is over");
	}
}

void program_run(struct program *p)
{
	signal(SIGPIPE, SIG_IGN); /* a closed pipe is the guest's SIGPIPE, not pmusim's */
	sim_set_interrupt_flag(p->sim, &interrupted);
	if (p->verbose)
		program_tell_outputs(p);
	if (!p->progress.cmd)
		p->progress.cmd = p->cmd;
	progress_start(&p->progress, p->sim, p->quiet);
	running = 1;
	if (interrupted) /* it came while the program was being loaded */
		on_stop_signal(interrupted);
	sim_run(p->sim, &p->res);
	running = 0;
	setitimer(ITIMER_REAL, &(struct itimerval){{0, 0}, {0, 0}}, NULL);
	progress_end(&p->progress, p->sim);
	fflush(stdout);
	if (p->so.dbr)
		dbr_install_tell(&p->dbr, p);
	dbr_live_tell(&p->live);
}

typedef int (*truth_writer)(struct program *p, FILE *f);

/* The name fdata gives a mapped file: its base name ("//anon" stays whole). */
static const char *base_of(const char *path)
{
	const char *slash = strrchr(path, '/');
	return slash && strcmp(path, SIM_ANON_PATH) != 0 ? slash + 1 : path;
}

static int fdata_writer(struct program *p, FILE *f)
{
	const struct sim_mapping *m;
	size_t n = sim_exec_mappings(p->sim, &m);
	struct fdata_region *r = calloc(n + 1, sizeof(*r));
	if (!r)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < n; i++)
		r[i] = (struct fdata_region){m[i].addr, m[i].addr + m[i].len,
					     sim_mapping_is_anon(&m[i]) ? 0 : elf_mapping_bias(m[i].path, m[i].addr, m[i].pgoff),
					     base_of(m[i].path)};
	struct fdata_namer nm = {sim_symtab(p->sim), base_of(p->so.path), sim_load_bias(p->sim), r, n};
	int err = truth_write_fdata(p->t, f, &nm);
	free(r);
	return err;
}

static const struct pmu_insn_figures *insn_figures(void *ctx, uint32_t id)
{
	return pmu_insn_figures(ctx, id);
}

static int json_writer(struct program *p, FILE *f)
{
	const uint64_t *cyc;
	uint32_t n;
	/* rewritten, the model's cycles are the replacement code's runs, not the truth's */
	int err = p->cycles_pmu && !p->so.dbr ? pmu_run_cycles(p->cycles_pmu, &cyc, &n) : PMUSIM_ERR_ARG;
	if (err == PMUSIM_ERR_NOMEM)
		return err; /* figures incomplete: no truth rather than a wrong one */
	if (err == 0)
		truth_set_run_cycles(p->t, cyc, n);
	if (err == 0 && p->truth_insns)
		truth_set_insn_figures(p->t, insn_figures, p->cycles_pmu);
	return truth_write_json(p->t, f, sim_symtab(p->sim), p->so.path, sim_load_bias(p->sim));
}

static int write_one(struct program *p, struct outfile *o, const char *path, truth_writer w)
{
	int err = w(p, o->f);
	if (err < 0) { /* the temporary goes with the others in program_free */
		fprintf(stderr, "%s: cannot write %s: %s\n", p->cmd, path, pmusim_strerror(err));
		return -1;
	}
	return outputs_commit(&p->outs, o);
}

int program_write_truth(struct program *p)
{
	if (p->truth_f && write_one(p, p->truth_f, p->truth, fdata_writer) < 0)
		return -1;
	if (p->truth_json_f && write_one(p, p->truth_json_f, p->truth_json, json_writer) < 0)
		return -1;
	return 0;
}

int program_status(const struct program *p)
{
	const struct sim_result *res = &p->res;
	switch (res->end) {
	case SIM_END_EXIT:
		return res->status;
	case SIM_END_SIGNAL:
		fprintf(stderr, "pmusim: %s\n", res->message);
		return 128 + res->signo;
	case SIM_END_LIMIT:
		fprintf(stderr, "pmusim: %s\n", res->message);
		return EXIT_LIMIT;
	case SIM_END_DEADLOCK:
		fprintf(stderr, "pmusim: %s\n", res->message);
		return EXIT_DEADLOCK;
	default:
		fprintf(stderr, "pmusim: %s\n", res->message[0] ? res->message : pmusim_strerror(res->err));
		return EXIT_PMUSIM_ERROR;
	}
}

void program_free(struct program *p)
{
	outputs_fini(&p->outs);
	truth_free(p->t);
	sim_free(p->sim);
	pmu_free(p->clock);
	dbr_install_free(&p->dbr);
	dbr_live_free(&p->live);
	free(p->env);
	free((void *)p->so.envp);
	program_path_free(p->prog_path, p->prog_argv);
	if (p->null_log)
		fclose(p->null_log);
	memset(p, 0, sizeof(*p));
}
