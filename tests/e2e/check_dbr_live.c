/* `pmusim run --dbr`, the live rewriter: regions selected from each window's op
 * samples, installed while the program runs and unpatched when it moves on;
 * the program may not notice. References that share no code with it:
 *   - the program run natively on this CPU: stdout and exit status equal, byte
 *     for byte (six workloads, dbr_phases, and Debian's gzip, sort, md5sum, wc,
 *     cksum and uniq on the same input, each with regions installed in its own
 *     code);
 *   - the same program under pmusim without rewriting: the ground truth (--truth
 *     fdata) equal byte for byte, although the rewritten run executed replacement
 *     code for much of the time (its -v count, asserted above zero);
 *   - the program's symbols as nm reads them (binutils): on dbr_phases the first
 *     region installed in phase_a, unpatched once the program moves on, then a
 *     region installed in phase_b, within a window of phase_a's going, and
 *     patched at the end.
 * Environment: PMUSIM, WORKLOADS as for check_e2e. */
#include <check.h>
#include <dirent.h>
#include <sys/stat.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/dbr_files.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* The "rewritten: N instructions ran in replacement code" figure of run -v. */
static uint64_t ran_inside(const char *err)
{
	char *t = slurp(err, NULL);
	ck_assert_ptr_nonnull(t);
	const char *l = strstr(t, "rewritten: ");
	ck_assert_msg(l, "no rewritten line: %s", t);
	ck_assert_msg(!strstr(t, "internal error"), "%s", t);
	uint64_t n = strtoull(l + strlen("rewritten: "), NULL, 10);
	free(t);
	return n;
}

/* Runs argv natively and under `pmusim run --dbr` (with extra options, and
 * --truth against an unrewritten run when truth is set), stdin from in. */
static void live_one(const char *label, char *const argv[], const char *in, const char *layout, int truth,
		     const char *window)
{
	const char *nout = tp("native.out"), *out = tp("dbr.out"), *err = tp("dbr.err"), *f0 = tp("t0.fdata"),
		   *f1 = tp("t1.fdata"), *j0 = tp("t0.json"), *j1 = tp("t1.json");
	int nstatus = run_cmd(argv, in, nout, NULL);
	char *run[32] = {(char *)pmusim(), "run", "-v", "--dbr", "--dbr-layout", (char *)layout,
			 "--dbr-window", (char *)window};
	size_t n = 8;
	if (truth)
		run[n++] = "--truth", run[n++] = (char *)f1, run[n++] = "--truth-json", run[n++] = (char *)j1;
	run[n++] = "--";
	for (size_t i = 0; argv[i] && n < 31; i++)
		run[n++] = argv[i];
	run[n] = NULL;
	int st = run_cmd(run, in, out, err);
	ck_assert_msg(st == nstatus, "%s %s: exit %d, native %d", label, layout, st, nstatus);
	same_file(label, nout, out);
	uint64_t inside = ran_inside(err);
	ck_assert_msg(inside > 0, "%s %s: no replacement code ran", label, layout);
	if (truth) {
		char *plain[32] = {(char *)pmusim(), "run", "-q", "--truth", (char *)f0, "--truth-json", (char *)j0, "--"};
		size_t m = 8;
		for (size_t i = 0; argv[i] && m < 31; i++)
			plain[m++] = argv[i];
		plain[m] = NULL;
		ck_assert_int_eq(run_cmd(plain, in, tp("plain.out"), NULL), nstatus);
		same_file("truth fdata", f0, f1);
		same_truth_json(label, j0, j1);
	}
	fprintf(stderr, "%s %s: %" PRIu64 " instructions in replacement code; stdout, exit%s equal\n", label, layout,
		inside, truth ? ", truth" : "");
}

static void workload(const char *name, const char *arg)
{
	char *argv[] = {(char *)wl(name), (char *)arg, NULL};
	live_one(name, argv, NULL, "identity", 1, "1000000");
	live_one(name, argv, NULL, "hot", 1, "1000000");
}

