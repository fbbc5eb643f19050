/* The REP unit end to end: `pmusim record --rep MODE` on workloads/rep and
 * workloads/rep_faults (counts known by construction: see their comments; faults
 * left by siglongjmp and fixed by the handler, 0x67, every width) and on a dynamic
 * program whose libc uses REP, then `pmusim report --rep --format json`, compared
 * site by site with the truth (--truth-json), whose REP figures come from a register
 * reference of their own (sim/rep_ref.c), not from the blocks the unit reads: zero
 * mismatches in executions, requested and actual counts and REPs ended by their
 * condition, in every mode, with a 3-entry buffer that fills over and over, and with
 * interrupts of the PMU landing all over the REPs. Real perf reads the recordings,
 * and every taken branch --rep-tbe recorded. (The CPU itself: check_rep_ref.) */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

struct rep_case {
	int line;
	const char *mode;
	const char *extra[6];
};

static const struct rep_case cases[] = {
	{__LINE__, "last", {0}},
	{__LINE__, "first", {0}},
	{__LINE__, "counter", {0}},
	{__LINE__, "buffer", {"--rep-buffer", "3", "--rep-tbe", 0}},
	{__LINE__, "membuffer", {"--rep-buffer", "1000", 0}},
	{__LINE__, "patch", {0}},
	/* single-step: a record per iteration, as many as the truth's iterations */
	{__LINE__, "last", {"--rep-sse", 0}},
	{__LINE__, "buffer", {"--rep-buffer", "7", "--rep-sse", "--rep-tbe", 0}},
	/* the PMU interrupts every 7 taken branches and every 13 REP iterations */
	{__LINE__, "last", {"-e", "br_inst_retired.near_taken,rep_iterations", "-c", "13", "-b", 0}},
};

static void check_against_truth(const struct rep_case *c, const char *prog, char *const *args)
{
	const char *data = tmp_path("rep.data"), *json = tmp_path("rep.json"), *err = tmp_path("rep.err");
	char *argv[32] = {(char *)pmusim(), "record", "--rep", (char *)c->mode, "-o", (char *)data,
			  "--truth-json", (char *)json};
	int k = 8;
	for (int i = 0; c->extra[i]; i++)
		argv[k++] = (char *)c->extra[i];
	argv[k++] = "--";
	argv[k++] = (char *)prog;
	for (int i = 0; args && args[i]; i++)
		argv[k++] = args[i];
	ck_assert_msg(run_cmd(argv, NULL, "/dev/null", err) == 0, "line %d: record failed", c->line);
	int st;
	char *r[] = {(char *)pmusim(), "report", "-i", (char *)data, "--rep", "--format", "json", NULL};
	char *out = run_capture(r, &st);
	ck_assert_msg(st == 0 && out, "line %d: report --rep failed", c->line);
	struct rep_site *t, *g;
	size_t nt, ng;
	ck_assert_int_eq(rep_sites_of_truth(json, &t, &nt), 0);
	ck_assert_msg(rep_sites_of_report(out, &g, &ng) == 0, "line %d: report --rep: %s", c->line, out);
	ck_assert_msg(nt >= 1 && nt == ng, "line %d: %zu REP sites in the truth, %zu in the report", c->line, nt, ng);
	/* first and patch see a REP before it runs: requested only */
	int first = strcmp(c->mode, "first") == 0 || strcmp(c->mode, "patch") == 0;
	for (size_t i = 0; i < nt; i++) {
		ck_assert_msg(t[i].addr == g[i].addr && t[i].executions == g[i].executions &&
			      t[i].requested == g[i].requested, "line %d: site %#" PRIx64 ": %" PRIu64 " executions, %" PRIu64 " requested "
			      "in the truth; report %#" PRIx64 " %" PRIu64 " %" PRIu64, c->line, t[i].addr, t[i].executions,
			      t[i].requested, g[i].addr, g[i].executions, g[i].requested);
		ck_assert_int_eq(g[i].has_actual, !first);
		int sse = 0;
		for (int e = 0; c->extra[e]; e++)
			sse |= strcmp(c->extra[e], "--rep-sse") == 0;
		ck_assert_msg(g[i].steps == (sse ? t[i].actual : 0), "line %d: site %#" PRIx64 ": %" PRIu64 " single steps, %" PRIu64 " iterations",
			      c->line, t[i].addr, g[i].steps, t[i].actual);
		if (!first)
			ck_assert_msg(t[i].actual == g[i].actual && t[i].cond == g[i].cond,
				      "line %d: site %#" PRIx64 ": actual %" PRIu64 ", by condition %" PRIu64 " in the truth; report %" PRIu64 " %" PRIu64,
				      c->line, t[i].addr, t[i].actual, t[i].cond, g[i].actual, g[i].cond);
	}
	free(t), free(g);
	free(out);
	/* pmusim validate --rep agrees: no mismatch, exit 0 */
	char *v[] = {(char *)pmusim(), "validate", "-i", (char *)data, "--rep", "--truth", (char *)json,
		     "--format", "json", NULL};
	out = run_capture(v, &st);
	ck_assert_msg(st == 0 && out && strstr(out, "\"mismatches\": 0"), "line %d: validate --rep: %s", c->line, out);
	free(out);
	char *p[] = {"perf", "script", "-i", (char *)data, "-F", "event,ip", NULL};
	out = run_capture(p, &st);
	ck_assert_msg(st == 0 && out && strstr(out, "pmusim_rep"), "line %d: perf script shows no REP samples", c->line);
	free(out);
}

