/* End-to-end tests of `pmusim uniformity` (8 runs per test, a few seconds each):
 * - CBT with the taken-branch trigger is unbiased (exit 0) on loops, switch and
 *   recursion; so is every other trigger pmusim offers (cycles on three
 *   workloads);
 * - the baselines are biased (exit 1), each for a reason the row states; so is a
 *   CBT window wider than some traces span;
 * - JSON keys, an exact count against the workload's own FACTS, the same bytes
 *   whatever the number of jobs, the z plot; record --pmu-seed moves the samples,
 *   not the program;
 * - bad options, a program that fails and an unreadable input exit 2 with one
 *   line; SIGTERM and SIGINT end it by that signal with no child left and its
 *   temporary directory removed, as after every other test. */
#include <check.h>
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

#define RUNS "8"

static const struct {
	const char *name, *period, *delta;
} wls[] = {
    /* taken-branch periods for 2,000 to 6,000 samples a run */
    {"loops", "97", "50"},
    {"switch", "31", "16"},
    {"recursion", "13", "6"},
};
#define NWL (sizeof(wls) / sizeof(wls[0]))

/* Runs pmusim uniformity on workload w (taken-branch trigger, -b) with extra
 * options (NULL-terminated); the output in *out (caller frees) when out. */
static int uniformity(size_t w, const char *const *extra, char **out, const char *err)
{
	const char *a[64] = {pmusim(), "uniformity",  "-e",      "br_inst_retired.near_taken",
	                     "-c",     wls[w].period, "--delta", wls[w].delta,
	                     "-b",     "--clear-env", "--seeds", RUNS};
	size_t n = 12;
	for (size_t i = 0; extra && extra[i]; i++)
		a[n++] = extra[i];
	a[n++] = "--";
	a[n++] = wl(wls[w].name);
	a[n] = NULL;
	int st;
	if (out) {
		*out = run_capture((char *const *)a, &st);
		return st;
	}
	return run_cmd((char *const *)a, NULL, NULL, err);
}

/* No temporary directory of pmusim uniformity is left in $TMPDIR. */
static void assert_no_leftovers(void)
{
	DIR *d = opendir(getenv("TMPDIR"));
	ck_assert(d);
	struct dirent *e;
	while ((e = readdir(d)))
		ck_assert_msg(strncmp(e->d_name, "pmusim-uniformity.", 18) != 0, "left behind: %s",
		              e->d_name);
	closedir(d);
}

START_TEST(cbt_with_the_taken_trigger_is_unbiased)
{
	char *out;
	int st = uniformity(_i, NULL, &out, NULL);
	ck_assert_msg(st == 0, "%s: exit %d\n%s", wls[_i].name, st, out);
	ck_assert(strstr(out, "verdict: unbiased at alpha = 0.001"));
	free(out);
	assert_no_leftovers();
}
END_TEST

/* The baselines, each biased for a reason of its own (profiler/profile.h). */
static const struct {
	int line;
	const char *why; /* in the failure message */
	const char *opt[4];
} biased_rows[] = {
    /* taken counts LBR entries only: no fall-through edge ever gets a weight, so
     * every hot fall-through (loops' mix+0x8 -> mix+0xa, switch's and recursion's
     * loop exits and base cases) is estimated 0 in every run: z = -infinity */
    {__LINE__, "taken has no fall-throughs", {"--method", "taken"}},
    /* ranges adds every outcome once per sample, not period / window times: its
     * raw counts are about window / period of the executions */
    {__LINE__, "ranges counts per sample", {"--method", "ranges"}},
    /* and even scaled to the exact total its shape is off: the fall-throughs before
     * the oldest entry are never walked, so the taken edges get a larger share
     * (+0.4 % on loops' call edge, +0.6 % on switch's, +1 % on recursion's) */
    {__LINE__, "ranges' shape", {"--method", "ranges", "--normalise"}},
    /* ip splits a conditional branch's weight evenly between its two ways, and
     * with the taken-branch trigger only taken branches are sampled */
    {__LINE__, "ip splits evenly", {"--method", "ip"}},
};

