/* pmusim diff BASE NEW: two CI baselines compared (profiler/baseline_diff.h),
 * as text, JSON or a Markdown table for a pull request, with an SVG bar chart of
 * the largest changes; thresholds decide the exit status. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "common/err.h"
#include "common/json.h"
#include "common/number.h"
#include "profiler/baseline_diff.h"
#include "profiler/baseline_svg.h"

#define MAX_THRESHOLDS 16

static const char diff_usage[] =
	"usage: pmusim diff [--threshold EV=PCT]... [--format F] [-o FILE] [--svg FILE]\n"
	"                   [--sort KIND] [--top N] [--all] BASE NEW\n"
	"\n"
	"Compares two baselines of `pmusim stat --json` (a CI job's committed one and\n"
	"a new run's): every event's count, and per function its exact self and\n"
	"inclusive costs, matched by name (another build of the program moves every\n"
	"address), with absolute and relative changes, the functions sorted by the\n"
	"change of their self cost, functions added and removed. BASE and NEW may also\n"
	"be what `perf stat -j` prints (events only), or two perf.data recordings\n"
	"(pmusim's or perf record's), compared as perf diff does: per event its total\n"
	"period, per function (perf report's symbols) its samples' period of each\n"
	"event.\n"
	"\n"
	"options:\n"
	"  --threshold EV=PCT   fail (exit 1) when event EV grew by more than PCT per cent\n"
	"                       (repeatable; EV as the files name it: cycles,\n"
	"                       instructions, branch-misses...; PCT may be 0 or negative)\n"
	"  --format F           text (default), json, or markdown (tables to post in a\n"
	"                       pull request)\n"
	"  -o, --output FILE    write there instead of standard output\n"
	"  --svg FILE           a bar chart of the functions' largest changes\n"
	"  --sort KIND          what orders the functions: cycles (default),\n"
	"                       instructions, branches or branch-misses (self); for\n"
	"                       recordings one of their events (default: cycles if\n"
	"                       recorded, else the first)\n"
	"  --top N              functions listed in text and Markdown (default 20; JSON\n"
	"                       lists all)\n"
	"  --all                list the functions that did not change too\n"
	"  -h, --help           this text\n"
	"\n"
	"exit status: 0 within every threshold, 1 when one was passed, 2 on errors (a\n"
	"file unreadable or no baseline, a bad option, a threshold's event missing).\n";

enum { O_THRESHOLD = 0x100, O_FORMAT, O_SVG, O_SORT, O_TOP, O_ALL };
enum fmt { F_TEXT, F_JSON, F_MD };

struct diff_args {
	struct bl_threshold th[MAX_THRESHOLDS];
	size_t nth;
	enum fmt fmt;
	const char *out, *svg;
	int all;
	const char *sort;
	uint64_t top;
	const char *base, *cur;
};

static int parse_threshold(const char *arg, struct diff_args *a)
{
	const char *eq = strrchr(arg, '=');
	if (a->nth == MAX_THRESHOLDS)
		return fprintf(stderr, "pmusim diff: at most %d --threshold\n", MAX_THRESHOLDS), -1;
	double v = 0;
	if (!eq || eq == arg || number_parse_real(eq + 1, &v) != NUMBER_OK || v > 1e12 || v < -100)
		return fprintf(stderr, "pmusim diff: --threshold needs EV=PCT (cycles=2.5), not '%s'\n", arg), -1;
	a->th[a->nth++] = (struct bl_threshold){.event = strndup(arg, (size_t)(eq - arg)), .pct = v};
	return a->th[a->nth - 1].event ? 0 : -1;
}

static int parse_args(int argc, char **argv, struct diff_args *a)
{
	static const struct option opts[] = {{"threshold", required_argument, 0, O_THRESHOLD},
					     {"format", required_argument, 0, O_FORMAT},
					     {"output", required_argument, 0, 'o'},
					     {"svg", required_argument, 0, O_SVG},
					     {"sort", required_argument, 0, O_SORT},
					     {"top", required_argument, 0, O_TOP},
					     {"all", no_argument, 0, O_ALL},
					     {"help", no_argument, 0, 'h'},
					     {0, 0, 0, 0}};
	int c;
	char *end;
	a->top = 20;
	optind = 0; /* a fresh parse (program_parse) */
	opterr = 0;
	while ((c = getopt_long(argc, argv, "+ho:", opts, NULL)) != -1) {
		switch (c) {
		case 'h': fputs(diff_usage, stdout); return CLI_HELP;
		case 'o': a->out = optarg; break;
		case O_SVG: a->svg = optarg; break;
		case O_ALL: a->all = 1; break;
		case O_THRESHOLD:
			if (parse_threshold(optarg, a) < 0)
				return -1;
			break;
		case O_FORMAT:
			if (strcmp(optarg, "text") == 0)
				a->fmt = F_TEXT;
			else if (strcmp(optarg, "json") == 0)
				a->fmt = F_JSON;
			else if (strcmp(optarg, "markdown") == 0 || strcmp(optarg, "md") == 0)
				a->fmt = F_MD;
			else
				return fprintf(stderr, "pmusim diff: --format needs text, json or markdown, not '%s'\n",
					       optarg), -1;
			break;
		case O_SORT: a->sort = optarg; break;
		case O_TOP:
			a->top = strtoull(optarg, &end, 10);
			if (!optarg[0] || *end || optarg[0] == '-')
				return fprintf(stderr, "pmusim diff: --top needs a number, not '%s'\n", optarg), -1;
			break;
		default:
			return fprintf(stderr, "pmusim diff: unknown option '%s' (see pmusim diff --help)\n",
				       argv[optind - 1]), -1;
		}
	}
	if (argc - optind != 2)
		return fprintf(stderr, "pmusim diff: needs two files, BASE and NEW (see pmusim diff --help)\n"), -1;
	a->base = argv[optind], a->cur = argv[optind + 1];
	return 0;
}

