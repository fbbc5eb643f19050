/* Hot code (profiler/hot_code.h) from inputs made here: a perf.data of op samples
 * written with the project's writer, and a truth JSON written out as text, both
 * over a few instructions of this test program (hc_code below, never run) whose
 * kinds the assembler fixes, so the expected merges are sums written out by hand
 * per row. Also the refusals: no op event, no sample of the process, a payload
 * that is not the kernel's, a truth without blocks or whose blocks are not the
 * program's code. */
#include <check.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "profiler/hot_code.h"
#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/self_map.h"
#include "tests/unit/tmp_dir.h"

/* One instruction of each kind the merge tells apart, in this order of addresses. */
__asm__(".text\n"
        ".globl hc_code\n"
        ".type hc_code, @function\n"
        "hc_code:\n"
        ".globl hc_add\nhc_add: add %rax, %rbx\n"
        ".globl hc_jcc\nhc_jcc: jne hc_ret\n"
        ".globl hc_jmpi\nhc_jmpi: jmp *%rax\n"
        ".globl hc_calli\nhc_calli: call *%rax\n"
        ".globl hc_ret\nhc_ret: ret\n"
        ".globl hc_jmp\nhc_jmp: jmp hc_add\n"
        ".size hc_code, . - hc_code\n");
extern const char hc_code[], hc_add[], hc_jcc[], hc_jmpi[], hc_calli[], hc_ret[], hc_jmp[];

#define A(label) ((uint64_t)(uintptr_t)(label))
#define T1 0x7000000ULL /* indirect targets: the merge takes them as the op says */
#define T2 0x7000040ULL
#define UNMAPPED 0x10ULL  /* an IP no mapping holds: code that cannot be read */
#define KERNEL_IP 0x20ULL /* the IP of the sample made kernel-mode after writing */

static char base[PATH_MAX], dir[PATH_MAX + 16];
static struct self_map me;

static void make_base(void)
{
	tmp_dir_make(base, sizeof(base), "check_hot_code");
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
	self_map_find(&me);
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
    .hostname = "pmusim", .arch = "x86_64", .cpuid = PERFDATA_IBS_CPUID, .nr_cpus = 1};

/* ---- op samples ---- */

/* A sample: event 1 is the op event, 2 a cycles event. */
struct row {
	int line;
	uint32_t pid, event;
	uint64_t ip, period;
	uint8_t branch, taken, ret;
	uint64_t target;
};

static void write_sample(struct perfdata_writer *w, const struct row *r, uint64_t time)
{
	uint8_t raw[IBS_OP_RAW_SIZE];
	struct perf_sample s = {.id = r->event,
	                        .ip = r->ip,
	                        .pid = r->pid,
	                        .tid = r->pid,
	                        .time = time,
	                        .period = r->period};
	if (r->event == 1) {
		struct ibs_op op = {.ip = r->ip,
		                    .max_cnt = r->period,
		                    .cnt_ctl = 1,
		                    .branch = r->branch,
		                    .taken = r->taken,
		                    .ret = r->ret,
		                    .br_target = r->target};
		ck_assert_msg(ibs_op_encode(&op, raw, sizeof(raw)) == IBS_OP_RAW_SIZE,
		              "row line %d", r->line);
		s.raw = raw, s.raw_size = sizeof(raw);
	}
	ck_assert_msg(perfdata_write_sample(w, &s) == 0, "row line %d", r->line);
}

/* A recording of rows over this program mapped into processes 1000 and 2000;
 * with_op 0: the cycles event alone. */
static void write_ops(const char *file, const struct row *rows, size_t n, int with_op)
{
	struct perfdata_event ev[2];
	ck_assert_int_eq(perfdata_ibs_op_event(&ev[0], 256, 1, 1, NULL), 0);
	ev[1] = (struct perfdata_event){
	    .name = "cycles:u", .type = PERF_TYPE_HARDWARE, .sample_period = 1000, .id = 2};
	ev[0].sample_type = ev[1].sample_type =
	    PERFDATA_IBS_OP_SAMPLE_TYPE | PERF_SAMPLE_IDENTIFIER;
	struct perfdata_writer *w;
	char msg[256] = "";
	ck_assert_msg(perfdata_writer_open(&w, file, with_op ? ev : ev + 1, with_op ? 2 : 1,
	                                   &amd_info, msg, sizeof(msg)) == 0,
	              "%s", msg);
	uint64_t t = 1;
	for (uint32_t pid = 1000; pid <= 2000; pid += 1000) {
		ck_assert_int_eq(perfdata_write_comm(w, pid, pid, "check_hot_code", t++), 0);
		ck_assert_int_eq(perfdata_write_mmap2(w, pid, pid, me.addr, me.len, me.pgoff, 5, 2,
		                                      me.path, t++),
		                 0);
	}
	for (size_t i = 0; i < n; i++)
		if (with_op || rows[i].event == 2)
			write_sample(w, &rows[i], t++);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
}