START_TEST(the_baselines_are_biased)
{
	size_t k = (size_t)e2e_row(_i), w = k % NWL, row = k / NWL;
	char *out;
	int st = uniformity(w, biased_rows[row].opt, &out, NULL);
	ck_assert_msg(st == 1, "row at line %d (%s) on %s: exit %d\n%s", biased_rows[row].line,
	              biased_rows[row].why, wls[w].name, st, out);
	ck_assert(strstr(out, "verdict: BIASED") && strstr(out, "biased edges, hottest first:"));
	free(out);
}
END_TEST

/* Every other trigger of the CBT method: windows of N branches, of the last
 * span instructions before a precise sample (the IP's own position counted for
 * every sample: one position short at a branch IP was 3.3 % low on the call edge),
 * and of N conditional branches or calls. */
static const struct {
	int line;
	const char *prog, *event, *period, *delta, *span;
	int status;
} trigger_rows[] = {
    {__LINE__, "loops", "branches", "211", "100", NULL, 0},
    {__LINE__, "loops", "instructions", "503", "250", NULL, 0},
    {__LINE__, "loops", "instructions", "503", "250", "64", 0},
    /* windows cut in units of the triggering event */
    {__LINE__, "loops", "br_inst_retired.cond", "211", "100", NULL, 0},
    {__LINE__, "loops", "br_inst_retired.cond_taken", "151", "75", NULL, 0},
    {__LINE__, "loops", "br_inst_retired.near_call", "53", "26", NULL, 0},
    {__LINE__, "loops", "br_inst_retired.near_return", "53", "26", NULL, 0},
    {__LINE__, "switch", "br_inst_retired.indirect", "13", "6", NULL, 0},
    /* windows of cycles anchored at the overflow (docs/cycle-windows.md); at a
     * period of 4 cycles a mispredicted return overflows the counter several
     * times: joined in one sample they were 2.7 % high on fib's hottest edges */
    {__LINE__, "loops", "cycles", "211", "100", NULL, 0},
    {__LINE__, "switch", "cycles", "97", "48", NULL, 0},
    {__LINE__, "recursion", "cycles", "4", "2", NULL, 0},
};

START_TEST(other_cbt_triggers)
{
	int k = e2e_row(_i);
	const char *a[20] = {pmusim(),  "uniformity",
	                     "-e",      trigger_rows[k].event,
	                     "-c",      trigger_rows[k].period,
	                     "--delta", trigger_rows[k].delta,
	                     "-b",      "--clear-env",
	                     "--seeds", RUNS};
	size_t n = 12;
	if (trigger_rows[k].span)
		a[n++] = "--span", a[n++] = trigger_rows[k].span;
	a[n++] = "--";
	a[n++] = wl(trigger_rows[k].prog);
	int st;
	char *out = run_capture((char *const *)a, &st);
	ck_assert_msg(st == trigger_rows[k].status, "row at line %d: exit %d\n%s",
	              trigger_rows[k].line, st, out);
	free(out);
}
END_TEST

/* A CBT window wider than some traces span: recursion's is_even/is_odd tail-jump
 * into each other with about 2 instructions per taken branch, so 32 LBR entries
 * span fewer than 80 instructions there; those samples (0.34 %) are dropped and
 * the mutual recursion's edges lose almost all their weight. The default span
 * (the LBR depth - 2) passes. */
START_TEST(a_window_wider_than_the_traces_is_biased)
{
	for (int wide = 0; wide < 2; wide++) {
		const char *a[] = {pmusim(),  "uniformity",
		                   "-e",      "instructions",
		                   "-c",      "61",
		                   "--delta", "30",
		                   "-b",      "--clear-env",
		                   "--seeds", RUNS,
		                   "--span",  wide ? "80" : "30",
		                   "--",      wl("recursion"),
		                   NULL};
		int st;
		char *out = run_capture((char *const *)a, &st);
		ck_assert_msg(st == wide, "span %s: exit %d\n%s", wide ? "80" : "30", st, out);
		if (wide)
			ck_assert_msg(strstr(out, "is_odd+0x13 -> is_even+0x0 (jmp)"), "%s", out);
		free(out);
	}
}
END_TEST

