/* Threads, signals and processes against the real thing: programs of this
 * machine and the pthreads/signals workloads print the same and exit the same
 * under pmusim as natively; runs are reproducible whatever the scheduling
 * quantum; recordings carry every thread and process as `perf record` with
 * inheritance writes them, and perf 6.1 reads them. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

struct task_case {
	int line;
	const char *prog;     /* workload name, or absolute path */
	const char *args[4];
	const char *quantum;  /* NULL: the default */
};

static const struct task_case cases[] = {
	{__LINE__, "threads", {0}, NULL},
	{__LINE__, "threads", {0}, "997"},
	{__LINE__, "threads", {0}, "2500c"},
	{__LINE__, "signals", {0}, NULL},
	{__LINE__, "/bin/sh", {"-c", "seq 1000 | sort -r | head"}, NULL},
	{__LINE__, "/bin/sh", {"-c", "seq 30000 | gzip -9 | gunzip | sha256sum"}, NULL},
	{__LINE__, "/bin/sh", {"-c", "seq 20000 | gzip -c > $TMPDIR_GZ; gunzip -c $TMPDIR_GZ | tail -2"}, NULL},
	{__LINE__, "/bin/sh", {"-c", "sh -c 'kill -9 $$'; echo status $?; (exit 7); echo $?"}, NULL},
	{__LINE__, "/bin/sh", {"-c", "sleep 5 & kill $!; wait $!; echo killed $?"}, NULL},
	{__LINE__, "/bin/sh", {"-c", "for i in 1 2 3; do echo $i & wait; done; x=$(echo sub | tr a-z A-Z); echo $x"}, NULL},
	{__LINE__, "/bin/sh", {"-c", "cat /etc/hostname /nonexistent 2>/dev/null; echo $?"}, NULL},
	{__LINE__, "/bin/busybox", {"sh", "-c", "echo a b c | busybox tr a-c x-z | busybox wc -c"}, NULL},
	/* more processes, one after another, than the machine has slots: reaped ones are reused */
	{__LINE__, "/bin/sh", {"-c", "for i in $(seq 260); do /bin/true; done; echo done"}, NULL},
};

START_TEST(native_and_pmusim_agree)
{
	const struct task_case *c = &cases[_i];
	const char *prog = c->prog[0] == '/' ? c->prog : wl(c->prog);
	char gz[600];
	snprintf(gz, sizeof(gz), "TMPDIR_GZ=%s", tmp_path("round.gz"));
	putenv(gz);
	char *nargv[8] = {(char *)prog}, *sargv[16] = {(char *)pmusim(), "run"};
	int k = 2;
	if (c->quantum) {
		sargv[k++] = "--quantum";
		sargv[k++] = (char *)c->quantum;
	}
	sargv[k++] = "--";
	sargv[k++] = (char *)prog;
	for (int i = 0; i < 4 && c->args[i]; i++) {
		nargv[1 + i] = (char *)c->args[i];
		sargv[k++] = (char *)c->args[i];
	}
	const char *nout = tmp_path("n.out"), *sout = tmp_path("s.out"), *serr = tmp_path("s.err");
	int ns = run_cmd(nargv, NULL, nout, NULL);
	int ss = run_cmd(sargv, NULL, sout, serr);
	char *a = slurp(nout, NULL), *b = slurp(sout, NULL), *e = slurp(serr, NULL);
	ck_assert_msg(ns == ss, "line %d: exit status native %d, pmusim %d; pmusim stderr: %s", c->line, ns, ss, e);
	ck_assert_msg(a && b && strlen(a) > 0 && strcmp(a, b) == 0, "line %d: stdout differs:\nnative: %s\npmusim: %s",
		      c->line, a, b);
	free(a), free(b), free(e);
}
END_TEST

/* Same program and quantum: the same instruction stream, so the same exact
 * truth, run after run; the threads really interleave (a small quantum gives
 * other counts than the default one). */