/* Process 1000 has the most op samples; 2000 the most samples. */
static const struct row rows[] = {
    {__LINE__, 1000, 1, 0, 256, 0, 0, 0, 0}, /* ip filled in: hc_add */
    {__LINE__, 1000, 1, 0, 240, 0, 0, 0, 0}, /* hc_add */
    {__LINE__, 1000, 1, 1, 256, 1, 1, 0, 0}, /* hc_jcc taken (target filled in) */
    {__LINE__, 1000, 1, 1, 128, 1, 0, 0, 0}, /* hc_jcc not taken: its static target */
    {__LINE__, 1000, 1, 1, 64, 1, 1, 0, 0},  /* hc_jcc taken */
    {__LINE__, 1000, 1, 2, 512, 1, 1, 0, T1},
    {__LINE__, 1000, 1, 2, 16, 1, 1, 0, T2},
    {__LINE__, 1000, 1, 2, 32, 1, 1, 0, T1},
    {__LINE__, 1000, 1, 3, 48, 1, 1, 0, T1},          /* hc_calli */
    {__LINE__, 1000, 1, 4, 80, 1, 1, 1, T2},          /* hc_ret: neither branch[] nor target[] */
    {__LINE__, 1000, 1, 5, 96, 1, 1, 0, 0},           /* hc_jmp (direct): neither */
    {__LINE__, 1000, 1, UNMAPPED, 160, 1, 1, 0, T1},  /* unresolved */
    {__LINE__, 1000, 1, KERNEL_IP, 4000, 0, 0, 0, 0}, /* made kernel-mode: skipped */
    {__LINE__, 1000, 2, 1, 1000, 0, 0, 0, 0},         /* cycles: ignored */
    {__LINE__, 2000, 1, 1, 4096, 1, 1, 0, 0},         /* hc_jcc taken, the other process */
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
    {__LINE__, 2000, 2, 0, 1000, 0, 0, 0, 0},
};
#define NROWS (sizeof(rows) / sizeof(rows[0]))

/* rows with the labels' addresses: ip 0..5 name hc_add..hc_jmp; a taken jcc goes to
 * hc_ret, a not-taken one reports it as its target too (docs/ibs.md) */
static void resolve(struct row *out)
{
	const uint64_t at[] = {A(hc_add), A(hc_jcc), A(hc_jmpi), A(hc_calli), A(hc_ret), A(hc_jmp)};
	memcpy(out, rows, sizeof(rows));
	for (size_t i = 0; i < NROWS; i++) {
		if (out[i].ip < 6)
			out[i].ip = at[out[i].ip];
		if (out[i].ip == A(hc_jcc) && out[i].branch)
			out[i].target = A(hc_ret);
		if (out[i].ip == A(hc_jmp))
			out[i].target = A(hc_add);
	}
}

/* Sets the cpumode of the sample at ip to kernel in the file (perf_event_header.misc
 * at byte 4 of the record, perf_event.h PERF_RECORD_MISC_KERNEL = 1): the writer
 * writes user-mode samples only. */
static void make_kernel(const char *file, uint64_t ip)
{
	struct perfdata *pd;
	char msg[256] = "";
	ck_assert_msg(perfdata_open(file, &pd, msg, sizeof(msg)) == 0, "%s", msg);
	struct perf_record r;
	uint64_t off = 0;
	while (!off && perfdata_next(pd, &r, msg, sizeof(msg)) > 0)
		if (r.type == PERF_RECORD_SAMPLE && r.u.sample.ip == ip)
			off = r.offset;
	perfdata_close(pd);
	ck_assert_msg(off, "no sample at %#llx", (unsigned long long)ip);
	FILE *f = fopen(file, "r+b");
	ck_assert_ptr_nonnull(f);
	uint16_t misc = 1;
	ck_assert_int_eq(fseek(f, (long)off + 4, SEEK_SET), 0);
	ck_assert_uint_eq(fwrite(&misc, 2, 1, f), 1);
	fclose(f);
}

