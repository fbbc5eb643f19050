/* End-to-end test of pmusim's op sampling recordings of a real program against tools
 * that share no code with pmusim: perf 6.1 (its own perf.data reader and IBS decoder,
 * tools/perf/util/amd-sample-raw.c), nm and objdump.
 *   1. `pmusim record -e ibs_op/cnt_ctl=1/ -c 1024` and `-e ibs_op// -c 1024` of
 *      workloads/loops (more than 1,000 samples each):
 *      - `perf report -D` prints one ibs_op_ctl block per sample; the IbsOpRip values it
 *        prints, in order, are the sample IPs profiler/perfdata.h reads, and perf's
 *        decoded MaxCnt, CntCtl, BrnRet, OpBrnTaken, OpBrnMisp, LdOp, StOp, OpMemWidth,
 *        DcLinAddrValid and IbsDCLinAd equal ibs_op_decode of the same payload: 0
 *        mismatches (and the recording has branches, taken ones, loads, stores and
 *        valid data addresses, so that each comparison sees both values);
 *      - `perf script -F ip,sym,addr` names, for every sample in loops' .text (objdump
 *        -h), a function nm -S says covers the ip, and equals `pmusim script -F
 *        ip,sym,ibs` field by field (ip, sym, and perf's addr against ibs's data=,
 *        "-" being 0), and `pmusim script -F ip,sym,addr` byte for byte;
 *      - `perf report --stdio`: every function with >= 1 % is an nm symbol, its share
 *        is the period-weighted share of the samples nm puts in it (within 0.01 %),
 *        and those functions hold >= 95 % of the weight;
 *   2. `pmusim report --method ibs` uses every sample and names its hottest edges by
 *      nm symbols; `pmusim validate --method ibs --truth T.fdata` (the truth of the
 *      same record command) exits 0 with an overlap >= 95 %, on loops and on `cpi_sort
 *      10`, at -c 256: at -c 1024 sampling noise alone spreads loops' overlap over
 *      93.8-97.6 % across --pmu-seed values (about 200 samples per hot branch), at 256
 *      over 97.6-98.6 %, at 128 over 98.1-99.1 %: it rises as the period falls, so
 *      what is left is noise, not bias;
 *   3. bad input: every refused record gets one stderr line naming the problem, exit
 *      status 2, and leaves nothing in its output directory; `pmusim script`,
 *      `report` and `validate` of a recording cut to half its size: exit status 2
 *      (their --help: corrupt files), one line, nothing on stdout.
 * Environment: PMUSIM, WORKLOADS as for check_e2e; perf, nm and objdump. */
#include <check.h>
#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/ibs_read.h"
#include "tests/unit/run_suite.h"

/* ---- the program, from nm and objdump ---- */

struct sym {
	uint64_t addr, size;
	char name[128];
};

struct program {
	char path[PATH_MAX];
	struct sym *syms; /* nm -S's functions (t, T, w, W with a size) */
	size_t nsyms;
	uint64_t text_lo, text_hi; /* objdump -h's .text */
};

static void read_program(struct program *p, const char *name)
{
	memset(p, 0, sizeof(*p));
	ck_assert_ptr_nonnull(realpath(wl(name), p->path));
	int st;
	char *nm[] = {"nm", "-S", p->path, NULL};
	char *text = run_capture(nm, &st);
	ck_assert_msg(st == 0 && text, "nm -S %s failed", p->path);
	size_t cap = 0;
	char *save;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned long long a, s;
		char t;
		struct sym x;
		if (sscanf(l, "%llx %llx %c %127s", &a, &s, &t, x.name) != 4 || !s ||
		    !strchr("tTwW", t))
			continue;
		x.addr = a, x.size = s;
		if (p->nsyms == cap)
			ck_assert_ptr_nonnull(
			    p->syms = realloc(p->syms, (cap = 2 * cap + 256) * sizeof(x)));
		p->syms[p->nsyms++] = x;
	}
	free(text);
	ck_assert_msg(p->nsyms > 10, "nm: %zu functions in %s", p->nsyms, p->path);
	char *od[] = {"objdump", "-h", p->path, NULL};
	text = run_capture(od, &st);
	ck_assert_msg(st == 0 && text, "objdump -h %s failed", p->path);
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		unsigned idx;
		char sec[64];
		unsigned long long size, vma;
		if (sscanf(l, " %u %63s %llx %llx", &idx, sec, &size, &vma) == 4 &&
		    strcmp(sec, ".text") == 0)
			p->text_lo = vma, p->text_hi = vma + size;
	}
	free(text);
	ck_assert_msg(p->text_hi > p->text_lo, "objdump -h: no .text in %s", p->path);
}

