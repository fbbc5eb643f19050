/* pmusim stat: runs a program and prints exact counts of the modelled events,
 * as `perf stat` does (table, or -x SEP lines: count, unit, event, run time,
 * percentage running — perf-stat(1) "CSV FORMAT"). */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/eventlist.h"
#include "cli/program.h"
#include "cli/stat_baseline.h"
#include "common/err.h"
#include "profiler/func_costs.h"

static const char stat_usage[] =
	"usage: pmusim stat [-e EV,...] [-x SEP | -j | --json] [-o FILE] [-I MS] [options] [--] PROG [ARGS...]\n"
	"\n"
	"Runs PROG on the emulated CPU and prints exact counts of the modelled events\n"
	"(perf stat's layout). The counts are exact: nothing is sampled or multiplexed.\n"
	"\n"
	"options:\n"
	"  -e, --event EV,...   events to count (repeatable; `pmusim list` lists them; perf's\n"
	"                       syntax: rUUEE, cpu/event=..,umask=../, {groups} -- counted\n"
	"                       together: pmusim never multiplexes);\n"
	"                       default: instructions, cycles, branches, branch-misses,\n"
	"                       br_inst_retired.near_taken, .cond, .near_call,\n"
	"                       .near_return, rep_iterations\n"
	"  -x, --field-separator SEP  one line per event: count SEP unit SEP event SEP\n"
	"                       run time (ns) SEP percentage running\n"
	"  -j, --json-output    one JSON object per event, as perf stat -j (perf 6.1):\n"
	"                       counter-value, unit, event, event-runtime (ns),\n"
	"                       pcnt-running, metric-value, metric-unit\n"
	"  --json               a CI baseline instead (docs/ci.md): one JSON document with\n"
	"                       the program's name, build id and arguments, pmusim's\n"
	"                       version, the options that change numbers, the exit\n"
	"                       status, every event's count, and per function its exact\n"
	"                       self and inclusive instructions, cycles, branches,\n"
	"                       branch-misses and calls; the program starts with only\n"
	"                       the --env variables (as --clear-env), so the bytes are\n"
	"                       the same on every host; `pmusim diff` compares two\n"
	"  -o, --output FILE    write the counts to FILE instead of stderr\n"
	"  -I, --interval-print MS  also print the counts of every MS milliseconds of\n"
	"                       simulated time (the model's clock) as they pass, as perf\n"
	"                       stat -I does (the last interval ends with the program);\n"
	"                       the intervals' counts add up to the totals exactly\n"
	"  --summary            with -I, the totals at the end too (as perf stat)\n" PROG_OPTIONS_HELP
	"  -h, --help           this text\n"
	"\n"
	"exit status: the program's; 124 when --max-insns stopped it; 125 when every thread\n"
	"waits forever (deadlock); 2 on pmusim errors.\n";

struct stat_args {
	struct eventlist el;
	const char *sep, *out;
	int json;
	int baseline;         /* --json */
	struct program *p;
	uint64_t interval_ms; /* -I: 0 for none */
	int summary;          /* --summary: the totals after the intervals too */
};

static int stat_option(void *ctx, int c, char *arg)
{
	struct stat_args *a = ctx;
	switch (c) {
	case 'e':
		if (strcmp(arg, "list") == 0) {
			eventlist_print_known(stdout);
			return CLI_HELP;
		}
		return eventlist_add(&a->el, arg, "pmusim stat");
	case 'x': a->sep = arg; return 0;
	case 'j': a->json = 1; return 0;
	case 'B': a->baseline = 1, a->p->clear_env = 1; return 0;
	case 'o': a->out = arg; return 0;
	case 'S': a->summary = 1; return 0;
	case 'I':
		if (parse_u64(arg, &a->interval_ms) < 0 || a->interval_ms == 0)
			return fprintf(stderr, "pmusim stat: -I needs a positive number of milliseconds, not '%s'\n",
				       arg), -1;
		return 0;
	default: return 1;
	}
}

