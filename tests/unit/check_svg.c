/* The SVG scatter plot (profiler/svg.h) on hand-made edges: one dot per truth
 * edge, the missing edge on the "0" row, the title escaped, the same bytes for
 * the same edges, a tooltip per dot naming the edge with the functions of a
 * symbol table (this test program's own), a document xmllint parses, and an
 * error when the file cannot be written. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/symtab.h"
#include "pmu_model/block.h"
#include "profiler/svg.h"
#include "profiler/validate.h"
#include "tests/unit/run_suite.h"

static struct edges *truth, *prof;
static const struct symtab *syms; /* for plot(): NULL, or names */

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
	*rc = svg_scatter(f, title, prof, truth, in, syms);
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
	ck_assert_int_eq(svg_scatter(f, "t", prof, truth, NULL, NULL), PMUSIM_ERR_IO);
	fclose(f);
}
END_TEST

START_TEST(dots_name_their_edges)
{
	int rc;
	char *s = plot("t", NULL, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_int_eq(count(s, "<title>"), 3); /* one per dot */
	/* 0x1000 -> 0x1010: 1000 exact; profile 100 of its 106, scaled to the truth's 1011 */
	ck_assert_ptr_nonnull(strstr(s,
	                             "<title>0x1000 -&gt; 0x1010 (conditional, taken): exact 1000, "
	                             "profile 953.77</title></circle>"));
	ck_assert_ptr_nonnull(
	    strstr(s, "<title>0x1020 -&gt; 0x2000 (call): exact 1, not in the profile</title>"));
	free(s);
	/* with names: the edges moved into this program's main */
	struct symtab *st;
	ck_assert_int_eq(symtab_load("/proc/self/exe", 0, &st), 0);
	const struct sym *m = NULL;
	for (size_t i = 0; i < symtab_count(st) && !m; i++)
		if (strcmp(symtab_at(st, i)->name, "main") == 0)
			m = symtab_at(st, i);
	ck_assert_ptr_nonnull(m);
	ck_assert_uint_ge(m->size, 0x10);
	edges_free(truth);
	truth = edges_new();
	edges_add(truth, m->addr + 4, m->addr + 0xc, BK_COND, 1, 7);
	edges_add(truth, m->addr + 0xc, 0x10, BK_JMP, 1, 2);
	syms = st;
	s = plot("t", NULL, &rc);
	ck_assert_int_eq(rc, 0);
	ck_assert_ptr_nonnull(strstr(
	    s, "<title>main+0x4 -&gt; main+0xc (conditional, taken): exact 7, not in the profile"));
	ck_assert_ptr_nonnull(
	    strstr(s, "<title>main+0xc -&gt; 0x10 (jump or return): exact 2, not in the profile"));
	syms = NULL;
	symtab_free(st);
	free(s);
}
END_TEST

/* xmllint (libxml2-utils) parses the document: well-formed XML, nothing printed. */
START_TEST(well_formed_xml)
{
	int rc;
	char *s = plot("loops <cbt> & \"more\"\nsecond", NULL, &rc),
	     path[] = "/tmp/check_svg.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs(s, f);
	fclose(f);
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s 2>&1", path);
	FILE *p = popen(cmd, "r");
	char out[512] = "";
	size_t n = fread(out, 1, sizeof(out) - 1, p);
	out[n] = 0;
	int status = pclose(p);
	unlink(path);
	ck_assert_msg(status == 0 && n == 0, "xmllint: status %d: %s", status, out);
	free(s);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("svg");
	TCase *tc = tcase_create("svg");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, one_dot_per_truth_edge);
	tcase_add_test(tc, write_errors);
	tcase_add_test(tc, dots_name_their_edges);
	tcase_add_test(tc, well_formed_xml);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