/* record --pmu-seed moves the sample points and nothing else: workloads/seeded
 * prints its getrandom and AT_RANDOM bytes, which follow --seed only; the truth
 * (and so every exact count the test compares with) is the same file. */
START_TEST(pmu_seed_moves_only_the_samples)
{
	const char *t[3], *o[3], *d[3];
	const char *seed[3] = {"5", "5", "6"}, *pmu[3] = {"1", "2", "1"};
	for (int i = 0; i < 3; i++) {
		char name[32];
		snprintf(name, sizeof(name), "s%d.fdata", i), t[i] = strdup(tmp_path(name));
		snprintf(name, sizeof(name), "s%d.out", i), o[i] = strdup(tmp_path(name));
		snprintf(name, sizeof(name), "s%d.data", i), d[i] = strdup(tmp_path(name));
		const char *a[] = {pmusim(), "record",  "-e",         "br_inst_retired.near_taken",
		                   "-c",     "7",       "--delta",    "3",
		                   "-b",     "--seed",  seed[i],      "--pmu-seed",
		                   pmu[i],   "--truth", t[i],         "-o",
		                   d[i],     "--",      wl("seeded"), NULL};
		ck_assert_int_eq(run_cmd((char *const *)a, NULL, o[i], NULL), 0);
	}
	size_t l[6];
	char *tx[3], *ox[3];
	for (int i = 0; i < 3; i++)
		tx[i] = slurp(t[i], &l[i]), ox[i] = slurp(o[i], &l[3 + i]);
	ck_assert_str_eq(tx[0], tx[1]);
	ck_assert_str_eq(ox[0], ox[1]);
	ck_assert_str_ne(ox[0], ox[2]); /* other random bytes */
	const char *s0[] = {pmusim(), "script", "-i", d[0], "-F", "ip", NULL},
	           *s1[] = {pmusim(), "script", "-i", d[1], "-F", "ip", NULL};
	int st0, st1;
	char *ip0 = run_capture((char *const *)s0, &st0),
	     *ip1 = run_capture((char *const *)s1, &st1);
	ck_assert(st0 == 0 && st1 == 0 && strcmp(ip0, ip1) != 0);
	for (int i = 0; i < 3; i++)
		free(tx[i]), free(ox[i]), free((char *)t[i]), free((char *)o[i]),
		    free((char *)d[i]);
	free(ip0), free(ip1);
}
END_TEST

static const char *const json_keys[] = {
    "method",
    "program",
    "runs",
    "pmu_seeds",
    "seed",
    "normalised",
    "alpha",
    "samples_mean",
    "samples_min",
    "samples_max",
    "samples_used",
    "truth_differs",
    "truth_edges",
    "total",
    "min_weight",
    "tested",
    "phantoms",
    "overlap_mean",
    "overlap_noise",
    "chi2",
    "dof",
    "effective_dof",
    "chi2_scale",
    "p_value",
    "edge_alpha",
    "critical_z",
    "biased_edges",
    "unbiased",
    "edges",
    "from",
    "to",
    "from_sym",
    "to_sym",
    "kind",
    "taken",
    "exact",
    "mean",
    "se",
    "z",
    "p",
    "rel_bias",
    "phantom",
    "biased",
};

static double json_after(const char *text, const char *key)
{
	const char *p = strstr(text, key);
	ck_assert_msg(p, "no %s", key);
	return strtod(p + strlen(key), NULL);
}

/* JSON keys; loops' call edge run_loops -> mix runs 200,000 times (its FACTS);
 * the same bytes with 1 job and with 3; the plot. */
