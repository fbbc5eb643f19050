/* pmusim validate: compares a sampled profile with the exact truth of the same
 * run (pmusim record --truth or pmusim run --truth) and reports the overlaps;
 * usable as a CI gate through --min-overlap and its exit status. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/cpi_args.h"
#include "cli/outputs.h"
#include "cli/profile_args.h"
#include "cli/report_regions.h"
#include "common/buildid.h"
#include "common/err.h"
#include "common/infile.h"
#include "common/json.h"
#include "common/number.h"
#include "pmu_model/rep.h"
#include "profiler/cpi_check.h"
#include "profiler/perfdata.h"
#include "profiler/rep_report.h"
#include "profiler/stack_check.h"
#include "profiler/svg.h"
#include "profiler/validate.h"

static const char validate_usage[] =
	"usage: pmusim validate [-i FILE] --truth TRUTH.fdata [--min-overlap X]\n"
	"                       [--format text|json] [--svg PLOT.svg] [profile options]\n"
	"       pmusim validate --cpi [-i FILE] --truth TRUTH.json [--by function|block|insn]\n"
	"                       [--min-share X] [--max-rel-err E] [--format text|json]\n"
	"                       [CPI options]\n"
	"       pmusim validate --regions [-i FILE] --truth-json TRUTH.json [--min-jaccard X]\n"
	"                       [--format text|json] [region options]\n"
	"\n"
	"Builds the edge profile of FILE with a method and compares it with the exact\n"
	"edges in TRUTH.fdata: overlap = sum of min(p, q) over edges of the two\n"
	"normalised profiles, for all edges, taken edges and call edges, and the largest\n"
	"relative error among edges with at least 1 % of the truth's weight.\n"
	"\n"
	"options:\n"
	"  --truth FILE         exact edges (BOLT fdata, from pmusim run/record --truth)\n"
	"  --min-overlap X      exit 1 when the overlap (of call edges for --method calls,\n"
	"                       of all edges otherwise) is below X (0..1, default 0)\n"
	"  --format F           text (default) or json (keys overlap_edges, overlap_taken,\n"
	"                       overlap_calls, hot_edge_max_rel_err, samples, samples_dropped,\n"
	"                       span: the window of instruction- and cycle-triggered samples,\n"
	"                       samples_truncated: cycle-triggered samples whose trace did not\n"
	"                       cover that window, overflow_estimated: cycle-triggered samples\n"
	"                       without pmusim's overflow cycle, as real recordings)\n"
	"  --rep                check the REP records of a pmusim record --rep recording\n"
	"                       against --truth TRUTH.json (--truth-json): exit 1 on any\n"
	"                       mismatch (with a line FAIL: N of M REP sites differ on\n"
	"                       standard error); json keys sites, mismatches, mode\n"
	"  --stacks             check the call-stack snapshots of a pmusim record --tstack\n"
	"                       or -g recording against --truth TRUTH.json (--truth-json):\n"
	"                       every snapshot's thread, IP and return addresses must equal\n"
	"                       the true stack; exit 1 on any mismatch (with a line FAIL: N\n"
	"                       of M snapshots differ on standard error); json keys snapshots,\n"
	"                       truth_snapshots, mismatches, frames, max_depth, first_mismatch\n"
	"  --cpi                check the CPI estimate of pmusim report --cpi (same options)\n"
	"                       against the exact cycles and instructions of --truth\n"
	"                       TRUTH.json (--truth-json) per function, block or, with a\n"
	"                       truth of --truth-insns, instruction (--by):\n"
	"                       per unit with at least --min-share of the program's cycles\n"
	"                       the true and estimated CPI and their relative error, the\n"
	"                       largest and the cycle-weighted mean; json keys unit, units,\n"
	"                       checked, min_share, max_rel_err, mean_rel_err, worst, rows\n"
	"  --min-share X        units with at least X of the cycles (0..1, default 0.01)\n"
	"  --max-rel-err E      exit 1 when a checked unit's relative error exceeds E (with\n"
	"                       a line FAIL: on standard error); default: no gate\n"
	CPI_OPTIONS_HELP
	"  --regions            select hot super-regions (report --regions, same options) from\n"
	"                       the op samples of FILE and from the exact counts of --truth\n"
	"                       TRUTH.json (--truth-json) of the same run; print the\n"
	"                       weighted Jaccard index of the two (instructions weighted by\n"
	"                       their exact executions), the share of execution in the\n"
	"                       sampled regions as the samples estimate it and exactly, the\n"
	"                       ideal regions' exact share, and the heaviest blocks only one\n"
	"                       selection holds; json keys jaccard, min_jaccard, est_share,\n"
	"                       exact_share, ideal_share, only_sampled, only_ideal\n"
	"  --min-jaccard X      with --regions: exit 1 below X (0..1, default 0.95)\n"
	REGION_OPTIONS_HELP
	"  --svg FILE           also write a log-log scatter plot (SVG) of every truth edge:\n"
	"                       exact count against the profile's weight scaled to the same\n"
	"                       total (call edges only for --method calls)\n"
	PROFILE_OPTIONS_HELP
	"  -h, --help           this text\n"
	"\n"
	"exit status: 0 when the overlap meets --min-overlap (--cpi: every error is\n"
	"within --max-rel-err), 1 when not (with a line\n"
	"FAIL: overlap X % < min Y % on standard error), 2 on errors, among them a\n"
	"truth that is empty, names no function of the program, or has edges that do\n"
	"not leave a branch instruction of the program (another program's truth), and a\n"
	"recording without a sample the method can use.\n";

enum { O_TRUTH = PA_O_END, O_MIN, O_FORMAT, O_SVG, O_REP, O_STACKS, O_CPI, O_MIN_SHARE, O_MAX_REL_ERR, O_REGIONS };

struct validate_args {
	struct profile_args pa;
	const char *truth;
	const char *svg;
	double min_overlap;
	int json;
	int rep, stacks;
	struct cpi_args cpi;
	double min_share, max_rel_err; /* --cpi; max_rel_err < 0: no gate */
	struct region_args regions;
};

