/* pmusim uniformity: records one deterministic program K times with K PMU
 * seeds (same program, same program seed: only the sample points differ),
 * builds each run's edge profile with a method and tests whether the method is
 * an unbiased estimator of the exact edge counts of its run
 * (profiler/uniformity.h, docs/uniformity-test.md). */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/profile_args.h"
#include "cli/program.h"
#include "cli/uniformity_report.h"
#include "cli/uniformity_runs.h"
#include "common/arrays.h"
#include "common/grow.h"
#include "common/number.h"

static const char uniformity_usage[] =
    "usage: pmusim uniformity [record options] --seeds K [profile options] [options]\n"
    "                         [--] PROG [ARGS...]\n"
    "\n"
    "Tests whether a profiling method is an unbiased estimator of the exact edge\n"
    "counts: records PROG K times, run i with --pmu-seed S0+i (the random period\n"
    "delta differs, the program and its own random bytes do not), builds each\n"
    "run's edge profile with --method and compares every edge's K estimates with the\n"
    "exact counts of their runs: per edge the mean estimate, the standard error over\n"
    "the runs, z = (mean - exact) / SE and its p-value (Student t, K-1 degrees of\n"
    "freedom); chi2 over the edges with enough weight and its p-value; the biased\n"
    "edges. The K recordings run in parallel (docs/uniformity-test.md).\n"
    "\n"
    "record options (as pmusim record; a --delta is required, but with -e ibs_op//\n"
    "and --method ibs, whose intervals are random of themselves):\n"
    "  -e, --event EV,...   events to sample (the first one's samples are profiled)\n"
    "  -c, --count PERIOD   sampling period\n"
    "  --delta D            random 0..D added to each period (required)\n"
    "  -b, --branch-any / -j, --branch-filter F   the LBR (every method but ip)\n"
    "  --lbr-depth N, --skid N[c], --refill A\n"
    "  --seed N             the program's seed (getrandom, AT_RANDOM): the same in\n"
    "                       every run (default 0)\n"
    "  --max-insns N, --strict, --env NAME=VALUE, --clear-env, --interp PATH,\n"
    "  --quantum N[c], --clock-start T\n"
    "\n"
    "profile options (as pmusim validate):\n"
    "  --method M           cbt (default), taken, ranges, ip, calls (call edges only), ibs\n"
    "  --cbt N, --span N    the CBT window\n"
    "  --profile-event N    profile the samples of the N-th event (validate's --event)\n"
    "  --binary PROG, --binary-dir DIR\n"
    "\n"
    "options:\n"
    "  --seeds K            runs (at least 2; 8 or more let chi2 measure the edges'\n"
    "                       correlation well)\n"
    "  --pmu-seed S0        PMU seed of the first run (default: --seed's value)\n"
    "  -J, --jobs N         recordings at a time (default: the online CPUs); the\n"
    "                       output is the same for every N\n"
    "  --alpha A            significance level of the verdict (default 0.001)\n"
    "  --min-share X        test the edges whose mean exact count is at least X of\n"
    "                       the total (default 0.001) ...\n"
    "  --min-count N        ... and at least N executions (default 100)\n"
    "  --normalise          scale each run's profile to its exact total first (the\n"
    "                       shape, as validate's overlap compares it); default: raw\n"
    "                       estimates, whose expectation must be the exact count\n"
    "  --stdin FILE         the program's standard input in every run (default\n"
    "                       /dev/null)\n"
    "  --format F           text (default) or json: keys method, program, runs,\n"
    "                       pmu_seeds, seed, normalised, alpha, samples_mean,\n"
    "                       samples_min, samples_max, samples_used, truth_differs,\n"
    "                       truth_edges, total, min_weight, tested, phantoms,\n"
    "                       overlap_mean, overlap_noise, chi2,\n"
    "                       dof, effective_dof, chi2_scale, p_value, edge_alpha,\n"
    "                       critical_z, biased_edges, unbiased, edges (tested and\n"
    "                       phantom edges, hottest first: from, to, from_sym, to_sym,\n"
    "                       kind, taken, exact, mean, se, z, p, rel_bias, phantom,\n"
    "                       biased; null for an infinite z, chi2 or rel_bias)\n"
    "  --svg FILE           also plot every tested edge's z against its exact count\n"
    "  -h, --help           this text\n"
    "\n"
    "exit status: 0 unbiased at --alpha, 1 biased, 2 on errors (bad options, K < 2,\n"
    "no --delta, a run whose program exits with a status other than 0 or 124, a\n"
    "failed recording or profile). SIGINT, SIGTERM or SIGHUP stop the runs, remove\n"
    "their temporary directory and end pmusim by the same signal.\n";