int cmd_diff_parse(int argc, char **argv)
{
	struct diff_args a;
	memset(&a, 0, sizeof(a));
	int rc = parse_args(argc, argv, &a);
	for (size_t t = 0; t < a.nth; t++)
		free((char *)a.th[t].event);
	return rc;
}

/* 1234567 -> "1,234,567", with a sign when asked. */
static const char *num(char *buf, int64_t v, int sign)
{
	char tmp[32];
	uint64_t m = v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
	int n = snprintf(tmp, sizeof(tmp), "%llu", (unsigned long long)m), k = 0;
	if (v < 0)
		buf[k++] = '-';
	else if (sign)
		buf[k++] = v > 0 ? '+' : ' ';
	for (int i = 0; i < n; i++) {
		buf[k++] = tmp[i];
		if ((n - i - 1) % 3 == 0 && i != n - 1)
			buf[k++] = ',';
	}
	buf[k] = 0;
	return buf;
}

static const char *pct(char *buf, const struct bl_delta *d)
{
	double p = bl_percent(d);
	if (p >= 1e300)
		return strcpy(buf, "new");
	snprintf(buf, 32, "%+.2f%%", p);
	return buf;
}

static size_t count_status(const struct bl_diff *d, enum bl_status s)
{
	size_t n = 0;
	for (size_t i = 0; i < d->nfn; i++)
		n += d->fn[i].status == s;
	return n;
}

static void describe(FILE *f, const struct baseline *b, const struct baseline *c, int md)
{
	const char *q = md ? "`" : "";
	if (b->has_functions && c->has_functions) {
		fprintf(f, "%s%s%s", q, b->program, q);
		if (strcmp(b->build_id, c->build_id) != 0)
			fprintf(f, ", another build (build id %.12s -> %.12s): functions matched by name", b->build_id,
				c->build_id);
		fprintf(f, md ? "\n\n" : "\n");
		if (strcmp(b->options, c->options) != 0)
			fprintf(f, "options differ: base %s%s%s, new %s%s%s%s", q, b->options, q, q, c->options, q,
				md ? "\n\n" : "\n");
		if (strcmp(b->pmusim, c->pmusim) != 0)
			fprintf(f, "pmusim differs: base %s, new %s%s", b->pmusim, c->pmusim, md ? "\n\n" : "\n");
		if (b->exit_status != c->exit_status)
			fprintf(f, "exit status differs: base %d, new %d%s", b->exit_status, c->exit_status,
				md ? "\n\n" : "\n");
	}
}