/* 1 when nm has a function called name covering ip (aliases: any of them). */
static int sym_covers(const struct program *p, const char *name, uint64_t ip)
{
	for (size_t i = 0; i < p->nsyms; i++)
		if (ip - p->syms[i].addr < p->syms[i].size && strcmp(p->syms[i].name, name) == 0)
			return 1;
	return 0;
}

/* The first nm function covering ip (the one perf's shares go to: sym_covers checks
 * the name perf chose), or NULL. */
static const struct sym *sym_of(const struct program *p, uint64_t ip)
{
	for (size_t i = 0; i < p->nsyms; i++)
		if (ip - p->syms[i].addr < p->syms[i].size)
			return &p->syms[i];
	return NULL;
}

static int is_function(const struct program *p, const char *name)
{
	for (size_t i = 0; i < p->nsyms; i++)
		if (strcmp(p->syms[i].name, name) == 0)
			return 1;
	return 0;
}

/* ---- recordings ---- */

/* `pmusim record -o tmp/name ARGS -- prog [arg]` unless made before in this process
 * (the same arguments write the same bytes); must exit 0. */
static const char *recording(const char *name, const char *const *args, const char *prog,
                             const char *arg)
{
	static char path[8][512];
	static int slot;
	char *p = path[slot++ % 8];
	snprintf(p, sizeof(path[0]), "%s", tmp_path(name));
	if (access(p, R_OK) == 0)
		return p;
	char *argv[32] = {(char *)pmusim(), "record", "-o", p};
	int n = 4;
	for (; *args; args++)
		argv[n++] = (char *)*args;
	argv[n++] = "--";
	argv[n++] = (char *)wl(prog);
	if (arg)
		argv[n++] = (char *)arg;
	argv[n] = NULL;
	char err[600];
	snprintf(err, sizeof(err), "%s.err", p);
	int st = run_cmd(argv, NULL, NULL, err);
	char *e = slurp(err, NULL);
	ck_assert_msg(st == 0, "pmusim record -o %s: status %d: %s", name, st, e ? e : "");
	free(e);
	return p;
}


/* The two recordings of part 1. */
static const char *const ops_args[] = {"-e", "ibs_op/cnt_ctl=1/", "-c", "1024", NULL};
static const char *const cycles_args[] = {"-e", "ibs_op//", "-c", "1024", NULL};
static const char *const mode_name[] = {"ops", "cycles"};

static const char *part1_recording(int mode)
{
	return mode ? recording("loops_cycles.data", cycles_args, "loops", NULL)
	            : recording("loops_ops.data", ops_args, "loops", NULL);
}

/* ---- perf's text ---- */

/* The number after key in line (base 10 or 16), or -1 when key is absent. */
static long long num_after(const char *line, const char *key, int base)
{
	const char *p = line ? strstr(line, key) : NULL;
	return p ? strtoll(p + strlen(key), NULL, base) : -1;
}

/* One sample as perf report -D prints it: the IBS lines before its SAMPLE line. */
struct dumped {
	const char *ctl, *rip, *data, *data3, *linad, *sample;
	int nctl; /* ibs_op_ctl lines in this sample's block */
};

/* Splits text (modified) into samples; returns how many SAMPLE lines there were. */
static size_t parse_dump(char *text, struct dumped *d, size_t cap, size_t *nctl_total)
{
	struct dumped cur = {0};
	size_t n = 0;
	*nctl_total = 0;
	char *save;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "ibs_op_ctl:", 11) == 0)
			cur.ctl = l, cur.nctl++, ++*nctl_total;
		else if (strncmp(l, "IbsOpRip:", 9) == 0)
			cur.rip = l;
		else if (strncmp(l, "ibs_op_data:", 12) == 0)
			cur.data = l;
		else if (strncmp(l, "ibs_op_data3:", 13) == 0)
			cur.data3 = l;
		else if (strncmp(l, "IbsDCLinAd:", 11) == 0)
			cur.linad = l;
		else if (strstr(l, "PERF_RECORD_SAMPLE")) {
			cur.sample = l;
			if (n < cap)
				d[n] = cur;
			n++;
			memset(&cur, 0, sizeof(cur));
		}
	}
	return n;
}