START_TEST(loops) { workload("loops", NULL); }
END_TEST
START_TEST(cpi_chase) { workload("cpi_chase", NULL); }
END_TEST
START_TEST(cpi_interp) { workload("cpi_interp", "4000"); }
END_TEST
START_TEST(switch_wl) { workload("switch", "100000"); }
END_TEST
START_TEST(cpi_matrix) { workload("cpi_matrix", "30"); }
END_TEST
START_TEST(cpi_sort) { workload("cpi_sort", "10"); }
END_TEST

/* The address of symbol sym in prog, and the next symbol's, as nm -n lists them. */
static void symbol_range(const char *prog, const char *sym, uint64_t *lo, uint64_t *hi)
{
	char *nm[] = {"nm", "-n", (char *)prog, NULL};
	int st;
	char *t = run_capture(nm, &st);
	ck_assert_msg(t && st == 0, "nm %s failed", prog);
	*lo = *hi = 0;
	for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n")) {
		uint64_t a = strtoull(l, NULL, 16);
		const char *name = strrchr(l, ' ');
		if (*lo && !*hi && a > *lo)
			*hi = a;
		if (name && strcmp(name + 1, sym) == 0)
			*lo = a;
	}
	free(t);
	ck_assert_msg(*lo && *hi, "%s not in nm's list of %s", sym, prog);
}

/* What the -v lines say of the region at an address in [lo, hi): the first
 * window it was installed in, the first after that it was unpatched in (0: never). */
static void region_events(const char *log, uint64_t lo, uint64_t hi, uint64_t *installed, uint64_t *unpatched)
{
	char *t = slurp(log, NULL);
	ck_assert_ptr_nonnull(t);
	*installed = *unpatched = 0;
	for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n")) {
		uint64_t w, a;
		char what[16];
		if (sscanf(l, "pmusim run: window %" SCNu64 ": region 0x%" SCNx64 " %15s", &w, &a, what) != 3 ||
		    a < lo || a >= hi)
			continue;
		if (strcmp(what, "installed") == 0 && !*installed)
			*installed = w;
		else if (strcmp(what, "unpatched") == 0 && *installed && !*unpatched)
			*unpatched = w;
	}
	free(t);
}

START_TEST(two_phases)
{
	const char *prog = wl("dbr_phases");
	char *argv[] = {(char *)prog, NULL};
	live_one("dbr_phases", argv, NULL, "hot", 1, "1000000");
	uint64_t alo, ahi, blo, bhi, ai, au, bi, bu;
	symbol_range(prog, "phase_a", &alo, &ahi);
	symbol_range(prog, "phase_b", &blo, &bhi);
	const char *err = tp("dbr.err"); /* live_one's */
	region_events(err, alo, ahi, &ai, &au);
	region_events(err, blo, bhi, &bi, &bu);
	fprintf(stderr,
		"dbr_phases: phase_a's region installed in window %" PRIu64 ", unpatched in %" PRIu64
		"; phase_b's installed in %" PRIu64 "%s\n",
		ai, au, bi, bu ? ", unpatched later" : ", patched at the end");
	ck_assert_msg(ai > 0, "no region installed in phase_a");
	ck_assert_msg(au > ai, "phase_a's region never unpatched");
	/* the phase changes inside one window t: phase_a's region goes in the first
	 * window with under 1 % of its samples (t or t + 1); phase_b's comes from the
	 * first whose samples the selector keeps it on (t, t + 1 or, when t holds
	 * too little of phase 2, t + 2): the two within one window of each other */
	char *log = slurp(err, NULL);
	ck_assert_msg(bi > ai && bi <= au + 1 && au <= bi + 1,
		      "phase_b's region installed in window %" PRIu64 ", phase_a's in %" PRIu64
		      " and unpatched in %" PRIu64 ": %.3000s",
		      bi, ai, au, log ? log : "");
	free(log);
	ck_assert_msg(bu == 0, "phase_b's region unpatched in window %" PRIu64, bu);
}
END_TEST

