/* End-to-end test of pmusim's IBS op recordings as files: the real writer writes a
 * recording of build/workloads/loops (COMM, MMAP2 of its code, found with <elf.h>)
 * with two ibs_op events (cycles mode, ops mode) and a cycles event whose samples
 * carry pmusim's LBR payload, 120 samples whose IPs and branch targets are
 * instructions of mix, run_loops and main as objdump lists them, and whose op
 * facts come from this test's seeded table. Then, on that file:
 * - perf 6.1's `perf report -D` decodes every ibs_op sample (its own IBS decoder,
 *   tools/perf/util/amd-sample-raw.c): MaxCnt, En, Val, CntCtl, CurCnt, IbsOpRip,
 *   TagToRetCtr, CompToRetCtr, BrnRet, OpBrnTaken, OpBrnMisp, OpReturn, Microcode,
 *   LdOp, StOp, DcLinAddrValid, DcPhyAddrValid 0, OpMemWidth, IbsDCLinAd,
 *   IbsBrTarget and the sample's addr, each parsed from perf's text, equal what the
 *   table says, 0 mismatches; the cycles samples get no IBS lines (neither op nor
 *   fetch: the ibs_fetch mapping), and perf says nothing of invalid IBS data;
 * - `perf script -F ip,sym,addr` prints each sample's data address, IP and the
 *   function nm names for it;
 * - `perf report --stdio` gives each event its sample count and each function its
 *   share, "%.2f%%" of the table's counts;
 * - `pmusim script` prints perf script's default line for every sample, and for the
 *   ibs_op samples the decoded op ("ibs: ...") equal to the table, field by field;
 * - a file with one truncated payload: pmusim script exits 2 with one line naming
 *   the sample.
 * Environment: PMUSIM, WORKLOADS as for check_e2e. */
#include <check.h>
#include <elf.h>
#include <inttypes.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

#define NSAMPLES 120
#define PID 4321
#define PERIOD_CYCLES 100000u /* ibs_op// */
#define PERIOD_OPS 4096u      /* ibs_op/cnt_ctl=1/ */
#define PERIOD_LBR 20011u     /* cycles:u */

struct func {
	const char *name;
	uint64_t addr, size;
	uint64_t insn[512]; /* instruction addresses objdump lists */
	size_t ninsn;
	unsigned count[3]; /* samples per event */
};

static struct func funcs[3] = {{.name = "mix"}, {.name = "run_loops"}, {.name = "main"}};
static char prog[PATH_MAX];
static uint64_t seg_addr, seg_len, seg_off; /* the executable PT_LOAD */

struct row {
	int ev; /* 0 ibs_op//, 1 ibs_op/cnt_ctl=1/, 2 cycles:u */
	int fn;
	struct ibs_op op;
	uint64_t ip, addr;
};
static struct row rows[NSAMPLES];

static uint64_t rnd(uint64_t *s) /* xorshift64* */
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

/* The executable PT_LOAD of prog, read with <elf.h> (no pmusim code). */
static void read_segment(void)
{
	FILE *f = fopen(prog, "rb");
	ck_assert_ptr_nonnull(f);
	Elf64_Ehdr eh;
	ck_assert_uint_eq(fread(&eh, sizeof(eh), 1, f), 1);
	for (int i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		ck_assert_int_eq(
		    fseek(f, (long)(eh.e_phoff + (uint64_t)i * eh.e_phentsize), SEEK_SET), 0);
		ck_assert_uint_eq(fread(&ph, sizeof(ph), 1, f), 1);
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			seg_addr = ph.p_vaddr & ~0xfffull;
			seg_off = ph.p_offset & ~0xfffull;
			seg_len = ph.p_memsz + (ph.p_vaddr - seg_addr);
		}
	}
	fclose(f);
	ck_assert_msg(seg_len, "no executable segment in %s", prog);
}

