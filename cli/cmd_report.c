/* pmusim report: the edge profile of a recording, built with one of the
 * methods, as a readable report, JSON, BOLT fdata (llvm-bolt -data) or
 * AutoFDO's text input (create_llvm_prof --profiler text); with --rep the REP
 * report, with --stacks the stack profile (profiler/stackprof.h) and its flame
 * graph (profiler/flame.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/profile_args.h"
#include "common/err.h"
#include "common/fdata.h"
#include "common/outfile.h"
#include "profiler/autofdo.h"
#include "profiler/flame.h"
#include "profiler/rep_report.h"
#include "profiler/stackprof.h"

static const char report_usage[] =
	"usage: pmusim report [-i FILE] [--format text|json|fdata|autofdo] [-o OUT]\n"
	"                     [profile options]\n"
	"       pmusim report --rep [-i FILE] [--format text|json] [-o OUT]\n"
	"       pmusim report --stacks [-i FILE] [--format text|json|folded] [-o OUT]\n"
	"                     [--svg SVG] [--comm] [--event N]\n"
	"\n"
	"Builds the edge profile of a recording (perf.data of pmusim record or perf\n"
	"record -b, or the text of perf script -F ip,brstack) and writes it.\n"
	"\n"
	"options:\n"
	"  --format F           text (default: hottest edges and functions), json\n"
	"                       (samples, samples_dropped, edges), fdata (BOLT: taken and\n"
	"                       fall-through lines, for llvm-bolt -data), autofdo (ranges,\n"
	"                       addresses and branches, for create_llvm_prof --profiler text)\n"
	"  -o, --output OUT     write to OUT (default: standard output)\n"
	"  --rep                the REP report of a pmusim record --rep recording: per REP\n"
	"                       site executions, requested and actual counts, min/mean/max,\n"
	"                       ended by condition (--format text or json)\n"
	"  --stacks             the stack profile of samples with callchains (pmusim\n"
	"                       record --tstack, perf record -g): per function total\n"
	"                       (on the stack) and self (at the top) samples and weight,\n"
	"                       per call path samples; --format text (default), json, or\n"
	"                       folded (\"main;f;g 12\" lines for flamegraph.pl,\n"
	"                       speedscope); uses the pmusim_tstack event when the file\n"
	"                       has one, else --event N, else every sample\n"
	"  --svg SVG            with --stacks: also write a flame graph to SVG\n"
	"  --comm               with --stacks: the thread's command name as the\n"
	"                       outermost frame (as stackcollapse-perf.pl)\n"
	PROFILE_OPTIONS_HELP
	"  -h, --help           this text\n"
	"\n"
	"exit status: 0; 2 on errors (bad options, unreadable or corrupt files, an output\n"
	"that cannot be created; with --stacks also a file without callchains). Files are\n"
	"written before standard output; a reader of standard output that goes away early\n"
	"(| head) is not an error.\n";

enum { O_FORMAT = PA_O_END, O_REP, O_STACKS, O_SVG, O_COMM };
enum { F_TEXT, F_JSON, F_FDATA, F_AUTOFDO, F_FOLDED, F_COUNT };

struct report_args {
	struct profile_args pa;
	int format;
	const char *out;
	int rep;
	int stacks, comm;
	const char *svg;
};

static int report_option(void *ctx, int c, char *arg)
{
	static const char *const formats[F_COUNT] = {"text", "json", "fdata", "autofdo", "folded"};
	struct report_args *a = ctx;
	switch (c) {
	case 'o': a->out = arg; return 0;
	case O_REP: a->rep = 1; return 0;
	case O_STACKS: a->stacks = 1; return 0;
	case O_SVG: a->svg = arg; return 0;
	case O_COMM: a->comm = 1; return 0;
	case O_FORMAT: break;
	default: return 1;
	}
	for (a->format = 0; a->format < F_COUNT && strcmp(arg, formats[a->format]) != 0; a->format++)
		;
	if (a->format == F_COUNT)
		return fprintf(stderr, "pmusim report: unknown format '%s' (text, json, fdata, autofdo, folded)\n",
			       arg), -1;
	return 0;
}

static int parse_args(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		PROFILE_LONG_OPTIONS, {"format", required_argument, 0, O_FORMAT},
		{"output", required_argument, 0, 'o'}, {"rep", no_argument, 0, O_REP},
		{"stacks", no_argument, 0, O_STACKS}, {"svg", required_argument, 0, O_SVG},
		{"comm", no_argument, 0, O_COMM}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	return profile_args_parse(&a->pa, argc, argv, opts, report_usage, "pmusim report", report_option, a);
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void sym_text(const struct symtab *st, uint64_t a, char *buf, size_t len)
{
	const struct sym *s = symtab_lookup(st, a);
	if (s)
		snprintf(buf, len, "%s+0x%" PRIx64, s->name, a - s->addr);
	else
		snprintf(buf, len, "0x%" PRIx64, a);
}

static int cmp_weight(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return x->from != y->from ? (x->from < y->from ? -1 : 1) : (x->to < y->to ? -1 : x->to > y->to);
}

static void write_text(FILE *f, struct profile *prof, const struct edge *e, size_t n, int method)
{
	const struct profile_stats *st = profile_stats(prof);
	const struct symtab *sy = binary_symtab(profile_binary(prof));
	fprintf(f, "# method %s: %" PRIu64 " samples, %" PRIu64 " used, %" PRIu64 " dropped; %zu edges\n",
		prof_method_name(method), st->samples, st->used, st->dropped, n);
	for (int i = 1; i < DROP_COUNT; i++)
		if (st->drop[i])
			fprintf(f, "#   dropped, %s: %" PRIu64 "\n", trace_drop_name((enum trace_drop)i), st->drop[i]);
	struct edge *by_w = malloc((n + 1) * sizeof(*by_w));
	if (!by_w)
		return;
	memcpy(by_w, e, n * sizeof(*e));
	qsort(by_w, n, sizeof(*by_w), cmp_weight);
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += e[i].w;
	fprintf(f, "\n# hottest edges\n# %8s %14s  %-10s %s\n", "share", "count", "kind", "from -> to");
	for (size_t i = 0; i < n && i < 25; i++) {
		char a[600], b[600];
		sym_text(sy, by_w[i].from, a, sizeof(a));
		sym_text(sy, by_w[i].to, b, sizeof(b));
		fprintf(f, "  %7.3f%% %14.0f  %-10s %s -> %s\n", total > 0 ? 100 * by_w[i].w / total : 0, by_w[i].w,
			by_w[i].taken ? br_kind_name(by_w[i].kind) : "fallthru", a, b);
	}
	/* functions: weight of the edges leaving them */
	size_t ns = symtab_count(sy);
	double *fw = calloc(ns + 1, sizeof(double));
	for (size_t i = 0; fw && i < n; i++) {
		const struct sym *s = symtab_lookup(sy, e[i].from);
		if (s)
			fw[s - symtab_at(sy, 0)] += e[i].w;
	}
	fprintf(f, "\n# hottest functions (branch outcomes leaving them)\n");
	for (int k = 0; fw && k < 15; k++) {
		size_t best = ns;
		for (size_t i = 0; i < ns; i++)
			if (fw[i] > 0 && (best == ns || fw[i] > fw[best]))
				best = i;
		if (best == ns)
			break;
		fprintf(f, "  %7.3f%% %14.0f  %s\n", 100 * fw[best] / total, fw[best], symtab_at(sy, best)->name);
		fw[best] = 0;
	}
	free(fw);
	free(by_w);
}

