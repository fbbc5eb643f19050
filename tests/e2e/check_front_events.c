/* The command line a perf user types: numbers as people write them (010 is ten,
 * 100k, 1e6), perf's event syntax (rUUEE, cpu/event=..,umask=../, NAME/period=N/,
 * {groups}, names in any case), `pmusim list`, record -F, branch filters that
 * cannot record anything refused, a warning when a recording is short, and stat
 * -j. Each case runs the user's command and checks what the user sees: the exit
 * status, the first line on stderr, and the recording. Spellings that must mean
 * the same recording are compared by the bytes of perf.data's attrs and data
 * sections (the header's command line differs, as it would for perf); counts by
 * `perf script` (real perf 6.1 reading the files) and stat -x. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

#define MAXW 24

/* Runs pmusim with words ("@loops": the workload, "@out": the recording path given);
 * stdout to /dev/null, stderr into *err (caller frees). Returns the exit status. */
static int pm(const char *const *words, const char *out, char **err)
{
	char *argv[MAXW + 2];
	int n = 0;
	argv[n++] = (char *)pmusim();
	for (int i = 0; words[i] && n < MAXW; i++)
		argv[n++] = strcmp(words[i], "@loops") == 0 ? (char *)wl("loops")
			    : strcmp(words[i], "@out") == 0 ? (char *)out
							    : (char *)words[i];
	argv[n] = NULL;
	const char *errf = tmp_path("stderr.txt");
	int st = run_cmd(argv, NULL, NULL, errf);
	if (err)
		*err = slurp(errf, NULL);
	unlink(errf);
	return st;
}

static char *first_line(char *text)
{
	if (text)
		text[strcspn(text, "\n")] = 0;
	return text ? text : "";
}

/* ---- bad values: one line naming the option and the value, exit 2, no file ---- */

