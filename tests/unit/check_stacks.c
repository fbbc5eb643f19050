/* The stack profile (profiler/stackprof.h) and its flame graph (profiler/flame.h)
 * on perf.data files made by hand (tests/unit/stack_fixture.h) against a program
 * compiled here: inclusive and exclusive counts and weights worked out by hand
 * from the stacks, recursion counted once, return addresses named by their call
 * site, kernel parts and empty chains skipped, unknown addresses, a PIE's load
 * bias, forked and executing processes, the choice of event, the exact folded,
 * JSON and text outputs, the flame graph's boxes, widths, escaping and bytes,
 * and the error for a file without callchains. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "profiler/flame.h"
#include "profiler/stackprof.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/stack_fixture.h"
#include "tests/unit/tmp_dir.h"

static char dir[PATH_MAX];
static struct sf_prog prog, pie;
static int built;

/* Once, in the parent: the programs every test reads. */
static void build_programs(void)
{
	tmp_dir_make(dir, sizeof(dir), "check_stacks");
	built = dir[0] && sf_build(&prog, dir, "prog", 0, 0) == 0 &&
	        sf_build(&pie, dir, "pie", 1, 0x555555554000ull) == 0;
}

static void remove_programs(void)
{
	tmp_dir_remove(dir);
}

static const char *in_dir(const char *name)
{
	static char p[4][PATH_MAX + 64];
	static int n;
	char *s = p[n++ % 4];
	snprintf(s, sizeof(p[0]), "%s/%s", dir, name);
	return s;
}

/* The hand-made profile: stacks outermost first, thread, period. */
struct row {
	const char *stack;
	uint32_t tid;
	uint64_t period;
	int kernel;
};

static const struct row rows[] = {
    {"main;mid;rec;rec;rec;leaf", 100, 10, 0},
    {"main;mid;rec;leaf", 100, 10, 1}, /* taken in the kernel: its part is left out */
    {"main;other;leaf", 100, 10, 0},
    {"main;mid;rec;rec", 101, 20, 0},
    {"main;mid;rec;leaf", 101, 10, 0},
    {"main", 100, 10, 0},
    {"", 100, 10, 1},   /* kernel only: skipped */
    {NULL, 100, 10, 0}, /* no callchain entries: skipped */
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* By hand from rows: samples whose stack holds the function (once), and at
 * whose top it is; weights the same with the periods. */
static const struct stackprof_func want_funcs[] = {
    /* name, total, self, total_weight, self_weight; in stackprof_functions order */
    {"main", 6, 1, 70, 10},
    {"rec", 4, 1, 50, 20}, /* rows 1, 2, 4, 5; recursion once; the top of row 4 */
    {"mid", 4, 0, 50, 0},  /* the same weight as rec, less self weight */
    {"leaf", 4, 4, 40, 40},
    {"other", 1, 0, 10, 0},
};

static const char want_folded[] = "main 1\n"
                                  "main;mid;rec;leaf 2\n"
                                  "main;mid;rec;rec 1\n"
                                  "main;mid;rec;rec;rec;leaf 1\n"
                                  "main;other;leaf 1\n";

static const char *write_rows(const char *name, int ret, const char *comm)
{
	struct perfdata_event ev = sf_event(STACKPROF_EVENT, 1, 1);
	struct perfdata_writer *w = sf_open(in_dir(name), &prog, &ev, 1, comm);
	ck_assert_ptr_nonnull(w);
	for (size_t i = 0; i < NROWS; i++)
		ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, rows[i].tid, rows[i].period,
		                        rows[i].stack, ret, rows[i].kernel),
		                 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	return in_dir(name);
}

static struct stackprof *read_ok(const char *path, int event, int comm)
{
	struct stackprof_opts o = {event, comm};
	struct stackprof *sp;
	char msg[512] = "";
	int rc = stackprof_read(path, &o, &sp, msg, sizeof(msg));
	ck_assert_msg(rc == 0, "stackprof_read: %d %s", rc, msg);
	return sp;
}

/* What a writer prints, as a string (caller frees). */
static char *output(const struct stackprof *sp, int (*fn)(FILE *, const struct stackprof *))
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(fn(f, sp), 0);
	fclose(f);
	return buf;
}

/* The folded stacks of the recording at path (every sample) are want. */
static void expect_folded(const char *path, const char *want)
{
	struct stackprof *sp = read_ok(path, -1, 0);
	char *folded = output(sp, stackprof_write_folded);
	ck_assert_str_eq(folded, want);
	free(folded);
	stackprof_free(sp);
}

