/* The commands a perf user types first, run as they type them, checked by what
 * they see (exit status, first line, bytes):
 * - `pmusim report` picks its method from the recording: the overhead table
 *   without a branch stack, the calls method for -j any_call, --method wins;
 *   nothing usable is one line and exit 1;
 * - the overhead table gives every symbol the share perf report --stdio --sort
 *   comm,dso,sym gives it on the same perf.data (perf is the reference), with
 *   a stripped program's code as one row per dso;
 * - --sort, --stdio, -i -, --event NAME, --comm LIST;
 * - `pmusim validate` refuses an empty truth, a truth naming nothing of the
 *   program, another program's truth (fdata: edges leaving no branch of the
 *   program; JSON: a build id the recording does not have) with exit 2, and
 *   says FAIL with both numbers when the gate fails (exit 1). */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* pmusim record [-j filter] [--truth truth] -o data -- prog (period 2003: enough
 * samples of a short run); the recording's path, valid for the next 3 calls. */
static const char *record(const char *name, const char *prog, const char *filter, const char *truth)
{
	static char paths[4][512];
	static int next;
	char *data = paths[next++ % 4];
	snprintf(data, sizeof(paths[0]), "%s", tmp_path(name));
	char *a[16] = {(char *)pmusim(), "record", "-c", "2003", "--seed", "1", "-o", (char *)data};
	int n = 8;
	if (filter)
		a[n++] = "-j", a[n++] = (char *)filter;
	if (truth)
		a[n++] = "--truth", a[n++] = (char *)truth;
	a[n++] = "--";
	a[n++] = (char *)prog;
	a[n] = NULL;
	if (strcmp(prog, "/bin/ls") == 0)
		a[n++] = "-la", a[n++] = "/usr/lib", a[n] = NULL;
	ck_assert_int_eq(run_cmd(a, NULL, "/dev/null", "/dev/null"), 0);
	return data;
}

/* Runs argv: exit status, stdout and stderr texts (caller frees). */
static int run3(char *const argv[], const char *in, char **out, char **err)
{
	const char *o = tmp_path("run.out"), *e = tmp_path("run.err");
	int st = run_cmd(argv, in, o, e);
	*out = slurp(o, NULL);
	*err = slurp(e, NULL);
	ck_assert_ptr_nonnull(*out);
	ck_assert_ptr_nonnull(*err);
	return st;
}

static int count_char(const char *s, char c)
{
	int n = 0;
	for (; *s; s++)
		n += *s == c;
	return n;
}

/* An error a user can act on: one line, naming the command. */
static void one_line(const char *err, const char *want)
{
	ck_assert_msg(count_char(err, '\n') == 1 && strncmp(err, "pmusim ", 7) == 0 &&
	                  strstr(err, want),
	              "want one line with '%s', got: %s", want, err);
}

START_TEST(plain_recording_gives_the_overhead_table)
{
	const char *data = record("ls.data", "/bin/ls", NULL, NULL);
	char *a[] = {(char *)pmusim(), "report", "-i", (char *)data, NULL}, *out, *err;
	ck_assert_int_eq(run3(a, NULL, &out, &err), 0);
	ck_assert_msg(strncmp(out, "# Samples: ", 11) == 0 && strstr(out, "  of event 'cycles'\n"),
	              "%.300s", out);
	ck_assert_msg(strstr(out, "# Program: /usr/bin/ls\n"),
	              "the header names the program: %.300s", out);
	ck_assert_msg(strstr(out, "# Overhead  Command  Shared Object"), "%.600s", out);
	/* /bin/ls has no .symtab: its code is one row, named by its hottest file offset */
	const char *row = strstr(out, "  ls                    [.] [unsymbolised: ");
	ck_assert_msg(row && strstr(row, "hottest ls+0x"), "no row of ls's own code: %.2000s", out);
	ck_assert_str_eq(err, "");
	free(out), free(err);
	/* --stdio is perf's: accepted, same bytes */
	char *b[] = {(char *)pmusim(), "report", "--stdio", "-i", (char *)data, NULL}, *out2, *err2;
	ck_assert_int_eq(run3(b, NULL, &out2, &err2), 0);
	char *c[] = {(char *)pmusim(), "report", "-i", (char *)data, NULL};
	run3(c, NULL, &out, &err);
	ck_assert_str_eq(out, out2);
	free(out), free(err), free(out2), free(err2);
}
END_TEST