static int validate_option(void *ctx, int c, char *arg)
{
	struct validate_args *a = ctx;
	const char *cmd = "pmusim validate";
	int r = cpi_args_option(&a->cpi, c, arg, cmd);
	if (r <= 0)
		return r;
	if (c == RGN_O_TRUTH_JSON) /* the same file as --truth */
		c = O_TRUTH;
	else if ((r = region_args_option(&a->regions, c, arg, cmd)) <= 0)
		return r;
	switch (c) {
	case O_CPI: a->cpi.on = 1; return 0;
	case O_REGIONS: a->regions.on = 1; return 0;
	case O_MIN_SHARE:
	case O_MAX_REL_ERR: {
		double v;
		if (number_parse_real(arg, &v) != NUMBER_OK || v < 0 || (c == O_MIN_SHARE && v > 1))
			return fprintf(stderr, "%s: %s needs a number %s, not '%s'\n", cmd,
				       c == O_MIN_SHARE ? "--min-share" : "--max-rel-err",
				       c == O_MIN_SHARE ? "from 0 to 1" : "of 0 or more", arg), -1;
		*(c == O_MIN_SHARE ? &a->min_share : &a->max_rel_err) = v;
		return 0;
	}
	case O_TRUTH: a->truth = arg; return 0;
	case O_SVG: a->svg = arg; return 0;
	case O_REP: a->rep = 1; return 0;
	case O_STACKS: a->stacks = 1; return 0;
	case O_MIN:
		if (number_parse_real(arg, &a->min_overlap) != NUMBER_OK || a->min_overlap < 0 ||
		    a->min_overlap > 1)
			return fprintf(stderr, "%s: --min-overlap needs a number from 0 to 1, not '%s'\n", cmd, arg), -1;
		return 0;
	case O_FORMAT:
		if (strcmp(arg, "json") != 0 && strcmp(arg, "text") != 0)
			return fprintf(stderr, "%s: --format is text or json, not '%s'\n", cmd, arg), -1;
		a->json = strcmp(arg, "json") == 0;
		return 0;
	default: return 1;
	}
}