static int write_flame(FILE *f, const struct stackprof *sp)
{
	return flame_svg(f, sp, "t <&> \"q\"", NULL);
}

static int starts(const char *s, const char *prefix)
{
	return strncmp(s, prefix, strlen(prefix)) == 0;
}

static int count(const char *s, const char *what)
{
	int n = 0;
	for (const char *p = s; (p = strstr(p, what)); p++)
		n++;
	return n;
}

static void check_funcs(const struct stackprof *sp)
{
	size_t n;
	const struct stackprof_func *f = stackprof_functions(sp, &n);
	ck_assert_uint_eq(n, sizeof(want_funcs) / sizeof(want_funcs[0]));
	for (size_t i = 0; i < n; i++) {
		const struct stackprof_func *w = &want_funcs[i];
		ck_assert_msg(
		    strcmp(f[i].name, w->name) == 0 && f[i].total == w->total &&
		        f[i].self == w->self && f[i].total_weight == w->total_weight &&
		        f[i].self_weight == w->self_weight,
		    "function %zu: %s %llu %llu %llu %llu, expected %s %llu %llu %llu %llu", i,
		    f[i].name, (unsigned long long)f[i].total, (unsigned long long)f[i].self,
		    (unsigned long long)f[i].total_weight, (unsigned long long)f[i].self_weight,
		    w->name, (unsigned long long)w->total, (unsigned long long)w->self,
		    (unsigned long long)w->total_weight, (unsigned long long)w->self_weight);
	}
}

START_TEST(counts_by_hand)
{
	ck_assert_msg(built, "could not compile the test program with gcc");
	/* both ways of placing return addresses name the same functions: r - 1 */
	const char *file =
	    write_rows(_i ? "mid.data" : "end.data", _i ? SF_RET_MID : SF_RET_END, NULL);
	struct stackprof *sp = read_ok(file, -1, 0);
	const struct stackprof_summary *s = stackprof_summary(sp);
	ck_assert_uint_eq(s->samples, 6);
	ck_assert_uint_eq(s->skipped, 2);
	ck_assert_uint_eq(s->weight, 70);
	ck_assert_uint_eq(s->threads, 2);
	ck_assert_str_eq(s->event, STACKPROF_EVENT);
	check_funcs(sp);
	char *folded = output(sp, stackprof_write_folded);
	ck_assert_str_eq(folded, want_folded);
	free(folded);
	/* paths: weight, then samples, then names */
	size_t n;
	const struct stackprof_path *p = stackprof_paths(sp, &n);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(p[0].depth, 4);
	ck_assert_str_eq(p[0].frames[3], "leaf");
	ck_assert_uint_eq(p[0].samples, 2);
	ck_assert_uint_eq(p[0].weight, 20);
	ck_assert_str_eq(p[1].frames[3], "rec");
	ck_assert_uint_eq(p[2].depth, 1);
	ck_assert_uint_eq(p[3].depth, 6);
	ck_assert_str_eq(p[4].frames[1], "other");
	stackprof_free(sp);
}
END_TEST

START_TEST(json_and_text)
{
	ck_assert_msg(built, "no test program");
	struct stackprof *sp = read_ok(write_rows("j.data", SF_RET_END, NULL), -1, 0);
	char *j = output(sp, stackprof_write_json);
	ck_assert_msg(starts(j, "{\"samples\": 6, \"threads\": 2, \"weight\": 70, \"skipped\": 2, "
	                        "\"functions\": [\n"),
	              "%s", j);
	ck_assert_ptr_nonnull(
	    strstr(j, "\n  {\"name\": \"rec\", \"total\": 4, \"self\": 1, \"total_weight\": 50, "
	              "\"self_weight\": 20},\n"));
	ck_assert_ptr_nonnull(
	    strstr(j, "\n], \"paths\": [\n  {\"stack\": [\"main\", \"mid\", \"rec\", \"leaf\"], "
	              "\"samples\": 2, \"weight\": 20},\n"));
	ck_assert_ptr_nonnull(strstr(j, "{\"stack\": [\"main\"], \"samples\": 1, \"weight\": 10}"));
	ck_assert_str_eq(j + strlen(j) - 5, "}\n]}\n");
	char *t = output(sp, stackprof_write_text);
	ck_assert_msg(starts(t, "# 6 samples, 2 threads, total weight 70 (event pmusim_tstack)\n"
	                        "# 2 samples without user callchain skipped\n"),
	              "%s", t);
	/* rec: 50 of 70 in total, 20 of 70 at the top */
	ck_assert_msg(strstr(t, "\n    71.43%   28.57%          4          1  rec\n"), "%s", t);
	ck_assert_msg(strstr(t, "\n    28.57%          2  main;mid;rec;leaf\n"), "%s", t);
	free(j);
	free(t);
	stackprof_free(sp);
}
END_TEST

