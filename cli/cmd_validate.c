/* pmusim validate: compares a sampled profile with the exact truth of the same
 * run (pmusim record --truth or pmusim run --truth) and reports the overlaps;
 * usable as a CI gate through --min-overlap and its exit status. */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/outputs.h"
#include "cli/profile_args.h"
#include "common/err.h"
#include "common/json.h"
#include "pmu_model/rep.h"
#include "profiler/rep_report.h"
#include "profiler/stack_check.h"
#include "profiler/svg.h"
#include "profiler/validate.h"

static const char validate_usage[] =
	"usage: pmusim validate [-i FILE] --truth TRUTH.fdata [--min-overlap X]\n"
	"                       [--format text|json] [--svg PLOT.svg] [profile options]\n"
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
	"                       mismatch; json keys sites, mismatches, mode\n"
	"  --stacks             check the call-stack snapshots of a pmusim record --tstack\n"
	"                       recording against --truth TRUTH.json (--truth-json): every\n"
	"                       snapshot's thread, IP and return addresses must equal the\n"
	"                       true stack; exit 1 on any mismatch; json keys snapshots,\n"
	"                       truth_snapshots, mismatches, frames, max_depth, first_mismatch\n"
	"  --svg FILE           also write a log-log scatter plot (SVG) of every truth edge:\n"
	"                       exact count against the profile's weight scaled to the same\n"
	"                       total (call edges only for --method calls)\n"
	PROFILE_OPTIONS_HELP
	"  -h, --help           this text\n"
	"\n"
	"exit status: 0 when the overlap meets --min-overlap, 1 when not, 2 on errors.\n";

enum { O_TRUTH = PA_O_END, O_MIN, O_FORMAT, O_SVG, O_REP, O_STACKS };

struct validate_args {
	struct profile_args pa;
	const char *truth;
	const char *svg;
	double min_overlap;
	int json;
	int rep, stacks;
};

static int validate_option(void *ctx, int c, char *arg)
{
	struct validate_args *a = ctx;
	const char *cmd = "pmusim validate";
	char *end;
	switch (c) {
	case O_TRUTH: a->truth = arg; return 0;
	case O_SVG: a->svg = arg; return 0;
	case O_REP: a->rep = 1; return 0;
	case O_STACKS: a->stacks = 1; return 0;
	case O_MIN:
		a->min_overlap = strtod(arg, &end);
		if (*end || end == arg || a->min_overlap < 0 || a->min_overlap > 1)
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
		{"stacks", no_argument, 0, O_STACKS}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	if (profile_args_parse(&a->pa, argc, argv, opts, validate_usage, "pmusim validate", validate_option, a) < 0)
		return -1;
	if (!a->truth)
		return fprintf(stderr, "pmusim validate: --truth FILE is required\n"), -1;
	return 0;
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
	int err = svg_scatter(of->f, title, profile_edges(prof), truth, calls ? edge_is_call : NULL);
	if (err < 0) { /* the temporary goes in outputs_fini */
		fprintf(stderr, "pmusim validate: cannot write %s: %s\n", a->svg, pmusim_strerror(err));
		return -1;
	}
	return outputs_commit(outs, of);
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
	return c.mismatches ? 1 : 0;
}

int cmd_validate(int argc, char **argv)
{
	struct validate_args a = {0};
	/* a reader of standard output that goes away early (| head) does not decide the exit
	 * status: the gate does */
	signal(SIGPIPE, SIG_IGN);
	profile_args_init(&a.pa);
	if (parse_args(argc, argv, &a) < 0)
		return EXIT_PMUSIM_ERROR;
	if (a.rep)
		return validate_rep(&a);
	if (a.stacks)
		return validate_stacks(&a);
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
	struct overlap o;
	overlap_compute(profile_edges(prof), truth, &o);
	if (svg && write_svg(&a, &outs, svg, prof, truth, &o) < 0)
		goto out;
	print_result(&a, &o, prof, unknown);
	double gate = a.pa.po.method == METHOD_CALLS ? o.calls : o.all;
	status = gate >= a.min_overlap ? 0 : 1;
out:
	outputs_fini(&outs);
	edges_free(truth);
	profile_free(prof);
	binary_free(bin);
	return status;
}
