/* pmusim report: the overhead table of a recording without branch stacks
 * (profiler/overhead.h, as perf report --stdio); the edge profile of a recording, built with one of the
 * methods, as a readable report, JSON, BOLT fdata (llvm-bolt -data) or
 * AutoFDO's text input (create_llvm_prof --profiler text); with --rep the REP
 * report, with --stacks the stack profile (profiler/stackprof.h) and its flame
 * graph (profiler/flame.h); with --cpi the CPI report (profiler/cpi.h); with
 * --regions the hot super-regions of op samples or a truth (cli/report_regions.h). */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cpi_args.h"
#include "cli/outputs.h"
#include "cli/profile_args.h"
#include "cli/report_regions.h"
#include "common/arrays.h"
#include "common/err.h"
#include "common/fdata.h"
#include "common/infile.h"
#include "common/json.h"
#include "common/outfile.h"
#include "profiler/autofdo.h"
#include "profiler/flame.h"
#include "profiler/overhead.h"
#include "profiler/rep_report.h"
#include "profiler/stackprof.h"

static const char report_usage[] =
	"usage: pmusim report [-i FILE] [--sort KEY,...] [--comm COMM,...] [--stdio]\n"
	"       pmusim report [-i FILE] [--format text|json|fdata|autofdo] [-o OUT]\n"
	"                     [profile options]\n"
	"       pmusim report --rep [-i FILE] [--format text|json] [-o OUT]\n"
	"       pmusim report --stacks [-i FILE] [--format text|json|folded|speedscope] [-o OUT]\n"
	"                     [--svg SVG] [--comm-frame] [--event EV]\n"
	"       pmusim report --cpi [-i FILE] [--by function|block|insn] [--format text|json|csv]\n"
	"                     [--insns-from lbr|ip|ibs] [--cycles-from period|lbr]\n"
	"                     [--cycles-input FILE2] [--refill A] [--skid-cycles S] [-o OUT]\n"
	"       pmusim report --regions [-i FILE | --truth-json TRUTH.json]\n"
	"                     [--format text|json|dot] [-o OUT] [--svg DIR] [region options]\n"
	"\n"
	"The method comes from the recording: without a branch stack, the overhead\n"
	"table (as perf report --stdio: each symbol's share of the event's period);\n"
	"with a call-only branch filter (-j any_call, call, ind_call) the calls method;\n"
	"with another filter (-b) the edge profile of the cbt method. --method M or a\n"
	"--format other than text chooses the edge profile, --sort the overhead table.\n"
	"The edge profile is built from perf.data of pmusim record or perf record -b,\n"
	"or the text of perf script -F ip,brstack.\n"
	"\n"
	"options:\n"
	"  -s, --sort KEY,...   overhead table grouped by comm, pid, dso, sym (default\n"
	"                       comm,dso,sym as perf); code without symbols (a stripped\n"
	"                       program) is one row per dso naming its hottest dso+0xOFF\n"
	"  --comm COMM,...      overhead table of these commands' samples only\n"
	"  --stdio              accepted for perf's sake: text is the only display\n"
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
	"                       folded (\"main;f;g 12\" lines for flamegraph.pl), or\n"
	"                       speedscope (speedscope's JSON: a sampled profile per\n"
	"                       thread, the samples in time order, weights in simulated\n"
	"                       nanoseconds); uses the pmusim_tstack event when the file\n"
	"                       has one, else --event N, else every sample\n"
	"  --svg SVG            with --stacks: also write a flame graph to SVG; with\n"
	"                       --regions: a directory, where Graphviz's dot draws each kept\n"
	"                       region as region-0xSTART.svg\n"
	"  --comm-frame         with --stacks: the thread's command name as the\n"
	"                       outermost frame (as stackcollapse-perf.pl)\n"
	"  --cpi                cycles per instruction by function, block or instruction:\n"
	"                       instructions from LBR ranges (record -e\n"
	"                       br_inst_retired.near_taken -b), cycles from a cycles event\n"
	"                       with a random period (record -e cycles/period=P/ --delta\n"
	"                       255), in one recording or two (--cycles-input); IPC beside\n"
	"                       it and the relative error the sample counts allow;\n"
	"                       --format text, json or csv\n"
	CPI_OPTIONS_HELP
	REGION_REPORT_HELP
	REGION_OPTIONS_HELP
	PROFILE_OPTIONS_HELP
	"  -h, --help           this text\n"
	"\n"
	"-i - reads the recording from standard input.\n"
	"\n"
	"exit status: 0; 1 when the recording has nothing the method can use (no\n"
	"samples; no sample with a usable branch stack): the line says what to record;\n"
	"2 on errors (bad options, unreadable or corrupt files, an output that cannot be\n"
	"created; with --stacks also a file without callchains). Files are written\n"
	"before standard output; a reader of standard output that goes away early\n"
	"(| head) is not an error.\n";

