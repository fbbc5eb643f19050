/* The thread-stack unit end to end: `pmusim record --tstack` on
 * workloads/callstacks (deep recursion overflowing small work areas, mutual
 * recursion, tail calls, longjmp, callbacks, three threads), on signal
 * handlers (workloads/sigstacks) and on real programs (a shell pipeline that
 * forks and executes, dynamic gzip), then `pmusim validate --stacks` against
 * the machine's own reading of every thread's stack at each snapshot (the
 * truth: return-address slots still holding their addresses): zero
 * mismatches, in every mode; markers repair retpolines and the get-PC idiom.
 * The truth is the machine's self-check, not the reference: the reference for
 * every frame is perf's own DWARF unwinder, in check_tstack_dwarf. perf
 * script and perf report -g read the callchains. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* pmusim record --tstack ... -- prog args; stdout to out (NULL: /dev/null). The
 * program gets an empty environment, so that where snapshots fall does not
 * depend on the host's. */
static int record(const char *data, const char *json, const char *const *opts, const char *const *prog,
		  const char *out)
{
	char *argv[48] = {(char *)pmusim(), "record", "--tstack", "--clear-env", "-o", (char *)data};
	int k = 6;
	if (json) {
		argv[k++] = "--truth-json";
		argv[k++] = (char *)json;
	}
	for (int i = 0; opts && opts[i]; i++)
		argv[k++] = (char *)opts[i];
	argv[k++] = "--";
	for (int i = 0; prog[i]; i++)
		argv[k++] = (char *)prog[i];
	argv[k] = NULL;
	return run_cmd(argv, NULL, out ? out : "/dev/null", tmp_path("record.err"));
}

struct check {
	long snapshots, truth_snapshots, mismatches, frames, max_depth;
};

static struct check validate(const char *data, const char *json, int *status)
{
	char *v[] = {(char *)pmusim(), "validate", "--stacks", "-i", (char *)data, "--truth", (char *)json,
		     "--format", "json", NULL};
	char *out = run_capture(v, status);
	struct check c = {-1, -1, -1, -1, -1};
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(sscanf(out, "{\"snapshots\": %ld, \"truth_snapshots\": %ld, \"mismatches\": %ld, "
			     "\"frames\": %ld, \"max_depth\": %ld", &c.snapshots, &c.truth_snapshots, &c.mismatches,
			     &c.frames, &c.max_depth) == 5, "validate --stacks printed: %s", out);
	free(out);
	return c;
}

struct stack_case {
	int line;
	const char *opts[10];
	long min_snapshots, min_depth;
	int overflows;      /* the work areas must overflow */
	long depth_below;   /* the deepest snapshot is shallower than this (0: no bound) */
};

static const struct stack_case cases[] = {
	{__LINE__, {"--tstack-period", "20us", 0}, 20, 1000, 1, 0},
	/* 4-entry areas: overflow after overflow, every entry kept */
	{__LINE__, {"--tstack-period", "7us", "--tstack-threads", "all", "--tstack-area", "4", 0}, 200, 2000, 1, 0},
	{__LINE__, {"--tstack-period", "13us", "--tstack-threads", "suspended", 0}, 50, 3, 0, 0},
	/* entry/exit history drained and replayed by the tracer */
	{__LINE__, {"--tstack-period", "5us", "--tstack-mode", "history", "--tstack-threads", "all",
		    "--tstack-area", "8", 0}, 300, 2000, 1, 0},
	/* threads switching every 997 instructions */
	{__LINE__, {"--tstack-period", "3us", "--quantum", "997", "--tstack-threads", "all", 0}, 500, 2000, 1, 0},
	/* the control bit set after 100,000 instructions, inside main's 2,000-deep
	 * recursion: those calls are in no snapshot, the threads' are */
	{__LINE__, {"--tstack-period", "10us", "--tstack-start", "100000", "--tstack-threads", "all", 0}, 150, 50, 0,
	 1000},
	{__LINE__, {"--tstack-period", "10us", "--tstack-start", "100000", "--tstack-mode", "history", 0}, 50, 10, 0,
	 1000},
};

