/* Unit tests of profiler/uniformity, the statistics (tests/e2e/check_uniformity.c
 * runs the command), with hand-made runs: synthetic estimates drawn around known
 * exact counts. Unbiased estimates pass at the rate the significance level
 * promises (independent edges, edges in perfectly correlated groups, one common
 * factor, few runs); a 5 % bias on a hot edge, an edge never estimated, a
 * phantom edge and a global scale error are found; normalisation, the minimum
 * weight, the call subset and per-run truths do what they say. */
#include <check.h>
#include <math.h>
#include <stdlib.h>

#include "common/err.h"
#include "common/rng.h"
#include "pmu_model/block.h"
#include "profiler/uniformity.h"
#include "tests/unit/run_suite.h"

#define MAX_RUNS 16
#define MAX_EDGES 64

struct synth {
	size_t k, m;
	struct unif_obs obs[MAX_RUNS][MAX_EDGES];
	const struct unif_obs *runs[MAX_RUNS];
	size_t n[MAX_RUNS];
};

static double uniform01(struct rng *g)
{
	return ((double)(rng_next(g) >> 11) + 0.5) / 9007199254740992.0; /* (0, 1) */
}

/* Box-Muller: one standard normal deviate. */
static double normal(struct rng *g)
{
	double u = uniform01(g), v = uniform01(g);
	return sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

/* Exact counts 1000 * (m - e) for edge e; estimate = exact + noise, the noise of
 * edge e being sd_rel * exact * (the normal deviate of its group in that run),
 * edges grouped by e / group (group = 1: independent; group = m: one factor). */
static void synth_make(struct synth *s, size_t k, size_t m, size_t group, double sd_rel,
                       uint64_t seed)
{
	struct rng g;
	rng_init(&g, seed);
	s->k = k, s->m = m;
	for (size_t i = 0; i < k; i++) {
		double dev[MAX_EDGES];
		for (size_t e = 0; e < m; e++)
			dev[e] = e % group == 0 ? normal(&g) : dev[e - 1];
		for (size_t e = 0; e < m; e++) {
			double exact = 1000.0 * (double)(m - e);
			s->obs[i][e] = (struct unif_obs){.from = 0x1000 + 16 * e,
			                                 .to = 0x2000 + e,
			                                 .est = exact + sd_rel * exact * dev[e],
			                                 .exact = exact,
			                                 .kind = e % 3 ? BK_COND : BK_CALL,
			                                 .taken = 1};
		}
		s->runs[i] = s->obs[i];
		s->n[i] = m;
	}
}

static const struct unif_opts defaults = {.alpha = 0.001, .min_share = 0.001, .min_count = 0};

static const struct unif_edge *find(const struct unif_result *r, uint64_t from)
{
	for (size_t j = 0; j < r->ne; j++)
		if (r->e[j].from == from)
			return &r->e[j];
	ck_abort_msg("edge 0x%llx not in the result", (unsigned long long)from);
	return NULL;
}

/* Rejections at alpha (verdict) and chi2 p-values below alpha over trials. */
static void false_alarms(size_t k, size_t m, size_t group, int trials, double alpha, int *verdict,
                         int *chi2)
{
	struct synth *s = malloc(sizeof(*s));
	struct unif_opts o = defaults;
	o.alpha = alpha;
	o.min_share = 0;
	*verdict = *chi2 = 0;
	for (int t = 0; t < trials; t++) {
		struct unif_result r;
		synth_make(s, k, m, group, 0.01, 1000 + (uint64_t)t);
		ck_assert_int_eq(unif_test(s->runs, s->n, k, &o, &r), 0);
		ck_assert_uint_eq(r.tested, m);
		*verdict += !r.unbiased;
		*chi2 += r.p_chi2 < alpha;
		unif_result_free(&r);
	}
	free(s);
}

/* Unbiased estimates: the verdict's false-alarm rate stays at most alpha, and so
 * does chi2's (its p-value below alpha in at most alpha of the trials; at least
 * 0.4 alpha: cautious where the edges' correlation is uncertain, not blind),
 * whatever the correlation between edges. Binomial limits: 1000 trials at 10 %
 * have a standard deviation of 0.95 %; the upper bounds are 4 of them. */
static const struct {
	int line;
	size_t k, m, group;
} calib_rows[] = {
    {__LINE__, 8, 40, 1},  /* independent edges */
    {__LINE__, 8, 40, 5},  /* 8 groups of 5 edges that always move together (a loop's path) */
    {__LINE__, 8, 40, 40}, /* one factor */
    {__LINE__, 3, 40, 4},  /* few runs: heavy-tailed t, an estimated correlation of rank 2 */
    {__LINE__, 16, 60, 3},
};

START_TEST(unbiased_passes_at_the_promised_rate)
{
	int verdict, chi2;
	false_alarms(calib_rows[_i].k, calib_rows[_i].m, calib_rows[_i].group, 1000, 0.1, &verdict,
	             &chi2);
	ck_assert_msg(verdict <= 100 + 38, "line %d: %d false alarms in 1000 at alpha 0.1",
	              calib_rows[_i].line, verdict);
	ck_assert_msg(chi2 >= 40 && chi2 <= 138, "line %d: chi2 p < 0.1 in %d of 1000",
	              calib_rows[_i].line, chi2);
	/* and at the default level */
	false_alarms(calib_rows[_i].k, calib_rows[_i].m, calib_rows[_i].group, 1000, 0.001,
	             &verdict, &chi2);
	ck_assert_msg(verdict <= 5, "line %d: %d false alarms in 1000 at alpha 0.001",
	              calib_rows[_i].line, verdict);
}
END_TEST

START_TEST(a_5_percent_bias_on_a_hot_edge_fails)
{
	struct synth s;
	synth_make(&s, 8, 40, 1, 0.002, 7);
	for (size_t i = 0; i < s.k; i++)
		s.obs[i][1].est *= 1.05; /* the second hottest edge */
	struct unif_result r;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &defaults, &r), 0);
	ck_assert(!r.unbiased);
	ck_assert_uint_eq(r.biased, 1);
	const struct unif_edge *e = find(&r, 0x1010);
	ck_assert(e->biased &&
	          e == &r.e[0]); /* hottest first: its mean is above the first edge's */
	ck_assert_msg(fabs(e->rel_bias - 0.05) < 0.005, "rel bias %g", e->rel_bias);
	/* z = 89 with 7 degrees of freedom is p = 1e-11, a chi-square(1) term of 46 */
	ck_assert_msg(e->z > r.crit_z && r.p_chi2 < 0.001, "z %g crit %g chi2 %g p %g", e->z,
	              r.crit_z, r.chi2, r.p_chi2);
	unif_result_free(&r);
}
END_TEST

