/* CI regression testing: `pmusim stat --json` baselines and `pmusim diff`.
 *  - the same program and options give byte-identical baselines from other
 *    working directories and environments, and a baseline's diff with itself
 *    changes nothing (exit 0);
 *  - the two builds of workloads/ci_hot (the second, -DSLOWER, does one more
 *    multiply per element of its hot loop): checksum is the top regression with
 *    its exact instruction change, as valgrind's callgrind counts the two
 *    programs natively, and its exact cycle change, as the truth's per-function
 *    cycles (attributed per run by the timing model, not by the baseline's clock
 *    readings) have it; the functions that did not change show 0; --threshold
 *    fails the job (exit 1) and passes it;
 *  - every function's self instructions, cycles and calls equal the truth's;
 *    the program's own functions' self and inclusive instructions equal
 *    callgrind's; the self costs add up to the PMU's event counts, and _start's
 *    inclusive costs are those counts;
 *  - perf stat -j output diffs by events; bad input is one line and exit 2. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/json_read.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"


static const char *const kinds[4] = {"instructions", "cycles", "branches", "branch-misses"};

/* Every build under test is copied to one path, PROG, and run by it: the
 * program's own path is part of what it runs (argv[0] and AT_EXECFN lie on its
 * stack; glibc's static start-up reads /proc/self/exe), as a CI job does by
 * putting the build where the baseline's was (docs/ci.md). */
static const char *prog_path(void)
{
	static char p[512];
	if (!p[0]) {
		snprintf(p, sizeof(p), "%s", tmp_path("ci/prog"));
		char *mk[] = {"mkdir", "-p", (char *)tmp_path("ci"), NULL};
		ck_assert_int_eq(run_cmd(mk, NULL, NULL, NULL), 0);
	}
	return p;
}

static void place(const char *src)
{
	char *cp[] = {"cp", (char *)src, (char *)prog_path(), NULL};
	ck_assert_int_eq(run_cmd(cp, NULL, NULL, NULL), 0);
}

/* env -C DIR [VAR] pmusim stat --json -o OUT [--truth-json T] -- PROG: from
 * working directory DIR (made here). */
static void baseline(const char *dir, const char *out, const char *var, const char *truth)
{
	char *mk[] = {"mkdir", "-p", (char *)dir, NULL};
	ck_assert_int_eq(run_cmd(mk, NULL, NULL, NULL), 0);
	char *argv[20] = {"env", "-C", (char *)dir};
	int k = 3;
	if (var)
		argv[k++] = (char *)var;
	static char abs_pmusim[4096]; /* env -C changes the directory first */
	ck_assert_ptr_nonnull(realpath(pmusim(), abs_pmusim));
	argv[k++] = abs_pmusim, argv[k++] = "stat", argv[k++] = "--json", argv[k++] = "-o", argv[k++] = (char *)out;
	if (truth)
		argv[k++] = "--truth-json", argv[k++] = (char *)truth;
	argv[k++] = "--", argv[k++] = (char *)prog_path(), argv[k] = NULL;
	ck_assert_int_eq(run_cmd(argv, NULL, NULL, NULL), 0);
}

static struct jv *parse(const char *path)
{
	struct jv *d = NULL;
	char msg[200];
	ck_assert_msg(json_parse_file(path, &d, msg, sizeof(msg)) == 0, "%s: %s", path, msg);
	return d;
}

static uint64_t u64(const struct jv *v)
{
	uint64_t x = 0;
	ck_assert_msg(jv_u64(v, &x) == 0, "not a count");
	return x;
}

static const struct jv *func_named(const struct jv *doc, const char *name)
{
	const struct jv *fs = jv_get(doc, "functions");
	for (size_t i = 0; fs && i < fs->n; i++)
		if (strcmp(jv_get(&fs->item[i], "name")->text, name) == 0)
			return &fs->item[i];
	return NULL;
}

