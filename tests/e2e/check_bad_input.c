/* Bad input, each answered at once with one line on stderr and the documented exit
 * status: inputs that are not regular files (a FIFO without a writer as -i, --truth,
 * --interp, the program, or named by a recording's MMAP2 record; /dev/zero as a
 * truth), missing files, non-finite numbers in options and in an fdata truth, a
 * newline in a file name a message carries; and the guest's own trouble: a call
 * through a NULL pointer reported as the fault it is (the native run dies of the same
 * signal), system calls numbered past Linux's table reported a few times, not once
 * per call; and a function named with a quote and a backslash, which the JSON
 * reports must write as JSON strings. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/json_read.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* Words of the command after "pmusim" ("@name" is a workload, "$X" an input made by
 * make_inputs), the exit status, and the whole of stderr and, when given, of stdout
 * ("$X" in them stands for the same input; $T is the test's temporary directory). */
struct bad_case {
	int line;
	const char *argv[12];
	int status;
	const char *err;
	const char *out;
};

static const struct bad_case cases[] = {
	/* not regular files */
	{__LINE__, {"report", "-i", "$FIFO"}, 2, "pmusim report: cannot read $FIFO: not a regular file\n", ""},
	{__LINE__, {"report", "-i", "/dev/zero"}, 2, "pmusim report: cannot read /dev/zero: not a regular file\n", ""},
	{__LINE__,
	 {"validate", "-i", "$DATA", "--truth", "$FIFO"},
	 2,
	 "pmusim validate: cannot read $FIFO: not a regular file\n",
	 ""},
	{__LINE__,
	 {"validate", "-i", "$DATA", "--truth", "/dev/zero"},
	 2,
	 "pmusim validate: cannot read /dev/zero: not a regular file\n",
	 ""},
	{__LINE__,
	 {"validate", "--rep", "-i", "$DATA", "--truth", "$FIFO"},
	 2,
	 "pmusim validate: cannot open $FIFO: not a regular file\n",
	 ""},
	{__LINE__,
	 {"run", "--interp", "$FIFO", "--", "@loops.dynpie"},
	 2,
	 "pmusim: $FIFO: cannot read the interpreter: not a regular file\n",
	 ""},
	{__LINE__,
	 {"run", "--interp", "/dev/zero", "--", "@loops.dynpie"},
	 2,
	 "pmusim: /dev/zero: cannot read the interpreter: not a regular file\n",
	 ""},
	/* a baseline: a FIFO nobody writes reads as empty (JSON may come from a pipe) */
	{__LINE__, {"diff", "$FIFO", "$FIFO"}, 2, "pmusim diff: $FIFO: cannot be read: not a regular file\n", ""},
	{__LINE__, {"diff", "/dev/zero", "/dev/zero"}, 2, "pmusim diff: /dev/zero: not a regular file or pipe\n", ""},
	/* the kernel's answer to executing anything but a regular file */
	{__LINE__, {"run", "--", "$FIFO"}, 2, "pmusim run: cannot run $FIFO: Permission denied\n", ""},
	{__LINE__,
	 {"report", "-i", "$FIFODATA", "--method", "cbt"},
	 2,
	 "pmusim report: $T/fifodir/prog: cannot read the binary: not a regular file\n",
	 ""},
	/* missing files */
	{__LINE__, {"report", "-i", "$T/missing"}, 2, "pmusim report: cannot read $T/missing: No such file or directory\n", ""},
	{__LINE__,
	 {"validate", "-i", "$DATA", "--truth", "$T/missing"},
	 2,
	 "pmusim validate: cannot read $T/missing: No such file or directory\n",
	 ""},
	{__LINE__, {"run", "--", "$T/missing"}, 2, "pmusim run: cannot run $T/missing: No such file or directory\n", ""},
	/* a newline in a file name the message carries */
	{__LINE__,
	 {"report", "-i", "$NLDATA", "--method", "cbt"},
	 2,
	 "pmusim report: $T/nl\\ndir/prog: not an ELF file\n",
	 ""},
	/* non-finite numbers */
	{__LINE__,
	 {"validate", "-i", "$DATA", "--truth", "$INF", "--format", "json"},
	 2,
	 "pmusim validate: $INF:1: not an fdata line (8 fields; the count a finite number, 0 or more)\n",
	 ""},
	{__LINE__,
	 {"validate", "-i", "$DATA", "--truth", "$NAN"},
	 2,
	 "pmusim validate: $NAN:2: not an fdata line (8 fields; the count a finite number, 0 or more)\n",
	 ""},
	{__LINE__,
	 {"validate", "--min-overlap", "nan", "-i", "$DATA", "--truth", "$TRUTH"},
	 2,
	 "pmusim validate: --min-overlap needs a number from 0 to 1, not 'nan'\n",
	 ""},
	{__LINE__,
	 {"validate", "--min-overlap", "1e999", "-i", "$DATA", "--truth", "$TRUTH"},
	 2,
	 "pmusim validate: --min-overlap needs a number from 0 to 1, not '1e999'\n",
	 ""},
	{__LINE__,
	 {"validate", "--min-share", "nan", "--cpi", "-i", "$DATA", "--truth", "$TRUTH"},
	 2,
	 "pmusim validate: --min-share needs a number from 0 to 1, not 'nan'\n",
	 ""},
	{__LINE__,
	 {"validate", "--max-rel-err", "inf", "--cpi", "-i", "$DATA", "--truth", "$TRUTH"},
	 2,
	 "pmusim validate: --max-rel-err needs a number of 0 or more, not 'inf'\n",
	 ""},
	{__LINE__,
	 {"report", "--regions", "--cold-fraction", "inf", "-i", "$DATA"},
	 2,
	 "pmusim report: --cold-fraction needs a number from 0 to 1, not 'inf'\n",
	 ""},
	{__LINE__,
	 {"diff", "--threshold", "cycles=nan", "$T/a.json", "$T/b.json"},
	 2,
	 "pmusim diff: --threshold needs EV=PCT (cycles=2.5), not 'cycles=nan'\n",
	 ""},
	/* the guest's faults and signals: native statuses (128 + the signal) */
	{__LINE__,
	 {"run", "--", "@null_call"},
	 139,
	 "pmusim: program terminated by SIGSEGV at 0x0: jump to unmapped address 0x0\n",
	 "before call\n"},
	{__LINE__,
	 {"run", "--", "@abort"},
	 134,
	 "pmusim: program terminated by SIGABRT (raised by the program)\n",
	 "aborting\n"},
	/* unsupported system calls past the kernel's table: three lines, then one */
	{__LINE__,
	 {"run", "--", "@bad_syscalls"},
	 0,
	 "pmusim: unsupported system call syscall_600 (600) returns ENOSYS\n"
	 "pmusim: unsupported system call syscall_601 (601) returns ENOSYS\n"
	 "pmusim: unsupported system call syscall_602 (602) returns ENOSYS\n"
	 "pmusim: further unsupported system calls numbered below 0 or above 511 are not reported\n",
	 "ENOSYS 25\n"},
};
#define NCASES ((int)(sizeof(cases) / sizeof(cases[0])))