static void print_events(FILE *f, const struct bl_diff *d, int md)
{
	char b1[40], b2[40], b3[40], b4[40];
	if (md)
		fprintf(f, "| event | base | new | change | %% |\n|---|---:|---:|---:|---:|\n");
	else
		fprintf(f, "%-32s %16s %16s %16s %9s\n", "event", "base", "new", "change", "%");
	for (size_t i = 0; i < d->nev; i++) {
		const struct bl_event_diff *e = &d->ev[i];
		const char *p = !e->in_new ? "gone" : !e->in_base ? "new" : pct(b4, &e->d);
		if (md)
			fprintf(f, "| %s | %s | %s | %s | %s |\n", e->name, num(b1, (int64_t)e->d.base, 0),
				num(b2, (int64_t)e->d.cur, 0), num(b3, bl_change(&e->d), 1), p);
		else
			fprintf(f, "%-32s %16s %16s %16s %9s\n", e->name, num(b1, (int64_t)e->d.base, 0),
				num(b2, (int64_t)e->d.cur, 0), num(b3, bl_change(&e->d), 1), p);
	}
}

static void print_functions(FILE *f, const struct bl_diff *d, const struct diff_args *a, int md)
{
	char b[4][40];
	const char *kn = d->kind[d->sort_kind];
	if (!count_status(d, BL_CHANGED) && !count_status(d, BL_ADDED) && !count_status(d, BL_REMOVED) && !a->all) {
		fprintf(f, "\nno function changed (%zu the same)\n", d->nfn);
		return;
	}
	fprintf(f, "%sfunctions by the change of their self %s: %zu changed, %zu added, %zu removed, %zu the same%s\n",
		md ? "\n" : "\n", kn, count_status(d, BL_CHANGED), count_status(d, BL_ADDED),
		count_status(d, BL_REMOVED), count_status(d, BL_SAME), md ? "\n" : "");
	if (md) {
		fprintf(f, "| function |");
		for (size_t k = 0; k < d->nkinds; k++)
			fprintf(f, " Δ %s |", d->kind[k]);
		fprintf(f, " self %s base → new | %% |", kn);
		if (d->inclusive)
			fprintf(f, " Δ inclusive %s |", kn);
		fprintf(f, "\n|---|");
		for (size_t k = 0; k < d->nkinds + 2 + (size_t)d->inclusive; k++)
			fprintf(f, "---:|");
		fputc('\n', f);
	} else {
		fprintf(f, "%-32s", "function");
		for (size_t k = 0; k < d->nkinds; k++) {
			char h[80];
			snprintf(h, sizeof(h), "d %s", d->kind[k]);
			fprintf(f, " %14s", h);
		}
		fprintf(f, " %29s %9s%s\n", "self base -> new", "%", d->inclusive ? "    d inclusive" : "");
	}
	uint64_t shown = 0;
	for (size_t i = 0; i < d->nfn && shown < a->top; i++) {
		const struct bl_func_diff *fn = &d->fn[i];
		if (fn->status == BL_SAME && !a->all)
			continue;
		shown++;
		const struct bl_delta *s = &fn->self[d->sort_kind];
		char from_to[80];
		snprintf(from_to, sizeof(from_to), "%s %s %s", num(b[1], (int64_t)s->base, 0), md ? "→" : "->",
			 num(b[2], (int64_t)s->cur, 0));
		const char *tag = fn->status == BL_ADDED ? " (added)" : fn->status == BL_REMOVED ? " (removed)" : "";
		char name[300];
		snprintf(name, sizeof(name), md ? "`%s`%s" : "%s%s", fn->name, tag);
		fprintf(f, md ? "| %s |" : "%-32s", name);
		for (size_t k = 0; k < d->nkinds; k++)
			fprintf(f, md ? " %s |" : " %14s", num(b[0], bl_change(&fn->self[k]), 1));
		fprintf(f, md ? " %s |" : " %29s", from_to);
		fprintf(f, md ? " %s |" : " %9s", fn->status == BL_REMOVED ? "gone" : pct(b[3], s));
		if (d->inclusive)
			fprintf(f, md ? " %s |" : " %14s", num(b[3], bl_change(&fn->incl[d->sort_kind]), 1));
		fputc('\n', f);
	}
}