static uint64_t event_count(const struct jv *doc, const char *name)
{
	const struct jv *ev = jv_get(doc, "events");
	for (size_t i = 0; i < ev->n; i++)
		if (strcmp(jv_get(&ev->item[i], "event")->text, name) == 0)
			return u64(jv_get(&ev->item[i], "count"));
	ck_abort_msg("no event %s", name);
	return 0;
}

/* pmusim diff ARGS... > OUT; the exit status. */
static int diff(const char *out, const char *a1, const char *a2, const char *a3, const char *a4)
{
	char *argv[10] = {(char *)pmusim(), "diff"};
	int k = 2;
	const char *a[] = {a1, a2, a3, a4};
	for (int i = 0; i < 4; i++)
		if (a[i])
			argv[k++] = (char *)a[i];
	argv[k] = NULL;
	return run_cmd(argv, NULL, out, tmp_path_kept("diff.err"));
}

/* A function's Ir in callgrind_annotate's listing (self, or --inclusive=yes). */
static uint64_t callgrind_ir(const char *out, const char *fn, int inclusive)
{
	char *argv[] = {"callgrind_annotate", inclusive ? "--inclusive=yes" : "--inclusive=no", "--threshold=100",
			(char *)out, NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert_msg(text && st == 0, "callgrind_annotate failed");
	char key[256];
	snprintf(key, sizeof(key), "???:%s [", fn);
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		if (!strstr(l, key))
			continue;
		uint64_t v = 0;
		for (const char *p = l; *p == ' ' || *p == ',' || (*p >= '0' && *p <= '9'); p++)
			if (*p >= '0' && *p <= '9')
				v = v * 10 + (uint64_t)(*p - '0');
		free(text);
		return v;
	}
	free(text);
	ck_abort_msg("callgrind: no %s", fn);
	return 0;
}

static void callgrind(const char *out)
{
	const char *prog = prog_path();
	char opt[600];
	snprintf(opt, sizeof(opt), "--callgrind-out-file=%s", out);
	char *argv[] = {"valgrind", "--tool=callgrind", "-q", opt, (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, NULL, NULL), 0);
}

START_TEST(same_bytes_from_anywhere_and_no_change_with_itself)
{
	const char *a = tmp_path_kept("a"), *b = tmp_path_kept("elsewhere/b");
	place(wl("ci_hot"));
	const char *b1 = tmp_path_kept("b1.json"), *b2 = tmp_path_kept("b2.json");
	baseline(a, b1, NULL, NULL);
	baseline(b, b2, "HOME=/nowhere", NULL);
	size_t n1, n2;
	char *x = slurp(b1, &n1), *y = slurp(b2, &n2);
	ck_assert_msg(x && y && n1 == n2 && memcmp(x, y, n1) == 0, "baselines differ");
	free(x), free(y);
	const char *out = tmp_path_kept("self.txt");
	ck_assert_int_eq(diff(out, "--threshold", "cycles=0", b1, b2), 0);
	char *t = slurp(out, NULL);
	ck_assert_msg(t && strstr(t, "\nno function changed (") && strstr(t, "threshold cycles +0.00%: +0.00% within"),
		      "%s", t ? t : "");
	free(t);
	const char *js = tmp_path_kept("self.json");
	ck_assert_int_eq(diff(js, "--format", "json", b1, b2), 0);
	struct jv *d = parse(js);
	const struct jv *fs = jv_get(d, "functions");
	ck_assert_uint_gt(fs->n, 50);
	for (size_t i = 0; i < fs->n; i++) {
		ck_assert_str_eq(jv_get(&fs->item[i], "status")->text, "same");
		for (int part = 0; part < 2; part++)
			for (int k = 0; k < 4; k++) {
				const struct jv *c = jv_get(jv_get(jv_get(&fs->item[i], part ? "inclusive" : "self"), kinds[k]),
							    "change");
				ck_assert_msg(c && strcmp(c->text, "0") == 0, "a change in a diff with itself");
			}
	}
	jv_free(d);
}
END_TEST