START_TEST(json_jobs_and_plot)
{
	const char *svg1 = tmp_path("u1.svg"), *svg3 = tmp_path("u3.svg");
	const char *o1[] = {"--format", "json", "-J", "1", "--svg", svg1, NULL};
	const char *o3[] = {"--format", "json", "--jobs", "3", "--svg", svg3, NULL};
	char *j1, *j3;
	ck_assert_int_eq(uniformity(0, o1, &j1, NULL), 0);
	ck_assert_int_eq(uniformity(0, o3, &j3, NULL), 0);
	for (size_t i = 0; i < sizeof(json_keys) / sizeof(json_keys[0]); i++) {
		char k[64];
		snprintf(k, sizeof(k), "\"%s\": ", json_keys[i]);
		ck_assert_msg(strstr(j1, k), "key %s missing in %s", k, j1);
	}
	ck_assert(strstr(j1, "\"unbiased\": true") && strstr(j1, "\"runs\": 8") &&
	          strstr(j1, "\"method\": \"cbt\""));
	const char *call = strstr(j1, "\"from_sym\": \"run_loops+0x25\", \"to_sym\": \"mix+0x0\"");
	ck_assert_msg(call, "%s", j1);
	double exact = json_after(call, "\"exact\": "), mean = json_after(call, "\"mean\": ");
	ck_assert_msg(exact == 200000 && mean > 0.99 * exact && mean < 1.01 * exact,
	              "exact %g mean %g", exact, mean);
	ck_assert_str_eq(j1, j3);
	size_t l1, l3;
	char *s1 = slurp(svg1, &l1), *s3 = slurp(svg3, &l3);
	ck_assert(s1 && s3 && l1 == l3 && memcmp(s1, s3, l1) == 0);
	ck_assert(strstr(s1, "<svg") && strstr(s1, "</svg>") &&
	          strstr(s1, "unbiased at alpha 0.001"));
	free(s1), free(s3), free(j1), free(j3);
	assert_no_leftovers();
}
END_TEST

static const struct {
	int line;
	const char *args[12]; /* after "uniformity", before "--" PROG (PROG: loops, or exit_code
	                         with "!") */
	const char *message;  /* in the one line on stderr */
} bad_rows[] = {
    {__LINE__,
     {"-e", "br_inst_retired.near_taken", "-c", "97", "--delta", "50", "-b", "--seeds", "1"},
     "--seeds"},
    {__LINE__, {"-e", "br_inst_retired.near_taken", "-c", "97", "--delta", "50", "-b"}, "--seeds"},
    {__LINE__, {"-e", "br_inst_retired.near_taken", "-c", "97", "-b", "--seeds", "4"}, "--delta"},
    {__LINE__,
     {"-e", "br_inst_retired.near_taken", "-c", "97", "--delta", "50", "--seeds", "4"},
     "LBR"},
    {__LINE__, {"-c", "97", "--delta", "50", "-b", "--seeds", "4", "--alpha", "2"}, "--alpha"},
    {__LINE__, {"-c", "97", "--delta", "50", "-b", "--seeds", "4", "--format", "xml"}, "--format"},
    {__LINE__, {"-c", "97", "--delta", "50", "-b", "--seeds", "4", "--method", "best"}, "method"},
    /* one word, 120 options: the options passed on to record outnumber the words */
    {__LINE__, {"-c", "97", "--delta", "50", "-bbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbbb", "--seeds", "4", "--method", "best"}, "method"},
    {__LINE__,
     {"-c", "97", "--delta", "50", "-b", "--seeds", "4", "--truth", "t.fdata"},
     "unknown"},
    {__LINE__,
     {"-e", "no_such_event", "-c", "97", "--delta", "50", "-b", "--seeds", "4"},
     "no_such_event"},
    {__LINE__,
     {"-c", "97", "--delta", "50", "-b", "--seeds", "4", "--stdin", "/nonexistent/in"},
     "/nonexistent/in"},
    {__LINE__, {"-c", "97", "--delta", "50", "-b", "--seeds", "3", "!"}, "exit status 42"},
};

START_TEST(bad_input_exits_2_with_one_line)
{
	const char *a[24] = {pmusim(), "uniformity"};
	size_t n = 2;
	int failing = 0;
	for (size_t i = 0; i < 12 && bad_rows[_i].args[i]; i++)
		if (strcmp(bad_rows[_i].args[i], "!") == 0)
			failing = 1;
		else
			a[n++] = bad_rows[_i].args[i];
	a[n++] = "--";
	a[n++] = wl(failing ? "exit_code" : "loops"); /* exit_code: "bye", exit status 42 */
	const char *err = tmp_path("bad.err");
	int st = run_cmd((char *const *)a, NULL, NULL, err);
	size_t len;
	char *text = slurp(err, &len);
	ck_assert_msg(st == 2, "row at line %d: exit %d: %s", bad_rows[_i].line, st, text);
	ck_assert_msg(text && strstr(text, bad_rows[_i].message) &&
	                  strchr(text, '\n') == text + len - 1,
	              "row at line %d: %s", bad_rows[_i].line, text);
	free(text);
	assert_no_leftovers();
}
END_TEST