static void write_json(FILE *f, struct profile *prof, const struct edge *e, size_t n, int method)
{
	const struct profile_stats *st = profile_stats(prof);
	const struct symtab *sy = binary_symtab(profile_binary(prof));
	fprintf(f, "{\"method\": \"%s\", \"samples\": %" PRIu64 ", \"samples_used\": %" PRIu64
		", \"samples_dropped\": %" PRIu64 ", \"dropped\": {", prof_method_name(method), st->samples,
		st->used, st->dropped);
	for (int i = 1; i < DROP_COUNT; i++)
		fprintf(f, "%s\"%s\": %" PRIu64, i > 1 ? ", " : "", trace_drop_name((enum trace_drop)i), st->drop[i]);
	fputs("}, \"edges\": [", f);
	for (size_t i = 0; i < n; i++) {
		char a[600], b[600];
		sym_text(sy, e[i].from, a, sizeof(a));
		sym_text(sy, e[i].to, b, sizeof(b));
		fprintf(f, "%s\n  {\"from\": \"0x%" PRIx64 "\", \"from_sym\": \"%s\", \"to\": \"0x%" PRIx64
			"\", \"to_sym\": \"%s\", \"kind\": \"%s\", \"taken\": %d, \"count\": %.3f}",
			i ? "," : "", e[i].from, a, e[i].to, b, br_kind_name(e[i].kind), e[i].taken, e[i].w);
	}
	fputs("\n]}\n", f);
}