/* Addresses and sizes from `nm -S`, instructions from `objdump -d` over each. */
static void read_functions(void)
{
	int st;
	char *nm[] = {"nm", "-S", prog, NULL};
	char *text = run_capture(nm, &st);
	ck_assert_msg(st == 0 && text, "nm failed");
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		unsigned long long a, s;
		char t, name[128];
		if (sscanf(l, "%llx %llx %c %127s", &a, &s, &t, name) != 4)
			continue;
		for (int i = 0; i < 3; i++)
			if (strcmp(name, funcs[i].name) == 0)
				funcs[i].addr = a, funcs[i].size = s;
	}
	free(text);
	for (int i = 0; i < 3; i++) {
		struct func *fn = &funcs[i];
		ck_assert_msg(fn->size, "nm: no %s", fn->name);
		char start[32], stop[32];
		snprintf(start, sizeof(start), "--start-address=0x%" PRIx64, fn->addr);
		snprintf(stop, sizeof(stop), "--stop-address=0x%" PRIx64, fn->addr + fn->size);
		char *od[] = {"objdump", "-d", start, stop, prog, NULL};
		text = run_capture(od, &st);
		ck_assert_msg(st == 0 && text, "objdump failed");
		for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
			unsigned long long a;
			char colon;
			if (sscanf(l, " %llx%c", &a, &colon) == 2 && colon == ':' && l[0] == ' ' &&
			    fn->ninsn < 512)
				fn->insn[fn->ninsn++] = a;
		}
		free(text);
		ck_assert_msg(fn->ninsn > 3, "objdump: %zu instructions in %s", fn->ninsn,
		              fn->name);
	}
}

static uint64_t pick_insn(uint64_t *seed, int fn)
{
	return funcs[fn].insn[rnd(seed) % funcs[fn].ninsn];
}

/* The table: events in turn, functions at random, op facts at random but consistent. */
static void make_rows(void)
{
	static const uint8_t widths[] = {0, 1, 2, 4, 8, 16, 32};
	uint64_t seed = 0x1b5f11e;
	for (int i = 0; i < NSAMPLES; i++) {
		struct row *r = &rows[i];
		memset(r, 0, sizeof(*r));
		r->ev = i % 3;
		r->fn = (int)(rnd(&seed) % 3);
		r->ip = pick_insn(&seed, r->fn);
		funcs[r->fn].count[r->ev]++;
		if (r->ev == 2)
			continue;
		struct ibs_op *op = &r->op;
		op->ip = r->ip;
		op->max_cnt = r->ev ? PERIOD_OPS : PERIOD_CYCLES;
		op->cnt_ctl = r->ev == 1;
		op->cur_cnt = rnd(&seed) & 0x7ffffff;
		op->tag_to_ret = (uint32_t)(rnd(&seed) % 700);
		op->microcoded = rnd(&seed) % 5 == 0;
		if ((op->branch = rnd(&seed) & 1)) {
			op->taken = rnd(&seed) & 1;
			op->mispredicted = rnd(&seed) % 4 == 0;
			op->ret = op->taken && rnd(&seed) % 3 == 0;
			op->br_target = pick_insn(&seed, (int)(rnd(&seed) % 3));
		}
		op->load = rnd(&seed) & 1;
		op->store = rnd(&seed) % 3 == 0;
		if (op->load || op->store) {
			op->width = widths[rnd(&seed) % 7];
			if ((op->addr_valid = rnd(&seed) % 4 != 0))
				op->data_addr = rnd(&seed) & 1
				                    ? 0x4a2000 + 8 * (rnd(&seed) % 512)
				                    : 0x7ffffffde000 + 8 * (rnd(&seed) % 1024);
		}
		r->addr = op->data_addr;
	}
}

