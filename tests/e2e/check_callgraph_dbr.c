/* record -g in a rewritten run (--dbr-install R.json, --dbr): the thread-stack
 * unit reads the program's own calls and returns through the map, while the
 * program runs replacement code that inlines calls (a push of the original
 * return address, the callee's copy laid out after it, a lea for its return).
 * The reference shares nothing with the unit or the map: perf 6.1's DWARF
 * unwinder over --call-graph dwarf dumps of the same rewritten run (same
 * regions, options and period, so the samples fall at the same instructions),
 * by the binary's .eh_frame (tests/e2e/stack_ref.h); 0 mismatches allowed.
 * Each case also counts the frames whose return address is one of an inlined
 * call's (R.json's clones), so that the comparison is known to cover them. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/stack_ref.h"
#include "tests/unit/run_suite.h"

struct dbr_case {
	int line;
	const char *wl, *arg, *period;
	const char *live[4]; /* options of a live --dbr; none: --dbr-install R.json */
	long min_samples, min_inlined;
};

#define INSTALL {0}

/* clang-format off */
static const struct dbr_case cases[] = {
	/* merge sort: memmove's and the merge's calls inlined into the hot loop
	 * (unwind/: the workloads linked with the .eh_frame_hdr perf needs) */
	{__LINE__, "unwind/cpi_sort", "10", "997", INSTALL, 10000, 50000},
	{__LINE__, "unwind/cpi_tree", NULL, "499", INSTALL, 10000, 20000},
	{__LINE__, "unwind/cpi_interp", "4000", "499", INSTALL, 2000, 0},
	{__LINE__, "unwind/loops", NULL, "211", INSTALL, 5000, 3000},
	/* four threads, 2,000-deep recursion, tail calls, longjmp, callbacks */
	{__LINE__, "callstacks", NULL, "997", INSTALL, 2000, 0},
	{__LINE__, "recursion", NULL, "211", INSTALL, 3000, 15000},
	/* rewritten while it runs: regions selected from op samples in windows */
	{__LINE__, "callstacks", NULL, "997", {"--dbr", "--dbr-window", "100000", 0}, 2000, 0},
	{__LINE__, "unwind/cpi_sort", "10", "997", {"--dbr", "--dbr-window", "200000", 0}, 10000, 0},
};
/* clang-format on */

static void select_regions(const struct dbr_case *c, const char *rjson)
{
	const char *data = tmp_path("ops.data");
	char *rec[] = {(char *)pmusim(), "record", "-q", "-e", "ibs_op/cnt_ctl=1/", "-c", "256", "--pmu-seed",
		       "1", "-o", (char *)data, "--", (char *)wl(c->wl), (char *)c->arg, NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, "/dev/null", NULL), 0);
	char *rep[] = {(char *)pmusim(), "report", "--regions", "-i", (char *)data, "--format", "json", "-o",
		       (char *)rjson, NULL};
	ck_assert_int_eq(run_cmd(rep, NULL, NULL, NULL), 0);
}

/* pmusim record -q -e instructions -c PERIOD MODE REWRITE -o DATA -- PROG [ARG];
 * with a period in time (--tstack snapshots), -q MODE REWRITE -o DATA ... */
static void record(const struct dbr_case *c, const char *rjson, const char *const *mode, const char *data)
{
	char *argv[32] = {(char *)pmusim(), "record", "-q", "--clear-env", "-e", "instructions", "-c",
			  (char *)c->period, "-o", (char *)data};
	int k = 10;
	if (strchr(c->period, 's')) { /* 5us: the thread-stack tracer's own period */
		argv[4] = "--tstack-period", argv[5] = (char *)c->period, argv[6] = "-o", argv[7] = (char *)data;
		k = 8;
	}
	for (int i = 0; mode[i]; i++)
		argv[k++] = (char *)mode[i];
	if (!c->live[0])
		argv[k++] = "--dbr-install", argv[k++] = (char *)rjson;
	for (int i = 0; c->live[i]; i++)
		argv[k++] = (char *)c->live[i];
	argv[k++] = "--";
	argv[k++] = (char *)wl(c->wl);
	argv[k++] = (char *)c->arg;
	argv[k] = NULL;
	if (run_cmd(argv, NULL, "/dev/null", tmp_path("record.err")) != 0) {
		char *e = slurp(tmp_path("record.err"), NULL);
		ck_abort_msg("line %d: record %s failed: %s", c->line, mode[0], e ? e : "");
	}
}