START_TEST(recursion_counts_once)
{
	ck_assert_msg(built, "no test program");
	struct perfdata_event ev = sf_event(STACKPROF_EVENT, 1, 1);
	struct perfdata_writer *w = sf_open(in_dir("r.data"), &prog, &ev, 1, NULL);
	ck_assert_int_eq(
	    sf_put(w, &prog, 1, SF_PID, SF_PID, 7, "main;rec;rec;rec;rec;rec", SF_RET_END, 0), 0);
	ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, SF_PID, 3, "main;rec;leaf", SF_RET_END, 0), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	struct stackprof *sp = read_ok(in_dir("r.data"), -1, 0);
	size_t n;
	const struct stackprof_func *f = stackprof_functions(sp, &n);
	ck_assert_uint_eq(n, 3);
	ck_assert_str_eq(f[0].name, "rec"); /* main's total, more self weight */
	ck_assert_uint_eq(f[0].total, 2);   /* not 6 */
	ck_assert_uint_eq(f[0].total_weight, 10);
	ck_assert_uint_eq(f[0].self, 1);
	ck_assert_uint_eq(f[0].self_weight, 7);
	stackprof_free(sp);
}
END_TEST

START_TEST(unknown_addresses)
{
	ck_assert_msg(built, "no test program");
	/* a file without symbols mapped executable: its name and the offset in it */
	FILE *b = fopen(in_dir("blob.bin"), "w");
	for (int i = 0; i < 8192; i++)
		fputc(0x90, b);
	fclose(b);
	struct perfdata_event ev = sf_event(STACKPROF_EVENT, 1, 1);
	struct perfdata_writer *w = sf_open(in_dir("u.data"), &prog, &ev, 1, NULL);
	ck_assert_int_eq(perfdata_write_mmap2(w, SF_PID, SF_PID, 0x7000000, 0x1000, 0x1000, 5, 2,
	                                      in_dir("blob.bin"), 3),
	                 0);
	ck_assert_int_eq(
	    sf_put(w, &prog, 1, SF_PID, SF_PID, 1, "@0x10;main;@0x7000010", SF_RET_END, 0), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	expect_folded(in_dir("u.data"), "[unknown];main;blob.bin+0x1010 1\n");
}
END_TEST

START_TEST(pie_load_bias)
{
	ck_assert_msg(built, "no test program");
	struct perfdata_event ev = sf_event(STACKPROF_EVENT, 1, 1);
	struct perfdata_writer *w = sf_open(in_dir("pie.data"), &pie, &ev, 1, NULL);
	ck_assert_int_eq(sf_put(w, &pie, 1, SF_PID, SF_PID, 1, "main;other;leaf", SF_RET_END, 0),
	                 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	expect_folded(in_dir("pie.data"), "main;other;leaf 1\n");
}
END_TEST

START_TEST(fork_and_exec)
{
	ck_assert_msg(built, "no test program");
	struct perfdata_event ev = sf_event(STACKPROF_EVENT, 1, 1);
	struct perfdata_writer *w = sf_open(in_dir("f.data"), &prog, &ev, 1, NULL);
	/* 200: a forked copy of 100 (its mappings); 300 as well, until it executes another program
	 */
	ck_assert_int_eq(perfdata_write_task(w, PERF_RECORD_FORK, 200, SF_PID, 200, SF_PID, 10), 0);
	ck_assert_int_eq(perfdata_write_task(w, PERF_RECORD_FORK, 300, SF_PID, 300, SF_PID, 11), 0);
	ck_assert_int_eq(sf_put(w, &prog, 1, 200, 200, 1, "main;mid", SF_RET_END, 0), 0);
	ck_assert_int_eq(sf_put(w, &prog, 1, 300, 300, 1, "main;other", SF_RET_END, 0), 0);
	ck_assert_int_eq(perfdata_write_comm_exec(w, 300, 300, "sh", sf_time++), 0);
	ck_assert_int_eq(sf_put(w, &prog, 1, 300, 300, 1, "main;leaf", SF_RET_END, 0), 0);
	ck_assert_int_eq(sf_put(w, &prog, 1, 400, 400, 1, "main", SF_RET_END, 0),
	                 0); /* never mapped */
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	expect_folded(in_dir("f.data"), "[unknown] 1\n[unknown];[unknown] 1\nmain;mid 1\nmain;other 1\n");
}
END_TEST

START_TEST(event_choice)
{
	ck_assert_msg(built, "no test program");
	/* the pmusim_tstack event wins over the others, wherever it is */
	struct perfdata_event ev[2] = {sf_event("cycles", 1, 1), sf_event(STACKPROF_EVENT, 2, 1)};
	struct perfdata_writer *w = sf_open(in_dir("e.data"), &prog, ev, 2, NULL);
	ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, SF_PID, 5, "main;other", SF_RET_END, 0), 0);
	ck_assert_int_eq(sf_put(w, &prog, 2, SF_PID, SF_PID, 7, "main;mid", SF_RET_END, 0), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	struct stackprof *sp = read_ok(in_dir("e.data"), 0, 0);
	ck_assert_uint_eq(stackprof_summary(sp)->samples, 1);
	ck_assert_uint_eq(stackprof_summary(sp)->weight, 7);
	stackprof_free(sp);
	/* without one: --event N, else every sample */
	ev[1] = sf_event("instructions", 2, 1);
	w = sf_open(in_dir("e2.data"), &prog, ev, 2, NULL);
	ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, SF_PID, 5, "main;other", SF_RET_END, 0), 0);
	ck_assert_int_eq(sf_put(w, &prog, 2, SF_PID, SF_PID, 7, "main;mid", SF_RET_END, 0), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	sp = read_ok(in_dir("e2.data"), 1, 0);
	ck_assert_uint_eq(stackprof_summary(sp)->weight, 7);
	ck_assert_str_eq(stackprof_summary(sp)->event, "instructions");
	stackprof_free(sp);
	sp = read_ok(in_dir("e2.data"), -1, 0);
	ck_assert_uint_eq(stackprof_summary(sp)->weight, 12);
	ck_assert_ptr_null(stackprof_summary(sp)->event);
	stackprof_free(sp);
	struct stackprof_opts o = {2, 0};
	char msg[256] = "";
	ck_assert_int_eq(stackprof_read(in_dir("e2.data"), &o, &sp, msg, sizeof(msg)),
	                 PMUSIM_ERR_ARG);
}
END_TEST