/* Snapshots equal the truth; the program's output is its native output. */
START_TEST(callstacks_match_truth)
{
	const struct stack_case *c = &cases[_i];
	const char *data = tmp_path("cs.data"), *json = tmp_path("cs.json"), *out = tmp_path("cs.out");
	const char *prog[] = {wl("callstacks"), NULL};
	ck_assert_msg(record(data, json, c->opts, prog, out) == 0, "line %d: record failed", c->line);
	char *native_argv[] = {(char *)wl("callstacks"), NULL};
	const char *nout = tmp_path("native.out");
	ck_assert_int_eq(run_cmd(native_argv, NULL, nout, NULL), 0);
	char *a = slurp(out, NULL), *b = slurp(nout, NULL);
	ck_assert_msg(a && b && strcmp(a, b) == 0, "line %d: output differs: '%s' vs '%s'", c->line, a, b);
	free(a);
	free(b);
	int st;
	struct check k = validate(data, json, &st);
	ck_assert_msg(st == 0 && k.mismatches == 0, "line %d: %ld mismatches", c->line, k.mismatches);
	ck_assert_msg(k.snapshots == k.truth_snapshots && k.snapshots >= c->min_snapshots,
		      "line %d: %ld snapshots, %ld in the truth", c->line, k.snapshots, k.truth_snapshots);
	ck_assert_msg(k.max_depth >= c->min_depth && (!c->depth_below || k.max_depth < c->depth_below),
		      "line %d: deepest %ld frames", c->line, k.max_depth);
	char *err = slurp(tmp_path("record.err"), NULL);
	long snaps = -1, frames = -1, overflows = -1;
	const char *line = err ? strstr(err, "stack snapshots") : NULL;
	ck_assert_ptr_nonnull(line);
	while (line > err && line[-1] != '[')
		line--;
	ck_assert_int_eq(sscanf(line, " pmusim record: %ld stack snapshots, %ld frames, %ld work-area overflows",
				&snaps, &frames, &overflows), 3);
	ck_assert_int_eq(snaps, k.snapshots);
	ck_assert_int_eq(frames, k.frames);
	ck_assert_msg(c->overflows ? overflows > 0 : overflows >= 0, "line %d: %ld overflows", c->line, overflows);
	free(err);
}
END_TEST

/* Processes: sh forks and executes (the child starts with its parent's
 * stack, execve empties it); gzip and cat are dynamic programs. */
START_TEST(processes_match_truth)
{
	const char *data = tmp_path("sh.data"), *json = tmp_path("sh.json"), *text = tmp_path("text.txt");
	const char *opts[] = {"--tstack-period", "50us", "--tstack-threads", "all", NULL};
	/* the test's own input: a file of the machine (/etc/services) is absent from a
	 * minimal Debian */
	FILE *f = fopen(text, "w");
	ck_assert_ptr_nonnull(f);
	for (int i = 0; i < 600; i++)
		fprintf(f, "service-%d\t%d/tcp\t\t# line %d of a made-up services file\n", i, 1000 + i, i);
	fclose(f);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "ls / | wc -l; gzip -c %s | gunzip | cat | wc -c", text);
	const char *prog[] = {"/bin/sh", "-c", cmd, NULL};
	ck_assert_int_eq(record(data, json, opts, prog, NULL), 0);
	int st;
	struct check k = validate(data, json, &st);
	ck_assert_msg(st == 0 && k.mismatches == 0 && k.snapshots >= 50, "%ld snapshots, %ld mismatches",
		      k.snapshots, k.mismatches);
	/* snapshots of several processes */
	char *p[] = {"perf", "script", "-i", (char *)data, "-F", "comm,event", NULL};
	char *out = run_capture(p, &st);
	ck_assert_msg(st == 0 && out && strstr(out, "gzip") && strstr(out, "sh"), "perf script: %s", out);
	free(out);
}
END_TEST

/* Retpolines: the thunk's call never returns and its ret is a jump. The
 * machine's truth does not care (it looks at the stack); the unit keeps a
 * stale frame until the thunk's ret is marked as a return, then every
 * snapshot is exact. objdump confirms the marked instruction is that ret. */