/* Processes whose command line holds the marker argument. */
static int processes_with(const char *marker)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int n = 0;
	while (d && (e = readdir(d))) {
		char path[300], buf[4096];
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/cmdline", e->d_name);
		FILE *f = fopen(path, "r");
		size_t len = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
		if (f)
			fclose(f);
		for (size_t i = 0; i < len; i += strlen(buf + i) + 1)
			n += strcmp(buf + i, marker) == 0;
	}
	if (d)
		closedir(d);
	return n;
}

static int has_run_dir(void)
{
	DIR *d = opendir(getenv("TMPDIR"));
	struct dirent *e;
	int found = 0;
	while (d && (e = readdir(d)) && !found)
		if (strncmp(e->d_name, "pmusim-uniformity.", 18) == 0) {
			char path[1024];
			snprintf(path, sizeof(path), "%s/%s/run0/err", getenv("TMPDIR"), e->d_name);
			found = access(path, F_OK) == 0;
		}
	if (d)
		closedir(d);
	return found;
}

/* Stopped while its runs record workloads/phases (about a second each): dies of
 * the signal after its children, and leaves no directory behind. */
START_TEST(a_signal_stops_the_runs_and_cleans_up)
{
	static const int sigs[] = {SIGTERM, SIGINT};
	char marker[32];
	snprintf(marker, sizeof(marker), "%d", 770000 + _i);
	pid_t pid = fork();
	ck_assert(pid >= 0);
	if (pid == 0) {
		freopen("/dev/null", "w", stdout);
		freopen("/dev/null", "w", stderr);
		execl(pmusim(), pmusim(), "uniformity", "-e", "br_inst_retired.near_taken", "-c",
		      "997", "--delta", "500", "-b", "--seeds", "6", "-J", "2", "--pmu-seed",
		      marker, "--", wl("phases"), (char *)NULL);
		_exit(127);
	}
	for (int i = 0; i < 1000 && !has_run_dir(); i++)
		usleep(10000);
	ck_assert_msg(has_run_dir(), "no run started");
	usleep(200000);                              /* in the middle of a recording */
	ck_assert_int_eq(processes_with(marker), 3); /* pmusim and its 2 runs */
	kill(pid, sigs[_i]);
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == sigs[_i], "status 0x%x", st);
	ck_assert_int_eq(processes_with(marker), 0);
	assert_no_leftovers();
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("uniformity");
	TCase *tc = tcase_create("e2e");
	tcase_set_timeout(tc, 120);
	/* ASan: the first workload, every 4th row, the code paths; the figures are the
	 * release run's */
	tcase_add_loop_test(tc, cbt_with_the_taken_trigger_is_unbiased, 0, e2e_sanitized() ? 1 : (int)NWL);
	tcase_add_loop_test(tc, the_baselines_are_biased, 0,
	                    e2e_rows((int)(NWL * sizeof(biased_rows) / sizeof(biased_rows[0]))));
	tcase_add_loop_test(tc, other_cbt_triggers, 0,
	                    e2e_rows((int)(sizeof(trigger_rows) / sizeof(trigger_rows[0]))));
	tcase_add_test(tc, a_window_wider_than_the_traces_is_biased);
	tcase_add_test(tc, json_jobs_and_plot);
	tcase_add_test(tc, pmu_seed_moves_only_the_samples);
	tcase_add_loop_test(tc, bad_input_exits_2_with_one_line, 0,
	                    sizeof(bad_rows) / sizeof(bad_rows[0]));
	tcase_add_loop_test(tc, a_signal_stops_the_runs_and_cleans_up, 0, 2);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(suite());
}