START_TEST(no_callchains)
{
	ck_assert_msg(built, "no test program");
	struct stackprof *sp = NULL;
	struct stackprof_opts o = {-1, 0};
	char msg[256] = "";
	for (int with_chain = 0; with_chain < 2; with_chain++) {
		/* no PERF_SAMPLE_CALLCHAIN at all; or callchains without a user address */
		struct perfdata_event ev = sf_event("cycles", 1, with_chain);
		struct perfdata_writer *w = sf_open(in_dir("n.data"), &prog, &ev, 1, NULL);
		ck_assert_int_eq(
		    sf_put(w, &prog, 1, SF_PID, SF_PID, 5, with_chain ? "" : NULL, SF_RET_END, 1),
		    0);
		ck_assert_int_eq(perfdata_writer_close(w), 0);
		ck_assert_int_eq(stackprof_read(in_dir("n.data"), &o, &sp, msg, sizeof(msg)),
		                 PMUSIM_ERR_ARG);
		ck_assert_ptr_null(sp);
		ck_assert_msg(strstr(msg, "has no callchains") && !strchr(msg, '\n'), "%s", msg);
	}
	ck_assert_int_eq(stackprof_read(in_dir("absent.data"), &o, &sp, msg, sizeof(msg)),
	                 PMUSIM_ERR_IO);
}
END_TEST

START_TEST(comm_frame)
{
	ck_assert_msg(built, "no test program");
	struct perfdata_event ev = sf_event(STACKPROF_EVENT, 1, 1);
	struct perfdata_writer *w = sf_open(in_dir("c.data"), &prog, &ev, 1, "a<b>&\"c");
	ck_assert_int_eq(perfdata_write_task(w, PERF_RECORD_FORK, SF_PID, SF_PID, 101, SF_PID, 3),
	                 0);
	ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, 101, 1, "main;mid", SF_RET_END, 0),
	                 0); /* inherited */
	ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, 102, 1, "main", SF_RET_END, 0),
	                 0); /* no name */
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	struct stackprof *sp = read_ok(in_dir("c.data"), -1, 1);
	char *s = output(sp, stackprof_write_folded);
	ck_assert_str_eq(s, "[unknown];main 1\na<b>&\"c;main;mid 1\n");
	free(s);
	size_t n;
	stackprof_functions(sp, &n);
	ck_assert_uint_eq(n, 2); /* main, mid: the command names are no functions */
	s = output(sp, stackprof_write_json);
	ck_assert_ptr_nonnull(strstr(s, "{\"stack\": [\"a<b>&\\\"c\", \"main\", \"mid\"]"));
	free(s);
	s = output(sp, write_flame);
	ck_assert_ptr_nonnull(
	    strstr(s, "<title>a&lt;b&gt;&amp;&quot;c (1 samples, 50.00%)</title>"));
	ck_assert_ptr_nonnull(strstr(s, ">t &lt;&amp;&gt; &quot;q&quot;</text>"));
	ck_assert_ptr_null(strstr(s, "a<b"));
	free(s);
	stackprof_free(sp);
}
END_TEST