static int parse_args(int argc, char **argv, struct validate_args *a)
{
	static const struct option opts[] = {
		PROFILE_LONG_OPTIONS, {"truth", required_argument, 0, O_TRUTH},
		{"min-overlap", required_argument, 0, O_MIN}, {"format", required_argument, 0, O_FORMAT},
		{"svg", required_argument, 0, O_SVG}, {"rep", no_argument, 0, O_REP},
		{"stacks", no_argument, 0, O_STACKS}, {"cpi", no_argument, 0, O_CPI},
		{"min-share", required_argument, 0, O_MIN_SHARE}, {"max-rel-err", required_argument, 0, O_MAX_REL_ERR},
		CPI_LONG_OPTIONS, {"regions", no_argument, 0, O_REGIONS}, REGION_LONG_OPTIONS,
		{"min-jaccard", required_argument, 0, RGN_O_MIN_JACCARD}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	a->min_share = 0.01;
	a->max_rel_err = -1;
	region_args_init(&a->regions);
	int rc = profile_args_parse(&a->pa, argc, argv, opts, validate_usage, "pmusim validate", validate_option, a);
	if (rc)
		return rc;
	if (!a->truth)
		return fprintf(stderr, "pmusim validate: --truth FILE is required\n"), -1;
	if (a->rep + a->stacks + a->cpi.on + a->regions.on > 1)
		return fprintf(stderr, "pmusim validate: one of --rep, --stacks, --cpi and --regions\n"), -1;
	if (!a->regions.on && a->regions.given)
		return fprintf(stderr, "pmusim validate: --min-jaccard and the region options are for --regions\n"), -1;
	if (!a->cpi.on && a->cpi.given)
		return fprintf(stderr, "pmusim validate: --by, --insns-from, --cycles-from, --cycles-input, --refill and "
				       "--skid-cycles are for --cpi\n"), -1;
	return 0;
}

int cmd_validate_parse(int argc, char **argv)
{
	struct validate_args a = {0};
	profile_args_init(&a.pa);
	int rc = parse_args(argc, argv, &a);
	profile_args_fini(&a.pa);
	return rc;
}

static void print_result(const struct validate_args *a, const struct overlap *o,
			 const struct profile *prof, size_t unknown)
{
	const struct profile_stats *st = profile_stats(prof);
	if (a->json) {
		printf("{\"method\": \"%s\", \"overlap_edges\": %.6f, \"overlap_taken\": %.6f, "
		       "\"overlap_calls\": %.6f, \"hot_edge_max_rel_err\": %.6f, \"samples\": %llu, "
		       "\"samples_used\": %llu, \"samples_dropped\": %llu, \"truth_edges\": %zu, "
		       "\"profile_edges\": %zu, \"truth_lines_unresolved\": %zu, \"span\": %llu, "
		       "\"samples_truncated\": %llu, \"overflow_estimated\": %llu}\n",
		       prof_method_name(a->pa.po.method), o->all, o->taken, o->calls, o->hot_max_rel_err,
		       (unsigned long long)st->samples, (unsigned long long)st->used,
		       (unsigned long long)st->dropped, o->truth_edges, o->profile_edges, unknown,
		       (unsigned long long)profile_span(prof), (unsigned long long)st->truncated,
		       (unsigned long long)st->estimated);
		return;
	}
	printf("method %s: %llu samples, %llu used, %llu dropped\n", prof_method_name(a->pa.po.method),
	       (unsigned long long)st->samples, (unsigned long long)st->used, (unsigned long long)st->dropped);
	printf("overlap, all edges:   %8.4f %%\n", 100 * o->all);
	printf("overlap, taken edges: %8.4f %%\n", 100 * o->taken);
	printf("overlap, call edges:  %8.4f %%\n", 100 * o->calls);
	printf("largest relative error of an edge with >= 1 %% of the weight: %.4f\n", o->hot_max_rel_err);
	printf("edges: %zu in the truth, %zu in the profile\n", o->truth_edges, o->profile_edges);
}

/* The scatter plot, complete or absent; 0 or -1 with a message printed. */
static int write_svg(const struct validate_args *a, struct outputs *outs, struct outfile *of,
		     struct profile *prof, struct edges *truth, const struct overlap *o)
{
	const struct profile_stats *st = profile_stats(prof);
	int calls = a->pa.po.method == METHOD_CALLS;
	const char *prog = binary_path(profile_binary(prof)), *slash = strrchr(prog, '/');
	char title[1024];
	snprintf(title, sizeof(title),
		 "%s \u2014 %s: overlap %.2f %%\n%llu samples, %llu used; overlap of taken edges %.2f %%, "
		 "of call edges %.2f %%",
		 slash ? slash + 1 : prog, prof_method_name(a->pa.po.method), 100 * (calls ? o->calls : o->all),
		 (unsigned long long)st->samples, (unsigned long long)st->used, 100 * o->taken, 100 * o->calls);
	int err = svg_scatter(of->f, title, profile_edges(prof), truth, calls ? edge_is_call : NULL,
			      binary_symtab(profile_binary(prof)));
	if (err < 0) { /* the temporary goes in outputs_fini */
		fprintf(stderr, "pmusim validate: cannot write %s: %s\n", a->svg, pmusim_strerror(err));
		return -1;
	}
	return outputs_commit(outs, of);
}

/* The "build_id" near the top of a truth JSON into hex; 0 when it has none. */
static int truth_json_build_id(const char *path, char *hex, size_t len)
{
	char head[8192];
	FILE *f = infile_fopen(path, NULL);
	if (!f)
		return 0;
	size_t n = fread(head, 1, sizeof(head) - 1, f);
	fclose(f);
	head[n] = 0;
	const char *k = strstr(head, "\"build_id\": \"");
	if (!k)
		return 0;
	k += strlen("\"build_id\": \"");
	size_t m = strspn(k, "0123456789abcdef");
	if (m == 0 || m >= len || k[m] != '"')
		return 0;
	snprintf(hex, len, "%.*s", (int)m, k);
	return 1;
}

/* A JSON truth of a program the recording did not run is an error: its build id
 * must be one of the recording's BUILD_ID table (when both carry build ids).
 * 0, or -1 with one line printed. */
static int json_truth_matches_recording(const struct validate_args *a)
{
	char want[2 * BUILD_ID_MAX + 1];
	if (!truth_json_build_id(a->truth, want, sizeof(want)))
		return 0;
	struct perfdata *pd;
	char msg[512] = "";
	if (perfdata_open(a->pa.input, &pd, msg, sizeof(msg)) < 0)
		return 0; /* the reader of the recording says why */
	size_t n = perfdata_nbuild_ids(pd);
	int found = 0;
	for (size_t i = 0; i < n && !found; i++) {
		const uint8_t *id;
		size_t idlen;
		const char *file;
		char hex[2 * BUILD_ID_MAX + 1];
		if (perfdata_build_id(pd, i, &id, &idlen, &file) == 0 && idlen <= BUILD_ID_MAX) {
			build_id_hex(id, idlen, hex);
			found = strcmp(hex, want) == 0;
		}
	}
	perfdata_close(pd);
	if (n > 0 && !found)
		return fprintf(stderr, "pmusim validate: %s is the truth of a program with build id %s, which %s did "
				       "not run (the truth of another program or build)\n", a->truth, want,
			       a->pa.input), -1;
	return 0;
}

/* pmusim validate --rep: the recording's REP sites against the truth's. */
static int validate_rep(const struct validate_args *a)
{
	char msg[512] = "";
	struct rep_row *t = NULL, *g = NULL;
	size_t nt = 0, ng = 0;
	int mode, status = EXIT_PMUSIM_ERROR;
	int err = rep_truth_read(a->truth, &t, &nt, msg, sizeof(msg));
	if (err >= 0)
		err = rep_report_read(a->pa.input, &g, &ng, &mode, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "pmusim validate: %s\n", msg[0] ? msg : pmusim_strerror(err));
	} else {
		size_t bad = rep_mismatches(t, nt, g, ng);
		if (a->json)
			printf("{\"sites\": %zu, \"recorded_sites\": %zu, \"mismatches\": %zu, \"mode\": \"%s\"}\n", nt, ng,
			       bad, rep_mode_name(mode));
		else
			printf("REP sites: %zu in the truth, %zu recorded (mode %s); mismatches: %zu\n", nt, ng,
			       rep_mode_name(mode), bad);
		status = bad ? 1 : 0;
		if (bad)
			fprintf(stderr, "FAIL: %zu of %zu REP sites differ from the truth (0 allowed)\n", bad,
				nt > ng ? nt : ng);
	}
	free(t);
	free(g);
	return status;
}

