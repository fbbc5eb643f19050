/* How a run ends when pmusim gets SIGTERM, SIGHUP or SIGINT: at any moment, also while
 * the program waits in a host call (a read or poll of a pipe nobody writes, the open of
 * a FIFO nobody opens for writing; workloads/waits.c), pmusim stops within a second,
 * writes a complete recording that perf script reads, says "interrupted (SIGx)" on one
 * line and exits 128+N, as perf record does. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

static const char *const modes[] = {"spin", "read", "poll", "fifo"};
static const int sigs[] = {SIGTERM, SIGHUP, SIGINT};

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + t.tv_nsec / 1e9;
}

/* Runs waits MODE under pmusim record, sends sig after delay_us and checks the ending:
 * exit 128+N within the bound, one line on stderr, a recording perf script reads (with
 * samples of the program when want_samples: one stopped at once may have none). A
 * signal that comes before pmusim has set up (no output yet) may end it as by default,
 * with no recording. */
static void stop_run(const char *mode, int sig, useconds_t delay_us, int want_samples, int go_after)
{
	const char *data = tmp_path_kept("stop.data"), *err = tmp_path_kept("stop.err");
	const char *fifo = tmp_path_kept("stop.fifo"), *go = tmp_path_kept("stop.go");
	const char *name = sigabbrev_np(sig);
	unlink(fifo), unlink(go);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	unlink(data);
	int in[2];
	ck_assert_int_eq(pipe(in), 0); /* the program's stdin: nobody writes */
	/* check's handler in this process (which ends the whole test) must not run in the
	 * child before its exec: the signal waits until the child has the default action */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, sig);
	sigprocmask(SIG_BLOCK, &block, &old);
	pid_t pid = fork();
	if (pid == 0) {
		signal(sig, SIG_DFL);
		sigprocmask(SIG_SETMASK, &old, NULL);
		dup2(in[0], 0);
		close(in[0]), close(in[1]);
		freopen(err, "w", stderr);
		execl(pmusim(), pmusim(), "record", "-q", "-o", data, "--", wl("waits"), mode, fifo,
		      go_after ? go : NULL, (char *)NULL);
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &old, NULL);
	close(in[0]);
	usleep(delay_us);
	ck_assert_int_eq(kill(pid, sig), 0);
	if (go_after) /* the program goes on to the FIFO's open: after the signal, at once */
		ck_assert_int_eq(close(open(go, O_CREAT | O_WRONLY, 0600)), 0);
	int st = 0;
	double t0 = now();
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now() - t0 > 5) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			ck_abort_msg("%s SIG%s after %u ms: still running 5 s after the signal", mode, name,
				     delay_us / 1000);
		}
		usleep(10000);
	}
	double took = now() - t0;
	close(in[1]);
	unlink(fifo), unlink(go);
	struct stat dst;
	if (WIFSIGNALED(st) && WTERMSIG(st) == sig && stat(data, &dst) != 0)
		return; /* before the first output: the default action */
	char *e = slurp(err, NULL);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig, "%s SIG%s after %u ms: status %d: %s",
		      mode, name, delay_us / 1000, st, e);
	/* The bound is the release build's (it stops in about 40 ms); the ASan build's own
	 * teardown (freeing the engine, the leak check) takes up to 2 s on a busy 2-core machine. */
	double bound = e2e_sanitized() ? 5.0 : 1.0;
	ck_assert_msg(took < bound, "%s SIG%s: %.2f s to stop (bound %.0f s)", mode, name, took, bound);
	char want[64];
	snprintf(want, sizeof(want), "pmusim: interrupted (SIG%s) after ", name);
	ck_assert_msg(strncmp(e, want, strlen(want)) == 0 && strchr(e, '\n') == e + strlen(e) - 1,
		      "%s SIG%s: stderr: %s", mode, name, e);
	free(e);
	char *const script[] = {"perf", "script", "-i", (char *)data, NULL};
	int sst;
	char *out = run_capture(script, &sst);
	ck_assert_msg(sst == 0 && out, "%s SIG%s: perf script: exit %d", mode, name, sst);
	ck_assert_msg(!want_samples || strstr(out, "waits"), "%s SIG%s: no sample of waits", mode, name);
	free(out);
}

/* Each way of waiting, each signal, once the program waits. */
START_TEST(stop_signal_leaves_a_readable_recording)
{
	stop_run(modes[_i / 3], sigs[_i % 3], 1500000, 1, 0); /* the program is past its loop and waits */
}
END_TEST

/* A signal while the program makes system calls, and at once after it the open of a
 * FIFO: pmusim now checks its flag at each system call, so the open never starts. */
START_TEST(stop_signal_just_before_a_wait)
{
	stop_run("fifo", sigs[_i], 1500000, 1, 1);
}
END_TEST

/* A signal at any moment: while pmusim loads the program, while the program works (its
 * flag is polled every 2^24 instructions), as it starts to wait. Before pmusim checked
 * the flag at each system call and repeated the signal until the run returned, one
 * landing after the last check and before the FIFO's open was lost: 1 of 340 runs of
 * a stress loop hung. */
START_TEST(stop_signal_at_any_moment)
{
	stop_run("fifo", SIGTERM, (useconds_t)_i * 20000, 0, 0);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("stop_signals");
	TCase *tc = tcase_create("stop_signals");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, stop_signal_leaves_a_readable_recording, 0, 12);
	tcase_add_loop_test(tc, stop_signal_just_before_a_wait, 0, 3);
	tcase_add_loop_test(tc, stop_signal_at_any_moment, 0, 25);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