static const struct bad_case {
	int line;
	const char *words[MAXW];
	const char *first; /* expected first line of stderr, whole */
} bad[] = {
	{__LINE__, {"record", "-c", "1.5", "-o", "@out", "--", "@loops"},
	 "pmusim record: -c '1.5' is not a whole number (numbers: decimal, 100k = 100000 (k, M, G: 10^3, 10^6, "
	 "10^9), 1e6, or 0x hex)"},
	{__LINE__, {"record", "-c", "-5", "-o", "@out", "--", "@loops"},
	 "pmusim record: -c '-5' is negative (numbers: decimal, 100k = 100000 (k, M, G: 10^3, 10^6, 10^9), 1e6, "
	 "or 0x hex)"},
	{__LINE__, {"record", "-c", "1e30", "-o", "@out", "--", "@loops"},
	 "pmusim record: -c '1e30' is too large (above 2^64-1) (numbers: decimal, 100k = 100000 (k, M, G: 10^3, "
	 "10^6, 10^9), 1e6, or 0x hex)"},
	{__LINE__, {"record", "-c", "0", "-o", "@out", "--", "@loops"},
	 "pmusim record: -c '0': needs a positive number"},
	{__LINE__, {"run", "--seed", "eight", "--", "@loops"},
	 "pmusim run: --seed 'eight' is not a number (numbers: decimal, 100k = 100000 (k, M, G: 10^3, 10^6, 10^9), "
	 "1e6, or 0x hex)"},
	{__LINE__, {"record", "-e", "{cycles,foo}", "-o", "@out", "--", "@loops"},
	 "pmusim record: unknown event 'foo' in -e '{cycles,foo}' (`pmusim list` shows the modelled events)"},
	{__LINE__, {"record", "-e", "{cycles", "-o", "@out", "--", "@loops"},
	 "pmusim record: no closing '}' after '{cycles' in -e '{cycles'"},
	{__LINE__, {"stat", "-e", "cycles:k", "--", "@loops"},
	 "pmusim stat: unknown modifier 'k' in -e 'cycles:k': the model runs user code only (modifiers: u, p, pp, "
	 "ppp)"},
	{__LINE__, {"stat", "-e", "r1234", "--", "@loops"},
	 "pmusim stat: raw event 'r1234' in -e 'r1234': event 0x34, umask 0x12 is not a modelled encoding "
	 "(`pmusim list` shows the modelled events)"},
	{__LINE__, {"stat", "-e", "cpu/event=0xc4,cmask=1/", "--", "@loops"},
	 "pmusim stat: unsupported term 'cmask=1' in -e 'cpu/event=0xc4,cmask=1/' (terms: event=, umask=, config=, "
	 "period=, name=, or an event name)"},
	{__LINE__, {"record", "-j", "any,k", "-o", "@out", "--", "@loops"},
	 "pmusim record: branch filter 'k' in -j 'any,k' keeps kernel branches only, and the model runs user code "
	 "only (drop it, or add u)"},
	{__LINE__, {"record", "-j", "hv", "-o", "@out", "--", "@loops"},
	 "pmusim record: branch filter 'hv' in -j 'hv' keeps hypervisor branches only, and the model runs user "
	 "code only (drop it, or add u)"},
	{__LINE__, {"record", "-b", "-j", "any_call", "-o", "@out", "--", "@loops"},
	 "pmusim record: -b (= -j any) and -j 'any_call' disagree: give one of them"},
	{__LINE__, {"record", "-j", "any_call", "-b", "-o", "@out", "--", "@loops"},
	 "pmusim record: -b (= -j any) and -j 'any_call' disagree: give one of them"},
	{__LINE__, {"record", "-F", "1000", "-c", "10007", "-o", "@out", "--", "@loops"},
	 "pmusim record: -F (a frequency) and -c (a period) exclude each other: give one"},
	{__LINE__, {"stat", "-j", "-x", ",", "--", "@loops"},
	 "pmusim stat: -j (JSON) and -x (separated fields) exclude each other: give one"},
	/* perf's options refused on purpose: the reason, not "unknown option" */
	{__LINE__, {"record", "-a", "-o", "@out", "--", "@loops"},
	 "pmusim record: perf's -a is refused: pmusim runs the one program it starts, with its threads and "
	 "children, on one simulated CPU: there is no system or CPU to watch"},
	{__LINE__, {"record", "--cpu=0", "-o", "@out", "--", "@loops"},
	 "pmusim record: perf's --cpu is refused: pmusim runs the one program it starts, with its threads and "
	 "children, on one simulated CPU: there is no system or CPU to watch"},
	{__LINE__, {"record", "-o", "@out", "-p", "1"},
	 "pmusim record: perf's -p is refused: a running process cannot be moved onto the simulator: start it "
	 "with pmusim record -- PROG"},
	{__LINE__, {"record", "--no-inherit", "-o", "@out", "--", "@loops"},
	 "pmusim record: perf's --no-inherit is refused: threads and child processes are always followed"},
	{__LINE__, {"stat", "-r", "3", "--", "@loops"},
	 "pmusim stat: perf's -r is refused: the same command gives the same counts every time "
	 "(deterministic): repeating measures nothing"},
	{__LINE__, {"report", "-g", "-i", "@out"},
	 "pmusim report: perf's -g is refused: pmusim report --stacks gives per-function totals, call paths "
	 "and a flame graph; perf report -g reads the file"},
	{__LINE__, {"script", "-D", "-i", "@out"},
	 "pmusim script: perf's -D is refused: perf reads pmusim's files: use perf's own command on the file "
	 "(perf script -i FILE)"},
	{__LINE__, {"record", "--bogus", "-o", "@out", "--", "@loops"},
	 "pmusim record: unknown or incomplete option '--bogus' (see pmusim record --help)"},
};
#define NBAD ((int)(sizeof(bad) / sizeof(bad[0])))

