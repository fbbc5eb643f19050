/* Two CI baselines compared (profiler/baseline_diff.h): small documents in the
 * format pmusim stat --json writes (cli/stat_baseline.c), and perf stat -j
 * lines, read back from files and diffed: a baseline against itself, a slowed
 * function first by impact, functions added and removed, thresholds, corrupt
 * input refused with one line, bl_percent's edges. Every expected change and
 * per cent is worked out by hand in the comments. */
#include <check.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "profiler/baseline_diff.h"
#include "tests/unit/run_suite.h"

/* ---- documents ---- */

struct espec {
	const char *event;
	uint64_t count;
};

struct fspec {
	const char *name;
	uint64_t calls;
	uint64_t self[BL_KINDS], incl[BL_KINDS]; /* instructions, cycles, branches, branch-misses */
};

static char *text;      /* the document being built */
static size_t text_len;

static void put(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

static void put(const char *fmt, ...)
{
	char line[1024];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(line, sizeof(line), fmt, ap);
	va_end(ap);
	ck_assert(n >= 0 && (size_t)n < sizeof(line));
	char *nt = realloc(text, text_len + (size_t)n + 1);
	ck_assert_ptr_nonnull(nt);
	memcpy(nt + text_len, line, (size_t)n + 1);
	text = nt;
	text_len += (size_t)n;
}

static void put_cost(const char *key, const uint64_t *v)
{
	put("\"%s\": {\"instructions\": %llu, \"cycles\": %llu, \"branches\": %llu, \"branch-misses\": %llu}", key,
	    (unsigned long long)v[0], (unsigned long long)v[1], (unsigned long long)v[2], (unsigned long long)v[3]);
}

/* A baseline as baseline_write lays it out (its bytes, key for key), in text. */
static const char *baseline_text(const struct espec *ev, size_t nev, const struct fspec *fn, size_t nfn)
{
	free(text);
	text = NULL;
	text_len = 0;
	put("{\n  \"pmusim_baseline\": 1,\n  \"pmusim\": \"0.9.0\",\n");
	put("  \"program\": {\"name\": \"ci_hot\", \"build_id\": \"5a1b\", \"args\": [\"./ci_hot\", \"3\"]},\n");
	put("  \"options\": {\"cpu\": \"skylake\", \"mhz\": 3000, \"seed\": 1, \"max_insns\": 0, \"quantum\": 1000000, "
	    "\"quantum_unit\": \"instructions\", \"clock_start\": 0, \"env\": [\"A=1\", \"B=2\"]},\n");
	put("  \"exit_status\": 3,\n  \"events\": [");
	for (size_t i = 0; i < nev; i++)
		put("%s\n    {\"event\": \"%s\", \"count\": %llu}", i ? "," : "", ev[i].event,
		    (unsigned long long)ev[i].count);
	put("\n  ],\n  \"functions\": [");
	for (size_t i = 0; i < nfn; i++) {
		put("%s\n    {\"name\": \"%s\", \"calls\": %llu, ", i ? "," : "", fn[i].name,
		    (unsigned long long)fn[i].calls);
		put_cost("self", fn[i].self);
		put(", ");
		put_cost("inclusive", fn[i].incl);
		put("}");
	}
	put("\n  ]\n}\n");
	return text;
}

/* Reads doc as baseline_read reads a file. The file is unlinked as soon as it
 * is made and read through /proc/self/fd, so that nothing is left in /tmp even
 * when the reader crashes (CI fails on leftovers). */
static int read_doc(const char *doc, struct baseline *b, char *msg, size_t msglen)
{
	char path[] = "/tmp/bldiff-unit.XXXXXX", fdpath[64];
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	unlink(path);
	size_t n = strlen(doc);
	ck_assert(write(fd, doc, n) == (ssize_t)n);
	snprintf(fdpath, sizeof(fdpath), "/proc/self/fd/%d", fd);
	msg[0] = 0;
	int err = baseline_read(fdpath, b, msg, msglen);
	close(fd);
	return err;
}

static void read_ok(const char *doc, struct baseline *b)
{
	char msg[256];
	int err = read_doc(doc, b, msg, sizeof(msg));
	ck_assert_msg(err == 0, "refused (%d): %s", err, msg);
}

/* ---- the runs ---- */

/* A base run: self adds up to the events; main calls the rest.
 *            instructions  cycles  branches  branch-misses
 *   main           1000      3000       200     10     (inclusive: all)
 *   checksum      60000    150000     12000    600
 *   parse         38000     95000      7600    380
 *   init           1000      2000       200     10
 *   all          100000    250000     20000   1000 */
static const struct espec base_ev[] = {
	{"instructions", 100000}, {"cycles", 250000}, {"branches", 20000}, {"branch-misses", 1000}};
static const struct fspec base_fn[] = {
	{"main", 0, {1000, 3000, 200, 10}, {100000, 250000, 20000, 1000}},
	{"checksum", 1, {60000, 150000, 12000, 600}, {60000, 150000, 12000, 600}},
	{"parse", 4, {38000, 95000, 7600, 380}, {38000, 95000, 7600, 380}},
	{"init", 1, {1000, 2000, 200, 10}, {1000, 2000, 200, 10}}};

/* The same program with checksum slowed (+3000 instructions, +15000 cycles, +20
 * misses) and parse changed (-5000 instructions, -1000 cycles); main's self and
 * init unchanged, main's inclusive the new whole:
 *   instructions 100000 + 3000 - 5000 = 98000, cycles 250000 + 15000 - 1000 =
 *   264000, branches 20000, misses 1000 + 20 = 1020. */
static const struct espec slow_ev[] = {
	{"instructions", 98000}, {"cycles", 264000}, {"branches", 20000}, {"branch-misses", 1020}};
static const struct fspec slow_fn[] = {
	{"main", 0, {1000, 3000, 200, 10}, {98000, 264000, 20000, 1020}},
	{"checksum", 1, {63000, 165000, 12000, 620}, {63000, 165000, 12000, 620}},
	{"parse", 4, {33000, 94000, 7600, 380}, {33000, 94000, 7600, 380}},
	{"init", 1, {1000, 2000, 200, 10}, {1000, 2000, 200, 10}}};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void expect_delta(const char *what, int k, const struct bl_delta *d, uint64_t base, uint64_t cur)
{
	ck_assert_msg(d->base == base && d->cur == cur, "%s %s: %llu -> %llu, expected %llu -> %llu", what,
		      k < 0 ? "calls" : bl_kind_name[k], (unsigned long long)d->base, (unsigned long long)d->cur,
		      (unsigned long long)base, (unsigned long long)cur);
}

/* Function diff fd is name, status, with these sides (NULL: the side is
 * missing, every figure 0). */
static void expect_fn(const struct bl_func_diff *fd, const char *name, enum bl_status status,
		      const struct fspec *base, const struct fspec *cur)
{
	static const struct fspec none;
	ck_assert_str_eq(fd->name, name);
	ck_assert_msg(fd->status == status, "%s: status %d, expected %d", name, fd->status, status);
	base = base ? base : &none;
	cur = cur ? cur : &none;
	expect_delta(name, -1, &fd->calls, base->calls, cur->calls);
	for (int k = 0; k < BL_KINDS; k++) {
		expect_delta(name, k, &fd->self[k], base->self[k], cur->self[k]);
		expect_delta(name, k, &fd->incl[k], base->incl[k], cur->incl[k]);
	}
}

/* ---- reading ---- */

START_TEST(a_baseline_reads_back_whole)
{
	struct baseline b;
	read_ok(baseline_text(base_ev, N(base_ev), base_fn, N(base_fn)), &b);
	ck_assert_int_eq(b.has_functions, 1);
	ck_assert_str_eq(b.program, "ci_hot");
	ck_assert_str_eq(b.build_id, "5a1b");
	ck_assert_str_eq(b.pmusim, "0.9.0");
	ck_assert_int_eq(b.exit_status, 3);
	/* the arguments first, then the options in the document's order, arrays
	 * joined by commas */
	ck_assert_str_eq(b.options, "args=./ci_hot,3 cpu=skylake mhz=3000 seed=1 max_insns=0 quantum=1000000 "
				    "quantum_unit=instructions clock_start=0 env=A=1,B=2");
	ck_assert_uint_eq(b.nev, 4);
	ck_assert_str_eq(b.ev[1].name, "cycles"); /* in the document's order */
	ck_assert_uint_eq(b.ev[1].count, 250000);
	ck_assert_uint_eq(b.nfn, 4);
	/* sorted by name: checksum, init, main, parse */
	ck_assert_str_eq(b.fn[0].name, "checksum");
	ck_assert_str_eq(b.fn[1].name, "init");
	ck_assert_str_eq(b.fn[2].name, "main");
	ck_assert_str_eq(b.fn[3].name, "parse");
	ck_assert_uint_eq(b.fn[3].calls, 4);
	ck_assert_uint_eq(b.fn[3].self[1], 95000);
	ck_assert_uint_eq(b.fn[2].incl[0], 100000);
	ck_assert_uint_eq(b.fn[2].self[3], 10);
	baseline_free(&b);
}
END_TEST

/* ---- diffs ---- */

START_TEST(a_baseline_against_itself_changes_nothing)
{
	struct baseline a, b;
	const char *doc = baseline_text(base_ev, N(base_ev), base_fn, N(base_fn));
	read_ok(doc, &a);
	read_ok(doc, &b);
	struct bl_threshold th[] = {{"cycles", 0, 0, 0, 0}, {"instructions", 0, 0, 0, 0}};
	struct bl_diff d;
	ck_assert_int_eq(baseline_diff(&a, &b, "cycles", th, N(th), &d), 0);
	ck_assert_uint_eq(d.nfn, 4);
	/* every change 0: the order falls to the names */
	expect_fn(&d.fn[0], "checksum", BL_SAME, &base_fn[1], &base_fn[1]);
	expect_fn(&d.fn[1], "init", BL_SAME, &base_fn[3], &base_fn[3]);
	expect_fn(&d.fn[2], "main", BL_SAME, &base_fn[0], &base_fn[0]);
	expect_fn(&d.fn[3], "parse", BL_SAME, &base_fn[2], &base_fn[2]);
	ck_assert_uint_eq(d.nev, 4);
	for (size_t i = 0; i < d.nev; i++) {
		ck_assert_str_eq(d.ev[i].name, base_ev[i].event);
		expect_delta(d.ev[i].name, -1, &d.ev[i].d, base_ev[i].count, base_ev[i].count);
		ck_assert(d.ev[i].in_base && d.ev[i].in_new);
		ck_assert_int_eq(bl_change(&d.ev[i].d), 0);
		ck_assert_double_eq(bl_percent(&d.ev[i].d), 0);
	}
	/* a 0 % limit is not passed by a 0 % change */
	for (size_t t = 0; t < N(th); t++) {
		ck_assert_int_eq(th[t].found, 1);
		ck_assert_double_eq(th[t].got, 0);
		ck_assert_int_eq(th[t].regressed, 0);
	}
	ck_assert_int_eq(d.regressed, 0);
	bl_diff_free(&d);
	baseline_free(&a);
	baseline_free(&b);
}
END_TEST

/* Sorted by cycles: checksum (+15000) before parse (-1000, by magnitude), then
 * init and main (no self change in any kind) by name. main is BL_CHANGED by its
 * inclusive alone; init is BL_SAME. */
START_TEST(a_slowed_function_comes_first_with_exact_deltas)
{
	struct baseline a, b;
	read_ok(baseline_text(base_ev, N(base_ev), base_fn, N(base_fn)), &a);
	read_ok(baseline_text(slow_ev, N(slow_ev), slow_fn, N(slow_fn)), &b);
	struct bl_diff d;
	ck_assert_int_eq(baseline_diff(&a, &b, "cycles", NULL, 0, &d), 0);
	ck_assert_int_eq(d.sort_kind, 1);
	ck_assert_uint_eq(d.nfn, 4);
	expect_fn(&d.fn[0], "checksum", BL_CHANGED, &base_fn[1], &slow_fn[1]);
	expect_fn(&d.fn[1], "parse", BL_CHANGED, &base_fn[2], &slow_fn[2]);
	expect_fn(&d.fn[2], "init", BL_SAME, &base_fn[3], &slow_fn[3]);
	expect_fn(&d.fn[3], "main", BL_CHANGED, &base_fn[0], &slow_fn[0]);
	ck_assert_int_eq(bl_change(&d.fn[0].self[1]), 15000);
	ck_assert_int_eq(bl_change(&d.fn[0].self[0]), 3000);
	ck_assert_int_eq(bl_change(&d.fn[0].self[3]), 20);
	ck_assert_double_eq(bl_percent(&d.fn[0].self[1]), 10.0); /* 15000 of 150000 */
	ck_assert_int_eq(bl_change(&d.fn[1].self[1]), -1000);
	ck_assert_int_eq(bl_change(&d.fn[1].self[0]), -5000);
	ck_assert_double_eq_tol(bl_percent(&d.fn[1].self[1]), -100.0 / 95, 1e-9); /* -1000 of 95000 */
	for (int k = 0; k < BL_KINDS; k++) {
		ck_assert_int_eq(bl_change(&d.fn[2].self[k]), 0);
		ck_assert_int_eq(bl_change(&d.fn[2].incl[k]), 0);
		ck_assert_int_eq(bl_change(&d.fn[3].self[k]), 0);
	}
	ck_assert_int_eq(bl_change(&d.fn[3].incl[1]), 14000); /* main: 250000 -> 264000 */
	ck_assert_int_eq(bl_change(&d.fn[3].incl[0]), -2000);
	/* the events, in the base's order */
	ck_assert_uint_eq(d.nev, 4);
	ck_assert_str_eq(d.ev[1].name, "cycles");
	ck_assert_int_eq(bl_change(&d.ev[1].d), 14000);
	ck_assert_double_eq_tol(bl_percent(&d.ev[1].d), 5.6, 1e-9); /* 14000 of 250000 */
	ck_assert_int_eq(bl_change(&d.ev[0].d), -2000);
	ck_assert_int_eq(bl_change(&d.ev[2].d), 0);
	bl_diff_free(&d);
	baseline_free(&a);
	baseline_free(&b);
}
END_TEST

/* The same two runs sorted by instructions: parse (-5000) before checksum
 * (+3000); then init and main by name. */
START_TEST(the_sort_kind_decides_the_order)
{
	struct baseline a, b;
	read_ok(baseline_text(base_ev, N(base_ev), base_fn, N(base_fn)), &a);
	read_ok(baseline_text(slow_ev, N(slow_ev), slow_fn, N(slow_fn)), &b);
	struct bl_diff d;
	ck_assert_int_eq(baseline_diff(&a, &b, "instructions", NULL, 0, &d), 0);
	ck_assert_uint_eq(d.nfn, 4);
	ck_assert_str_eq(d.fn[0].name, "parse");
	ck_assert_str_eq(d.fn[1].name, "checksum");
	ck_assert_str_eq(d.fn[2].name, "init");
	ck_assert_str_eq(d.fn[3].name, "main");
	bl_diff_free(&d);
	/* by branch-misses: checksum (+20) alone changed; parse next (the other
	 * kinds break the tie: |-5000| instructions) */
	ck_assert_int_eq(baseline_diff(&a, &b, "branch-misses", NULL, 0, &d), 0);
	ck_assert_str_eq(d.fn[0].name, "checksum");
	ck_assert_str_eq(d.fn[1].name, "parse");
	bl_diff_free(&d);
	baseline_free(&a);
	baseline_free(&b);
}
END_TEST

/* old_fn is gone, new_fn came; main stays. Events: cycles in both, instructions
 * only in the base, branches only in the new run.
 *   sorted by cycles: old_fn |-200|, new_fn 50, main 0 */
START_TEST(functions_added_and_removed_have_the_missing_side_0)
{
	static const struct espec ev_a[] = {{"cycles", 220}, {"instructions", 110}};
	static const struct espec ev_b[] = {{"cycles", 70}, {"branches", 7}};
	static const struct fspec fn_a[] = {{"main", 0, {10, 20, 2, 1}, {110, 220, 22, 3}},
					    {"old_fn", 2, {100, 200, 20, 2}, {100, 200, 20, 2}}};
	static const struct fspec fn_b[] = {{"main", 0, {10, 20, 2, 1}, {60, 70, 7, 1}},
					    {"new_fn", 5, {50, 50, 5, 0}, {50, 50, 5, 0}}};
	struct baseline a, b;
	read_ok(baseline_text(ev_a, N(ev_a), fn_a, N(fn_a)), &a);
	read_ok(baseline_text(ev_b, N(ev_b), fn_b, N(fn_b)), &b);
	struct bl_threshold th[] = {{"branches", 5, 0, 0, 0}, {"instructions", 5, 0, 0, 0}};
	struct bl_diff d;
	ck_assert_int_eq(baseline_diff(&a, &b, "cycles", th, N(th), &d), 0);
	ck_assert_uint_eq(d.nfn, 3);
	expect_fn(&d.fn[0], "old_fn", BL_REMOVED, &fn_a[1], NULL);
	expect_fn(&d.fn[1], "new_fn", BL_ADDED, NULL, &fn_b[1]);
	expect_fn(&d.fn[2], "main", BL_CHANGED, &fn_a[0], &fn_b[0]);
	ck_assert_double_eq(bl_percent(&d.fn[0].self[1]), -100.0);
	ck_assert(bl_percent(&d.fn[1].self[1]) >= 1e300); /* 0 -> 50: new */
	/* events: the base's, then those only in the new run */
	ck_assert_uint_eq(d.nev, 3);
	ck_assert_str_eq(d.ev[0].name, "cycles");
	ck_assert(d.ev[0].in_base && d.ev[0].in_new);
	ck_assert_str_eq(d.ev[1].name, "instructions");
	ck_assert(d.ev[1].in_base && !d.ev[1].in_new);
	expect_delta("instructions", -1, &d.ev[1].d, 110, 0);
	ck_assert_str_eq(d.ev[2].name, "branches");
	ck_assert(!d.ev[2].in_base && d.ev[2].in_new);
	expect_delta("branches", -1, &d.ev[2].d, 0, 7);
	/* an event in one file only is not found, and passes no limit */
	for (size_t t = 0; t < N(th); t++) {
		ck_assert_int_eq(th[t].found, 0);
		ck_assert_int_eq(th[t].regressed, 0);
	}
	ck_assert_int_eq(d.regressed, 0);
	bl_diff_free(&d);
	baseline_free(&a);
	baseline_free(&b);
}
END_TEST

/* ---- thresholds ---- */

/* The regression flags of one threshold on event from base to cur counts. */
static void threshold_case(const char *event, double pct, uint64_t base, uint64_t cur, double want_got,
			   int want_regressed)
{
	struct espec ea[] = {{event, base}}, eb[] = {{event, cur}};
	struct baseline a, b;
	read_ok(baseline_text(ea, 1, NULL, 0), &a);
	read_ok(baseline_text(eb, 1, NULL, 0), &b);
	ck_assert_uint_eq(a.nfn, 0);
	struct bl_threshold th = {event, pct, 0, 0, 0};
	struct bl_diff d;
	ck_assert_int_eq(baseline_diff(&a, &b, NULL, &th, 1, &d), 0);
	ck_assert_int_eq(th.found, 1);
	ck_assert_double_eq_tol(th.got, want_got, 1e-9);
	ck_assert_msg(th.regressed == want_regressed, "%s %llu -> %llu (%g %%) against %g %%: regressed %d", event,
		      (unsigned long long)base, (unsigned long long)cur, th.got, pct, th.regressed);
	ck_assert_int_eq(d.regressed, want_regressed);
	bl_diff_free(&d);
	baseline_free(&a);
	baseline_free(&b);
}

START_TEST(a_threshold_is_passed_by_more_than_its_increase)
{
	threshold_case("cycles", 1, 100000, 102000, 2.0, 1);  /* +2 % over 1 % */
	threshold_case("cycles", 1, 100000, 100500, 0.5, 0);  /* +0.5 % within */
	threshold_case("cycles", 1, 100000, 101000, 1.0, 0);  /* exactly the limit is allowed */
	threshold_case("cycles", 1, 100000, 90000, -10.0, 0); /* faster */
}
END_TEST

/* A negative limit asks for an improvement of at least that much. */
START_TEST(a_negative_threshold_requires_an_improvement)
{
	threshold_case("instructions", -1, 100000, 99500, -0.5, 1); /* only 0.5 % better */
	threshold_case("instructions", -1, 100000, 98000, -2.0, 0); /* 2 % better */
	threshold_case("instructions", -1, 100000, 100000, 0, 1);   /* no better */
}
END_TEST

/* An event counted 0 in the base and n now is 'new' (1e300): it passes any
 * limit. */
START_TEST(a_threshold_on_an_event_new_from_0_is_passed)
{
	threshold_case("branch-misses", 50, 0, 3, 1e300, 1);
	threshold_case("branch-misses", 50, 0, 0, 0, 0);
}
END_TEST

/* ---- perf stat -j ---- */

START_TEST(perf_stat_json_lines_are_events_only)
{
	static const char perf[] =
		"{\"counter-value\" : \"123456.000000\", \"unit\" : \"\", \"event\" : \"cycles\", \"event-runtime\" : "
		"1000, \"pcnt-running\" : 100.00, \"metric-value\" : \"0.000000\", \"metric-unit\" : \"GHz\"}\n"
		"\n"
		"{\"counter-value\" : \"98765.000000\", \"unit\" : \"\", \"event\" : \"instructions\", "
		"\"event-runtime\" : 1000, \"pcnt-running\" : 100.00, \"metric-value\" : \"0.800000\", \"metric-unit\" "
		": \"insn per cycle\"}\n"
		"{\"counter-value\" : 41.6, \"unit\" : \"\", \"event\" : \"branch-misses\"}\n";
	struct baseline b;
	read_ok(perf, &b);
	ck_assert_int_eq(b.has_functions, 0);
	ck_assert_uint_eq(b.nfn, 0);
	ck_assert_uint_eq(b.nev, 3);
	ck_assert_str_eq(b.ev[0].name, "cycles");
	ck_assert_uint_eq(b.ev[0].count, 123456);
	ck_assert_str_eq(b.ev[1].name, "instructions");
	ck_assert_uint_eq(b.ev[1].count, 98765);
	ck_assert_str_eq(b.ev[2].name, "branch-misses");
	ck_assert_uint_eq(b.ev[2].count, 42); /* a scaled count, rounded: 41.6 */
	ck_assert_str_eq(b.program, "");
	ck_assert_str_eq(b.options, "");
	/* one line alone is one JSON document: read the same way */
	struct baseline one;
	read_ok("{\"counter-value\" : \"7.000000\", \"unit\" : \"\", \"event\" : \"cycles\"}\n", &one);
	ck_assert_int_eq(one.has_functions, 0);
	ck_assert_uint_eq(one.nev, 1);
	ck_assert_uint_eq(one.ev[0].count, 7);
	/* diffed against each other: cycles 7 -> 123456, the others only in b */
	struct bl_threshold th = {"cycles", 10, 0, 0, 0};
	struct bl_diff d;
	ck_assert_int_eq(baseline_diff(&one, &b, NULL, &th, 1, &d), 0);
	ck_assert_uint_eq(d.nfn, 0);
	ck_assert_uint_eq(d.nev, 3);
	expect_delta("cycles", -1, &d.ev[0].d, 7, 123456);
	ck_assert_int_eq(th.found, 1);
	ck_assert_double_eq_tol(th.got, (123456.0 - 7) * 100 / 7, 1e-6);
	ck_assert_int_eq(th.regressed, 1);
	bl_diff_free(&d);
	baseline_free(&one);
	baseline_free(&b);
}
END_TEST

/* ---- refused input ---- */

/* doc is refused as err with a message that holds want (NULL: any message). */
static void refused(int line, const char *doc, int err, const char *want)
{
	struct baseline b;
	char msg[256];
	int got = read_doc(doc, &b, msg, sizeof(msg));
	ck_assert_msg(got == err, "line %d: read gave %d, expected %d (message '%s')", line, got, err, msg);
	ck_assert_msg(msg[0], "line %d: refused without a message", line);
	ck_assert_msg(!want || strstr(msg, want), "line %d: message '%s' lacks '%s'", line, msg, want);
	baseline_free(&b); /* what was read before the refusal goes too */
}
#define REFUSED(doc, err, want) refused(__LINE__, (doc), (err), (want))

START_TEST(input_that_is_no_json_is_refused)
{
	REFUSED("not JSON at all\n", PMUSIM_ERR_FORMAT, NULL);
	REFUSED("", PMUSIM_ERR_FORMAT, "no events");
	REFUSED("\n\n  \n", PMUSIM_ERR_FORMAT, "no events");
	REFUSED("[1, 2, 3]\n", PMUSIM_ERR_FORMAT, "neither");
	REFUSED("\"cycles\"\n", PMUSIM_ERR_FORMAT, "neither");
	/* a baseline cut short is no JSON (the read falls to lines, and line 1, "{",
	 * is none either) */
	char half[4096];
	const char *whole = baseline_text(base_ev, N(base_ev), base_fn, N(base_fn));
	snprintf(half, sizeof(half), "%.*s", (int)(strlen(whole) / 2), whole);
	REFUSED(half, PMUSIM_ERR_FORMAT, NULL);
	/* a line of perf stat -j followed by a line that is none */
	REFUSED("{\"counter-value\" : \"7.000000\", \"event\" : \"cycles\"}\nnope\n", PMUSIM_ERR_FORMAT, "line 2");
}
END_TEST

START_TEST(json_without_the_keys_is_refused)
{
	REFUSED("{\"name\": \"x\"}\n", PMUSIM_ERR_FORMAT, "neither");
	REFUSED("{\"pmusim_baseline\": 1, \"pmusim\": \"0.9.0\"}\n", PMUSIM_ERR_FORMAT, "\"events\"");
	REFUSED("{\"pmusim_baseline\": 1, \"program\": {\"name\": \"x\", \"args\": []}, \"events\": [], "
		"\"functions\": {}}\n",
		PMUSIM_ERR_FORMAT, "\"functions\"");
	REFUSED("{\"pmusim_baseline\": 1, \"program\": {\"name\": \"x\", \"args\": []}, \"events\": "
		"[{\"count\": 3}], \"functions\": []}\n",
		PMUSIM_ERR_FORMAT, "an event needs");
	/* a function without "inclusive", one whose self lacks "branch-misses" */
	REFUSED("{\"pmusim_baseline\": 1, \"program\": {\"name\": \"x\", \"args\": []}, \"events\": [], \"functions\": "
		"[{\"name\": \"f\", \"calls\": 1, \"self\": {\"instructions\": 1, \"cycles\": 1, \"branches\": 1, "
		"\"branch-misses\": 1}}]}\n",
		PMUSIM_ERR_FORMAT, "a function needs");
	REFUSED("{\"pmusim_baseline\": 1, \"program\": {\"name\": \"x\", \"args\": []}, \"events\": [], \"functions\": "
		"[{\"name\": \"f\", \"calls\": 1, \"self\": {\"instructions\": 1, \"cycles\": 1, \"branches\": 1}, "
		"\"inclusive\": {\"instructions\": 1, \"cycles\": 1, \"branches\": 1, \"branch-misses\": 1}}]}\n",
		PMUSIM_ERR_FORMAT, "a function needs");
	/* perf stat -j lines without a counter-value, or an uncounted one */
	REFUSED("{\"event\" : \"cycles\"}\n{\"event\" : \"instructions\"}\n", PMUSIM_ERR_FORMAT, "counter-value");
	REFUSED("{\"counter-value\" : \"<not counted>\", \"event\" : \"cycles\"}\n", PMUSIM_ERR_FORMAT, "no count");
}
END_TEST

/* Counts must be whole, non-negative numbers. */
START_TEST(a_count_that_is_not_whole_is_refused)
{
	static const char *const counts[] = {"1.5", "-3", "\"12\"", "1e3", "null", "18446744073709551616"};
	for (size_t i = 0; i < N(counts); i++) {
		char doc[512];
		snprintf(doc, sizeof(doc),
			 "{\"pmusim_baseline\": 1, \"program\": {\"name\": \"x\", \"args\": []}, \"events\": "
			 "[{\"event\": \"cycles\", \"count\": %s}], \"functions\": []}\n",
			 counts[i]);
		REFUSED(doc, PMUSIM_ERR_FORMAT, "whole \"count\"");
		snprintf(doc, sizeof(doc),
			 "{\"pmusim_baseline\": 1, \"program\": {\"name\": \"x\", \"args\": []}, \"events\": [], "
			 "\"functions\": [{\"name\": \"f\", \"calls\": %s, "
			 "\"self\": {\"instructions\": 1, \"cycles\": 1, \"branches\": 1, \"branch-misses\": 1}, "
			 "\"inclusive\": {\"instructions\": 1, \"cycles\": 1, \"branches\": 1, "
			 "\"branch-misses\": 1}}]}\n",
			 counts[i]);
		REFUSED(doc, PMUSIM_ERR_FORMAT, "whole counts");
	}
	/* perf stat -j: a negative count */
	REFUSED("{\"counter-value\" : \"-4.000000\", \"event\" : \"cycles\"}\n", PMUSIM_ERR_FORMAT, "no count");
}
END_TEST

START_TEST(two_functions_of_one_name_are_refused)
{
	static const struct fspec twice[] = {{"main", 0, {1, 1, 1, 1}, {2, 2, 2, 2}},
					     {"dup", 1, {1, 1, 0, 0}, {1, 1, 0, 0}},
					     {"dup", 2, {3, 3, 0, 0}, {3, 3, 0, 0}}};
	REFUSED(baseline_text(base_ev, 1, twice, N(twice)), PMUSIM_ERR_FORMAT, "two functions of one name");
}
END_TEST

START_TEST(a_file_that_cannot_be_read_is_an_io_error)
{
	/* a name that surely does not exist: made, then removed */
	char path[] = "/tmp/bldiff-unit.XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	unlink(path);
	struct baseline b;
	char msg[256] = "";
	ck_assert_int_eq(baseline_read(path, &b, msg, sizeof(msg)), PMUSIM_ERR_IO);
	ck_assert_str_eq(msg, "No such file or directory");
	baseline_free(&b);
	msg[0] = 0;
	ck_assert_int_eq(baseline_read("/", &b, msg, sizeof(msg)), PMUSIM_ERR_IO); /* a directory */
	ck_assert(msg[0]);
	baseline_free(&b);
}
END_TEST

/* "program" without "args" is read: its options are then the options alone
 * (no "args=" in front). */
START_TEST(a_program_without_args_reads_with_the_options_alone)
{
	struct baseline b;
	read_ok("{\"pmusim_baseline\": 1, \"program\": {\"name\": \"x\"}, \"options\": {\"seed\": 7}, "
		"\"events\": [], \"functions\": []}\n",
		&b);
	ck_assert_int_eq(b.has_functions, 1);
	ck_assert_str_eq(b.program, "x");
	ck_assert_str_eq(b.build_id, "");
	ck_assert_str_eq(b.options, "seed=7");
	ck_assert_uint_eq(b.nev + b.nfn, 0);
	baseline_free(&b);
}
END_TEST

/* ---- bl_percent, bl_change, bl_kind_of ---- */

START_TEST(percent_edges)
{
	ck_assert_double_eq(bl_percent(&(struct bl_delta){0, 0}), 0);
	ck_assert(bl_percent(&(struct bl_delta){0, 1}) >= 1e300);
	ck_assert(bl_percent(&(struct bl_delta){0, UINT64_MAX}) >= 1e300);
	ck_assert_double_eq(bl_percent(&(struct bl_delta){200, 100}), -50.0);
	ck_assert_double_eq(bl_percent(&(struct bl_delta){100, 150}), 50.0);
	ck_assert_double_eq(bl_percent(&(struct bl_delta){5, 0}), -100.0);
	ck_assert_double_eq(bl_percent(&(struct bl_delta){7, 7}), 0);
	ck_assert_int_eq(bl_change(&(struct bl_delta){200, 100}), -100);
	ck_assert_int_eq(bl_change(&(struct bl_delta){100, 250}), 150);
}
END_TEST

START_TEST(kind_names)
{
	ck_assert_int_eq(bl_kind_of("instructions"), 0);
	ck_assert_int_eq(bl_kind_of("cycles"), 1);
	ck_assert_int_eq(bl_kind_of("branches"), 2);
	ck_assert_int_eq(bl_kind_of("branch-misses"), 3);
	ck_assert_int_eq(bl_kind_of("Cycles"), -1);
	ck_assert_int_eq(bl_kind_of(""), -1);
	ck_assert_str_eq(bl_kind_name[3], "branch-misses");
}
END_TEST

static void teardown(void)
{
	free(text);
	text = NULL;
	text_len = 0;
}

int main(void)
{
	Suite *s = suite_create("baseline_diff");
	TCase *tc = tcase_create("baseline_diff");
	tcase_add_checked_fixture(tc, NULL, teardown);
	tcase_add_test(tc, a_baseline_reads_back_whole);
	tcase_add_test(tc, a_baseline_against_itself_changes_nothing);
	tcase_add_test(tc, a_slowed_function_comes_first_with_exact_deltas);
	tcase_add_test(tc, the_sort_kind_decides_the_order);
	tcase_add_test(tc, functions_added_and_removed_have_the_missing_side_0);
	tcase_add_test(tc, a_threshold_is_passed_by_more_than_its_increase);
	tcase_add_test(tc, a_negative_threshold_requires_an_improvement);
	tcase_add_test(tc, a_threshold_on_an_event_new_from_0_is_passed);
	tcase_add_test(tc, perf_stat_json_lines_are_events_only);
	tcase_add_test(tc, input_that_is_no_json_is_refused);
	tcase_add_test(tc, json_without_the_keys_is_refused);
	tcase_add_test(tc, a_count_that_is_not_whole_is_refused);
	tcase_add_test(tc, two_functions_of_one_name_are_refused);
	tcase_add_test(tc, a_file_that_cannot_be_read_is_an_io_error);
	tcase_add_test(tc, a_program_without_args_reads_with_the_options_alone);
	tcase_add_test(tc, percent_edges);
	tcase_add_test(tc, kind_names);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
