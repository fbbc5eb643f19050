/* End-to-end tests of the profiling pipeline (pmusim report / validate) on
 * pmusim's own recordings, compared with the exact truth of the same run:
 * - the CBT method meets 99 % edge overlap on every workload (taken-branch
 *   trigger), and 99.5 % with every other trigger at 100,000 samples or more;
 * - the program of the real Skylake recording, recorded with cycles as the
 *   real machine did, meets 99 %;
 * - the call-graph variant on call-only recordings meets 99 % call overlap;
 * - the baselines are what they are: raw taken-branch counting lacks the
 *   fall-through edges, so it stays below the CBT method;
 * - validate works as a CI gate (exit 0/1/2), report writes text, JSON and fdata;
 * - the real Skylake recording: at least 99 % of its samples with branch
 *   records are consistent with its binary. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

static double json_num(const char *text, const char *key)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\": ", key);
	const char *p = text ? strstr(text, k) : NULL;
	ck_assert_msg(p, "no %s in %s", key, text ? text : "(nothing)");
	return strtod(p + strlen(k), NULL);
}

/* Records prog with event/period (delta period/2), LBR filter; truth alongside. */
static void record(const char *prog, const char *event, const char *period, const char *filter,
		   const char *data, const char *truth)
{
	char delta[32];
	snprintf(delta, sizeof(delta), "%ld", strtol(period, NULL, 10) / 2);
	/* --clear-env: the host's environment would change the programs' start-up code */
	char *a[] = {(char *)pmusim(), "record", "-e", (char *)event, "-c", (char *)period, "--delta", delta,
		     "-j", (char *)filter, "--seed", "1", "--clear-env", "-o", (char *)data, "--truth", (char *)truth,
		     "--", (char *)prog, NULL};
	if (strcmp(delta, "0") == 0) /* no delta with a period of 1 */
		memmove(&a[6], &a[8], 12 * sizeof(char *));
	int st = run_cmd(a, NULL, NULL, NULL);
	ck_assert_msg(st != 2 && st < 128, "pmusim record failed on %s (%d)", prog, st);
}

static char *validate(const char *data, const char *truth, const char *method, const char *min, int *status)
{
	char *a[] = {(char *)pmusim(), "validate", "-i", (char *)data, "--truth", (char *)truth, "--method",
		     (char *)method, "--min-overlap", (char *)min, "--format", "json", NULL};
	return run_capture(a, status);
}

static const struct {
	int line;
	const char *prog, *period;
	double min;
} cbt_rows[] = {
	{__LINE__, "loops", "140", 0.99},      {__LINE__, "switch", "40", 0.99},
	{__LINE__, "recursion", "17", 0.99},   {__LINE__, "indirect", "7", 0.99},
	{__LINE__, "pie_hello", "2", 0.99},    {__LINE__, "seeded", "2", 0.985},
	/* programs of 1,000 to 2,000 taken branches in all: the first and last 31
	 * taken branches sit in fewer full windows than the rest, which costs 1 to
	 * 2 % (docs/results/uniformity.md, "Every taken branch sampled") */
	{__LINE__, "strings", "2", 0.975},     {__LINE__, "syscalls", "2", 0.975},
	{__LINE__, "args_env", "2", 0.975},    {__LINE__, "exit_code", "2", 0.975},
	{__LINE__, "musl_hello", "1", 0.975},
};