/* The rows perf prints: "  pct%  period  comm  dso  [.] sym" with its columns
 * split on runs of two spaces (names may hold one). */
struct row {
	char comm[64], dso[128], sym[512];
	double period;
	char pct[16];
};

static int split_row(const char *line, int with_period, struct row *r)
{
	char f[5][512];
	int n = 0;
	char one[2048];
	snprintf(one, sizeof(one), "%.*s", (int)strcspn(line, "\n"), line);
	const char *p = one;
	while (*p == ' ')
		p++;
	while (*p && n < 5) {
		const char *end = strstr(p, "  ");
		size_t len = end ? (size_t)(end - p) : strlen(p);
		snprintf(f[n++], sizeof(f[0]), "%.*s", (int)len, p);
		p += len;
		while (*p == ' ')
			p++;
	}
	int k = with_period;
	if (n != 4 + with_period || !strchr(f[0], '%'))
		return 0;
	snprintf(r->pct, sizeof(r->pct), "%.*s", (int)(strchr(f[0], '%') - f[0]), f[0]);
	r->period = with_period ? strtod(f[1], NULL) : 0;
	snprintf(r->comm, sizeof(r->comm), "%s", f[1 + k]);
	snprintf(r->dso, sizeof(r->dso), "%s", f[2 + k]);
	snprintf(r->sym, sizeof(r->sym), "%s", f[3 + k]);
	/* perf: one row per address without a symbol ("[.] 0x000000000001265e");
	 * pmusim: one per dso. Both become one key. */
	if (strncmp(r->sym, "[.] 0x", 6) == 0 || strncmp(r->sym, "[.] [unsymbolised", 17) == 0)
		snprintf(r->sym, sizeof(r->sym), "(no symbol)");
	return 1;
}

static size_t parse_rows(const char *text, int with_period, struct row *rows, size_t cap)
{
	size_t n = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		struct row r;
		if (*l != '#' && split_row(l, with_period, &r)) {
			size_t i = 0;
			while (i < n && !(strcmp(rows[i].comm, r.comm) == 0 &&
			                  strcmp(rows[i].dso, r.dso) == 0 &&
			                  strcmp(rows[i].sym, r.sym) == 0))
				i++;
			ck_assert_msg(i < cap, "too many rows");
			if (i == n)
				rows[n++] = r;
			else
				rows[i].period += r.period;
		}
	}
	return n;
}

static const char *const perf_progs[] = {"loops", "phases", "indirect", "/bin/ls"};

/* perf is the reference: its period per (comm, dso, symbol), as a share of its
 * event count printed to two decimals, is pmusim's printed share. */
START_TEST(overhead_equals_perf_report)
{
	const char *prog = perf_progs[_i][0] == '/' ? perf_progs[_i] : wl(perf_progs[_i]);
	const char *data = record("perf.data", prog, NULL, NULL);
	char *p[] = {"perf",    "report", "-i",           (char *)data,
	             "--stdio", "--sort", "comm,dso,sym", "--show-total-period",
	             NULL},
	     *pout, *perr;
	ck_assert_int_eq(run3(p, NULL, &pout, &perr), 0);
	const char *ec = strstr(pout, "# Event count (approx.): ");
	ck_assert_ptr_nonnull(ec);
	double total = strtod(ec + 25, NULL);
	char *m[] = {(char *)pmusim(), "report", "-i", (char *)data, NULL}, *mout, *merr;
	ck_assert_int_eq(run3(m, NULL, &mout, &merr), 0);
	static struct row want[4096], got[4096];
	size_t nw = parse_rows(pout, 1, want, 4096), ng = parse_rows(mout, 0, got, 4096);
	ck_assert_msg(nw > 2, "perf printed %zu rows: %.500s", nw, pout);
	ck_assert_uint_eq(ng, nw);
	size_t bad = 0;
	for (size_t i = 0; i < nw; i++) {
		char pct[32];
		snprintf(pct, sizeof(pct), "%.2f", 100 * want[i].period / total);
		size_t j = 0;
		while (j < ng && !(strcmp(got[j].comm, want[i].comm) == 0 &&
		                   strcmp(got[j].dso, want[i].dso) == 0 &&
		                   strcmp(got[j].sym, want[i].sym) == 0))
			j++;
		if (j == ng || strcmp(got[j].pct, pct) != 0) {
			fprintf(stderr, "%s: %s %s %s: perf %s%%, pmusim %s%%\n", perf_progs[_i],
			        want[i].comm, want[i].dso, want[i].sym, pct,
			        j < ng ? got[j].pct : "(none)");
			bad++;
		}
	}
	ck_assert_uint_eq(bad, 0);
	free(pout), free(perr), free(mout), free(merr);
}
END_TEST

