/* Every output option of every subcommand pointed at what is not a regular file:
 * /dev/null stays the machine's null device (a rename over it, as root, would replace it
 * with a file), /dev/stdout gets the output after what the program printed, as with a
 * shell's redirection, and a FIFO does not hold pmusim up before the program has run,
 * then receives the same bytes a regular file would. */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* One output option: the subcommand's words before and after OUT, where OUT is the
 * output's path; "$DATA" stands for the LBR recording, "$STACKS" for the callchain
 * recording and "$TRUTH" for the truth those inputs came with. */
struct out_case {
	int line;
	const char *what;
	const char *argv[16];
	int program_prints; /* the program's own output goes to stdout too */
};

#define OUT "OUT"
static const struct out_case cases[] = {
	{__LINE__, "run --truth", {"run", "--truth", OUT, "--", "@loops"}, 1},
	{__LINE__, "run --truth-json", {"run", "--truth-json", OUT, "--", "@loops"}, 1},
	{__LINE__, "stat -o", {"stat", "-o", OUT, "--", "@loops"}, 1},
	{__LINE__,
	 "record -o",
	 {"record", "-e", "br_inst_retired.near_taken", "-c", "10007", "-b", "-o", OUT, "--", "@loops"},
	 1},
	{__LINE__, "report -o", {"report", "-i", "$DATA", "-o", OUT}, 0},
	{__LINE__, "report --format json -o", {"report", "-i", "$DATA", "--format", "json", "-o", OUT}, 0},
	{__LINE__, "report --stacks --svg", {"report", "--stacks", "-i", "$STACKS", "--svg", OUT, "-o", "@null"}, 0},
	{__LINE__, "validate --svg", {"validate", "-i", "$DATA", "--truth", "$TRUTH", "--svg", OUT}, 0},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

static const char *data_file, *stacks_file, *truth_file;

/* The recordings the report and validate cases read, made once per test process. */
static void make_inputs(void)
{
	if (data_file)
		return;
	data_file = strdup(tmp_path("in.data"));
	truth_file = strdup(tmp_path("in.fdata"));
	stacks_file = strdup(tmp_path("in.stacks"));
	char *r[] = {(char *)pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "97", "-b",
		     "--truth", (char *)truth_file, "-o", (char *)data_file, "--", (char *)wl("loops"), NULL};
	ck_assert_int_eq(run_cmd(r, NULL, NULL, NULL), 0);
	char *s[] = {(char *)pmusim(), "record", "--tstack", "--tstack-period", "20us", "-o", (char *)stacks_file,
		     "--", (char *)wl("callstacks"), NULL};
	ck_assert_int_eq(run_cmd(s, NULL, NULL, NULL), 0);
}

/* The case's argv with OUT replaced by out. */
static void build_argv(const struct out_case *c, const char *out, char **argv)
{
	int n = 0;
	argv[n++] = (char *)pmusim();
	for (int i = 0; c->argv[i]; i++) {
		const char *a = c->argv[i];
		if (strcmp(a, OUT) == 0)
			a = out;
		else if (strcmp(a, "@loops") == 0)
			a = wl("loops");
		else if (strcmp(a, "@null") == 0)
			a = tmp_path("unused.txt");
		else if (strcmp(a, "$DATA") == 0)
			a = data_file;
		else if (strcmp(a, "$STACKS") == 0)
			a = stacks_file;
		else if (strcmp(a, "$TRUTH") == 0)
			a = truth_file;
		argv[n++] = (char *)a;
	}
	argv[n] = NULL;
}

/* What the case writes into a regular file (*len bytes), and what it prints on
 * standard output then (a regular file too: glibc's stdio asks isatty() only of a
 * character device, which changes the program's counts). */
static char *reference_output(const struct out_case *c, size_t *len, char **out_text, size_t *out_len)
{
	char *argv[20];
	const char *file = tmp_path("reference.out"), *out = tmp_path("reference.stdout");
	build_argv(c, file, argv);
	ck_assert_msg(run_cmd(argv, NULL, out, NULL) == 0, "line %d: %s into a file failed", c->line, c->what);
	char *text = slurp(file, len);
	*out_text = slurp(out, out_len);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(*out_text);
	unlink(file);
	unlink(out);
	return text;
}

/* perf.data holds pmusim's command line (the CMDLINE feature), which names the output:
 * recordings are compared by what perf script prints of them. */
static char *comparable(const struct out_case *c, char *bytes, size_t *len)
{
	if (strcmp(c->argv[0], "record") != 0)
		return bytes;
	const char *data = tmp_path("compare.data"), *txt = tmp_path("compare.txt");
	FILE *f = fopen(data, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, *len, f), *len);
	fclose(f);
	free(bytes);
	char *p[] = {"perf", "script", "-i", (char *)data, "-F", "event,ip,sym,brstack", NULL};
	ck_assert_int_eq(run_cmd(p, NULL, txt, NULL), 0);
	char *text = slurp(txt, len);
	ck_assert_msg(text && *len > 1000, "perf script printed %zu bytes", text ? *len : 0);
	return text;
}

