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
#include "common/err.h"
#include "common/outfile.h"

static const char stat_usage[] =
	"usage: pmusim stat [-e EV,...] [-x SEP] [-o FILE] [options] [--] PROG [ARGS...]\n"
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
	"  -o, --output FILE    write the counts to FILE instead of stderr\n" PROG_OPTIONS_HELP
	"  -h, --help           this text\n"
	"\n"
	"exit status: the program's; 124 when --max-insns stopped it; 125 when every thread\n"
	"waits forever (deadlock); 2 on pmusim errors.\n";

struct stat_args {
	struct eventlist el;
	const char *sep, *out;
	int json;
};

static int stat_option(void *ctx, int c, char *arg)
{
	struct stat_args *a = ctx;
	switch (c) {
	case 'e':
		if (strcmp(arg, "list") == 0) {
			eventlist_print_known(stdout);
			exit(0);
		}
		return eventlist_add(&a->el, arg, "pmusim stat");
	case 'x': a->sep = arg; return 0;
	case 'j': a->json = 1; return 0;
	case 'o': a->out = arg; return 0;
	default: return 1;
	}
}

static int parse_args(int argc, char **argv, struct program *p, struct stat_args *a)
{
	static const struct option opts[] = {
		PROG_LONG_OPTIONS, {"event", required_argument, 0, 'e'},
		{"field-separator", required_argument, 0, 'x'}, {"output", required_argument, 0, 'o'},
		{"json-output", no_argument, 0, 'j'},
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	if (program_parse(p, argc, argv, "+he:x:o:j", opts, stat_usage, stat_option, a) < 0)
		return -1;
	if (a->json && a->sep)
		return fprintf(stderr, "%s: -j (JSON) and -x (separated fields) exclude each other: give one\n",
			       p->cmd), -1;
	if (a->el.n == 0 &&
	    eventlist_add(&a->el, "instructions,cycles,branches,branch-misses,br_inst_retired.near_taken,"
			  "br_inst_retired.cond,br_inst_retired.near_call,br_inst_retired.near_return,"
			  "rep_iterations", p->cmd) < 0)
		return -1;
	return 0;
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

static int print_counts(const struct program *p, const struct pmu *pmu, const struct stat_args *a)
{
	struct outfile o = {.f = stderr};
	int err = a->out ? outfile_open(&o, a->out) : 0;
	if (err < 0) {
		fprintf(stderr, "pmusim: cannot write %s: %s\n", a->out, pmusim_strerror(err));
		return -1;
	}
	uint64_t ns = pmu_cycles(pmu) * 1000 / cpu_model_default()->mhz;
	if (a->json) {
		print_json(o.f, pmu, a, ns);
	} else if (a->sep) {
		for (size_t i = 0; i < a->el.n; i++)
			fprintf(o.f, "%llu%s%s%s%s%llu%s100.00%s%s\n",
				(unsigned long long)pmu_count(pmu, (uint32_t)i), a->sep, a->sep, a->el.name[i],
				a->sep, (unsigned long long)ns, a->sep, a->sep, a->sep);
	} else {
		print_table(o.f, p, pmu, a, ns);
	}
	if (a->out && (err = outfile_commit(&o)) < 0) {
		fprintf(stderr, "pmusim: cannot write %s: %s\n", a->out, pmusim_strerror(err));
		return -1;
	}
	return 0;
}

int cmd_stat(int argc, char **argv)
{
	struct program p;
	struct stat_args a;
	struct pmu *pmu = NULL;
	int status = EXIT_PMUSIM_ERROR;
	memset(&a, 0, sizeof(a));
	if (program_init(&p, "pmusim stat", argc) < 0 || parse_args(argc, argv, &p, &a) < 0)
		goto out;
	struct pmu_config cfg = {.nctr = (uint32_t)a.el.n, .seed = p.so.seed};
	for (size_t i = 0; i < a.el.n; i++)
		cfg.ctr[i].ev = a.el.spec[i].ev;
	char msg[256] = "";
	if (pmu_new(&cfg, (struct pmu_sample_sink){0}, &pmu, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "pmusim stat: %s\n", msg[0] ? msg : "out of memory");
		goto out;
	}
	if (program_load(&p) < 0)
		goto out;
	if (sim_add_sink(p.sim, pmu_block_sink(pmu)) < 0)
		goto out;
	program_run(&p);
	status = program_status(&p);
	if (print_counts(&p, pmu, &a) < 0 || program_write_truth(&p) < 0)
		status = EXIT_PMUSIM_ERROR;
out:
	pmu_free(pmu);
	program_free(&p);
	return status;
}
