/* pmusim record -g / --call-graph: a callchain in every sample of the sampled
 * events, checked against references that share nothing with the thread-stack
 * unit:
 *  - perf 6.1's own DWARF unwinder: the same deterministic run recorded with
 *    -g (the unit's stacks) and with --call-graph dwarf (registers and a stack
 *    dump per sample, as perf record writes them); perf script prints both,
 *    and every frame of every sample must agree (the rule and its named
 *    exceptions: tests/e2e/stack_ref.h);
 *  - the machine's own reading of each sample's stack (its registers and
 *    memory, the truth's stack_snapshots) through pmusim validate --stacks;
 *  - for --call-graph fp, the x86-64 frame layout: in code that keeps a frame
 *    pointer, the kernel's walk finds every caller, except at a function's
 *    first instruction, where RBP is still the caller's and the walk skips
 *    the return into the caller.
 * And what a perf user does with such a recording: perf report -g. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/stack_ref.h"
#include "tests/unit/run_suite.h"

/* pmusim record -e instructions -c PERIOD MODE... OPTS -- PROG; the exit status. */
static int record(const char *data, const char *prog, const char *period, const char *const *mode,
                  const char *const *opts, const char *truth)
{
	char *argv[40] = {(char *)pmusim(), "record", "-q", "--clear-env", "-e", "instructions",
	                  "-c",           (char *)period, "-o", (char *)data};
	int k = 10;
	for (int i = 0; mode[i]; i++)
		argv[k++] = (char *)mode[i];
	for (int i = 0; opts && opts[i]; i++)
		argv[k++] = (char *)opts[i];
	if (truth) {
		argv[k++] = "--truth-json";
		argv[k++] = (char *)truth;
	}
	argv[k++] = "--";
	argv[k++] = (char *)prog;
	argv[k] = NULL;
	return run_cmd(argv, NULL, NULL, tmp_path("record.err"));
}

struct cg_case {
	int line;
	const char *wl, *period, *dump;
	const char *opts[6];
	const char *alt_stack; /* the program's alternate signal stack (a symbol) */
	int status;
	long min_samples;
};

/* clang-format off */
static const struct cg_case cases[] = {
	/* four threads, 2,000-deep recursion, tail calls, longjmp, callbacks */
	{__LINE__, "callstacks", "997", "65528", {"--quantum", "997", 0}, NULL, 0, 2000},
	{__LINE__, "recursion", "211", "16384", {0}, NULL, 0, 3000},
	/* producers and consumers: mutexes, condition variables, a barrier */
	{__LINE__, "threads", "1009", "16384", {0}, NULL, 0, 2000},
	/* handlers of raise/kill, SIGSEGV on an alternate stack, SIGFPE, timers */
	{__LINE__, "signals", "101", "16384", {0}, "altstack", 128 + 15, 1000},
	/* nested signals, siglongjmp out of an alternate stack */
	{__LINE__, "sigstacks", "307", "16384", {0}, "altstack", 0, 1000},
};
/* clang-format on */

START_TEST(g_equals_perf_dwarf_unwinding)
{
	const struct cg_case *c = &cases[_i];
	const char *prog = wl(c->wl);
	char g[512], d[512], dump[32];
	snprintf(g, sizeof(g), "%s", tmp_path("g.data"));
	snprintf(d, sizeof(d), "%s", tmp_path("dwarf.data"));
	snprintf(dump, sizeof(dump), "dwarf,%s", c->dump);
	const char *mg[] = {"-g", 0}, *md[] = {"--call-graph", dump, 0};
	ck_assert_msg(record(g, prog, c->period, mg, c->opts, NULL) == c->status, "line %d: record -g",
	              c->line);
	ck_assert_msg(record(d, prog, c->period, md, c->opts, NULL) == c->status,
	              "line %d: record --call-graph %s", c->line, dump);
	struct facts fa;
	facts_read(prog, c->alt_stack, &fa);
	struct snaps a, b;
	perf_snaps_of(g, 0, "instructions", &a);
	perf_snaps_of(d, 1, "instructions", &b);
	struct tally t;
	compare(&a, &b, &fa, &t);
	printf("check_callgraph: line %d, %s: %ld samples, %ld frames compared (%ld after signal "
	       "frames), %ld mismatches; exceptions:",
	       c->line, c->wl, t.snapshots, t.frames, t.signal_frames, t.mismatches);
	for (int k = 0; k < EXC_COUNT; k++)
		printf(" %s %ld", exc_name[k], t.exc[k]);
	printf("\n");
	ck_assert_msg(t.mismatches == 0, "line %d (%s): %ld of %ld samples differ; first: %s", c->line,
	              c->wl, t.mismatches, t.snapshots, t.first);
	ck_assert_msg(t.snapshots >= c->min_samples, "line %d: %ld samples", c->line, t.snapshots);
	snaps_free(&a);
	snaps_free(&b);
	facts_free(&fa);
}
END_TEST