START_TEST(sort_keys_as_perf)
{
	const char *data = record("ls.data", "/bin/ls", NULL, NULL);
	char *a[] = {(char *)pmusim(), "report", "-i", (char *)data, "--sort", "pid,dso", NULL},
	     *out, *err;
	ck_assert_int_eq(run3(a, NULL, &out, &err), 0);
	ck_assert_msg(strstr(out, "# Overhead      Pid:Command  Shared Object\n"), "%.600s", out);
	ck_assert_msg(strstr(out, "     1000:ls       libc.so.6\n"), "%.900s", out);
	free(out), free(err);
	char *b[] = {(char *)pmusim(), "report", "-i", (char *)data, "--sort", "dso,cpu", NULL};
	ck_assert_int_eq(run3(b, NULL, &out, &err), 2);
	one_line(err, "unknown sort key 'cpu'");
	free(out), free(err);
}
END_TEST

START_TEST(input_from_stdin)
{
	const char *data = record("ls.data", "/bin/ls", NULL, NULL);
	char *a[] = {(char *)pmusim(), "report", "-i", "-", NULL}, *out, *err, *out2, *err2;
	ck_assert_int_eq(run3(a, data, &out, &err), 0);
	char *b[] = {(char *)pmusim(), "report", "-i", (char *)data, NULL};
	ck_assert_int_eq(run3(b, NULL, &out2, &err2), 0);
	ck_assert_str_eq(out, out2);
	free(out), free(err), free(out2), free(err2);
}
END_TEST

START_TEST(event_by_name_and_comm_list)
{
	const char *data = record("ls.data", "/bin/ls", NULL, NULL);
	char *a[] = {(char *)pmusim(), "report", "-i", (char *)data, NULL}, *out, *err, *out2,
	     *err2;
	ck_assert_int_eq(run3(a, NULL, &out, &err), 0);
	char *b[] = {(char *)pmusim(), "report", "-i",    (char *)data, "--event",
	             "CYCLES",         "--comm", "sh,ls", NULL};
	ck_assert_int_eq(run3(b, NULL, &out2, &err2), 0);
	ck_assert_str_eq(out, out2);
	free(out), free(err), free(out2), free(err2);
	char *c[] = {(char *)pmusim(), "report",       "-i", (char *)data,
	             "--event",        "instructions", NULL};
	ck_assert_int_eq(run3(c, NULL, &out, &err), 2);
	one_line(err, "has no event 'instructions' (it has: cycles)");
	ck_assert_str_eq(out, "");
	free(out), free(err);
	char *d[] = {(char *)pmusim(), "report", "-i", (char *)data, "--comm", "sh", NULL};
	ck_assert_int_eq(run3(d, NULL, &out, &err), 1);
	one_line(err, "is of the commands sh");
	ck_assert_str_eq(out, "");
	free(out), free(err);
}
END_TEST

START_TEST(call_only_recording_uses_calls)
{
	const char *data = record("calls.data", wl("recursion"), "any_call", NULL);
	char *a[] = {(char *)pmusim(), "report", "-i", (char *)data, NULL}, *out, *err;
	ck_assert_int_eq(run3(a, NULL, &out, &err), 0);
	ck_assert_msg(strncmp(out, "# method calls: ", 16) == 0, "%.300s", out);
	ck_assert_msg(strstr(out, "\n# event 'cycles' (index 0) of ") && strstr(out, ", binary "),
	              "%.300s", out);
	ck_assert_msg(strstr(out, "call       fib+0x"), "%.900s", out);
	free(out), free(err);
	/* an explicit method wins */
	char *b[] = {(char *)pmusim(), "report", "-i", (char *)data, "--method", "ranges", NULL};
	ck_assert_int_eq(run3(b, NULL, &out, &err), 0);
	ck_assert_msg(strncmp(out, "# method ranges: ", 17) == 0, "%.300s", out);
	free(out), free(err);
}
END_TEST