/* The return addresses of the inlined calls R.json names ("ret" of its clones). */
static size_t clone_returns(const char *rjson, uint64_t *ret, size_t max)
{
	char *j = slurp(rjson, NULL);
	ck_assert_ptr_nonnull(j);
	size_t n = 0;
	for (const char *p = j; (p = strstr(p, "\"ret\": \"")) && n < max; p += 8)
		ret[n++] = strtoull(p + 8, NULL, 16);
	free(j);
	return n;
}

/* One case: -g (or --tstack) against perf's unwinding of dumps of the same run. */
static void run_case(const struct dbr_case *c, const char *const *unit, const char *const *dumps,
		     const char *event)
{
	char rjson[512], g[512], d[512];
	snprintf(rjson, sizeof(rjson), "%s", tmp_path("R.json"));
	snprintf(g, sizeof(g), "%s", tmp_path("g.data"));
	snprintf(d, sizeof(d), "%s", tmp_path("dwarf.data"));
	uint64_t ret[4096];
	size_t nret = 0;
	if (!c->live[0]) {
		select_regions(c, rjson);
		nret = clone_returns(rjson, ret, 4096);
	}
	record(c, rjson, unit, g);
	record(c, rjson, dumps, d);
	struct facts fa;
	facts_read(wl(c->wl), NULL, &fa);
	struct snaps a, b;
	perf_snaps_of(g, 0, event, &a);
	perf_snaps_of(d, 1, event, &b);
	long inlined = 0; /* perf prints addresses in the file: the dump's IP gives the bias */
	for (size_t i = 0; i < a.n && i < b.n; i++) {
		uint64_t bias = b.s[i].ip - b.addr[b.s[i].first];
		for (size_t f = 1; f < a.s[i].n; f++)
			for (size_t k = 0; k < nret; k++)
				inlined += a.addr[a.s[i].first + f] + bias == ret[k];
	}
	struct tally t;
	compare(&a, &b, &fa, &t);
	printf("check_callgraph_dbr: line %d, %s %s %s: %ld samples, %ld frames compared, %ld of them an inlined "
	       "call's, %ld mismatches; exceptions:",
	       c->line, unit[0], c->wl, c->live[0] ? "--dbr" : "--dbr-install", t.snapshots, t.frames, inlined, t.mismatches);
	for (int k = 0; k < EXC_COUNT; k++)
		printf(" %s %ld", exc_name[k], t.exc[k]);
	printf("\n");
	ck_assert_msg(t.mismatches == 0, "line %d (%s): %ld of %ld samples differ; first: %s", c->line, c->wl,
		      t.mismatches, t.snapshots, t.first);
	ck_assert_msg(t.snapshots >= c->min_samples, "line %d: %ld samples", c->line, t.snapshots);
	ck_assert_msg(inlined >= c->min_inlined, "line %d: %ld frames of inlined calls", c->line, inlined);
	snaps_free(&a);
	snaps_free(&b);
	facts_free(&fa);
}

START_TEST(g_under_rewriting_equals_perf_dwarf_unwinding)
{
	const char *mg[] = {"-g", 0}, *md[] = {"--call-graph", "dwarf,65528", 0};
	run_case(&cases[e2e_row(_i)], mg, md, "instructions");
}
END_TEST

/* --tstack's periodic snapshots of every thread, against --tstack-dwarf dumps. */
/* clang-format off */
static const struct dbr_case snap_cases[] = {
	{__LINE__, "unwind/cpi_sort", "10", "3us", INSTALL, 3000, 1000},
	{__LINE__, "callstacks", NULL, "3us", INSTALL, 500, 0},
};
/* clang-format on */

START_TEST(tstack_under_rewriting_equals_perf_dwarf_unwinding)
{
	const char *mt[] = {"--tstack", "--tstack-threads", "all", 0},
		   *md[] = {"--tstack", "--tstack-threads", "all", "--tstack-dwarf", "64992", 0};
	run_case(&snap_cases[e2e_row(_i)], mt, md, "pmusim_tstack");
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("callgraph_dbr");
	TCase *tc = tcase_create("callgraph_dbr");
	tcase_set_timeout(tc, 900);
	/* under ASan every 4th row (e2e_rows) */
	tcase_add_loop_test(tc, g_under_rewriting_equals_perf_dwarf_unwinding, 0,
			    e2e_rows((int)(sizeof(cases) / sizeof(cases[0]))));
	tcase_add_loop_test(tc, tstack_under_rewriting_equals_perf_dwarf_unwinding, 0,
			    e2e_rows((int)(sizeof(snap_cases) / sizeof(snap_cases[0]))));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