/* The recording; truncate_at >= 0: that row's payload loses its last 8 bytes. */
static void write_file(const char *file, int truncate_at)
{
	struct perfdata_event ev[3];
	ck_assert_int_eq(perfdata_ibs_op_event(&ev[0], PERIOD_CYCLES, 0, 1, NULL), 0);
	ck_assert_int_eq(perfdata_ibs_op_event(&ev[1], PERIOD_OPS, 1, 2, NULL), 0);
	ev[2] = (struct perfdata_event){.name = "cycles:u",
	                                .type = PERF_TYPE_HARDWARE,
	                                .config = PERF_COUNT_HW_CPU_CYCLES,
	                                .sample_period = PERIOD_LBR,
	                                .id = 3};
	for (int i = 0; i < 3; i++)
		ev[i].sample_type = PERFDATA_IBS_OP_SAMPLE_TYPE | PERF_SAMPLE_IDENTIFIER;
	static const char *const argv[] = {"pmusim", "record", "-e", "ibs_op//"};
	struct perfdata_info info = {.hostname = "pmusim",
	                             .os_release = "pmusim",
	                             .version = "pmusim 0.1",
	                             .arch = "x86_64",
	                             .cpudesc = "pmusim model CPU",
	                             .cpuid = PERFDATA_IBS_CPUID,
	                             .nr_cpus = 1,
	                             .cmdline = argv,
	                             .ncmdline = 4};
	struct perfdata_writer *w;
	char msg[256] = "";
	ck_assert_msg(perfdata_writer_open(&w, file, ev, 3, &info, msg, sizeof(msg)) == 0, "%s",
	              msg);
	ck_assert_int_eq(perfdata_write_comm_exec(w, PID, PID, "loops", 1000), 0);
	ck_assert_int_eq(
	    perfdata_write_mmap2(w, PID, PID, seg_addr, seg_len, seg_off, 5, 2, prog, 1000), 0);
	for (int i = 0; i < NSAMPLES; i++) {
		const struct row *r = &rows[i];
		uint8_t raw[IBS_OP_RAW_SIZE] = {0};
		struct perf_sample s = {.id = (uint64_t)r->ev + 1,
		                        .ip = r->ip,
		                        .pid = PID,
		                        .tid = PID,
		                        .time = 2000 + 10 * (uint64_t)i,
		                        .addr = r->addr,
		                        .raw = raw};
		if (r->ev == 2) { /* pmusim's LBR payload (perfdata.h): tag, flags, cycles */
			uint32_t tag = PERFDATA_RAW_LBR_TAG, flags = 1;
			/* 0x30000 and more: bits 48 and 49 of the u64 after the tag, IbsFetchEn and
			 * IbsFetchVal to a decoder that took this for an IBS fetch sample */
			int64_t cycles = i % 2 ? 3 : 0x30000 + i;
			memcpy(raw, &tag, 4), memcpy(raw + 4, &flags, 4),
			    memcpy(raw + 8, &cycles, 8);
			s.raw_size = PERFDATA_RAW_LBR_SIZE;
			s.period = PERIOD_LBR;
		} else {
			s.raw_size = (uint32_t)ibs_op_encode(&r->op, raw, sizeof(raw));
			ck_assert_uint_eq(s.raw_size, IBS_OP_RAW_SIZE);
			s.period = r->op.max_cnt;
			if (i == truncate_at)
				s.raw_size -= 8;
		}
		ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(perfdata_writer_close(w), 0);
}

static void setup(void)
{
	ck_assert_ptr_nonnull(realpath(wl("loops"), prog));
	read_segment();
	read_functions();
	make_rows();
	write_file(tmp_path("ibs.data"), -1);
}

/* The number after `key` in line (decimal, or hex with base 16), or -1. */
static long long field(const char *line, const char *key, int base)
{
	const char *p = strstr(line, key);
	if (!p)
		return -1;
	return strtoll(p + strlen(key), NULL, base);
}

/* One sample as perf report -D shows it: the IBS lines before its SAMPLE line. */
struct dumped {
	char ctl[512], rip[128], data[512], data3[1024], linad[128], physad[128], brtarget[128];
	char sample[256];
	int fetch;
};

static size_t parse_dump(char *text, struct dumped *d, size_t cap)
{
	struct dumped cur;
	memset(&cur, 0, sizeof(cur));
	size_t n = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		static const struct {
			const char *prefix;
			size_t off, len;
		} keys[] = {
		    {"ibs_op_ctl:", offsetof(struct dumped, ctl), 512},
		    {"IbsOpRip:", offsetof(struct dumped, rip), 128},
		    {"ibs_op_data:", offsetof(struct dumped, data), 512},
		    {"ibs_op_data3:", offsetof(struct dumped, data3), 1024},
		    {"IbsDCLinAd:", offsetof(struct dumped, linad), 128},
		    {"IbsDCPhysAd:", offsetof(struct dumped, physad), 128},
		    {"IbsBrTarget:", offsetof(struct dumped, brtarget), 128},
		};
		for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); k++)
			if (strncmp(l, keys[k].prefix, strlen(keys[k].prefix)) == 0)
				snprintf((char *)&cur + keys[k].off, keys[k].len, "%s", l);
		if (strncmp(l, "ibs_fetch", 9) == 0 || strncmp(l, "IbsFetch", 8) == 0)
			cur.fetch = 1;
		if (strstr(l, "PERF_RECORD_SAMPLE")) {
			snprintf(cur.sample, sizeof(cur.sample), "%s", l);
			if (n < cap)
				d[n] = cur;
			n++;
			memset(&cur, 0, sizeof(cur));
		}
	}
	return n;
}

