/* The SVG scatter plot (profiler/svg.h) on hand-made edges: one dot per truth
 * edge, the missing edge on the "0" row, the title escaped, the same bytes for
 * the same edges, and an error when the file cannot be written. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "pmu_model/block.h"
#include "profiler/svg.h"
#include "profiler/validate.h"
#include "tests/unit/run_suite.h"

static struct edges *truth, *prof;

static void setup(void)
{
	truth = edges_new();
	prof = edges_new();
	edges_add(truth, 0x1000, 0x1010, BK_COND, 1, 1000);
	edges_add(truth, 0x1000, 0x1002, BK_COND, 0, 10);
	edges_add(truth, 0x1020, 0x2000, BK_CALL, 1, 1);
	edges_add(prof, 0x1000, 0x1010, BK_COND, 1, 100); /* scaled: 100/101 of 1011 */
	edges_add(prof, 0x1000, 0x1002, BK_COND, 0, 1);
	edges_add(prof, 0x3000, 0x3010, BK_JMP, 1, 5);    /* not in the truth */
}

static void teardown(void)
{
	edges_free(truth);
	edges_free(prof);
}

static char *plot(const char *title, int (*in)(const struct edge *), int *rc)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	*rc = svg_scatter(f, title, prof, truth, in);
	fclose(f);
	return buf;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

START_TEST(one_dot_per_truth_edge)
{
	int rc;
	char *s = plot("loops <cbt> & more\nsecond line", NULL, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_msg(strstr(s, "<svg") && strstr(s, "</svg>"), "not an SVG document");
	ck_assert_int_eq(count(s, "r=\"2.5\""), 3);       /* the data dots */
	ck_assert_ptr_nonnull(strstr(s, "loops &lt;cbt&gt; &amp; more"));
	ck_assert_ptr_nonnull(strstr(s, "second line"));
	ck_assert_ptr_null(strstr(s, "<cbt>"));
	char *again = plot("loops <cbt> & more\nsecond line", NULL, &rc);
	ck_assert_str_eq(s, again);
	free(s);
	free(again);
	/* only the call edge */
	s = plot("calls", edge_is_call, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(count(s, "r=\"2.5\""), 1);
	free(s);
}
END_TEST

START_TEST(write_errors)
{
	FILE *f = fopen("/dev/full", "w");
	ck_assert_ptr_nonnull(f);
	setvbuf(f, NULL, _IONBF, 0);
	ck_assert_int_eq(svg_scatter(f, "t", prof, truth, NULL), PMUSIM_ERR_IO);
	fclose(f);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("svg");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, one_dot_per_truth_edge);
	tcase_add_test(tc, write_errors);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
