/* perf.data writer and reader (profiler/perfdata.h): a round trip of every sample field
 * and branch flag, the real Skylake LBR recording, truncated and corrupted files, writes
 * cut short by RLIMIT_FSIZE, and real perf (`perf script`, `perf report`) reading our files. */
#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "profiler/perfdata.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/tmp_dir.h"

/* Each test works in its own directory under one base directory, which the parent
 * process removes after the suite even when a test failed half-way. */
static char base[PATH_MAX], dir[PATH_MAX + 16];

static void make_base(void)
{
	tmp_dir_make(base, sizeof(base), "check_perfdata");
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

static const char *in_dir(const char *name)
{
	static char p[4][2 * PATH_MAX];
	static int n;
	char *s = p[n++ % 4];
	snprintf(s, sizeof(p[0]), "%s/%s", dir, name);
	return s;
}

static int files_in_dir(void)
{
	DIR *d = opendir(dir);
	int n = 0;
	for (struct dirent *e; d && (e = readdir(d));)
		n += e->d_name[0] != '.';
	if (d)
		closedir(d);
	return n;
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f != NULL, "cannot open %s", path);
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	uint8_t *p = malloc(*len + 1);
	ck_assert_uint_eq(fread(p, 1, *len, f), *len);
	fclose(f);
	return p;
}