static unsigned mismatches;
static void expect(size_t i, const char *what, long long perf, long long pmusim)
{
	if (perf != pmusim && mismatches++ < 20)
		fprintf(stderr, "sample %zu: %s: perf %lld (0x%llx), pmusim %lld (0x%llx)\n", i,
		        what, perf, (unsigned long long)perf, pmusim, (unsigned long long)pmusim);
}

START_TEST(perf_decodes_every_op_as_pmusim_reads_it)
{
	const char *file = part1_recording(_i);
	size_t n;
	struct op *ops = ibs_read_ops(file, -1, &n);
	ck_assert_msg(n > 1000, "%zu samples", n);
	char *argv[] = {"perf", "report", "-D", "-i", (char *)file, NULL};
	const char *out = tmp_path("dump.out"), *err = tmp_path("dump.err");
	ck_assert_int_eq(run_cmd(argv, NULL, out, err), 0);
	char *text = slurp(out, NULL), *errs = slurp(err, NULL);
	ck_assert_ptr_nonnull(text);
	/* perf's decoder complains about payloads it cannot read */
	ck_assert_msg(!errs || !strstr(errs, "IBS"), "perf: %s", errs);
	struct dumped *d = calloc(n + 1, sizeof(*d));
	ck_assert_ptr_nonnull(d);
	size_t nctl, nd = parse_dump(text, d, n + 1, &nctl);
	printf("check_ibs_perf: %s mode: %zu samples read, perf report -D: %zu SAMPLE records, "
	       "%zu ibs_op_ctl blocks\n",
	       mode_name[_i], n, nd, nctl);
	ck_assert_uint_eq(nd, n);
	ck_assert_uint_eq(nctl, n);
	mismatches = 0;
	unsigned rip_mismatch = 0, branches = 0, taken = 0, misp = 0, loads = 0, stores = 0,
	         valid = 0;
	for (size_t i = 0; i < n; i++) {
		const struct dumped *x = &d[i];
		const struct ibs_op *f = &ops[i].f;
		expect(i, "ibs_op_ctl lines", x->nctl, 1);
		unsigned before = mismatches;
		expect(i, "IbsOpRip", num_after(x->rip, "IbsOpRip:", 16), (long long)ops[i].ip);
		rip_mismatch += mismatches != before;
		/* perf's sample header and the payload's register: the same ip */
		expect(i, "SAMPLE ip", num_after(x->sample, ": 0x", 16), (long long)ops[i].ip);
		expect(i, "MaxCnt", num_after(x->ctl, "MaxCnt ", 10), (long long)f->max_cnt);
		expect(i, "CntCtl", num_after(x->ctl, "CntCtl ", 10), f->cnt_ctl);
		expect(i, "BrnRet", num_after(x->data, "BrnRet ", 10), f->branch);
		/* perf prints a branch's facts only for a retired branch */
		expect(i, "OpBrnTaken", num_after(x->data, "OpBrnTaken ", 10),
		       f->branch ? f->taken : -1);
		expect(i, "OpBrnMisp", num_after(x->data, "OpBrnMisp ", 10),
		       f->branch ? f->mispredicted : -1);
		expect(i, "LdOp", num_after(x->data3, "LdOp ", 10), f->load);
		expect(i, "StOp", num_after(x->data3, "StOp ", 10), f->store);
		expect(i, "OpMemWidth", num_after(x->data3, "OpMemWidth ", 10),
		       f->width ? f->width : -1);
		expect(i, "DcLinAddrValid", num_after(x->data3, "DcLinAddrValid ", 10),
		       f->addr_valid);
		expect(i, "IbsDCLinAd", num_after(x->linad, "IbsDCLinAd:", 16),
		       f->addr_valid ? (long long)f->data_addr : -1);
		/* the sample's PERF_SAMPLE_ADDR: the data address when valid */
		expect(i, "SAMPLE addr", num_after(x->sample, "addr: ", 16),
		       f->addr_valid ? (long long)f->data_addr : 0);
		branches += f->branch, taken += f->branch && f->taken;
		misp += f->branch && f->mispredicted;
		loads += f->load, stores += f->store, valid += f->addr_valid;
	}
	printf("check_ibs_perf: %s mode: %zu IbsOpRip compared, %u differ from the reader's "
	       "ips; %u field mismatches in all (branches %u, taken %u, mispredicted %u, "
	       "loads %u, stores %u, valid data addresses %u)\n",
	       mode_name[_i], n, rip_mismatch, mismatches, branches, taken, misp, loads, stores,
	       valid);
	ck_assert_uint_eq(mismatches, 0);
	/* every compared field took both values somewhere (mispredictions may be rare) */
	ck_assert_uint_gt(branches, 0);
	ck_assert_uint_gt(taken, 0);
	ck_assert_uint_lt(taken, branches);
	ck_assert_uint_gt(loads, 0);
	ck_assert_uint_gt(stores, 0);
	ck_assert_uint_gt(valid, 0);
	ck_assert_uint_lt(loads + stores, n);
	free(d);
	free(ops);
	free(text);
	free(errs);
}
END_TEST