START_TEST(the_slowed_function_is_the_top_regression)
{
	const char *a = tmp_path_kept("v1"), *b = tmp_path_kept("v2");
	const char *b1 = tmp_path_kept("v1.json"), *b2 = tmp_path_kept("v2.json"), *t1 = tmp_path_kept("t1.json"),
		   *t2 = tmp_path_kept("t2.json");
	const char *c1 = tmp_path_kept("cg1.out"), *c2 = tmp_path_kept("cg2.out");
	place(wl("ci_hot"));
	baseline(a, b1, NULL, t1);
	callgrind(c1);
	place(wl("ci_hot.slower"));
	baseline(b, b2, NULL, t2);
	callgrind(c2);
	const char *js = tmp_path_kept("d.json");
	ck_assert_int_eq(diff(js, "--format", "json", b1, b2), 0);
	struct jv *d = parse(js);
	const struct jv *top = &jv_get(d, "functions")->item[0];
	ck_assert_str_eq(jv_get(top, "name")->text, "checksum.constprop.0/1");
	ck_assert_str_eq(jv_get(top, "status")->text, "changed");
	/* the instruction change as callgrind counts the two programs natively */
	uint64_t ir1 = callgrind_ir(c1, "checksum.constprop.0", 0), ir2 = callgrind_ir(c2, "checksum.constprop.0", 0);
	const struct jv *si = jv_get(jv_get(top, "self"), "instructions");
	ck_assert_uint_eq(u64(jv_get(si, "base")), ir1);
	ck_assert_uint_eq(u64(jv_get(si, "new")), ir2);
	/* the cycle change as the truth's per-function cycles have it */
	struct jv *tr1 = parse(t1), *tr2 = parse(t2);
	uint64_t cy[2] = {0, 0};
	struct jv *tr[2] = {tr1, tr2};
	for (int v = 0; v < 2; v++) {
		const struct jv *fs = jv_get(tr[v], "functions");
		for (size_t i = 0; i < fs->n; i++)
			if (strcmp(jv_get(&fs->item[i], "name")->text, "checksum.constprop.0") == 0)
				cy[v] = u64(jv_get(&fs->item[i], "cycles"));
	}
	const struct jv *sc = jv_get(jv_get(top, "self"), "cycles");
	ck_assert_uint_eq(u64(jv_get(sc, "base")), cy[0]);
	ck_assert_uint_eq(u64(jv_get(sc, "new")), cy[1]);
	ck_assert_uint_gt(cy[1], cy[0]);
	printf("check_ci_baseline: checksum self instructions %" PRIu64 " -> %" PRIu64 " (callgrind), cycles %" PRIu64
	       " -> %" PRIu64 " (the truth)\n", ir1, ir2, cy[0], cy[1]);
	/* the functions that did not change: 0 exactly */
	static const char *const same[] = {"fill.constprop.0/1", "unchanged_work.constprop.0/1"};
	const struct jv *fs = jv_get(d, "functions");
	for (int s = 0; s < 2; s++) {
		const struct jv *f = NULL;
		for (size_t i = 0; i < fs->n; i++)
			if (strcmp(jv_get(&fs->item[i], "name")->text, same[s]) == 0)
				f = &fs->item[i];
		ck_assert_msg(f, "no %s", same[s]);
		ck_assert_str_eq(jv_get(f, "status")->text, "same");
		for (int k = 0; k < 4; k++)
			ck_assert_str_eq(jv_get(jv_get(jv_get(f, "self"), kinds[k]), "change")->text, "0");
	}
	jv_free(d), jv_free(tr1), jv_free(tr2);
	/* the job fails above its threshold, passes within */
	const char *txt = tmp_path_kept("d.txt");
	ck_assert_int_eq(diff(txt, "--threshold", "cycles=1", b1, b2), 1);
	char *t = slurp(txt, NULL);
	ck_assert_msg(t && strstr(t, "REGRESSED") && strstr(t, "\nchecksum.constprop.0/1 "), "%s", t ? t : "");
	free(t);
	ck_assert_int_eq(diff(txt, "--threshold", "cycles=50", b1, b2), 0);
	ck_assert_int_eq(diff(txt, "--threshold", "instructions=15", b1, b2), 1);
	/* Markdown for the pull request, and the chart */
	const char *md = tmp_path_kept("d.md"), *svg = tmp_path_kept("d.svg");
	char *argv[] = {(char *)pmusim(), "diff", "--format", "markdown", "--svg", (char *)svg, (char *)b1, (char *)b2, NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, md, NULL), 0);
	t = slurp(md, NULL);
	ck_assert_msg(t && strstr(t, "| `checksum.constprop.0/1` | +") && strstr(t, "|---|"), "%s", t ? t : "");
	free(t);
	t = slurp(svg, NULL);
	ck_assert_msg(t && strstr(t, "<svg") && strstr(t, "checksum.constprop.0/1") && strstr(t, "</svg>\n"), "svg");
	free(t);
}
END_TEST