/* record --dbr: the samples of a rewritten run name the program's instructions,
 * as perf script reads them (no sample in replacement code, which no symbol
 * covers); its hottest function is the unrewritten recording's; op samples and
 * branch stacks make edge profiles as good as an unrewritten run's against the
 * truth (validate); call graphs by frame pointers and DWARF name no replacement
 * code (-g's against perf's unwinder: check_callgraph_dbr); a call graph beside
 * --truth-json and --tstack-mark are refused. */
START_TEST(record_live)
{
	const char *d = tp("d.data"), *u = tp("u.data");
	char *rec[] = {(char *)pmusim(), "record", "-q", "-c", "1000", "-o", (char *)d, "--dbr", "--",
		       (char *)wl("cpi_chase"), NULL};
	char *plain[] = {(char *)pmusim(), "record", "-q", "-c", "1000", "-o", (char *)u, "--",
			 (char *)wl("cpi_chase"), NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, tp("rec.out"), NULL), 0);
	ck_assert_int_eq(run_cmd(plain, NULL, tp("plain.out"), NULL), 0);
	char *script[] = {"perf", "script", "-i", (char *)d, "-F", "ip,sym", NULL};
	int st;
	char *t = run_capture(script, &st);
	ck_assert_msg(t && st == 0, "perf script failed");
	size_t n = 0, unknown = 0;
	for (char *l = strtok(t, "\n"); l; l = strtok(NULL, "\n"), n++)
		unknown += strstr(l, "[unknown]") != NULL;
	free(t);
	fprintf(stderr, "record --dbr cpi_chase: %zu samples, %zu without a symbol\n", n, unknown);
	ck_assert_msg(n > 1000 && unknown == 0, "%zu samples, %zu in no function of the program", n, unknown);
	char *rep_d[] = {(char *)pmusim(), "report", "-i", (char *)d, NULL};
	char *rep_u[] = {(char *)pmusim(), "report", "-i", (char *)u, NULL};
	char *a = run_capture(rep_d, &st), *b = run_capture(rep_u, &st);
	ck_assert_ptr_nonnull(a);
	ck_assert_ptr_nonnull(b);
	const char *ta = strstr(a, "[.] "), *tb = strstr(b, "[.] ");
	ck_assert_msg(ta && tb && strcspn(ta, "\n") == strcspn(tb, "\n") && strncmp(ta, tb, strcspn(ta, "\n")) == 0,
		      "hottest function %.40s, unrewritten %.40s", ta ? ta : "", tb ? tb : "");
	free(a);
	free(b);
	/* op samples: mapped, their edge profile measured against the same run's truth
	 * (the original program's) as check_ibs_perf measures an unrewritten run's */
	static const char *const ibs_wl[] = {"loops", "cpi_chase"};
	for (size_t k = 0; k < 2; k++) {
		const char *i = tp("i.data"), *tf = tp("i.fdata");
		char *irec[] = {(char *)pmusim(), "record", "-q", "-e", "ibs_op/cnt_ctl=1/", "-c", "256", "--dbr",
				"--truth", (char *)tf, "-o", (char *)i, "--", (char *)wl(ibs_wl[k]), NULL};
		ck_assert_int_eq(run_cmd(irec, NULL, tp("irec.out"), NULL), 0);
		char *iscript[] = {"perf", "script", "-i", (char *)i, "-F", "ip,sym", NULL};
		char *s = run_capture(iscript, &st);
		ck_assert_msg(s && st == 0 && !strstr(s, "[unknown]"), "%s: op samples outside the program's functions",
			      ibs_wl[k]);
		free(s);
		char *val[] = {(char *)pmusim(), "validate", "--method", "ibs", "-i", (char *)i, "--truth", (char *)tf,
			       "--min-overlap", "0.95", NULL};
		char *v = run_capture(val, &st);
		const char *ov = v ? strstr(v, "overlap, all edges:") : NULL;
		fprintf(stderr, "record --dbr -e ibs_op %s: %.40s\n", ibs_wl[k], ov ? ov : "?");
		ck_assert_msg(st == 0, "%s: the rewritten run's op samples: %s", ibs_wl[k], v ? v : "");
		free(v);
	}
	/* branch stacks: each entry the program's taken transfer; in the identity layout
	 * every one of the program's is there, so CBT walks every sample (none dropped)
	 * and the edge profile measures as an unrewritten run's does */
	static const char *const lbr_wl[][2] = {{"loops", NULL}, {"cpi_sort", "10"}};
	for (size_t k = 0; k < 2; k++) {
		const char *bd = tp("b.data"), *tf = tp("b.fdata");
		char *brec[] = {(char *)pmusim(), "record", "-q", "-b", "-e", "br_inst_retired.near_taken", "-c", "2003",
				"--dbr", "--dbr-layout", "identity", "--truth", (char *)tf, "-o", (char *)bd, "--",
				(char *)wl(lbr_wl[k][0]), (char *)lbr_wl[k][1], NULL};
		ck_assert_int_eq(run_cmd(brec, NULL, tp("brec.out"), NULL), 0);
		char *bscript[] = {"perf", "script", "-i", (char *)bd, "-F", "brstacksym", NULL};
		char *s = run_capture(bscript, &st);
		ck_assert_msg(s && st == 0 && !strstr(s, "[unknown]") && strstr(s, "/P/"),
			      "%s: branch stack entries outside the program's functions", lbr_wl[k][0]);
		free(s);
		char *val[] = {(char *)pmusim(), "validate", "-i", (char *)bd, "--truth", (char *)tf, "--min-overlap",
			       "0.95", NULL};
		char *v = run_capture(val, &st);
		const char *ov = v ? strstr(v, "overlap, all edges:") : NULL;
		fprintf(stderr, "record -b --dbr --dbr-layout identity %s: %.40s\n", lbr_wl[k][0], ov ? ov : "?");
		ck_assert_msg(st == 0 && v && strstr(v, " 0 dropped"), "%s: the rewritten run's branch stacks: %s",
			      lbr_wl[k][0], v ? v : "");
		free(v);
	}
	/* call graphs by frame pointers and by perf's DWARF unwinder: no frame in
	 * replacement code (its memory lies below the program, under 0x400000 here) */
	static const char *const modes[] = {"fp", "dwarf"};
	for (size_t k = 0; k < 2; k++) {
		const char *g = tp("cg.data");
		char *grec[] = {(char *)pmusim(), "record", "-q", "--call-graph", (char *)modes[k], "-c", "10007",
				"--dbr", "--dbr-window", "100000", "-o", (char *)g, "--", (char *)wl("callstacks"), NULL};
		ck_assert_int_eq(run_cmd(grec, NULL, tp("grec.out"), NULL), 0);
		char *gscript[] = {"perf", "script", "-i", (char *)g, "-F", "ip", NULL};
		char *s = run_capture(gscript, &st);
		ck_assert_msg(s && st == 0, "perf script failed");
		size_t frames = 0, inside = 0;
		for (char *l = strtok(s, "\n"); l; l = strtok(NULL, "\n")) {
			uint64_t at = strtoull(l, NULL, 16);
			frames++;
			inside += at >= 0x100000 && at < 0x400000;
		}
		free(s);
		fprintf(stderr, "record --call-graph %s --dbr callstacks: %zu frames, %zu in replacement code\n",
			modes[k], frames, inside);
		ck_assert_msg(frames > 1000 && inside == 0, "%s: %zu of %zu frames in replacement code", modes[k],
			      inside, frames);
	}
	static const char *const refused[][4] = {{"-g", "--truth-json", "t.json", "truth's stacks"},
						 {"--tstack", "--tstack-mark", "call:main", "--tstack-mark"}};
	for (size_t k = 0; k < 2; k++) {
		const char *g = tp("g.data"), *err = tp("b.err");
		remove(g);
		char *gr[] = {(char *)pmusim(), "record", "-q", (char *)refused[k][0], (char *)refused[k][1],
			      (char *)tp(refused[k][2]), "-o", (char *)g, "--dbr", "--", (char *)wl("loops"), NULL};
		if (k == 1)
			gr[5] = (char *)refused[k][2];
		ck_assert_int_eq(run_cmd(gr, NULL, "/dev/null", err), 2);
		char *e = slurp(err, NULL);
		ck_assert_msg(e && strstr(e, refused[k][3]) && strchr(e, '\n') == e + strlen(e) - 1, "%s", e ? e : "");
		free(e);
		ck_assert_msg(access(g, F_OK) != 0, "%s --dbr left a recording", refused[k][1]);
	}
}
END_TEST