static void spit(const char *path, const uint8_t *p, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* ---- the recording of the round trip ---- */

#define ST_ALL                                                                                     \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |             \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK |      \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
#define BR_USER_ANY (PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY)
#define REGS_MASK 0x1a0ULL /* SP, IP, R8 of perf_regs.h: three registers per sample */

static const struct perfdata_event two_events[2] = {
    {"cycles:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 100003, ST_ALL, BR_USER_ANY, 11, 2,
     REGS_MASK, 64, 0, NULL},
    {"branch-misses:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 20011, ST_ALL,
     PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY_CALL, 12, 0, REGS_MASK, 64, 0, NULL},
};

static const char *const rec_argv[] = {"pmusim", "record", "-b", "--", "./loops"};
static const struct perfdata_info rec_info = {
    .hostname = "testhost",
    .os_release = "6.1.0-test",
    .version = "pmusim-test",
    .arch = "x86_64",
    .cpudesc = "pmusim model CPU",
    .cpuid = "GenuineIntel,6,85,4",
    .nr_cpus = 4,
    .total_mem_kb = 16384000,
    .cmdline = rec_argv,
    .ncmdline = 5,
};

/* Hand-written samples (0, 1 and 32 branch entries, extreme values); entry 0 of each
 * stack is given, the others come from branch_of(). */
/* clang-format off */
static const struct {
	int line;
	uint64_t id, ip, time, period, addr;
	uint32_t pid, tid, cpu;
	uint64_t nbr;
	struct perf_branch first;
} rows[] = {
	{__LINE__, 11, 0x401000, 1000, 100003, 0, 100, 100, 0, 0, {0}},
	{__LINE__, 12, 0x401234, 2000, 20011, 0xdeadbeef, 100, 101, 3, 1,
	 {0xffffffffffffffff, 0, 0xffff, 1, 1, 15}},
	{__LINE__, 11, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT64_MAX, UINT32_MAX, UINT32_MAX,
	 UINT32_MAX, 32, {0x401000, 0x401010, 1, 0, 1, PERF_BR_COND}},
};
/* clang-format on */
#define NROWS (sizeof(rows) / sizeof(rows[0]))
/* Generated samples: 2048 stacks of 32 entries hold every cycles value 0..65535, every
 * type 0..15 and, for each type, every mispred/predicted pair. */
#define NBULK 2048u

static struct perf_branch branch_of(uint64_t j)
{
	struct perf_branch b;
	memset(&b, 0, sizeof(b));
	b.from = 0x400000 + 16 * j;
	b.to = 0x7fff00000000 - 8 * j;
	b.cycles = (uint16_t)j;
	b.type = j & 15;
	b.mispred = j >> 4 & 1;
	b.predicted = j >> 5 & 1;
	return b;
}

/* Raw payload of sample i: 0, 5 (padded to 12) or 36 bytes (no padding). */
static uint32_t raw_of(size_t i, uint8_t *raw)
{
	uint32_t n = i % 3 == 0 ? 0 : i % 3 == 1 ? 5 : 36;
	for (uint32_t j = 0; j < n; j++)
		raw[j] = (uint8_t)(i * 7 + j + 1);
	return n;
}

/* Sample i of the recording; returns the line of its row (0 for generated ones). */
static int fill_sample(size_t i, struct perf_sample *s, struct perf_branch *br)
{
	static uint8_t raw[64];
	static uint64_t chain[8];
	memset(s, 0, sizeof(*s));
	s->misc = PERF_RECORD_MISC_USER;
	s->br = br;
	s->raw_size = raw_of(i, raw);
	s->raw = raw;
	/* callchains of 0 to 4 entries: the user context marker, then return addresses */
	s->nchain = i % 5;
	for (uint64_t j = 0; j < s->nchain; j++)
		chain[j] = j ? 0x400000 + 0x10 * i + j : PERF_CONTEXT_USER;
	s->chain = chain;
	/* user registers every other sample; stack dumps of 0, 64 (dyn 24) or 64 (dyn 64) bytes */
	static uint64_t regs[3];
	static uint8_t stack[64];
	s->regs_abi = i % 2 ? PERF_SAMPLE_REGS_ABI_64 : 0;
	for (int j = 0; j < 3; j++)
		regs[j] = 0x7fff0000 + i * 3 + (uint64_t)j;
	s->regs = s->regs_abi ? regs : NULL;
	s->stack_size = i % 3 ? 64 : 0;
	s->stack_dyn = i % 3 == 1 ? 24 : i % 3 == 2 ? 64 : 0;
	for (int j = 0; j < 64; j++)
		stack[j] = (uint8_t)(i + (size_t)j * 3);
	s->stack = s->stack_size ? stack : NULL;
	if (i < NROWS) {
		s->id = rows[i].id, s->ip = rows[i].ip, s->time = rows[i].time;
		s->period = rows[i].period, s->addr = rows[i].addr;
		s->pid = rows[i].pid, s->tid = rows[i].tid, s->cpu = rows[i].cpu;
		s->nbr = rows[i].nbr;
		for (uint64_t e = 0; e < s->nbr; e++)
			br[e] = e ? branch_of(100000 + 32 * i + e) : rows[i].first;
		return rows[i].line;
	}
	uint64_t k = i - NROWS;
	s->id = k & 1 ? 12 : 11, s->ip = 0x400000 + k, s->time = 10000 + k;
	s->period = 1000 + k, s->addr = k << 12;
	s->pid = 100, s->tid = 100 + (uint32_t)(k % 3), s->cpu = (uint32_t)(k % 4);
	s->nbr = 32;
	for (uint64_t e = 0; e < 32; e++)
		br[e] = branch_of(32 * k + e);
	return 0;
}

static const uint8_t bid_long[20] = {0x57, 0x2a, 0xc7, 0x24, 0x87, 0xae, 0x19, 0x66, 0x01, 0x02,
                                     0x03, 0x04, 0x05, 0x06, 0x07, 0x08, 0x09, 0x0a, 0x0b, 0xff};
static const uint8_t bid_short[8] = {0xde, 0xad, 0xbe, 0xef, 0, 0, 0, 1};

/* The round-trip recording: COMM, MMAP2, nsamples samples, two build ids. */
static int write_recording(const char *path, size_t nsamples, size_t *written)
{
	struct perfdata_writer *w;
	char msg[256];
	int rc = perfdata_writer_open(&w, path, two_events, 2, &rec_info, msg, sizeof(msg));
	if (rc)
		return rc;
	ck_assert_int_eq(perfdata_write_comm(w, 100, 100, "loops", 500), 0);
	ck_assert_int_eq(perfdata_write_mmap2(w, 100, 100, 0x400000, 0x1000, 0, 5, 2,
	                                      "/work/build/workloads/loops", 600),
	                 0);
	struct perf_sample s;
	struct perf_branch br[32];
	size_t i = 0;
	for (; i < nsamples; i++) {
		fill_sample(i, &s, br);
		if (perfdata_write_sample(w, &s) != 0)
			break;
	}
	if (written)
		*written = i;
	ck_assert_int_eq(perfdata_add_build_id(w, "/work/build/workloads/loops", bid_long, 20), 0);
	ck_assert_int_eq(perfdata_add_build_id(w, "/lib/x.so", bid_short, 8), 0);
	return perfdata_writer_close(w);
}

#define SAME(field)                                                                                \
	ck_assert_msg(got->field == exp.field,                                                     \
	              "sample %zu (row line %d): " #field " read %#llx, written %#llx", i, line,   \
	              (unsigned long long)got->field, (unsigned long long)exp.field)

static void check_sample(size_t i, const struct perf_sample *got)
{
	/* The layout check_sample() knows: a new field moves an offset or the size (or
	 * fills padding, which the memcmp() below then sees). Compare the new field, fill
	 * it in fill_sample(), then record the new layout here. */
#define AT(T, f, o) (offsetof(struct T, f) == (o))
	ck_assert_msg(AT(perf_sample, id, 0) && AT(perf_sample, ip, 8) &&
	                  AT(perf_sample, time, 16) && AT(perf_sample, period, 24) &&
	                  AT(perf_sample, addr, 32) && AT(perf_sample, pid, 40) &&
	                  AT(perf_sample, tid, 44) && AT(perf_sample, cpu, 48) &&
	                  AT(perf_sample, misc, 52) && AT(perf_sample, nbr, 56) &&
	                  AT(perf_sample, br, 64) && AT(perf_sample, raw_size, 72) &&
	                  AT(perf_sample, raw, 80) && AT(perf_sample, nchain, 88) &&
	                  AT(perf_sample, chain, 96) && AT(perf_sample, regs_abi, 104) &&
	                  AT(perf_sample, regs, 112) && AT(perf_sample, stack_size, 120) &&
	                  AT(perf_sample, stack, 128) && AT(perf_sample, stack_dyn, 136) &&
	                  sizeof(struct perf_sample) == 144,
	              "struct perf_sample changed: extend check_sample() and fill_sample()");
	ck_assert_msg(AT(perf_branch, from, 0) && AT(perf_branch, to, 8) &&
	                  AT(perf_branch, cycles, 16) && AT(perf_branch, mispred, 18) &&
	                  AT(perf_branch, predicted, 19) && AT(perf_branch, type, 20) &&
	                  sizeof(struct perf_branch) == 24,
	              "struct perf_branch changed: extend check_sample() and branch_of()");
#undef AT
	struct perf_sample exp;
	struct perf_branch br[32];
	int line = fill_sample(i, &exp, br);
	SAME(id), SAME(ip), SAME(time), SAME(period), SAME(addr);
	SAME(pid), SAME(tid), SAME(cpu), SAME(misc), SAME(nbr);
	/* raw: the payload, then zeros up to the kernel's padding */
	uint32_t padded = (uint32_t)(((4u + exp.raw_size + 7u) & ~7u) - 4u);
	ck_assert_msg(got->raw_size == padded && (padded == 0 || got->raw),
		      "sample %zu (row line %d): raw size %u, expected %u", i, line, got->raw_size, padded);
	for (uint32_t j = 0; j < padded; j++)
		ck_assert_msg(got->raw[j] == (j < exp.raw_size ? exp.raw[j] : 0),
			      "sample %zu (row line %d): raw byte %u differs", i, line, j);
	for (uint64_t e = 0; e < exp.nbr; e++) {
		const struct perf_branch *g = &got->br[e], *x = &br[e];
		ck_assert_msg(g->from == x->from && g->to == x->to && g->cycles == x->cycles &&
		                  g->mispred == x->mispred && g->predicted == x->predicted &&
		                  g->type == x->type,
		              "sample %zu (row line %d) branch %llu differs", i, line,
		              (unsigned long long)e);
		ck_assert_msg(
		    memcmp(g, x, sizeof(*g)) == 0,
		    "sample %zu branch %llu: a field check_sample() does not know differs", i,
		    (unsigned long long)e);
	}
	exp.br = exp.nbr ? got->br : NULL;
	exp.raw_size = padded; /* compared byte for byte above */
	exp.raw = got->raw;
	ck_assert_msg(got->nchain == exp.nchain, "sample %zu: %llu callchain entries, expected %llu", i,
		      (unsigned long long)got->nchain, (unsigned long long)exp.nchain);
	for (uint64_t j = 0; j < exp.nchain; j++)
		ck_assert_msg(got->chain[j] == exp.chain[j], "sample %zu: callchain entry %llu differs", i,
			      (unsigned long long)j);
	exp.chain = got->chain;
	SAME(regs_abi), SAME(stack_size), SAME(stack_dyn);
	for (int j = 0; exp.regs_abi && j < 3; j++)
		ck_assert_msg(got->regs[j] == exp.regs[j], "sample %zu: register %d differs", i, j);
	/* the dump: its valid bytes, then zeros to its size */
	for (uint64_t j = 0; j < exp.stack_size; j++)
		ck_assert_msg(got->stack[j] == (j < exp.stack_dyn ? exp.stack[j] : 0), "sample %zu: stack byte %llu",
			      i, (unsigned long long)j);
	exp.regs = got->regs;
	exp.stack = got->stack;
	ck_assert_msg(memcmp(&exp, got, sizeof(exp)) == 0,
	              "sample %zu: a field check_sample() does not know differs", i);
}

static void check_events(const struct perfdata *pd)
{
	ck_assert_uint_eq(perfdata_nevents(pd), 2);
	for (size_t i = 0; i < 2; i++) {
		const struct perfdata_event *g = perfdata_event(pd, i), *x = &two_events[i];
		ck_assert_str_eq(g->name, x->name);
		ck_assert_uint_eq(g->type, x->type);
		ck_assert_uint_eq(g->config, x->config);
		ck_assert_uint_eq(g->sample_period, x->sample_period);
		ck_assert_uint_eq(g->sample_type, x->sample_type);
		ck_assert_uint_eq(g->branch_sample_type, x->branch_sample_type);
		ck_assert_uint_eq(g->id, x->id);
		ck_assert_uint_eq(g->precise_ip, x->precise_ip);
		ck_assert_uint_eq(g->sample_regs_user, x->sample_regs_user);
		ck_assert_uint_eq(g->sample_stack_user, x->sample_stack_user);
		ck_assert_int_eq(perfdata_event_of_id(pd, x->id), (int)i);
	}
	ck_assert_ptr_null(perfdata_event(pd, 2));
	ck_assert_int_eq(perfdata_event_of_id(pd, 13), -1);
}

static void check_build_ids(const struct perfdata *pd)
{
	const uint8_t *id;
	size_t len;
	const char *file;
	ck_assert_uint_eq(perfdata_nbuild_ids(pd), 2);
	ck_assert_int_eq(perfdata_build_id(pd, 0, &id, &len, &file), 0);
	ck_assert_uint_eq(len, 20);
	ck_assert_mem_eq(id, bid_long, 20);
	ck_assert_str_eq(file, "/work/build/workloads/loops");
	ck_assert_int_eq(perfdata_build_id(pd, 1, &id, &len, &file), 0);
	ck_assert_uint_eq(len, 8);
	ck_assert_mem_eq(id, bid_short, 8);
	ck_assert_str_eq(file, "/lib/x.so");
	ck_assert_int_eq(perfdata_build_id(pd, 2, &id, &len, &file), PMUSIM_ERR_ARG);
}

/* Reads a round-trip recording: COMM, MMAP2, then samples 0..n-1 in order. */
static size_t check_recording(const char *path)
{
	struct perfdata *pd;
	struct perf_record r;
	char msg[256] = "";
	ck_assert_msg(perfdata_open(path, &pd, msg, sizeof(msg)) == 0, "%s", msg);
	check_events(pd);
	check_build_ids(pd);
	/* the third row's time, UINT64_MAX, is no time to perf: that sample is handed out at
	 * once, before the COMM and MMAP2 that wait in the time-order queue (perfdata_order.c) */
	size_t n = 0, no_time = 2;
	int seen_no_time = 0;
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	if (r.type == PERF_RECORD_SAMPLE) {
		ck_assert_uint_eq(r.time, UINT64_MAX);
		check_sample(no_time, &r.u.sample);
		n++, seen_no_time = 1;
		ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	}
	ck_assert_uint_eq(r.type, PERF_RECORD_COMM);
	ck_assert_uint_eq(r.u.comm.pid, 100);
	ck_assert_uint_eq(r.u.comm.tid, 100);
	ck_assert_str_eq(r.u.comm.comm, "loops");
	ck_assert_uint_eq(r.time, 500);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(r.type, PERF_RECORD_MMAP2);
	ck_assert_uint_eq(r.misc, PERF_RECORD_MISC_USER);
	ck_assert_uint_eq(r.u.mmap.pid, 100);
	ck_assert_uint_eq(r.u.mmap.addr, 0x400000);
	ck_assert_uint_eq(r.u.mmap.len, 0x1000);
	ck_assert_uint_eq(r.u.mmap.pgoff, 0);
	ck_assert_uint_eq(r.u.mmap.prot, 5);
	ck_assert_uint_eq(r.u.mmap.flags, 2);
	ck_assert_str_eq(r.u.mmap.filename, "/work/build/workloads/loops");
	ck_assert_uint_eq(r.time, 600);
	int rc;
	for (size_t i = 0; (rc = perfdata_next(pd, &r, msg, sizeof(msg))) == 1; i++, n++) {
		ck_assert_uint_eq(r.type, PERF_RECORD_SAMPLE);
		ck_assert_uint_eq(r.time, r.u.sample.time);
		i += seen_no_time && i == no_time;
		check_sample(i, &r.u.sample);
	}
	ck_assert_msg(rc == 0, "%s", msg);
	perfdata_close(pd);
	return n;
}

START_TEST(round_trip)
{
	make_dir();
	const char *path = in_dir("rt.data");
	ck_assert_int_eq(write_recording(path, NROWS + NBULK, NULL), 0);
	ck_assert_uint_eq(check_recording(path), NROWS + NBULK);
	ck_assert_int_eq(files_in_dir(), 1); /* no temporary left behind */
	remove_dir();
}
END_TEST

START_TEST(same_input_same_bytes)
{
	make_dir();
	size_t la, lb;
	ck_assert_int_eq(write_recording(in_dir("a.data"), NROWS + 40, NULL), 0);
	ck_assert_int_eq(write_recording(in_dir("b.data"), NROWS + 40, NULL), 0);
	uint8_t *a = slurp(in_dir("a.data"), &la), *b = slurp(in_dir("b.data"), &lb);
	ck_assert_uint_eq(la, lb);
	ck_assert_mem_eq(a, b, la);
	free(a), free(b);
	remove_dir();
}
END_TEST

/* A bad call changes nothing: the file stays readable. */
START_TEST(writer_rejects_bad_input)
{
	make_dir();
	struct perfdata_writer *w;
	char msg[256];
	struct perfdata_event ev[2] = {two_events[0], two_events[1]};
	ev[0].sample_type = ev[1].sample_type = ST_ALL & ~(uint64_t)PERF_SAMPLE_IDENTIFIER;
	ck_assert_int_eq(perfdata_writer_open(&w, in_dir("x"), ev, 2, NULL, msg, sizeof(msg)),
	                 PMUSIM_ERR_ARG);
	ev[0].sample_type = ev[1].sample_type = ST_ALL | PERF_SAMPLE_READ;
	ck_assert_int_eq(perfdata_writer_open(&w, in_dir("x"), ev, 2, NULL, msg, sizeof(msg)),
	                 PMUSIM_ERR_UNSUPPORTED);
	ck_assert_int_eq(perfdata_writer_open(&w, in_dir("x"), two_events, 0, NULL, msg, 256),
	                 PMUSIM_ERR_ARG);
	ck_assert_int_eq(perfdata_writer_open(&w, in_dir("x"), two_events, 2, NULL, msg, 256), 0);
	struct perf_branch br[2] = {{1, 2, 3, 0, 0, 16}, {1, 2, 3, 2, 0, 0}};
	struct perf_sample s = {.id = 11, .nbr = 1, .br = br};
	ck_assert_int_eq(perfdata_write_sample(w, &s), PMUSIM_ERR_ARG); /* type 16 */
	s.br = br + 1;
	ck_assert_int_eq(perfdata_write_sample(w, &s), PMUSIM_ERR_ARG); /* mispred 2 */
	s.nbr = 0, s.id = 13;
	ck_assert_int_eq(perfdata_write_sample(w, &s), PMUSIM_ERR_ARG); /* unknown id */
	s.id = 12;
	ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
	ck_assert_int_eq(perfdata_add_build_id(w, "f", bid_long, 21), PMUSIM_ERR_ARG);
	ck_assert_uint_eq(perfdata_writer_samples(w), 1);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	struct perfdata *pd;
	struct perf_record r;
	ck_assert_int_eq(perfdata_open(in_dir("x"), &pd, msg, sizeof(msg)), 0);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(r.u.sample.id, 12);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 0);
	perfdata_close(pd);
	/* abort leaves nothing */
	ck_assert_int_eq(perfdata_writer_open(&w, in_dir("y"), two_events, 2, NULL, msg, 256), 0);
	perfdata_writer_abort(w);
	ck_assert_int_eq(files_in_dir(), 1);
	remove_dir();
}
END_TEST