static void write_fdata(FILE *f, struct profile *prof, const struct edge *e, size_t n)
{
	struct binary *b = profile_binary(prof);
	struct fdata_namer nm = {binary_symtab(b), base_name(binary_path(b)), binary_bias(b), NULL, 0};
	nm.nregions = binary_regions(b, &nm.regions);
	for (size_t i = 0; i < n; i++) {
		uint64_t c = (uint64_t)llround(e[i].w);
		if (c)
			fdata_write_line(f, &nm, e[i].from, e[i].to, 0, c);
	}
}

/* The command's output files (-o, --svg), opened before anything is read or written. */
static struct outputs outs;
static struct outfile *out_file, *svg_file;

/* Writes through fn into f (opened in outs, complete or absent) or, for NULL, standard
 * output; 0 or -1 (message printed). A reader of standard output that went away (a
 * closed pipe: `| head`) took what it wanted: no message, 0. */
static int write_output(struct outfile *f, int (*fn)(FILE *f, void *ctx), void *ctx)
{
	if (f && f->f == stdout) { /* -o -: standard output, with its rules */
		outputs_hand_over(&outs, f);
		f = NULL;
	}
	errno = 0; /* EPIPE below comes from this output's writes */
	int err = fn(f ? f->f : stdout, ctx);
	if (f && err < 0)
		fprintf(stderr, "pmusim report: cannot write %s: %s\n", outfile_name(f), pmusim_strerror(err));
	if (f)
		return err < 0 ? -1 : outputs_commit(&outs, f);
	if (err >= 0 && (fflush(stdout) != 0 || ferror(stdout)))
		err = PMUSIM_ERR_IO;
	if (err < 0 && errno == EPIPE)
		return 0;
	if (err < 0) {
		fprintf(stderr, "pmusim report: cannot write the report: %s\n",
			err == PMUSIM_ERR_IO && errno ? strerror(errno) : pmusim_strerror(err));
		return -1;
	}
	return 0;
}

struct report_ctx {
	const struct report_args *a;
	struct profile *prof;
};

static int write_profile(FILE *f, void *ctx)
{
	const struct report_ctx *c = ctx;
	size_t n;
	const struct edge *e = edges_sorted(profile_edges(c->prof), &n);
	if (c->a->format == F_TEXT)
		write_text(f, c->prof, e, n, c->a->pa.po.method);
	else if (c->a->format == F_JSON)
		write_json(f, c->prof, e, n, c->a->pa.po.method);
	else if (c->a->format == F_FDATA)
		write_fdata(f, c->prof, e, n);
	else
		return autofdo_write(f, profile_binary(c->prof), e, n);
	return 0;
}

static int write_report(const struct report_args *a, struct profile *prof)
{
	struct report_ctx c = {a, prof};
	return write_output(out_file, write_profile, &c);
}

struct rep_args_rows {
	struct rep_row *rows;
	size_t n;
	int mode, json;
}; 

static int write_rep(FILE *f, void *ctx)
{
	const struct rep_args_rows *r = ctx;
	return rep_report_write(f, r->rows, r->n, r->mode, r->json);
}