enum { O_FORMAT = PA_O_END, O_REP, O_STACKS, O_SVG, O_COMM_FRAME, O_COMM, O_SORT, O_STDIO, O_CPI, O_REGIONS };
enum { F_TEXT, F_JSON, F_FDATA, F_AUTOFDO, F_FOLDED, F_CSV, F_DOT, F_SPEEDSCOPE, F_COUNT };

struct report_args {
	struct profile_args pa;
	int format;
	const char *out;
	int rep;
	int stacks, comm;
	const char *svg;
	int format_given, method_given;
	const char *comms; /* --comm list */
	struct overhead_opts ov;
	int sort_given;
	struct cpi_args cpi;
	struct region_args regions;
};

static int report_option(void *ctx, int c, char *arg)
{
	static const char *const formats[F_COUNT] = {"text",	"json", "fdata", "autofdo",
						     "folded", "csv",  "dot",   "speedscope"};
	struct report_args *a = ctx;
	int r = cpi_args_option(&a->cpi, c, arg, "pmusim report");
	if (r <= 0 || (r = region_args_option(&a->regions, c, arg, "pmusim report")) <= 0)
		return r;
	switch (c) {
	case O_CPI: a->cpi.on = 1; return 0;
	case O_REGIONS: a->regions.on = 1; return 0;
	case 'o': a->out = arg; return 0;
	case O_REP: a->rep = 1; return 0;
	case O_STACKS: a->stacks = 1; return 0;
	case O_SVG: a->svg = arg; return 0;
	case O_COMM_FRAME: a->comm = 1; return 0;
	case O_COMM: a->comms = arg; return 0;
	case O_STDIO: return 0;
	case 's':
	case O_SORT: {
		char msg[200];
		a->sort_given = 1;
		if (overhead_parse_sort(&a->ov, arg, msg, sizeof(msg)) < 0)
			return fprintf(stderr, "pmusim report: %s\n", msg), -1;
		return 0;
	}
	case O_FORMAT: a->format_given = 1; break;
	default: return 1;
	}
	for (a->format = 0; a->format < F_COUNT && strcmp(arg, formats[a->format]) != 0; a->format++)
		;
	if (a->format == F_COUNT)
		return fprintf(stderr, "pmusim report: unknown format '%s' (text, json, fdata, autofdo, folded, csv, dot, "
				       "speedscope)\n",
			       arg), -1;
	return 0;
}

