/* Unit tests of profiler/stat_dist: the tails against closed forms (chi-square
 * with 2 degrees of freedom, Student t with 1 and 2, Q(1/2, x) = erfc(sqrt x),
 * incomplete beta with a or b = 1) and against printed tables of critical values
 * (NIST/SEMATECH e-Handbook of Statistical Methods, sections 1.3.6.7.1,
 * 1.3.6.7.2 and 1.3.6.7.4: normal, t and chi-square, three decimals). */
#include <check.h>
#include <math.h>

#include "profiler/stat_dist.h"
#include "tests/unit/run_suite.h"

static void near_rel(double got, double want, double rel, int line)
{
	ck_assert_msg(fabs(got - want) <= rel * fabs(want), "line %d: got %.15g, want %.15g", line,
	              got, want);
}

START_TEST(closed_forms)
{
	for (double x = 0.01; x < 600; x *= 1.7) {
		near_rel(chi2_sf(x, 2), exp(-x / 2), 1e-12, __LINE__);
		near_rel(gamma_q(1, x), exp(-x), 1e-12, __LINE__);
		near_rel(gamma_q(0.5, x), erfc(sqrt(x)), 1e-11, __LINE__);
		near_rel(gamma_p(1, x), -expm1(-x), 1e-12, __LINE__);
	}
	for (double t = 0.001; t < 1e6; t *= 1.9) {
		near_rel(t_sf2(t, 1), 2 / M_PI * atan(1 / t), 1e-11,
		         __LINE__); /* 1 - 2 atan(t) / pi */
		near_rel(t_sf2(-t, 1), 2 / M_PI * atan(1 / t), 1e-11, __LINE__);
		/* 1 - t / sqrt(2 + t^2), written without cancellation */
		near_rel(t_sf2(t, 2), 2 / (sqrt(2 + t * t) * (sqrt(2 + t * t) + t)), 1e-11,
		         __LINE__);
	}
	for (double x = 0.05; x < 1; x += 0.1) {
		near_rel(beta_inc(3.5, 1, x), pow(x, 3.5), 1e-12, __LINE__);
		near_rel(beta_inc(1, 4.25, x), 1 - pow(1 - x, 4.25), 1e-12, __LINE__);
	}
	ck_assert(chi2_sf(0, 5) == 1 && t_sf2(0, 5) == 1 && t_sf2(INFINITY, 5) == 0);
	ck_assert(isnan(gamma_q(-1, 2)) && isnan(beta_inc(1, 1, 2)));
}
END_TEST

/* Upper critical values: P(X >= x) = p. */
static const struct {
	int line;
	double dof, p, x;
} chi2_rows[] = {
    {__LINE__, 1, 0.05, 3.841},      {__LINE__, 1, 0.001, 10.828},  {__LINE__, 7, 0.001, 24.322},
    {__LINE__, 10, 0.05, 18.307},    {__LINE__, 10, 0.001, 29.588}, {__LINE__, 100, 0.05, 124.342},
    {__LINE__, 100, 0.001, 149.449}, {__LINE__, 30, 0.01, 50.892},
};

START_TEST(chi2_table)
{
	/* the table's three decimals move p by less than 0.3 % */
	near_rel(chi2_sf(chi2_rows[_i].x, chi2_rows[_i].dof), chi2_rows[_i].p, 3e-3,
	         chi2_rows[_i].line);
}
END_TEST

/* One-sided upper critical values: P(T >= t) = p, so the two-sided tail is 2p. */
static const struct {
	int line;
	double dof, p, t;
} t_rows[] = {
    {__LINE__, 1, 0.025, 12.706}, {__LINE__, 1, 0.001, 318.309}, {__LINE__, 7, 0.025, 2.365},
    {__LINE__, 7, 0.001, 4.785},  {__LINE__, 9, 0.025, 2.262},   {__LINE__, 9, 0.001, 4.297},
    {__LINE__, 30, 0.025, 2.042}, {__LINE__, 100, 0.005, 2.626},
};

START_TEST(t_table)
{
	double got = t_quantile2(2 * t_rows[_i].p, t_rows[_i].dof);
	ck_assert_msg(fabs(got - t_rows[_i].t) <= 0.0006, "line %d: t %.6f, table %.3f",
	              t_rows[_i].line, got, t_rows[_i].t);
	near_rel(t_sf2(got, t_rows[_i].dof), 2 * t_rows[_i].p, 1e-9, t_rows[_i].line);
}
END_TEST

START_TEST(normal_table)
{
	static const struct {
		double p, z;
	} rows[] = {{0.05, 1.960}, {0.01, 2.576}, {0.001, 3.291}, {0.2, 1.282}};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++)
		ck_assert_msg(fabs(normal_quantile2(rows[i].p) - rows[i].z) <= 0.0006, "p %g: %.6f",
		              rows[i].p, normal_quantile2(rows[i].p));
	ck_assert(normal_quantile2(1) == 0 && isinf(normal_quantile2(0)));
	near_rel(erfc(normal_quantile2(1e-300) / M_SQRT2), 1e-300, 1e-9, __LINE__);
	/* a t quantile with many degrees of freedom is the normal one */
	near_rel(t_quantile2(0.001, 1e7), normal_quantile2(0.001), 1e-5, __LINE__);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("stat_dist");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, closed_forms);
	tcase_add_loop_test(tc, chi2_table, 0, sizeof(chi2_rows) / sizeof(chi2_rows[0]));
	tcase_add_loop_test(tc, t_table, 0, sizeof(t_rows) / sizeof(t_rows[0]));
	tcase_add_test(tc, normal_table);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
