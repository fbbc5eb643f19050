/* perfdata_next hands records out in perf's time order (profiler/perfdata_order.c): files
 * whose samples lie before the MMAP2 of their process but follow it in time, as `perf
 * record` writes them when it empties one CPU's ring buffer after another, with and
 * without FINISHED_ROUND. The expected orders are worked out by hand from perf's rules
 * (tools/perf/util/ordered-events.c), written in each row. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "profiler/perfdata.h"
#include "profiler/perfdata_write_internal.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/tmp_dir.h"

static char base[PATH_MAX];

static void make_base(void)
{
	tmp_dir_make(base, sizeof(base), "pmusim-order");
}

static void remove_base(void)
{
	tmp_dir_remove(base);
}

static const char *path_of(const char *name)
{
	static char p[PATH_MAX + 64];
	snprintf(p, sizeof(p), "%s/%s", base, name);
	return p;
}

#define PID 42u
#define ADDR0 0x400000u /* a record's identity: sample ip, mmap addr or comm tid + index */

static const struct perfdata_event event = {
    "cpu-clock", PERF_TYPE_SOFTWARE, 0, 100000,
    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD, 0, 1, 0, 0, 0, 0,
    NULL};

/* A file's records, one letter each with its time: S sample, M MMAP2, C COMM, F FORK,
 * R FINISHED_ROUND (no time). */
struct item {
	char kind;
	uint64_t time;
};

/* clang-format off */
static const struct {
	int line;
	const char *what;
	struct item items[12];
	size_t n;
	const char *order; /* indices of items (0-9, a, b) in the order perf delivers them */
} rows[] = {
	{__LINE__, "a sample before its MMAP2 in the file, no rounds: all sorted at the end",
	 {{'C', 50}, {'S', 300}, {'M', 100}, {'S', 200}}, 4, "0231"},
	{__LINE__, "two CPUs' buffers in rounds: the first round flushes nothing, the second up to"
	 " round one's latest time (250), the end the rest",
	 {{'S', 150}, {'S', 250}, {'M', 100}, {'S', 120}, {'R', 0},
	  {'S', 260}, {'S', 140}, {'S', 270}, {'R', 0}, {'S', 280}}, 10, "23601579"},
	{__LINE__, "a record later than a flush stays behind it (not a full sort, not per round)",
	 {{'S', 100}, {'S', 200}, {'R', 0}, {'S', 300}, {'R', 0}, {'S', 150}, {'S', 400}}, 7,
	 "01536"},
	{__LINE__, "equal times keep file order, across record kinds and rounds",
	 {{'S', 100}, {'M', 100}, {'R', 0}, {'C', 100}, {'S', 90}, {'R', 0}, {'S', 100}}, 7,
	 "40136"},
	{__LINE__, "a record without a time (0) comes out at once, before queued ones",
	 {{'S', 200}, {'C', 0}, {'S', 100}, {'M', 0}}, 4, "1320"},
	{__LINE__, "a round on an empty queue keeps the limit; the queue's latest time restarts"
	 " when it empties (70, not 100, limits the fourth round)",
	 {{'R', 0}, {'S', 100}, {'R', 0}, {'S', 50}, {'R', 0}, {'S', 70}, {'R', 0}, {'S', 80},
	  {'S', 60}, {'R', 0}, {'S', 65}}, 11, "3158a7"},
	{__LINE__, "FORK is ordered by its trailer's time",
	 {{'S', 200}, {'F', 150}, {'S', 100}}, 3, "210"},
	{__LINE__, "a file in time order comes out in file order",
	 {{'C', 0}, {'M', 0}, {'C', 10}, {'M', 20}, {'S', 30}, {'S', 30}, {'R', 0}, {'S', 40},
	  {'F', 50}, {'S', 60}}, 10, "012345789"},
};
/* clang-format on */