/* pmusim validate --stacks: every snapshot against the true stack. */
static int validate_stacks(const struct validate_args *a)
{
	char msg[512] = "";
	struct stack_set t, g = {0};
	int err = stack_truth_read(a->truth, &t, msg, sizeof(msg));
	if (err >= 0 && (err = stack_recording_read(a->pa.input, &g, msg, sizeof(msg))) < 0)
		stack_set_free(&t);
	if (err < 0) {
		fprintf(stderr, "pmusim validate: %s\n", msg[0] ? msg : pmusim_strerror(err));
		return EXIT_PMUSIM_ERROR;
	}
	struct stack_check c;
	stack_compare(&t, &g, &c);
	if (a->json) {
		printf("{\"snapshots\": %zu, \"truth_snapshots\": %zu, \"mismatches\": %zu, \"frames\": %llu, "
		       "\"max_depth\": %zu, \"first_mismatch\": ", c.snapshots, c.truth_snapshots, c.mismatches,
		       (unsigned long long)c.frames, c.max_depth);
		json_put_str(stdout, c.first);
		printf("}\n");
	} else {
		printf("stack snapshots: %zu recorded, %zu in the truth; %llu frames compared, deepest %zu; "
		       "mismatches: %zu\n", c.snapshots, c.truth_snapshots, (unsigned long long)c.frames, c.max_depth,
		       c.mismatches);
		if (c.first[0])
			printf("first mismatch: %s\n", c.first);
	}
	stack_set_free(&t);
	stack_set_free(&g);
	if (c.mismatches)
		fprintf(stderr, "FAIL: %zu of %zu snapshots differ from the truth (0 allowed)\n", c.mismatches,
			c.snapshots > c.truth_snapshots ? c.snapshots : c.truth_snapshots);
	return c.mismatches ? 1 : 0;
}

