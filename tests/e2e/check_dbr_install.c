/* `--dbr-install R.json`: the program runs rewritten — each selected region's
 * replacement code in guest memory, its patch points jumping there — and
 * nothing it does may change. The references share no code with the rewriter:
 *   - the program run natively on this CPU: the rewritten run's stdout and exit
 *     status must be the native run's, byte for byte, in both layouts;
 *   - the same program under pmusim without rewriting: the rewritten run's
 *     ground truth (--truth fdata and --truth-json's branches, transfers and
 *     instruction count) must be the unrewritten run's, byte for byte — the
 *     truth of a rewritten run is made of the original program's blocks
 *     (sim/dbr_map.h), which an error in the emitted code (a wrong condition, a
 *     wrong target, a lost instruction) or in the map would change;
 *   - the exact replay of the same regions (`--dbr-regions`, itself checked
 *     against valgrind lackey's instruction stream in check_dbr_replay): the
 *     original instructions that ran in replacement code, counted from the
 *     rewritten run's own raw blocks (instructions at replacement addresses less
 *     the jumps the rewriter added), must equal the replay's "inside" — the code
 *     runs exactly where the region set says it would.
 * The REP unit (`record --rep`) of a rewritten run against the unrewritten run's and
 * the rewritten run's truth (REP sites by their original addresses: check_rep_ref
 * holds that truth to the CPU under ptrace).
 * And the layouts' cost: `stat`'s cycles of the unrewritten, identity and hot
 * runs, printed for the closing note; the hot layout must lower the cycles below
 * the identity translation's on loops, cpi_chase, cpi_interp, switch and cpi_sort
 * (on cpi_matrix it does not: docs/regions.md), and by 1 % or more below the
 * unrewritten program's on loops, cpi_interp and switch (here: -12.0 %, -4.8 %,
 * -1.4 %; cpi_chase runs as many cycles, cpi_matrix and cpi_sort more).
 *
 * R.json comes from op samples (`record -e ibs_op/cnt_ctl=1/ -c 256`), as a user
 * makes it. Environment: PMUSIM, WORKLOADS as for check_e2e. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "tests/e2e/dbr_files.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

static void select_regions(const char *name, const char *arg, const char *rjson, const char *opt,
			   const char *val)
{
	const char *data = tp("ops.data");
	char *rec[] = {(char *)pmusim(), "record", "-q", "-e", "ibs_op/cnt_ctl=1/", "-c", "256", "--pmu-seed",
		       "1", "-o", (char *)data, "--", (char *)wl(name), (char *)arg, NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, "/dev/null", NULL), 0);
	char *rep[] = {(char *)pmusim(), "report", "--regions", "-i", (char *)data, "--format", "json", "-o",
		       (char *)rjson, (char *)opt, (char *)val, NULL};
	ck_assert_int_eq(run_cmd(rep, NULL, NULL, NULL), 0);
}

static void same_truth(const char *name, const char *layout, const char *t0, const char *t1)
{
	struct truth_rec *a, *b;
	size_t na, nb;
	ck_assert_int_eq(truth_records(t0, &a, &na), 0);
	ck_assert_int_eq(truth_records(t1, &b, &nb), 0);
	ck_assert_msg(na == nb, "%s %s: %zu truth records, unrewritten %zu", name, layout, nb, na);
	for (size_t i = 0; i < na; i++)
		ck_assert_msg(strcmp(a[i].kind, b[i].kind) == 0 && a[i].from == b[i].from && a[i].to == b[i].to &&
				      a[i].fallthrough == b[i].fallthrough && a[i].taken == b[i].taken &&
				      a[i].not_taken == b[i].not_taken,
			      "%s %s: record %zu %s 0x%" PRIx64 "->0x%" PRIx64 " %" PRIu64 "/%" PRIu64
			      ", unrewritten %s 0x%" PRIx64 "->0x%" PRIx64 " %" PRIu64 "/%" PRIu64,
			      name, layout, i, b[i].kind, b[i].from, b[i].to, b[i].taken, b[i].not_taken, a[i].kind,
			      a[i].from, a[i].to, a[i].taken, a[i].not_taken);
	ck_assert_int_eq(truth_instructions(t0), truth_instructions(t1));
	free(a);
	free(b);
}

/* A "rewritten: N instructions ran in replacement code, A of them added jumps; P
 * patch jumps" line of run -v. */