START_TEST(cbt_meets_overlap_on_every_workload)
{
	int k = e2e_row(_i);
	const char *data = tmp_path("cbt.data"), *truth = tmp_path("cbt.fdata");
	record(wl(cbt_rows[k].prog), "br_inst_retired.near_taken", cbt_rows[k].period, "any", data, truth);
	char min[16];
	snprintf(min, sizeof(min), "%.2f", cbt_rows[k].min);
	int st;
	char *out = validate(data, truth, "cbt", min, &st);
	double ov = json_num(out, "overlap_edges");
	ck_assert_msg(st == 0 && ov >= cbt_rows[k].min, "row at line %d (%s): overlap %.4f, status %d",
		      cbt_rows[k].line, cbt_rows[k].prog, ov, st);
	/* the first samples of a program may come before the LBR holds a full window */
	ck_assert_msg(json_num(out, "samples_dropped") <= 0.01 * json_num(out, "samples"), "%s: samples dropped: %s",
		      cbt_rows[k].prog, out);
	ck_assert_double_ge(json_num(out, "samples"), 400);
	free(out);
}
END_TEST

/* Every trigger pmusim offers, at 100,000 samples or more: the CBT profile
 * meets 99.5 % edge overlap with the exact truth of the same run, and beats
 * the ranges baseline (every LBR range once per sample) on the same recording.
 * Measured (seed 1): loops 99.97 cycles, 99.88 instructions, 99.99 branches,
 * 99.99 near_taken, 99.99 cond, 99.97 cond_taken, 99.90 near_call, 99.90
 * near_return; switch 150000 (one jump-table jump per call) 99.80 indirect;
 * ranges 98.6-99.6. */
static const struct {
	int line;
	const char *prog, *arg, *event, *period;
} trig_rows[] = {
	{__LINE__, "loops", NULL, "cycles", "8"},
	{__LINE__, "loops", NULL, "instructions", "16"},
	{__LINE__, "loops", NULL, "branches", "6"},
	{__LINE__, "loops", NULL, "br_inst_retired.near_taken", "5"},
	{__LINE__, "loops", NULL, "br_inst_retired.cond", "3"},
	{__LINE__, "loops", NULL, "br_inst_retired.cond_taken", "2"},
	{__LINE__, "loops", NULL, "br_inst_retired.near_call", "1"},
	{__LINE__, "loops", NULL, "br_inst_retired.near_return", "1"},
	{__LINE__, "switch", "150000", "br_inst_retired.indirect", "1"},
};

START_TEST(cbt_with_every_trigger)
{
	int k = e2e_row(_i);
	const char *data = tmp_path("trig.data"), *truth = tmp_path("trig.fdata");
	long c = strtol(trig_rows[k].period, NULL, 10);
	char delta[32];
	snprintf(delta, sizeof(delta), "%ld", c / 2);
	char *a[] = {(char *)pmusim(), "record", "-e", (char *)trig_rows[k].event, "-c", (char *)trig_rows[k].period,
		     "-b", "--seed", "1", "--clear-env", "-o", (char *)data, "--truth", (char *)truth, "--",
		     (char *)wl(trig_rows[k].prog), (char *)trig_rows[k].arg, NULL, NULL, NULL};
	if (c > 1) { /* --delta c/2 before the program */
		memmove(&a[9], &a[7], 11 * sizeof(char *));
		a[7] = "--delta";
		a[8] = delta;
	}
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL), 0);
	int st;
	char *out = validate(data, truth, "cbt", "0.995", &st);
	ck_assert_msg(st == 0, "row at line %d (%s): %s", trig_rows[k].line, trig_rows[k].event, out);
	ck_assert_msg(json_num(out, "samples_used") >= 100000, "row at line %d: %s", trig_rows[k].line, out);
	ck_assert_double_eq(json_num(out, "samples_truncated"), 0);
	ck_assert_double_eq(json_num(out, "overflow_estimated"), 0);
	double cbt = json_num(out, "overlap_edges");
	free(out);
	out = validate(data, truth, "ranges", "0", &st);
	ck_assert_msg(json_num(out, "overlap_edges") < cbt, "row at line %d: ranges %s, cbt %.6f", trig_rows[k].line,
		      out, cbt);
	free(out);
}
END_TEST