static void print_cpi(const struct validate_args *a, const struct cpi_check *k)
{
	const char *unit = cpi_unit_name(a->cpi.by);
	const struct cpi_check_row *w = k->checked ? &k->rows[k->worst] : NULL;
	if (a->json) {
		printf("{\"unit\": \"%s\", \"insns_from\": \"%s\", \"cycles_from\": \"%s\", \"units\": %zu, "
		       "\"checked\": %zu, \"min_share\": %g, \"max_rel_err\": %.6f, \"mean_rel_err\": %.6f, \"worst\": ",
		       unit, cpi_insns_src_name(a->cpi.o.insns_from), cpi_cycles_src_name(a->cpi.o.cycles_from), k->units,
		       k->checked, a->min_share, k->max_rel_err, k->mean_rel_err);
		json_put_str(stdout, w ? w->t->name : "");
		printf(", \"rows\": [");
		for (size_t i = 0; i < k->checked; i++) {
			const struct cpi_check_row *r = &k->rows[i];
			printf("%s\n  {\"addr\": \"0x%llx\", \"name\": ", i ? "," : "", (unsigned long long)r->t->addr);
			json_put_str(stdout, r->t->name);
			printf(", \"share\": %.6f, \"true_cpi\": %.6f, \"est_cpi\": %.6f, \"rel_err\": %.6f, "
			       "\"est_rel_err\": %.6f}", r->share, r->true_cpi, r->est_cpi, r->rel_err, r->est_rel_err);
		}
		printf("\n]}\n");
		return;
	}
	printf("CPI by %s (instructions from %s, cycles from %s): %zu of %zu units have >= %.2f %% of the cycles; "
	       "largest relative error %.3f %%%s%s%s, cycle-weighted mean %.3f %%\n",
	       unit, cpi_insns_src_name(a->cpi.o.insns_from), cpi_cycles_src_name(a->cpi.o.cycles_from), k->checked,
	       k->units, 100 * a->min_share, 100 * k->max_rel_err, w ? " (" : "", w ? w->t->name : "", w ? ")" : "",
	       100 * k->mean_rel_err);
	printf("  %7s %10s %10s %9s %8s  %s\n", "cycles%", "true CPI", "est. CPI", "rel.err", "±est", unit);
	for (size_t i = 0; i < k->checked; i++) {
		const struct cpi_check_row *r = &k->rows[i];
		printf("  %6.2f%% %10.4f %10.4f %8.3f%% %7.2f%%  %s\n", 100 * r->share, r->true_cpi, r->est_cpi,
		       100 * r->rel_err, 100 * r->est_rel_err, r->t->name);
	}
}