/* Every workload as built, without arguments, with windows short enough that its
 * hot code gets rewritten: stdout, exit status and truth equal to the unrewritten
 * run's. timers is the exception for the truth: its signals come by the guest's
 * clock, which counts the instructions the rewriter added (README, "Not done
 * yet"), so its program takes other paths; its output is the same. */
START_TEST(every_workload)
{
	const char *dir = workloads_dir();
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	struct dirent *e;
	size_t n = 0;
	char path[4096];
	while ((e = readdir(d))) {
		struct stat st;
		size_t len = strlen(e->d_name);
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || (len > 2 && strcmp(e->d_name + len - 2, ".o") == 0) ||
		    stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & S_IXUSR))
			continue;
		const char *ao = tp("a.out"), *bo = tp("b.out"), *af = tp("a.fdata"), *bf = tp("b.fdata");
		char *plain[] = {(char *)pmusim(), "run", "-q", "--truth", (char *)af, "--", path, NULL};
		char *dbr[] = {(char *)pmusim(), "run", "-q", "--dbr", "--dbr-window", "100000", "--truth",
			       (char *)bf, "--", path, NULL};
		int sa = run_cmd(plain, NULL, ao, NULL), sb = run_cmd(dbr, NULL, bo, NULL);
		ck_assert_msg(sa == sb, "%s: exit %d rewritten, %d not", e->d_name, sb, sa);
		same_file(e->d_name, ao, bo);
		if (strcmp(e->d_name, "timers") != 0)
			same_file(e->d_name, af, bf);
		n++;
	}
	closedir(d);
	fprintf(stderr, "every workload: %zu programs, stdout, exit and truth equal rewritten\n", n);
	ck_assert_uint_gt(n, 30);
}
END_TEST