START_TEST(rep_workload_matches_truth)
{
	check_against_truth(&cases[_i], wl("rep"), NULL);
}
END_TEST

START_TEST(rep_faults_matches_truth)
{
	check_against_truth(&cases[_i], wl("rep_faults"), NULL);
}
END_TEST

/* Debian's sort: ld.so and libc.so.6 use REP string instructions; the sites
 * are named in the libraries. */
START_TEST(dynamic_program_matches_truth)
{
	const char *in = tmp_path("lines.txt");
	FILE *f = fopen(in, "w");
	for (int i = 0; i < 2000; i++)
		fprintf(f, "line %d of the input\n", (i * 7919) % 2003);
	fclose(f);
	char *args[] = {(char *)in, NULL};
	check_against_truth(&cases[0], "/usr/bin/sort", args);
	char *r[] = {(char *)pmusim(), "report", "-i", (char *)tmp_path("rep.data"), "--rep", NULL};
	int st;
	char *out = run_capture(r, &st);
	ck_assert_msg(st == 0 && out && strstr(out, "rep stos") && strstr(out, "# REP sites:"), "%.500s", out);
	free(out);
}
END_TEST

/* The patching method changes nothing the program does: the same output and
 * exit status as natively, and the exact truth of a run without patches, edge
 * for edge (the INT3s never retire). */
START_TEST(patching_leaves_the_program_unchanged)
{
	const char *data = tmp_path("p.data"), *t1 = tmp_path("patched.fdata"), *t2 = tmp_path("plain.fdata");
	const char *o1 = tmp_path("patched.out"), *o2 = tmp_path("native.out"), *o3 = tmp_path("plain.out");
	char *r[] = {(char *)pmusim(), "record", "--rep", "patch", "-o", (char *)data, "--truth", (char *)t1, "--",
		     (char *)wl("rep"), NULL};
	char *u[] = {(char *)pmusim(), "run", "--truth", (char *)t2, "--", (char *)wl("rep"), NULL};
	char *n[] = {(char *)wl("rep"), NULL};
	ck_assert_int_eq(run_cmd(r, NULL, o1, NULL), 0);
	/* both pmusim runs write to a regular file: glibc asks isatty() (tcgetattr) only
	 * when standard output is a character device, which changes the truth */
	ck_assert_int_eq(run_cmd(u, NULL, o3, NULL), 0);
	ck_assert_int_eq(run_cmd(n, NULL, o2, NULL), 0);
	size_t l1, l2, m1, m2;
	char *a = slurp(t1, &l1), *b = slurp(t2, &l2), *x = slurp(o1, &m1), *y = slurp(o2, &m2);
	ck_assert_msg(a && b && l1 > 100 && l1 == l2 && memcmp(a, b, l1) == 0, "the patched run's truth differs");
	ck_assert_msg(x && y && m1 == m2 && memcmp(x, y, m1) == 0, "the patched run printed otherwise: %s", x);
	free(a), free(b), free(x), free(y);
}
END_TEST

/* validate --rep against the truth of another run of the same program (7 rounds
 * instead of 50) finds the differences (exit 1); the truth of another program is
 * refused before any comparison (check_report_cli). */
START_TEST(validate_finds_mismatches)
{
	const char *d1 = tmp_path("a.data"), *j2 = tmp_path("b.json");
	char *r[] = {(char *)pmusim(), "record", "--rep", "last", "-o", (char *)d1, "--", (char *)wl("rep"), NULL};
	char *t[] = {(char *)pmusim(), "run", "--truth-json", (char *)j2, "--", (char *)wl("rep"), "7", NULL};
	ck_assert_int_eq(run_cmd(r, NULL, "/dev/null", NULL), 0);
	ck_assert_int_eq(run_cmd(t, NULL, "/dev/null", NULL), 0);
	char *v[] = {(char *)pmusim(), "validate", "-i", (char *)d1, "--rep", "--truth", (char *)j2, NULL};
	ck_assert_int_eq(run_cmd(v, NULL, tmp_path("v.out"), tmp_path("v.err")), 1);
	char *out = slurp(tmp_path("v.out"), NULL), *verr = slurp(tmp_path("v.err"), NULL);
	ck_assert_msg(out && strstr(out, "mismatches: ") && !strstr(out, "mismatches: 0"), "%s", out);
	/* the failed check says so on standard error, one line */
	ck_assert_msg(verr && strncmp(verr, "FAIL: ", 6) == 0 && strstr(verr, " REP sites differ from the truth") &&
			      strchr(verr, '\n') == verr + strlen(verr) - 1, "%s", verr ? verr : "");
	free(out);
	free(verr);
	/* the truth of another program: refused, one line, exit 2 */
	const char *j3 = tmp_path("c.json"), *e3 = tmp_path("c.err");
	char *u[] = {(char *)pmusim(), "run", "--truth-json", (char *)j3, "--", (char *)wl("strings"), NULL};
	ck_assert_int_eq(run_cmd(u, NULL, "/dev/null", NULL), 0);
	char *w[] = {(char *)pmusim(), "validate", "-i", (char *)d1, "--rep", "--truth", (char *)j3, NULL};
	ck_assert_int_eq(run_cmd(w, NULL, "/dev/null", e3), 2);
	char *err = slurp(e3, NULL);
	ck_assert_msg(err && strstr(err, "did not run (the truth of another program or build)\n") &&
			      strchr(err, '\n') == err + strlen(err) - 1, "%s", err);
	free(err);
}
END_TEST

