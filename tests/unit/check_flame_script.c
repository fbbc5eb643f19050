/* The flame graph as a reader explores it (profiler/flame.h, flame_script.h): the
 * SVG carries its script and controls and stays the same bytes; xmllint parses it;
 * node accepts the script; and under node, in the DOM of tests/unit/flame_dom.js, a
 * click zooms to a box and a search highlights the matching boxes and their share
 * of the samples, with every coordinate worked out by hand below. The node parts
 * are skipped when node is not installed. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profiler/flame.h"
#include "profiler/stackprof.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/stack_fixture.h"
#include "tests/unit/tmp_dir.h"

static char dir[PATH_MAX];
static struct sf_prog prog;
static int built;

static const char *in_dir(const char *name)
{
	static char p[4][PATH_MAX + 64];
	static int n;
	char *s = p[n++ % 4];
	snprintf(s, sizeof(p[0]), "%s/%s", dir, name);
	return s;
}

/* 4 samples: main;mid;rec twice, main;mid, main;other. At 1180 px for 4 samples
 * (295 px each) from x = 10: all and main 1180 wide, mid 885 at 10, rec 590 at 10,
 * other 295 at 895. */
static const char *const stacks[] = {"main;mid;rec", "main;mid;rec", "main;mid", "main;other"};

/* The flame graph of those stacks in dir/f.svg, and its text (caller frees). */
static char *flame(void)
{
	struct perfdata_event ev = sf_event(STACKPROF_EVENT, 1, 1);
	struct perfdata_writer *w = sf_open(in_dir("f.data"), &prog, &ev, 1, NULL);
	ck_assert_ptr_nonnull(w);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, SF_PID, 10, stacks[i], SF_RET_END, 0),
		                 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	struct stackprof_opts o = {-1, 0};
	struct stackprof *sp;
	char msg[256] = "";
	ck_assert_msg(stackprof_read(in_dir("f.data"), &o, &sp, msg, sizeof(msg)) == 0, "%s", msg);
	FILE *f = fopen(in_dir("f.svg"), "w");
	ck_assert_int_eq(flame_svg(f, sp, "x & y", NULL), 0);
	fclose(f);
	stackprof_free(sp);
	FILE *r = fopen(in_dir("f.svg"), "r");
	char *buf = NULL;
	size_t cap = 0;
	ck_assert_int_gt(getdelim(&buf, &cap, 0, r), 0);
	fclose(r);
	return buf;
}

/* Standard output and error of a shell command (caller frees); *status its status. */
static char *sh(const char *cmd, int *status)
{
	char full[PATH_MAX * 2];
	snprintf(full, sizeof(full), "%s 2>&1", cmd);
	FILE *p = popen(full, "r");
	ck_assert_ptr_nonnull(p);
	char *buf = NULL;
	size_t cap = 0;
	if (getdelim(&buf, &cap, 0, p) < 0) {
		free(buf);
		buf = strdup("");
	}
	*status = pclose(p);
	return buf;
}

static int have_node(void)
{
	int status;
	free(sh("node --version", &status));
	return status == 0;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

START_TEST(script_and_controls)
{
	ck_assert_msg(built, "no test program");
	char *a = flame(), *b = flame();
	ck_assert_str_eq(a, b); /* the same bytes */
	ck_assert_int_eq(count(a, "<script type=\"text/ecmascript\"><![CDATA[\n"), 1);
	ck_assert_int_eq(count(a, "]]>"), 1);
	ck_assert_ptr_nonnull(strstr(a, "]]></script>\n</svg>\n"));
	ck_assert_ptr_nonnull(strstr(a, "<text id=\"reset\" "));
	ck_assert_ptr_nonnull(strstr(a, "<text id=\"search\" "));
	ck_assert_ptr_nonnull(strstr(a, "<text id=\"matched\" "));
	ck_assert_int_eq(count(a, "<title>"), 5); /* all, main, mid, rec, other */
	free(a);
	free(b);
}
END_TEST

START_TEST(xmllint_parses_it)
{
	ck_assert_msg(built, "no test program");
	free(flame());
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "xmllint --noout %s", in_dir("f.svg"));
	int status;
	char *out = sh(cmd, &status);
	ck_assert_msg(status == 0 && out[0] == 0, "xmllint: status %d: %s", status, out);
	free(out);
}
END_TEST

START_TEST(node_accepts_the_script)
{
	ck_assert_msg(built, "no test program");
	if (!have_node())
		return;
	char *svg = flame(), *from = strstr(svg, "<![CDATA[\n"), *to = strstr(svg, "]]>");
	ck_assert_ptr_nonnull(from);
	ck_assert_ptr_nonnull(to);
	from += strlen("<![CDATA[\n");
	FILE *f = fopen(in_dir("s.js"), "w");
	fwrite(from, 1, (size_t)(to - from), f);
	fclose(f);
	char cmd[PATH_MAX + 64];
	snprintf(cmd, sizeof(cmd), "node --check %s", in_dir("s.js"));
	int status;
	char *out = sh(cmd, &status);
	ck_assert_msg(status == 0 && out[0] == 0, "node --check: status %d: %s", status, out);
	free(out);
	free(svg);
}
END_TEST

