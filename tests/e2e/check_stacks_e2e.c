/* `pmusim report --stacks` end to end, against real perf: perf script (perf 6.1)
 * shows the callchains of a perf.data file made by hand with pmusim's writer, and
 * pmusim's inclusive counts equal those counted from perf script's callchains —
 * for the hand-made file, for a real `perf record -g` recording of a program
 * compiled here, and for a `pmusim record --tstack` recording. The outputs as
 * files: folded lines exact, JSON that python3's json module reads, an SVG that
 * python3's XML parser reads, the same bytes twice; exit status 2 and one line
 * on stderr for a file without callchains and for options --stacks refuses. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/stack_fixture.h"
#include "tests/unit/tmp_dir.h"

static char dir[PATH_MAX];
static struct sf_prog prog;
static int built;

static const char *in_dir(const char *name)
{
	static char p[8][PATH_MAX + 64];
	static int n;
	char *s = p[n++ % 8];
	snprintf(s, sizeof(p[0]), "%s/%s", dir, name);
	return s;
}

/* Stacks of the hand-made file; return addresses 4 bytes into the caller, where
 * perf script (which looks the raw return address up) and pmusim agree. */
static const char *const stacks[] = {"main;mid;rec;rec;leaf", "main;other;leaf",
                                     "main;mid;rec;leaf", "main;mid"};
static const char want_folded[] = "main;mid 1\nmain;mid;rec;leaf 1\nmain;mid;rec;rec;leaf 1\n"
                                  "main;other;leaf 1\n";

static const char *hand_made(void)
{
	const char *path = in_dir("hand.data");
	if (access(path, R_OK) == 0)
		return path;
	struct perfdata_event ev = sf_event("pmusim_tstack", 1, 1);
	struct perfdata_writer *w = sf_open(path, &prog, &ev, 1, "prog");
	ck_assert_ptr_nonnull(w);
	for (size_t i = 0; i < sizeof(stacks) / sizeof(stacks[0]); i++)
		ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, SF_PID, 10, stacks[i], SF_RET_MID, 0),
		                 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	return path;
}

/* Samples of perf script's text (-F ip,sym: per sample an empty line, one
 * "\t<addr> <sym>" line per frame, an empty line) whose user frames include
 * name, each sample once; *samples: the samples with any user frame. */
static long perf_inclusive(const char *text, const char *name, long *samples)
{
	long n = 0, all = 0;
	int has = 0, user = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long a;
		char sym[512];
		if (*l != '\t') { /* between samples */
			n += has, all += user;
			has = user = 0;
			continue;
		}
		if (sscanf(l, " %llx %511s", &a, sym) != 2 || a >= 0xffff800000000000ull)
			continue; /* a kernel frame */
		user = 1;
		has |= strcmp(sym, name) == 0;
	}
	if (samples)
		*samples = all + user;
	return n + has;
}

/* pmusim's "total" of name from --format json, or -1. */
static long pmusim_total(const char *json, const char *name)
{
	char key[600];
	snprintf(key, sizeof(key), "{\"name\": \"%s\", \"total\": ", name);
	const char *p = strstr(json, key);
	return p ? strtol(p + strlen(key), NULL, 10) : -1;
}

static char *report(const char *file, const char *format, int *status)
{
	char *argv[] = {(char *)pmusim(), "report",   "--stacks",     "-i",
	                (char *)file,     "--format", (char *)format, NULL};
	return run_capture(argv, status);
}

/* Every function pmusim names has the same inclusive count as perf script's
 * callchains give (names: those to compare; NULL: all in pmusim's table that
 * are symbols). Returns the samples. */