START_TEST(an_edge_never_estimated_is_biased)
{
	struct synth s;
	synth_make(&s, 4, 10, 1, 0.01, 3);
	for (size_t i = 0; i < s.k; i++)
		s.obs[i][2].est = 0; /* the taken method's fall-throughs */
	struct unif_result r;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &defaults, &r), 0);
	const struct unif_edge *e = find(&r, 0x1020);
	ck_assert(!r.unbiased && e->biased);
	ck_assert(isinf(e->z) && e->z < 0 && e->p == 0 && e->se == 0);
	ck_assert(isinf(r.chi2) && r.p_chi2 == 0);
	ck_assert(fabs(e->rel_bias + 1) < 1e-12);
	unif_result_free(&r);
}
END_TEST

START_TEST(a_phantom_edge_is_biased)
{
	struct synth s;
	synth_make(&s, 5, 10, 1, 0.01, 4);
	for (size_t i = 0; i < s.k; i++) /* no run executed edge 9: 0x1090 -> 0x2009 */
		s.obs[i][9].exact = 0, s.obs[i][9].est = 900 + 10.0 * (double)i;
	struct unif_result r;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &defaults, &r), 0);
	ck_assert(!r.unbiased);
	ck_assert_uint_eq(r.tested, 9);
	ck_assert_uint_eq(r.biased, 1);
	const struct unif_edge *ph = NULL;
	for (size_t j = 0; j < r.ne; j++)
		if (r.e[j].phantom)
			ph = &r.e[j];
	ck_assert(ph && ph->from == 0x1090 && ph->biased && ph->exact == 0 &&
	          fabs(ph->mean - 920) < 1e-9);
	unif_result_free(&r);
}
END_TEST

START_TEST(a_scale_error_fails_raw_and_passes_normalised)
{
	struct synth s;
	synth_make(&s, 8, 30, 1, 0.01, 5);
	for (size_t i = 0; i < s.k; i++)
		for (size_t e = 0; e < s.m; e++)
			s.obs[i][e].est *= 3; /* e.g. counts per sample instead of per event */
	struct unif_result r;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &defaults, &r), 0);
	ck_assert(!r.unbiased && r.biased == 30);
	unif_result_free(&r);
	struct unif_opts o = defaults;
	o.normalise = 1;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &o, &r), 0);
	ck_assert_msg(r.unbiased, "normalised: chi2 %g p %g, %zu biased", r.chi2, r.p_chi2,
	              r.biased);
	ck_assert(fabs(r.e[0].mean - r.e[0].exact) < 0.02 * r.e[0].exact);
	unif_result_free(&r);
}
END_TEST

START_TEST(light_edges_are_not_tested)
{
	struct synth s;
	synth_make(&s, 6, 20, 1, 0.01, 6);
	/* exact counts 20000 .. 1000, total 210000: 1 % of it is 2100 */
	for (size_t i = 0; i < s.k; i++)
		s.obs[i][19].est *= 2; /* 1000 executions, estimated 2000 */
	struct unif_opts o = defaults;
	o.min_share = 0.01;
	struct unif_result r;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &o, &r), 0);
	ck_assert(r.unbiased);
	ck_assert_uint_eq(r.tested, 18);
	ck_assert(fabs(r.min_weight - 2100) < 1e-6);
	unif_result_free(&r);
	o.min_share = 0;
	o.min_count = 500;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &o, &r), 0);
	ck_assert(!r.unbiased && r.tested == 20 && find(&r, 0x1130)->biased);
	unif_result_free(&r);
}
END_TEST

