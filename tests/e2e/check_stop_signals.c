/* How a run ends when pmusim gets SIGTERM, SIGHUP or SIGINT: at any moment, also while
 * the program waits in a host call (a read or poll of a pipe nobody writes, the open of
 * a FIFO nobody opens for writing; workloads/waits.c), pmusim stops within a second,
 * writes a complete recording that perf script reads, says "interrupted (SIGx)" on one
 * line and exits 128+N, as perf record does. */
#include <check.h>
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

START_TEST(stop_signal_leaves_a_readable_recording)
{
	const char *mode = modes[_i / 3];
	int sig = sigs[_i % 3];
	const char *data = tmp_path_kept("stop.data"), *err = tmp_path_kept("stop.err");
	const char *fifo = tmp_path_kept("stop.fifo");
	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	unlink(data);
	int in[2];
	ck_assert_int_eq(pipe(in), 0); /* the program's stdin: nobody writes */
	pid_t pid = fork();
	if (pid == 0) {
		dup2(in[0], 0);
		close(in[0]), close(in[1]);
		freopen(err, "w", stderr);
		execl(pmusim(), pmusim(), "record", "-q", "-o", data, "--", wl("waits"), mode, fifo, (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	usleep(1500000); /* the program is past its loop and waits */
	ck_assert_int_eq(kill(pid, sig), 0);
	int st = 0;
	double t0 = now();
	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (now() - t0 > 5) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			ck_abort_msg("%s SIG%s: still running 5 s after the signal", mode, sigabbrev_np(sig));
		}
		usleep(10000);
	}
	double took = now() - t0;
	close(in[1]);
	unlink(fifo);
	char *e = slurp(err, NULL);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 128 + sig, "%s SIG%s: status %d: %s", mode,
		      sigabbrev_np(sig), st, e);
	/* The bound is the release build's (it stops in about 40 ms); the ASan build's own
	 * teardown (freeing the engine, the leak check) takes up to 2 s on a busy 2-core machine. */
	double bound = e2e_sanitized() ? 5.0 : 1.0;
	ck_assert_msg(took < bound, "%s SIG%s: %.2f s to stop (bound %.0f s)", mode, sigabbrev_np(sig),
		      took, bound);
	char want[64];
	snprintf(want, sizeof(want), "pmusim: interrupted (SIG%s) after ", sigabbrev_np(sig));
	ck_assert_msg(strncmp(e, want, strlen(want)) == 0 && strchr(e, '\n') == e + strlen(e) - 1,
		      "%s SIG%s: stderr: %s", mode, sigabbrev_np(sig), e);
	free(e);
	char *const script[] = {"perf", "script", "-i", (char *)data, NULL};
	int sst;
	char *out = run_capture(script, &sst);
	ck_assert_msg(sst == 0 && out && strstr(out, "waits"), "%s SIG%s: perf script: exit %d", mode,
		      sigabbrev_np(sig), sst);
	free(out);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("stop_signals");
	TCase *tc = tcase_create("stop_signals");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, stop_signal_leaves_a_readable_recording, 0, 12);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