/* One event, no ids in its samples and no sample_id_all fields: everything is event 0. */
START_TEST(single_event_without_ids)
{
	make_dir();
	const struct perfdata_event ev = {"instructions:u",
	                                  PERF_TYPE_HARDWARE,
	                                  PERF_COUNT_HW_INSTRUCTIONS,
	                                  5000,
	                                  PERF_SAMPLE_IP | PERF_SAMPLE_PERIOD,
	                                  0,
	                                  1,
	                                  0,
	                                  0,
	                                  0,
	                                  0,
	                                  NULL};
	struct perfdata_writer *w;
	char msg[256];
	ck_assert_int_eq(perfdata_writer_open(&w, in_dir("one"), &ev, 1, NULL, msg, 256), 0);
	ck_assert_int_eq(perfdata_write_comm(w, 7, 8, "a-sixteen-byte-n", 99), 0);
	struct perf_sample s = {.ip = 0x1234, .period = 5000, .time = 1, .pid = 7};
	ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	struct perfdata *pd;
	struct perf_record r;
	ck_assert_int_eq(perfdata_open(in_dir("one"), &pd, msg, sizeof(msg)), 0);
	ck_assert_str_eq(perfdata_event(pd, 0)->name, "instructions:u");
	ck_assert_uint_eq(perfdata_nbuild_ids(pd), 0);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	ck_assert_str_eq(r.u.comm.comm, "a-sixteen-byte-n");
	ck_assert_uint_eq(r.time, 0); /* no TIME in sample_type, so none in the trailer */
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
	ck_assert_uint_eq(r.u.sample.ip, 0x1234);
	ck_assert_uint_eq(r.u.sample.period, 5000);
	ck_assert_uint_eq(r.u.sample.time + r.u.sample.pid + r.u.sample.id, 0);
	ck_assert_int_eq(perfdata_event_of_id(pd, r.u.sample.id), 0);
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 0);
	perfdata_close(pd);
	remove_dir();
}
END_TEST