static long same_as_perf(const char *file, const char *const *names, size_t nnames)
{
	int st;
	char *argv[] = {"perf", "script", "-i", (char *)file, "-F", "ip,sym", NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf script -i %s failed (%d)", file, st);
	char *json = report(file, "json", &st);
	ck_assert_msg(st == 0 && json, "pmusim report --stacks -i %s: exit %d", file, st);
	long samples;
	perf_inclusive(text, "", &samples);
	ck_assert_msg(strstr(json, "\"samples\": ") &&
	                  strtol(strstr(json, "\"samples\": ") + 11, NULL, 10) == samples,
	              "pmusim's samples differ from perf script's %ld", samples);
	for (size_t i = 0; i < nnames; i++) {
		long want = perf_inclusive(text, names[i], NULL),
		     got = pmusim_total(json, names[i]);
		ck_assert_msg(got == want || (want == 0 && got < 0),
		              "%s: pmusim total %ld, perf script %ld", names[i], got, want);
	}
	free(text);
	free(json);
	return samples;
}

START_TEST(perf_script_reads_hand_made)
{
	ck_assert_msg(built, "could not compile the test program");
	const char *file = hand_made();
	int st;
	char *argv[] = {"perf", "script", "-i", (char *)file, "-F", "ip,sym", NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf script failed (%d)", st);
	/* the first sample as perf shows it: innermost first, the ip, then the returns,
	 * each as its offset in the mapped file */
	char want[512];
	unsigned long long off = prog.map_pgoff - prog.map_addr;
	const struct sf_fn *leaf = sf_fn(&prog, "leaf"), *rec = sf_fn(&prog, "rec"),
	                   *mid = sf_fn(&prog, "mid");
	snprintf(want, sizeof(want), "\t%16llx leaf\n\t%16llx rec\n\t%16llx rec\n\t%16llx mid\n",
	         leaf->addr + 1 + off, rec->addr + 4 + off, rec->addr + 4 + off,
	         mid->addr + 4 + off);
	ck_assert_msg(strstr(text, want), "perf script:\n%s\nlacks\n%s", text, want);
	free(text);
	static const char *const names[] = {"main", "mid", "rec", "leaf", "other"};
	ck_assert_int_eq(same_as_perf(file, names, 5), 4);
}
END_TEST

START_TEST(output_files)
{
	ck_assert_msg(built, "could not compile the test program");
	const char *file = hand_made();
	int st;
	char *folded = report(file, "folded", &st);
	ck_assert_int_eq(st, 0);
	ck_assert_str_eq(folded, want_folded);
	free(folded);
	char *json = in_dir("s.json"), *svg = in_dir("s.svg"), *svg2 = in_dir("s2.svg");
	char *a1[] = {(char *)pmusim(), "report", "--stacks", "-i",    (char *)file, "--format",
	              "json",           "-o",     json,       "--svg", svg,          NULL};
	ck_assert_int_eq(run_cmd(a1, NULL, NULL, NULL), 0);
	char *a2[] = {(char *)pmusim(), "report", "--stacks", "-i",        (char *)file,
	              "--svg",          svg2,     "-o",       "/dev/null", NULL};
	ck_assert_int_eq(run_cmd(a2, NULL, NULL, NULL), 0);
	char *py[] = {"python3",
	              "-c",
	              "import json, sys, xml.dom.minidom as m\n"
	              "j = json.load(open(sys.argv[1]))\n"
	              "assert j['samples'] == 4 and len(j['paths']) == 4, j\n"
	              "d = m.parse(sys.argv[2])\n"
	              "assert len(d.getElementsByTagName('title')) == 9, 'boxes'\n"
	              "assert len(d.getElementsByTagName('rect')) == 10, 'rects'\n",
	              json,
	              svg,
	              NULL};
	ck_assert_int_eq(run_cmd(py, NULL, NULL, NULL), 0);
	size_t n1, n2;
	char *s1 = slurp(svg, &n1), *s2 = slurp(svg2, &n2);
	ck_assert_msg(s1 && s2 && n1 == n2 && memcmp(s1, s2, n1) == 0,
	              "the SVG differs between two runs");
	free(s1);
	free(s2);
}
END_TEST

START_TEST(errors_exit_2)
{
	ck_assert_msg(built, "could not compile the test program");
	struct perfdata_event ev = sf_event("cycles", 1, 0);
	struct perfdata_writer *w = sf_open(in_dir("nochain.data"), &prog, &ev, 1, NULL);
	ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, SF_PID, 10, NULL, SF_RET_MID, 0), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	const char *err = in_dir("err.txt");
	char *a1[] = {(char *)pmusim(),       "report", "--stacks",       "-i",
	              in_dir("nochain.data"), "-o",     in_dir("no.txt"), NULL};
	ck_assert_int_eq(run_cmd(a1, NULL, NULL, err), 2);
	char *text = slurp(err, NULL);
	ck_assert_msg(text && strstr(text, "has no callchains") &&
	                  strchr(text, '\n') == text + strlen(text) - 1,
	              "stderr: %s", text ? text : "(none)");
	free(text);
	ck_assert_int_eq(access(in_dir("no.txt"), F_OK), -1); /* complete or absent */
	char *a2[] = {(char *)pmusim(),    "report",   "--stacks", "-i",
	              (char *)hand_made(), "--format", "fdata",    NULL};
	ck_assert_int_eq(run_cmd(a2, NULL, NULL, NULL), 2);
	char *a3[] = {(char *)pmusim(), "report",        "-i", (char *)hand_made(),
	              "--svg",          in_dir("x.svg"), NULL};
	ck_assert_int_eq(run_cmd(a3, NULL, NULL, NULL), 2);
}
END_TEST

START_TEST(real_perf_record_g)
{
	ck_assert_msg(built, "could not compile the test program");
	const char *file = in_dir("real.data");
	char *rec[] = {"perf", "record", "-q",         "-e", "cpu-clock", "-c",      "100000",
	               "-g",   "-o",     (char *)file, "--", prog.path,   "3000000", NULL};
	int st = run_cmd(rec, NULL, NULL, NULL);
	if (st != 0 && st != 1) { /* the program's status is its own */
		printf(
		    "check_stacks_e2e: perf record -g cannot run here (status %d): test skipped\n",
		    st);
		return;
	}
	static const char *const names[] = {"main", "mid", "rec", "leaf", "other"};
	long samples = same_as_perf(file, names, 5);
	ck_assert_msg(samples >= 20, "only %ld samples", samples);
	int s2;
	char *folded = report(file, "folded", &s2);
	ck_assert_int_eq(s2, 0);
	ck_assert_msg(strstr(folded, ";main;mid;rec;rec;rec;"), "no recursion in:\n%.2000s",
	              folded);
	free(folded);
}
END_TEST

START_TEST(pmusim_tstack_recording)
{
	const char *file = in_dir("tstack.data");
	char *rec[] = {(char *)pmusim(),
	               "record",
	               "--tstack",
	               "--tstack-period",
	               "5us",
	               "-o",
	               (char *)file,
	               "--",
	               (char *)wl("recursion"),
	               NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, NULL), 0);
	static const char *const names[] = {"main",
	                                    "fib",
	                                    "is_even",
	                                    "is_odd",
	                                    "_start",
	                                    "__libc_start_main_impl",
	                                    "__libc_start_call_main"};
	ck_assert_int_gt(same_as_perf(file, names, 7), 10);
}
END_TEST

static Suite *stacks_e2e_suite(void)
{
	Suite *s = suite_create("stacks_e2e");
	TCase *tc = tcase_create("stacks_e2e");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, perf_script_reads_hand_made);
	tcase_add_test(tc, output_files);
	tcase_add_test(tc, errors_exit_2);
	tcase_add_test(tc, real_perf_record_g);
	tcase_add_test(tc, pmusim_tstack_recording);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	tmp_dir_make(dir, sizeof(dir), "check_stacks_e2e");
	built = dir[0] && sf_build(&prog, dir, "prog", 0, 0) == 0;
	int rc = run_suite(stacks_e2e_suite());
	tmp_dir_remove(dir);
	return rc;
}