static int parse_args(int argc, char **argv, struct program *p, struct stat_args *a)
{
	static const struct option opts[] = {
		PROG_LONG_OPTIONS, {"event", required_argument, 0, 'e'},
		{"field-separator", required_argument, 0, 'x'}, {"output", required_argument, 0, 'o'},
		{"json-output", no_argument, 0, 'j'}, {"json", no_argument, 0, 'B'},
		{"interval-print", required_argument, 0, 'I'}, {"summary", no_argument, 0, 'S'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	int rc = program_parse(p, argc, argv, "+he:x:o:jI:" PROG_SHORT_OPTIONS, opts, stat_usage, stat_option, a);
	if (rc)
		return rc;
	if (a->baseline && (a->json || a->sep || a->interval_ms))
		return fprintf(stderr, "%s: --json writes a baseline document: not with -j, -x or -I\n", p->cmd), -1;
	if (a->json && a->sep)
		return fprintf(stderr, "%s: -j (JSON) and -x (separated fields) exclude each other: give one\n",
			       p->cmd), -1;
	if (a->json && a->interval_ms)
		return fprintf(stderr, "%s: -I prints perf stat's table or -x lines, not JSON: drop -j or -I\n",
			       p->cmd), -1;
	if (a->el.n == 0 &&
	    eventlist_add(&a->el, "instructions,cycles,branches,branch-misses,br_inst_retired.near_taken,"
			  "br_inst_retired.cond,br_inst_retired.near_call,br_inst_retired.near_return,"
			  "rep_iterations", p->cmd) < 0)
		return -1;
	return 0;
}

int cmd_stat_parse(int argc, char **argv)
{
	struct program p;
	struct stat_args a;
	memset(&a, 0, sizeof(a));
	a.p = &p;
	int rc = program_init(&p, "pmusim stat", argc) < 0 ? -1 : parse_args(argc, argv, &p, &a);
	program_free(&p);
	return rc;
}

/* 1234567 -> "1,234,567" */
static void thousands(uint64_t v, char *out)
{
	char tmp[32];
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)v), k = 0;
	for (int i = 0; i < n; i++) {
		out[k++] = tmp[i];
		if ((n - i - 1) % 3 == 0 && i != n - 1)
			out[k++] = ',';
	}
	out[k] = 0;
}

static uint64_t count_of(const struct pmu *pmu, const struct stat_args *a, enum pmu_event ev, int *found)
{
	for (size_t i = 0; i < a->el.n; i++)
		if (a->el.spec[i].ev == ev)
			return *found = 1, pmu_count(pmu, (uint32_t)i);
	return *found = 0, 0;
}

/* The note perf stat prints beside a count: 0 when the event has none. */
static int metric_of(const struct pmu *pmu, const struct stat_args *a, size_t i, double *v, const char **unit)
{
	int has_ins, has_cyc, has_br;
	uint64_t ins = count_of(pmu, a, EV_INSTRUCTIONS, &has_ins);
	uint64_t cyc = count_of(pmu, a, EV_CYCLES, &has_cyc);
	uint64_t br = count_of(pmu, a, EV_BRANCHES, &has_br);
	uint64_t n = pmu_count(pmu, (uint32_t)i);
	switch (a->el.spec[i].ev) {
	case EV_INSTRUCTIONS:
		if (!has_cyc || !cyc)
			return 0;
		return *v = (double)n / (double)cyc, *unit = "insn per cycle", 1;
	case EV_BRANCH_MISSES:
		if (!has_br || !br)
			return 0;
		return *v = 100.0 * (double)n / (double)br, *unit = "of all branches", 1;
	case EV_CYCLES:
		if (!has_ins || !ins)
			return 0;
		return *v = (double)n / (double)ins, *unit = "cycles per insn", 1;
	default: return 0;
	}
}

static void json_string(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc(*s, f);
	}
	fputc('"', f);
}

/* perf stat -j (perf 6.1, util/stat-display.c): one object per line. perf
 * prints "(null)" as the metric unit of an event without one; pmusim "". */
static void print_json(FILE *f, const struct pmu *pmu, const struct stat_args *a, uint64_t ns)
{
	for (size_t i = 0; i < a->el.n; i++) {
		double mv = 0;
		const char *mu = "";
		metric_of(pmu, a, i, &mv, &mu);
		fprintf(f, "{\"counter-value\" : \"%llu.000000\", \"unit\" : \"\", \"event\" : ",
			(unsigned long long)pmu_count(pmu, (uint32_t)i));
		json_string(f, a->el.name[i]);
		fprintf(f, ", \"event-runtime\" : %llu, \"pcnt-running\" : 100.00, \"metric-value\" : %f, "
			"\"metric-unit\" : \"%s\"}\n", (unsigned long long)ns, mv, mu);
	}
}