static void print_thresholds(FILE *f, const struct diff_args *a, int md)
{
	char b[40];
	if (a->nth)
		fprintf(f, "\n");
	for (size_t t = 0; t < a->nth; t++) {
		const struct bl_threshold *th = &a->th[t];
		snprintf(b, sizeof(b), "%+.2f%%", th->got >= 1e300 ? 0 : th->got);
		fprintf(f, "%sthreshold %s %+.2f%%: %s %s\n", md ? "- " : "", th->event, th->pct,
			th->got >= 1e300 ? "new" : b, th->regressed ? (md ? "**regressed**" : "REGRESSED") : "within");
	}
}

static void put_delta(FILE *f, const char *key, const struct bl_delta *d)
{
	fprintf(f, "\"%s\": {\"base\": %llu, \"new\": %llu, \"change\": %lld", key, (unsigned long long)d->base,
		(unsigned long long)d->cur, (long long)bl_change(d));
	if (d->base)
		fprintf(f, ", \"percent\": %.4f", bl_percent(d));
	fputc('}', f);
}

/* "key": {"program", "build_id", "options"} of one side. */
static void put_side(FILE *f, const char *key, const struct baseline *b)
{
	fprintf(f, "  \"%s\": {\"program\": ", key);
	json_put_str(f, b->program);
	fprintf(f, ", \"build_id\": ");
	json_put_str(f, b->build_id);
	fprintf(f, ", \"options\": ");
	json_put_str(f, b->options);
	fprintf(f, "},\n");
}

static void print_json(FILE *f, const struct baseline *b, const struct baseline *c, const struct bl_diff *d,
		       const struct diff_args *a)
{
	static const char *const st[] = {"same", "changed", "added", "removed"};
	fprintf(f, "{\n");
	put_side(f, "base", b);
	put_side(f, "new", c);
	fprintf(f, "  \"events\": [");
	for (size_t i = 0; i < d->nev; i++) {
		const struct bl_event_diff *e = &d->ev[i];
		fprintf(f, "%s\n    {\"event\": ", i ? "," : "");
		json_put_str(f, e->name);
		fprintf(f, ", \"in_base\": %s, \"in_new\": %s, ", e->in_base ? "true" : "false",
			e->in_new ? "true" : "false");
		put_delta(f, "count", &e->d);
		double p = bl_percent(&e->d);
		if (p < 1e300)
			fprintf(f, ", \"percent\": %.4f", p);
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"functions\": [");
	for (size_t i = 0; i < d->nfn; i++) {
		const struct bl_func_diff *fn = &d->fn[i];
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_put_str(f, fn->name);
		fprintf(f, ", \"status\": \"%s\", ", st[fn->status]);
		put_delta(f, "calls", &fn->calls);
		for (int part = 0; part < 1 + d->inclusive; part++) {
			fprintf(f, ", \"%s\": {", part ? "inclusive" : "self");
			for (size_t k = 0; k < d->nkinds; k++) {
				fprintf(f, "%s", k ? ", " : "");
				put_delta(f, d->kind[k], part ? &fn->incl[k] : &fn->self[k]);
			}
			fputc('}', f);
		}
		fputc('}', f);
	}
	fprintf(f, "\n  ],\n  \"thresholds\": [");
	for (size_t t = 0; t < a->nth; t++) {
		fprintf(f, "%s\n    {\"event\": ", t ? "," : "");
		json_put_str(f, a->th[t].event);
		fprintf(f, ", \"limit_percent\": %.4f, ", a->th[t].pct);
		if (a->th[t].got < 1e300)
			fprintf(f, "\"percent\": %.4f, ", a->th[t].got);
		fprintf(f, "\"regressed\": %s}", a->th[t].regressed ? "true" : "false");
	}
	fprintf(f, "\n  ],\n  \"regressed\": %s\n}\n", d->regressed ? "true" : "false");
}