/* pmusim report --rep */
static int rep_report(const struct report_args *a)
{
	if (a->format != F_TEXT && a->format != F_JSON)
		return fprintf(stderr, "pmusim report: --rep writes text or json\n"), EXIT_PMUSIM_ERROR;
	char msg[512] = "";
	struct rep_args_rows r = {.json = a->format == F_JSON};
	int err = rep_report_read(a->pa.input, &r.rows, &r.n, &r.mode, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "pmusim report: %s\n", msg[0] ? msg : pmusim_strerror(err));
		return EXIT_PMUSIM_ERROR;
	}
	err = write_output(out_file, write_rep, &r);
	free(r.rows);
	return err < 0 ? EXIT_PMUSIM_ERROR : 0;
}

struct stacks_out {
	const struct report_args *a;
	const struct stackprof *sp;
};

static int write_stacks(FILE *f, void *ctx)
{
	const struct stacks_out *o = ctx;
	if (o->a->format == F_JSON)
		return stackprof_write_json(f, o->sp);
	if (o->a->format == F_FOLDED)
		return stackprof_write_folded(f, o->sp);
	return stackprof_write_text(f, o->sp);
}

static int write_flame(FILE *f, void *ctx)
{
	const struct stacks_out *o = ctx;
	const char *in = strrchr(o->a->pa.input, '/') ? strrchr(o->a->pa.input, '/') + 1 : o->a->pa.input;
	char title[300];
	snprintf(title, sizeof(title), "Flame graph of %.200s", in);
	return flame_svg(f, o->sp, title, NULL);
}

/* pmusim report --stacks */
static int stacks_report(const struct report_args *a)
{
	if (a->format != F_TEXT && a->format != F_JSON && a->format != F_FOLDED)
		return fprintf(stderr, "pmusim report: --stacks writes text, json or folded\n"), EXIT_PMUSIM_ERROR;
	struct stackprof_opts so = {.event = a->pa.io.event, .comm = a->comm};
	struct stackprof *sp;
	char msg[512] = "";
	int err = stackprof_read(a->pa.input, &so, &sp, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "pmusim report: %s\n", msg[0] ? msg : pmusim_strerror(err));
		return EXIT_PMUSIM_ERROR;
	}
	struct stacks_out o = {a, sp};
	/* the files first: a reader of standard output that stops early (| head) must not
	 * cost the flame graph */
	err = svg_file ? write_output(svg_file, write_flame, &o) : 0;
	if (err == 0)
		err = write_output(out_file, write_stacks, &o);
	stackprof_free(sp);
	return err < 0 ? EXIT_PMUSIM_ERROR : 0;
}

static int report_main(int argc, char **argv);

int cmd_report(int argc, char **argv)
{
	/* standard output closed early is EPIPE (write_output), not a signal that kills
	 * pmusim with its files half written */
	signal(SIGPIPE, SIG_IGN);
	outputs_init(&outs, "pmusim report");
	int status = report_main(argc, argv);
	outputs_fini(&outs);
	return status;
}

static int report_main(int argc, char **argv)
{
	struct report_args a = {0};
	profile_args_init(&a.pa);
	if (parse_args(argc, argv, &a) < 0)
		return EXIT_PMUSIM_ERROR;
	if (a.rep && a.stacks)
		return fprintf(stderr, "pmusim report: --rep or --stacks, not both\n"), EXIT_PMUSIM_ERROR;
	if (!a.stacks && (a.svg || a.comm || a.format == F_FOLDED))
		return fprintf(stderr, "pmusim report: --svg, --comm and --format folded need --stacks\n"),
		       EXIT_PMUSIM_ERROR;
	if ((a.out && !(out_file = outputs_open(&outs, "-o", a.out))) ||
	    (a.svg && !(svg_file = outputs_open(&outs, "--svg", a.svg))))
		return EXIT_PMUSIM_ERROR;
	if (a.rep)
		return rep_report(&a);
	if (a.stacks)
		return stacks_report(&a);
	struct profile *prof = NULL;
	struct binary *bin = NULL;
	int status = EXIT_PMUSIM_ERROR;
	if (profile_args_load(&a.pa, &prof, &bin, "pmusim report") == 0 && write_report(&a, prof) == 0)
		status = 0;
	profile_free(prof);
	binary_free(bin);
	return status;
}