START_TEST(bad_value_is_one_line_and_exit_2)
{
	const struct bad_case *c = &bad[_i];
	const char *out = tmp_path("bad.data");
	unlink(out);
	char *err;
	int st = pm(c->words, out, &err);
	char *errcopy = err ? strdup(err) : NULL;
	ck_assert_msg(st == 2, "line %d: exit status %d, stderr: %s", c->line, st, err ? err : "");
	ck_assert_msg(strcmp(first_line(err), c->first) == 0, "line %d: first line\n  %s\nexpected\n  %s", c->line,
		      first_line(err), c->first);
	ck_assert_msg(errcopy && strchr(errcopy, '\n') == errcopy + strlen(errcopy) - 1,
		      "line %d: more than one line: %s", c->line, errcopy ? errcopy : "");
	struct stat sb;
	ck_assert_msg(stat(out, &sb) != 0, "line %d: a recording was written", c->line);
	free(err);
	free(errcopy);
}
END_TEST

/* ---- spellings of one recording: the same attrs and data bytes ---- */

/* The bytes of a perf.data section (perf_file_header: attrs at 24, data at 40). */
static char *section(const char *file, size_t *len, int which)
{
	size_t n;
	char *all = slurp(file, &n);
	ck_assert_msg(all && n >= 72 && memcmp(all, "PERFILE2", 8) == 0, "%s is not a perf.data file", file);
	uint64_t off, size;
	memcpy(&off, all + (which ? 40 : 24), 8);
	memcpy(&size, all + (which ? 48 : 32), 8);
	ck_assert(off + size <= n);
	char *s = malloc(size + 1);
	memcpy(s, all + off, size);
	free(all);
	*len = size;
	return s;
}