/* pmusim validate --stacks -i REC --truth JSON: its exit status; *mis gets the
 * mismatches it printed, *n the snapshots. */
static int validate_stacks(const char *rec, const char *truth, long *n, long *mis)
{
	char *argv[] = {(char *)pmusim(), "validate", "--stacks", "-i", (char *)rec, "--truth",
	                (char *)truth, NULL};
	int st;
	char *out = run_capture(argv, &st);
	ck_assert_ptr_nonnull(out);
	const char *p = strstr(out, "stack snapshots: ");
	ck_assert_msg(p, "validate --stacks printed: %s", out);
	long truth_n, frames, deepest;
	ck_assert_int_eq(sscanf(p,
	                        "stack snapshots: %ld recorded, %ld in the truth; %ld frames compared, "
	                        "deepest %ld; mismatches: %ld",
	                        n, &truth_n, &frames, &deepest, mis),
	                 5);
	ck_assert_int_eq(*n, truth_n);
	free(out);
	return st;
}

/* Every sample's chain against the machine's own reading of the same stack;
 * a frame-pointer walk over code without frame pointers (glibc's) must fail
 * the same check. */
START_TEST(g_equals_the_machines_stacks)
{
	static const char *const progs[] = {"callstacks", "threads", "signals", "sigstacks"};
	static const int status[] = {0, 0, 128 + 15, 0};
	char rec[512], truth[512];
	snprintf(rec, sizeof(rec), "%s", tmp_path("v.data"));
	snprintf(truth, sizeof(truth), "%s", tmp_path("v.json"));
	const char *mg[] = {"-g", 0}, *mf[] = {"--call-graph", "fp", 0};
	for (int i = 0; i < 4; i++) {
		long n, mis;
		ck_assert_int_eq(record(rec, wl(progs[i]), "1009", mg, NULL, truth), status[i]);
		ck_assert_msg(validate_stacks(rec, truth, &n, &mis) == 0 && mis == 0 && n >= 100,
		              "%s: %ld of %ld samples differ from the machine's stacks", progs[i], mis, n);
		printf("check_callgraph: %s -g: %ld samples, 0 differ from the machine's stacks\n", progs[i],
		       n);
	}
	long n, mis;
	ck_assert_int_eq(record(rec, wl("callstacks"), "1009", mf, NULL, truth), 0);
	ck_assert_int_eq(validate_stacks(rec, truth, &n, &mis), 1);
	ck_assert_msg(mis > 0, "fp through glibc matched the machine's stacks everywhere");
	/* the failed gate says so on standard error, with both numbers */
	char *argv[] = {(char *)pmusim(), "validate", "--stacks", "-i", rec, "--truth", truth, NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, tmp_path("v.out"), tmp_path("v.err")), 1);
	char *err = slurp(tmp_path("v.err"), NULL), want[128];
	snprintf(want, sizeof(want), "FAIL: %ld of %ld snapshots differ from the truth (0 allowed)\n", mis, n);
	ck_assert_msg(err && strcmp(err, want) == 0, "standard error: %s", err ? err : "");
	free(err);
	printf("check_callgraph: callstacks --call-graph fp: %ld of %ld samples differ (glibc keeps no "
	       "frame pointer)\n",
	       mis, n);
}
END_TEST