START_TEST(self_costs_are_the_truths_and_callgrinds)
{
	const char *a = tmp_path_kept("own");
	place(wl("ci_hot"));
	const char *b1 = tmp_path_kept("own.json"), *t1 = tmp_path_kept("own.truth"), *c1 = tmp_path_kept("own.cg");
	baseline(a, b1, NULL, t1);
	callgrind(c1);
	struct jv *b = parse(b1), *t = parse(t1);
	/* every function the truth names alike: self instructions, cycles and calls */
	const struct jv *tf = jv_get(t, "functions");
	size_t compared = 0;
	for (size_t i = 0; i < tf->n; i++) {
		const struct jv *f = &tf->item[i];
		char local[300];
		snprintf(local, sizeof(local), "%s/1", jv_get(f, "name")->text);
		const struct jv *g = func_named(b, jv_get(f, "name")->text);
		if (!g)
			g = func_named(b, local);
		if (!g)
			continue; /* an alias: the baseline names a function as perf does */
		compared++;
		ck_assert_uint_eq(u64(jv_get(jv_get(g, "self"), "instructions")), u64(jv_get(f, "instructions")));
		ck_assert_uint_eq(u64(jv_get(jv_get(g, "self"), "cycles")), u64(jv_get(f, "cycles")));
		ck_assert_uint_eq(u64(jv_get(g, "calls")), u64(jv_get(f, "calls")));
	}
	ck_assert_uint_gt(compared, 90);
	/* the self costs add up to the counters; _start's inclusive costs are them */
	const struct jv *fs = jv_get(b, "functions");
	for (int k = 0; k < 4; k++) {
		uint64_t sum = 0;
		for (size_t i = 0; i < fs->n; i++)
			sum += u64(jv_get(jv_get(&fs->item[i], "self"), kinds[k]));
		ck_assert_uint_eq(sum, event_count(b, kinds[k]));
		ck_assert_uint_eq(u64(jv_get(jv_get(func_named(b, "_start"), "inclusive"), kinds[k])),
				  event_count(b, kinds[k]));
	}
	/* the program's own functions, self and inclusive, as callgrind counts them
	 * natively (main's inclusive is not: printf's CPUID-chosen string functions
	 * and stdio's checks differ under valgrind) */
	static const char *const own[] = {"checksum.constprop.0", "fill.constprop.0", "unchanged_work.constprop.0"};
	for (int i = 0; i < 3; i++) {
		char local[300];
		snprintf(local, sizeof(local), "%s/1", own[i]);
		const struct jv *g = func_named(b, local);
		ck_assert_msg(g, "no %s", local);
		ck_assert_uint_eq(u64(jv_get(jv_get(g, "self"), "instructions")), callgrind_ir(c1, own[i], 0));
		ck_assert_uint_eq(u64(jv_get(jv_get(g, "inclusive"), "instructions")), callgrind_ir(c1, own[i], 1));
	}
	ck_assert_uint_eq(u64(jv_get(jv_get(func_named(b, "main"), "self"), "instructions")), callgrind_ir(c1, "main", 0));
	printf("check_ci_baseline: %zu functions equal to the truth's; self costs add up to the counters\n", compared);
	jv_free(b), jv_free(t);
}
END_TEST