/* Inputs: $T, $FIFO (no writer ever), $DATA and $TRUTH (a recording of loops and its
 * exact edges), $INF and $NAN (that truth with a count of inf, nan), $NLDATA (a
 * recording of a program in "$T/nl\ndir", since replaced by a text file), $FIFODATA
 * (a recording of a program since replaced by a FIFO). */
static const char *names[] = {"$FIFODATA", "$FIFO", "$DATA", "$TRUTH", "$INF", "$NAN", "$NLDATA", "$T"};
static char *values[sizeof(names) / sizeof(names[0])];

static void set_input(const char *name, const char *value)
{
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(names[i], name) == 0)
			values[i] = strdup(value);
}

static void record_copy(const char *dir, const char *data)
{
	char prog[1024];
	ck_assert_int_eq(mkdir(dir, 0700), 0);
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	char *cp[] = {"cp", (char *)wl("loops"), prog, NULL};
	ck_assert_int_eq(run_cmd(cp, NULL, NULL, NULL), 0);
	char *r[] = {(char *)pmusim(), "record", "-o", (char *)data, "--", prog, NULL};
	ck_assert_int_eq(run_cmd(r, NULL, NULL, NULL), 0);
	ck_assert_int_eq(unlink(prog), 0);
}

/* truth with the count of its line'th line (1-based) replaced by word */
static void bad_count(const char *truth, const char *out, int line, const char *word)
{
	char *text = slurp(truth, NULL);
	ck_assert_ptr_nonnull(text);
	FILE *f = fopen(out, "w");
	ck_assert_ptr_nonnull(f);
	int n = 1;
	for (char *p = text, *nl; *p; p = nl + 1, n++) {
		nl = strchr(p, '\n');
		ck_assert_ptr_nonnull(nl);
		*nl = 0;
		if (n == line)
			fprintf(f, "%.*s %s\n", (int)(strrchr(p, ' ') - p), p, word);
		else
			fprintf(f, "%s\n", p);
	}
	fclose(f);
	free(text);
}