enum {
	O_DELTA = 400,
	O_LBR_DEPTH,
	O_SKID,
	O_REFILL,
	O_SEEDS,
	O_PMU_SEED,
	O_ALPHA,
	O_MIN_SHARE,
	O_MIN_COUNT,
	O_NORMALISE,
	O_STDIN,
	O_FORMAT,
	O_SVG,
	O_PROFILE_EVENT
};

/* Options handed to every run's `pmusim record` as they were given. */
static const struct {
	int code;
	const char *flag;
} passed[] = {
    {'e', "-e"},
    {'c', "-c"},
    {O_DELTA, "--delta"},
    {'b', "-b"},
    {'j', "-j"},
    {O_LBR_DEPTH, "--lbr-depth"},
    {O_SKID, "--skid"},
    {O_REFILL, "--refill"},
    {PROG_O_SEED, "--seed"},
    {PROG_O_MAX, "--max-insns"},
    {PROG_O_STRICT, "--strict"},
    {PROG_O_ENV, "--env"},
    {PROG_O_CLEAR_ENV, "--clear-env"},
    {PROG_O_INTERP, "--interp"},
    {PROG_O_QUANTUM, "--quantum"},
    {PROG_O_CLOCK_START, "--clock-start"},
};

struct uniformity_args {
	char **rec; /* "record" and the passed options, NULL-terminated */
	size_t nrec, rec_cap;
	uint64_t delta, seed, pmu_seed0, seeds, jobs;
	int pmu_seed_given, lbr;
	struct profile_args pa;
	struct unif_opts uo;
	const char *stdin_path, *svg;
	int json;
	char **prog;
};

static const char *cmd = "pmusim uniformity";

#define MAX_RUNS 100000

static int number(const char *arg, uint64_t *v, const char *opt, int positive)
{
	return positive ? option_positive(cmd, opt, arg, v) : option_u64(cmd, opt, arg, v);
}

static int fraction(const char *arg, double *v, const char *opt, double lo, double hi, int open_lo)
{
	if (number_parse_real(arg, v) != NUMBER_OK || !(open_lo ? *v > lo : *v >= lo) || !(*v < hi))
		return fprintf(stderr, "%s: %s needs a number %s %g and below %g, not '%s'\n", cmd,
		               opt, open_lo ? "above" : "from", lo, hi, arg),
		       -1;
	return 0;
}

/* Own and profile options: 0 handled, -1 bad value, 1 not one of them. */
static int own_option(struct uniformity_args *a, int c, const char *arg)
{
	uint64_t v;
	switch (c) {
	case O_SEEDS:
		if (number(arg, &a->seeds, "--seeds", 1) < 0)
			return -1;
		if (a->seeds > MAX_RUNS)
			return fprintf(stderr, "%s: --seeds is at most %d\n", cmd, MAX_RUNS), -1;
		return 0;
	case O_PMU_SEED:
		a->pmu_seed_given = 1;
		return number(arg, &a->pmu_seed0, "--pmu-seed", 0);
	case 'J':
		return number(arg, &a->jobs, "--jobs", 1);
	case O_ALPHA:
		return fraction(arg, &a->uo.alpha, "--alpha", 0, 1, 1);
	case O_MIN_SHARE:
		return fraction(arg, &a->uo.min_share, "--min-share", 0, 1, 0);
	case O_MIN_COUNT:
		return fraction(arg, &a->uo.min_count, "--min-count", 0, 1e300, 0);
	case O_NORMALISE:
		a->uo.normalise = 1;
		return 0;
	case O_STDIN:
		a->stdin_path = arg;
		return 0;
	case O_SVG:
		a->svg = arg;
		return 0;
	case O_FORMAT:
		if (strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0)
			return fprintf(stderr, "%s: --format is text or json, not '%s'\n", cmd,
			               arg),
			       -1;
		a->json = strcmp(arg, "json") == 0;
		return 0;
	case O_PROFILE_EVENT:
		if (number(arg, &v, "--profile-event", 0) < 0)
			return -1;
		a->pa.io.event = (int)v;
		return 0;
	default:
		return profile_args_option(&a->pa, c, arg, cmd);
	}
}

/* Record options are copied for the runs (and a few of them read here). */
static int pass_option(struct uniformity_args *a, int c, const char *arg)
{
	for (size_t i = 0; i < sizeof(passed) / sizeof(passed[0]); i++) {
		if (passed[i].code != c)
			continue;
		/* grown here, not sized by argc: one word can hold many options ("-bbb") */
		char **g = grow_array(a->rec, &a->rec_cap, a->nrec + 3, sizeof(*a->rec));
		if (!g)
			return fprintf(stderr, "%s: out of memory\n", cmd), -1;
		a->rec = g;
		a->rec[a->nrec++] = (char *)passed[i].flag;
		if (arg)
			a->rec[a->nrec++] = (char *)arg;
		a->rec[a->nrec] = NULL;
		if (c == 'b' || c == 'j')
			a->lbr = 1;
		if (c == O_DELTA)
			return number(arg, &a->delta, "--delta", 0);
		if (c == PROG_O_SEED)
			return number(arg, &a->seed, "--seed", 0);
		return 0;
	}
	return 1;
}