/* What perf stat -j prints (pmusim stat -j writes its layout) diffs by events. */
START_TEST(perf_stat_j_output_diffs_by_events)
{
	const char *j1 = tmp_path_kept("j1.txt"), *j2 = tmp_path_kept("j2.txt");
	char *s1[] = {(char *)pmusim(), "stat", "-j", "-o", (char *)j1, "--", (char *)wl("ci_hot"), NULL};
	char *s2[] = {(char *)pmusim(), "stat", "-j", "-o", (char *)j2, "--", (char *)wl("ci_hot.slower"), NULL};
	ck_assert_int_eq(run_cmd(s1, NULL, NULL, NULL), 0);
	ck_assert_int_eq(run_cmd(s2, NULL, NULL, NULL), 0);
	const char *out = tmp_path_kept("j.txt");
	ck_assert_int_eq(diff(out, "--threshold", "cycles=1", j1, j2), 1);
	char *t = slurp(out, NULL);
	ck_assert_msg(t && strstr(t, "\ncycles ") && !strstr(t, "functions by"), "%s", t ? t : "");
	free(t);
	ck_assert_int_eq(diff(out, "--threshold", "cycles=1", j1, j1), 0);
}
END_TEST

/* Per function of callgrind_annotate's listing: Ir and the second event. */
struct annot {
	char name[256];
	uint64_t ir, ev2;
};

static size_t annotate(const char *file, int inclusive, struct annot *out, size_t max)
{
	char *argv[] = {"callgrind_annotate", inclusive ? "--inclusive=yes" : "--inclusive=no", "--threshold=100",
			(char *)file, NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert_msg(text && st == 0, "callgrind_annotate %s failed", file);
	size_t n = 0;
	for (char *l = strtok(text, "\n"); l && n < max; l = strtok(NULL, "\n")) {
		char *fn = strstr(l, "???:"), *end = fn ? strstr(fn, " [") : NULL;
		if (!fn || !end || strstr(l, "PROGRAM TOTALS"))
			continue;
		uint64_t v[2] = {0, 0};
		int k = 0, in = 0;
		for (const char *p = l; p < fn && k < 2; p++) {
			if (*p == '(') /* a per cent: skip it */
				in = 1;
			else if (*p == ')')
				in = 0, k += 0;
			else if (!in && *p >= '0' && *p <= '9')
				v[k] = v[k] * 10 + (uint64_t)(*p - '0');
			else if (!in && *p == ' ' && p > l && p[-1] >= '0' && p[-1] <= '9')
				k++;
		}
		snprintf(out[n].name, sizeof(out[n].name), "%.*s", (int)(end - fn - 4), fn + 4);
		out[n].ir = v[0], out[n].ev2 = v[1];
		n++;
	}
	free(text);
	return n;
}

static const struct annot *annot_of(const struct annot *a, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(a[i].name, name) == 0)
			return &a[i];
	return NULL;
}

/* run --callgrind: callgrind_annotate reads it; per function its Ir and Cycles
 * are the truth's instructions and cycles of the same run, and the program's
 * own functions' Ir, self and inclusive, valgrind's callgrind's. */