/* A record whose size is not a multiple of 8 (perf writes none; a crafted or damaged
 * file may) puts every later record off 8-byte alignment, as perf reads the file. The
 * samples after it read as before, their callchains as u64 arrays the caller may index
 * (under UBSan, a misaligned load stops the test: the fuzzer's find). */
START_TEST(record_of_odd_size_misaligns_nothing)
{
	make_dir();
	const struct perfdata_event ev = {.name = "instructions:u", .type = PERF_TYPE_HARDWARE,
	                                  .config = PERF_COUNT_HW_INSTRUCTIONS, .sample_period = 5000,
	                                  .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_CALLCHAIN, .id = 1};
	struct perfdata_writer *w;
	char msg[256];
	ck_assert_int_eq(perfdata_writer_open(&w, in_dir("odd"), &ev, 1, NULL, msg, sizeof(msg)), 0);
	const uint64_t chain[3] = {PERF_CONTEXT_USER, 0x401234, 0x405678};
	for (int i = 0; i < 3; i++) {
		struct perf_sample smp = {.ip = 0x1000 + (uint64_t)i, .nchain = 3, .chain = chain};
		ck_assert_int_eq(perfdata_write_sample(w, &smp), 0);
	}
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	size_t len;
	uint8_t *f = slurp(in_dir("odd"), &len);
	uint64_t data_off, data_size;
	memcpy(&data_off, f + 40, 8); /* perf_file_header: magic, size, attr_size, attrs, data */
	memcpy(&data_size, f + 48, 8);
	/* a record of a type perf skips, 13 bytes, at the start of the data section */
	static const uint8_t odd[13] = {0x7f, 0, 0, 0, 0, 0, 13, 0, 1, 2, 3, 4, 5};
	uint8_t *g = malloc(len + sizeof(odd));
	ck_assert_ptr_nonnull(g);
	memcpy(g, f, data_off);
	memcpy(g + data_off, odd, sizeof(odd));
	memcpy(g + data_off + sizeof(odd), f + data_off, len - data_off);
	data_size += sizeof(odd);
	memcpy(g + 48, &data_size, 8);
	/* the feature sections' table follows the data (perf_file_header's bitmap at 72 says
	 * how many {offset, size} pairs): the sections it points to moved too */
	uint64_t bits[4], at = data_off + data_size;
	memcpy(bits, g + 72, sizeof(bits));
	int nfeat = __builtin_popcountll(bits[0]) + __builtin_popcountll(bits[1]) +
	            __builtin_popcountll(bits[2]) + __builtin_popcountll(bits[3]);
	for (int k = 0; k < nfeat; k++, at += 16) {
		uint64_t o;
		memcpy(&o, g + at, 8);
		o += sizeof(odd);
		memcpy(g + at, &o, 8);
	}
	spit(in_dir("odd"), g, len + sizeof(odd));
	free(f), free(g);
	struct perfdata *pd;
	ck_assert_int_eq(perfdata_open(in_dir("odd"), &pd, msg, sizeof(msg)), 0);
	struct perf_record r;
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 1);
		ck_assert_uint_eq(r.type, PERF_RECORD_SAMPLE);
		ck_assert_uint_eq(r.u.sample.ip, 0x1000 + (uint64_t)i);
		ck_assert_uint_eq(r.u.sample.nchain, 3);
		for (int k = 0; k < 3; k++)
			ck_assert_uint_eq(r.u.sample.chain[k], chain[k]);
	}
	ck_assert_int_eq(perfdata_next(pd, &r, msg, sizeof(msg)), 0);
	perfdata_close(pd);
	remove_dir();
}
END_TEST

