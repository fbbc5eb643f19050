/* Dynamic PMUs in perf.data (profiler/perfdata_pmus.c, perfdata_read.c): the
 * PMU_MAPPINGS feature of a recording with an ibs_op event, byte for byte against
 * the layout of perf.data-file-format.txt written out here (u32 nr, then per PMU a
 * u32 type and a perf_header_string padded to 64), found through the file header
 * by this test's own walk; the names read back; no such feature in recordings of
 * fixed types only; the attr perfdata_ibs_op_event fills; the writer's refusals;
 * corrupt mappings refused by the reader. */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/tmp_dir.h"

/* Each test works in its own directory under one base directory, which the parent
 * process removes after the suite even when a test failed half-way. */
static char base[PATH_MAX], dir[PATH_MAX + 16];

static void make_base(void)
{
	tmp_dir_make(base, sizeof(base), "check_perfdata_pmus");
}

static void remove_base(void)
{
	tmp_dir_remove(base);
}

static void make_dir(void)
{
	ck_assert_msg(base[0], "no base directory");
	snprintf(dir, sizeof(dir), "%s/t.XXXXXX", base);
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	tmp_dir_remove(dir);
}

static const char *path(const char *name)
{
	static char p[2 * PATH_MAX];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	return p;
}

static const struct perfdata_info amd_info = {
    .hostname = "pmusim", .arch = "x86_64", .cpuid = "AuthenticAMD,25,1,1", .nr_cpus = 1};