START_TEST(callgrind_file_is_exact)
{
	place(wl("ci_hot"));
	const char *cg = tmp_path_kept("pm.callgrind"), *t = tmp_path_kept("pm.truth"), *v = tmp_path_kept("vg.callgrind");
	char *run[] = {(char *)pmusim(), "run", "--callgrind", (char *)cg, "--truth-json", (char *)t, "--",
		       (char *)prog_path(), NULL};
	ck_assert_int_eq(run_cmd(run, NULL, NULL, NULL), 0);
	callgrind(v);
	static struct annot a[4096], av[4096], ai[4096], avi[4096];
	size_t na = annotate(cg, 0, a, 4096), nv = annotate(v, 0, av, 4096), nai = annotate(cg, 1, ai, 4096),
	       nvi = annotate(v, 1, avi, 4096);
	struct jv *tr = parse(t);
	const struct jv *tf = jv_get(tr, "functions");
	size_t compared = 0;
	for (size_t i = 0; i < tf->n; i++) {
		const struct annot *x = annot_of(a, na, jv_get(&tf->item[i], "name")->text);
		if (!x)
			continue; /* an alias, or a function that only ran its cut part */
		compared++;
		ck_assert_msg(x->ir == u64(jv_get(&tf->item[i], "instructions")) &&
				      x->ev2 == u64(jv_get(&tf->item[i], "cycles")),
			      "%s: Ir %" PRIu64 " cycles %" PRIu64, x->name, x->ir, x->ev2);
	}
	ck_assert_uint_gt(compared, 90);
	static const char *const own[] = {"checksum.constprop.0", "fill.constprop.0", "unchanged_work.constprop.0"};
	for (int i = 0; i < 3; i++) {
		const struct annot *x = annot_of(a, na, own[i]), *y = annot_of(av, nv, own[i]),
				   *xi = annot_of(ai, nai, own[i]), *yi = annot_of(avi, nvi, own[i]);
		ck_assert_msg(x && y && xi && yi && x->ir == y->ir && xi->ir == yi->ir, "%s", own[i]);
	}
	const struct annot *m = annot_of(a, na, "main"), *mv = annot_of(av, nv, "main");
	ck_assert_msg(m && mv && m->ir == mv->ir, "main");
	printf("check_ci_baseline: callgrind file: %zu functions' Ir and Cycles equal to the truth's; checksum %" PRIu64
	       " Ir as valgrind's\n", compared, annot_of(a, na, own[0])->ir);
	jv_free(tr);
}
END_TEST

/* perf report --stdio --sort sym --show-total-period: the period of symbol sym
 * of the first event listed. */
static uint64_t perf_period(const char *data, const char *sym)
{
	char *argv[] = {"perf", "report", "--stdio", "--sort", "sym", "--show-total-period", "-i", (char *)data, NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert_msg(text && st == 0, "perf report failed");
	char key[300];
	snprintf(key, sizeof(key), "[.] %s\n", sym);
	const char *at = strstr(text, key);
	ck_assert_msg(at, "perf report: no %s", sym);
	const char *line = at;
	while (line > text && line[-1] != '\n')
		line--;
	double pct;
	unsigned long long period;
	ck_assert_int_eq(sscanf(line, " %lf%% %llu", &pct, &period), 2);
	free(text);
	return period;
}

/* Two perf.data recordings, as perf diff compares them: per event the total
 * period, per function its samples' period, the slowed checksum first; the
 * function's base period is perf report's own; a real hardware recording
 * against itself changes nothing; a baseline against a recording is refused. */
START_TEST(recordings_diff_as_perf_diff_does)
{
	const char *r1 = tmp_path_kept("r1.data"), *r2 = tmp_path_kept("r2.data");
	char *rec[] = {(char *)pmusim(), "record", "-q", "-e", "cycles,instructions", "-c", "10007", "-o", NULL, "--",
		       (char *)prog_path(), NULL};
	place(wl("ci_hot"));
	rec[8] = (char *)r1;
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, NULL), 0);
	uint64_t perf_base = perf_period(r1, "checksum.constprop.0"); /* while the build is there */
	place(wl("ci_hot.slower"));
	rec[8] = (char *)r2;
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, NULL), 0);
	const char *js = tmp_path_kept("r.json"), *txt = tmp_path_kept("r.txt");
	ck_assert_int_eq(diff(js, "--format", "json", r1, r2), 0);
	struct jv *d = parse(js);
	const struct jv *top = &jv_get(d, "functions")->item[0];
	ck_assert_str_eq(jv_get(top, "name")->text, "checksum.constprop.0");
	const struct jv *c = jv_get(jv_get(top, "self"), "cycles");
	ck_assert_uint_eq(u64(jv_get(c, "base")), perf_base);
	ck_assert_uint_gt(u64(jv_get(c, "new")), u64(jv_get(c, "base")));
	ck_assert_ptr_null(jv_get(top, "inclusive"));
	jv_free(d);
	ck_assert_int_eq(diff(txt, "--threshold", "cycles=5", r1, r2), 1);
	ck_assert_int_eq(diff(txt, "--threshold", "cycles=50", r1, r2), 0);
	char real[4096];
	snprintf(real, sizeof(real), "%s/fixtures/real-lbr/skylake-cycles-b.perf.data", shared_dir());
	ck_assert_int_eq(diff(txt, real, real, NULL, NULL), 0);
	char *t = slurp(txt, NULL);
	ck_assert_msg(t && strstr(t, "cycles:u ") && strstr(t, "\nno function changed ("), "%s", t ? t : "");
	free(t);
	const char *b1 = tmp_path_kept("rb.json");
	baseline(tmp_path_kept("rb"), b1, NULL, NULL);
	ck_assert_int_eq(diff(txt, b1, r1, NULL, NULL), 2);
	t = slurp(tmp_path_kept("diff.err"), NULL);
	ck_assert_msg(t && strstr(t, "not of the same kinds"), "%s", t ? t : "");
	free(t);
}
END_TEST