/* ---- the real Skylake LBR recording (perf 4.13, attr.size 112) ---- */

static const char *fixture(void)
{
	static char p[PATH_MAX];
	const char *shared = getenv("PMUSIM_SHARED");
	snprintf(p, sizeof(p), "%s/fixtures/real-lbr/skylake-cycles-b.perf.data",
	         shared ? shared : "../shared");
	return p;
}

static void check_branch(const struct perf_branch *b, uint64_t from, uint64_t to, uint16_t cycles)
{
	ck_assert_uint_eq(b->from, from);
	ck_assert_uint_eq(b->to, to);
	ck_assert_uint_eq(b->cycles, cycles);
	ck_assert_uint_eq(b->predicted, 1); /* "P" */
	ck_assert_uint_eq(b->mispred, 0);
	ck_assert_uint_eq(b->type, PERF_BR_UNKNOWN);
}

START_TEST(real_skylake_recording)
{
	struct perfdata *pd;
	struct perf_record r;
	char msg[256] = "";
	ck_assert_msg(perfdata_open(fixture(), &pd, msg, sizeof(msg)) == 0, "%s: %s", fixture(),
	              msg);
	ck_assert_uint_eq(perfdata_nevents(pd), 1);
	const struct perfdata_event *ev = perfdata_event(pd, 0);
	ck_assert_str_eq(ev->name, "cycles:u");
	ck_assert_uint_eq(ev->sample_type, PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
	                                       PERF_SAMPLE_PERIOD | PERF_SAMPLE_BRANCH_STACK);
	ck_assert_uint_eq(ev->branch_sample_type, PERF_SAMPLE_BRANCH_ANY);
	ck_assert_uint_eq(ev->sample_period, 4000); /* a frequency: freq = 1 */
	ck_assert_uint_eq(perfdata_nbuild_ids(pd), 4);
	/* Expected values from `perf script -F ip,brstack` and `perf report -D` (perf 6.1). */
	size_t nsamples = 0, n32 = 0, n0 = 0, ngen = 0;
	int rc;
	struct perf_sample last = {0};
	struct perf_branch last_br = {0};
	while ((rc = perfdata_next(pd, &r, msg, sizeof(msg))) == 1) {
		const struct perf_sample *s = &r.u.sample;
		if (r.type == PERF_RECORD_MMAP2 &&
		    strstr(r.u.mmap.filename, "propeller_sample_1.bin.gen")) {
			ngen++;
			ck_assert_uint_eq(r.u.mmap.addr, 0x5629ec742000);
			ck_assert_uint_eq(r.u.mmap.len, 0x1000);
			ck_assert_uint_eq(r.u.mmap.pgoff, 0);
			ck_assert_uint_eq(r.u.mmap.prot, 5); /* r-xp */
			ck_assert_uint_eq(r.u.mmap.pid, 5595);
		}
		if (r.type != PERF_RECORD_SAMPLE)
			continue;
		ck_assert_uint_eq(s->pid, 5595);
		ck_assert_uint_eq(s->tid, 5595);
		if (nsamples == 0) {
			ck_assert_uint_eq(s->ip, 0x7f06d6a21e00);
			ck_assert_uint_eq(s->time, 914937301029299);
			ck_assert_uint_eq(s->period, 1);
			ck_assert_uint_eq(s->nbr, 0);
		}
		if (s->nbr && n32 == 0) { /* the first sample with a branch stack */
			ck_assert_uint_eq(s->ip, 0x5629ec742901);
			check_branch(&s->br[0], 0x5629ec7428f4, 0x5629ec742901, 19);
			check_branch(&s->br[1], 0x5629ec742967, 0x5629ec7428d0, 1);
		}
		n32 += s->nbr == 32;
		n0 += s->nbr == 0;
		nsamples++;
		last = *s;
		if (s->nbr)
			last_br = s->br[s->nbr - 1];
	}
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_uint_eq(nsamples, 3740);
	ck_assert_uint_eq(n32, 3732); /* the 8 others, in the dynamic loader, have none */
	ck_assert_uint_eq(n0, 8);
	ck_assert_uint_eq(ngen, 1);
	ck_assert_uint_eq(last.ip, 0x5629ec74297e);
	check_branch(&last_br, 0x5629ec7428e3, 0x5629ec7428f9, 4);
	perfdata_close(pd);
}
END_TEST

/* ---- truncated and corrupted files ---- */

static volatile size_t sink; /* keeps the reads below from being optimised away */

/* Opens a file and touches every byte the reader hands out; returns the open result,
 * or the first error of perfdata_next. */
static int read_all(const char *path)
{
	struct perfdata *pd;
	struct perf_record r;
	char msg[256];
	int rc = perfdata_open(path, &pd, msg, sizeof(msg));
	if (rc)
		return rc;
	for (size_t i = 0; i < perfdata_nevents(pd); i++) {
		const struct perfdata_event *ev = perfdata_event(pd, i);
		if (ev->name)
			sink += strlen(ev->name);
	}
	for (size_t i = 0; i < perfdata_nbuild_ids(pd); i++) {
		const uint8_t *id;
		size_t len;
		const char *file;
		ck_assert_int_eq(perfdata_build_id(pd, i, &id, &len, &file), 0);
		ck_assert_uint_le(len, 20);
		sink += strlen(file) + id[len ? len - 1 : 0];
	}
	while ((rc = perfdata_next(pd, &r, msg, sizeof(msg))) == 1) {
		if (r.type == PERF_RECORD_COMM)
			sink += strlen(r.u.comm.comm);
		else if (r.type != PERF_RECORD_SAMPLE)
			sink += strlen(r.u.mmap.filename);
		else
			for (uint64_t e = 0; e < r.u.sample.nbr; e++)
				ck_assert_uint_le(r.u.sample.br[e].type, 15);
	}
	if (rc < 0)
		ck_assert_msg(strchr(msg, '\n') == NULL && msg[0], "not a one-line message");
	perfdata_close(pd);
	return rc;
}

START_TEST(every_truncation_is_a_format_error)
{
	make_dir();
	size_t len;
	ck_assert_int_eq(write_recording(in_dir("ok.data"), NROWS, NULL), 0);
	uint8_t *buf = slurp(in_dir("ok.data"), &len);
	for (size_t cut = 0; cut < len; cut++) {
		spit(in_dir("cut.data"), buf, cut);
		ck_assert_msg(read_all(in_dir("cut.data")) == PMUSIM_ERR_FORMAT,
		              "file cut to %zu of %zu bytes", cut, len);
	}
	free(buf);
	remove_dir();
}
END_TEST