/* name x width display opacity fill label, per box in file order (flame_dom.js) */
static const char want_explore[] =
    "click:mid\n" /* mid fills the width; rec scales by 1180/885; callers faded */
    "all 10.00 1180.00 - 0.5 base all\n"
    "main 10.00 1180.00 - 0.5 base main\n"
    "mid 10.00 1180.00 - 1 base mid\n"
    "rec 10.00 786.67 - 1 base rec\n"
    "other 895.00 295.00 none - base other\n" /* hidden; never faded */
    "matched: -; reset: inline\n"
    "search:^(rec|mi.)$\n" /* mid (3 samples) holds rec: 3 of 4 */
    "all 10.00 1180.00 - 0.5 base all\n"
    "main 10.00 1180.00 - 0.5 base main\n"
    "mid 10.00 1180.00 - 1 hit mid\n"
    "rec 10.00 786.67 - 1 hit rec\n"
    "other 895.00 295.00 none - base other\n" /* hidden; never faded */
    "matched: Matched: 75.00%; reset: inline\n"
    "click:#reset\n"
    "all 10.00 1180.00 - 1 base all\n"
    "main 10.00 1180.00 - 1 base main\n"
    "mid 10.00 885.00 - 1 hit mid\n"
    "rec 10.00 590.00 - 1 hit rec\n"
    "other 895.00 295.00 - 1 base other\n"
    "matched: Matched: 75.00%; reset: none\n"
    "click:#search\n" /* a second click clears the search */
    "all 10.00 1180.00 - 1 base all\n"
    "main 10.00 1180.00 - 1 base main\n"
    "mid 10.00 885.00 - 1 base mid\n"
    "rec 10.00 590.00 - 1 base rec\n"
    "other 895.00 295.00 - 1 base other\n"
    "matched: -; reset: none\n"
    "click:other\n" /* other fills the width, its sibling mid (and rec) hidden */
    "all 10.00 1180.00 - 0.5 base all\n"
    "main 10.00 1180.00 - 0.5 base main\n"
    "mid 10.00 885.00 none 1 base mid\n"
    "rec 10.00 590.00 none 1 base rec\n"
    "other 10.00 1180.00 - 1 base other\n"
    "matched: -; reset: inline\n"
    "search:o|a\n" /* all, main, other: nested matches count once, 100 % */
    "all 10.00 1180.00 - 0.5 hit all\n"
    "main 10.00 1180.00 - 0.5 hit main\n"
    "mid 10.00 885.00 none 1 base mid\n"
    "rec 10.00 590.00 none 1 base rec\n"
    "other 10.00 1180.00 - 1 hit other\n"
    "matched: Matched: 100.00%; reset: inline\n"
    "key:Escape\n" /* both undone */
    "all 10.00 1180.00 - 1 base all\n"
    "main 10.00 1180.00 - 1 base main\n"
    "mid 10.00 885.00 - 1 base mid\n"
    "rec 10.00 590.00 - 1 base rec\n"
    "other 895.00 295.00 - 1 base other\n"
    "matched: -; reset: none\n";

START_TEST(click_zooms_and_search_highlights)
{
	ck_assert_msg(built, "no test program");
	if (!have_node())
		return;
	free(flame());
	char cmd[PATH_MAX * 2];
	snprintf(cmd, sizeof(cmd),
	         "node tests/unit/flame_dom.js %s click:mid 'search:^(rec|mi.)$' 'click:#reset' "
	         "'click:#search' "
	         "click:other 'search:o|a' key:Escape",
	         in_dir("f.svg"));
	int status;
	char *out = sh(cmd, &status);
	ck_assert_msg(status == 0, "flame_dom.js: status %d: %s", status, out);
	ck_assert_str_eq(out, want_explore);
	free(out);
}
END_TEST

int main(void)
{
	tmp_dir_make(dir, sizeof(dir), "check_flame_script");
	built = dir[0] && sf_build(&prog, dir, "prog", 0, 0) == 0;
	Suite *s = suite_create("flame_script");
	TCase *tc = tcase_create("flame_script");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, script_and_controls);
	tcase_add_test(tc, xmllint_parses_it);
	tcase_add_test(tc, node_accepts_the_script);
	tcase_add_test(tc, click_zooms_and_search_highlights);
	suite_add_tcase(s, tc);
	int rc = run_suite(s);
	tmp_dir_remove(dir);
	return rc;
}