static int load(const char *path, struct baseline *b)
{
	char msg[256] = "";
	int err = baseline_read(path, b, msg, sizeof(msg));
	if (err < 0)
		fprintf(stderr, "pmusim diff: %s: %s\n", path, msg[0] ? msg : pmusim_strerror(err));
	return err;
}

int cmd_diff(int argc, char **argv)
{
	struct diff_args a;
	struct baseline b = {0}, c = {0};
	struct bl_diff d = {0};
	struct outputs outs;
	int status = EXIT_PMUSIM_ERROR;
	memset(&a, 0, sizeof(a));
	outputs_init(&outs, "pmusim diff");
	struct outfile *out = NULL, *svg = NULL;
	int rc = parse_args(argc, argv, &a);
	if (rc == CLI_HELP)
		status = 0;
	if (rc || load(a.base, &b) < 0 || load(a.cur, &c) < 0)
		goto done;
	const struct baseline *kinds = b.has_functions ? &b : &c;
	int sort_ok = !a.sort || !kinds->has_functions;
	for (size_t k = 0; k < kinds->nkinds; k++)
		sort_ok |= a.sort && strcmp(a.sort, kinds->kind[k]) == 0;
	if (!sort_ok) {
		fprintf(stderr, "pmusim diff: --sort %s: the files' costs are", a.sort);
		for (size_t k = 0; k < kinds->nkinds; k++)
			fprintf(stderr, "%s %s", k ? "," : "", kinds->kind[k]);
		fprintf(stderr, "\n");
		goto done;
	}
	int err = baseline_diff(&b, &c, a.sort, a.th, a.nth, &d);
	if (err < 0) {
		fprintf(stderr, "pmusim diff: %s\n", err == PMUSIM_ERR_ARG ? "the two files' per-function costs are not "
				"of the same kinds (a baseline and a recording, or recordings of other events)" : "out of memory");
		goto done;
	}
	for (size_t t = 0; t < a.nth; t++)
		if (!a.th[t].found) {
			fprintf(stderr, "pmusim diff: --threshold %s: no event '%s' in both files\n", a.th[t].event,
				a.th[t].event);
			goto done;
		}
	if ((a.out && !(out = outputs_open(&outs, "-o", a.out))) || (a.svg && !(svg = outputs_open(&outs, "--svg", a.svg))))
		goto done;
	FILE *f = out ? out->f : stdout;
	if (a.fmt == F_JSON) {
		print_json(f, &b, &c, &d, &a);
	} else {
		int md = a.fmt == F_MD;
		if (md)
			fprintf(f, "### pmusim diff\n\n");
		describe(f, &b, &c, md);
		print_events(f, &d, md);
		if (b.has_functions && c.has_functions)
			print_functions(f, &d, &a, md);
		print_thresholds(f, &a, md);
	}
	if (svg && baseline_svg(svg->f, &d, a.base, a.cur, (size_t)(a.top ? a.top : 20)) < 0) {
		fprintf(stderr, "pmusim diff: out of memory\n");
		goto done;
	}
	if ((out && outputs_commit(&outs, out) < 0) || (svg && outputs_commit(&outs, svg) < 0))
		goto done;
	if (!out && fflush(stdout) != 0) {
		fprintf(stderr, "pmusim diff: cannot write the standard output\n");
		goto done;
	}
	status = d.regressed ? 1 : 0;
done:
	outputs_fini(&outs);
	bl_diff_free(&d);
	baseline_free(&b);
	baseline_free(&c);
	for (size_t t = 0; t < a.nth; t++)
		free((char *)a.th[t].event);
	return status;
}