START_TEST(markers_fix_retpolines)
{
	int st;
	char *od[] = {"objdump", "-d", "--no-show-raw-insn", (char *)wl("retpoline"), NULL};
	char *dis = run_capture(od, &st);
	char *thunk = dis ? strstr(dis, "<__x86_indirect_thunk_rax>:") : NULL;
	ck_assert_ptr_nonnull(thunk);
	unsigned long long entry, at = 0;
	ck_assert_int_eq(sscanf(thunk - 17, "%llx", &entry), 1);
	char *ret = strstr(thunk, "\tret");
	ck_assert_ptr_nonnull(ret);
	while (ret > thunk && ret[-1] != '\n')
		ret--;
	ck_assert_int_eq(sscanf(ret, " %llx:", &at), 1);
	ck_assert_uint_eq(at - entry, 0x10);
	free(dis);
	const char *data = tmp_path("rp.data"), *json = tmp_path("rp.json");
	const char *prog[] = {wl("retpoline"), NULL};
	const char *plain[] = {"--tstack-period", "20us", NULL};
	ck_assert_int_eq(record(data, json, plain, prog, NULL), 0);
	struct check k = validate(data, json, &st);
	ck_assert_msg(st == 1 && k.mismatches * 2 > k.snapshots, "%ld of %ld snapshots differ without the marker",
		      k.mismatches, k.snapshots);
	const char *marked[] = {"--tstack-period", "20us", "--tstack-mark", "return:__x86_indirect_thunk_rax+0x10",
				NULL};
	ck_assert_int_eq(record(data, json, marked, prog, NULL), 0);
	k = validate(data, json, &st);
	ck_assert_msg(st == 0 && k.mismatches == 0 && k.snapshots >= 100, "%ld snapshots, %ld mismatches",
		      k.snapshots, k.mismatches);
}
END_TEST

/* Signal handlers: each delivery adds the handler's frame (returning to
 * __restore_rt) and the interrupted one (returning where the signal came);
 * the truth reads the same frames off the signal frame on the stack. The
 * workload's output is its native output. */
START_TEST(signal_frames_match_truth)
{
	const char *data = tmp_path("sg.data"), *json = tmp_path("sg.json"), *out = tmp_path("sg.out");
	const char *opts[] = {"--tstack-period", "2us", NULL};
	const char *prog[] = {wl("sigstacks"), NULL};
	ck_assert_int_eq(record(data, json, opts, prog, out), 0);
	char *native_argv[] = {(char *)wl("sigstacks"), NULL};
	const char *nout = tmp_path("native.out");
	ck_assert_int_eq(run_cmd(native_argv, NULL, nout, NULL), 0);
	char *a = slurp(out, NULL), *b = slurp(nout, NULL);
	ck_assert_msg(a && b && strcmp(a, b) == 0, "output differs: '%s' vs '%s'", a, b);
	free(a);
	free(b);
	int st;
	struct check k = validate(data, json, &st);
	ck_assert_msg(st == 0 && k.mismatches == 0 && k.snapshots >= 300, "%ld snapshots, %ld mismatches", k.snapshots,
		      k.mismatches);
	/* handlers' snapshots name __restore_rt between the handler and the interrupted function */
	char *p[] = {"perf", "script", "-i", (char *)data, "-F", "ip,sym", NULL};
	char *text = run_capture(p, &st);
	ck_assert_msg(st == 0 && text, "perf script failed");
	ck_assert_msg(strstr(text, " handler\n") && strstr(text, " __restore_rt\n\t") &&
		      strstr(strstr(text, " __restore_rt\n\t"), "interrupted_fn"), "no handler frames in:\n%.3000s", text);
	free(text);
}
END_TEST

/* "call 1f; 1: pop %reg" (workloads/getpc): the call's frame stays under the
 * calls that follow until the pop is marked as a return, a marker on an
 * instruction that is not a branch; then every snapshot is exact. objdump
 * finds the pop: the instruction a call in locate() targets right after it. */