START_TEST(threads_are_deterministic)
{
	const char *t1 = tmp_path("t1.fdata"), *t2 = tmp_path("t2.fdata"), *t3 = tmp_path("t3.fdata");
	char *a[] = {(char *)pmusim(), "run", "--quantum", "1500", "--truth", (char *)t1, "--",
		     (char *)wl("threads"), NULL};
	char *b[] = {(char *)pmusim(), "run", "--quantum", "1500", "--truth", (char *)t2, "--",
		     (char *)wl("threads"), NULL};
	char *c[] = {(char *)pmusim(), "run", "--truth", (char *)t3, "--", (char *)wl("threads"), NULL};
	ck_assert_int_eq(run_cmd(a, NULL, "/dev/null", NULL), 0);
	ck_assert_int_eq(run_cmd(b, NULL, "/dev/null", NULL), 0);
	ck_assert_int_eq(run_cmd(c, NULL, "/dev/null", NULL), 0);
	size_t n1, n2, n3;
	char *x = slurp(t1, &n1), *y = slurp(t2, &n2), *z = slurp(t3, &n3);
	ck_assert_msg(x && y && n1 > 0 && n1 == n2 && memcmp(x, y, n1) == 0, "two runs gave different truths");
	ck_assert_msg(z && (n3 != n1 || memcmp(x, z, n1) != 0), "the quantum changed nothing");
	free(x), free(y), free(z);
}
END_TEST

/* Counts perf script lines holding needle. */
static int count_lines(const char *text, const char *needle)
{
	int n = 0;
	for (const char *p = text; p && (p = strstr(p, needle)); p += strlen(needle))
		n++;
	return n;
}

/* perf script -F brstackinsn walks every sample's LBR through the code and
 * finds no entry the code contradicts. */
static void lbr_consistent(const char *data)
{
	int st;
	char *b[] = {"perf", "script", "-i", (char *)data, "-F", "ip,brstackinsn", NULL};
	char *out = run_capture(b, &st);
	ck_assert_msg(st == 0 && out && strlen(out) > 1000 && !strstr(out, "mismatch of LBR data"),
		      "brstackinsn found a mismatch");
	free(out);
}

/* A threaded recording: a FORK record per thread, samples of every thread
 * under the one pid, and an LBR that perf finds consistent with the code on
 * every sample (it is emptied at each context switch, as Linux does). */