/* nm: the address of every function symbol of prog into a sorted list. */
static size_t function_starts(const char *prog, uint64_t *out, size_t max)
{
	char *argv[] = {"nm", "--defined-only", (char *)prog, NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert(st == 0 && text);
	size_t n = 0;
	for (char *l = strtok(text, "\n"); l && n < max; l = strtok(NULL, "\n")) {
		uint64_t a;
		char t;
		if (sscanf(l, "%" SCNx64 " %c", &a, &t) == 2 && (t == 't' || t == 'T'))
			out[n++] = a;
	}
	free(text);
	ck_assert_msg(n < max, "%s: more than %zu functions", prog, max);
	return n;
}

static int is_function_start(const uint64_t *f, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++)
		if (f[i] == a)
			return 1;
	return 0;
}

/* perf script prints a static program's code addresses as file offsets: the
 * executable segment's address minus its offset (readelf -l), to add back. */
static uint64_t exec_segment_delta(const char *prog)
{
	char *argv[] = {"readelf", "-lW", (char *)prog, NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert(st == 0 && text);
	uint64_t delta = 0;
	int found = 0;
	for (char *l = strtok(text, "\n"); l && !found; l = strtok(NULL, "\n")) {
		uint64_t off, va;
		if (sscanf(l, " LOAD 0x%" SCNx64 " 0x%" SCNx64, &off, &va) == 2 && strstr(l, " R E "))
			delta = va - off, found = 1;
	}
	free(text);
	ck_assert_msg(found, "%s: no executable LOAD segment", prog);
	return delta;
}

/* Whether a lies in one of recursion's functions that keep a frame pointer
 * (is_even and is_odd, tail calls turned into jumps, push none: gcc leaves a
 * function with no call out of the frame even with -fno-omit-frame-pointer). */
static int in_own_code(const char *prog, uint64_t a)
{
	static const char *const own[] = {"fib", "main"};
	static uint64_t lo[2], hi[2];
	for (int i = 0; i < 2; i++) {
		if (!hi[i])
			ck_assert_msg(symbol_range(prog, own[i], &lo[i], &hi[i]), "no %s", own[i]);
		if (a >= lo[i] && a < hi[i])
			return 1;
	}
	return 0;
}

/* recursion's own code keeps a frame pointer (-fno-omit-frame-pointer): the
 * fp chain holds the unit's frames up to main's return into glibc (which
 * keeps none; past it the walk reads whatever RBP held), but for one
 * missing frame where the thread stands at a function's first instruction. */
START_TEST(fp_walks_frame_pointer_code)
{
	const char *prog = wl("recursion");
	char g[512], f[512];
	snprintf(g, sizeof(g), "%s", tmp_path("g.data"));
	snprintf(f, sizeof(f), "%s", tmp_path("fp.data"));
	const char *mg[] = {"-g", 0}, *mf[] = {"--call-graph", "fp", 0};
	ck_assert_int_eq(record(g, prog, "211", mg, NULL, NULL), 0);
	ck_assert_int_eq(record(f, prog, "211", mf, NULL, NULL), 0);
	static uint64_t fn[1 << 16];
	uint64_t lo, hi;
	ck_assert(symbol_range(prog, "__libc_start_call_main", &lo, &hi));
	size_t nfn = function_starts(prog, fn, 1 << 16);
	uint64_t delta = exec_segment_delta(prog);
	struct snaps a, b;
	perf_snaps_of(g, 0, "instructions", &a);
	perf_snaps_of(f, 0, "instructions", &b);
	ck_assert_uint_eq(a.n, b.n);
	long compared = 0, at_entry = 0, frames = 0;
	for (size_t k = 0; k < a.na; k++)
		a.addr[k] += delta;
	for (size_t k = 0; k < b.na; k++)
		b.addr[k] += delta;
	for (size_t i = 0; i < a.n; i++) {
		const uint64_t *u = a.addr + a.s[i].first, *p = b.addr + b.s[i].first;
		size_t nu = a.s[i].n, np = b.s[i].n, end = 0;
		/* perf prints a return address minus one: compare the unit's the same way */
		for (size_t k = 1; k < nu && !end; k++)
			if (u[k] - 1 >= lo && u[k] - 1 < hi)
				end = k;
		int own = end > 0 && in_own_code(prog, u[0]);
		for (size_t k = 1; k < end && own; k++)
			own = in_own_code(prog, u[k] - 1);
		if (!own)
			continue; /* not under main, or in glibc's code (printf's) */
		ck_assert_msg(u[0] == p[0], "sample %zu: IP %" PRIx64 " and %" PRIx64, i, u[0], p[0]);
		int skip = is_function_start(fn, nfn, u[0]);
		at_entry += skip;
		for (size_t k = 1 + (size_t)skip; k <= end; k++) {
			size_t kp = k - (size_t)skip;
			ck_assert_msg(kp < np && p[kp] == u[k],
			              "sample %zu (IP %" PRIx64 "%s): frame %zu is %" PRIx64
			              " with fp, %" PRIx64 " in the unit's stack",
			              i, u[0], skip ? ", a function's entry" : "", k, kp < np ? p[kp] : 0,
			              u[k]);
			frames++;
		}
		compared++;
	}
	printf("check_callgraph: recursion --call-graph fp: %ld samples compared (%ld at a function's "
	       "entry), %ld frames, 0 mismatches\n",
	       compared, at_entry, frames);
	ck_assert_int_ge(compared, 1000);
	ck_assert_int_ge(at_entry, 10);
	snaps_free(&a);
	snaps_free(&b);
}
END_TEST

/* What a perf user types next: perf report -g shows the call graph, without a
 * warning; fib's callers are fib and main. */
START_TEST(perf_report_shows_the_call_graph)
{
	char g[512];
	snprintf(g, sizeof(g), "%s", tmp_path("g.data"));
	const char *mg[] = {"-g", 0};
	ck_assert_int_eq(record(g, wl("recursion"), "211", mg, NULL, NULL), 0);
	char *argv[] = {"perf", "report", "-i", g, "--stdio", "--no-children", "-g", "caller",
	                "--percent-limit", "5", NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, tmp_path("report.out"), tmp_path("report.err")), 0);
	char *out = slurp(tmp_path("report.out"), NULL), *err = slurp(tmp_path("report.err"), NULL);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(!err || !err[0], "perf report said: %s", err);
	ck_assert_msg(strstr(out, "[.] fib"), "no fib row: %s", out);
	ck_assert_msg(strstr(out, "--main") || strstr(out, " main\n"), "no main in the graph: %s", out);
	ck_assert_msg(strstr(out, "_start"), "the graph does not reach _start: %s", out);
	free(out);
	free(err);
}
END_TEST