/* The program of the real Skylake recording, recorded by pmusim as the real
 * machine recorded it (cycles, every taken branch, 32 entries): its CBT profile
 * meets 99 % against the exact truth of the same run, far above the window
 * anchored at the newest LBR entry that pmusim used before (94.4 % on the whole
 * run); 300 M instructions of it, 27,464 samples, 99.91 % (ranges: 99.27 %).
 * The real recording's own figure against the whole run's truth is in
 * docs/results/real-vs-sim.md (make real-vs-sim). */
START_TEST(cycles_trigger_on_the_real_recordings_program)
{
	const char *sh = shared_dir();
	char bin[512];
	snprintf(bin, sizeof(bin), "%s/fixtures/real-lbr/propeller_sample_1.bin", sh ? sh : "../shared");
	const char *data = tmp_path("real.data"), *truth = tmp_path("real.fdata");
	char *a[] = {(char *)pmusim(), "record", "-e", "cycles", "-c", "20011", "--delta", "2000", "-b",
		     "--lbr-depth", "32", "--seed", "1", "--max-insns", "300000000", "-o", (char *)data, "--truth",
		     (char *)truth, "--", bin, NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL), 124); /* stopped by --max-insns */
	int st;
	char *out = validate(data, truth, "cbt", "0.99", &st);
	ck_assert_msg(st == 0, "%s", out);
	ck_assert_double_ge(json_num(out, "samples_used"), 20000);
	ck_assert_double_eq(json_num(out, "samples_truncated"), 0);
	double cbt = json_num(out, "overlap_edges");
	free(out);
	out = validate(data, truth, "ranges", "0", &st);
	ck_assert_double_lt(json_num(out, "overlap_edges"), cbt);
	free(out);
}
END_TEST

/* Triggers that count one kind of branch: the window is cut in units of that
 * event. workloads/phases runs a conditional-only phase, then one of calls and
 * returns around a conditional: a window of N branches of any kind (the old rule)
 * covered the phases unequally (80.5 % under cond, 79.7 % under cond_taken at
 * -c 1009); in units of the event it is 99.97 % and 99.92 % here (31,122 and
 * 29,917 samples), and the ranges baseline (79.7 %, 78.9 %) stays far below. */
static const struct {
	int line;
	const char *event, *period;
} unit_rows[] = {
	{__LINE__, "br_inst_retired.cond", "251"},
	{__LINE__, "br_inst_retired.cond_taken", "211"},
};

START_TEST(cbt_window_in_units_of_the_trigger)
{
	const char *data = tmp_path("units.data"), *truth = tmp_path("units.fdata");
	record(wl("phases"), unit_rows[_i].event, unit_rows[_i].period, "any", data, truth);
	int st;
	char *out = validate(data, truth, "cbt", "0.995", &st);
	ck_assert_msg(st == 0, "row at line %d (%s): %s", unit_rows[_i].line, unit_rows[_i].event, out);
	ck_assert_double_ge(json_num(out, "samples"), 20000);
	double cbt = json_num(out, "overlap_edges");
	free(out);
	out = validate(data, truth, "ranges", "0", &st);
	ck_assert_double_lt(json_num(out, "overlap_edges"), cbt - 0.1);
	free(out);
}
END_TEST

/* A dynamic program: ld.so and libc are walked too (their files are here), and
 * the truth names their functions, so the whole process is compared. */
START_TEST(cbt_on_a_dynamic_program)
{
	const char *in = tmp_path("lines.txt"), *data = tmp_path("dyn.data"), *truth = tmp_path("dyn.fdata");
	FILE *f = fopen(in, "w");
	for (int i = 0; i < 3000; i++)
		fprintf(f, "line %d %x\n", (i * 7919) % 3001, i * 31);
	fclose(f);
	char *a[] = {(char *)pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "13", "--delta", "6",
		     "-b", "--seed", "1", "-o", (char *)data, "--truth", (char *)truth, "--", "/usr/bin/sort",
		     (char *)in, NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL), 0);
	int st;
	char *out = validate(data, truth, "cbt", "0.99", &st);
	ck_assert_msg(st == 0, "sort: %s", out);
	ck_assert_double_eq(json_num(out, "truth_lines_unresolved"), 0);
	free(out);
}
END_TEST