START_TEST(flipped_bytes_never_crash)
{
	make_dir();
	size_t len;
	static const uint8_t masks[] = {0x01, 0x80, 0xff};
	ck_assert_int_eq(write_recording(in_dir("ok.data"), NROWS, NULL), 0);
	uint8_t *buf = slurp(in_dir("ok.data"), &len);
	for (size_t at = 0; at < len; at++) {
		for (size_t m = 0; m < sizeof(masks); m++) {
			buf[at] ^= masks[m];
			spit(in_dir("flip.data"), buf, len);
			buf[at] ^= masks[m];
			int rc = read_all(in_dir("flip.data"));
			ck_assert_msg(rc >= 0 || rc == PMUSIM_ERR_FORMAT,
			              "byte %zu ^ %#x: result %d", at, masks[m], rc);
		}
	}
	free(buf);
	remove_dir();
}
END_TEST

/* Where a corruption goes: a file offset, or an offset inside a part of the file. */
enum where { AT_FILE, AT_COMM, AT_SAMPLE1, AT_SAMPLE2, AT_FEAT_TABLE, AT_BUILD_ID, AT_EVENT_DESC };

static const struct {
	int line;
	enum where where;
	size_t off, width;
	uint64_t value;
	int open_rc, next_rc;
} corrupt[] = {
    {__LINE__, AT_FILE, 0, 1, 'X', PMUSIM_ERR_FORMAT, 0},         /* magic */
    {__LINE__, AT_FILE, 8, 8, 100, PMUSIM_ERR_FORMAT, 0},         /* header size */
    {__LINE__, AT_FILE, 16, 8, 72, PMUSIM_ERR_FORMAT, 0},         /* attr_size */
    {__LINE__, AT_FILE, 32, 8, 145, PMUSIM_ERR_FORMAT, 0},        /* attrs.size */
    {__LINE__, AT_FILE, 48, 8, 1ull << 40, PMUSIM_ERR_FORMAT, 0}, /* data.size */
    {__LINE__, AT_FILE, 40, 8, ~0ull, PMUSIM_ERR_FORMAT, 0},      /* data.offset */
    {__LINE__, AT_FILE, 104 + 4, 4, 112, PMUSIM_ERR_FORMAT, 0},   /* attr.size vs attr_size */
    {__LINE__, AT_FILE, 104 + 128, 8, 1ull << 40, PMUSIM_ERR_FORMAT, 0},  /* ids.offset */
    {__LINE__, AT_FILE, 104 + 136, 8, 12, PMUSIM_ERR_FORMAT, 0},          /* ids.size */
    {__LINE__, AT_FILE, 104 + 144 + 24, 8, 0x107, PMUSIM_ERR_FORMAT, 0},  /* no common id */
    {__LINE__, AT_FILE, 104 + 288 + 8, 8, 11, PMUSIM_ERR_FORMAT, 0},      /* id used twice */
    {__LINE__, AT_COMM, 6, 2, 0, 0, PMUSIM_ERR_FORMAT},                   /* record size 0 */
    {__LINE__, AT_COMM, 6, 2, 7, 0, PMUSIM_ERR_FORMAT},                   /* record size 7 */
    {__LINE__, AT_COMM, 6, 2, 0xfff8, 0, PMUSIM_ERR_FORMAT},              /* past the data */
    {__LINE__, AT_COMM, 16, 8, 0x7878787878787878, 0, PMUSIM_ERR_FORMAT}, /* no NUL */
    {__LINE__, AT_SAMPLE1, 8, 8, 99, 0, PMUSIM_ERR_FORMAT},               /* unknown identifier */
    {__LINE__, AT_SAMPLE1, 80, 8, 2, 0, PMUSIM_ERR_FORMAT},               /* nr past the record */
    {__LINE__, AT_SAMPLE2, 80, 8, 1ull << 60, 0, PMUSIM_ERR_FORMAT},      /* nr * 24 overflows */
    {__LINE__, AT_SAMPLE1, 0, 4, 77, 0, 0}, /* unknown type: skipped */
    {__LINE__, AT_FEAT_TABLE, 0, 8, 1ull << 40, PMUSIM_ERR_FORMAT, 0},
    {__LINE__, AT_FEAT_TABLE, 8, 8, ~0ull, PMUSIM_ERR_FORMAT, 0},
    {__LINE__, AT_BUILD_ID, 6, 2, 35, PMUSIM_ERR_FORMAT, 0},           /* shorter than its header */
    {__LINE__, AT_BUILD_ID, 6, 2, 0xffff, PMUSIM_ERR_FORMAT, 0},       /* past the section */
    {__LINE__, AT_BUILD_ID, 32, 1, 21, PMUSIM_ERR_FORMAT, 0},          /* id size 21 */
    {__LINE__, AT_EVENT_DESC, 4, 4, 0, PMUSIM_ERR_FORMAT, 0},          /* attr size 0 */
    {__LINE__, AT_EVENT_DESC, 0, 4, 3, PMUSIM_ERR_FORMAT, 0},          /* three events in two */
    {__LINE__, AT_EVENT_DESC, 136, 4, 1u << 30, PMUSIM_ERR_FORMAT, 0}, /* nr_ids */
};

