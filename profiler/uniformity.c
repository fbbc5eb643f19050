/* The uniformity test (see uniformity.h and docs/uniformity-test.md): per-edge
 * t statistics over K independent runs, a chi-square over the edges with its
 * degrees of freedom matched to the edges' correlation (Satterthwaite, Biometrics
 * Bulletin 2(6), 1946: a sum of correlated chi-square terms as a scaled
 * chi-square of the same mean and variance), and a Bonferroni bound per edge. */
#include "profiler/uniformity.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "pmu_model/block.h"
#include "profiler/stat_dist.h"

/* Every edge of every run, the runs' values side by side. */
struct table {
	struct unif_obs *key; /* union of the runs' edges, sorted by (from, to) */
	size_t u, k;
	double *x, *t; /* x[run * u + edge]: estimate, exact count */
};

static int cmp_obs(const void *a, const void *b)
{
	const struct unif_obs *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static int in_subset(const struct unif_opts *o, const struct unif_obs *e)
{
	return !o->calls_only || e->kind == BK_CALL || e->kind == BK_CALL_IND;
}

static int table_build(struct table *tb, const struct unif_obs *const *runs, const size_t *n,
                       size_t k, const struct unif_opts *o)
{
	size_t all = 0, u = 0;
	for (size_t i = 0; i < k; i++)
		all += n[i];
	memset(tb, 0, sizeof(*tb));
	if (!(tb->key = malloc((all + 1) * sizeof(*tb->key))))
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < n[i]; j++)
			if (in_subset(o, &runs[i][j]))
				tb->key[u++] = runs[i][j];
	arrays_sort(tb->key, u, sizeof(*tb->key), cmp_obs);
	size_t w = 0;
	for (size_t i = 0; i < u; i++)
		if (w == 0 || cmp_obs(&tb->key[w - 1], &tb->key[i]) != 0)
			tb->key[w++] = tb->key[i];
	tb->u = w;
	tb->k = k;
	tb->x = calloc(k * w + 1, sizeof(double));
	tb->t = calloc(k * w + 1, sizeof(double));
	if (!tb->x || !tb->t)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < k; i++)
		for (size_t j = 0; j < n[i]; j++) {
			if (!in_subset(o, &runs[i][j]))
				continue;
			const struct unif_obs *hit =
			    arrays_find(&runs[i][j], tb->key, w, sizeof(*tb->key), cmp_obs);
			tb->x[i * w + (size_t)(hit - tb->key)] += runs[i][j].est;
			tb->t[i * w + (size_t)(hit - tb->key)] += runs[i][j].exact;
		}
	return 0;
}

static void table_free(struct table *tb)
{
	free(tb->key);
	free(tb->x);
	free(tb->t);
}

/* Each run's estimates scaled to its exact total (no change for a run with no
 * estimate at all). */
static void normalise(struct table *tb)
{
	for (size_t i = 0; i < tb->k; i++) {
		double sx = 0, st = 0;
		for (size_t e = 0; e < tb->u; e++)
			sx += tb->x[i * tb->u + e], st += tb->t[i * tb->u + e];
		for (size_t e = 0; e < tb->u && sx > 0; e++)
			tb->x[i * tb->u + e] *= st / sx;
	}
}

/* Mean, standard error, z and p of one edge's differences over the runs. */
static void edge_stats(const struct table *tb, size_t e, struct unif_edge *r)
{
	double k = (double)tb->k, sx = 0, st = 0, sd = 0, ss = 0;
	for (size_t i = 0; i < tb->k; i++)
		sx += tb->x[i * tb->u + e], st += tb->t[i * tb->u + e];
	double d = (sx - st) / k;
	for (size_t i = 0; i < tb->k; i++) {
		double di = tb->x[i * tb->u + e] - tb->t[i * tb->u + e] - d;
		ss += di * di;
	}
	*r = (struct unif_edge){.from = tb->key[e].from,
	                        .to = tb->key[e].to,
	                        .kind = tb->key[e].kind,
	                        .taken = tb->key[e].taken,
	                        .exact = st / k,
	                        .mean = sx / k};
	sd = sqrt(ss / (k - 1));
	d = r->mean - r->exact;
	/* differences equal in every run up to rounding: no spread to measure */
	if (sd <= 1e-12 * (fabs(d) + r->exact + r->mean))
		sd = 0;
	r->se = sd / sqrt(k);
	if (fabs(d) <= 1e-12 * (r->exact + r->mean))
		d = 0;
	r->z = r->se > 0 ? d / r->se : d == 0 ? 0 : d > 0 ? INFINITY : -INFINITY;
	r->p = r->se > 0 ? t_sf2(r->z, k - 1) : d == 0 ? 1 : 0;
	r->rel_bias = r->exact > 0 ? d / r->exact : INFINITY;
}