/* The call-graph variant: call-only LBR, caller -> callee. */
START_TEST(call_graph_from_call_only_lbr)
{
	const char *prog = _i ? wl("indirect") : wl("recursion");
	const char *data = tmp_path("calls.data"), *truth = tmp_path("calls.fdata");
	record(prog, "br_inst_retired.near_call", "3", "any_call", data, truth);
	int st;
	char *out = validate(data, truth, "calls", "0.99", &st);
	ck_assert_msg(st == 0, "%s: %s", prog, out);
	ck_assert_double_ge(json_num(out, "overlap_calls"), 0.99);
	free(out);
}
END_TEST

/* Baselines: counting raw LBR entries never sees fall-throughs; IP sampling
 * sees no directions. Both stay below the CBT method on loops. */
START_TEST(baselines_stay_below_cbt)
{
	const char *data = tmp_path("base.data"), *truth = tmp_path("base.fdata");
	record(wl("loops"), "br_inst_retired.near_taken", "140", "any", data, truth);
	int st;
	char *c = validate(data, truth, "cbt", "0", &st), *t = validate(data, truth, "taken", "0", &st),
	     *r = validate(data, truth, "ranges", "0", &st), *ip = validate(data, truth, "ip", "0", &st);
	double oc = json_num(c, "overlap_edges"), ot = json_num(t, "overlap_edges"),
	       orr = json_num(r, "overlap_edges"), oi = json_num(ip, "overlap_edges");
	ck_assert_msg(ot < oc && oi < oc && orr <= oc + 0.005, "cbt %.4f taken %.4f ranges %.4f ip %.4f", oc, ot,
		      orr, oi);
	ck_assert_double_lt(ot, 0.95);
	free(c), free(t), free(r), free(ip);
}
END_TEST

/* validate as a CI gate: 1 below the threshold, 2 on errors (one line). */
START_TEST(validate_exit_statuses)
{
	const char *data = tmp_path("gate.data"), *truth = tmp_path("gate.fdata"), *bad = tmp_path("bad.fdata");
	record(wl("loops"), "br_inst_retired.near_taken", "140", "any", data, truth);
	int st;
	char *out = validate(data, truth, "ip", "0.999", &st);
	ck_assert_int_eq(st, 1);
	free(out);
	FILE *f = fopen(bad, "w");
	fputs("1 main 10 1 main\n", f);
	fclose(f);
	const char *err = tmp_path("gate.err");
	char *a[] = {(char *)pmusim(), "validate", "-i", (char *)data, "--truth", (char *)bad, NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, err), 2);
	char *e = slurp(err, NULL);
	ck_assert_msg(e && strstr(e, ":1: not an fdata line"), "message: %s", e);
	free(e);
	char *b[] = {(char *)pmusim(), "validate", "-i", (char *)truth, "--truth", (char *)truth, NULL};
	ck_assert_int_eq(run_cmd(b, NULL, NULL, NULL), 2); /* not perf.data */
	char *c[] = {(char *)pmusim(), "validate", "-i", (char *)data, "--truth", (char *)truth, "--method", "x", NULL};
	ck_assert_int_eq(run_cmd(c, NULL, NULL, NULL), 2);
}
END_TEST

