/* The REP report (profiler/rep_report.h) over hand-made recordings: a file
 * whose pmusim_rep event has no samples, 100,000 distinct sites in scrambled
 * order, and symbol names that JSON must escape. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmu_model/rep.h"
#include "profiler/perfdata.h"
#include "profiler/rep_report.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/tmp_dir.h"

#define SAMPLE_TYPE (PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD | PERF_SAMPLE_RAW)

static struct perfdata_writer *open_recording(const char *path)
{
	struct perfdata_event ev = {.name = "pmusim_rep", .type = PERF_TYPE_RAW, .config = 0x7265702e,
				    .sample_period = 1, .sample_type = SAMPLE_TYPE, .id = 1};
	struct perfdata_writer *w;
	char msg[256] = "";
	ck_assert_msg(perfdata_writer_open(&w, path, &ev, 1, NULL, msg, sizeof(msg)) == 0, "%s", msg);
	return w;
}

/* One REP record as cli/record_rep.h lays it out. */
static void put_rep(struct perfdata_writer *w, uint64_t site, uint64_t requested, uint64_t actual, uint32_t end,
		    uint32_t tid, uint64_t time)
{
	uint8_t raw[32];
	uint32_t mode = REP_LAST;
	memcpy(raw, &site, 8);
	memcpy(raw + 8, &requested, 8);
	memcpy(raw + 16, &actual, 8);
	memcpy(raw + 24, &end, 4);
	memcpy(raw + 28, &mode, 4);
	struct perf_sample s = {.id = 1, .ip = site, .time = time, .period = 1, .pid = 1, .tid = tid,
				.raw_size = sizeof(raw), .raw = raw};
	ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
}

/* A recording of a program that ran no REP instruction: no rows, no error (and,
 * under UBSan, no empty array handed to qsort). */
START_TEST(rep_report_without_rep_samples)
{
	char dir[256], path[300], msg[256] = "";
	tmp_dir_make(dir, sizeof(dir), "rep_report");
	ck_assert(dir[0]);
	snprintf(path, sizeof(path), "%s/none.data", dir);
	ck_assert_int_eq(perfdata_writer_close(open_recording(path)), 0);
	struct rep_row *rows = (struct rep_row *)1;
	size_t n = 7;
	int mode = 0;
	ck_assert_int_eq(rep_report_read(path, &rows, &n, &mode, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(mode, -1);
	free(rows);
	tmp_dir_remove(dir);
}
END_TEST

#define NSITES 100000u

static uint64_t site_of(uint32_t i)
{
	return 0x400000u + 16u * (uint64_t)i;
}

/* 100,000 distinct sites, their records in scrambled order, each site executed
 * twice (counts derived from its index) and every tenth one a third time in two
 * parts (interrupted, then resumed by the same thread): every row's counts come
 * back, sorted by site. */
START_TEST(rep_report_many_sites)
{
	char dir[256], path[300], msg[256] = "";
	tmp_dir_make(dir, sizeof(dir), "rep_report");
	ck_assert(dir[0]);
	snprintf(path, sizeof(path), "%s/many.data", dir);
	struct perfdata_writer *w = open_recording(path);
	uint64_t t = 1;
	for (int round = 0; round < 2; round++)
		for (uint32_t k = 0; k < NSITES; k++) {
			uint32_t i = (uint32_t)(((uint64_t)k * 7919u) % NSITES); /* 7919 is prime: a permutation */
			uint64_t act = round ? i % 17 + 1 : i % 13;
			put_rep(w, site_of(i), 10 + i % 5, act, round && i % 3 == 0 ? REP_END_CONDITION : REP_END_COUNT,
				1, t++);
		}
	for (uint32_t i = 0; i < NSITES; i += 10) {
		put_rep(w, site_of(i), 100, 40, REP_END_INTERRUPTED, 2, t++);
		put_rep(w, site_of(i), 0, 60, REP_END_COUNT | 0x10u, 2, t++);
	}
	ck_assert_int_eq(perfdata_writer_close(w), 0);

	struct rep_row *rows;
	size_t n;
	int mode;
	ck_assert_msg(rep_report_read(path, &rows, &n, &mode, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(mode, REP_LAST);
	ck_assert_uint_eq(n, NSITES);
	for (uint32_t i = 0; i < NSITES; i++) {
		const struct rep_row *r = &rows[i];
		uint64_t a = i % 13, b = i % 17 + 1, third = i % 10 == 0;
		ck_assert_uint_eq(r->site, site_of(i));
		ck_assert_uint_eq(r->executions, 2 + third);
		ck_assert_uint_eq(r->requested, 2 * (10 + i % 5) + (third ? 100 : 0));
		ck_assert_uint_eq(r->actual, a + b + (third ? 100 : 0));
		ck_assert_uint_eq(r->min, a < b ? a : b);
		ck_assert_uint_eq(r->max, third ? 100 : a > b ? a : b);
		ck_assert_uint_eq(r->by_condition, i % 3 == 0);
		ck_assert_int_eq(r->has_actual, 1);
		ck_assert_str_eq(r->insn, "?"); /* no file maps the sites */
	}
	free(rows);
	tmp_dir_remove(dir);
}
END_TEST

/* Names from a binary go out as JSON strings: a quote, a backslash and a
 * control character in a symbol are escaped. */
START_TEST(rep_report_json_escapes_names)
{
	struct rep_row r = {.site = 0x401000, .executions = 1, .requested = 4, .actual = 4, .min = 4, .max = 4,
			    .has_actual = 1};
	snprintf(r.symbol, sizeof(r.symbol), "op\"er\\ator\t+0x3");
	snprintf(r.insn, sizeof(r.insn), "rep movsb");
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	ck_assert_int_eq(rep_report_write(f, &r, 1, REP_LAST, 1), 0);
	fclose(f);
	ck_assert_str_eq(buf, "{\"mode\": \"last\", \"sites\": [\n"
			      "  {\"site\": \"0x401000\", \"symbol\": \"op\\\"er\\\\ator\\u0009+0x3\", "
			      "\"instruction\": \"rep movsb\", \"executions\": 1, \"requested\": 4, \"steps\": 0, "
			      "\"actual\": 4, \"min\": 4, \"mean\": 4.000, \"max\": 4, \"ended_by_condition\": 0}\n]}\n");
	free(buf);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rep_report");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, rep_report_without_rep_samples);
	tcase_add_test(tc, rep_report_many_sites);
	tcase_add_test(tc, rep_report_json_escapes_names);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