/* pmusim validate --cpi: the CPI estimate per unit against the truth's. */
static int validate_cpi(struct validate_args *a)
{
	char msg[512] = "";
	struct cpi_truth_unit *u = NULL;
	size_t n = 0;
	double total;
	int err = cpi_truth_read(a->truth, a->cpi.by, &u, &n, &total, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "pmusim validate: %s\n", msg[0] ? msg : pmusim_strerror(err));
		return EXIT_PMUSIM_ERROR;
	}
	struct cpi *c = NULL;
	struct binary *bin = NULL, *bin2 = NULL;
	int status = EXIT_PMUSIM_ERROR;
	int r = cpi_args_load(&a->cpi, &a->pa, &c, &bin, &bin2, "pmusim validate");
	if (r != 0) {
		status = EXIT_PMUSIM_ERROR; /* nothing to check is not a pass */
		goto out;
	}
	struct cpi_check k;
	if (cpi_check(c, bin, a->cpi.by, u, n, total, a->min_share, &k) < 0) {
		fprintf(stderr, "pmusim validate: out of memory\n");
		goto out;
	}
	print_cpi(a, &k);
	status = 0;
	if (!k.checked) {
		fprintf(stderr, "pmusim validate: no %s of %s has %.2f %% of the cycles (--min-share)\n",
			cpi_unit_name(a->cpi.by), a->truth, 100 * a->min_share);
		status = EXIT_PMUSIM_ERROR;
	} else if (a->max_rel_err >= 0 && k.max_rel_err > a->max_rel_err) {
		fprintf(stderr, "FAIL: CPI relative error %.3f %% of %s > max %.3f %%\n", 100 * k.max_rel_err,
			k.rows[k.worst].t->name, 100 * a->max_rel_err);
		status = 1;
	}
	cpi_check_free(&k);
out:
	cpi_free(c);
	binary_free(bin);
	binary_free(bin2);
	free(u);
	return status;
}

/* 1 when addr is code of the program's own file (not of a shared library or
 * anonymous memory). */
static int in_program(const struct binary *bin, uint64_t addr)
{
	const struct fdata_region *r;
	size_t nr = binary_regions(bin, &r);
	for (size_t i = 0; i < nr; i++)
		if (addr >= r[i].start && addr < r[i].end)
			return 0;
	return binary_has_code(bin, addr);
}

/* A truth that cannot be compared is an error, not a low overlap: an empty one,
 * one whose functions the program does not have, or one whose edges do not
 * start at branch instructions of the program's own code (the exact truth of
 * this program has every edge leave a branch: the truth of another program or
 * another build of it does not). Edges in shared libraries are left out of
 * that check: BOLT's "name/N" numbering of local functions is ambiguous when
 * the program and its libraries have locals of one name. 0, or -1 with one line printed. */