START_TEST(markers_fix_getpc)
{
	int st;
	char *od[] = {"objdump", "-d", "--no-show-raw-insn", (char *)wl("getpc"), NULL};
	char *dis = run_capture(od, &st);
	char *fn = dis ? strstr(dis, "<locate>:") : NULL;
	ck_assert_ptr_nonnull(fn);
	unsigned long long pop = 0;
	for (char *l = strstr(fn, "\tcall"); l && !pop; l = strstr(l + 1, "\tcall")) {
		unsigned long long target, next;
		char *nl = strchr(l, '\n');
		if (sscanf(l, "\tcall %llx", &target) == 1 && nl && sscanf(nl + 1, " %llx:", &next) == 1 &&
		    next == target && strstr(nl, "pop"))
			pop = next;
	}
	ck_assert_msg(pop, "no call 1f; 1: pop in locate()");
	free(dis);
	const char *data = tmp_path("gp.data"), *json = tmp_path("gp.json");
	const char *prog[] = {wl("getpc"), NULL};
	const char *plain[] = {"--tstack-period", "5us", NULL};
	ck_assert_int_eq(record(data, json, plain, prog, NULL), 0);
	struct check k = validate(data, json, &st);
	ck_assert_msg(st == 1 && k.mismatches * 2 > k.snapshots, "%ld of %ld snapshots differ without the marker",
		      k.mismatches, k.snapshots);
	char mark[64];
	snprintf(mark, sizeof(mark), "return:%#llx", pop);
	const char *marked[] = {"--tstack-period", "5us", "--tstack-mark", mark, NULL};
	ck_assert_int_eq(record(data, json, marked, prog, NULL), 0);
	k = validate(data, json, &st);
	ck_assert_msg(st == 0 && k.mismatches == 0 && k.snapshots >= 150, "%ld snapshots, %ld mismatches",
		      k.snapshots, k.mismatches);
	/* the history mode replays the marker's record too */
	const char *hist[] = {"--tstack-period", "5us", "--tstack-mark", mark, "--tstack-mode", "history", NULL};
	ck_assert_int_eq(record(data, json, hist, prog, NULL), 0);
	k = validate(data, json, &st);
	ck_assert_msg(st == 0 && k.mismatches == 0, "history: %ld mismatches", k.mismatches);
}
END_TEST

/* perf report -g builds its call graph from the callchains. */
START_TEST(perf_report_shows_call_graph)
{
	const char *data = tmp_path("rg.data");
	const char *opts[] = {"--tstack-period", "10us", NULL};
	const char *prog[] = {wl("callstacks"), NULL};
	ck_assert_int_eq(record(data, NULL, opts, prog, NULL), 0);
	int st;
	char *r[] = {"perf", "report", "-i", (char *)data, "--stdio", "-g", "caller", "--no-children", NULL};
	char *out = run_capture(r, &st);
	const char *g = out ? strstr(out, "of event 'pmusim_tstack'") : NULL;
	ck_assert_msg(st == 0 && g, "perf report -g: %s", out);
	/* a call graph under the event: main's path down to deep, and a thread's */
	ck_assert_msg(strstr(g, "--main") || strstr(g, "main\n"), "no main in the call graph: %s", g);
	ck_assert_msg(strstr(g, "start_thread") && strstr(g, "one_round") && strstr(g, "deep"), "%s", g);
	free(out);
}
END_TEST

/* pmusim script prints the callchains as perf script does, byte for byte, in
 * several field layouts (two events, four threads, stacks 2,000 deep cut at
 * perf's 127 frames or at --max-stack). */
START_TEST(pmusim_script_prints_callchains_as_perf)
{
	char data[512]; /* tmp_path's results last 8 calls, run_capture makes more */
	snprintf(data, sizeof(data), "%s", tmp_path("ps.data"));
	const char *opts[] = {"--tstack-period", "10us", "--tstack-threads", "all", NULL};
	const char *prog[] = {wl("callstacks"), NULL};
	ck_assert_int_eq(record(data, NULL, opts, prog, NULL), 0);
	static const char *const layouts[] = {"comm,tid,time,period,event,ip,sym,symoff,dso", "tid,ip,sym",
					      "comm,tid,event,ip", "ip,sym,symoff",
					      "comm,pid,tid,time,period,event,ip,sym,symoff,dso"};
	for (size_t i = 0; i < sizeof(layouts) / sizeof(layouts[0]); i++)
		for (int deep = 0; deep < 2; deep++) {
			int st;
			char *p[] = {"perf", "script", "-i", data, "-F", (char *)layouts[i], "--max-stack",
				     deep ? "3000" : "127", NULL};
			char *q[] = {(char *)pmusim(), "script", "-i", data, "-F", (char *)layouts[i],
				     "--max-stack", deep ? "3000" : "127", NULL};
			char *a = run_capture(p, &st), *b = run_capture(q, &st);
			ck_assert_msg(a && b && strlen(a) > 1000 && strcmp(a, b) == 0, "-F %s --max-stack %s differs",
				      layouts[i], deep ? "3000" : "127");
			free(a), free(b);
		}
}
END_TEST