START_TEST(dev_null_stays_a_device)
{
	const struct out_case *c = &cases[_i];
	make_inputs();
	struct stat before, after;
	ck_assert_int_eq(stat("/dev/null", &before), 0);
	ck_assert(S_ISCHR(before.st_mode));
	char *argv[20];
	build_argv(c, "/dev/null", argv);
	const char *err = tmp_path("null.err");
	int st = run_cmd(argv, NULL, NULL, err);
	char *e = slurp(err, NULL);
	ck_assert_msg(st == 0, "line %d: %s /dev/null: exit %d: %s", c->line, c->what, st, e);
	free(e);
	ck_assert_int_eq(stat("/dev/null", &after), 0);
	ck_assert_msg(S_ISCHR(after.st_mode) && after.st_rdev == before.st_rdev && after.st_ino == before.st_ino,
	              "line %d: %s replaced /dev/null", c->line, c->what);
	ck_assert_msg(access("/dev/null.tmp", F_OK) != 0, "a temporary beside /dev/null");
}
END_TEST

/* Standard output redirected to a file: the file holds what the command prints there
 * (the program's output, pmusim's own report) and the output, byte for byte what a
 * regular file gets, after what came before it. */
START_TEST(dev_stdout_follows_the_program_output)
{
	const struct out_case *c = &cases[_i];
	make_inputs();
	size_t rlen, slen, glen;
	char *stdout_text;
	char *ref = reference_output(c, &rlen, &stdout_text, &slen);
	const char *out = tmp_path("stdout.out");
	char *argv[20];
	build_argv(c, "/dev/stdout", argv);
	ck_assert_int_eq(run_cmd(argv, NULL, out, NULL), 0);
	char *got = slurp(out, &glen);
	ck_assert_msg(got && glen == slen + rlen, "line %d: %s: %zu bytes, want %zu + %zu", c->line, c->what,
	              glen, slen, rlen);
	/* where the output starts: after the program's output, before pmusim's closing text */
	size_t at = c->program_prints ? slen : 0;
	ck_assert_msg(memcmp(got, stdout_text, at) == 0, "line %d: the program's output is lost", c->line);
	ck_assert_msg(memcmp(got + at + rlen, stdout_text + at, slen - at) == 0, "line %d: the rest of stdout",
	              c->line);
	size_t olen = rlen;
	char *mine = malloc(rlen + 1);
	memcpy(mine, got + at, rlen);
	mine = comparable(c, mine, &olen);
	ref = comparable(c, ref, &rlen);
	ck_assert_msg(olen == rlen && memcmp(mine, ref, rlen) == 0, "line %d: %s: other contents than into a file",
	              c->line, c->what);
	free(ref), free(got), free(stdout_text), free(mine);
}
END_TEST

/* The program runs to its end while nobody reads the FIFO (its output reaches
 * stdout), then a reader gets every byte. */