static const struct same_case {
	int line;
	const char *a[MAXW], *b[MAXW];
	int attrs_too; /* the encodings are the same too (not only the samples) */
} same[] = {
	{__LINE__, {"record", "-c", "10k", "-o", "@out", "--", "@loops"},
	 {"record", "-c", "10000", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-c", "1e4", "-o", "@out", "--", "@loops"},
	 {"record", "-c", "10000", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-c", "010", "-o", "@out", "--", "@loops"},
	 {"record", "-c", "10", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "--seed", "08", "-c", "20011", "-b", "-o", "@out", "--", "@loops"},
	 {"record", "--seed", "8", "-c", "20011", "-b", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-e", "CYCLES", "-c", "20011", "-o", "@out", "--", "@loops"},
	 {"record", "-e", "cycles", "-c", "20011", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-e", "BR_INST_RETIRED.NEAR_TAKEN", "-c", "997", "-o", "@out", "--", "@loops"},
	 {"record", "-e", "br_inst_retired.near_taken", "-c", "997", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-e", "r20c4", "-c", "997", "-b", "-o", "@out", "--", "@loops"},
	 {"record", "-e", "br_inst_retired.near_taken", "-c", "997", "-b", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-e", "cpu/event=0xc4,umask=0x20/", "-c", "997", "-o", "@out", "--", "@loops"},
	 {"record", "-e", "br_inst_retired.near_taken", "-c", "997", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-e", "br_inst_retired.near_taken/period=997/", "-o", "@out", "--", "@loops"},
	 {"record", "-e", "br_inst_retired.near_taken", "-c", "997", "-o", "@out", "--", "@loops"}, 1},
	/* the architectural encoding of branches: the same samples, a raw attr */
	{__LINE__, {"record", "-e", "rC4", "-c", "9973", "-o", "@out", "--", "@loops"},
	 {"record", "-e", "branches", "-c", "9973", "-o", "@out", "--", "@loops"}, 0},
	{__LINE__, {"record", "-e", "cpu/event=0xc4,umask=0x0/", "-c", "9973", "-o", "@out", "--", "@loops"},
	 {"record", "-e", "branches", "-c", "9973", "-o", "@out", "--", "@loops"}, 0},
	{__LINE__, {"record", "-e", "{cycles,instructions}", "-c", "20011", "-o", "@out", "--", "@loops"},
	 {"record", "-e", "cycles", "-e", "instructions", "-c", "20011", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-b", "-j", "any", "-c", "20011", "-o", "@out", "--", "@loops"},
	 {"record", "-b", "-c", "20011", "-o", "@out", "--", "@loops"}, 1},
	{__LINE__, {"record", "-j", "any,u,k", "-c", "20011", "-o", "@out", "--", "@loops"},
	 {"record", "-j", "any", "-c", "20011", "-o", "@out", "--", "@loops"}, 1},
};
#define NSAME ((int)(sizeof(same) / sizeof(same[0])))

START_TEST(spellings_give_the_same_recording)
{
	const struct same_case *c = &same[_i];
	const char *fa = tmp_path("a.data");
	char *fb = strdup(tmp_path("b.data"));
	char *err;
	int st = pm(c->a, fa, &err);
	ck_assert_msg(st == 0, "line %d: first command: %d: %s", c->line, st, err ? err : "");
	free(err);
	st = pm(c->b, fb, &err);
	ck_assert_msg(st == 0, "line %d: second command: %d: %s", c->line, st, err ? err : "");
	free(err);
	for (int which = c->attrs_too ? 0 : 1; which < 2; which++) {
		size_t la, lb;
		char *sa = section(fa, &la, which), *sb = section(fb, &lb, which);
		ck_assert_msg(la == lb && memcmp(sa, sb, la) == 0, "line %d: the %s sections differ (%zu, %zu bytes)",
			      c->line, which ? "data" : "attrs", la, lb);
		if (which)
			ck_assert_msg(la > 1000, "line %d: a data section of %zu bytes only", c->line, la);
		free(sa);
		free(sb);
	}
	unlink(fa);
	unlink(fb);
	free(fb);
}
END_TEST

/* stat: a raw spelling counts what the named event counts. */
static const char *const stat_pairs[][2] = {
	{"rc4", "branches"}, {"cpu/event=0xc4,umask=0x0/", "branches"}, {"rC0", "instructions"},
	{"r3c", "cycles"}, {"r11c4", "br_inst_retired.cond"}, {"Br_Inst_Retired.Near_Call", "br_inst_retired.near_call"},
	{"cpu/br_inst_retired.near_return/", "br_inst_retired.near_return"}, {"r5250", "rep_iterations"},
};

static unsigned long long stat_count(const char *ev)
{
	const char *w[] = {"stat", "-x", ",", "-e", ev, "--", "@loops", NULL};
	char *err;
	ck_assert_int_eq(pm(w, NULL, &err), 0);
	unsigned long long v = strtoull(err, NULL, 10);
	ck_assert_msg(v > 0, "stat -e %s: %s", ev, err);
	free(err);
	return v;
}

START_TEST(raw_spelling_counts_the_named_event)
{
	ck_assert_uint_eq(stat_count(stat_pairs[_i][0]), stat_count(stat_pairs[_i][1]));
}
END_TEST

/* ---- the short-recording warning names a period that works ---- */

static long perf_samples(const char *file)
{
	char *argv[] = {"perf", "script", "-i", (char *)file, "-F", "period", NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf script failed on %s", file);
	long n = 0;
	for (char *p = text; *p; p++)
		n += *p == '\n';
	free(text);
	return n;
}

START_TEST(few_samples_warning_names_a_working_period)
{
	const char *out = tmp_path("few.data");
	const char *w[] = {"record", "-o", "@out", "--", "@loops", NULL};
	char *err;
	ck_assert_int_eq(pm(w, out, &err), 0);
	const char *p = err ? strstr(err, "\npmusim record: warning: only ") : NULL;
	ck_assert_msg(p, "no warning: %s", err ? err : "");
	long n = strtol(p + strlen("\npmusim record: warning: only "), NULL, 10);
	ck_assert_int_eq(n, perf_samples(out));
	const char *c = strstr(p, " -c ");
	ck_assert_msg(c, "no period named: %s", p);
	char period[32];
	snprintf(period, sizeof(period), "%ld", strtol(c + 4, NULL, 10));
	free(err);
	const char *w2[] = {"record", "-c", period, "-o", "@out", "--", "@loops", NULL};
	ck_assert_int_eq(pm(w2, out, &err), 0);
	ck_assert_msg(!strstr(err, "warning"), "a warning again: %s", err);
	long m = perf_samples(out);
	ck_assert_msg(m >= 900 && m <= 1100, "-c %s gave %ld samples, not about 1000", period, m);
	free(err);
	unlink(out);
}
END_TEST

/* ---- -F: samples at a frequency of simulated time ---- */

START_TEST(freq_samples_cycles_at_the_clock)
{
	/* the model's clock is 2000 MHz (pmu_model/cpu_model.c): at -F 10000 a sample
	 * every 200,000 cycles, 100 microseconds of simulated time apart */
	const char *out = tmp_path("freq.data");
	const char *w[] = {"record", "-F", "10k", "-o", "@out", "--", "@loops", NULL};
	char *err;
	ck_assert_int_eq(pm(w, out, &err), 0);
	free(err);
	char *argv[] = {"perf", "script", "-i", (char *)out, "-F", "time,period", NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf script failed");
	int n = 0;
	double last = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n"), n++) {
		double t;
		unsigned long long period;
		ck_assert_msg(sscanf(line, " %lf: %llu", &t, &period) == 2, "line '%s'", line);
		ck_assert_msg(period == 200000, "period %llu in '%s'", period, line);
		ck_assert_msg(n == 0 || (long)((t - last) * 1e6 + 0.5) == 100, "'%s' after %.6f", line, last);
		last = t;
	}
	ck_assert_msg(n >= 5, "%d samples", n);
	free(text);
	char *ev[] = {"perf", "evlist", "-v", "-i", (char *)out, NULL};
	text = run_capture(ev, &st);
	ck_assert_msg(st == 0 && text && strstr(text, "sample_freq }: 10000") && strstr(text, "freq: 1"),
		      "perf evlist -v: %s", text ? text : "");
	free(text);
	unlink(out);
}
END_TEST

/* ---- pmusim list, stat -j ---- */

START_TEST(list_prints_the_events)
{
	char *argv[] = {(char *)pmusim(), "list", NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_ptr_nonnull(strstr(text, "  cpu-cycles OR cycles                               [Hardware event]\n"));
	ck_assert_ptr_nonnull(strstr(text, "  br_inst_retired.near_taken\n       [Taken branches retired; "
					   "AMD: ex_ret_brn_tkn. cpu/event=0xc4,umask=0x20/ = r20c4]\n"));
	ck_assert_ptr_nonnull(strstr(text, "every count is exact"));
	free(text);
}
END_TEST

START_TEST(stat_json_is_perfs_layout)
{
	const char *w[] = {"stat", "-j", "-e", "instructions,cycles,rc4", "--", "@loops", NULL};
	char *err;
	ck_assert_int_eq(pm(w, NULL, &err), 0);
	char expect[256];
	snprintf(expect, sizeof(expect), "{\"counter-value\" : \"%llu.000000\", \"unit\" : \"\", \"event\" : \"rc4\", "
		 "\"event-runtime\" : ", stat_count("branches"));
	ck_assert_msg(strstr(err, expect), "no '%s' in\n%s", expect, err);
	ck_assert_ptr_nonnull(strstr(err, "\"metric-unit\" : \"insn per cycle\"}\n"));
	int lines = 0;
	for (char *p = err; *p; p++)
		lines += *p == '\n';
	ck_assert_int_eq(lines, 3);
	free(err);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("front_events");
	TCase *tc = tcase_create("front_events");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, bad_value_is_one_line_and_exit_2, 0, NBAD);
	tcase_add_loop_test(tc, spellings_give_the_same_recording, 0, NSAME);
	tcase_add_loop_test(tc, raw_spelling_counts_the_named_event, 0,
			    (int)(sizeof(stat_pairs) / sizeof(stat_pairs[0])));
	tcase_add_test(tc, few_samples_warning_names_a_working_period);
	tcase_add_test(tc, freq_samples_cycles_at_the_clock);
	tcase_add_test(tc, list_prints_the_events);
	tcase_add_test(tc, stat_json_is_perfs_layout);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(suite());
}