static void make_inputs(void)
{
	char t[512];
	snprintf(t, sizeof(t), "%s", tmp_path("x"));
	t[strlen(t) - 2] = 0;
	set_input("$T", t);
	const char *fifo = tmp_path("fifo");
	ck_assert_int_eq(mkfifo(fifo, 0700), 0);
	set_input("$FIFO", fifo);
	const char *data = tmp_path_kept("in.data"), *truth = tmp_path_kept("in.fdata");
	char *r[] = {(char *)pmusim(), "record", "-b", "-e", "br_inst_retired.near_taken", "-c", "97", "--truth",
		     (char *)truth, "-o", (char *)data, "--", (char *)wl("loops"), NULL};
	ck_assert_int_eq(run_cmd(r, NULL, NULL, NULL), 0);
	set_input("$DATA", data);
	set_input("$TRUTH", truth);
	set_input("$INF", tmp_path("inf.fdata"));
	bad_count(truth, tmp_path("inf.fdata"), 1, "inf");
	set_input("$NAN", tmp_path("nan.fdata"));
	bad_count(truth, tmp_path("nan.fdata"), 2, "nan");

	char dir[600], prog[700];
	snprintf(dir, sizeof(dir), "%s/nl\ndir", t);
	record_copy(dir, tmp_path("nl.data"));
	set_input("$NLDATA", tmp_path("nl.data"));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	FILE *f = fopen(prog, "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a program\n", f);
	fclose(f);

	snprintf(dir, sizeof(dir), "%s/fifodir", t);
	record_copy(dir, tmp_path("fifo.data"));
	set_input("$FIFODATA", tmp_path("fifo.data"));
	snprintf(prog, sizeof(prog), "%s/prog", dir);
	ck_assert_int_eq(mkfifo(prog, 0700), 0);
}

/* s with every input's name replaced by its value (caller frees) */
static char *expand(const char *s)
{
	size_t cap = strlen(s) * 4 + 4096, n = 0;
	char *out = malloc(cap);
	ck_assert_ptr_nonnull(out);
	while (*s) {
		size_t i, k = sizeof(names) / sizeof(names[0]);
		for (i = 0; i < k; i++)
			if (strncmp(s, names[i], strlen(names[i])) == 0)
				break;
		if (i < k) {
			n += (size_t)snprintf(out + n, cap - n, "%s", values[i]);
			s += strlen(names[i]);
		} else {
			out[n++] = *s++;
		}
		ck_assert_uint_lt(n, cap - 1);
	}
	out[n] = 0;
	return out;
}

static double now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

START_TEST(bad_inputs)
{
	const struct bad_case *c = &cases[_i];
	/* timeout(1) ends a pmusim that would block, with status 124 */
	char *argv[20] = {"timeout", "20", (char *)pmusim()};
	int k = 3;
	for (int i = 0; c->argv[i]; i++)
		argv[k++] = c->argv[i][0] == '@' ? strdup(wl(c->argv[i] + 1)) : expand(c->argv[i]);
	argv[k] = NULL;
	const char *out = tmp_path_kept("out"), *err = tmp_path_kept("err");
	double t0 = now();
	int st = run_cmd(argv, NULL, out, err);
	double took = now() - t0;
	char *got_err = slurp(err, NULL), *got_out = slurp(out, NULL);
	char *want_err = expand(c->err), *want_out = expand(c->out);
	ck_assert_msg(st == c->status, "line %d: exit status %d, not %d (stderr: %s)", c->line, st, c->status,
		      got_err);
	ck_assert_msg(strcmp(got_err, want_err) == 0, "line %d: stderr\n%s\nnot\n%s", c->line, got_err, want_err);
	ck_assert_msg(strcmp(got_out, want_out) == 0, "line %d: stdout\n%s\nnot\n%s", c->line, got_out, want_out);
	/* at once: pmusim starts in milliseconds (the ASan build in a fraction of a second) */
	double limit = e2e_sanitized() ? 5 : 1;
	ck_assert_msg(took < limit, "line %d: took %.2f s", c->line, took);
	free(got_err), free(got_out), free(want_err), free(want_out);
	for (int i = 3; i < k; i++)
		free(argv[i]);
}
END_TEST