START_TEST(nothing_usable_says_what_to_record)
{
	const char *data = record("ls.data", "/bin/ls", NULL, NULL);
	char *a[] = {(char *)pmusim(), "report", "-i", (char *)data, "--method", "cbt", NULL}, *out,
	     *err;
	ck_assert_int_eq(run3(a, NULL, &out, &err), 1);
	one_line(err, "record one with pmusim record -b -- PROG");
	ck_assert_str_eq(out, "");
	free(out), free(err);
}
END_TEST

/* A stripped program recorded with -b: its code is in "hottest functions", one
 * line for the file, and edges in it are named file+0xOFF. */
START_TEST(stripped_code_in_the_edge_report)
{
	const char *data = record("lsb.data", "/bin/ls", "any", NULL);
	char *a[] = {(char *)pmusim(), "report", "-i", (char *)data, "--binary", "/bin/ls", NULL},
	     *out, *err;
	ck_assert_int_eq(run3(a, NULL, &out, &err), 0);
	const char *h = strstr(out, "# hottest functions");
	ck_assert_msg(h && strstr(h, "  [ls: code without symbols]\n"), "%.3000s", out);
	ck_assert_msg(strstr(out, " ls+0x"), "no edge named ls+0xOFF: %.3000s", out);
	free(out), free(err);
}
END_TEST

START_TEST(validate_refuses_what_it_cannot_compare)
{
	char truth[512], other[512];
	snprintf(truth, sizeof(truth), "%s", tmp_path("loops.fdata"));
	snprintf(other, sizeof(other), "%s", tmp_path("phases.fdata"));
	const char *data = record("loops.data", wl("loops"), "any", truth);
	record("phases.data", wl("phases"), "any", other);
	char empty[512], alien[512];
	snprintf(empty, sizeof(empty), "%s", tmp_path("empty.fdata"));
	snprintf(alien, sizeof(alien), "%s", tmp_path("alien.fdata"));
	FILE *f = fopen(empty, "w");
	ck_assert_ptr_nonnull(f);
	fclose(f);
	f = fopen(alien, "w");
	ck_assert_ptr_nonnull(f);
	fputs("1 no_such_function 10 1 no_such_function 20 0 5\n", f);
	fclose(f);
	static const struct {
		int line;
		const char *truth;
		const char *want;
	} rows[] = {
	    {__LINE__, NULL, "holds no edges (an empty truth)"},
	    {__LINE__, NULL, "names a function of"},
	    {__LINE__, NULL, "start at no branch instruction of it"},
	};
	const char *truths[] = {empty, alien, other};
	for (int i = 0; i < 3; i++) {
		char *a[] = {(char *)pmusim(), "validate",        "-i", (char *)data,
		             "--truth",        (char *)truths[i], NULL};
		char *out, *err;
		int st = run3(a, NULL, &out, &err);
		ck_assert_msg(st == 2, "line %d: exit %d", rows[i].line, st);
		one_line(err, rows[i].want);
		ck_assert_str_eq(out, "");
		free(out), free(err);
	}
	/* a recording without branch stacks has nothing to compare */
	char plain_truth[512];
	snprintf(plain_truth, sizeof(plain_truth), "%s", tmp_path("plain.fdata"));
	const char *plain = record("plain.data", wl("loops"), NULL, plain_truth);
	char *c[] = {(char *)pmusim(), "validate",  "-i", (char *)plain,
	             "--truth",        plain_truth, NULL},
	     *cout, *cerr;
	ck_assert_int_eq(run3(c, NULL, &cout, &cerr), 2);
	one_line(cerr, "record one with pmusim record -b -- PROG");
	ck_assert_str_eq(cout, "");
	free(cout), free(cerr);
	/* the own truth passes the same checks */
	char *b[] = {(char *)pmusim(), "validate",    "-i", (char *)data,
	             "--truth",        (char *)truth, NULL},
	     *out, *err;
	ck_assert_int_eq(run3(b, NULL, &out, &err), 0);
	ck_assert_str_eq(err, "");
	free(out), free(err);
}
END_TEST