static void print_table(FILE *f, const struct program *p, const struct pmu *pmu,
			const struct stat_args *a, uint64_t ns)
{
	fprintf(f, "\n Performance counter stats for '");
	for (char *const *v = p->so.argv; *v; v++)
		fprintf(f, "%s%s", v == p->so.argv ? "" : " ", *v);
	fprintf(f, "':\n\n");
	for (size_t i = 0; i < a->el.n; i++) {
		char num[40];
		thousands(pmu_count(pmu, (uint32_t)i), num);
		fprintf(f, "%18s      %s", num, a->el.name[i]);
		int pad = 30 - (int)strlen(a->el.name[i]);
		double mv;
		const char *mu;
		if (metric_of(pmu, a, i, &mv, &mu))
			fprintf(f, "%*s #  %6.2f%s %s", pad, "", mv, a->el.spec[i].ev == EV_BRANCH_MISSES ? "%" : " ", mu);
		fputc('\n', f);
	}
	fprintf(f, "\n %18.9f seconds time elapsed (simulated, %s model at %u MHz)\n\n", (double)ns / 1e9,
		cpu_model_default()->name, cpu_model_default()->mhz);
}

/* Prints the counts on stderr or into out (opened before the run); 0 or -1 (message
 * printed). */
static int print_counts(struct program *p, const struct pmu *pmu, const struct stat_args *a,
			struct outfile *out, struct func_costs *fc, int status)
{
	FILE *f = out ? out->f : stderr;
	uint64_t ns = pmu_cycles(pmu) * 1000 / cpu_model_default()->mhz;
	if (a->baseline) {
		int err = func_costs_error(fc);
		if (!err)
			err = baseline_write(f, p, pmu, &a->el, fc, status);
		if (err < 0)
			return fprintf(stderr, "%s: %s\n", p->cmd, pmusim_strerror(err)), -1;
	} else if (a->interval_ms && !a->summary) {
		/* perf stat -I prints no totals without --summary */
	} else if (a->json) {
		print_json(f, pmu, a, ns);
	} else if (a->sep) {
		for (size_t i = 0; i < a->el.n; i++)
			fprintf(f, "%llu%s%s%s%s%llu%s100.00%s%s\n",
				(unsigned long long)pmu_count(pmu, (uint32_t)i), a->sep, a->sep, a->el.name[i],
				a->sep, (unsigned long long)ns, a->sep, a->sep, a->sep);
	} else {
		print_table(f, p, pmu, a, ns);
	}
	return out ? outputs_commit(&p->outs, out) : 0;
}

/* -I: the counts of each interval of simulated time, read at the first block boundary
 * at or after its end (perf stat -I reads at a timer tick, likewise a little late). */
struct interval {
	FILE *f;
	const struct stat_args *a;
	const struct pmu *pmu;
	uint64_t step_ns, next_ns, last_ns; /* last_ns: the time of the last line */
	uint64_t *prev;   /* the counts at the last line */
	unsigned printed; /* intervals printed: perf repeats its header every 25 */
};

static uint64_t sim_ns(const struct pmu *pmu)
{
	return pmu_cycles(pmu) * 1000 / cpu_model_default()->mhz;
}

/* One interval's lines: perf stat's interval prefix ("%6lu.%09lu ") before a table
 * line, or ("%lu.%09lu" SEP) before a -x line; counts since the last interval. */
static void interval_print(struct interval *iv, uint64_t now)
{
	const struct stat_args *a = iv->a;
	if (!a->sep && iv->printed++ % 25 == 0)
		fprintf(iv->f, "#           time             counts unit events\n");
	for (size_t i = 0; i < a->el.n; i++) {
		uint64_t c = pmu_count(iv->pmu, (uint32_t)i), d = c - iv->prev[i];
		iv->prev[i] = c;
		if (a->sep) {
			fprintf(iv->f, "%llu.%09llu%s%llu%s%s%s%s%llu%s100.00%s%s\n", (unsigned long long)(now / 1000000000),
				(unsigned long long)(now % 1000000000), a->sep, (unsigned long long)d, a->sep, a->sep,
				a->el.name[i], a->sep, (unsigned long long)(now - iv->last_ns), a->sep, a->sep, a->sep);
		} else {
			char num[40];
			thousands(d, num);
			fprintf(iv->f, "%6llu.%09llu %18s      %s\n", (unsigned long long)(now / 1000000000),
				(unsigned long long)(now % 1000000000), num, a->el.name[i]);
		}
	}
	iv->last_ns = now;
}