/* An execution recorded in parts is one execution: workloads/rep_faults' copy_left
 * runs 300 (left by siglongjmp after 100), 50 and 7 bytes, copy_resumed 300 (a
 * handler returns into it after 100) and 20, three rounds each (its comment); their
 * smallest and largest executions, as the report computes them from the records. */
START_TEST(execution_extremes_span_parts)
{
	static const struct {
		const char *sym;
		const char *mode;
		int min, max;
	} want[] = {
	    {"copy_left+", "last", 7, 100}, {"copy_resumed+", "last", 20, 300},
	    {"copy_left+", "buffer", 7, 100}, {"copy_resumed+", "buffer", 20, 300},
	};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		const char *data = tmp_path("x.data");
		char *r[] = {(char *)pmusim(), "record", "--rep", (char *)want[i].mode, "-o", (char *)data, "--",
			     (char *)wl("rep_faults"), NULL};
		ck_assert_int_eq(run_cmd(r, NULL, "/dev/null", NULL), 0);
		char *q[] = {(char *)pmusim(), "report", "-i", (char *)data, "--rep", "--format", "json", NULL};
		int st, min = -1, max = -1;
		char *out = run_capture(q, &st);
		const char *p = out ? strstr(out, want[i].sym) : NULL;
		ck_assert_msg(st == 0 && p, "no %s in %s", want[i].sym, out);
		ck_assert_int_eq(sscanf(strstr(p, "\"min\""), "\"min\": %d", &min), 1);
		ck_assert_int_eq(sscanf(strstr(p, "\"max\""), "\"max\": %d", &max), 1);
		ck_assert_msg(min == want[i].min && max == want[i].max, "%s (%s): min %d, max %d", want[i].sym,
			      want[i].mode, min, max);
		free(out);
	}
}
END_TEST

/* Every entry of perf script -F brstack's lines ("FROM/TO/M/P/A/CYCLES" tokens). */
static uint64_t brstack_entries(const char *text)
{
	uint64_t n = 0;
	for (const char *p = text; p && *p;) {
		p += strspn(p, " \t\n");
		size_t len = strcspn(p, " \t\n");
		n += len > 2 && strncmp(p, "0x", 2) == 0 && memchr(p, '/', len) != NULL;
		p += len;
	}
	return n;
}

/* --rep-tbe: every taken branch the program made reaches the file once, as perf reads
 * it back: those between REP records (at most REP_MAX_BRANCHES, 2048, per sample: loops
 * has 700,000 and a few REPs) and those after the last REP (samples of their own). The
 * count is perf's, the taken total the truth's. */
START_TEST(tbe_records_every_taken_branch)
{
	static const char *const progs[] = {"rep", "loops"};
	static const char *const entries[] = {"3", "64"};
	for (int i = 0; i < 2; i++) {
		const char *data = tmp_path("tbe.data"), *json = tmp_path("tbe.json");
		char *r[] = {(char *)pmusim(), "record", "--rep", "buffer", "--rep-buffer", (char *)entries[i], "--rep-tbe",
			     "-o", (char *)data, "--truth-json", (char *)json, "--", (char *)wl(progs[i]), NULL};
		ck_assert_int_eq(run_cmd(r, NULL, "/dev/null", NULL), 0);
		struct truth_totals t;
		ck_assert_int_eq(truth_totals(json, &t), 0);
		int st;
		char *p[] = {"perf", "script", "-i", (char *)data, "-F", "brstack", NULL};
		char *out = run_capture(p, &st);
		ck_assert_msg(st == 0 && out, "perf script failed on %s", progs[i]);
		ck_assert_uint_gt(t.taken, 1000);
		ck_assert_msg(brstack_entries(out) == t.taken, "%s: %" PRIu64 " branch records in the file, %" PRIu64
			      " taken branches in the truth", progs[i], brstack_entries(out), t.taken);
		free(out);
	}
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("rep");
	TCase *tc = tcase_create("rep");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, rep_workload_matches_truth, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_loop_test(tc, rep_faults_matches_truth, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, dynamic_program_matches_truth);
	tcase_add_test(tc, validate_finds_mismatches);
	tcase_add_test(tc, tbe_records_every_taken_branch);
	tcase_add_test(tc, execution_extremes_span_parts);
	tcase_add_test(tc, patching_leaves_the_program_unchanged);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