/* docs/ci/pmusim-ci.sh as a CI job calls it: the first run writes the
 * baseline, the same build passes, the slowed build (the same file name, as a
 * rebuild gives) fails with a Markdown report naming checksum first. */
START_TEST(the_ci_script_fails_the_slowed_build)
{
	static char abs_pmusim[4096];
	ck_assert_ptr_nonnull(realpath(pmusim(), abs_pmusim));
	char pm[4200], dir[600];
	snprintf(pm, sizeof(pm), "PMUSIM=%s", abs_pmusim);
	snprintf(dir, sizeof(dir), "PMUSIM_CI_DIR=%s", tmp_path_kept("ci-run"));
	const char *base = tmp_path_kept("ci-base.json"), *md = tmp_path_kept("pr.md"), *b2 = tmp_path_kept("build2");
	char *mk[] = {"mkdir", "-p", (char *)b2, NULL};
	ck_assert_int_eq(run_cmd(mk, NULL, NULL, NULL), 0);
	char slow[700];
	snprintf(slow, sizeof(slow), "%s/ci_hot", b2);
	char *cp[] = {"cp", (char *)wl("ci_hot.slower"), slow, NULL};
	ck_assert_int_eq(run_cmd(cp, NULL, NULL, NULL), 0);
	char *first[] = {"env", pm, dir, "sh", "docs/ci/pmusim-ci.sh", (char *)base, (char *)wl("ci_hot"), NULL};
	ck_assert_int_eq(run_cmd(first, NULL, NULL, NULL), 0);
	ck_assert_int_eq(access(base, F_OK), 0);
	char *same[] = {"env", pm, dir, "sh", "docs/ci/pmusim-ci.sh", "-o", (char *)md, (char *)base,
			(char *)wl("ci_hot"), NULL};
	ck_assert_int_eq(run_cmd(same, NULL, NULL, NULL), 0);
	char *slower[] = {"env", pm, dir, "sh", "docs/ci/pmusim-ci.sh", "-t", "cycles=2", "-o", (char *)md,
			  (char *)base, slow, NULL};
	ck_assert_int_eq(run_cmd(slower, NULL, tmp_path_kept("ci.log"), NULL), 1);
	char *t = slurp(md, NULL);
	static const char rule[] = "|---|---:|---:|---:|---:|---:|---:|---:|\n"; /* 4 kinds, self, %, inclusive */
	const char *row = t ? strstr(t, rule) : NULL;
	ck_assert_msg(row && strncmp(row + strlen(rule), "| `checksum.constprop.0/1` | +", 30) == 0 &&
			      strstr(t, "threshold cycles +2.00%: +") && strstr(t, "**regressed**"),
		      "%s", t ? t : "");
	free(t);
	char svg[700];
	snprintf(svg, sizeof(svg), "%.*s.svg", (int)strlen(md) - 3, md);
	ck_assert_int_eq(access(svg, F_OK), 0);
}
END_TEST