/* A JSON truth (of --stacks, --rep) names its program's build id: another
 * program's truth is refused, the own one passes. */
START_TEST(validate_stacks_refuses_another_programs_truth)
{
	const char *prog[2] = {"callstacks", "recursion"};
	char data[2][512], json[2][512];
	for (int i = 0; i < 2; i++) {
		snprintf(data[i], sizeof(data[i]), "%s", tmp_path(i ? "rec.data" : "cs.data"));
		snprintf(json[i], sizeof(json[i]), "%s", tmp_path(i ? "rec.json" : "cs.json"));
		char *r[] = {(char *)pmusim(),    "record", "--tstack", "--tstack-period", "20us",
		             "--truth-json",      json[i],  "-o",       data[i],           "--",
		             (char *)wl(prog[i]), NULL};
		ck_assert_int_eq(run_cmd(r, NULL, "/dev/null", "/dev/null"), 0);
	}
	char *out, *err;
	char *a[] = {(char *)pmusim(), "validate", "--stacks", "-i",
	             data[0],          "--truth",  json[1],    NULL};
	ck_assert_int_eq(run3(a, NULL, &out, &err), 2);
	one_line(err, "did not run (the truth of another program or build)");
	ck_assert_str_eq(out, "");
	free(out), free(err);
	char *b[] = {(char *)pmusim(), "validate", "--stacks", "-i",
	             data[0],          "--truth",  json[0],    NULL};
	ck_assert_int_eq(run3(b, NULL, &out, &err), 0);
	ck_assert_str_eq(err, "");
	free(out), free(err);
}
END_TEST

START_TEST(failed_gate_says_fail)
{
	char truth[512];
	snprintf(truth, sizeof(truth), "%s", tmp_path("loops.fdata"));
	const char *data = record("loops.data", wl("loops"), "any", truth);
	char *a[] = {(char *)pmusim(), "validate", "-i",   (char *)data, "--truth",
	             (char *)truth,    "--format", "json", NULL},
	     *out, *err;
	ck_assert_int_eq(run3(a, NULL, &out, &err), 0);
	const char *k = strstr(out, "\"overlap_edges\": ");
	ck_assert_ptr_nonnull(k);
	double ov = strtod(k + 17, NULL);
	ck_assert_double_lt(ov, 1);
	free(out), free(err);
	char *b[] = {(char *)pmusim(), "validate",      "-i", (char *)data, "--truth",
	             (char *)truth,    "--min-overlap", "1",  NULL};
	ck_assert_int_eq(run3(b, NULL, &out, &err), 1);
	char want[128];
	snprintf(want, sizeof(want), "FAIL: overlap %.4f %% < min 100.0000 %%\n", 100 * ov);
	ck_assert_str_eq(err, want);
	free(out), free(err);
}
END_TEST

static Suite *report_cli_suite(void)
{
	Suite *s = suite_create("report_cli");
	TCase *tc = tcase_create("report_cli");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, plain_recording_gives_the_overhead_table);
	tcase_add_loop_test(tc, overhead_equals_perf_report, 0,
	                    (int)(sizeof(perf_progs) / sizeof(perf_progs[0])));
	tcase_add_test(tc, sort_keys_as_perf);
	tcase_add_test(tc, input_from_stdin);
	tcase_add_test(tc, event_by_name_and_comm_list);
	tcase_add_test(tc, call_only_recording_uses_calls);
	tcase_add_test(tc, nothing_usable_says_what_to_record);
	tcase_add_test(tc, stripped_code_in_the_edge_report);
	tcase_add_test(tc, validate_refuses_what_it_cannot_compare);
	tcase_add_test(tc, validate_stacks_refuses_another_programs_truth);
	tcase_add_test(tc, failed_gate_says_fail);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(report_cli_suite());
}