static int parse_options(int argc, char **argv, struct uniformity_args *a)
{
	static const struct option opts[] = {
	    {"event", required_argument, 0, 'e'},
	    {"count", required_argument, 0, 'c'},
	    {"delta", required_argument, 0, O_DELTA},
	    {"branch-any", no_argument, 0, 'b'},
	    {"branch-filter", required_argument, 0, 'j'},
	    {"lbr-depth", required_argument, 0, O_LBR_DEPTH},
	    {"skid", required_argument, 0, O_SKID},
	    {"refill", required_argument, 0, O_REFILL},
	    {"seed", required_argument, 0, PROG_O_SEED},
	    {"max-insns", required_argument, 0, PROG_O_MAX},
	    {"strict", no_argument, 0, PROG_O_STRICT},
	    {"env", required_argument, 0, PROG_O_ENV},
	    {"clear-env", no_argument, 0, PROG_O_CLEAR_ENV},
	    {"interp", required_argument, 0, PROG_O_INTERP},
	    {"quantum", required_argument, 0, PROG_O_QUANTUM},
	    {"clock-start", required_argument, 0, PROG_O_CLOCK_START},
	    {"method", required_argument, 0, PA_O_METHOD},
	    {"cbt", required_argument, 0, PA_O_CBT},
	    {"span", required_argument, 0, PA_O_SPAN},
	    {"binary", required_argument, 0, PA_O_BINARY},
	    {"binary-dir", required_argument, 0, PA_O_BINARY_DIR},
	    {"profile-event", required_argument, 0, O_PROFILE_EVENT},
	    {"seeds", required_argument, 0, O_SEEDS},
	    {"pmu-seed", required_argument, 0, O_PMU_SEED},
	    {"jobs", required_argument, 0, 'J'},
	    {"alpha", required_argument, 0, O_ALPHA},
	    {"min-share", required_argument, 0, O_MIN_SHARE},
	    {"min-count", required_argument, 0, O_MIN_COUNT},
	    {"normalise", no_argument, 0, O_NORMALISE},
	    {"normalize", no_argument, 0, O_NORMALISE},
	    {"stdin", required_argument, 0, O_STDIN},
	    {"format", required_argument, 0, O_FORMAT},
	    {"svg", required_argument, 0, O_SVG},
	    {"help", no_argument, 0, 'h'},
	    {0, 0, 0, 0}};
	optind = 0; /* a fresh parse (program_parse) */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "+he:c:bj:J:", opts, NULL)) != -1) {
		if (c == 'h') {
			fputs(uniformity_usage, stdout);
			return CLI_HELP;
		}
		int r = c == '?' || c == ':' ? 1 : pass_option(a, c, optarg);
		if (r > 0 && c != '?' && c != ':')
			r = own_option(a, c, optarg);
		if (r < 0)
			return -1;
		if (r > 0)
			return fprintf(stderr,
			               "%s: unknown or incomplete option '%s' (see %s --help)\n",
			               cmd, argv[optind - 1], cmd),
			       -1;
	}
	if (optind >= argc)
		return fprintf(stderr, "%s: no program given (see %s --help)\n", cmd, cmd), -1;
	a->prog = argv + optind;
	return 0;
}

/* What the runs need that one option alone cannot tell. */
static int check_args(struct uniformity_args *a)
{
	if (a->seeds < 2)
		return fprintf(stderr, "%s: --seeds K with K >= 2 is required\n", cmd), -1;
	/* op samples: the random low bits of every interval differ with the seed */
	if (a->delta == 0 && a->pa.po.method != METHOD_IBS)
		return fprintf(
		           stderr,
		           "%s: --delta D > 0 is required: the random period delta is what differs "
		           "between the runs\n",
		           cmd),
		       -1;
	if (!a->lbr && a->pa.po.method != METHOD_IP && a->pa.po.method != METHOD_IBS)
		return fprintf(stderr, "%s: --method %s needs the LBR (-b or -j)\n", cmd,
		               prof_method_name(a->pa.po.method)),
		       -1;
	if (a->stdin_path && access(a->stdin_path, R_OK) < 0)
		return fprintf(stderr, "%s: cannot read %s: %s\n", cmd, a->stdin_path,
		               strerror(errno)),
		       -1;
	if (!a->pmu_seed_given)
		a->pmu_seed0 = a->seed;
	if (a->pmu_seed0 + a->seeds < a->pmu_seed0)
		return fprintf(stderr, "%s: --pmu-seed + --seeds is past 2^64\n", cmd), -1;
	if (a->jobs == 0) {
		long n = sysconf(_SC_NPROCESSORS_ONLN);
		a->jobs = n > 0 ? (uint64_t)n : 1;
	}
	/* the runs' command line, checked as record checks it */
	size_t np = 0;
	while (a->prog[np])
		np++;
	char **full = calloc(a->nrec + np + 2, sizeof(char *));
	if (!full)
		return fprintf(stderr, "%s: out of memory\n", cmd), -1;
	arrays_copy(full, a->rec, a->nrec, sizeof(char *));
	full[a->nrec] = (char *)"--";
	arrays_copy(full + a->nrec + 1, a->prog, np, sizeof(char *));
	int rc = record_check_args((int)(a->nrec + np + 1), full, cmd);
	free(full);
	return rc;
}