static int truth_matches_program(const struct validate_args *a, struct edges *truth, size_t unknown,
				 struct binary *bin)
{
	size_t n;
	const struct edge *e = edges_sorted(truth, &n);
	if (n == 0 && unknown == 0)
		return fprintf(stderr, "pmusim validate: %s holds no edges (an empty truth)\n", a->truth), -1;
	if (n == 0)
		return fprintf(stderr, "pmusim validate: none of the %zu lines of %s names a function of %s "
				       "(the truth of another program?)\n", unknown, a->truth, binary_path(bin)), -1;
	size_t stray = 0, own = 0;
	for (size_t i = 0; i < n; i++)
		if (in_program(bin, e[i].from)) {
			own++;
			stray += e[i].kind == BK_NONE;
		}
	if (stray)
		return fprintf(stderr, "pmusim validate: %s does not describe %s: %zu of its %zu edges in the "
				       "program start at no branch instruction of it (the truth of another program or "
				       "build?)\n",
			       a->truth, binary_path(bin), stray, own), -1;
	return 0;
}

int cmd_validate(int argc, char **argv)
{
	struct validate_args a = {0};
	/* a reader of standard output that goes away early (| head) does not decide the exit
	 * status: the gate does */
	signal(SIGPIPE, SIG_IGN);
	profile_args_init(&a.pa);
	int rc = parse_args(argc, argv, &a);
	if (rc)
		return rc == CLI_HELP ? 0 : EXIT_PMUSIM_ERROR;
	if (profile_args_resolve(&a.pa, "pmusim validate") < 0)
		return profile_args_fini(&a.pa), EXIT_PMUSIM_ERROR;
	if (a.rep || a.stacks || a.cpi.on || a.regions.on) {
		a.regions.truth = a.truth;
		int st = json_truth_matches_recording(&a) < 0 ? EXIT_PMUSIM_ERROR
			 : a.rep                              ? validate_rep(&a)
			 : a.stacks                           ? validate_stacks(&a)
			 : a.regions.on                       ? region_validate(&a.regions, a.pa.input, a.json)
							      : validate_cpi(&a);
		profile_args_fini(&a.pa);
		return st;
	}
	struct profile *prof = NULL;
	struct binary *bin = NULL;
	struct edges *truth = NULL;
	int status = EXIT_PMUSIM_ERROR;
	struct outputs outs; /* opened before anything is read: a bad path fails at once */
	struct outfile *svg = NULL;
	outputs_init(&outs, "pmusim validate");
	if ((a.svg && !(svg = outputs_open(&outs, "--svg", a.svg))) ||
	    profile_args_load(&a.pa, &prof, &bin, "pmusim validate") < 0)
		goto out;
	char msg[512] = "";
	size_t unknown = 0;
	int err = (truth = edges_new()) ? fdata_read_edges(a.truth, bin, truth, &unknown, msg, sizeof(msg))
					: PMUSIM_ERR_NOMEM;
	if (err < 0) {
		fprintf(stderr, "pmusim validate: %s\n", msg[0] ? msg : pmusim_strerror(err));
		goto out;
	}
	if (truth_matches_program(&a, truth, unknown, bin) < 0)
		goto out;
	if (profile_stats(prof)->used == 0) { /* an overlap of 0 would say the method failed */
		fprintf(stderr, "pmusim validate: none of the %llu samples of %s has a branch stack method %s can use; "
				"record one with pmusim record -b -- PROG\n",
			(unsigned long long)profile_stats(prof)->samples, a.pa.stdin_copy ? "standard input" : a.pa.input,
			prof_method_name(a.pa.po.method));
		goto out;
	}
	struct overlap o;
	overlap_compute(profile_edges(prof), truth, &o);
	if (svg && write_svg(&a, &outs, svg, prof, truth, &o) < 0)
		goto out;
	print_result(&a, &o, prof, unknown);
	double gate = a.pa.po.method == METHOD_CALLS ? o.calls : o.all;
	status = gate >= a.min_overlap ? 0 : 1;
	if (status == 1)
		fprintf(stderr, "FAIL: overlap %.4f %% < min %.4f %%%s\n", 100 * gate, 100 * a.min_overlap,
			a.pa.po.method == METHOD_CALLS ? " (call edges)" : "");
out:
	outputs_fini(&outs);
	edges_free(truth);
	profile_free(prof);
	binary_free(bin);
	profile_args_fini(&a.pa);
	return status;
}
