/* What a user sees of pmusim's output files, checked by running their commands:
 * an output that cannot be written fails at once with one line naming the path and the
 * system's reason, exit status 2, before the program runs (the program would leave a
 * file behind) and without leaving a temporary; two outputs on one file are refused; a
 * second recording keeps the first as FILE.old (perf record's check_backup); report's
 * files are complete when standard output closes early; the progress line shows on a
 * terminal only and changes no output byte; stat -I intervals add up to the totals. */
#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* A program that leaves a file behind when it runs: the mark that it did. */
#define MARKER_SCRIPT "echo ran > \"$0\""

/* $T stands for the test's directory, $M for the marker file the program would write. */
struct bad_case {
	int line;
	const char *argv[16];
	const char *first_line; /* of stderr, with $T substituted */
	const char *absent;     /* a path that must not exist afterwards ($T), or NULL */
};

static const struct bad_case bad_cases[] = {
    {__LINE__,
     {"run", "--truth", "/no/dir/x", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim run: cannot create /no/dir/x: No such file or directory",
     NULL},
    {__LINE__,
     {"run", "--truth-json", "$T/adir", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim run: cannot create $T/adir: Is a directory",
     NULL},
    {__LINE__,
     {"stat", "-o", "/bad/x", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim stat: cannot create /bad/x: No such file or directory",
     NULL},
    {__LINE__,
     {"stat", "-o", "$T/adir", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim stat: cannot create $T/adir: Is a directory",
     NULL},
    {__LINE__,
     {"record", "-o", "$T/adir", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim record: cannot create $T/adir: Is a directory",
     NULL},
    {__LINE__,
     {"record", "-o", "/no/dir/x", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim record: cannot create /no/dir/x: No such file or directory",
     NULL},
    {__LINE__,
     {"record", "-o", "$T/r.data", "--truth", "/no/dir/x", "--", "/bin/sh", "-c", MARKER_SCRIPT,
      "$M"},
     "pmusim record: cannot create /no/dir/x: No such file or directory",
     "$T/r.data"},
    {__LINE__,
     {"record", "-o", "$T/f", "--truth", "$T/f", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim record: -o and --truth both name $T/f (each output needs a file of its own)",
     "$T/f"},
    {__LINE__,
     {"run", "--truth", "$T/f", "--truth-json", "$T/./f", "--", "/bin/sh", "-c", MARKER_SCRIPT,
      "$M"},
     "pmusim run: --truth and --truth-json both name $T/./f (each output needs a file of its own)",
     "$T/f"},
    {__LINE__,
     {"stat", "-o", "$T/f", "--truth-json", "$T/f", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim stat: -o and --truth-json both name $T/f (each output needs a file of its own)",
     "$T/f"},
    {__LINE__,
     {"report", "-i", "$T/none.data", "-o", "/no/dir/x"},
     "pmusim report: cannot create /no/dir/x: No such file or directory",
     NULL},
    {__LINE__,
     {"validate", "-i", "$T/none.data", "--truth", "$T/none.fdata", "--svg", "/no/dir/x"},
     "pmusim validate: cannot create /no/dir/x: No such file or directory",
     NULL},
    {__LINE__,
     {"uniformity", "--seeds", "2", "--delta", "100", "-b", "--svg", "/no/dir/x", "--", "/bin/sh",
      "-c", MARKER_SCRIPT, "$M"},
     "pmusim uniformity: cannot create /no/dir/x: No such file or directory",
     NULL},
    {__LINE__,
     {"record", "-o", "-", "--", "/bin/sh", "-c", MARKER_SCRIPT, "$M"},
     "pmusim record: -o -: perf's pipe mode (perf.data as a stream) is not written; give a file, "
     "then perf script -i FILE or pmusim report -i FILE",
     NULL},
    {__LINE__,
     {"report", "--stacks", "-i", "$T/none.data", "--svg", "$T/f", "-o", "$T/f"},
     "pmusim report: -o and --svg both name $T/f (each output needs a file of its own)",
     "$T/f"},
};
#define NBAD ((int)(sizeof(bad_cases) / sizeof(bad_cases[0])))

static char test_dir[PATH_MAX], marker[PATH_MAX + 16];

static const char *subst(const char *s, char *buf, size_t n)
{
	if (strcmp(s, "$M") == 0)
		return marker;
	const char *t = strstr(s, "$T");
	if (!t)
		snprintf(buf, n, "%s", s);
	else
		snprintf(buf, n, "%.*s%s%s", (int)(t - s), s, test_dir, t + 2);
	return buf;
}

/* The first line of a file (static buffer). */
static const char *first_line(const char *path)
{
	static char line[1024];
	char *text = slurp(path, NULL);
	snprintf(line, sizeof(line), "%s", text ? text : "");
	line[strcspn(line, "\n")] = 0;
	free(text);
	return line;
}

/* Whether any name in the test directory has a temporary's ".tmp." in it. */
static int temporaries_left(void)
{
	DIR *d = opendir(test_dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += strstr(e->d_name, ".tmp.") != NULL;
	if (d)
		closedir(d);
	return n;
}

static void setup_dir(void)
{
	snprintf(test_dir, sizeof(test_dir), "%s", tmp_path("outfiles"));
	mkdir(test_dir, 0755);
	char adir[PATH_MAX + 8];
	snprintf(adir, sizeof(adir), "%s/adir", test_dir);
	mkdir(adir, 0755);
	snprintf(marker, sizeof(marker), "%s/marker", test_dir);
	unlink(marker);
}

START_TEST(bad_output_fails_before_the_program_runs)
{
	const struct bad_case *c = &bad_cases[_i];
	setup_dir();
	char bufs[16][PATH_MAX + 64], *argv[20], want[PATH_MAX + 256];
	int n = 0;
	argv[n++] = (char *)pmusim();
	for (int i = 0; c->argv[i]; i++)
		argv[n++] = (char *)subst(c->argv[i], bufs[i], sizeof(bufs[i]));
	argv[n] = NULL;
	const char *err = tmp_path("bad.err");
	int st = run_cmd(argv, NULL, NULL, err);
	subst(c->first_line, want, sizeof(want));
	ck_assert_msg(st == 2, "line %d: exit %d, want 2", c->line, st);
	ck_assert_msg(strcmp(first_line(err), want) == 0, "line %d: '%s', want '%s'", c->line,
	              first_line(err), want);
	char *text = slurp(err, NULL);
	ck_assert_msg(text && strchr(text, '\n') == text + strlen(text) - 1,
	              "line %d: more than one line: %s", c->line, text);
	free(text);
	ck_assert_msg(access(marker, F_OK) != 0, "line %d: the program ran", c->line);
	if (c->absent) {
		char a[PATH_MAX + 64];
		ck_assert_msg(access(subst(c->absent, a, sizeof(a)), F_OK) != 0,
		              "line %d: %s exists", c->line, a);
	}
	ck_assert_msg(temporaries_left() == 0, "line %d: a temporary was left", c->line);
}
END_TEST

/* The marker program does run when its outputs are fine (the cases above can fail). */
START_TEST(marker_program_runs_with_good_outputs)
{
	setup_dir();
	char truth[PATH_MAX + 16];
	snprintf(truth, sizeof(truth), "%s/t.fdata", test_dir);
	char *argv[] = {(char *)pmusim(), "run", "--truth",     truth,  "--",
	                "/bin/sh",        "-c",  MARKER_SCRIPT, marker, NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, NULL, NULL), 0);
	ck_assert_int_eq(access(marker, F_OK), 0);
	ck_assert_int_eq(access(truth, F_OK), 0);
}
END_TEST

static char *abs_path(const char *p)
{
	char *r = realpath(p, NULL);
	ck_assert_msg(r != NULL, "%s: %s", p, strerror(errno));
	return r;
}

/* perf record's rule: an existing recording becomes FILE.old; a run that fails leaves
 * both as they were. The default output, in the working directory. */
START_TEST(second_recording_keeps_the_first_as_old)
{
	setup_dir();
	char *pm = abs_path(pmusim()), *loops = abs_path(wl("loops"));
	ck_assert_int_eq(chdir(test_dir), 0);
	char *r1[] = {pm, "record", "-c", "10007", "-b", "--", loops, NULL};
	char *r2[] = {pm, "record", "-c", "20011", "-b", "--", loops, NULL};
	char *r3[] = {pm, "record", "-c", "30011", "--truth", "/no/dir/x", "--", loops, NULL};
	ck_assert_int_eq(run_cmd(r1, NULL, NULL, NULL), 0);
	ck_assert_int_eq(access("perf.data.old", F_OK), -1);
	size_t n1, n2, n3, n4;
	char *first = slurp("perf.data", &n1);
	ck_assert_int_eq(run_cmd(r2, NULL, NULL, NULL), 0);
	char *old = slurp("perf.data.old", &n2), *second = slurp("perf.data", &n3);
	ck_assert_msg(old && n2 == n1 && memcmp(old, first, n1) == 0,
	              "perf.data.old is not the first recording");
	ck_assert_msg(second && (n3 != n1 || memcmp(second, first, n1) != 0),
	              "perf.data is still the first");
	ck_assert_int_eq(run_cmd(r3, NULL, NULL, NULL), 2);
	char *after = slurp("perf.data", &n4);
	ck_assert_msg(after && n4 == n3 && memcmp(after, second, n3) == 0,
	              "a failed run changed perf.data");
	free(old), free(after);
	after = slurp("perf.data.old", &n4);
	ck_assert_msg(after && n4 == n1 && memcmp(after, first, n1) == 0,
	              "a failed run changed perf.data.old");
	free(first), free(second), free(after), free(pm), free(loops);
	unlink("perf.data"), unlink("perf.data.old");
}
END_TEST

static const char *stacks_recording(void)
{
	static char path[PATH_MAX];
	snprintf(path, sizeof(path), "%s", tmp_path("stacks.data"));
	char *s[] = {(char *)pmusim(),
	             "record",
	             "--tstack",
	             "--tstack-period",
	             "20us",
	             "-o",
	             path,
	             "--",
	             (char *)wl("callstacks"),
	             NULL};
	ck_assert_int_eq(run_cmd(s, NULL, NULL, NULL), 0);
	return path;
}

/* Runs argv with standard output a pipe whose reader is gone: the write fails with
 * EPIPE at once. Returns the exit status (128+N for signal N). */
static int run_into_closed_pipe(char *const argv[])
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	pid_t pid = fork();
	if (pid == 0) {
		dup2(p[1], 1);
		int fn = open("/dev/null", O_RDWR);
		dup2(fn, 0), dup2(fn, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	close(p[1]);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	return WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
}

/* `pmusim report --stacks --svg x.svg | head -1`: the flame graph is complete (the same
 * bytes as with standard output to a file) and pmusim exits 0, not of SIGPIPE. */
START_TEST(report_files_survive_a_closed_stdout)
{
	const char *data = stacks_recording();
	char svg[PATH_MAX], ref[PATH_MAX];
	snprintf(svg, sizeof(svg), "%s", tmp_path("closed.svg"));
	snprintf(ref, sizeof(ref), "%s", tmp_path("ref.svg"));
	char *a[] = {(char *)pmusim(), "report", "--stacks", "-i",
	             (char *)data,     "--svg",  svg,        NULL};
	char *b[] = {(char *)pmusim(), "report", "--stacks", "-i",
	             (char *)data,     "--svg",  ref,        NULL};
	ck_assert_int_eq(run_into_closed_pipe(a), 0);
	ck_assert_int_eq(run_cmd(b, NULL, tmp_path("ref.txt"), NULL), 0);
	size_t n1, n2;
	char *x = slurp(svg, &n1), *y = slurp(ref, &n2);
	ck_assert_msg(x && y && n1 == n2 && n1 > 1000 && memcmp(x, y, n1) == 0,
	              "flame graph: %zu bytes, want %zu", n1, n2);
	ck_assert_msg(strstr(x, "</svg>") != NULL, "the SVG is not complete");
	free(x), free(y);
	/* through a shell pipeline, as typed */
	char cmd[4 * PATH_MAX], out[PATH_MAX];
	snprintf(out, sizeof(out), "%s", tmp_path("head.txt"));
	unlink(svg);
	snprintf(cmd, sizeof(cmd),
	         "%s report --stacks --format folded -i %s --svg %s | head -1 > %s", pmusim(), data,
	         svg, out);
	ck_assert_int_eq(system(cmd), 0);
	x = slurp(svg, &n1);
	ck_assert_msg(x && n1 == n2, "after | head -1: %zu bytes of SVG, want %zu", x ? n1 : 0, n2);
	free(x);
	ck_assert_msg(strchr(first_line(out), ';') != NULL, "head -1 printed '%s'",
	              first_line(out));
}
END_TEST

/* validate with standard output closed: the scatter plot is whole and the exit status
 * is the gate's (a recording against its own truth passes), not SIGPIPE's. */
START_TEST(validate_with_a_closed_stdout_keeps_its_plot_and_gate)
{
	char data[PATH_MAX], truth[PATH_MAX], svg[PATH_MAX], ref[PATH_MAX];
	snprintf(data, sizeof(data), "%s", tmp_path("val.data"));
	snprintf(truth, sizeof(truth), "%s", tmp_path("val.fdata"));
	snprintf(svg, sizeof(svg), "%s", tmp_path("val.svg"));
	snprintf(ref, sizeof(ref), "%s", tmp_path("val-ref.svg"));
	char *r[] = {(char *)pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "97", "-b", "--truth", truth,
		     "-o", data, "--", (char *)wl("loops"), NULL};
	ck_assert_int_eq(run_cmd(r, NULL, NULL, NULL), 0);
	char *a[] = {(char *)pmusim(), "validate", "-i", data, "--truth", truth, "--svg", svg, NULL};
	char *b[] = {(char *)pmusim(), "validate", "-i", data, "--truth", truth, "--svg", ref, NULL};
	ck_assert_int_eq(run_into_closed_pipe(a), 0);
	ck_assert_int_eq(run_cmd(b, NULL, tmp_path("val.txt"), NULL), 0);
	size_t n1, n2;
	char *x = slurp(svg, &n1), *y = slurp(ref, &n2);
	ck_assert_msg(x && y && n1 == n2 && n1 > 1000 && memcmp(x, y, n1) == 0, "scatter plot: %zu bytes, want %zu",
	              n1, n2);
	free(x), free(y);
}
END_TEST

/* A shell loop of n iterations: some million instructions per thousand. */
static void loop_script(char *buf, size_t len, int n)
{
	snprintf(buf, len, "i=0; while [ $i -lt %d ]; do i=$((i+1)); done", n);
}

/* Runs argv with stderr on a new terminal (stdout to out); the terminal's text in *text
 * (caller frees), the wall time in *secs. Returns the exit status. */
static int run_on_terminal(char *const argv[], const char *out, char **text, double *secs)
{
	int master;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	pid_t pid = forkpty(&master, NULL, NULL, NULL);
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		/* only stderr stays on the terminal: the program's stdin and stdout are files */
		int fi = open("/dev/null", O_RDONLY),
		    fo = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fi, 0), dup2(fo, 1);
		execv(argv[0], argv);
		_exit(127);
	}
	size_t cap = 1 << 16, n = 0;
	char *buf = malloc(cap);
	for (;;) {
		if (n + 4096 > cap)
			buf = realloc(buf, cap *= 2);
		ssize_t r = read(master, buf + n, 4096);
		if (r <= 0)
			break; /* EIO once the child and its terminal are gone */
		n += (size_t)r;
	}
	buf[n] = 0;
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	close(master);
	*text = buf;
	*secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The progress line: shown on a terminal (refreshed, erased before pmusim's last
 * lines), absent with -q and when stderr is a file; the recording and the truth are the
 * same bytes in all three cases. The loop grows until a run lasts long enough for a
 * refresh (one a second) on this machine. */
START_TEST(progress_on_a_terminal_changes_no_output)
{
	char script[192], data[PATH_MAX], truth[PATH_MAX], out[PATH_MAX], err[PATH_MAX];
	snprintf(data, sizeof(data), "%s", tmp_path("progress.data"));
	snprintf(truth, sizeof(truth), "%s", tmp_path("progress.json"));
	snprintf(out, sizeof(out), "%s", tmp_path("progress.out"));
	snprintf(err, sizeof(err), "%s", tmp_path("progress.err"));
	char *term = NULL;
	double secs = 0;
	int iters = 2500; /* the ASan build passes 2.5 s within a few doublings */
	for (int tries = 0; tries < 8; tries++, iters *= 2) {
		loop_script(script, sizeof(script), iters);
		/* then the program writes to the terminal: after the line is taken off */
		strcat(script, "; echo loop-done >&2");
		char *argv[] = {(char *)pmusim(), "record", "-b", "-o",      data,
		                "--truth-json",   truth,    "--", "/bin/sh", "-c",
		                script,           NULL};
		free(term);
		ck_assert_int_eq(run_on_terminal(argv, out, &term, &secs), 0);
		if (secs > 2.5)
			break;
	}
	ck_assert_msg(secs > 2.5, "the loop ran %.1f s only", secs);
	const char *line = strstr(term, "\r\033[K[ pmusim record: ");
	ck_assert_msg(line != NULL, "no progress line in %.1f s: %s", secs, term);
	ck_assert_msg(strstr(line, " MIPS, ") && strstr(line, " samples, ") &&
	                  strstr(line, " MB written ]"),
	              "progress line: %.120s", line + 4);
	const char *done = strstr(term, "loop-done");
	ck_assert_msg(done && done - term >= 4 && memcmp(done - 4, "\r\033[K", 4) == 0,
	              "the program's text does not follow an erased line: %s", term);
	/* every line drawn is erased before anything else is written */
	for (const char *l = line; l; l = strstr(l + 1, "\r\033[K[ pmusim record: ")) {
		const char *end = strstr(l, " ]");
		ck_assert_msg(end && strncmp(end + 2, "\r\033[K", 4) == 0,
		              "the line was not erased: %.200s", l + 4);
	}
	const char *summary = strstr(term, "[ pmusim record: Captured");
	ck_assert_ptr_nonnull(summary);
	ck_assert_msg(!strstr(summary, "MIPS"), "a progress line after the end");
	size_t n1, n2, t1, t2;
	char *rec_tty = slurp(data, &n1), *truth_tty = slurp(truth, &t1);
	/* the same command with stderr into a file: no progress, the same bytes */
	char *argv[] = {(char *)pmusim(), "record", "-b",   "-o", data, "--truth-json", truth, "--",
	                "/bin/sh",        "-c",     script, NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, out, err), 0);
	char *e = slurp(err, NULL);
	ck_assert_msg(e && !strstr(e, "MIPS") && !strchr(e, '\r') &&
	                  strncmp(e, "loop-done\n", 10) == 0,
	              "progress into a file: %s", e);
	free(e);
	char *rec = slurp(data, &n2), *tr = slurp(truth, &t2);
	ck_assert_msg(rec && n1 == n2 && memcmp(rec, rec_tty, n1) == 0,
	              "perf.data differs with the progress line");
	ck_assert_msg(tr && t1 == t2 && memcmp(tr, truth_tty, t1) == 0,
	              "the truth differs with the progress line");
	free(rec), free(tr), free(term);
	/* -q on the terminal: nothing but errors */
	char *q[] = {
	    (char *)pmusim(), "record", "-q",   "-b", "-o", data, "--truth-json", truth, "--",
	    "/bin/sh",        "-c",     script, NULL};
	ck_assert_int_eq(run_on_terminal(q, out, &term, &secs), 0);
	ck_assert_msg(strcmp(term, "loop-done\r\n") == 0, "-q printed: %s", term);
	/* (the recording holds its command line, -q included: the truth is compared) */
	tr = slurp(truth, &t2);
	ck_assert_msg(tr && t1 == t2 && memcmp(tr, truth_tty, t1) == 0,
	              "the truth differs with -q");
	free(tr), free(term), free(rec_tty), free(truth_tty);
}
END_TEST

/* -v tells the events, the period and the outputs. */
START_TEST(verbose_says_what_was_set_up)
{
	char data[PATH_MAX];
	snprintf(data, sizeof(data), "%s", tmp_path("v.data"));
	char *argv[] = {(char *)pmusim(),
	                "record",
	                "-v",
	                "-e",
	                "br_inst_retired.near_taken",
	                "-c",
	                "10007",
	                "-b",
	                "-o",
	                data,
	                "--",
	                (char *)wl("loops"),
	                NULL};
	const char *err = tmp_path("v.err");
	ck_assert_int_eq(run_cmd(argv, NULL, NULL, err), 0);
	char *e = slurp(err, NULL);
	ck_assert_msg(e && strstr(e, "pmusim record: event br_inst_retired.near_taken, a sample "
	                             "every 10007 events\n"),
	              "%s", e);
	ck_assert_msg(strstr(e, "pmusim record: LBR of 32 entries"), "%s", e);
	char want[PATH_MAX + 100];
	snprintf(want, sizeof(want), "pmusim record: -o %s: ", data);
	ck_assert_msg(strstr(e, want), "%s", e);
	free(e);
}
END_TEST

/* One interval line of perf stat -I's table: "%6lu.%09lu %18s      event". */
static int parse_interval(const char *line, double *t, uint64_t *count, char *event)
{
	char num[64];
	if (sscanf(line, "%lf %63s %127s", t, num, event) != 3 || line[16] != ' ' || line[6] != '.')
		return -1;
	uint64_t v = 0;
	for (char *p = num; *p; p++)
		if (*p != ',')
			v = v * 10 + (uint64_t)(*p - '0');
	*count = v;
	return 0;
}

/* stat -I 1 --summary: lines in perf stat -I's layout, times rising, and every event's
 * intervals add up to its total exactly; the total of instructions is the truth's
 * (counted by other rules); -x, the same in CSV; no totals without --summary. */
START_TEST(stat_intervals_add_up_to_the_totals)
{
	char script[128];
	loop_script(script, sizeof(script), 2000);
	const char *json = tmp_path("iv.json"), *err = tmp_path("iv.err"),
	           *csv = tmp_path("iv.csv");
	char *argv[] = {(char *)pmusim(),
	                "stat",
	                "-I",
	                "1",
	                "--summary",
	                "-e",
	                "instructions,branches,br_inst_retired.near_taken",
	                "--truth-json",
	                (char *)json,
	                "--",
	                "/bin/sh",
	                "-c",
	                script,
	                NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, NULL, err), 0);
	char *text = slurp(err, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(strncmp(text, "#           time             counts unit events\n", 48) == 0,
	              "header: %.60s", text);
	static const char *const ev[3] = {"instructions", "branches", "br_inst_retired.near_taken"};
	uint64_t sum[3] = {0}, total[3] = {0};
	int lines = 0;
	double last_t = 0;
	for (char *l = strchr(text, '\n') + 1; l && *l;
	     l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		double t;
		uint64_t c;
		char name[128];
		if (strncmp(l, " Performance counter stats", 26) == 0 || l[0] == '\n')
			break;
		if (l[0] == '#')
			continue;
		ck_assert_msg(parse_interval(l, &t, &c, name) == 0, "not an interval line: %.80s",
		              l);
		ck_assert_str_eq(name, ev[lines % 3]);
		if (lines % 3 == 0) {
			ck_assert_msg(t > last_t, "time %.9f after %.9f", t, last_t);
			last_t = t;
		}
		sum[lines % 3] += c;
		lines++;
	}
	ck_assert_msg(lines >= 3 * 5, "%d interval lines", lines);
	ck_assert_int_eq(lines % 3, 0);
	for (int i = 0; i < 3; i++) {
		char key[160], *p;
		snprintf(key, sizeof(key), "      %s", ev[i]);
		/* the totals' table: "%18s      event" after the intervals */
		char *tab = strstr(text, "Performance counter stats");
		ck_assert_ptr_nonnull(tab);
		ck_assert_ptr_nonnull(p = strstr(tab, key));
		char *s = p;
		while (s > tab && s[-1] != '\n')
			s--;
		uint64_t v = 0;
		for (; s < p; s++)
			if (*s >= '0' && *s <= '9')
				v = v * 10 + (uint64_t)(*s - '0');
		total[i] = v;
		ck_assert_msg(sum[i] == total[i],
		              "%s: intervals add up to %" PRIu64 ", total %" PRIu64, ev[i], sum[i],
		              total[i]);
	}
	long long truth = truth_instructions(json);
	ck_assert_msg(truth > 0 && (uint64_t)truth == total[0],
	              "instructions %" PRIu64 ", truth %lld", total[0], truth);
	free(text);
	/* CSV: time,count,,event,run-time,100.00,, then the totals' lines */
	char *x[] = {(char *)pmusim(), "stat", "-I",      "1",  "--summary", "-x,", "-e",
	             "instructions",   "--",   "/bin/sh", "-c", script,      NULL};
	ck_assert_int_eq(run_cmd(x, NULL, NULL, csv), 0);
	text = slurp(csv, NULL);
	uint64_t csum = 0, ctotal = 0;
	int clines = 0;
	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		double t;
		unsigned long long c;
		if (sscanf(l, "%lf,%llu,,instructions,", &t, &c) == 2 &&
		    strchr(l, '.') < strchr(l, ','))
			csum += c, clines++;
		else if (sscanf(l, "%llu,,instructions,", &c) == 1)
			ctotal = c;
	}
	ck_assert_msg(clines >= 5 && csum == ctotal && ctotal == total[0],
	              "CSV: %d intervals, sum %" PRIu64 ", total %" PRIu64, clines, csum, ctotal);
	free(text);
	/* without --summary, as perf stat -I: the intervals only */
	char *n[] = {(char *)pmusim(), "stat", "-I",   "1", "-e", "instructions", "--",
	             "/bin/sh",        "-c",   script, NULL};
	ck_assert_int_eq(run_cmd(n, NULL, NULL, err), 0);
	text = slurp(err, NULL);
	ck_assert_msg(text && strstr(text, "instructions\n") &&
	                  !strstr(text, "Performance counter stats"),
	              "%s", text);
	free(text);
}
END_TEST

static Suite *outfiles_suite(void)
{
	Suite *s = suite_create("outfiles");
	TCase *tc = tcase_create("outfiles");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, bad_output_fails_before_the_program_runs, 0, NBAD);
	tcase_add_test(tc, marker_program_runs_with_good_outputs);
	tcase_add_test(tc, second_recording_keeps_the_first_as_old);
	tcase_add_test(tc, report_files_survive_a_closed_stdout);
	tcase_add_test(tc, validate_with_a_closed_stdout_keeps_its_plot_and_gate);
	tcase_add_test(tc, progress_on_a_terminal_changes_no_output);
	tcase_add_test(tc, verbose_says_what_was_set_up);
	tcase_add_test(tc, stat_intervals_add_up_to_the_totals);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(outfiles_suite());
}