/* Debian's programs on one text: their own code rewritten (their libraries' is
 * not), output as native. */
START_TEST(debian)
{
	const char *in = tp("in.txt");
	FILE *f = fopen(in, "w");
	ck_assert_ptr_nonnull(f);
	static const char *const words[] = {"alpha", "beta", "gamma", "delta", "region", "sample", "patch", "loop"};
	unsigned x = 1;
	for (int line = 0; line < 8000; line++) {
		for (int w = 0; w < 8; w++) {
			x = x * 1103515245u + 12345u;
			fprintf(f, "%s%c", words[(x >> 16) & 7], w == 7 ? '\n' : ' ');
		}
	}
	fclose(f);
	static const char *const progs[][3] = {{"gzip", "-6", "-c"}, {"sort", NULL, NULL}, {"md5sum", NULL, NULL},
					       {"wc", NULL, NULL},        {"cksum", NULL, NULL}, {"uniq", "-c", NULL}};
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		char path[64];
		snprintf(path, sizeof(path), "/usr/bin/%s", progs[i][0]);
		char *argv[4] = {path, (char *)progs[i][1], (char *)progs[i][2], NULL};
		live_one(progs[i][0], argv, in, "hot", 0, "200000");
	}
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("dbr_live");
	TCase *tc = tcase_create("live");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, two_phases);
	tcase_add_test(tc, loops);
	tcase_add_test(tc, record_live);
	if (!e2e_sanitized()) {
		tcase_add_test(tc, cpi_chase);
		tcase_add_test(tc, cpi_interp);
		tcase_add_test(tc, switch_wl);
		tcase_add_test(tc, cpi_matrix);
		tcase_add_test(tc, cpi_sort);
		tcase_add_test(tc, debian);
		tcase_add_test(tc, every_workload);
	}
	suite_add_tcase(s, tc);
	return run_suite(s);
}