static void write_items(const char *path, const struct item *it, size_t n)
{
	struct perfdata_writer *w;
	char msg[256];
	ck_assert_int_eq(perfdata_writer_open(&w, path, &event, 1, NULL, msg, sizeof(msg)), 0);
	for (size_t i = 0; i < n; i++) {
		int rc = 0;
		uint64_t t = it[i].time;
		if (it[i].kind == 'S') {
			struct perf_sample s = {.id = 1, .ip = ADDR0 + i, .pid = PID, .tid = PID,
			                        .time = t, .period = 100000};
			rc = perfdata_write_sample(w, &s);
		} else if (it[i].kind == 'M') {
			rc = perfdata_write_mmap2(w, PID, PID, ADDR0 + i, 0x1000, 0, 5, 2, "/bin/prog", t);
		} else if (it[i].kind == 'C') {
			rc = perfdata_write_comm(w, PID, (uint32_t)(ADDR0 + i), "prog", t);
		} else if (it[i].kind == 'F') {
			rc = perfdata_write_task(w, PERF_RECORD_FORK, PID, 1, (uint32_t)(ADDR0 + i), PID,
			                         t);
		} else {
			rc = perfdata_write_round(w);
		}
		ck_assert_int_eq(rc, 0);
	}
	ck_assert_int_eq(perfdata_writer_close(w), 0);
}

/* The item index a record was written from. */
static long index_of(const struct perf_record *r)
{
	switch (r->type) {
	case PERF_RECORD_SAMPLE:
		return (long)(r->u.sample.ip - ADDR0);
	case PERF_RECORD_MMAP2:
		ck_assert_str_eq(r->u.mmap.filename, "/bin/prog");
		return (long)(r->u.mmap.addr - ADDR0);
	case PERF_RECORD_COMM:
		ck_assert_str_eq(r->u.comm.comm, "prog");
		return (long)(r->u.comm.tid - ADDR0);
	case PERF_RECORD_FORK:
		return (long)(r->u.task.tid - ADDR0);
	default:
		return -1;
	}
}

START_TEST(records_come_out_in_perfs_order)
{
	for (size_t k = 0; k < sizeof(rows) / sizeof(rows[0]); k++) {
		const char *path = path_of("order.data");
		write_items(path, rows[k].items, rows[k].n);
		struct perfdata *pd;
		char msg[256], got[16] = "";
		ck_assert_int_eq(perfdata_open(path, &pd, msg, sizeof(msg)), 0);
		struct perf_record r;
		int rc;
		size_t m = 0;
		while ((rc = perfdata_next(pd, &r, msg, sizeof(msg))) > 0 && m < sizeof(got) - 1) {
			long i = index_of(&r);
			ck_assert_msg(i >= 0 && (size_t)i < rows[k].n && rows[k].items[i].kind != 'R',
			              "row line %d: record %u unknown", rows[k].line, r.type);
			ck_assert_msg(r.time == rows[k].items[i].time, "row line %d: item %ld has time %llu", rows[k].line,
			              i, (unsigned long long)r.time);
			got[m++] = "0123456789ab"[i];
		}
		ck_assert_int_eq(rc, 0);
		got[m] = 0;
		ck_assert_msg(strcmp(got, rows[k].order) == 0, "row line %d (%s): order %s, want %s",
		              rows[k].line, rows[k].what, got, rows[k].order);
		perfdata_close(pd);
		remove(path);
	}
}
END_TEST

/* Records queued before a record with a broken size still come out, after the error. */
START_TEST(queued_records_follow_a_bad_size)
{
	static const struct item items[] = {{'S', 200}, {'S', 100}, {'S', 300}};
	const char *path = path_of("bad.data");
	write_items(path, items, 3);
	struct perfdata *pd;
	struct perf_record r;
	char msg[256];
	uint64_t last = 0;
	ck_assert_int_eq(perfdata_open(path, &pd, msg, sizeof(msg)), 0);
	while (perfdata_next(pd, &r, msg, sizeof(msg)) > 0)
		if (r.u.sample.ip == ADDR0 + 2)
			last = r.offset;
	perfdata_close(pd);
	ck_assert_uint_ne(last, 0);
	FILE *f = fopen(path, "r+b");
	ck_assert_ptr_nonnull(f);
	const uint16_t huge = 0xfff8; /* runs past the data section */
	ck_assert_int_eq(fseek(f, (long)last + 6, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(&huge, 2, 1, f), 1);
	ck_assert_int_eq(fclose(f), 0);
	ck_assert_int_eq(perfdata_open(path, &pd, msg, sizeof(msg)), 0);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_msg(strstr(msg, "bad size"), "%s", msg);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(r.u.sample.ip, ADDR0 + 1);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(r.u.sample.ip, ADDR0);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 0);
	perfdata_close(pd);
	remove(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perfdata_order");
	TCase *tc = tcase_create("core");
	tcase_add_unchecked_fixture(tc, make_base, remove_base);
	tcase_add_test(tc, records_come_out_in_perfs_order);
	tcase_add_test(tc, queued_records_follow_a_bad_size);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