static int cmp_hot(const void *a, const void *b)
{
	const struct unif_edge *x = a, *y = b;
	double wx = x->exact > x->mean ? x->exact : x->mean,
	       wy = y->exact > y->mean ? y->exact : y->mean;
	if (wx != wy)
		return wx > wy ? -1 : 1;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* tr(R^2) of the tested, varying edges' correlation matrix R, estimated from the
 * runs: Y (runs x edges) holds each edge's centred differences over their
 * standard deviation, R^ = Y'Y / (K - 1), and tr(R^^2) = ||YY'||^2 / (K - 1)^2
 * through the K x K matrix YY'. Then (n tr(R^^2) - m^2) / (n - 1), n = K - 1,
 * which corrects the chance correlations of few runs (unbiased for independent
 * and for identical edges, docs/uniformity-test.md), at least m, raised by its
 * own uncertainty and at most m^2. */
static double trace_r2(const struct table *tb, const struct unif_result *r, size_t m)
{
	size_t k = tb->k;
	double *g = calloc(k * k, sizeof(double)), *y = malloc(k * sizeof(double));
	double n = (double)k - 1, md = (double)m, tr = 0;
	if (!g || !y) { /* out of memory: the most cautious answer (one factor) */
		free(g);
		free(y);
		return md * md;
	}
	for (size_t j = 0; j < r->ne; j++) {
		const struct unif_edge *e = &r->e[j];
		if (e->phantom || !(e->se > 0))
			continue;
		size_t col = (size_t)((const struct unif_obs *)arrays_find(
		                          &(struct unif_obs){.from = e->from, .to = e->to}, tb->key,
		                          tb->u, sizeof(*tb->key), cmp_obs) -
		                      tb->key);
		double sd = e->se * sqrt((double)k), d = e->mean - e->exact;
		for (size_t i = 0; i < k; i++)
			y[i] = (tb->x[i * tb->u + col] - tb->t[i * tb->u + col] - d) / sd;
		for (size_t a = 0; a < k; a++)
			for (size_t b = 0; b < k; b++)
				g[a * k + b] += y[a] * y[b];
	}
	for (size_t i = 0; i < k * k; i++)
		tr += g[i] * g[i];
	free(g);
	free(y);
	tr /= n * n;
	if (n < 2) /* one degree of freedom: nothing to tell the edges apart by */
		return md * md;
	double est = (n * tr - md * md) / (n - 1);
	/* one standard deviation up (about 2 / (n - 1) of it): 1 / est is convex, so an
	 * estimate as likely to be low as high still errs towards too many degrees of
	 * freedom, i.e. too light a tail */
	est = (est < md ? md : est) * (1 + 2 / (n - 1));
	return est < md ? md : est > md * md ? md * md : est;
}

/* chi2 of the tested edges and its p-value by the matched scaled chi-square. */
static void chi2_part(const struct table *tb, struct unif_result *r)
{
	r->chi2 = 0;
	r->varying = 0;
	for (size_t j = 0; j < r->ne; j++) {
		const struct unif_edge *e = &r->e[j];
		if (e->phantom)
			continue;
		if (isinf(e->z))
			r->chi2 = INFINITY;
		else if (e->se > 0) {
			double q = normal_quantile2(e->p);
			r->chi2 += q * q;
			r->varying++;
		}
	}
	if (r->varying == 0) {
		r->eff_dof = r->scale = 0;
		r->p_chi2 = isinf(r->chi2) ? 0 : 1;
		return;
	}
	double m = (double)r->varying, a = trace_r2(tb, r, r->varying);
	r->eff_dof = m * m / a;
	r->scale = a / m;
	r->p_chi2 = isinf(r->chi2) ? 0 : chi2_sf(r->chi2 / r->scale, r->eff_dof);
}

/* The tested edges and the phantoms, with their statistics. */
static int select_edges(const struct table *tb, const struct unif_opts *o, struct unif_result *r)
{
	r->total = 0;
	for (size_t e = 0; e < tb->u; e++)
		for (size_t i = 0; i < tb->k; i++)
			r->total += tb->t[i * tb->u + e] / (double)tb->k;
	r->min_weight =
	    o->min_share * r->total > o->min_count ? o->min_share * r->total : o->min_count;
	if (!(r->e = malloc((tb->u + 1) * sizeof(*r->e))))
		return PMUSIM_ERR_NOMEM;
	for (size_t e = 0; e < tb->u; e++) {
		struct unif_edge s;
		edge_stats(tb, e, &s);
		r->truth_edges += s.exact > 0;
		if (s.exact > 0 ? s.exact >= r->min_weight
		                : s.mean >= r->min_weight && s.mean > 0) {
			s.phantom = s.exact <= 0;
			r->tested += !s.phantom;
			r->e[r->ne++] = s;
		}
	}
	return 0;
}

/* The runs' mean overlap and the overlap their spread alone would cost: for
 * normal differences, E|p - q| = sd sqrt(2 / pi), and 1 - overlap = sum |p - q| / 2. */
static void overlaps(const struct table *tb, struct unif_result *r)
{
	size_t k = tb->k, u = tb->u;
	double *sx = calloc(k, sizeof(double)), *st = calloc(k, sizeof(double));
	if (!sx || !st) {
		free(sx), free(st);
		r->overlap_mean = r->overlap_noise = NAN;
		return;
	}
	for (size_t i = 0; i < k; i++)
		for (size_t e = 0; e < u; e++)
			sx[i] += tb->x[i * u + e], st[i] += tb->t[i * u + e];
	double ov = 0, cost = 0;
	for (size_t e = 0; e < u; e++) {
		double m = 0, ss = 0;
		for (size_t i = 0; i < k; i++) {
			double p = sx[i] > 0 ? tb->x[i * u + e] / sx[i] : 0,
			       q = st[i] > 0 ? tb->t[i * u + e] / st[i] : 0;
			ov += (p < q ? p : q) / (double)k;
			m += (p - q) / (double)k;
		}
		for (size_t i = 0; i < k; i++) {
			double p = sx[i] > 0 ? tb->x[i * u + e] / sx[i] : 0,
			       q = st[i] > 0 ? tb->t[i * u + e] / st[i] : 0;
			ss += (p - q - m) * (p - q - m);
		}
		cost += sqrt(ss / (double)(k - 1)) * sqrt(2 / M_PI) / 2;
	}
	r->overlap_mean = ov;
	r->overlap_noise = 1 - cost;
	free(sx);
	free(st);
}

static size_t runs_differing(const struct table *tb)
{
	size_t d = 0;
	for (size_t i = 1; i < tb->k; i++)
		d += memcmp(tb->t, tb->t + i * tb->u, tb->u * sizeof(double)) != 0;
	return d;
}

int unif_test(const struct unif_obs *const *runs, const size_t *n, size_t k,
              const struct unif_opts *o, struct unif_result *r)
{
	memset(r, 0, sizeof(*r));
	if (k < 2 || !(o->alpha > 0 && o->alpha < 1) || !(o->min_share >= 0 && o->min_share <= 1) ||
	    !(o->min_count >= 0))
		return PMUSIM_ERR_ARG;
	struct table tb;
	int err = table_build(&tb, runs, n, k, o);
	if (!err && o->normalise)
		normalise(&tb);
	if (!err)
		err = select_edges(&tb, o, r);
	if (err) {
		table_free(&tb);
		unif_result_free(r);
		return err;
	}
	r->runs = k;
	r->truth_differs = runs_differing(&tb);
	overlaps(&tb, r);
	chi2_part(&tb, r);
	r->edge_alpha = r->tested ? o->alpha / 2 / (double)r->tested : o->alpha / 2;
	r->crit_z = t_quantile2(r->edge_alpha, (double)k - 1);
	for (size_t j = 0; j < r->ne; j++) {
		r->e[j].biased = r->e[j].phantom || r->e[j].p < r->edge_alpha;
		r->biased += (size_t)r->e[j].biased;
	}
	r->unbiased = r->biased == 0 && !(r->p_chi2 < o->alpha / 2);
	arrays_sort(r->e, r->ne, sizeof(*r->e), cmp_hot);
	table_free(&tb);
	return 0;
}

void unif_result_free(struct unif_result *r)
{
	free(r->e);
	r->e = NULL;
	r->ne = 0;
}