static int run_test(struct uniformity_args *a)
{
	struct unif_run *runs = calloc(a->seeds, sizeof(*runs));
	const struct unif_obs **obs = calloc(a->seeds, sizeof(*obs));
	size_t *n = calloc(a->seeds, sizeof(*n));
	int status = EXIT_PMUSIM_ERROR;
	struct outputs outs; /* before the runs: a bad path fails at once */
	struct outfile *svg = NULL;
	outputs_init(&outs, cmd);
	if (a->svg && !(svg = outputs_open(&outs, "--svg", a->svg)))
		goto out;
	if (!runs || !obs || !n) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		goto out;
	}
	struct unif_spec spec = {.record_argv = a->rec,
	                         .prog_argv = a->prog,
	                         .pmu_seed0 = a->pmu_seed0,
	                         .k = a->seeds,
	                         .jobs = (unsigned)(a->jobs < 1024 ? a->jobs : 1024),
	                         .stdin_path = a->stdin_path,
	                         .pa = &a->pa};
	if (unif_runs(&spec, runs, cmd) < 0) {
		free(runs);
		runs = NULL;
		goto out;
	}
	for (size_t i = 0; i < a->seeds; i++)
		obs[i] = runs[i].obs, n[i] = runs[i].n;
	struct unif_result r;
	a->uo.calls_only = a->pa.po.method == METHOD_CALLS;
	if (unif_test(obs, n, a->seeds, &a->uo, &r) < 0) {
		fprintf(stderr, "%s: out of memory\n", cmd);
		goto out;
	}
	struct unif_report rep = {.program = a->prog[0],
	                          .method = a->pa.po.method,
	                          .k = a->seeds,
	                          .seed = a->seed,
	                          .pmu_seed0 = a->pmu_seed0,
	                          .opts = &a->uo,
	                          .runs = runs,
	                          .r = &r};
	/* the file before standard output, which a reader may close early */
	int svg_err = svg ? unif_report_svg(&outs, svg, &rep) : 0;
	if (a->json)
		unif_report_json(stdout, &rep);
	else
		unif_report_text(stdout, &rep);
	status = svg_err < 0 ? EXIT_PMUSIM_ERROR : r.unbiased ? 0 : 1;
	unif_result_free(&r);
out:
	outputs_fini(&outs);
	for (size_t i = 0; runs && i < a->seeds; i++)
		unif_run_free(&runs[i]);
	free(runs);
	free(obs);
	free(n);
	return status;
}

int cmd_uniformity(int argc, char **argv)
{
	struct uniformity_args a = {.uo = {.alpha = 0.001, .min_share = 0.001, .min_count = 100}};
	profile_args_init(&a.pa);
	if (!(a.rec = grow_array(NULL, &a.rec_cap, 2, sizeof(*a.rec))))
		return fprintf(stderr, "%s: out of memory\n", cmd), EXIT_PMUSIM_ERROR;
	a.rec[a.nrec++] = (char *)"record";
	a.rec[a.nrec] = NULL;
	int status = EXIT_PMUSIM_ERROR;
	int rc = parse_options(argc, argv, &a);
	if (rc == CLI_HELP)
		status = 0;
	else if (rc == 0 && check_args(&a) == 0)
		status = run_test(&a);
	free(a.rec);
	return status;
}

int cmd_uniformity_parse(int argc, char **argv)
{
	struct uniformity_args a = {.uo = {.alpha = 0.001, .min_share = 0.001, .min_count = 100}};
	profile_args_init(&a.pa);
	if (!(a.rec = grow_array(NULL, &a.rec_cap, 2, sizeof(*a.rec))))
		return fprintf(stderr, "%s: out of memory\n", cmd), -1;
	a.rec[a.nrec++] = (char *)"record";
	a.rec[a.nrec] = NULL;
	int rc = parse_options(argc, argv, &a);
	if (rc == 0)
		rc = check_args(&a);
	free(a.rec);
	profile_args_fini(&a.pa);
	return rc;
}