START_TEST(calls_only)
{
	struct synth s;
	synth_make(&s, 6, 30, 1, 0.01, 8);
	for (size_t i = 0; i < s.k; i++)
		s.obs[i][1].est = 0; /* a conditional edge: outside the call subset */
	struct unif_opts o = defaults;
	o.calls_only = 1;
	struct unif_result r;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &o, &r), 0);
	ck_assert(r.unbiased && r.tested == 10);
	for (size_t j = 0; j < r.ne; j++)
		ck_assert(r.e[j].kind == BK_CALL);
	unif_result_free(&r);
}
END_TEST

START_TEST(each_run_against_its_own_truth)
{
	struct synth s;
	synth_make(&s, 8, 20, 1, 0.005, 9);
	for (size_t i = 0; i < s.k; i++) /* the program itself varies: run i executes more */
		for (size_t e = 0; e < s.m; e++)
			s.obs[i][e].exact += 100.0 * (double)i,
			    s.obs[i][e].est += 100.0 * (double)i;
	struct unif_result r;
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &defaults, &r), 0);
	ck_assert(r.unbiased);
	ck_assert_uint_eq(r.truth_differs, 7);
	unif_result_free(&r);
	synth_make(&s, 8, 20, 1, 0.005, 9);
	ck_assert_int_eq(unif_test(s.runs, s.n, s.k, &defaults, &r), 0);
	ck_assert_uint_eq(r.truth_differs, 0);
	unif_result_free(&r);
}
END_TEST

START_TEST(edges_missing_from_some_runs)
{
	/* run 0 lacks an edge the others have: it counts as estimate 0 and exact 0 there */
	static const struct unif_obs a[] = {{0x10, 0x20, 100, 100, BK_JMP, 1}};
	static const struct unif_obs b[] = {{0x10, 0x20, 102, 100, BK_JMP, 1},
	                                    {0x30, 0x40, 5, 0, BK_JMP, 1}};
	static const struct unif_obs c[] = {{0x30, 0x40, 4, 0, BK_JMP, 1},
	                                    {0x10, 0x20, 97, 100, BK_JMP, 1}};
	const struct unif_obs *runs[] = {a, b, c};
	size_t n[] = {1, 2, 2};
	struct unif_result r;
	ck_assert_int_eq(unif_test(runs, n, 3, &defaults, &r), 0);
	ck_assert_uint_eq(r.tested, 1);
	ck_assert_uint_eq(r.ne, 2); /* and the phantom 0x30 -> 0x40, mean 3 >= 0.1 % of 100 */
	ck_assert(r.e[0].from == 0x10 && fabs(r.e[0].mean - 299.0 / 3) < 1e-12);
	ck_assert(r.e[1].phantom && fabs(r.e[1].mean - 3) < 1e-12 && !r.unbiased);
	/* t by hand: differences 0, 2, -3: mean -1/3, sd sqrt(19/3), se sd / sqrt 3 */
	ck_assert(fabs(r.e[0].z - (-1.0 / 3) / (sqrt(19.0 / 3) / sqrt(3))) < 1e-12);
	unif_result_free(&r);
}
END_TEST

START_TEST(bad_arguments)
{
	struct synth s;
	synth_make(&s, 2, 4, 1, 0.01, 1);
	struct unif_result r;
	struct unif_opts o = defaults;
	ck_assert_int_eq(unif_test(s.runs, s.n, 1, &o, &r), PMUSIM_ERR_ARG);
	o.alpha = 1;
	ck_assert_int_eq(unif_test(s.runs, s.n, 2, &o, &r), PMUSIM_ERR_ARG);
	o.alpha = 0.01, o.min_share = 2;
	ck_assert_int_eq(unif_test(s.runs, s.n, 2, &o, &r), PMUSIM_ERR_ARG);
	o.min_share = 0;
	ck_assert_int_eq(unif_test(s.runs, s.n, 2, &o, &r),
	                 0); /* two runs: t with 1 degree of freedom */
	ck_assert(r.tested == 4 && r.crit_z > 100 && r.eff_dof == 1);
	unif_result_free(&r);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("uniformity");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, unbiased_passes_at_the_promised_rate, 0,
	                    sizeof(calib_rows) / sizeof(calib_rows[0]));
	tcase_add_test(tc, a_5_percent_bias_on_a_hot_edge_fails);
	tcase_add_test(tc, an_edge_never_estimated_is_biased);
	tcase_add_test(tc, a_phantom_edge_is_biased);
	tcase_add_test(tc, a_scale_error_fails_raw_and_passes_normalised);
	tcase_add_test(tc, light_edges_are_not_tested);
	tcase_add_test(tc, calls_only);
	tcase_add_test(tc, each_run_against_its_own_truth);
	tcase_add_test(tc, edges_missing_from_some_runs);
	tcase_add_test(tc, bad_arguments);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
