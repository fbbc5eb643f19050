/* Why the CPI method draws its cycle period afresh: workloads/asm_resonance
 * runs a loop of exactly 8 cycles (the timing model's) split 2 + 6 between
 * part_a and part_b. Sampled with a period that is a multiple of 8, the
 * cycles counter overflows at the same place of every iteration, so the
 * sampled share of part_a is 0 % or 100 % where the truth says 25 %; with
 * the period P + R, R uniform in 0..255 (--delta 255), it is within a point
 * of the truth at more than 20,000 samples, on every seed. The truth is the
 * truth JSON's cycles per function; the samples are read by perf script. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/stack_ref.h"
#include "tests/unit/run_suite.h"

#define ITERATIONS 3000000 /* the workload's FACTS */

/* A function's "cycles" in the truth JSON's "functions". */
static uint64_t function_cycles(const char *json, const char *name)
{
	char key[64];
	snprintf(key, sizeof(key), "{\"name\": \"%s\",", name);
	const char *p = strstr(json, key), *c = p ? strstr(p, "\"cycles\": ") : NULL;
	ck_assert_msg(c && c < strchr(p, '}'), "no cycles for %s in the truth", name);
	return strtoull(c + 10, NULL, 10);
}

/* Records cycles every PERIOD (+ a random 0..DELTA) and counts the samples in
 * part_a and in part_b; returns part_a's share of those. */
static double sampled_share(const char *period, const char *delta, const char *seed, long *n)
{
	const char *prog = wl("asm_resonance"), *data = tmp_path("res.data");
	char *rec[] = {(char *)pmusim(), "record", "-q", "-e", "cycles", "-c", (char *)period, "--delta",
	               (char *)delta, "--seed", (char *)seed, "-o", (char *)data, "--", (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, tmp_path("res.err")), 0);
	uint64_t alo, ahi, blo, bhi;
	ck_assert(symbol_range(prog, "part_a", &alo, &ahi) && symbol_range(prog, "part_b", &blo, &bhi));
	char *script[] = {"perf", "script", "-i", (char *)data, "-F", "ip", NULL};
	int st;
	char *text = run_capture(script, &st);
	ck_assert(st == 0 && text);
	long a = 0, b = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		uint64_t ip = strtoull(l, NULL, 16);
		a += ip >= alo && ip < ahi;
		b += ip >= blo && ip < bhi;
	}
	free(text);
	*n = a + b;
	ck_assert_int_gt(*n, 0);
	return (double)a / (double)(a + b);
}

START_TEST(fixed_period_resonates_random_period_does_not)
{
	/* the truth: part_a is 2 of the loop's 8 cycles */
	const char *json = tmp_path("res.json");
	char *run[] = {(char *)pmusim(), "run", "--truth-json", (char *)json, "--", (char *)wl("asm_resonance"),
	               NULL};
	ck_assert_int_eq(run_cmd(run, NULL, NULL, NULL), 0);
	char *t = slurp(json, NULL);
	ck_assert_ptr_nonnull(t);
	uint64_t ca = function_cycles(t, "part_a"), cb = function_cycles(t, "part_b");
	free(t);
	ck_assert_uint_eq(ca, 2ull * ITERATIONS);
	ck_assert_uint_ge(cb, 6ull * ITERATIONS);
	ck_assert_uint_lt(cb, 6ull * ITERATIONS + 1000); /* the loop's two mispredictions */
	double truth = (double)ca / (double)(ca + cb);
	long n;
	/* a period that is a multiple of 8: every sample at the same place */
	static const char *const fixed[] = {"800", "8000", "1024"};
	for (int i = 0; i < 3; i++) {
		double s = sampled_share(fixed[i], "0", "1", &n);
		printf("check_resonance: -c %s: part_a %.2f %% of %ld samples (truth %.4f %%)\n", fixed[i], 100 * s,
		       n, 100 * truth);
		ck_assert_msg(s == 0 || s == 1, "-c %s: part_a's share %.4f", fixed[i], s);
	}
	/* P + R, R in 0..255 drawn afresh: the truth within a point */
	static const char *const seeds[] = {"1", "2", "3"};
	for (int i = 0; i < 3; i++) {
		double s = sampled_share("800", "255", seeds[i], &n);
		double sd = sqrt(truth * (1 - truth) / (double)n);
		printf("check_resonance: -c 800 --delta 255 --seed %s: part_a %.2f %% of %ld samples (truth %.4f "
		       "%%; binomial sd %.2f points)\n",
		       seeds[i], 100 * s, n, 100 * truth, 100 * sd);
		ck_assert_int_ge(n, 20000);
		ck_assert_msg(fabs(s - truth) <= 0.01, "seed %s: %.4f against %.4f", seeds[i], s, truth);
	}
}
END_TEST