START_TEST(fifo_is_filled_after_the_run)
{
	const struct out_case *c = &cases[_i];
	make_inputs();
	size_t rlen, glen, slen;
	char *stdout_text;
	char *ref = reference_output(c, &rlen, &stdout_text, &slen);
	free(stdout_text);
	const char *fifo = tmp_path("out.fifo"), *stdout_file = tmp_path("fifo.stdout");
	unlink(fifo);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	char *argv[20];
	build_argv(c, fifo, argv);
	pid_t pid = fork();
	if (pid == 0) {
		int fo = open(stdout_file, O_WRONLY | O_CREAT | O_TRUNC, 0644), fn = open("/dev/null", O_RDWR);
		dup2(fn, 0), dup2(fo, 1), dup2(fn, 2);
		execv(argv[0], argv);
		_exit(127);
	}
	if (c->program_prints) { /* no reader yet: the program must run all the same */
		int waited = 0;
		char *so = NULL;
		while (waited < 1200 && !((so = slurp(stdout_file, NULL)) && strstr(so, "checksum=")))
			free(so), so = NULL, usleep(100000), waited++;
		ck_assert_msg(so, "line %d: %s: the program did not run before the FIFO had a reader", c->line,
		              c->what);
		free(so);
	}
	char *got = slurp(fifo, &glen);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "line %d: %s: status %#x", c->line, c->what, st);
	ck_assert_ptr_nonnull(got);
	got = comparable(c, got, &glen);
	ref = comparable(c, ref, &rlen);
	ck_assert_msg(glen == rlen && memcmp(got, ref, rlen) == 0, "line %d: %s: %zu bytes, want %zu", c->line,
	              c->what, glen, rlen);
	struct stat sb;
	ck_assert_int_eq(lstat(fifo, &sb), 0);
	ck_assert(S_ISFIFO(sb.st_mode));
	free(ref), free(got);
	unlink(fifo);
}
END_TEST

/* A recording written through a pipe (/dev/fd/3 on a pipe, the program printing
 * elsewhere) is the same complete perf.data file as one written to a file, and perf
 * reads it. */
START_TEST(recording_through_a_pipe_is_complete)
{
	const char *piped = tmp_path("piped.data"), *plain = tmp_path("plain.data"), *txt = tmp_path("piped.txt");
	char cmd[4096];
	snprintf(cmd, sizeof(cmd),
	         "{ %s record -e br_inst_retired.near_taken -c 10007 -b -o /dev/fd/3 -- %s 3>&1 >/dev/null; }"
	         " | cat > %s",
	         pmusim(), wl("loops"), piped);
	ck_assert_int_eq(system(cmd), 0);
	/* the same shell around it: a shell may add variables to the environment */
	snprintf(cmd, sizeof(cmd), "{ %s record -e br_inst_retired.near_taken -c 10007 -b -o %s -- %s >/dev/null; }",
	         pmusim(), plain, wl("loops"));
	ck_assert_int_eq(system(cmd), 0);
	size_t n1, n2;
	char *a = slurp(piped, &n1), *b = slurp(plain, &n2);
	ck_assert_msg(a && b && n1 == n2 && n1 > 1000, "through a pipe: %zu bytes, into a file: %zu", n1, n2);
	a = comparable(&cases[3], a, &n1);
	b = comparable(&cases[3], b, &n2);
	ck_assert_msg(n1 == n2 && memcmp(a, b, n1) == 0, "other samples through a pipe");
	free(a), free(b);
	char *p[] = {"perf", "script", "-i", (char *)piped, "-F", "ip,brstack", NULL};
	ck_assert_int_eq(run_cmd(p, NULL, txt, NULL), 0);
	char *text = slurp(txt, NULL);
	int lines = 0;
	for (char *q = text; q && (q = strchr(q, '\n')); q++)
		lines++;
	ck_assert_msg(lines > 50, "perf script printed %d samples", lines);
	free(text);
}
END_TEST

static Suite *outputs_suite(void)
{
	Suite *s = suite_create("outputs");
	TCase *tc = tcase_create("outputs");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, dev_null_stays_a_device, 0, NCASES);
	tcase_add_loop_test(tc, dev_stdout_follows_the_program_output, 0, NCASES);
	tcase_add_loop_test(tc, fifo_is_filled_after_the_run, 0, NCASES);
	tcase_add_test(tc, recording_through_a_pipe_is_complete);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(outputs_suite());
}