/* An ibs_op event and a cycles event in one recording, one sample each. */
static void write_ibs_recording(const char *file, uint32_t ibs_type)
{
	struct perfdata_event ev[2];
	ck_assert_int_eq(perfdata_ibs_op_event(&ev[0], 100000, 0, 1, NULL), 0);
	ev[0].type = ibs_type;
	ev[1] = (struct perfdata_event){
	    .name = "cycles:u", .type = PERF_TYPE_HARDWARE, .sample_period = 1000, .id = 2};
	ev[0].sample_type = ev[1].sample_type =
	    PERFDATA_IBS_OP_SAMPLE_TYPE | PERF_SAMPLE_IDENTIFIER;
	struct perfdata_writer *w;
	char msg[256] = "";
	ck_assert_msg(perfdata_writer_open(&w, file, ev, 2, &amd_info, msg, sizeof(msg)) == 0, "%s",
	              msg);
	struct ibs_op op = {.ip = 0x4016c4,
	                    .max_cnt = 100000,
	                    .load = 1,
	                    .width = 8,
	                    .addr_valid = 1,
	                    .data_addr = 0x4a2000};
	uint8_t raw[IBS_OP_RAW_SIZE];
	ck_assert_uint_eq(ibs_op_encode(&op, raw, sizeof(raw)), IBS_OP_RAW_SIZE);
	struct perf_sample s = {.id = 1,
	                        .ip = op.ip,
	                        .pid = 7,
	                        .tid = 7,
	                        .time = 10,
	                        .period = 100000,
	                        .addr = op.data_addr,
	                        .raw = raw,
	                        .raw_size = sizeof(raw)};
	ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
	struct perf_sample c = {
	    .id = 2, .ip = 0x4016a0, .pid = 7, .tid = 7, .time = 11, .period = 1000};
	ck_assert_int_eq(perfdata_write_sample(w, &c), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The body of feature bit `feat` of a perf.data file, by the layout of
 * perf.data-file-format.txt: header (data section at 40/48, feature bitmap at 72),
 * then after the data one perf_file_section per set bit, in bit order. NULL when
 * the bit is clear. *buf holds the whole file (caller frees). */
static const uint8_t *feature(const char *file, int feat, uint8_t **buf, size_t *size)
{
	FILE *f = fopen(file, "rb");
	ck_assert_ptr_nonnull(f);
	static uint8_t data[1 << 16];
	size_t n = fread(data, 1, sizeof(data), f);
	fclose(f);
	ck_assert(n > 104 && n < sizeof(data));
	*buf = malloc(n);
	memcpy(*buf, data, n);
	uint64_t bits[4];
	memcpy(bits, data + 72, sizeof(bits));
	if (!(bits[feat / 64] >> (feat % 64) & 1))
		return NULL;
	int before = 0;
	for (int b = 0; b < feat; b++)
		before += (int)(bits[b / 64] >> (b % 64) & 1);
	uint64_t table = u64_at(data + 40) + u64_at(data + 48) + 16u * (uint64_t)before;
	uint64_t off = u64_at(data + table), len = u64_at(data + table + 8);
	ck_assert(off + len <= n);
	*size = (size_t)len;
	return *buf + off;
}

/* One PMU of the expected mapping: u32 type, u32 64, the name and NULs to 64 bytes. */
static size_t put_pmu(uint8_t *p, uint32_t type, const char *name)
{
	uint32_t len = 64;
	memcpy(p, &type, 4);
	memcpy(p + 4, &len, 4);
	memset(p + 8, 0, 64);
	memcpy(p + 8, name, strlen(name));
	return 72;
}

START_TEST(ibs_recording_maps_its_pmus)
{
	make_dir();
	write_ibs_recording(path("ibs.data"), 11);
	uint8_t want[8 + 6 * 72], *buf;
	uint32_t nr = 6;
	size_t n = 4, size = 0;
	memcpy(want, &nr, 4);
	n += put_pmu(want + n, 1, "software");
	n += put_pmu(want + n, 2, "tracepoint");
	n += put_pmu(want + n, 4, "cpu");
	n += put_pmu(want + n, 5, "breakpoint");
	n += put_pmu(want + n, 10, "ibs_fetch");
	n += put_pmu(want + n, 11, "ibs_op");
	const uint8_t *got = feature(path("ibs.data"), 16, &buf, &size);
	ck_assert_msg(got, "no PMU_MAPPINGS feature");
	ck_assert_uint_eq(size, n);
	ck_assert_msg(memcmp(got, want, n) == 0, "PMU_MAPPINGS bytes differ");
	free(buf);

	struct perfdata *pd;
	char msg[256] = "";
	ck_assert_msg(perfdata_open(path("ibs.data"), &pd, msg, sizeof(msg)) == 0, "%s", msg);
	static const struct {
		uint32_t type;
		const char *name;
	} names[] = {{1, "software"},   {2, "tracepoint"}, {4, "cpu"}, {5, "breakpoint"},
	             {10, "ibs_fetch"}, {11, "ibs_op"},    {0, NULL},  {3, NULL},
	             {6, NULL},         {12, NULL}};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		const char *got_name = perfdata_pmu_name(pd, names[i].type);
		ck_assert_msg(names[i].name ? got_name && !strcmp(got_name, names[i].name)
		                            : !got_name,
		              "type %u: %s", names[i].type, got_name ? got_name : "(none)");
	}
	const struct perfdata_event *ibs = perfdata_event(pd, 0), *cyc = perfdata_event(pd, 1);
	ck_assert_str_eq(ibs->pmu, "ibs_op");
	ck_assert_str_eq(ibs->name, "ibs_op//");
	ck_assert_uint_eq(ibs->type, 11);
	ck_assert_ptr_null(cyc->pmu);
	struct perf_record r;
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(r.u.sample.addr, 0x4a2000);
	ck_assert_uint_eq(r.u.sample.raw_size, 68); /* 4 + 68 is a multiple of 8: no padding */
	struct ibs_op op;
	ck_assert_int_eq(ibs_op_decode(r.u.sample.raw, r.u.sample.raw_size, &op), 0);
	ck_assert(op.ip == 0x4016c4 && op.load && op.width == 8 && op.data_addr == 0x4a2000);
	perfdata_close(pd);

	/* another machine's numbering reads as written */
	write_ibs_recording(path("nine.data"), 9);
	ck_assert_int_eq(perfdata_open(path("nine.data"), &pd, msg, sizeof(msg)), 0);
	ck_assert_str_eq(perfdata_pmu_name(pd, 9), "ibs_op");
	ck_assert_ptr_null(perfdata_pmu_name(pd, 11));
	ck_assert_str_eq(perfdata_event(pd, 0)->pmu, "ibs_op");
	perfdata_close(pd);
	remove_dir();
}
END_TEST

START_TEST(fixed_types_only_no_mappings)
{
	make_dir();
	struct perfdata_event ev = {.name = "cycles:u",
	                            .type = PERF_TYPE_HARDWARE,
	                            .sample_period = 1000,
	                            .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID,
	                            .id = 1};
	struct perfdata_writer *w;
	char msg[256] = "";
	ck_assert_int_eq(
	    perfdata_writer_open(&w, path("c.data"), &ev, 1, &amd_info, msg, sizeof(msg)), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	uint8_t *buf;
	size_t size;
	ck_assert_ptr_null(feature(path("c.data"), 16, &buf, &size));
	free(buf);
	struct perfdata *pd;
	ck_assert_int_eq(perfdata_open(path("c.data"), &pd, msg, sizeof(msg)), 0);
	ck_assert_ptr_null(perfdata_pmu_name(pd, 4));
	ck_assert_ptr_null(perfdata_event(pd, 0)->pmu);
	perfdata_close(pd);
	remove_dir();
}
END_TEST

START_TEST(ibs_op_event_attr)
{
	struct perfdata_event ev;
	ck_assert_int_eq(perfdata_ibs_op_event(&ev, 250000, 1, 3, NULL), 0);
	ck_assert_uint_eq(ev.type, 11);
	ck_assert_str_eq(ev.pmu, "ibs_op");
	ck_assert_uint_eq(ev.config, 0x80000); /* bit 19, ibs_op/format/cnt_ctl "config:19" */
	ck_assert_uint_eq(ev.sample_period, 250000);
	ck_assert_uint_eq(ev.freq, 0);
	/* IP (1) | TID (2) | TIME (4) | ADDR (8) | PERIOD (0x100) | RAW (0x400) */
	ck_assert_uint_eq(ev.sample_type, 0x50f);
	ck_assert_uint_eq(ev.id, 3);
	ck_assert_str_eq(ev.name, "ibs_op/cnt_ctl=1/");
	ck_assert_uint_eq(ev.precise_ip + ev.branch_sample_type + ev.sample_regs_user, 0);
	ck_assert_int_eq(perfdata_ibs_op_event(&ev, 16, 0, 1, "ibs_op//u"), 0);
	ck_assert_str_eq(ev.name, "ibs_op//u");
	ck_assert_uint_eq(ev.config, 0);
	ck_assert_int_eq(perfdata_ibs_op_event(&ev, 0x7fffff0, 0, 1, NULL), 0);
	ck_assert_str_eq(ev.name, "ibs_op//");
	static const struct {
		uint64_t period;
		int cnt_ctl;
		uint64_t id;
	} bad[] = {{0, 0, 1},  {8, 0, 1},   {24, 0, 1}, {1u << 27, 0, 1},
	           {16, 2, 1}, {16, -1, 1}, {16, 0, 0}};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		ck_assert_msg(perfdata_ibs_op_event(&ev, bad[i].period, bad[i].cnt_ctl, bad[i].id,
		                                    NULL) == PMUSIM_ERR_ARG,
		              "row %zu accepted", i);
}
END_TEST

START_TEST(writer_refuses_unnamed_or_undecodable)
{
	make_dir();
	struct perfdata_event ibs, cyc = {.name = "cycles:u",
	                                  .sample_period = 1000,
	                                  .sample_type = PERFDATA_IBS_OP_SAMPLE_TYPE,
	                                  .id = 2};
	ck_assert_int_eq(perfdata_ibs_op_event(&ibs, 4096, 0, 1, NULL), 0);
	struct perfdata_info intel = amd_info;
	intel.cpuid = "GenuineIntel,6,85,4";
	static const struct {
		int line;
		int ibs_pmu_null, cyc_pmu, no_raw, info; /* info: 0 AMD, 1 Intel, 2 none */
		uint32_t cyc_type;
		const char *why;
	} rows[] = {
	    {__LINE__, 1, 0, 0, 0, 0, "type 11 needs a PMU name"},
	    {__LINE__, 0, 1, 0, 0, 0, "type 0 takes no PMU name"},
	    {__LINE__, 0, 1, 0, 0, 11, "map PMU types and names differently"},
	    {__LINE__, 0, 0, 1, 0, 0, "need PERF_SAMPLE_RAW"},
	    {__LINE__, 0, 0, 0, 1, 0, "AuthenticAMD"},
	    {__LINE__, 0, 0, 0, 2, 0, "AuthenticAMD"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct perfdata_event ev[2] = {ibs, cyc};
		if (rows[i].ibs_pmu_null)
			ev[0].pmu = NULL;
		if (rows[i].cyc_pmu)
			ev[1].pmu = "cycles_pmu";
		ev[1].type = rows[i].cyc_type;
		if (rows[i].no_raw)
			ev[0].sample_type = ev[1].sample_type = PERF_SAMPLE_IP;
		ev[0].sample_type = ev[1].sample_type |= PERF_SAMPLE_IDENTIFIER;
		const struct perfdata_info *info = rows[i].info == 0   ? &amd_info
		                                   : rows[i].info == 1 ? &intel
		                                                       : NULL;
		struct perfdata_writer *w = NULL;
		char msg[256] = "";
		ck_assert_msg(perfdata_writer_open(&w, path("x.data"), ev, 2, info, msg,
		                                   sizeof(msg)) == PMUSIM_ERR_ARG,
		              "row line %d accepted", rows[i].line);
		ck_assert_msg(strstr(msg, rows[i].why), "row line %d: \"%s\"", rows[i].line, msg);
		ck_assert_ptr_null(w);
	}
	ck_assert_int_eq(access(path("x.data"), F_OK), -1);
	remove_dir();
}
END_TEST

/* Rewrites the file with bytes at off replaced. */
static void patch(const char *file, size_t off, const void *bytes, size_t n)
{
	FILE *f = fopen(file, "r+b");
	ck_assert_ptr_nonnull(f);
	ck_assert_int_eq(fseek(f, (long)off, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(bytes, 1, n, f), n);
	fclose(f);
}

START_TEST(reader_refuses_corrupt_mappings)
{
	make_dir();
	static const struct {
		int line;
		size_t at; /* offset in the feature body */
		uint32_t value;
	} rows[] = {
	    {__LINE__, 0, 1000},        /* nr past the body */
	    {__LINE__, 0, 7},           /* one PMU more than there is */
	    {__LINE__, 8, 0x10000},     /* the first name's length past the body */
	    {__LINE__, 12, 0x41414141}, /* a name without its NUL: "AAAAware", then 60 NULs: fine */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		write_ibs_recording(path("c.data"), 11);
		uint8_t *buf;
		size_t size;
		const uint8_t *body = feature(path("c.data"), 16, &buf, &size);
		ck_assert_ptr_nonnull(body);
		patch(path("c.data"), (size_t)(body - buf) + rows[i].at, &rows[i].value, 4);
		free(buf);
		struct perfdata *pd = NULL;
		char msg[256] = "";
		int rc = perfdata_open(path("c.data"), &pd, msg, sizeof(msg));
		if (rows[i].at == 12) { /* still a string with its NUL: read as written */
			ck_assert_int_eq(rc, 0);
			ck_assert_str_eq(perfdata_pmu_name(pd, 1), "AAAAware");
			perfdata_close(pd);
			continue;
		}
		ck_assert_msg(rc == PMUSIM_ERR_FORMAT && strstr(msg, "PMU_MAPPINGS"),
		              "row line %d: %d %s", rows[i].line, rc, msg);
	}
	remove_dir();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perfdata_pmus");
	TCase *tc = tcase_create("core");
	tcase_add_unchecked_fixture(tc, make_base, remove_base);
	tcase_add_test(tc, ibs_recording_maps_its_pmus);
	tcase_add_test(tc, fixed_types_only_no_mappings);
	tcase_add_test(tc, ibs_op_event_attr);
	tcase_add_test(tc, writer_refuses_unnamed_or_undecodable);
	tcase_add_test(tc, reader_refuses_corrupt_mappings);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