/* A truth that differs in one return address, or lacks a snapshot, fails. */
START_TEST(validate_finds_mismatches)
{
	const char *data = tmp_path("vm.data"), *json = tmp_path("vm.json"), *bad = tmp_path("vm.bad.json");
	const char *opts[] = {"--tstack-period", "20us", NULL};
	const char *prog[] = {wl("callstacks"), NULL};
	ck_assert_int_eq(record(data, json, opts, prog, NULL), 0);
	char *t = slurp(json, NULL);
	ck_assert_ptr_nonnull(t);
	char *p = strstr(t, "\"stack_snapshots\": [");
	ck_assert_ptr_nonnull(p);
	p = strstr(p, "\"stack\": [\"0x");
	ck_assert_ptr_nonnull(p);
	p += 13;
	*p = *p == '1' ? '2' : '1'; /* one digit of one return address */
	FILE *f = fopen(bad, "w");
	fputs(t, f);
	fclose(f);
	int st;
	struct check k = validate(data, bad, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_int_eq(k.mismatches, 1);
	/* without the last snapshot */
	char *last = strrchr(t, '{');
	char *prev = last;
	while (prev > t && *--prev != '\n')
		;
	strcpy(prev, "\n  ]\n}\n");
	f = fopen(bad, "w");
	fputs(t, f);
	fclose(f);
	k = validate(data, bad, &st);
	ck_assert_int_eq(st, 1);
	ck_assert_int_ge(k.mismatches, 1);
	ck_assert_int_eq(k.truth_snapshots + 1, k.snapshots);
	free(t);
	/* a file without snapshots, or a truth without any: exit 2 */
	char *v[] = {(char *)pmusim(), "validate", "--stacks", "-i", "/etc/passwd", "--truth", (char *)json, NULL};
	char *out = run_capture(v, &st);
	ck_assert_int_eq(st, 2);
	free(out);
}
END_TEST

/* The same run gives the same bytes; the work areas look like unmapped memory;
 * bad options fail with one line and exit 2. */
START_TEST(deterministic_invisible_and_checked_options)
{
	const char *d = tmp_path("d.data"); /* the file names its command line: the same path twice */
	const char *opts[] = {"--tstack-period", "20us", "--tstack-threads", "all", NULL};
	const char *prog[] = {wl("callstacks"), NULL};
	size_t n1, n2;
	ck_assert_int_eq(record(d, NULL, opts, prog, NULL), 0);
	char *b1 = slurp(d, &n1);
	ck_assert_int_eq(record(d, NULL, opts, prog, NULL), 0);
	char *b2 = slurp(d, &n2);
	ck_assert_msg(b1 && b2 && n1 == n2 && memcmp(b1, b2, n1) == 0, "two recordings differ");
	free(b1);
	free(b2);
	/* a read of the first work area's address: SIGSEGV, as natively */
	const char *probe[] = {wl("probe_areas"), "7e0000000000", NULL};
	ck_assert_int_eq(record(tmp_path("pr.data"), NULL, NULL, probe, NULL), 128 + 11);
	char *nat[] = {(char *)wl("probe_areas"), "7e0000000000", NULL};
	ck_assert_int_eq(run_cmd(nat, NULL, NULL, NULL), 128 + 11);
	char *err = slurp(tmp_path("record.err"), NULL);
	ck_assert_msg(err && strstr(err, "read of unmapped address 0x7e0000000000"), "%s", err);
	free(err);
	static const char *const bad[][2] = {{"--tstack-period", "0"}, {"--tstack-period", "5 parsecs"},
					     {"--tstack-threads", "some"}, {"--tstack-mode", "queue"},
					     {"--tstack-area", "0"}, {"--tstack-mark", "jump:main"},
					     {"--tstack-mark", "call:no_such_function"}, {"--tstack-dwarf", "12"}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *o[] = {bad[i][0], bad[i][1], NULL};
		ck_assert_msg(record(tmp_path("bad.data"), NULL, o, prog, NULL) == 2, "%s %s", bad[i][0], bad[i][1]);
		char *e = slurp(tmp_path("record.err"), NULL);
		ck_assert_msg(e && strchr(e, '\n') == e + strlen(e) - 1, "%s %s: '%s'", bad[i][0], bad[i][1], e);
		free(e);
	}
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("tstack_trace");
	TCase *tc = tcase_create("tstack_trace");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, callstacks_match_truth, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, processes_match_truth);
	tcase_add_test(tc, markers_fix_retpolines);
	tcase_add_test(tc, signal_frames_match_truth);
	tcase_add_test(tc, markers_fix_getpc);
	tcase_add_test(tc, perf_report_shows_call_graph);
	tcase_add_test(tc, pmusim_script_prints_callchains_as_perf);
	tcase_add_test(tc, validate_finds_mismatches);
	tcase_add_test(tc, deterministic_invisible_and_checked_options);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