/* Spellings refused with one line naming the alternative; exit 2, no file. */
START_TEST(bad_call_graphs_are_refused)
{
	static const char *const bad[][3] = {
		{"--call-graph", "lbr", "tstack"},   {"--call-graph", "foo", "tstack, dwarf"},
		{"--call-graph", "dwarf,0", "65528"}, {"--call-graph", "dwarf,70000", "65528"},
		{"--call-graph", "fp,8", "no size"},
	};
	char data[512];
	snprintf(data, sizeof(data), "%s", tmp_path("bad.data"));
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		char *argv[] = {(char *)pmusim(), "record", "-o", data, (char *)bad[i][0],
		                (char *)bad[i][1], "--", "/bin/true", NULL};
		remove(data);
		ck_assert_int_eq(run_cmd(argv, NULL, NULL, tmp_path("bad.err")), 2);
		char *err = slurp(tmp_path("bad.err"), NULL);
		ck_assert_msg(err && strstr(err, bad[i][2]) && strchr(err, '\n') == err + strlen(err) - 1,
		              "%s %s: %s", bad[i][0], bad[i][1], err ? err : "");
		free(err);
		ck_assert_msg(access(data, F_OK) != 0, "%s %s left a file", bad[i][0], bad[i][1]);
	}
	char *both[] = {(char *)pmusim(), "record", "-o", data, "--call-graph", "dwarf", "--tstack-dwarf",
	                "4096", "--", "/bin/true", NULL};
	ck_assert_int_eq(run_cmd(both, NULL, NULL, tmp_path("bad.err")), 2);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("callgraph");
	TCase *tc = tcase_create("callgraph");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, g_equals_perf_dwarf_unwinding, 0,
	                    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, g_equals_the_machines_stacks);
	tcase_add_test(tc, fp_walks_frame_pointer_code);
	tcase_add_test(tc, perf_report_shows_the_call_graph);
	tcase_add_test(tc, bad_call_graphs_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
