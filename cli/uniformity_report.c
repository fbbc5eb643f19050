/* Text, JSON and SVG output of `pmusim uniformity` (see uniformity_report.h). */
#include "cli/uniformity_report.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/json.h"
#include "cli/outputs.h"
#include "common/outfile.h"
#include "pmu_model/block.h"
#include "profiler/profile.h"
#include "profiler/svg_zplot.h"

#define TEXT_EDGES 10 /* hottest tested edges listed when none is biased */

static int cmp_obs(const void *a, const void *b)
{
	const struct unif_obs *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* The names of an edge from the first run that has it (runs are sorted). */
static void names_of(const struct unif_report *u, const struct unif_edge *e, const char **a,
                     const char **b)
{
	struct unif_obs key = {.from = e->from, .to = e->to};
	*a = *b = "?";
	for (size_t i = 0; i < u->k; i++) {
		const struct unif_obs *o =
		    arrays_find(&key, u->runs[i].obs, u->runs[i].n, sizeof(key), cmp_obs);
		if (o) {
			*a = u->runs[i].from_sym[o - u->runs[i].obs];
			*b = u->runs[i].to_sym[o - u->runs[i].obs];
			return;
		}
	}
}

struct sample_stats {
	double mean, used;
	uint64_t min, max;
};

static void sample_stats(const struct unif_report *u, struct sample_stats *s)
{
	uint64_t sum = 0, used = 0;
	s->min = UINT64_MAX, s->max = 0;
	for (size_t i = 0; i < u->k; i++) {
		uint64_t n = u->runs[i].samples;
		sum += n, used += u->runs[i].used;
		s->min = n < s->min ? n : s->min;
		s->max = n > s->max ? n : s->max;
	}
	s->mean = (double)sum / (double)u->k;
	s->used = sum ? (double)used / (double)sum : 0;
}

static const char *kind_text(const struct unif_edge *e)
{
	return e->taken ? br_kind_name(e->kind) : "fall-through";
}

static size_t phantoms(const struct unif_result *r)
{
	size_t n = 0;
	for (size_t i = 0; i < r->ne; i++)
		n += (size_t)r->e[i].phantom;
	return n;
}

static void text_edges(FILE *f, const struct unif_report *u, int biased_only)
{
	const struct unif_result *r = u->r;
	fprintf(f, "\n%s\n%14s %14s %10s %10s %9s  %s\n",
	        biased_only ? "biased edges, hottest first:" : "hottest tested edges:", "exact",
	        "mean", "rel. bias", "z", "p", "edge");
	for (size_t i = 0, shown = 0; i < r->ne && (biased_only || shown < TEXT_EDGES); i++) {
		const struct unif_edge *e = &r->e[i];
		if (biased_only ? !e->biased : e->phantom)
			continue;
		const char *a, *b;
		names_of(u, e, &a, &b);
		char rel[32];
		if (isinf(e->rel_bias))
			snprintf(rel, sizeof(rel), "phantom");
		else
			snprintf(rel, sizeof(rel), "%+.3f %%", 100 * e->rel_bias);
		fprintf(f, "%14.1f %14.1f %10s %10.3g %9.2g  %s -> %s (%s)\n", e->exact, e->mean,
		        rel, e->z, e->p, a, b, kind_text(e));
		shown++;
	}
}

void unif_report_text(FILE *f, const struct unif_report *u)
{
	const struct unif_result *r = u->r;
	struct sample_stats s;
	sample_stats(u, &s);
	fprintf(f,
	        "uniformity of the %s method: %zu runs of %s (PMU seeds %" PRIu64 " to %" PRIu64
	        ", program seed %" PRIu64 ")\n",
	        prof_method_name(u->method), u->k, u->program, u->pmu_seed0,
	        u->pmu_seed0 + u->k - 1, u->seed);
	fprintf(f,
	        "samples per run: %.1f on average (%" PRIu64 " to %" PRIu64
	        "), %.2f %% of them used\n",
	        s.mean, s.min, s.max, 100 * s.used);
	if (r->truth_differs)
		fprintf(f,
		        "exact counts: %zu of the runs differ from the first (each run is compared "
		        "with its own)\n",
		        r->truth_differs);
	else
		fprintf(f, "exact counts: the same in every run\n");
	fprintf(f, "estimates: %s\n",
	        u->opts->normalise ? "each run scaled to its exact total (--normalise)"
	                           : "raw; an unbiased method's mean tends to the exact count");
	fprintf(f,
	        "edges: %zu executed; %zu tested (mean exact count >= %.1f: %g of %.1f and >= %g); "
	        "%zu phantom\n",
	        r->truth_edges, r->tested, r->min_weight, u->opts->min_share, r->total,
	        u->opts->min_count, phantoms(r));
	fprintf(f,
	        "overlap with the exact profile (validate's): %.4f %% on average; the runs' spread "
	        "alone "
	        "would leave %.4f %%\n",
	        100 * r->overlap_mean, 100 * r->overlap_noise);
	fprintf(f,
	        "chi2 = %.2f over %zu edges whose estimates vary; effective dof %.2f, scale %.3f: "
	        "p = %.3g\n",
	        r->chi2, r->varying, r->eff_dof, r->scale, r->p_chi2);
	fprintf(f,
	        "per edge: p < %.3g (alpha/2 over %zu edges), |z| > %.3g (Student t, %zu dof): %zu "
	        "biased\n",
	        r->edge_alpha, r->tested, r->crit_z, u->k - 1, r->biased);
	if (r->unbiased)
		fprintf(f, "verdict: unbiased at alpha = %g\n", u->opts->alpha);
	else
		fprintf(f, "verdict: BIASED at alpha = %g (%s)\n", u->opts->alpha,
		        r->biased ? "biased edges below" : "chi2 over all the tested edges");
	text_edges(f, u, r->biased > 0);
}

/* A JSON number, or null when it has none. */
static void json_num(FILE *f, const char *key, double v, int last)
{
	fprintf(f, "\"%s\": ", key);
	if (isfinite(v))
		fprintf(f, "%.10g", v);
	else
		fputs("null", f);
	fputs(last ? "" : ", ", f);
}

static void json_edge(FILE *f, const struct unif_report *u, const struct unif_edge *e)
{
	const char *a, *b;
	names_of(u, e, &a, &b);
	fprintf(f,
	        "{\"from\": \"0x%" PRIx64 "\", \"to\": \"0x%" PRIx64 "\", \"from_sym\": ", e->from,
	        e->to);
	json_put_str(f, a);
	fputs(", \"to_sym\": ", f);
	json_put_str(f, b);
	fprintf(f, ", \"kind\": \"%s\", \"taken\": %d, ", br_kind_name(e->kind), e->taken);
	json_num(f, "exact", e->exact, 0);
	json_num(f, "mean", e->mean, 0);
	json_num(f, "se", e->se, 0);
	json_num(f, "z", e->z, 0);
	json_num(f, "p", e->p, 0);
	json_num(f, "rel_bias", e->rel_bias, 0);
	fprintf(f, "\"phantom\": %s, \"biased\": %s}", e->phantom ? "true" : "false",
	        e->biased ? "true" : "false");
}

void unif_report_json(FILE *f, const struct unif_report *u)
{
	const struct unif_result *r = u->r;
	struct sample_stats s;
	sample_stats(u, &s);
	fprintf(f, "{\"method\": \"%s\", \"program\": ", prof_method_name(u->method));
	json_put_str(f, u->program);
	fprintf(f,
	        ", \"runs\": %zu, \"pmu_seeds\": [%" PRIu64 ", %" PRIu64 "], \"seed\": %" PRIu64
	        ", \"normalised\": %s, ",
	        u->k, u->pmu_seed0, u->pmu_seed0 + u->k - 1, u->seed,
	        u->opts->normalise ? "true" : "false");
	json_num(f, "alpha", u->opts->alpha, 0);
	json_num(f, "samples_mean", s.mean, 0);
	fprintf(f, "\"samples_min\": %" PRIu64 ", \"samples_max\": %" PRIu64 ", ", s.min, s.max);
	json_num(f, "samples_used", s.used, 0);
	fprintf(f, "\"truth_differs\": %zu, \"truth_edges\": %zu, ", r->truth_differs,
	        r->truth_edges);
	json_num(f, "total", r->total, 0);
	json_num(f, "min_weight", r->min_weight, 0);
	fprintf(f, "\"tested\": %zu, \"phantoms\": %zu, ", r->tested, phantoms(r));
	json_num(f, "overlap_mean", r->overlap_mean, 0);
	json_num(f, "overlap_noise", r->overlap_noise, 0);
	json_num(f, "chi2", r->chi2, 0);
	fprintf(f, "\"dof\": %zu, ", r->varying);
	json_num(f, "effective_dof", r->eff_dof, 0);
	json_num(f, "chi2_scale", r->scale, 0);
	json_num(f, "p_value", r->p_chi2, 0);
	json_num(f, "edge_alpha", r->edge_alpha, 0);
	json_num(f, "critical_z", r->crit_z, 0);
	fprintf(f, "\"biased_edges\": %zu, \"unbiased\": %s, \"edges\": [", r->biased,
	        r->unbiased ? "true" : "false");
	for (size_t i = 0; i < r->ne; i++) {
		fputs(i ? ",\n  " : "\n  ", f);
		json_edge(f, u, &r->e[i]);
	}
	fputs("]}\n", f);
}

int unif_report_svg(struct outputs *outs, struct outfile *of, const struct unif_report *u)
{
	const char *cmd = outs->cmd;
	const struct unif_result *r = u->r;
	struct zplot_point *p = malloc((r->ne + 1) * sizeof(*p));
	if (!p)
		return fprintf(stderr, "%s: out of memory\n", cmd), -1;
	size_t n = 0;
	for (size_t i = 0; i < r->ne; i++)
		if (!r->e[i].phantom)
			p[n++] = (struct zplot_point){r->e[i].exact, r->e[i].z, r->e[i].kind,
			                              r->e[i].taken, (uint8_t)r->e[i].biased};
	const char *slash = strrchr(u->program, '/');
	char title[1024];
	snprintf(title, sizeof(title),
	         "%s \u2014 %s%s: %s at alpha %g\n%zu runs, %zu edges tested, %zu biased; chi2 "
	         "%.1f, effective dof "
	         "%.1f, p = %.3g\ndashed: the Bonferroni limit |z| = %.2f",
	         slash ? slash + 1 : u->program, prof_method_name(u->method),
	         u->opts->normalise ? " (normalised)" : "", r->unbiased ? "unbiased" : "biased",
	         u->opts->alpha, u->k, r->tested, r->biased, r->chi2, r->eff_dof, r->p_chi2,
	         r->crit_z);
	int err = svg_zplot(of->f, title, p, n, r->crit_z);
	free(p);
	if (err < 0) { /* the temporary goes in outputs_fini */
		fprintf(stderr, "%s: cannot write %s: %s\n", cmd, outfile_name(of), pmusim_strerror(err));
		return -1;
	}
	return outputs_commit(outs, of);
}