static uint64_t u64_in(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* Offset of a part of the round-trip file (features: BUILD_ID is the first section,
 * EVENT_DESC the eleventh, after HOSTNAME..CMDLINE). */
static size_t locate(const uint8_t *buf, const char *path, enum where where)
{
	uint64_t table = u64_in(buf + 40) + u64_in(buf + 48);
	if (where == AT_FILE)
		return 0;
	if (where == AT_FEAT_TABLE)
		return table;
	if (where == AT_BUILD_ID)
		return u64_in(buf + table);
	if (where == AT_EVENT_DESC)
		return u64_in(buf + table + 10 * 16);
	struct perfdata *pd;
	struct perf_record r;
	ck_assert_int_eq(perfdata_open(path, &pd, NULL, 0), 0);
	/* by identity: records come out in time order, not the file's (check_recording) */
	uint64_t ip = rows[where == AT_SAMPLE1 ? 1 : 2].ip;
	do
		ck_assert_int_eq(perfdata_next(pd, &r, NULL, 0), 1);
	while (where == AT_COMM ? r.type != PERF_RECORD_COMM
	                        : r.type != PERF_RECORD_SAMPLE || r.u.sample.ip != ip);
	perfdata_close(pd);
	return r.offset;
}

START_TEST(corrupt_fields)
{
	make_dir();
	size_t len;
	ck_assert_int_eq(write_recording(in_dir("ok.data"), NROWS, NULL), 0);
	uint8_t *buf = slurp(in_dir("ok.data"), &len), *bad = malloc(len);
	for (size_t i = 0; i < sizeof(corrupt) / sizeof(corrupt[0]); i++) {
		size_t at = locate(buf, in_dir("ok.data"), corrupt[i].where) + corrupt[i].off;
		memcpy(bad, buf, len);
		memcpy(bad + at, &corrupt[i].value, corrupt[i].width);
		spit(in_dir("bad.data"), bad, len);
		struct perfdata *pd;
		struct perf_record r;
		char msg[256] = "";
		int rc = perfdata_open(in_dir("bad.data"), &pd, msg, sizeof(msg));
		ck_assert_msg(rc == corrupt[i].open_rc, "row at line %d: open gives %d (%s)",
		              corrupt[i].line, rc, msg);
		if (rc)
			continue;
		while ((rc = perfdata_next(pd, &r, msg, sizeof(msg))) == 1)
			;
		ck_assert_msg(rc == corrupt[i].next_rc, "row at line %d: next gives %d",
		              corrupt[i].line, rc);
		perfdata_close(pd);
	}
	free(buf), free(bad);
	remove_dir();
}
END_TEST

/* ---- a write cut short by RLIMIT_FSIZE (as a full disk would) ---- */

static const struct {
	int line;
	rlim_t limit;
	int open_rc, close_rc;
	size_t min_samples; /* the file holds at least these */
} limits[] = {
    {__LINE__, 200, PMUSIM_ERR_IO, 0, 0},  /* not even the attrs fit */
    {__LINE__, 1200, 0, PMUSIM_ERR_IO, 0}, /* the attrs fit, the features never do */
    {__LINE__, 6000, 0, 0, 1},
    {__LINE__, 64 << 10, 0, 0, 50},
    {__LINE__, 1 << 20, 0, 0, 1000},
};

START_TEST(write_cut_short_by_file_size_limit)
{
	signal(SIGXFSZ, SIG_IGN);
	struct rlimit old;
	ck_assert_int_eq(getrlimit(RLIMIT_FSIZE, &old), 0);
	for (size_t i = 0; i < sizeof(limits) / sizeof(limits[0]); i++) {
		make_dir();
		const char *path = in_dir("lim.data");
		struct rlimit lim = {limits[i].limit, old.rlim_max};
		size_t written = 0;
		/* no check assertion while the limit holds: Check writes files too */
		setrlimit(RLIMIT_FSIZE, &lim);
		int rc = write_recording(path, NROWS + NBULK, &written);
		setrlimit(RLIMIT_FSIZE, &old);
		int want = limits[i].open_rc ? limits[i].open_rc : limits[i].close_rc;
		ck_assert_msg(rc == want, "row at line %d: %d", limits[i].line, rc);
		if (rc) {
			ck_assert_msg(files_in_dir() == 0, "row at line %d: files left",
			              limits[i].line);
		} else {
			struct stat sb;
			ck_assert_int_eq(stat(path, &sb), 0);
			ck_assert_uint_le((uint64_t)sb.st_size, limits[i].limit);
			ck_assert_int_eq(files_in_dir(), 1);
			size_t n = check_recording(path);
			ck_assert_msg(n >= limits[i].min_samples && n < NROWS + NBULK,
			              "row at line %d: %zu samples (%zu written)", limits[i].line,
			              n, written);
		}
		remove_dir();
	}
}
END_TEST

/* ---- real perf reads our files ---- */

/* Functions of this program that the perf test samples and branches between. */
static __attribute__((noinline, used)) int pd_alpha(int x)
{
	return x * 3 + 1;
}

static __attribute__((noinline, used)) int pd_beta(int x)
{
	return x ^ 0x5a5a;
}

static __attribute__((noinline, used)) int pd_gamma(int x)
{
	return x / 7 - 2;
}

struct text_map {
	uint64_t start, end, pgoff;
	char path[PATH_MAX];
};

/* The executable mapping of this program, from /proc/self/maps. */
static int self_text(uint64_t addr, struct text_map *m)
{
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128], perms[8];
	int found = 0;
	while (f && !found && fgets(line, sizeof(line), f)) {
		unsigned long long s, e, off;
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %n", &s, &e, perms, &off, &pos) < 4)
			continue;
		if (addr >= s && addr < e && strchr(perms, 'x') && pos) {
			m->start = s, m->end = e, m->pgoff = off;
			snprintf(m->path, sizeof(m->path), "%s", line + pos);
			m->path[strcspn(m->path, "\n")] = 0;
			found = 1;
		}
	}
	if (f)
		fclose(f);
	return found;
}