static void interval_check(struct interval *iv)
{
	uint64_t now = sim_ns(iv->pmu);
	if (now < iv->next_ns)
		return;
	interval_print(iv, now);
	iv->next_ns = (now / iv->step_ns + 1) * iv->step_ns;
}

static void interval_retire(void *ctx, const struct retired_block *rb)
{
	(void)rb;
	interval_check(ctx);
}

static void interval_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
			   unsigned flags)
{
	(void)bi, (void)next, (void)sp, (void)tid, (void)flags;
	interval_check(ctx);
}

/* The last, partial interval: what the program did since the last line. */
static void interval_finish(struct interval *iv)
{
	int left = 0;
	for (size_t i = 0; i < iv->a->el.n; i++)
		left |= pmu_count(iv->pmu, (uint32_t)i) != iv->prev[i];
	if (left)
		interval_print(iv, sim_ns(iv->pmu));
}

static uint64_t clock_cycles(void *ctx)
{
	return pmu_cycles(ctx);
}

static uint64_t clock_misses(void *ctx)
{
	return pmu_mispredicts(ctx);
}

int cmd_stat(int argc, char **argv)
{
	struct program p;
	struct stat_args a;
	struct pmu *pmu = NULL;
	struct func_costs *fc = NULL;
	int status = EXIT_PMUSIM_ERROR;
	uint64_t prev[PMU_MAX_COUNTERS] = {0};
	memset(&a, 0, sizeof(a));
	a.p = &p;
	int rc = program_init(&p, "pmusim stat", argc) < 0 ? -1 : parse_args(argc, argv, &p, &a);
	if (rc) {
		status = rc == CLI_HELP ? 0 : EXIT_PMUSIM_ERROR;
		goto out;
	}
	struct pmu_config cfg = {.nctr = (uint32_t)a.el.n, .seed = p.so.seed};
	for (size_t i = 0; i < a.el.n; i++)
		cfg.ctr[i].ev = a.el.spec[i].ev;
	char msg[256] = "";
	if (pmu_new(&cfg, (struct pmu_sample_sink){0}, &pmu, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "pmusim stat: %s\n", msg[0] ? msg : "out of memory");
		goto out;
	}
	struct outfile *out = NULL; /* before the program runs: a bad path fails at once */
	if ((a.out && !(out = outputs_open(&p.outs, "-o", a.out))) || program_use_pmu(&p, pmu) < 0 ||
	    program_load(&p) < 0)
		goto out;
	if (sim_add_sink(p.sim, pmu_block_sink(pmu)) < 0)
		goto out;
	/* after the PMU's sink too: the clock includes the block */
	if (a.baseline && (!(fc = func_costs_new(sim_symtab(p.sim), (struct fc_clock){clock_cycles, clock_misses, pmu})) ||
			   sim_add_sink(p.sim, func_costs_sink(fc)) < 0)) {
		fprintf(stderr, "%s: out of memory\n", p.cmd);
		goto out;
	}
	/* after the PMU's sink: its counts include the block */
	struct interval iv = {.f = out ? out->f : stderr, .a = &a, .pmu = pmu,
			      .step_ns = a.interval_ms * 1000000, .next_ns = a.interval_ms * 1000000,
			      .prev = prev};
	if (a.interval_ms &&
	    sim_add_sink(p.sim, (struct block_sink){.retire = interval_retire, .whole = interval_whole, .ctx = &iv}) < 0)
		goto out;
	if (p.verbose)
		for (size_t i = 0; i < a.el.n; i++)
			fprintf(stderr, "%s: counting %s\n", p.cmd, a.el.name[i]);
	program_run(&p);
	if (a.interval_ms)
		interval_finish(&iv);
	status = program_status(&p);
	if (fc)
		func_costs_finish(fc);
	if (print_counts(&p, pmu, &a, out, fc, status) < 0 || program_write_truth(&p) < 0)
		status = EXIT_PMUSIM_ERROR;
out:
	func_costs_free(fc);
	pmu_free(pmu);
	program_free(&p);
	return status;
}