/* report: text names the hot functions, JSON carries the counts, fdata parses. */
START_TEST(report_formats)
{
	const char *data = tmp_path("rep.data"), *truth = tmp_path("rep.fdata"), *fd = tmp_path("rep.out.fdata");
	record(wl("loops"), "br_inst_retired.near_taken", "140", "any", data, truth);
	int st;
	char *t[] = {(char *)pmusim(), "report", "-i", (char *)data, NULL};
	char *text = run_capture(t, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(text && strstr(text, "run_loops") && strstr(text, "mix"), "text report: %s", text);
	char *j[] = {(char *)pmusim(), "report", "-i", (char *)data, "--format", "json", NULL};
	char *json = run_capture(j, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_double_gt(json_num(json, "samples"), 1000);
	ck_assert_double_eq(json_num(json, "samples_dropped"), 0);
	ck_assert_ptr_nonnull(strstr(json, "\"edges\": ["));
	char *f[] = {(char *)pmusim(), "report", "-i", (char *)data, "--format", "fdata", "-o", (char *)fd, NULL};
	ck_assert_int_eq(run_cmd(f, NULL, NULL, NULL), 0);
	/* the profile's own fdata read back as a "truth": overlap 1 with itself */
	char *out = validate(data, fd, "cbt", "0.9999", &st);
	ck_assert_msg(st == 0, "fdata round trip: %s", out);
	free(text), free(json), free(out);
}
END_TEST

/* The real Skylake recording goes through the same pipeline: at least 99 % of
 * its samples with branch records are consistent with the binary (a window that
 * is too short is no inconsistency). */
START_TEST(real_skylake_recording)
{
	const char *sh = shared_dir();
	char data[512], bin[512];
	snprintf(data, sizeof(data), "%s/fixtures/real-lbr/skylake-cycles-b.perf.data", sh ? sh : "../shared");
	snprintf(bin, sizeof(bin), "%s/fixtures/real-lbr/propeller_sample_1.bin", sh ? sh : "../shared");
	int st;
	char *a[] = {(char *)pmusim(), "report", "-i", data, "--binary", bin, "--format", "json", NULL};
	char *out = run_capture(a, &st);
	ck_assert_int_eq(st, 0);
	double samples = json_num(out, "samples"), nobr = json_num(out, "no_branches");
	double bad = json_num(out, "not_a_branch") + json_num(out, "unconditional_in_range") +
		     json_num(out, "backwards") + json_num(out, "off_text") + json_num(out, "too_long");
	ck_assert_double_eq(samples, 3740);
	ck_assert_msg(bad <= 0.01 * (samples - nobr), "%.0f of %.0f samples inconsistent", bad, samples - nobr);
	ck_assert_msg(strstr(out, "main+0x") && strstr(out, "compute_flag+0x"), "symbols: %.300s", out);
	free(out);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("profile");
	TCase *tc = tcase_create("profile");
	tcase_set_timeout(tc, 120);
	/* ASan: every 4th row of the two long lists, the code paths; the figures are the
	 * release run's */
	tcase_add_loop_test(tc, cbt_meets_overlap_on_every_workload, 0,
	                    e2e_rows((int)(sizeof(cbt_rows) / sizeof(cbt_rows[0]))));
	tcase_add_loop_test(tc, cbt_window_in_units_of_the_trigger, 0, (int)(sizeof(unit_rows) / sizeof(unit_rows[0])));
	tcase_add_loop_test(tc, cbt_with_every_trigger, 0, e2e_rows((int)(sizeof(trig_rows) / sizeof(trig_rows[0]))));
	tcase_add_loop_test(tc, call_graph_from_call_only_lbr, 0, 2);
	tcase_add_test(tc, cbt_on_a_dynamic_program);
	tcase_add_test(tc, baselines_stay_below_cbt);
	tcase_add_test(tc, validate_exit_statuses);
	tcase_add_test(tc, report_formats);
	tcase_add_test(tc, real_skylake_recording);
	suite_add_tcase(s, tc);
	/* 300 M instructions with the LBR and the truth: 15 s of CPU in the release
	 * build, a few times that with ASan: the release run's alone; the timeout only
	 * catches a hang */
	if (!e2e_sanitized()) {
		TCase *real = tcase_create("real_program");
		tcase_set_timeout(real, 900);
		tcase_add_test(real, cycles_trigger_on_the_real_recordings_program);
		suite_add_tcase(s, real);
	}
	return run_suite(s);
}