START_TEST(threads_recording)
{
	const char *data = tmp_path("thr.data");
	char *r[] = {(char *)pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "997", "-b",
		     "--quantum", "5000", "--clear-env", "-o", (char *)data, "--", (char *)wl("threads"), NULL};
	ck_assert_int_eq(run_cmd(r, NULL, "/dev/null", tmp_path("thr.err")), 0);
	int st;
	char *a[] = {"perf", "script", "-i", (char *)data, "--show-task-events", "-F", "pid,tid", NULL};
	char *out = run_capture(a, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(count_lines(out, "PERF_RECORD_FORK(1000:"), 7);
	for (int tid = 1000; tid <= 1007; tid++) {
		char needle[32];
		snprintf(needle, sizeof(needle), " 1000/%d", tid);
		ck_assert_msg(count_lines(out, needle) > 0, "no samples of thread %d", tid);
	}
	free(out);
	lbr_consistent(data);
}
END_TEST

/* A shell pipeline: each process has its pid, comm (COMM exec records),
 * mappings and samples; perf resolves their symbols in their own address
 * spaces and finds every LBR consistent. */
START_TEST(pipeline_recording)
{
	const char *data = tmp_path("pipe.data");
	char *r[] = {(char *)pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "499", "-b", "-o",
		     (char *)data, "--", "/bin/sh", "-c", "seq 3000 | sort -r | head -3", NULL};
	ck_assert_int_eq(run_cmd(r, NULL, "/dev/null", tmp_path("pipe.err")), 0);
	int st;
	char *a[] = {"perf", "script", "-i", (char *)data, "--show-task-events", "-F", "comm,pid,tid,ip,dso", NULL};
	char *out = run_capture(a, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_int_eq(count_lines(out, "PERF_RECORD_FORK("), 3);
	ck_assert_int_eq(count_lines(out, "PERF_RECORD_COMM exec: "), 3);
	ck_assert_int_eq(count_lines(out, "PERF_RECORD_EXIT("), 3);
	static const char *const want[] = {"seq  1001/1001", "sort  1002/1002", "head  1003/1003"};
	for (int i = 0; i < 3; i++)
		ck_assert_msg(count_lines(out, want[i]) > 1, "no samples of %s: %.600s", want[i], out);
	ck_assert_msg(count_lines(out, "(/usr/bin/sort)") > 0, "sort's own code has no samples");
	free(out);
	lbr_consistent(data);
	/* the profiler takes the samples of the process while it runs the program
	 * it is asked about (not before its execve), as many as perf script shows */
	char *c[] = {"perf", "script", "-i", (char *)data, "-F", "comm,pid", NULL};
	out = run_capture(c, &st);
	int nsort = count_lines(out, "sort  1002");
	free(out);
	char *d[] = {(char *)pmusim(), "report", "-i", (char *)data, "--binary", "/usr/bin/sort", NULL};
	out = run_capture(d, &st);
	int n = -1;
	ck_assert_msg(st == 0 && out && sscanf(out, "# method cbt: %d samples", &n) == 1, "report: %.300s", out);
	ck_assert_int_gt(nsort, 20);
	ck_assert_int_eq(n, nsort);
	free(out);
}
END_TEST

/* The truth covers the program pmusim started, not its children: a child
 * that works 1000 times longer leaves the parent's count nearly unchanged. */
START_TEST(truth_is_the_started_program)
{
	const char *j1 = tmp_path("small.json"), *j2 = tmp_path("large.json");
	char *a[] = {(char *)pmusim(), "run", "--truth-json", (char *)j1, "--", "/bin/sh", "-c",
		     "seq 100 > /dev/null; true", NULL};
	char *b[] = {(char *)pmusim(), "run", "--truth-json", (char *)j2, "--", "/bin/sh", "-c",
		     "seq 100000 > /dev/null; true", NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL), 0);
	ck_assert_int_eq(run_cmd(b, NULL, NULL, NULL), 0);
	long long x = truth_instructions(j1), y = truth_instructions(j2);
	ck_assert_msg(x > 10000 && y > 10000 && llabs(x - y) < 2000,
		      "the shell's truth: %lld and %lld instructions", x, y);
}
END_TEST

/* A build tool: Debian's gcc driver runs cc1, as, collect2 and ld as child
 * processes (vfork/posix_spawn, pipes, files, chmod) under pmusim and writes
 * the same executable, byte for byte, as natively; it runs. */
START_TEST(gcc_builds_the_same_binary)
{
	const char *src = tmp_path("hello.c"), *nbin = tmp_path("hello.native"), *sbin = tmp_path("hello.sim");
	FILE *f = fopen(src, "w");
	fputs("#include <stdio.h>\nint main(void) { puts(\"built under pmusim\"); return 0; }\n", f);
	fclose(f);
	char *n[] = {"/usr/bin/gcc", "-O1", "-o", (char *)nbin, (char *)src, NULL};
	char *s[] = {(char *)pmusim(), "run", "--", "/usr/bin/gcc", "-O1", "-o", (char *)sbin, (char *)src, NULL};
	ck_assert_int_eq(run_cmd(n, NULL, NULL, NULL), 0);
	ck_assert_int_eq(run_cmd(s, NULL, NULL, tmp_path("gcc.err")), 0);
	size_t ln, ls;
	char *a = slurp(nbin, &ln), *b = slurp(sbin, &ls);
	ck_assert_msg(a && b && ln > 1000 && ln == ls && memcmp(a, b, ln) == 0,
		      "gcc under pmusim wrote another executable (%zu and %zu bytes)", ln, ls);
	free(a), free(b);
	char *r[] = {(char *)sbin, NULL};
	int st;
	char *out = run_capture(r, &st);
	ck_assert_msg(st == 0 && out && strcmp(out, "built under pmusim\n") == 0, "it printed: %s", out);
	free(out);
}
END_TEST

/* Every thread waits and nothing can wake one: Linux would hang; pmusim ends
 * with exit status 125 and one line naming the deadlock. */
START_TEST(deadlock_is_reported)
{
	const char *err = tmp_path("dl.err");
	char *a[] = {(char *)pmusim(), "run", "--", (char *)wl("deadlock"), NULL};
	ck_assert_int_eq(run_cmd(a, NULL, "/dev/null", err), 125);
	char *e = slurp(err, NULL);
	ck_assert_msg(e && strstr(e, "pmusim: deadlock: all 2 threads wait") && strchr(e, '\n') == e + strlen(e) - 1,
		      "stderr: %s", e);
	free(e);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("tasks");
	TCase *tc = tcase_create("tasks");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, native_and_pmusim_agree, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, threads_are_deterministic);
	tcase_add_test(tc, threads_recording);
	tcase_add_test(tc, pipeline_recording);
	tcase_add_test(tc, truth_is_the_started_program);
	tcase_add_test(tc, deadlock_is_reported);
	suite_add_tcase(s, tc);
	/* cc1 runs a few seconds natively-built, minutes in the sanitizer build: the
	 * release run's alone */
	if (!e2e_sanitized()) {
		TCase *build = tcase_create("build");
		tcase_set_timeout(build, 300);
		tcase_add_test(build, gcc_builds_the_same_binary);
		suite_add_tcase(s, build);
	}
	return run_suite(s);
}