START_TEST(ops_merged_by_ip)
{
	make_dir();
	struct row r[NROWS];
	resolve(r);
	write_ops(path("o.data"), r, NROWS, 1);
	make_kernel(path("o.data"), KERNEL_IP);
	struct hot_code *h;
	char msg[256] = "";
	ck_assert_msg(hot_code_from_ops(path("o.data"), 0, &h, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_uint_eq(h->pid, 1000);
	ck_assert_str_eq(h->program, me.path);
	ck_assert_uint_eq(h->samples, 12);
	ck_assert_uint_eq(h->unresolved, 1);
	const struct hot_ip ip[] = {{UNMAPPED, 160},   {A(hc_add), 496},  {A(hc_jcc), 448},
	                            {A(hc_jmpi), 560}, {A(hc_calli), 48}, {A(hc_ret), 80},
	                            {A(hc_jmp), 96}};
	ck_assert_uint_eq(h->nip, sizeof(ip) / sizeof(ip[0]));
	for (size_t i = 0; i < h->nip; i++)
		ck_assert_msg(h->ip[i].ip == ip[i].ip && h->ip[i].weight == ip[i].weight,
		              "ip %zu: %#llx %g", i, (unsigned long long)h->ip[i].ip,
		              h->ip[i].weight);
	ck_assert(h->total == 1888);
	ck_assert_uint_eq(h->nbranch, 1);
	ck_assert(h->branch[0].ip == A(hc_jcc) && h->branch[0].taken == 320 &&
	          h->branch[0].fall == 128);
	const struct hot_target tg[] = {
	    {A(hc_jmpi), T1, 544}, {A(hc_jmpi), T2, 16}, {A(hc_calli), T1, 48}};
	ck_assert_uint_eq(h->ntarget, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_msg(h->target[i].from == tg[i].from && h->target[i].to == tg[i].to &&
		                  h->target[i].weight == tg[i].weight,
		              "target %zu: %#llx -> %#llx %g", i,
		              (unsigned long long)h->target[i].from,
		              (unsigned long long)h->target[i].to, h->target[i].weight);
	ck_assert(hot_code_weight(h, A(hc_jmpi)) == 560);
	ck_assert(hot_code_weight(h, A(hc_jmpi) + 1) == 0);
	ck_assert(hot_code_weight(h, KERNEL_IP) == 0);
	hot_code_free(h);
	/* the other process, asked for: its one sample */
	ck_assert_msg(hot_code_from_ops(path("o.data"), 2000, &h, msg, sizeof(msg)) == 0, "%s",
	              msg);
	ck_assert(h->pid == 2000 && h->samples == 1 && h->nip == 1 && h->total == 4096 &&
	          h->ntarget == 0);
	ck_assert(h->nbranch == 1 && h->branch[0].ip == A(hc_jcc) && h->branch[0].taken == 4096 &&
	          h->branch[0].fall == 0);
	hot_code_free(h);
	remove_dir();
}
END_TEST

START_TEST(ops_refused)
{
	make_dir();
	struct row r[NROWS];
	resolve(r);
	write_ops(path("o.data"), r, NROWS, 1);
	write_ops(path("cycles.data"), r, NROWS, 0);
	FILE *f = fopen(path("text"), "w");
	ck_assert_ptr_nonnull(f);
	fputs("not a perf.data\n", f);
	fclose(f);
	/* a payload 8 bytes short of its caps' registers */
	struct perfdata_event ev;
	ck_assert_int_eq(perfdata_ibs_op_event(&ev, 256, 1, 1, NULL), 0);
	struct perfdata_writer *w;
	char msg[256] = "";
	ck_assert_msg(
	    perfdata_writer_open(&w, path("short.data"), &ev, 1, &amd_info, msg, sizeof(msg)) == 0,
	    "%s", msg);
	uint8_t raw[IBS_OP_RAW_SIZE];
	struct ibs_op op = {.ip = A(hc_add), .max_cnt = 256};
	ck_assert_uint_eq(ibs_op_encode(&op, raw, sizeof(raw)), IBS_OP_RAW_SIZE);
	struct perf_sample s = {.id = 1,
	                        .ip = A(hc_add),
	                        .pid = 1000,
	                        .tid = 1000,
	                        .time = 1,
	                        .period = 256,
	                        .raw = raw,
	                        .raw_size = IBS_OP_RAW_SIZE - 8};
	ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	static const struct {
		int line;
		const char *file;
		uint32_t pid;
		int err;
		const char *says;
	} bad[] = {
	    {__LINE__, "cycles.data", 0, PMUSIM_ERR_FORMAT, "no ibs_op event"},
	    {__LINE__, "o.data", 3000, PMUSIM_ERR_FORMAT, "no op sample of process 3000"},
	    {__LINE__, "short.data", 0, PMUSIM_ERR_FORMAT, "op sample at file offset"},
	    {__LINE__, "text", 0, PMUSIM_ERR_FORMAT, ""},
	    {__LINE__, "absent.data", 0, PMUSIM_ERR_IO, ""},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct hot_code *h = (struct hot_code *)&msg; /* must come back NULL */
		msg[0] = 0;
		int rc = hot_code_from_ops(path(bad[i].file), bad[i].pid, &h, msg, sizeof(msg));
		ck_assert_msg(rc == bad[i].err && h == NULL && strstr(msg, bad[i].says) && msg[0] &&
		                  !strchr(msg, '\n'),
		              "row line %d: %d %s", bad[i].line, rc, msg);
	}
	remove_dir();
}
END_TEST

/* ---- truth ---- */

/* A truth as sim/truth_write.c lays it out, over hc_code: bias the "load_bias" line
 * ("" for a truth written before it), fn the "functions" line (the program's placement
 * without it), blocks the "blocks" lines. */
static void write_truth_biased(const char *file, const char *program, const char *bias,
                               const char *fn, const char *blocks)
{
	FILE *f = fopen(file, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(
	    f,
	    "{\n  \"program\": \"%s\",\n%s  \"instructions\": 15,\n  \"branches\": [\n"
	    "    {\"addr\": \"%#llx\", \"addr_sym\": \"hc_code+0x3\", \"kind\": \"cond\", "
	    "\"target\": \"%#llx\", "
	    "\"target_sym\": null, \"fallthrough\": \"%#llx\", \"taken\": 4, \"not_taken\": 3},\n"
	    "    {\"addr\": \"%#llx\", \"addr_sym\": \"a \\\"kind\\\": \\\"cond\\\" name\", "
	    "\"kind\": \"jmp\", "
	    "\"target\": \"%#llx\", \"target_sym\": null, \"fallthrough\": \"%#llx\", \"taken\": "
	    "9, "
	    "\"not_taken\": 0}\n  ],\n"
	    "  \"transfers\": [\n"
	    "    {\"kind\": \"jmp_ind\", \"from\": \"%#llx\", \"from_sym\": null, \"to\": "
	    "\"0x7000000\", "
	    "\"to_sym\": null, \"count\": 3},\n"
	    "    {\"kind\": \"call_ind\", \"from\": \"%#llx\", \"from_sym\": null, \"to\": "
	    "\"0x7000040\", "
	    "\"to_sym\": null, \"count\": 2},\n"
	    "    {\"kind\": \"ret\", \"from\": \"%#llx\", \"from_sym\": null, \"to\": "
	    "\"0x7000080\", "
	    "\"to_sym\": null, \"count\": 5}\n  ],\n"
	    "  \"functions\": [\n%s\n  ],\n  \"instructions_outside_symbols\": 0,\n  \"rep\": [\n  "
	    "],\n"
	    "  \"blocks\": [\n%s\n  ]\n}\n",
	    program, bias, (unsigned long long)A(hc_jcc), (unsigned long long)A(hc_ret),
	    (unsigned long long)A(hc_jmpi), (unsigned long long)A(hc_jmp),
	    (unsigned long long)A(hc_add), (unsigned long long)A(hc_jmp) + 2,
	    (unsigned long long)A(hc_jmpi), (unsigned long long)A(hc_calli),
	    (unsigned long long)A(hc_ret), fn, blocks);
	fclose(f);
}

static void write_truth(const char *file, const char *program, const char *fn, const char *blocks)
{
	write_truth_biased(file, program, "", fn, blocks);
}

/* The running test program's load bias, as the C library's loader reports it (the
 * first object dl_iterate_phdr lists is the program). */
static int main_bias(struct dl_phdr_info *info, size_t size, void *data)
{
	(void)size;
	*(uint64_t *)data = info->dlpi_addr;
	return 1;
}

static const char *fn_line(void)
{
	static char l[200];
	snprintf(
	    l, sizeof(l),
	    "    {\"name\": \"hc_code\", \"addr\": \"%#llx\", \"instructions\": 15, \"calls\": 0}",
	    (unsigned long long)A(hc_code));
	return l;
}

/* Blocks: hc_add..hc_jcc 5 times, hc_jcc alone twice (a jump into it), hc_jmpi 3
 * times: hc_add 5, hc_jcc 7, hc_jmpi 3, 15 in all. */
static const char *good_blocks(void)
{
	static char b[600];
	snprintf(b, sizeof(b),
	         "    {\"start\": \"%#llx\", \"start_sym\": \"hc_code+0x0\", \"instructions\": 2, "
	         "\"end_kind\": "
	         "\"cond\", \"executions\": 5},\n"
	         "    {\"start\": \"%#llx\", \"start_sym\": null, \"instructions\": 1, "
	         "\"end_kind\": \"cond\", "
	         "\"executions\": 2},\n"
	         "    {\"start\": \"%#llx\", \"start_sym\": null, \"instructions\": 1, "
	         "\"end_kind\": \"jmp_ind\", "
	         "\"executions\": 3, \"cycles\": 7}",
	         (unsigned long long)A(hc_add), (unsigned long long)A(hc_jcc),
	         (unsigned long long)A(hc_jmpi));
	return b;
}

START_TEST(truth_counts)
{
	make_dir();
	write_truth(path("t.json"), me.path, fn_line(), good_blocks());
	struct hot_code *h;
	char msg[256] = "";
	ck_assert_msg(hot_code_from_truth(path("t.json"), &h, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_str_eq(h->program, me.path);
	ck_assert(h->pid == 0 && h->samples == 0 && h->unresolved == 0);
	const struct hot_ip ip[] = {{A(hc_add), 5}, {A(hc_jcc), 7}, {A(hc_jmpi), 3}};
	ck_assert_uint_eq(h->nip, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_msg(h->ip[i].ip == ip[i].ip && h->ip[i].weight == ip[i].weight,
		              "ip %zu: %#llx %g", i, (unsigned long long)h->ip[i].ip,
		              h->ip[i].weight);
	ck_assert(h->total == 15);
	ck_assert(h->nbranch == 1 && h->branch[0].ip == A(hc_jcc) && h->branch[0].taken == 4 &&
	          h->branch[0].fall == 3);
	ck_assert_uint_eq(h->ntarget, 2);
	ck_assert(h->target[0].from == A(hc_jmpi) && h->target[0].to == T1 &&
	          h->target[0].weight == 3);
	ck_assert(h->target[1].from == A(hc_calli) && h->target[1].to == T2 &&
	          h->target[1].weight == 2);
	ck_assert(hot_code_weight(h, A(hc_jcc)) == 7 && hot_code_weight(h, A(hc_ret)) == 0);
	hot_code_free(h);
	remove_dir();
}
END_TEST

/* A truth that states its load bias places the program without symbols: a stripped
 * PIE's truth names no function, and gives the counts a truth with them gives. */
START_TEST(truth_load_bias_without_symbols)
{
	make_dir();
	uint64_t bias = 0;
	dl_iterate_phdr(main_bias, &bias);
	char line[64];
	snprintf(line, sizeof(line), "  \"load_bias\": \"%#llx\",\n", (unsigned long long)bias);
	write_truth_biased(path("t.json"), me.path, line, "", good_blocks());
	struct hot_code *h;
	char msg[256] = "";
	ck_assert_msg(hot_code_from_truth(path("t.json"), &h, msg, sizeof(msg)) == 0, "%s", msg);
	const struct hot_ip ip[] = {{A(hc_add), 5}, {A(hc_jcc), 7}, {A(hc_jmpi), 3}};
	ck_assert_uint_eq(h->nip, 3);
	for (size_t i = 0; i < 3; i++)
		ck_assert_msg(h->ip[i].ip == ip[i].ip && h->ip[i].weight == ip[i].weight,
		              "ip %zu: %#llx %g", i, (unsigned long long)h->ip[i].ip,
		              h->ip[i].weight);
	ck_assert(h->total == 15);
	hot_code_free(h);
	/* the stated bias wins over the symbols' placement */
	snprintf(line, sizeof(line), "  \"load_bias\": \"%#llx\",\n",
	         (unsigned long long)bias + 0x100000000ULL);
	write_truth_biased(path("t.json"), me.path, line, fn_line(), good_blocks());
	msg[0] = 0;
	ck_assert_int_eq(hot_code_from_truth(path("t.json"), &h, msg, sizeof(msg)),
	                 PMUSIM_ERR_UNSUPPORTED);
	ck_assert_msg(strstr(msg, "is outside the code") != NULL, "%s", msg);
	/* without either (a stripped PIE's truth of before load_bias), the file stays where
	 * it was linked and the blocks lie outside it */
	if (bias) {
		write_truth(path("t.json"), me.path, "", good_blocks());
		ck_assert_int_eq(hot_code_from_truth(path("t.json"), &h, msg, sizeof(msg)),
		                 PMUSIM_ERR_UNSUPPORTED);
	}
	remove_dir();
}
END_TEST

START_TEST(truth_refused)
{
	make_dir();
	char outside[300], longer[300], broken[200], nothing[2 * PATH_MAX];
	snprintf(nothing, sizeof(nothing), "%s", path("nothing"));
	snprintf(outside, sizeof(outside),
	         "    {\"start\": \"0x10\", \"start_sym\": null, \"instructions\": 1, "
	         "\"end_kind\": \"ret\", "
	         "\"executions\": 1}");
	/* hc_jmpi's run is the jump alone */
	snprintf(longer, sizeof(longer),
	         "    {\"start\": \"%#llx\", \"start_sym\": null, \"instructions\": 2, "
	         "\"end_kind\": \"ret\", "
	         "\"executions\": 1}",
	         (unsigned long long)A(hc_jmpi));
	snprintf(broken, sizeof(broken), "    {\"start\": \"0x10\", \"instructions\": 1}");
	static const struct {
		int line;
		int which; /* 0 outside, 1 longer, 2 broken, 3 no program, 4 not a truth, 5 absent
		            */
		int err;
		const char *says;
	} bad[] = {
	    {__LINE__, 0, PMUSIM_ERR_UNSUPPORTED, "block at 0x10 is outside the code"},
	    {__LINE__, 1, PMUSIM_ERR_FORMAT, "has 2 instructions, the code there 1"},
	    {__LINE__, 2, PMUSIM_ERR_FORMAT, "a block without start, instructions and executions"},
	    {__LINE__, 3, PMUSIM_ERR_IO, "cannot read the symbols"},
	    {__LINE__, 4, PMUSIM_ERR_FORMAT, "has no \"blocks\""},
	    {__LINE__, 5, PMUSIM_ERR_IO, "cannot open"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		const char *blocks[] = {outside, longer, broken, good_blocks()};
		int w = bad[i].which;
		if (w <= 3)
			write_truth(path("t.json"), w == 3 ? nothing : me.path, fn_line(),
			            blocks[w]);
		if (w == 4) {
			FILE *f = fopen(path("t.json"), "w");
			ck_assert_ptr_nonnull(f);
			fputs("{\n  \"instructions\": 1\n}\n", f);
			fclose(f);
		}
		struct hot_code *h = (struct hot_code *)&w;
		char msg[256] = "";
		int rc = hot_code_from_truth(path(w == 5 ? "absent.json" : "t.json"), &h, msg,
		                             sizeof(msg));
		ck_assert_msg(rc == bad[i].err && h == NULL && strstr(msg, bad[i].says) &&
		                  !strchr(msg, '\n'),
		              "row line %d: %d %s", bad[i].line, rc, msg);
	}
	remove_dir();
}
END_TEST

/* A truth cut after a backslash in the program's name, read after a longer line:
 * the reader's line buffer holds old bytes past the end of this one, which the
 * unescaping must not step into. */
START_TEST(truth_string_cut_after_backslash)
{
	make_dir();
	FILE *f = fopen(path("t.json"), "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "{\n  \"comment\": \"");
	for (int i = 0; i < 300; i++)
		fputc('x', f);
	fputs("\",\n  \"program\": \"ab\\", f);
	fclose(f);
	struct hot_code *h;
	char msg[256] = "";
	ck_assert_int_eq(hot_code_from_truth(path("t.json"), &h, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_msg(strstr(msg, "has no \"blocks\""), "%s", msg);
	remove_dir();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("hot_code");
	TCase *tc = tcase_create("core");
	tcase_add_unchecked_fixture(tc, make_base, remove_base);
	tcase_add_test(tc, ops_merged_by_ip);
	tcase_add_test(tc, ops_refused);
	tcase_add_test(tc, truth_counts);
	tcase_add_test(tc, truth_load_bias_without_symbols);
	tcase_add_test(tc, truth_refused);
	tcase_add_test(tc, truth_string_cut_after_backslash);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