/* Runs a shell command; its stdout in *out (malloc'd), its exit status returned. */
static int run(const char *cmd, char **out)
{
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	size_t len = 0, cap = 4096;
	char *buf = malloc(cap);
	for (size_t n; (n = fread(buf + len, 1, cap - len - 1, p)) > 0;) {
		len += n;
		if (cap - len < 2)
			buf = realloc(buf, cap *= 2);
	}
	buf[len] = 0;
	*out = buf;
	int st = pclose(p);
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

#define NPERF 4
static uint64_t fn[3];

/* Samples of the perf test: ip = fn[ip_fn] + ip_off; branches between the functions. */
/* clang-format off */
static const struct {
	int line;
	int ip_fn, ip_off;
	int nbr;
	struct {
		int from, to, mispred, predicted, cycles, type;
	} br[3];
} perf_rows[NPERF] = {
	{__LINE__, 0, 0, 0, {{0}}},
	{__LINE__, 1, 1, 1, {{0, 1, 0, 1, 7, PERF_BR_CALL}}},
	{__LINE__, 2, 2, 3, {{1, 2, 1, 0, 0, PERF_BR_COND}, {0, 1, 0, 0, 65535, PERF_BR_UNKNOWN},
			     {2, 0, 1, 1, 1, PERF_BR_RET}}},
	{__LINE__, 0, 3, 2, {{2, 0, 0, 1, 12, PERF_BR_UNCOND}, {1, 2, 1, 0, 3, PERF_BR_IND}}},
};
/* clang-format on */

static const char *const br_type_name[] = {"", "COND", "UNCOND", "IND", "CALL", "IND_CALL", "RET"};

static void write_for_perf(const char *path, const struct text_map *m)
{
	const uint64_t st = PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	                    PERF_SAMPLE_TIME | PERF_SAMPLE_CPU | PERF_SAMPLE_PERIOD |
	                    PERF_SAMPLE_BRANCH_STACK;
	const struct perfdata_event ev = {
	    "cycles:u", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 1000, st, BR_USER_ANY, 7, 0, 0, 0, 0, NULL};
	struct perfdata_writer *w;
	char msg[256];
	ck_assert_int_eq(perfdata_writer_open(&w, path, &ev, 1, &rec_info, msg, sizeof(msg)), 0);
	ck_assert_int_eq(perfdata_write_comm(w, 4242, 4242, "check_perfdata", 1000), 0);
	ck_assert_int_eq(perfdata_write_mmap2(w, 4242, 4242, m->start, m->end - m->start, m->pgoff,
	                                      5, 2, m->path, 2000),
	                 0);
	for (int i = 0; i < NPERF; i++) {
		struct perf_branch br[3];
		for (int e = 0; e < perf_rows[i].nbr; e++) {
			br[e] = (struct perf_branch){fn[perf_rows[i].br[e].from],
			                             fn[perf_rows[i].br[e].to],
			                             (uint16_t)perf_rows[i].br[e].cycles,
			                             (uint8_t)perf_rows[i].br[e].mispred,
			                             (uint8_t)perf_rows[i].br[e].predicted,
			                             (uint8_t)perf_rows[i].br[e].type};
		}
		struct perf_sample s = {.id = 7,
		                        .ip = fn[perf_rows[i].ip_fn] + perf_rows[i].ip_off,
		                        .time = 3000 + 1000 * (uint64_t)i,
		                        .period = 1000,
		                        .pid = 4242,
		                        .tid = 4242,
		                        .nbr = (uint64_t)perf_rows[i].nbr,
		                        .br = br};
		ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(perfdata_add_build_id(w, "/nonexistent/libfake.so", bid_long, 20), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
}

/* What perf 6.1 `perf script -F ip,brstack` prints for perf_rows[i]: the ip as " %16lx",
 * then per entry " 0xFROM/0xTO/P|M|-/in_tx/abort/CYCLES/TYPE ": P when predicted is
 * set (even with mispred), else M when mispred is, else '-'; TYPE is "" for UNKNOWN. */
static void perf_line(int i, char *buf, size_t len)
{
	int n = snprintf(buf, len, " %16" PRIx64, fn[perf_rows[i].ip_fn] + perf_rows[i].ip_off);
	for (int e = 0; e < perf_rows[i].nbr; e++) {
		int mis = perf_rows[i].br[e].mispred, pred = perf_rows[i].br[e].predicted;
		n +=
		    snprintf(buf + n, len - (size_t)n, " 0x%" PRIx64 "/0x%" PRIx64 "/%c/-/-/%d/%s ",
		             fn[perf_rows[i].br[e].from], fn[perf_rows[i].br[e].to],
		             pred  ? 'P'
		             : mis ? 'M'
		                   : '-',
		             perf_rows[i].br[e].cycles, br_type_name[perf_rows[i].br[e].type]);
	}
}

START_TEST(perf_reads_our_file)
{
	const char *perf = getenv("PERF") ? getenv("PERF") : "/usr/bin/perf";
	if (access(perf, X_OK) != 0) {
		fprintf(stderr, "perf_reads_our_file: SKIPPED, %s not found\n", perf);
		return;
	}
	make_dir();
	fn[0] = (uintptr_t)pd_alpha, fn[1] = (uintptr_t)pd_beta, fn[2] = (uintptr_t)pd_gamma;
	struct text_map m;
	ck_assert(self_text(fn[0], &m) && fn[1] < m.end && fn[2] < m.end);
	const char *path = in_dir("perf.data");
	write_for_perf(path, &m);
	char cmd[2 * PATH_MAX], *out, line[1024];

	snprintf(cmd, sizeof(cmd), "%s script -i %s -F ip,brstack 2>%s", perf, path,
	         in_dir("err.txt"));
	ck_assert_int_eq(run(cmd, &out), 0);
	char *p = out;
	for (int i = 0; i < NPERF; i++) {
		char *nl = strchr(p, '\n');
		ck_assert_msg(nl != NULL, "perf script printed %d lines, not %d:\n%s", i, NPERF,
		              out);
		*nl = 0;
		perf_line(i, line, sizeof(line));
		ck_assert_msg(strcmp(p, line) == 0, "row at line %d:\nperf: '%s'\nwant: '%s'",
		              perf_rows[i].line, p, line);
		p = nl + 1;
	}
	ck_assert_str_eq(p, "");
	free(out);

	snprintf(cmd, sizeof(cmd), "%s script -i %s -F brstacksym 2>/dev/null", perf, path);
	ck_assert_int_eq(run(cmd, &out), 0);
	ck_assert_msg(strstr(out, "pd_alpha+0x0/pd_beta+0x0/P/-/-/7/CALL") != NULL, "%s", out);
	ck_assert_msg(strstr(out, "pd_gamma+0x0/pd_alpha+0x0/P/-/-/1/RET") != NULL, "%s", out);
	free(out);

	snprintf(cmd, sizeof(cmd),
	         "%s report -i %s --stdio --no-branch-stack --sort symbol 2>/dev/null", perf, path);
	ck_assert_int_eq(run(cmd, &out), 0);
	ck_assert_msg(strstr(out, "pd_alpha") && strstr(out, "pd_beta") && strstr(out, "pd_gamma"),
	              "%s", out);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s report -i %s --header-only 2>/dev/null", perf, path);
	ck_assert_int_eq(run(cmd, &out), 0);
	ck_assert_msg(strstr(out, "# hostname : testhost\n") &&
	                  strstr(out, "# os release : 6.1.0-test\n") &&
	                  strstr(out, "# cmdline : pmusim record -b -- ./loops \n") &&
	                  strstr(out, "# event : name = cycles:u, ") &&
	                  strstr(out, "# contains samples with branch stack"),
	              "%s", out);
	free(out);

	snprintf(cmd, sizeof(cmd), "%s buildid-list -i %s 2>/dev/null", perf, path);
	ck_assert_int_eq(run(cmd, &out), 0);
	ck_assert_msg(
	    strstr(out, "572ac72487ae19660102030405060708090a0bff /nonexistent/libfake.so"), "%s",
	    out);
	free(out);
	remove_dir();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("perfdata");
	TCase *tc = tcase_create("perfdata");
	tcase_add_unchecked_fixture(tc, make_base, remove_base);
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, round_trip);
	tcase_add_test(tc, same_input_same_bytes);
	tcase_add_test(tc, writer_rejects_bad_input);
	tcase_add_test(tc, single_event_without_ids);
	tcase_add_test(tc, record_of_odd_size_misaligns_nothing);
	tcase_add_test(tc, real_skylake_recording);
	tcase_add_test(tc, every_truncation_is_a_format_error);
	tcase_add_test(tc, flipped_bytes_never_crash);
	tcase_add_test(tc, corrupt_fields);
	tcase_add_test(tc, write_cut_short_by_file_size_limit);
	tcase_add_test(tc, perf_reads_our_file);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