/* part_a's share of the loop's instructions by the CPI method's instruction
 * frequency (pmusim report --cpi: every instruction of the LBR ranges of the
 * taken-branch samples, weighted period/(entries-1)). */
static double lbr_insn_share(const char *period, const char *delta, const char *seed, long *samples)
{
	const char *data = tmp_path("lbr.data");
	char ev[64];
	snprintf(ev, sizeof(ev), "br_inst_retired.near_taken/period=%s/", period);
	char *rec[] = {(char *)pmusim(), "record", "-q", "-e", ev, "-b", "--lbr-depth", "4", "--delta", (char *)delta,
	               "--seed", (char *)seed, "-o", (char *)data, "--", (char *)wl("asm_resonance"), NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, tmp_path("lbr.err")), 0);
	char *rep[] = {(char *)pmusim(), "report", "--cpi", "--cycles-from", "lbr", "--format", "json", "-i",
		       (char *)data, NULL};
	int st;
	char *text = run_capture(rep, &st);
	ck_assert(st == 0 && text);
	double a = 0, b = 0;
	const char *p = strstr(text, "\"lbr_samples\": ");
	ck_assert_ptr_nonnull(p);
	*samples = strtol(p + 15, NULL, 10);
	for (p = strstr(text, "{\"start\""); p; p = strstr(p + 1, "{\"start\"")) {
		const char *in = strstr(p, "\"instructions\": ");
		double v = strtod(in + 16, NULL);
		if (strncmp(strstr(p, "\"name\": ") + 8, "\"part_a\"", 8) == 0)
			a = v;
		else if (strncmp(strstr(p, "\"name\": ") + 8, "\"part_b\"", 8) == 0)
			b = v;
	}
	free(text);
	ck_assert(a > 0 && b > 0);
	return a / (a + b);
}

/* The same resonance in the instruction frequencies: the loop retires two
 * taken branches per iteration (jmp part_b, jnz part_a), so with an even
 * period every sample is taken at the same one of them and, with an LBR of 4
 * entries, holds the same three ranges: two of one part, one of the other,
 * where the truth is one each per iteration (part_a 2 of the loop's 11
 * instructions). With the period drawn afresh the phase is random. */
START_TEST(lbr_trigger_resonates_random_period_does_not)
{
	double truth = 2.0 / 11.0;
	long n;
	double s = lbr_insn_share("128", "0", "1", &n);
	printf("check_resonance: LBR, period 128: part_a %.2f %% of the instructions in %ld samples (truth %.4f %%)\n",
	       100 * s, n, 100 * truth);
	ck_assert_msg(fabs(s - truth) > 0.05, "period 128: part_a's share %.4f is near the truth %.4f", s, truth);
	static const char *const seeds[] = {"1", "2", "3"};
	for (int i = 0; i < 3; i++) {
		s = lbr_insn_share("128", "255", seeds[i], &n);
		printf("check_resonance: LBR, period 128 --delta 255 --seed %s: part_a %.2f %% of the instructions in %ld "
		       "samples (truth %.4f %%)\n",
		       seeds[i], 100 * s, n, 100 * truth);
		ck_assert_int_ge(n, 20000);
		ck_assert_msg(fabs(s - truth) <= 0.005, "seed %s: %.4f against %.4f", seeds[i], s, truth);
	}
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("resonance");
	TCase *tc = tcase_create("resonance");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, fixed_period_resonates_random_period_does_not);
	tcase_add_test(tc, lbr_trigger_resonates_random_period_does_not);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