/* Compares one fact; counts and reports a mismatch. */
static unsigned mismatches;
static void expect(int i, const char *what, long long got, long long want)
{
	if (got != want) {
		if (mismatches++ < 20)
			fprintf(stderr, "sample %d: %s is %lld in perf's text, %lld written\n", i,
			        what, got, want);
	}
}

START_TEST(perf_decodes_every_op)
{
	int st;
	char *argv[] = {"perf", "report", "-D", "-i", (char *)tmp_path("ibs.data"), NULL};
	const char *err = tmp_path("dump.err");
	const char *out = tmp_path("dump.out");
	st = run_cmd(argv, NULL, out, err);
	ck_assert_int_eq(st, 0);
	char *text = slurp(out, NULL), *errs = slurp(err, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_msg(!errs || !strstr(errs, "IBS"), "perf: %s", errs);
	static struct dumped d[NSAMPLES + 1];
	ck_assert_uint_eq(parse_dump(text, d, NSAMPLES + 1), NSAMPLES);
	unsigned ops = 0;
	mismatches = 0;
	for (int i = 0; i < NSAMPLES; i++) {
		const struct row *r = &rows[i];
		const struct dumped *x = &d[i];
		expect(i, "fetch lines", x->fetch, 0);
		expect(i, "sample ip", field(x->sample, ": 0x", 16), (long long)r->ip);
		expect(i, "sample addr", field(x->sample, "addr: ", 16), (long long)r->addr);
		if (r->ev == 2) {
			expect(i, "IBS lines of a cycles sample",
			       x->ctl[0] || x->rip[0] || x->data[0], 0);
			continue;
		}
		const struct ibs_op *op = &r->op;
		ops++;
		expect(i, "ibs_op_ctl line", x->ctl[0] != 0, 1);
		expect(i, "MaxCnt", field(x->ctl, "MaxCnt ", 10), (long long)op->max_cnt);
		expect(i, "En", field(x->ctl, " En ", 10), 1);
		expect(i, "Val", field(x->ctl, " Val ", 10), 1);
		expect(i, "CntCtl", field(x->ctl, "CntCtl ", 10), op->cnt_ctl);
		expect(i, "CntCtl name", strstr(x->ctl, op->cnt_ctl ? "=uOps" : "=cycles") != NULL,
		       1);
		expect(i, "CurCnt", field(x->ctl, "CurCnt ", 10), (long long)op->cur_cnt);
		expect(i, "IbsOpRip", field(x->rip, "IbsOpRip:", 16), (long long)op->ip);
		expect(i, "CompToRetCtr", field(x->data, "CompToRetCtr ", 10), op->comp_to_ret);
		expect(i, "TagToRetCtr", field(x->data, "TagToRetCtr ", 10), op->tag_to_ret);
		expect(i, "BrnRet", field(x->data, "BrnRet ", 10), op->branch);
		/* perf prints the branch facts only for a retired branch */
		expect(i, "OpBrnTaken", field(x->data, "OpBrnTaken ", 10),
		       op->branch ? op->taken : -1);
		expect(i, "OpBrnMisp", field(x->data, "OpBrnMisp ", 10),
		       op->branch ? op->mispredicted : -1);
		expect(i, "OpReturn", field(x->data, "OpReturn ", 10), op->branch ? op->ret : -1);
		expect(i, "RipInvalid", field(x->data, "RipInvalid ", 10), 0);
		expect(i, "Microcode", field(x->data, "Microcode ", 10), op->microcoded);
		expect(i, "LdOp", field(x->data3, "LdOp ", 10), op->load);
		expect(i, "StOp", field(x->data3, "StOp ", 10), op->store);
		expect(i, "DcLinAddrValid", field(x->data3, "DcLinAddrValid ", 10), op->addr_valid);
		expect(i, "DcPhyAddrValid", field(x->data3, "DcPhyAddrValid ", 10), 0);
		expect(i, "OpMemWidth", field(x->data3, "OpMemWidth ", 10),
		       op->width ? op->width : -1);
		expect(i, "IbsDCLinAd", field(x->linad, "IbsDCLinAd:", 16),
		       op->addr_valid ? (long long)op->data_addr : -1);
		expect(i, "IbsDCPhysAd line", x->physad[0] != 0, 0);
		expect(i, "IbsBrTarget", field(x->brtarget, "IbsBrTarget:", 16),
		       op->branch ? (long long)op->br_target : -1);
	}
	printf("check_ibs_file: perf report -D decoded %u IBS op samples of %d, %u mismatches\n",
	       ops, NSAMPLES, mismatches);
	ck_assert_uint_eq(mismatches, 0);
	ck_assert_uint_eq(ops, 2 * NSAMPLES / 3);
	free(text);
	free(errs);
}
END_TEST

START_TEST(perf_script_names_functions_and_addresses)
{
	int st;
	char *argv[] = {"perf", "script",      "-i", (char *)tmp_path("ibs.data"),
	                "-F",   "ip,sym,addr", NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf script failed");
	int i = 0;
	mismatches = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n"), i++) {
		ck_assert_int_lt(i, NSAMPLES);
		unsigned long long addr, ip;
		char sym[128];
		ck_assert_msg(sscanf(l, "%llx %llx %127s", &addr, &ip, sym) == 3, "line \"%s\"", l);
		expect(i, "addr", (long long)addr, (long long)rows[i].addr);
		expect(i, "ip", (long long)ip, (long long)rows[i].ip);
		expect(i, "symbol", strcmp(sym, funcs[rows[i].fn].name) == 0, 1);
	}
	ck_assert_int_eq(i, NSAMPLES);
	ck_assert_uint_eq(mismatches, 0);
	free(text);
}
END_TEST

START_TEST(perf_report_lists_the_functions)
{
	int st;
	char *argv[] = {"perf", "report", "--stdio", "-i", (char *)tmp_path("ibs.data"), NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf report failed");
	static const char *const names[3] = {"ibs_op//", "ibs_op/cnt_ctl=1/", "cycles:u"};
	int ev = -1, seen[3][3] = {{0}};
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		char name[64];
		unsigned n;
		if (sscanf(l, "# Samples: %u of event '%63[^']'", &n, name) == 2) {
			for (ev = 0; ev < 3 && strcmp(name, names[ev]); ev++)
				;
			ck_assert_msg(ev < 3, "event %s", name);
			ck_assert_uint_eq(n, NSAMPLES / 3);
			continue;
		}
		double pct;
		char comm[32], dso[32], sym[64];
		if (ev < 0 || sscanf(l, " %lf%% %31s %31s [.] %63s", &pct, comm, dso, sym) != 4)
			continue;
		for (int f = 0; f < 3; f++) {
			if (strcmp(sym, funcs[f].name))
				continue;
			char want[16], got[16];
			snprintf(want, sizeof(want), "%.2f",
			         100.0 * funcs[f].count[ev] / (NSAMPLES / 3));
			snprintf(got, sizeof(got), "%.2f", pct);
			ck_assert_msg(!strcmp(want, got), "%s of %s: %s%%, want %s%%", sym,
			              names[ev], got, want);
			ck_assert_str_eq(comm, "loops");
			ck_assert_str_eq(dso, "loops");
			seen[ev][f] = 1;
		}
	}
	for (int e = 0; e < 3; e++)
		for (int f = 0; f < 3; f++)
			ck_assert_msg(seen[e][f] == (funcs[f].count[e] > 0), "%s of %s listed %d",
			              funcs[f].name, names[e], seen[e][f]);
	free(text);
}
END_TEST

START_TEST(pmusim_script_prints_the_ops)
{
	int st;
	char *perf[] = {"perf", "script", "-i", (char *)tmp_path("ibs.data"), NULL};
	char *ptext = run_capture(perf, &st);
	ck_assert_msg(st == 0 && ptext, "perf script failed");
	char *pm[] = {(char *)pmusim(), "script", "-i", (char *)tmp_path("ibs.data"), NULL};
	char *mtext = run_capture(pm, &st);
	ck_assert_msg(st == 0 && mtext, "pmusim script failed");
	char *psave, *msave, *pl = strtok_r(ptext, "\n", &psave),
	                     *ml = strtok_r(mtext, "\n", &msave);
	mismatches = 0;
	for (int i = 0; i < NSAMPLES;
	     i++, pl = strtok_r(NULL, "\n", &psave), ml = strtok_r(NULL, "\n", &msave)) {
		ck_assert_msg(pl && ml, "sample %d: a line is missing", i);
		char *ibs = strstr(ml, " ibs: ");
		expect(i, "ibs field", ibs != NULL, rows[i].ev != 2);
		if (ibs)
			*ibs = 0;
		ck_assert_msg(strcmp(pl, ml) == 0, "sample %d:\nperf:   %s\npmusim: %s", i, pl, ml);
		if (!ibs)
			continue;
		const struct ibs_op *op = &rows[i].op;
		char *t = ibs + 1;
		expect(i, "branch", field(t, "branch=", 10), op->branch);
		expect(i, "taken",
		       op->branch ? field(t, "taken=", 10) : strstr(t, "taken=- ") != NULL,
		       op->branch ? op->taken : 1);
		expect(i, "mispred",
		       op->branch ? field(t, "mispred=", 10) : strstr(t, "mispred=- ") != NULL,
		       op->branch ? op->mispredicted : 1);
		expect(i, "return",
		       op->branch ? field(t, "return=", 10) : strstr(t, "return=- ") != NULL,
		       op->branch ? op->ret : 1);
		expect(i, "target",
		       op->branch ? field(t, "target=0x", 16) : strstr(t, "target=- ") != NULL,
		       op->branch ? (long long)op->br_target : 1);
		expect(i, "load", field(t, "load=", 10), op->load);
		expect(i, "store", field(t, "store=", 10), op->store);
		expect(i, "width",
		       op->width ? field(t, "width=", 10) : strstr(t, "width=- ") != NULL,
		       op->width ? op->width : 1);
		expect(i, "data",
		       op->addr_valid ? field(t, "data=0x", 16) : strstr(t, "data=- ") != NULL,
		       op->addr_valid ? (long long)op->data_addr : 1);
		expect(i, "tag_to_ret", field(t, "tag_to_ret=", 10), op->tag_to_ret);
		expect(i, "microcode", field(t, "microcode=", 10), op->microcoded);
	}
	ck_assert_msg(!pl && !ml, "more lines than samples");
	ck_assert_uint_eq(mismatches, 0);
	free(ptext);
	free(mtext);
}
END_TEST

START_TEST(pmusim_script_refuses_a_truncated_payload)
{
	write_file(tmp_path("cut.data"), 7); /* row 7: an ibs_op/cnt_ctl=1/ sample */
	ck_assert_int_eq(rows[7].ev, 1);
	char *pm[] = {(char *)pmusim(), "script", "-i", (char *)tmp_path("cut.data"), NULL};
	const char *out = tmp_path("cut.out"), *err = tmp_path("cut.err");
	ck_assert_int_eq(run_cmd(pm, NULL, out, err), 2);
	char *text = slurp(out, NULL), *msg = slurp(err, NULL);
	ck_assert_ptr_nonnull(msg);
	ck_assert_msg(strchr(msg, '\n') == msg + strlen(msg) - 1, "not one line: %s", msg);
	ck_assert_msg(strstr(msg, "IBS op sample at 0x") && strstr(msg, "payload of 60 bytes") &&
	                  strstr(msg, "4 + 8 * 8 = 68 bytes, found 60"),
	              "message: %s", msg);
	/* the samples before it were printed */
	int lines = 0;
	for (const char *p = text; p && *p; p++)
		lines += *p == '\n';
	ck_assert_int_eq(lines, 7);
	free(text);
	free(msg);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ibs_file");
	TCase *tc = tcase_create("perf");
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, perf_decodes_every_op);
	tcase_add_test(tc, perf_script_names_functions_and_addresses);
	tcase_add_test(tc, perf_report_lists_the_functions);
	tcase_add_test(tc, pmusim_script_prints_the_ops);
	tcase_add_test(tc, pmusim_script_refuses_a_truncated_payload);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(suite());
}