/* One line, exit 2, no output file. */
START_TEST(bad_input_is_one_line_and_exit_2)
{
	const char *good = tmp_path_kept("good.json"), *junk = tmp_path_kept("junk.json"), *other = tmp_path_kept("other.json");
	const char *a = tmp_path_kept("bad");
	place(wl("ci_hot"));
	baseline(a, good, NULL, NULL);
	FILE *f = fopen(junk, "w");
	fputs("{\"pmusim_baseline\": 1, \"events\": [", f);
	fclose(f);
	f = fopen(other, "w");
	fputs("{\"pmusim_baseline\": 1, \"program\": {}, \"events\": [{\"event\": \"cycles\", \"count\": -1}], "
	      "\"functions\": []}\n", f);
	fclose(f);
	static const char *const cases[][5] = {
		{"--format", "yaml", "G", "G", "text, json or markdown"},
		{"--threshold", "cycles", "G", "G", "EV=PCT"},
		{"--threshold", "nosuch=1", "G", "G", "no event 'nosuch'"},
		{"--sort", "speed", "G", "G", "--sort speed: the files' costs are instructions, cycles"},
		{"G", "/nonexistent/x.json", NULL, NULL, "/nonexistent/x.json: "},
		{"G", "J", NULL, NULL, "line 1, column"},
		{"G", "O", NULL, NULL, "whole \"count\""},
		{"G", NULL, NULL, NULL, "needs two files"},
	};
	const char *out = tmp_path_kept("bad.out");
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *v[4];
		for (int k = 0; k < 4; k++)
			v[k] = !cases[i][k] ? NULL : !strcmp(cases[i][k], "G") ? good : !strcmp(cases[i][k], "J") ? junk
				: !strcmp(cases[i][k], "O") ? other : cases[i][k];
		remove(out);
		char *argv[10] = {(char *)pmusim(), "diff", "-o", (char *)out};
		int k = 4;
		for (int j = 0; j < 4; j++)
			if (v[j])
				argv[k++] = (char *)v[j];
		argv[k] = NULL;
		ck_assert_msg(run_cmd(argv, NULL, NULL, tmp_path_kept("bad.err")) == 2, "case %zu", i);
		char *e = slurp(tmp_path_kept("bad.err"), NULL);
		ck_assert_msg(e && strstr(e, cases[i][4]) && strchr(e, '\n') == e + strlen(e) - 1, "case %zu: %s", i,
			      e ? e : "");
		free(e);
		ck_assert_msg(access(out, F_OK) != 0, "case %zu left an output", i);
	}
	char *both[] = {(char *)pmusim(), "stat", "--json", "-j", "--", (char *)wl("ci_hot"), NULL};
	ck_assert_int_eq(run_cmd(both, NULL, NULL, NULL), 2);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("ci_baseline");
	TCase *tc = tcase_create("ci_baseline");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, same_bytes_from_anywhere_and_no_change_with_itself);
	tcase_add_test(tc, the_slowed_function_is_the_top_regression);
	tcase_add_test(tc, self_costs_are_the_truths_and_callgrinds);
	tcase_add_test(tc, perf_stat_j_output_diffs_by_events);
	tcase_add_test(tc, bad_input_is_one_line_and_exit_2);
	tcase_add_test(tc, the_ci_script_fails_the_slowed_build);
	tcase_add_test(tc, callgrind_file_is_exact);
	tcase_add_test(tc, recordings_diff_as_perf_diff_does);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
