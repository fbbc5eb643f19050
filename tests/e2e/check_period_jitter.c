/* The randomised period (--delta D: each period is P + R, R drawn afresh from
 * 0..D): R must be uniform, as the CPI method's argument (every cycle equally
 * likely to be sampled) needs. The periods are read back by perf script from
 * the samples' PERIOD field, not from pmusim, and tested with Pearson's
 * chi-square over the D + 1 values, on more than 100,000 draws per seed. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

#define BASE 256
#define BINS 256 /* R in 0..255 */
/* The chi-square distribution with 255 degrees of freedom exceeds 330.5 with
 * probability 0.001 (Wilson-Hilferty: 255 (1 - 2/2295 + 3.0902 sqrt(2/2295))^3). */
#define CHI2_P001 330.5

/* Records phases (41 M instructions) sampling instructions every BASE + R and
 * returns how many samples had each R (bins of width 1 from 0; R beyond
 * nbins - 1 fails the check). */
static long histogram(const char *seed, const char *delta, long *bin, int nbins)
{
	const char *data = tmp_path("jitter.data");
	char *rec[] = {(char *)pmusim(), "record", "-q", "-e", "instructions", "-c", "256", "--delta",
	               (char *)delta, "--seed", (char *)seed, "-o", (char *)data, "--", (char *)wl("phases"),
	               NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, tmp_path("jitter.err")), 0);
	char *script[] = {"perf", "script", "-i", (char *)data, "-F", "period", NULL};
	int st;
	char *text = run_capture(script, &st);
	ck_assert_msg(st == 0 && text, "perf script: exit %d", st);
	memset(bin, 0, (size_t)nbins * sizeof(*bin));
	long n = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		long period = strtol(l, NULL, 10);
		ck_assert_msg(period >= BASE && period - BASE < nbins, "period %ld", period);
		bin[period - BASE]++;
		n++;
	}
	free(text);
	return n;
}

static double chi2(const long *bin, int nbins, long n)
{
	double e = (double)n / nbins, x = 0;
	for (int i = 0; i < nbins; i++)
		x += ((double)bin[i] - e) * ((double)bin[i] - e) / e;
	return x;
}

START_TEST(delta_draws_are_uniform)
{
	static const char *const seeds[] = {"1", "2", "3", "4", "5"};
	long bin[BINS];
	for (int s = 0; s < 5; s++) {
		long n = histogram(seeds[s], "255", bin, BINS);
		double x = chi2(bin, BINS, n);
		long lo = bin[0], hi = bin[0];
		for (int i = 1; i < BINS; i++) {
			lo = bin[i] < lo ? bin[i] : lo;
			hi = bin[i] > hi ? bin[i] : hi;
		}
		printf("check_period_jitter: seed %s: %ld draws of R in 0..255, chi-square %.1f (255 df; "
		       "p = 0.001 at %.1f), bins %ld..%ld\n",
		       seeds[s], n, x, CHI2_P001, lo, hi);
		ck_assert_int_ge(n, 100000);
		ck_assert_msg(x < CHI2_P001, "seed %s: chi-square %.1f", seeds[s], x);
	}
}
END_TEST

/* The test can fail: draws from 0..199 put in 256 bins, and no draws at all. */
START_TEST(non_uniform_draws_fail)
{
	long bin[BINS];
	long n = histogram("1", "199", bin, BINS);
	double x = chi2(bin, BINS, n);
	ck_assert_msg(x > CHI2_P001, "0..199 passed as 0..255: chi-square %.1f", x);
	n = histogram("1", "0", bin, BINS);
	ck_assert_int_eq(bin[0], n);
	ck_assert_msg(chi2(bin, BINS, n) > CHI2_P001, "a constant period passed");
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("period_jitter");
	TCase *tc = tcase_create("period_jitter");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, delta_draws_are_uniform);
	tcase_add_test(tc, non_uniform_draws_fail);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