/* pmusim script -F ip,sym,ibs's line: ip, sym and the ibs field's data address. */
static int parse_pmusim_line(const char *l, unsigned long long *ip, char *sym,
                             unsigned long long *data)
{
	if (sscanf(l, "%llx %127s", ip, sym) != 2)
		return -1;
	const char *d = strstr(l, " data=");
	if (!d)
		return -1;
	*data = d[6] == '-' ? 0 : strtoull(d + 6, NULL, 16);
	return 0;
}

START_TEST(perf_script_names_the_functions_as_pmusim_script)
{
	static struct program loops;
	read_program(&loops, "loops");
	const char *file = part1_recording(_i);
	size_t n;
	struct op *ops = ibs_read_ops(file, -1, &n);
	int st;
	char *perf[] = {"perf", "script", "-F", "ip,sym,addr", "-i", (char *)file, NULL};
	char *ptext = run_capture(perf, &st);
	ck_assert_msg(st == 0 && ptext, "perf script failed");
	char *pm[] = {(char *)pmusim(), "script", "-i", (char *)file, "-F", "ip,sym,ibs", NULL};
	char *mtext = run_capture(pm, &st);
	ck_assert_msg(st == 0 && mtext, "pmusim script failed");
	char *ps, *ms, *pl = strtok_r(ptext, "\n", &ps), *ml = strtok_r(mtext, "\n", &ms);
	size_t i = 0, in_text = 0, named = 0;
	mismatches = 0;
	for (; pl || ml; pl = strtok_r(NULL, "\n", &ps), ml = strtok_r(NULL, "\n", &ms), i++) {
		ck_assert_msg(pl && ml, "line %zu: perf %s, pmusim %s", i, pl ? pl : "(none)",
		              ml ? ml : "(none)");
		ck_assert_uint_lt(i, n);
		unsigned long long paddr, pip, mip, mdata;
		char psym[128], msym[128];
		ck_assert_msg(sscanf(pl, "%llx %llx %127s", &paddr, &pip, psym) == 3,
		              "perf line \"%s\"", pl);
		ck_assert_msg(parse_pmusim_line(ml, &mip, msym, &mdata) == 0, "pmusim line \"%s\"",
		              ml);
		expect(i, "ip", (long long)pip, (long long)mip);
		expect(i, "addr/data", (long long)paddr, (long long)mdata);
		expect(i, "sym (0: differ)", strcmp(psym, msym) == 0, 1);
		expect(i, "ip against the file", (long long)pip, (long long)ops[i].ip);
		if (pip >= loops.text_lo && pip < loops.text_hi) {
			in_text++;
			int ok = strcmp(psym, "[unknown]") != 0 && sym_covers(&loops, psym, pip);
			named += ok;
			if (!ok)
				expect(i, "nm has perf's symbol at the ip (0: no)", 0, 1);
		}
	}
	printf("check_ibs_perf: %s mode: perf script and pmusim script: %zu lines, %zu ips in "
	       "loops' .text, %zu named by a function nm puts there; %u mismatches\n",
	       mode_name[_i], i, in_text, named, mismatches);
	ck_assert_uint_eq(i, n);
	ck_assert_uint_eq(mismatches, 0);
	/* the same fields, perf's layout: the same bytes */
	char *ptext2 = run_capture(perf, &st);
	ck_assert_msg(st == 0 && ptext2, "perf script failed");
	char *pm2[] = {(char *)pmusim(), "script", "-i", (char *)file, "-F", "ip,sym,addr", NULL};
	char *mtext2 = run_capture(pm2, &st);
	ck_assert_msg(st == 0 && mtext2, "pmusim script -F ip,sym,addr failed");
	size_t same = 0;
	while (ptext2[same] && ptext2[same] == mtext2[same])
		same++;
	ck_assert_msg(strcmp(ptext2, mtext2) == 0,
	              "pmusim script -F ip,sym,addr differs from perf's at byte %zu: perf \"%.60s\", "
	              "pmusim \"%.60s\"",
	              same, ptext2 + same, mtext2 + same);
	printf("check_ibs_perf: %s mode: perf script -F ip,sym,addr = pmusim script -F ip,sym,addr "
	       "(%zu bytes)\n",
	       mode_name[_i], strlen(ptext2));
	free(ptext2);
	free(mtext2);
	/* loops is static: its own code is nearly everything it runs */
	ck_assert_uint_ge(in_text, n * 99 / 100);
	free(ptext);
	free(mtext);
	free(ops);
	free(loops.syms);
}
END_TEST