/* A program whose one function is named we"ird\fn (objcopy renames it: an
 * assembler will not spell it), called in a loop, with one rep movsb: the
 * names in report --format json and report --rep --format json are JSON
 * strings a parser reads back exactly. */
static const char weird_s[] = "\t.text\n\t.globl _start\n_start:\n"
			      "\tmov $20000, %ebx\n1:\tcall wfn\n\tdec %ebx\n\tjnz 1b\n"
			      "\tmov $60, %eax\n\txor %edi, %edi\n\tsyscall\n"
			      "\t.type wfn, @function\nwfn:\n\tlea -64(%rsp), %rdi\n\tmov %rsp, %rsi\n"
			      "\tmov $8, %ecx\n\trep movsb\n\tret\n\t.size wfn, .-wfn\n";

static struct jv *json_of(char *const argv[])
{
	int st;
	char *out = run_capture(argv, &st);
	ck_assert_msg(out && st == 0, "%s %s exit status %d", argv[1], argv[2], st);
	struct jv *v;
	char msg[256] = "";
	ck_assert_msg(json_parse(out, strlen(out), &v, msg, sizeof(msg)) == 0, "not JSON (%s): %s", msg, out);
	free(out);
	return v;
}

START_TEST(json_names_escaped)
{
	const char *src = tmp_path_kept("weird.S"), *plain = tmp_path_kept("weird.plain"),
		   *prog = tmp_path_kept("weird"), *data = tmp_path_kept("weird.data"),
		   *rep = tmp_path_kept("weird.rep");
	FILE *f = fopen(src, "w");
	ck_assert_ptr_nonnull(f);
	fputs(weird_s, f);
	fclose(f);
	char *cc[] = {"cc", "-nostdlib", "-static", "-o", (char *)plain, (char *)src, NULL};
	ck_assert_int_eq(run_cmd(cc, NULL, NULL, NULL), 0);
	char *oc[] = {"objcopy", "--redefine-sym", "wfn=we\"ird\\fn", (char *)plain, (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(oc, NULL, NULL, NULL), 0);
	char *r[] = {(char *)pmusim(), "record", "-b", "-e", "br_inst_retired.near_taken", "-c", "101", "-o",
		     (char *)data, "--", (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(r, NULL, NULL, NULL), 0);
	char *rr[] = {(char *)pmusim(), "record", "--rep", "last", "-o", (char *)rep, "--", (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(rr, NULL, NULL, NULL), 0);

	char *rj[] = {(char *)pmusim(), "report", "-i", (char *)data, "--format", "json", NULL};
	struct jv *v = json_of(rj);
	const struct jv *edges = jv_get(v, "edges");
	ck_assert_ptr_nonnull(edges);
	int calls = 0;
	for (size_t i = 0; i < edges->n; i++) {
		const struct jv *to = jv_get(&edges->item[i], "to_sym");
		ck_assert(to && to->type == JV_STR);
		calls += strcmp(to->text, "we\"ird\\fn+0x0") == 0;
	}
	ck_assert_int_eq(calls, 1); /* the call edge, named exactly */
	jv_free(v);

	char *pj[] = {(char *)pmusim(), "report", "--rep", "-i", (char *)rep, "--format", "json", NULL};
	v = json_of(pj);
	const struct jv *sites = jv_get(v, "sites");
	ck_assert(sites && sites->n == 1);
	const struct jv *sym = jv_get(&sites->item[0], "symbol");
	ck_assert(sym && sym->type == JV_STR);
	ck_assert_str_eq(sym->text, "we\"ird\\fn+0xd");
	jv_free(v);
}
END_TEST

static Suite *bad_input_suite(void)
{
	Suite *s = suite_create("bad_input");
	TCase *tc = tcase_create("cases");
	tcase_set_timeout(tc, 60);
	/* once, in the process the tests are forked from */
	tcase_add_unchecked_fixture(tc, make_inputs, NULL);
	tcase_add_loop_test(tc, bad_inputs, 0, NCASES);
	tcase_add_test(tc, json_names_escaped);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(bad_input_suite());
}
