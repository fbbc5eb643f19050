/* The uniformity test of a sampling method: is its edge profile an unbiased
 * estimate of the exact edge counts? K recordings of one deterministic program
 * that differ only in the PMU's random sample points give, for every edge e and
 * run k, an estimate X_k(e) next to the exact count T_k(e) of the same run. The
 * hypothesis is E[X_k(e) - T_k(e)] = 0 for every edge; the spread of the K
 * differences measures the sampling noise, so no model of the method is needed.
 * docs/uniformity-test.md derives the statistics; in short:
 *
 * - per edge: mean difference d, its standard error s / sqrt(K) over the runs,
 *   z = d / SE, which follows Student's t with K - 1 degrees of freedom when the
 *   method is unbiased, and its two-sided p-value;
 * - the edges tested are those whose mean exact count is at least min_share of
 *   the total and at least min_count (enough executions for the sums of many
 *   samples to be near normal);
 * - chi2 = sum over the tested edges of q^2, q the normal quantile of the edge's
 *   p (a chi-square(1) variable each); edges of one path are correlated, so
 *   chi2 is compared with c * chi-square(nu), nu and c matched to its first two
 *   moments with the edges' correlation estimated from the K runs (Satterthwaite);
 * - verdict: biased when chi2's p-value is below alpha / 2, or any tested edge's
 *   p is below alpha / 2 / tested (Bonferroni), or an edge no run executed got a
 *   weight of at least the minimum (no unbiased non-negative estimator can give
 *   one); the false-alarm rate is then at most alpha.
 *
 * Plain C, no I/O. */
#ifndef PMUSIM_PROFILER_UNIFORMITY_H
#define PMUSIM_PROFILER_UNIFORMITY_H

#include <stddef.h>
#include <stdint.h>

/* One edge of one run: the method's estimate and the run's exact count (0 for
 * an edge that only one of them has). */
struct unif_obs {
	uint64_t from, to;
	double est, exact;
	uint8_t kind;  /* enum br_kind of the branch at from */
	uint8_t taken; /* 0: the fall-through of a conditional branch */
};

struct unif_opts {
	double alpha;     /* significance level of the verdict, 0 < alpha < 1 */
	double min_share; /* tested edges: mean exact count >= min_share * total ... */
	double min_count; /* ... and >= min_count */
	int normalise;    /* scale each run's estimates to its exact total (the profile's
	                   * shape, as validate's overlap compares it); else raw counts */
	int calls_only;   /* only call edges (the calls method) */
};

struct unif_edge {
	uint64_t from, to;
	uint8_t kind, taken;
	double exact;    /* mean exact count over the runs */
	double mean;     /* mean estimate */
	double se;       /* standard error of the mean difference */
	double z;        /* (mean - exact) / se: +-INFINITY when se is 0 and they differ */
	double p;        /* two-sided p-value of z (Student t, K - 1 degrees of freedom) */
	double rel_bias; /* (mean - exact) / exact; INFINITY for a phantom */
	int phantom;     /* executed in no run, yet estimated */
	int biased;
};

struct unif_result {
	size_t runs;
	size_t truth_edges;   /* edges some run executed */
	size_t truth_differs; /* runs whose exact counts differ from the first run's */
	double total;         /* mean exact total */
	double min_weight;    /* edges with a mean exact count >= this are tested */
	size_t tested;
	size_t varying;        /* tested edges whose difference varies: chi2's terms */
	double chi2;           /* INFINITY when a tested edge is off by the same amount every run */
	double eff_dof, scale; /* chi2 ~ scale * chi-square(eff_dof) */
	double p_chi2;
	double edge_alpha;    /* Bonferroni threshold of an edge's p */
	double crit_z;        /* the |z| of that threshold */
	size_t biased;        /* biased edges (tested ones and phantoms) */
	double overlap_mean;  /* validate's overlap of each run's profile with its truth
	                       * (sum of min(p, q), both normalised; all edges), mean
	                       * over the runs */
	double overlap_noise; /* the overlap expected from the runs' spread alone, as if
	                       * unbiased: 1 - sum over edges of sd * sqrt(2 / pi) / 2, sd
	                       * of the normalised differences p - q over the runs */
	int unbiased;         /* the verdict */
	struct unif_edge *e;  /* tested edges and phantoms, hottest first (by the larger
	                       * of exact and mean), then by (from, to) */
	size_t ne;
};

/* Runs the test on k >= 2 runs; runs[i] has n[i] observations, each (from, to)
 * at most once, in any order. 0, PMUSIM_ERR_ARG (k < 2, alpha or shares out of
 * range), or PMUSIM_ERR_NOMEM. r->e is owned by r (unif_result_free). */
int unif_test(const struct unif_obs *const *runs, const size_t *n, size_t k,
              const struct unif_opts *o, struct unif_result *r);
void unif_result_free(struct unif_result *r);

#endif