START_TEST(flame_boxes)
{
	ck_assert_msg(built, "no test program");
	struct stackprof *sp = read_ok(write_rows("fl.data", SF_RET_END, NULL), -1, 0);
	char *a = output(sp, write_flame), *b = output(sp, write_flame);
	ck_assert_str_eq(a, b); /* the same bytes */
	/* "all" and the 9 prefixes of the stacks: main, main;mid, main;mid;rec,
	 * main;mid;rec;leaf, main;mid;rec;rec, main;mid;rec;rec;rec,
	 * main;mid;rec;rec;rec;leaf, main;other, main;other;leaf */
	size_t boxes;
	FILE *f = fopen("/dev/null", "w");
	ck_assert_int_eq(flame_svg(f, sp, NULL, &boxes), 0);
	fclose(f);
	ck_assert_uint_eq(boxes, 10);
	ck_assert_int_eq(count(a, "<rect"), 11); /* and the background */
	ck_assert_int_eq(count(a, "<title>"), 10);
	ck_assert_int_eq(count(a, "<g>"), count(a, "</g>"));
	ck_assert_ptr_nonnull(
	    strstr(a, "<title>all (6 samples, 100.00%)</title><rect x=\"10.00\""));
	ck_assert_ptr_nonnull(strstr(a, "width=\"1180.00\""));
	/* main;other: 1 of 6 samples of 1180 px, right of main;mid (4 samples) */
	ck_assert_ptr_nonnull(
	    strstr(a, "<title>other (1 samples, 16.67%)</title><rect x=\"796.67\""));
	ck_assert_ptr_nonnull(strstr(a, "width=\"196.67\""));
	ck_assert_msg(strncmp(a, "<?xml", 5) == 0 && strcmp(a + strlen(a) - 7, "</svg>\n") == 0,
	              "%s", a);
	free(a);
	free(b);
	stackprof_free(sp);
}
END_TEST

START_TEST(flame_leaves_out_narrow_boxes)
{
	ck_assert_msg(built, "no test program");
	struct perfdata_event ev = sf_event(STACKPROF_EVENT, 1, 1);
	struct perfdata_writer *w = sf_open(in_dir("narrow.data"), &prog, &ev, 1, NULL);
	for (int i = 0; i < 1000; i++) /* 1000 of 1001: main;mid stays, main;other (1) goes */
		ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, SF_PID, 1, "main;mid", SF_RET_END, 0),
		                 0);
	ck_assert_int_eq(sf_put(w, &prog, 1, SF_PID, SF_PID, 1, "main;other;leaf", SF_RET_END, 0),
	                 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	struct stackprof *sp = read_ok(in_dir("narrow.data"), -1, 0);
	size_t boxes;
	FILE *f = fopen("/dev/null", "w");
	ck_assert_int_eq(flame_svg(f, sp, "x", &boxes), 0);
	fclose(f);
	ck_assert_uint_eq(boxes, 3); /* all, main, mid */
	stackprof_free(sp);
}
END_TEST

static Suite *stacks_suite(void)
{
	Suite *s = suite_create("stacks");
	TCase *tc = tcase_create("stacks");
	tcase_add_loop_test(tc, counts_by_hand, 0, 2);
	tcase_add_test(tc, json_and_text);
	tcase_add_test(tc, recursion_counts_once);
	tcase_add_test(tc, unknown_addresses);
	tcase_add_test(tc, pie_load_bias);
	tcase_add_test(tc, fork_and_exec);
	tcase_add_test(tc, event_choice);
	tcase_add_test(tc, no_callchains);
	tcase_add_test(tc, comm_frame);
	tcase_add_test(tc, flame_boxes);
	tcase_add_test(tc, flame_leaves_out_narrow_boxes);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	build_programs();
	int rc = run_suite(stacks_suite());
	remove_programs();
	return rc;
}