static void rewritten_counts(const char *errfile, uint64_t *inside, uint64_t *added, uint64_t *patches,
			     uint64_t *left_out)
{
	char *t = slurp(errfile, NULL);
	ck_assert_ptr_nonnull(t);
	const char *l = strstr(t, "rewritten: ");
	ck_assert_msg(l, "no rewritten line: %s", t);
	ck_assert_int_eq(sscanf(l, "rewritten: %" SCNu64 " instructions ran in replacement code, %" SCNu64
				   " of them added jumps; %" SCNu64 " patch jumps; %" SCNu64,
				inside, added, patches, left_out),
			 4);
	ck_assert_msg(!strstr(t, "internal error"), "%s", t);
	free(t);
}

static uint64_t replay_inside(const char *report)
{
	struct jv *doc;
	char msg[256];
	double v = 0;
	ck_assert_msg(json_parse_file(report, &doc, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(jv_num(jv_get(doc, "inside"), &v), 0);
	jv_free(doc);
	return (uint64_t)v;
}

static uint64_t stat_cycles(const char *name, const char *arg, const char *rjson, const char *layout)
{
	const char *out = tp("stat.csv");
	char *plain[] = {(char *)pmusim(), "stat", "-q", "-x,", "-e", "cycles", "-o", (char *)out, "--",
			 (char *)wl(name), (char *)arg, NULL};
	char *dbr[] = {(char *)pmusim(), "stat", "-q", "-x,", "-e", "cycles", "-o", (char *)out,
		       "--dbr-install", (char *)rjson, "--dbr-layout", (char *)layout, "--", (char *)wl(name),
		       (char *)arg, NULL};
	ck_assert_int_eq(run_cmd(rjson ? dbr : plain, NULL, "/dev/null", NULL), 0);
	char *t = slurp(out, NULL);
	ck_assert_ptr_nonnull(t);
	const char *l = strstr(t, ",cycles,");
	ck_assert_msg(l, "no cycles in %s", t);
	while (l > t && l[-1] != '\n')
		l--;
	uint64_t c = strtoull(l, NULL, 10);
	free(t);
	return c;
}

/* What the hot layout must do to a workload's cycles. */
enum gain {
	GAIN_NONE = 0,    /* figures only */
	GAIN_ON_IDENTITY, /* fewer than the identity translation's */
	GAIN_ON_ORIGINAL, /* and 1 % fewer than the unrewritten program's */
};

static void install_one(const char *name, const char *arg, const char *opt, const char *val,
			enum gain gain)
{
	const char *rjson = tp("R.json");
	select_regions(name, arg, rjson, opt, val);
	const char *nout = tp("native.out");
	char *native[] = {(char *)wl(name), (char *)arg, NULL};
	int nstatus = run_cmd(native, NULL, nout, NULL);
	const char *f0 = tp("t0.fdata"), *t0 = tp("t0.json");
	char *plain[] = {(char *)pmusim(), "run", "-q", "--truth", (char *)f0, "--truth-json", (char *)t0, "--",
			 (char *)wl(name), (char *)arg, NULL};
	/* stdout a file in every run: glibc's exit path differs for /dev/null */
	ck_assert_int_eq(run_cmd(plain, NULL, tp("plain.out"), NULL), nstatus);
	static const char *const layouts[] = {"identity", "hot"};
	for (int k = 0; k < 2; k++) {
		const char *out = tp("dbr.out"), *err = tp("dbr.err"), *f1 = tp("t1.fdata"),
			   *t1 = tp("t1.json"), *rep = tp("replay.json");
		char *run[] = {(char *)pmusim(), "run", "-v", "--dbr-install", (char *)rjson, "--dbr-layout",
			       (char *)layouts[k], "--dbr-regions", (char *)rjson, "--dbr-report", (char *)rep,
			       "--truth", (char *)f1, "--truth-json", (char *)t1, "--", (char *)wl(name),
			       (char *)arg, NULL};
		int st = run_cmd(run, NULL, out, err);
		char *etext = slurp(err, NULL);
		ck_assert_msg(st == nstatus, "%s %s: exit %d, native %d: %s", name, layouts[k], st, nstatus,
			      etext ? etext : "");
		free(etext);
		same_file("stdout", nout, out);
		same_file("truth fdata", f0, f1);
		same_truth(name, layouts[k], t0, t1);
		same_truth_json(name, t0, t1);
		uint64_t inside, added, patches, left;
		rewritten_counts(err, &inside, &added, &patches, &left);
		uint64_t exact = replay_inside(rep);
		fprintf(stderr,
			"%s %s: %" PRIu64 " instructions in replacement code (%" PRIu64 " added jumps), %" PRIu64
			" patch jumps, %" PRIu64 " jumps laid out as fall-throughs; replay inside %" PRIu64
			"; stdout, exit, truth equal\n",
			name, layouts[k], inside, added, patches, left, exact);
		ck_assert_msg(inside > 0 && patches > 0, "%s %s: the replacement code never ran", name, layouts[k]);
		/* the program's instructions that ran there: those with a copy of their own, and
		 * the jumps the layout turned into fall-throughs */
		ck_assert_msg(inside - added + left == exact,
			      "%s %s: %" PRIu64 " original instructions ran in replacement code, the replay "
			      "says %" PRIu64,
			      name, layouts[k], inside - added + left, exact);
	}
	uint64_t c0 = stat_cycles(name, arg, NULL, NULL), ci = stat_cycles(name, arg, rjson, "identity"),
		 ch = stat_cycles(name, arg, rjson, "hot");
	fprintf(stderr, "%s: cycles unrewritten %" PRIu64 ", identity %" PRIu64 " (%+.2f %%), hot %" PRIu64
			" (%+.2f %%)\n",
		name, c0, ci, 100.0 * ((double)ci - (double)c0) / (double)c0, ch,
		100.0 * ((double)ch - (double)c0) / (double)c0);
	if (gain >= GAIN_ON_IDENTITY)
		ck_assert_msg(ch < ci, "%s: hot layout %" PRIu64 " cycles, identity %" PRIu64, name, ch, ci);
	/* measurably: by 1 % at least (the figures are exact, the same on every run) */
	if (gain == GAIN_ON_ORIGINAL)
		ck_assert_msg((double)ch < 0.99 * (double)c0, "%s: hot layout %" PRIu64 " cycles, unrewritten %" PRIu64,
			      name, ch, c0);
}

START_TEST(loops)
{
	/* off the 1 % coincidence of its outer loop (check_regions) */
	install_one("loops", NULL, "--cold-fraction", "0.005", GAIN_ON_ORIGINAL);
}
END_TEST

START_TEST(cpi_chase)
{
	install_one("cpi_chase", NULL, NULL, NULL, GAIN_ON_IDENTITY);
}
END_TEST

START_TEST(cpi_interp)
{
	install_one("cpi_interp", "4000", NULL, NULL, GAIN_ON_ORIGINAL);
}
END_TEST

START_TEST(switch_wl)
{
	install_one("switch", "100000", NULL, NULL, GAIN_ON_ORIGINAL);
}
END_TEST

START_TEST(cpi_matrix)
{
	/* the hot layout does not gain here (docs/regions.md): figures only */
	install_one("cpi_matrix", "30", NULL, NULL, GAIN_NONE);
}
END_TEST

START_TEST(cpi_sort)
{
	install_one("cpi_sort", "10", NULL, NULL, GAIN_ON_IDENTITY);
}
END_TEST

/* Whether some copied block of R.json's replacement code holds address at. */
static int in_copied_block(const char *rjson, uint64_t at)
{
	char msg[256];
	struct jv *root = NULL;
	ck_assert_msg(json_parse_file(rjson, &root, msg, sizeof(msg)) == 0, "%s: %s", rjson, msg);
	const struct jv *regs = jv_get(root, "regions");
	int found = 0;
	for (size_t r = 0; regs && r < regs->n && !found; r++) {
		const struct jv *blocks = jv_get(jv_get(&regs->item[r], "replacement"), "blocks");
		for (size_t b = 0; blocks && b < blocks->n && !found; b++) {
			uint64_t start;
			const struct jv *off = jv_get(&blocks->item[b], "off");
			ck_assert_int_eq(jv_u64(jv_get(&blocks->item[b], "start"), &start), 0);
			double end = off->item[off->n - 1].num;
			found = at >= start && at < start + (uint64_t)end;
		}
	}
	jv_free(root);
	return found;
}

/* The REP unit in a rewritten run reads the original program's blocks: for each mode,
 * report --rep of the rewritten recording equals the unrewritten one's, byte for byte
 * (sites, executions, requested and actual counts, instruction indices, the taken
 * branches --rep-tbe buffers), and validate --rep against the rewritten run's own
 * truth finds no mismatch; one REP site at least runs in replacement code. --rep patch,
 * which rewrites REP instructions itself, is refused. */
START_TEST(rep_unit_reads_the_program)
{
	const char *rjson = tp("rep-R.json");
	select_regions("rep", NULL, rjson, NULL, NULL);
	static const char *const modes[][3] = {{"buffer", "--rep-tbe", NULL}, {"last", NULL, NULL},
					       {"membuffer", NULL, NULL}, {"first", "--rep-sse", NULL}};
	for (size_t k = 0; k < sizeof(modes) / sizeof(modes[0]); k++) {
		const char *d[2] = {tp("rep-u.data"), tp("rep-d.data")}, *t = tp("rep-d.json");
		char *report[2];
		for (int rw = 0; rw < 2; rw++) {
			char *rec[16] = {(char *)pmusim(), "record", "-q", "--rep", (char *)modes[k][0], "-o",
					 (char *)d[rw]};
			int n = 7;
			if (modes[k][1])
				rec[n++] = (char *)modes[k][1];
			if (rw) {
				rec[n++] = "--dbr-install", rec[n++] = (char *)rjson;
				rec[n++] = "--truth-json", rec[n++] = (char *)t;
			}
			rec[n++] = "--", rec[n++] = (char *)wl("rep"), rec[n] = NULL;
			ck_assert_int_eq(run_cmd(rec, NULL, tp("rep.out"), NULL), 0);
			char *rp[] = {(char *)pmusim(), "report", "-i", (char *)d[rw], "--rep", "--format", "json", NULL};
			int st;
			report[rw] = run_capture(rp, &st);
			ck_assert_msg(st == 0 && report[rw], "--rep %s: report failed", modes[k][0]);
		}
		ck_assert_msg(strcmp(report[0], report[1]) == 0, "--rep %s: the rewritten run's REP report differs:\n%s\n%s",
			      modes[k][0], report[0], report[1]);
		size_t inside = 0, sites = 0;
		for (const char *q = strstr(report[1], "\"site\": \""); q; q = strstr(q + 1, "\"site\": \"")) {
			sites++;
			inside += in_copied_block(rjson, strtoull(q + 9, NULL, 16));
		}
		fprintf(stderr, "rep --rep %s --dbr-install: %zu sites, %zu of them in replacement code\n",
			modes[k][0], sites, inside);
		ck_assert_msg(sites > 0 && inside > 0, "--rep %s: %zu sites, %zu in replacement code", modes[k][0],
			      sites, inside);
		char *v[] = {(char *)pmusim(), "validate", "-i", (char *)d[1], "--rep", "--truth", (char *)t, NULL};
		int st;
		char *out = run_capture(v, &st);
		ck_assert_msg(st == 0 && out && strstr(out, "mismatches: 0"), "--rep %s: validate: %s", modes[k][0],
			      out ? out : "");
		free(out), free(report[0]), free(report[1]);
	}
	char *patch[] = {(char *)pmusim(), "record", "-q", "--rep", "patch", "-o", (char *)tp("p.data"),
			 "--dbr-install", (char *)rjson, "--", (char *)wl("rep"), NULL};
	const char *err = tp("p.err");
	ck_assert_int_eq(run_cmd(patch, NULL, "/dev/null", err), 2);
	char *e = slurp(err, NULL);
	ck_assert_msg(e && strstr(e, "--rep patch") && strchr(e, '\n') == e + strlen(e) - 1, "%s", e ? e : "");
	free(e);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("dbr_install");
	TCase *tc = tcase_create("rewritten");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, loops);
	tcase_add_test(tc, rep_unit_reads_the_program);
	if (!e2e_sanitized()) {
		tcase_add_test(tc, cpi_chase);
		tcase_add_test(tc, cpi_interp);
		tcase_add_test(tc, switch_wl);
		tcase_add_test(tc, cpi_matrix);
		tcase_add_test(tc, cpi_sort);
	}
	suite_add_tcase(s, tc);
	return run_suite(s);
}