static int parse_args(int argc, char **argv, struct report_args *a)
{
	static const struct option opts[] = {
		PROFILE_LONG_OPTIONS, {"format", required_argument, 0, O_FORMAT},
		{"output", required_argument, 0, 'o'}, {"rep", no_argument, 0, O_REP},
		{"stacks", no_argument, 0, O_STACKS}, {"svg", required_argument, 0, O_SVG},
		{"comm-frame", no_argument, 0, O_COMM_FRAME}, {"comm", required_argument, 0, O_COMM},
		{"sort", required_argument, 0, O_SORT}, {"stdio", no_argument, 0, O_STDIO},
		{"cpi", no_argument, 0, O_CPI}, CPI_LONG_OPTIONS,
		{"regions", no_argument, 0, O_REGIONS}, REGION_LONG_OPTIONS,
		{"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	int rc = profile_args_parse(&a->pa, argc, argv, opts, report_usage, "pmusim report", report_option, a);
	if (rc)
		return rc;
	if (a->rep + a->stacks + a->cpi.on + a->regions.on > 1)
		return fprintf(stderr, "pmusim report: one of --rep, --stacks, --cpi and --regions\n"), -1;
	if (a->regions.given && !a->regions.on)
		return fprintf(stderr, "pmusim report: --truth-json and the region options are for --regions\n"),
		       -1;
	if (a->regions.on && (a->comms || a->sort_given || a->pa.method_given || a->comm))
		return fprintf(stderr, "pmusim report: --regions takes none of --comm, --sort, --method, "
				       "--comm-frame\n"), -1;
	if (a->cpi.given && !a->cpi.on)
		return fprintf(stderr, "pmusim report: --by, --insns-from, --cycles-from, --cycles-input, --refill and "
				       "--skid-cycles are for --cpi\n"), -1;
	if (a->format == F_CSV && !a->cpi.on)
		return fprintf(stderr, "pmusim report: --format csv is for --cpi\n"), -1;
	if (a->format == F_DOT && !a->regions.on)
		return fprintf(stderr, "pmusim report: --format dot is for --regions\n"), -1;
	if (a->cpi.on && (a->comms || a->sort_given || a->pa.method_given || a->svg || a->comm))
		return fprintf(stderr, "pmusim report: --cpi takes none of --comm, --sort, --method, --svg, --comm-frame\n"),
		       -1;
	if (!a->stacks && ((a->svg && !a->regions.on) || a->comm || a->format == F_FOLDED || a->format == F_SPEEDSCOPE))
		return fprintf(stderr, "pmusim report: --svg needs --stacks or --regions; --comm-frame and "
				       "--format folded or speedscope need --stacks\n"),
		       -1;
	if ((a->rep || a->stacks) && (a->comms || a->sort_given))
		return fprintf(stderr, "pmusim report: --comm and --sort are for the overhead table, not --%s%s\n",
			       a->rep ? "rep" : "stacks", a->stacks ? " (--comm-frame names the command there)" : ""),
		       -1;
	if (a->sort_given && a->pa.method_given)
		return fprintf(stderr, "pmusim report: --sort makes the overhead table, --method the edge profile; "
				       "not both\n"), -1;
	return 0;
}

int cmd_report_parse(int argc, char **argv)
{
	struct report_args a = {0};
	profile_args_init(&a.pa);
	region_args_init(&a.regions);
	int rc = parse_args(argc, argv, &a);
	profile_args_fini(&a.pa);
	return rc;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* Where code without a symbol is: the program or the shared library holding
 * addr and addr's offset in that file's own ELF addresses (what objdump shows);
 * "?" when no file holds it. */
static void place_text(const struct binary *b, uint64_t a, char *dso, size_t dlen, uint64_t *off)
{
	const struct fdata_region *r;
	size_t nr = binary_regions(b, &r);
	for (size_t i = nr; i-- > 0;)
		if (a >= r[i].start && a < r[i].end) {
			snprintf(dso, dlen, "%s", base_name(r[i].name));
			*off = a - r[i].bias;
			return;
		}
	if (binary_has_code(b, a)) {
		snprintf(dso, dlen, "%s", base_name(binary_path(b)));
		*off = a - binary_bias(b);
		return;
	}
	snprintf(dso, dlen, "?");
	*off = a;
}

static void sym_text(const struct binary *b, uint64_t a, char *buf, size_t len)
{
	const struct sym *s = symtab_lookup(binary_symtab(b), a);
	char dso[256];
	uint64_t off;
	if (s) {
		snprintf(buf, len, "%s+0x%" PRIx64, s->name, a - s->addr);
		return;
	}
	place_text(b, a, dso, sizeof(dso), &off);
	snprintf(buf, len, "%s+0x%" PRIx64, dso, off);
}

static int cmp_weight(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->w != y->w)
		return x->w > y->w ? -1 : 1;
	return x->from != y->from ? (x->from < y->from ? -1 : 1) : (x->to < y->to ? -1 : x->to > y->to);
}

/* The weight of code without symbols, per file: one line each in "hottest
 * functions", so that a stripped program's weight is not left out. */
struct dso_weight {
	char name[256];
	double w;
};

static void add_dso_weight(struct dso_weight *d, size_t *nd, size_t cap, const char *name, double w)
{
	size_t i = 0;
	while (i < *nd && strcmp(d[i].name, name) != 0)
		i++;
	if (i == *nd) {
		if (*nd == cap)
			return;
		snprintf(d[(*nd)++].name, sizeof(d[i].name), "%s", name);
	}
	d[i].w += w;
}

static void write_text(FILE *f, struct profile *prof, const struct edge *e, size_t n, int method,
		       const char *header)
{
	const struct profile_stats *st = profile_stats(prof);
	struct binary *bin = profile_binary(prof);
	const struct symtab *sy = binary_symtab(bin);
	fprintf(f, "# method %s: %" PRIu64 " samples, %" PRIu64 " used, %" PRIu64 " dropped; %zu edges\n",
		prof_method_name(method), st->samples, st->used, st->dropped, n);
	fprintf(f, "# %s, binary %s\n", header, binary_path(bin));
	for (int i = 1; i < DROP_COUNT; i++)
		if (st->drop[i])
			fprintf(f, "#   dropped, %s: %" PRIu64 "\n", trace_drop_name((enum trace_drop)i), st->drop[i]);
	struct edge *by_w = malloc((n + 1) * sizeof(*by_w));
	if (!by_w)
		return;
	arrays_copy(by_w, e, n, sizeof(*e));
	arrays_sort(by_w, n, sizeof(*by_w), cmp_weight);
	double total = 0;
	for (size_t i = 0; i < n; i++)
		total += e[i].w;
	fprintf(f, "\n# hottest edges\n# %8s %14s  %-10s %s\n", "share", "count", "kind", "from -> to");
	for (size_t i = 0; i < n && i < 25; i++) {
		char a[600], b[600];
		sym_text(bin, by_w[i].from, a, sizeof(a));
		sym_text(bin, by_w[i].to, b, sizeof(b));
		fprintf(f, "  %7.3f%% %14.0f  %-10s %s -> %s\n", total > 0 ? 100 * by_w[i].w / total : 0, by_w[i].w,
			by_w[i].taken ? br_kind_name(by_w[i].kind) : "fallthru", a, b);
	}
	/* functions: weight of the edges leaving them */
	size_t ns = symtab_count(sy), nd = 0;
	double *fw = calloc(ns + 1, sizeof(double));
	struct dso_weight dw[64]; /* more files than this without symbols: the rest are not listed */
	for (size_t i = 0; fw && i < n; i++) {
		const struct sym *s = symtab_lookup(sy, e[i].from);
		char dso[256];
		uint64_t off;
		if (s) {
			fw[s - symtab_at(sy, 0)] += e[i].w;
		} else {
			place_text(bin, e[i].from, dso, sizeof(dso), &off);
			add_dso_weight(dw, &nd, sizeof(dw) / sizeof(dw[0]), dso, e[i].w);
		}
	}
	fprintf(f, "\n# hottest functions (branch outcomes leaving them; code without symbols: one\n"
		   "# line per file)\n");
	for (int k = 0; fw && k < 15; k++) {
		size_t best = ns, bestd = nd;
		for (size_t i = 0; i < ns; i++)
			if (fw[i] > 0 && (best == ns || fw[i] > fw[best]))
				best = i;
		for (size_t i = 0; i < nd; i++)
			if (dw[i].w > 0 && (bestd == nd || dw[i].w > dw[bestd].w))
				bestd = i;
		if (bestd < nd && (best == ns || dw[bestd].w > fw[best])) {
			fprintf(f, "  %7.3f%% %14.0f  [%s: code without symbols]\n", 100 * dw[bestd].w / total,
				dw[bestd].w, dw[bestd].name);
			dw[bestd].w = 0;
			continue;
		}
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
	const struct binary *sy = profile_binary(prof);
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
		fprintf(f, "%s\n  {\"from\": \"0x%" PRIx64 "\", \"from_sym\": ", i ? "," : "", e[i].from);
		json_put_str(f, a);
		fprintf(f, ", \"to\": \"0x%" PRIx64 "\", \"to_sym\": ", e[i].to);
		json_put_str(f, b);
		fprintf(f, ", \"kind\": \"%s\", \"taken\": %d, \"count\": %.3f}", br_kind_name(e[i].kind),
			e[i].taken, e[i].w);
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
	const char *header;
};

static int write_profile(FILE *f, void *ctx)
{
	const struct report_ctx *c = ctx;
	size_t n;
	const struct edge *e = edges_sorted(profile_edges(c->prof), &n);
	if (c->a->format == F_TEXT)
		write_text(f, c->prof, e, n, c->a->pa.po.method, c->header);
	else if (c->a->format == F_JSON)
		write_json(f, c->prof, e, n, c->a->pa.po.method);
	else if (c->a->format == F_FDATA)
		write_fdata(f, c->prof, e, n);
	else
		return autofdo_write(f, profile_binary(c->prof), e, n);
	return 0;
}

static int write_report(const struct report_args *a, struct profile *prof, const char *header)
{
	struct report_ctx c = {a, prof, header};
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
	if (o->a->format == F_SPEEDSCOPE) {
		const char *in = strrchr(o->a->pa.input, '/') ? strrchr(o->a->pa.input, '/') + 1 : o->a->pa.input;
		return stackprof_write_speedscope(f, o->sp, in);
	}
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
	if (a->format != F_TEXT && a->format != F_JSON && a->format != F_FOLDED && a->format != F_SPEEDSCOPE)
		return fprintf(stderr, "pmusim report: --stacks writes text, json, folded or speedscope\n"),
		       EXIT_PMUSIM_ERROR;
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

struct cpi_out {
	struct cpi *c;
	struct binary *bin;
	enum cpi_unit by;
	enum cpi_format fmt;
};

static int write_cpi(FILE *f, void *ctx)
{
	const struct cpi_out *o = ctx;
	return cpi_write(f, o->c, o->bin, o->by, o->fmt);
}

/* pmusim report --cpi */
static int cpi_report(struct report_args *a)
{
	if (a->format != F_TEXT && a->format != F_JSON && a->format != F_CSV)
		return fprintf(stderr, "pmusim report: --cpi writes text, json or csv\n"), EXIT_PMUSIM_ERROR;
	struct cpi_out o = {.by = a->cpi.by,
			    .fmt = a->format == F_JSON ? CPI_JSON : a->format == F_CSV ? CPI_CSV : CPI_TEXT};
	struct binary *bin2;
	int r = cpi_args_load(&a->cpi, &a->pa, &o.c, &o.bin, &bin2, "pmusim report");
	int status = r < 0 ? EXIT_PMUSIM_ERROR : r > 0 ? 1 : 0;
	if (r == 0 && write_output(out_file, write_cpi, &o) < 0)
		status = EXIT_PMUSIM_ERROR;
	cpi_free(o.c);
	binary_free(o.bin);
	binary_free(bin2);
	return status;
}

/* What the recording's event holds, for choosing the method. */
enum rec_kind { REC_TEXT, REC_NO_BRANCHES, REC_CALLS, REC_BRANCHES };

/* The kind of event ev of the recording at path and its name into name; text
 * (perf script output) is REC_TEXT; -1 when unreadable (message printed). */
static int recording_kind(const char *path, int ev, char *name, size_t len)
{
	char magic[8] = {0};
	const char *why;
	FILE *f = infile_fopen(path, &why);
	if (!f)
		return fprintf(stderr, "pmusim report: cannot read %s: %s\n", path, why), -1;
	size_t got = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	name[0] = 0;
	if (got < sizeof(magic) || memcmp(magic, "PERFILE2", 8) != 0)
		return REC_TEXT;
	struct perfdata *pd;
	char msg[512] = "";
	int err = perfdata_open(path, &pd, msg, sizeof(msg));
	if (err < 0)
		return fprintf(stderr, "pmusim report: %s\n", msg[0] ? msg : pmusim_strerror(err)), -1;
	size_t i = ev < 0 ? 0 : (size_t)ev;
	if (i >= perfdata_nevents(pd)) {
		fprintf(stderr, "pmusim report: %s has %zu event(s), no event %zu\n", path, perfdata_nevents(pd), i);
		perfdata_close(pd);
		return -1;
	}
	const struct perfdata_event *e = perfdata_event(pd, i);
	snprintf(name, len, "%s", e->name ? e->name : "?");
	uint64_t bst = e->branch_sample_type, calls = PERF_SAMPLE_BRANCH_ANY_CALL | PERF_SAMPLE_BRANCH_CALL |
						       PERF_SAMPLE_BRANCH_IND_CALL;
	int kind = !(e->sample_type & PERF_SAMPLE_BRANCH_STACK) ? REC_NO_BRANCHES
		   : (bst & calls) && !(bst & PERF_SAMPLE_BRANCH_ANY) &&
			   !(bst & (PERF_SAMPLE_BRANCH_ANY_RETURN | PERF_SAMPLE_BRANCH_COND | PERF_SAMPLE_BRANCH_IND_JUMP))
		   ? REC_CALLS
		   : REC_BRANCHES;
	perfdata_close(pd);
	return kind;
}

static int write_overhead(FILE *f, void *ctx)
{
	return overhead_write_text(f, ctx);
}

/* The recording as the user named it. */
static const char *input_name(const struct report_args *a)
{
	return a->pa.stdin_copy ? "standard input" : a->pa.input;
}

/* report --regions writes through write_output (cli/report_regions.c) */
static int write_regions(int (*fn)(FILE *f, void *ctx), void *ctx)
{
	return write_output(out_file, fn, ctx);
}

/* The overhead table; exit status. */
static int overhead_report(struct report_args *a)
{
	if (a->format_given && a->format != F_TEXT)
		return fprintf(stderr, "pmusim report: the overhead table is text; --format %s needs a branch-stack "
				       "recording (pmusim record -b) and --method\n",
			       a->format == F_JSON ? "json" : a->format == F_FDATA ? "fdata" : "autofdo"),
		       EXIT_PMUSIM_ERROR;
	a->ov.event = a->pa.io.event;
	a->ov.comms = a->comms;
	struct overhead *ov;
	char msg[512] = "";
	int err = overhead_read(a->pa.input, &a->ov, &ov, msg, sizeof(msg));
	if (err < 0)
		return fprintf(stderr, "pmusim report: %s\n", msg), EXIT_PMUSIM_ERROR;
	int status = 0;
	if (overhead_samples(ov) == 0 && a->comms && overhead_all_samples(ov) > 0) {
		fprintf(stderr, "pmusim report: none of the %" PRIu64 " samples of %s is of the commands %s; "
				"pmusim report --sort comm lists the commands\n",
			overhead_all_samples(ov), input_name(a), a->comms);
		status = 1;
	} else if (overhead_samples(ov) == 0) {
		fprintf(stderr, "pmusim report: %s has no samples of event '%s'; record more with a smaller "
				"period: pmusim record -c 10000 -- PROG\n",
			input_name(a), overhead_event(ov) ? overhead_event(ov) : "?");
		status = 1;
	} else if (write_output(out_file, write_overhead, ov) < 0) {
		status = EXIT_PMUSIM_ERROR;
	}
	overhead_free(ov);
	return status;
}

/* The edge profile; exit status. */
static int edge_report(struct report_args *a, const char *evname)
{
	struct profile *prof = NULL;
	struct binary *bin = NULL;
	int status = EXIT_PMUSIM_ERROR;
	if (profile_args_load(&a->pa, &prof, &bin, "pmusim report") == 0) {
		const struct profile_stats *st = profile_stats(prof);
		char header[400];
		if (evname[0])
			snprintf(header, sizeof(header), "event '%.200s' (index %d) of %.150s", evname,
				 a->pa.io.event < 0 ? 0 : a->pa.io.event, input_name(a));
		else /* perf script text names no event */
			snprintf(header, sizeof(header), "perf script text %.150s", input_name(a));
		if (st->used == 0 && a->pa.po.method == METHOD_IBS) {
			fprintf(stderr, "pmusim report: none of the %" PRIu64 " samples is an op sample; record them "
					"with pmusim record -e ibs_op// -- PROG\n", st->samples);
			status = 1;
		} else if (st->used == 0) {
			fprintf(stderr, "pmusim report: none of the %" PRIu64 " samples has a branch stack method %s "
					"can use; record one with pmusim record -b -- PROG, or drop --method for the "
					"overhead table\n", st->samples, prof_method_name(a->pa.po.method));
			status = 1;
		} else if (write_report(a, prof, header) == 0) {
			status = 0;
		}
	}
	profile_free(prof);
	binary_free(bin);
	return status;
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
	region_args_init(&a.regions);
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc == CLI_HELP ? 0 : EXIT_PMUSIM_ERROR;
	if ((a.out && !(out_file = outputs_open(&outs, "-o", a.out))) ||
	    (a.svg && !a.regions.on && !(svg_file = outputs_open(&outs, "--svg", a.svg))))
		return profile_args_fini(&a.pa), EXIT_PMUSIM_ERROR;
	if (profile_args_resolve(&a.pa, "pmusim report") < 0)
		return profile_args_fini(&a.pa), EXIT_PMUSIM_ERROR;
	int status;
	char evname[256];
	if (a.regions.on) {
		/* with --regions, --svg names a directory: region_report writes there */
		int rf = a.format == F_TEXT ? REGION_TEXT : a.format == F_JSON ? REGION_JSON : REGION_DOT;
		status = (a.format == F_TEXT || a.format == F_JSON || a.format == F_DOT)
				 ? region_report(&a.regions, a.pa.input, input_name(&a), rf, a.svg, write_regions)
				 : (fprintf(stderr, "pmusim report: --regions writes text, json or dot\n"),
				    EXIT_PMUSIM_ERROR);
	} else if (a.cpi.on) {
		status = cpi_report(&a);
	} else if (a.rep) {
		status = rep_report(&a);
	} else if (a.stacks) {
		status = stacks_report(&a);
	} else {
		int kind = recording_kind(a.pa.input, a.pa.io.event, evname, sizeof(evname));
		if (kind < 0)
			status = EXIT_PMUSIM_ERROR;
		else if (kind == REC_TEXT && a.sort_given)
			status = (fprintf(stderr, "pmusim report: --sort needs a perf.data; %s is perf script text\n",
					  a.pa.input), EXIT_PMUSIM_ERROR);
		else if (a.sort_given || (kind == REC_NO_BRANCHES && !a.pa.method_given &&
					  (!a.format_given || a.format == F_TEXT)))
			status = overhead_report(&a);
		else if (a.comms)
			status = (fprintf(stderr, "pmusim report: --comm filters the overhead table (a recording without "
						  "-b/-j, or --sort)\n"), EXIT_PMUSIM_ERROR);
		else {
			if (kind == REC_CALLS && !a.pa.method_given)
				a.pa.po.method = METHOD_CALLS;
			status = edge_report(&a, evname);
		}
	}
	profile_args_fini(&a.pa);
	return status;
}