START_TEST(perf_report_lists_the_hot_functions)
{
	static struct program loops;
	read_program(&loops, "loops");
	const char *file = part1_recording(_i);
	size_t n;
	struct op *ops = ibs_read_ops(file, -1, &n);
	/* nm's share of each function: perf report weights a sample by its period */
	double *w = calloc(loops.nsyms, sizeof(double)), total = 0;
	ck_assert_ptr_nonnull(w);
	for (size_t i = 0; i < n; i++) {
		total += (double)ops[i].period;
		const struct sym *s = sym_of(&loops, ops[i].ip);
		if (s)
			w[s - loops.syms] += (double)ops[i].period;
	}
	int st;
	char *argv[] = {"perf", "report", "--stdio", "-i", (char *)file, NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf report failed");
	double listed = 0;
	int rows = 0;
	char *save;
	for (char *l = strtok_r(text, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
		double pct;
		char comm[64], dso[64], name[128];
		if (sscanf(l, " %lf%% %63s %63s [.] %127s", &pct, comm, dso, name) != 4 || pct < 1)
			continue;
		ck_assert_msg(is_function(&loops, name), "perf report: %s is no function of nm's",
		              name);
		ck_assert_str_eq(comm, "loops");
		ck_assert_str_eq(dso, "loops");
		double want = 0;
		for (size_t k = 0; k < loops.nsyms; k++)
			if (strcmp(loops.syms[k].name, name) == 0)
				want += 100.0 * w[k] / total;
		printf("check_ibs_perf: %s mode: perf report: %6.2f%% %s (nm: %.2f%%)\n",
		       mode_name[_i], pct, name, want);
		ck_assert_msg(fabs(pct - want) <= 0.011, "%s: perf %.2f%%, nm's share %.4f%%", name,
		              pct, want);
		listed += pct, rows++;
	}
	ck_assert_int_ge(rows, 2);
	ck_assert_msg(listed >= 95, "functions >= 1 %%: %.2f%% of the samples", listed);
	free(text);
	free(w);
	free(ops);
	free(loops.syms);
}
END_TEST

/* ---- part 2: pmusim's profile from op samples ---- */

struct prof_case {
	const char *prog, *arg, *name;
};
static const struct prof_case prof_cases[] = {
    {"loops", NULL, "loops_256"},
    {"cpi_sort", "10", "cpi_sort_256"},
};

START_TEST(report_and_validate_method_ibs)
{
	const struct prof_case *c = &prof_cases[_i];
	static struct program prog;
	read_program(&prog, c->prog);
	char truth[512], data_name[64];
	snprintf(truth, sizeof(truth), "%s", tmp_path(c->name));
	strcat(truth, ".fdata");
	snprintf(data_name, sizeof(data_name), "%s.data", c->name);
	const char *args[] = {"-e", "ibs_op/cnt_ctl=1/", "-c", "256", "--truth", truth, NULL};
	const char *file = recording(data_name, args, c->prog, c->arg);
	size_t n;
	free(ibs_read_ops(file, -1, &n));

	int st;
	char *rep[] = {(char *)pmusim(), "report", "-i", (char *)file, "--method", "ibs", NULL};
	char *text = run_capture(rep, &st);
	ck_assert_msg(st == 0 && text, "pmusim report --method ibs: status %d", st);
	unsigned long long samples = 0, used = 0, dropped = 1;
	ck_assert_msg(sscanf(text, "# method ibs: %llu samples, %llu used, %llu dropped", &samples,
	                     &used, &dropped) == 3,
	              "report: %.200s", text);
	ck_assert_uint_eq(samples, n);
	ck_assert_uint_eq(used, n);
	ck_assert_uint_eq(dropped, 0);
	/* the hottest edges' ends are functions nm knows */
	int edges = 0;
	char *save;
	for (char *l = strtok_r(text, "\n", &save); l && edges < 5;
	     l = strtok_r(NULL, "\n", &save)) {
		double share;
		unsigned long long count;
		char kind[32], from[160], to[160];
		if (sscanf(l, " %lf%% %llu %31s %159s -> %159s", &share, &count, kind, from, to) !=
		    5)
			continue;
		*strchr(from, '+') = 0, *strchr(to, '+') = 0;
		ck_assert_msg(is_function(&prog, from) && is_function(&prog, to), "edge %s", l);
		edges++;
	}
	ck_assert_int_eq(edges, 5);
	free(text);

	char *val[] = {(char *)pmusim(), "validate", "-i", (char *)file, "--truth", truth,
	               "--method",       "ibs",      NULL};
	text = run_capture(val, &st);
	ck_assert_msg(text, "validate printed nothing");
	double overlap = -1;
	const char *o = strstr(text, "overlap, all edges:");
	if (o)
		overlap = strtod(o + strlen("overlap, all edges:"), NULL);
	printf("check_ibs_perf: validate --method ibs, %s%s%s, -c 256: %zu samples, overlap "
	       "%.4f %%, exit status %d\n",
	       c->prog, c->arg ? " " : "", c->arg ? c->arg : "", n, overlap, st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(overlap >= 95.0, "overlap %.4f %%", overlap);
	free(text);
	free(prog.syms);
}
END_TEST

/* ---- part 3: bad input ---- */

struct bad {
	const char *args[8];
	const char *says; /* in the one stderr line */
};
static const struct bad bads[] = {
    {{"-e", "ibs_op//", "-c", "4097"}, "not a multiple of 16"},
    {{"-e", "ibs_op/cnt_ctl=1/", "-c", "4097"}, "not a multiple of 16"},
    {{"-e", "ibs_op//", "-c", "0"}, "-c '0'"},
    /* the random low bits take up to 127 off: a period must exceed them */
    {{"-e", "ibs_op//", "-c", "64"}, "below 128"},
    {{"-e", "ibs_op/cnt_ctl=1/", "-c", "112"}, "below 128"},
    {{"-e", "ibs_op/foo=1/", "-c", "1024"}, "'foo=1'"},
    {{"-e", "ibs_op/cnt_ctl=2/", "-c", "1024"}, "cnt_ctl is one bit"},
    {{"-e", "ibs_op//", "-c", "1024", "--ibs-window", "0/10ms"}, "--ibs-window"},
    {{"-e", "ibs_op//", "-c", "1024", "--ibs-window", "11ms/10ms"}, "--ibs-window 11ms/10ms"},
    {{"-e", "ibs_op//", "-c", "1024", "--ibs-window", "garbage"}, "'garbage'"},
    {{"-e", "ibs_op//", "-c", "1024", "--ibs-window", "1ms/x"}, "--ibs-window"},
};

/* The names in dir, other than . and .. */
static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	ck_assert_ptr_nonnull(d);
	int k = 0;
	for (struct dirent *e; (e = readdir(d));)
		k += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
	closedir(d);
	return k;
}

/* One line, ending in a newline, containing says. */
static void one_line_saying(const char *err, const char *says, const char *what)
{
	char *msg = slurp(err, NULL);
	ck_assert_msg(msg && *msg, "%s: nothing on stderr", what);
	size_t len = strlen(msg);
	ck_assert_msg(msg[len - 1] == '\n' && strchr(msg, '\n') == msg + len - 1,
	              "%s: not one line: %s", what, msg);
	ck_assert_msg(strstr(msg, says), "%s: \"%s\" does not say \"%s\"", what, msg, says);
	printf("check_ibs_perf: %s: %s", what, msg);
	free(msg);
}

START_TEST(bad_options_are_refused)
{
	const struct bad *b = &bads[_i];
	char dir[512], out[600];
	snprintf(dir, sizeof(dir), "%s", tmp_path("bad"));
	mkdir(dir, 0755);
	ck_assert_int_eq(entries(dir), 0);
	snprintf(out, sizeof(out), "%s/x.data", dir);
	char *argv[32] = {(char *)pmusim(), "record", "-o", out};
	int n = 4;
	char what[256] = "record";
	for (int k = 0; b->args[k]; k++) {
		argv[n++] = (char *)b->args[k];
		strcat(what, " "), strcat(what, b->args[k]);
	}
	argv[n++] = "--";
	argv[n++] = (char *)wl("loops");
	argv[n] = NULL;
	const char *err = tmp_path("bad.err");
	ck_assert_int_eq(run_cmd(argv, NULL, NULL, err), 2);
	one_line_saying(err, b->says, what);
	ck_assert_msg(access(out, F_OK) != 0, "%s: %s exists", what, out);
	ck_assert_msg(entries(dir) == 0, "%s: files left in the output directory", what);
}
END_TEST

START_TEST(a_truncated_recording_is_corrupt)
{
	const char *file = part1_recording(0);
	size_t size;
	char *bytes = slurp(file, &size);
	ck_assert_ptr_nonnull(bytes);
	char half[512];
	snprintf(half, sizeof(half), "%s", tmp_path("half.data"));
	FILE *f = fopen(half, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(bytes, 1, size / 2, f), size / 2);
	ck_assert_int_eq(fclose(f), 0);
	free(bytes);
	char truth[512];
	snprintf(truth, sizeof(truth), "%s", tmp_path("half.fdata"));
	ck_assert_int_eq(creat(truth, 0644) >= 0, 1);
	char *const cmds[][10] = {
	    {(char *)pmusim(), "script", "-i", half, NULL},
	    {(char *)pmusim(), "script", "-i", half, "-F", "ip,sym,ibs", NULL},
	    {(char *)pmusim(), "report", "-i", half, NULL},
	    {(char *)pmusim(), "report", "-i", half, "--method", "ibs", NULL},
	    {(char *)pmusim(), "validate", "-i", half, "--truth", truth, "--method", "ibs", NULL},
	};
	for (size_t k = 0; k < sizeof(cmds) / sizeof(cmds[0]); k++) {
		const char *out = tmp_path("half.out"), *err = tmp_path("half.err");
		char what[128];
		snprintf(what, sizeof(what), "%s of half a recording", cmds[k][1]);
		ck_assert_int_eq(run_cmd(cmds[k], NULL, out, err), 2);
		one_line_saying(err, "past the end of the file", what);
		struct stat sb;
		ck_assert_int_eq(stat(out, &sb), 0);
		ck_assert_msg(sb.st_size == 0, "%s: %lld bytes on stdout", what,
		              (long long)sb.st_size);
	}
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("ibs_perf");
	TCase *tc = tcase_create("perf");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, perf_decodes_every_op_as_pmusim_reads_it, 0, 2);
	tcase_add_loop_test(tc, perf_script_names_the_functions_as_pmusim_script, 0, 2);
	tcase_add_loop_test(tc, perf_report_lists_the_hot_functions, 0, 2);
	suite_add_tcase(s, tc);
	TCase *pr = tcase_create("profile");
	tcase_set_timeout(pr, 120);
	tcase_add_loop_test(pr, report_and_validate_method_ibs, 0,
	                    (int)(sizeof(prof_cases) / sizeof(prof_cases[0])));
	suite_add_tcase(s, pr);
	TCase *bad = tcase_create("bad_input");
	tcase_set_timeout(bad, 60);
	tcase_add_loop_test(bad, bad_options_are_refused, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	tcase_add_test(bad, a_truncated_recording_is_corrupt);
	suite_add_tcase(s, bad);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(suite());
}
