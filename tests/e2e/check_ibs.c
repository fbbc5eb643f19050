/* End-to-end proof of pmusim's op sampling (`record -e ibs_op//`, AMD IBS op style)
 * against references that share nothing with it: valgrind lackey (every dynamic
 * instruction's ip, next ip, length and data accesses, tests/e2e/lackey_ref.h), objdump
 * (what kind of branch an instruction is, its direct target, lengths:
 * tests/e2e/code_ref.h), the exact truth (`pmusim run --truth-json`: executions and
 * cycles per block) and an LBR recording of the same run. The samples
 * are read with profiler/perfdata.h and ibs_op_decode (tested against hand-derived
 * registers in check_ibs_op and against perf in check_ibs_file).
 *   1. op mode, --ibs-fixed, P = 256, on workloads/ibs_ops (REP-free): sample i is
 *      lackey's instruction i * P, for the first 10,000 samples (--max-insns 10,000 P
 *      stops the run with exactly 10,000 samples, one less stops it with 9,999); for a
 *      handful of K = i * P the K-th instruction's address from the machine itself
 *      (the truth's per-instruction retirements after --max-insns K less those after
 *      K - 1; sample 1 of `-e instructions -c K --skid 0`) equals sample i's ip.
 *   2. random low bits (no --ibs-fixed): every interval (the PERIOD field) in
 *      [P - 127, P]; chi-square of the 128 values uniform over >= 100,000 intervals of
 *      each of 3 --pmu-seed values below 181.99; the intervals are the real distances
 *      (sample k is lackey's instruction sum of the first k periods, for every sample
 *      of the first 2,560,000 instructions); the same seed writes the same bytes.
 *   3. every field of every sample of 1. and of the random samples of 2. against lackey
 *      and objdump (rules in compare()), 0 mismatches; memory-indirect jumps and calls
 *      sampled have valid data addresses, all of them; mispredicted: against the
 *      mispredict flag of the same dynamic branch in an LBR recording of the same run
 *      (the model's predictor both: a consistency check, not an external reference).
 *   4. op mode, random bits, >= 100,000 samples: block counts x period against the
 *      truth's exact counts, instruction-weighted overlap >= 99 % (defined at
 *      overlap_of()), on ibs_ops and cpi_sort.
 *   5. cycle mode (ibs_op// without cnt_ctl): per-block sample shares against the
 *      truth's per-block cycle shares, within 4 binomial sigma for every block with
 *      >= 1 % of the cycles, on six programs, several periods and seeds (10 runs,
 *      125 such blocks); no sample on an instruction that never took a cycle.
 * perf's own decoder, report/validate --method ibs and bad input: check_ibs_file and
 * check_ibs_perf. */
/* Environment: PMUSIM, WORKLOADS as for check_e2e; valgrind, objdump and nm. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"
#include "tests/e2e/code_ref.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/ibs_read.h"
#include "tests/e2e/lackey_ref.h"
#include "tests/unit/run_suite.h"

/* ibs_ops' N for every run of it: 308 + 12 * 6 + 86 * 250000 = 21,500,380
 * instructions (workloads/ibs_ops.S FACTS), over 100,000 random intervals of P. */
#define OPS_N "250000"
#define P 256u
#define NFIXED 10000u
#define FIXED_INSNS "2560000" /* NFIXED * P */
#define MAX_LBR 64u

/* ---- running pmusim ---- */

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* Runs pmusim with the NULL-terminated arguments, its stdout (the program's) to out
 * and stderr to err (NULL: discarded); the exit status. */
static int pmusim_v(const char *out, const char *err, va_list ap)
{
	char *argv[64];
	int n = 0;
	argv[n++] = (char *)pmusim();
	for (char *a; (a = va_arg(ap, char *)) != NULL;) {
		ck_assert_int_lt(n, 63);
		argv[n++] = a;
	}
	argv[n] = NULL;
	return run_cmd(argv, NULL, out, err);
}

static int pmusim_run(const char *out, const char *err, ...)
{
	va_list ap;
	va_start(ap, err);
	int st = pmusim_v(out, err, ap);
	va_end(ap);
	return st;
}

/* The recording `name` in the test's directory, made with `pmusim record -o FILE ARGS`
 * unless an earlier test of this process made it (the same arguments write the same
 * bytes: part 2 shows it); its program's stdout in name.out. want: the exit status
 * (0, or 124 with --max-insns). */
static const char *recording(const char *name, int want, ...)
{
	static char path[8][512];
	static int slot;
	char *p = path[slot++ % 8];
	snprintf(p, sizeof(path[0]), "%s", tmp_path(name));
	if (access(p, R_OK) == 0)
		return p;
	char out[600], err[600], part[600];
	snprintf(out, sizeof(out), "%s.out", p);
	snprintf(err, sizeof(err), "%s.err", p);
	/* one name for every recording: the file holds its command line */
	snprintf(part, sizeof(part), "%s", tmp_path("recording.part"));
	char *argv[64] = {(char *)pmusim(), "record", "-o", part};
	int n = 4;
	va_list ap;
	va_start(ap, want);
	for (char *a; (a = va_arg(ap, char *)) != NULL;) {
		ck_assert_int_lt(n, 63);
		argv[n++] = a;
	}
	va_end(ap);
	argv[n] = NULL;
	double t0 = now();
	int st = run_cmd(argv, NULL, out, err);
	char *e = slurp(err, NULL);
	ck_assert_msg(st == want, "pmusim record -o %s: status %d, want %d: %s", name, st, want,
	              e ? e : "");
	free(e);
	ck_assert_int_eq(rename(part, p), 0);
	printf("check_ibs: recorded %s in %.1f s\n", name, now() - t0);
	return p;
}

/* The 16 hex digits of line 1 of ibs_ops' output: its initial RSP. */
static uint64_t initial_rsp(const char *out_path)
{
	char *text = slurp(out_path, NULL);
	ck_assert_msg(text && strlen(text) >= 17 && text[16] == '\n', "%s: no initial RSP line",
	              out_path);
	char *end;
	uint64_t v = strtoull(text, &end, 16);
	ck_assert_msg(end == text + 16, "%s: line 1 is not 16 hex digits", out_path);
	free(text);
	return v;
}

/* ---- reading recordings ---- */


struct lbr {
	uint64_t ip, nbr;
	struct perf_branch br[MAX_LBR];
};

/* Every sample of a recording with a branch stack. */
static struct lbr *read_lbr(const char *path, size_t *n)
{
	struct perfdata *pd;
	char msg[256];
	ck_assert_msg(perfdata_open(path, &pd, msg, sizeof(msg)) == 0, "%s: %s", path, msg);
	size_t cap = 1 << 14;
	struct lbr *v = malloc(cap * sizeof(*v));
	ck_assert_ptr_nonnull(v);
	*n = 0;
	struct perf_record r;
	int rc;
	while ((rc = perfdata_next(pd, &r, msg, sizeof(msg))) == 1) {
		if (r.type != PERF_RECORD_SAMPLE)
			continue;
		if (*n == cap)
			ck_assert_ptr_nonnull(v = realloc(v, (cap *= 2) * sizeof(*v)));
		const struct perf_sample *s = &r.u.sample;
		ck_assert_uint_le(s->nbr, MAX_LBR);
		struct lbr *l = &v[(*n)++];
		l->ip = s->ip, l->nbr = s->nbr;
		memcpy(l->br, s->br, s->nbr * sizeof(*s->br));
	}
	ck_assert_msg(rc == 0, "%s: %s", path, msg);
	perfdata_close(pd);
	return v;
}

/* ---- lackey: the wanted dynamic instructions ---- */

struct pick {
	const uint64_t *want; /* ascending */
	size_t nwant, k;
	struct lackey_insn *out;
	uint64_t *taken_at; /* taken transfers among instructions 1..want[k] */
	uint64_t *taken_mult; /* the same at instruction j * P, j = 1..nmult */
	size_t nmult;
	uint64_t taken, last; /* the last instruction needed */
};

static int pick_visit(const struct lackey_insn *i, void *ctx)
{
	struct pick *p = ctx;
	p->taken += i->next_ip != i->ip + i->size;
	while (p->k < p->nwant && p->want[p->k] == i->n) {
		p->out[p->k] = *i;
		p->taken_at[p->k++] = p->taken;
	}
	if (i->n % P == 0 && i->n / P <= p->nmult)
		p->taken_mult[i->n / P - 1] = p->taken;
	return i->n >= p->last; /* stops valgrind */
}

/* Lackey's records of instructions want[0..n) of ibs_ops OPS_N, the taken-branch
 * counts up to each and up to every multiple of P to nmult P; its initial RSP. */
static void lackey_records(const uint64_t *want, size_t n, size_t nmult, struct pick *p,
                           uint64_t *rsp0)
{
	const char *argv[] = {wl("ibs_ops"), OPS_N, NULL};
	memset(p, 0, sizeof(*p));
	p->want = want, p->nwant = n, p->nmult = nmult;
	p->out = malloc(n * sizeof(*p->out));
	p->taken_at = malloc(n * sizeof(*p->taken_at));
	p->taken_mult = calloc(nmult + 1, sizeof(*p->taken_mult));
	ck_assert(p->out && p->taken_at && p->taken_mult);
	p->last = n ? want[n - 1] : 0;
	if (nmult * P > p->last)
		p->last = nmult * P;
	const char *out = tmp_path("lackey.out");
	struct lackey_end end;
	char msg[256];
	double t0 = now();
	ck_assert_msg(lackey_walk(argv, out, pick_visit, p, &end, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_msg(end.stopped && p->k == n, "lackey ran %" PRIu64 " instructions, %zu of %zu found",
	              end.total, p->k, n);
	*rsp0 = initial_rsp(out);
	printf("check_ibs: lackey: %" PRIu64 " instructions in %.1f s\n", end.total, now() - t0);
}

static void pick_free(struct pick *p)
{
	free(p->out), free(p->taken_at), free(p->taken_mult);
}

/* ---- comparing a sample with lackey's record ---- */

struct refs {
	struct code code;        /* ibs_ops as objdump lists it */
	uint64_t rsp0_sim, rsp0_lk;
	const struct lbr *lbr;   /* the LBR recording: sample j at instruction (j + 1) * P */
	size_t nlbr;
	const uint64_t *taken_mult;
};

struct tally {
	uint64_t samples, mismatches;
	uint64_t branches, taken, not_taken, rets, mem_indirect, mem_indirect_valid;
	uint64_t loads, stores, two_accesses, stack, mispredicted, lbr_checked;
};

static void expect(struct tally *t, const struct op *o, uint64_t n, const char *what,
                   uint64_t got, uint64_t want)
{
	if (got != want && t->mismatches++ < 20)
		fprintf(stderr,
		        "check_ibs: instruction %" PRIu64 " (ip %#" PRIx64 "): %s is %#" PRIx64
		        ", the reference says %#" PRIx64 "\n",
		        n, o->ip, what, got, want);
}

/* In compare(): t, o and l in scope. */
#define EXPECT(what, got, want) expect(t, o, l->n, what, (uint64_t)(got), (uint64_t)(want))

/* A stack address as an offset from its run's initial RSP (the two runs place their
 * stacks differently); any other address as it is (ibs_ops is static, not PIE). */
static uint64_t place(uint64_t a, uint64_t rsp0)
{
	return a <= rsp0 + 4096 && a + (1u << 20) >= rsp0 ? a - rsp0 : a;
}

/* The mispredict flag of the dynamic branch l (taken; taken_at: taken transfers up to
 * it) against the LBR recording: its entry in the first LBR sample at or after it.
 * That sample, at instruction m = j P, holds the taken branches up to m, newest first,
 * so l is entry T(m) - T(l). */
static void check_mispredict(const struct refs *r, const struct op *o, const struct lackey_insn *l,
                             uint64_t taken_at, struct tally *t)
{
	uint64_t j = (l->n + P - 1) / P; /* 1-based */
	if (j > r->nlbr)
		return;
	const struct lbr *s = &r->lbr[j - 1];
	uint64_t k = r->taken_mult[j - 1] - taken_at;
	if (k >= s->nbr) {
		expect(t, o, l->n, "LBR entry index (past the stack)", k, s->nbr);
		return;
	}
	EXPECT("the LBR entry's from", s->br[k].from, l->ip);
	EXPECT("the LBR entry's to", s->br[k].to, l->next_ip);
	EXPECT("mispredicted (the LBR entry's flag)", o->f.mispredicted, s->br[k].mispred);
	t->lbr_checked++;
}

/* One sample against lackey's record of its instruction and objdump's listing:
 *   ip        the sample's IP and IbsOpRip equal lackey's ip; objdump's length its size.
 *   branch    IbsOpBrnRet iff objdump's mnemonic is a near branch (j*, loop*, call,
 *             ret); taken iff next_ip != ip + size; target next_ip when taken, else
 *             (a conditional branch not taken) objdump's target; return iff ret.
 *   load      iff lackey printed an L or M line for it; store iff an S or M line.
 *   width     the size of its first access; 0 without accesses.
 *   address   valid iff it has an access; then the first access's address (stack
 *             addresses as offsets from each run's initial RSP), also in the sample's
 *             ADDR field. The one instruction of ibs_ops with two accesses is call
 *             [mem]: the slot's load, then the return address's store; the address is
 *             the load's, its operand's (checked: two accesses only there).
 *   microcode 0 (ibs_ops is REP-free).
 *   mispred   the LBR's flag for the same dynamic branch, when taken. */
static void compare(const struct refs *r, const struct op *o, const struct lackey_insn *l,
                    uint64_t taken_at, struct tally *t)
{
	t->samples++;
	EXPECT("ip", o->ip, l->ip);
	EXPECT("IbsOpRip", o->f.ip, o->ip);
	const struct code_insn *ci = code_at(&r->code, l->ip);
	EXPECT("objdump has the instruction", ci != NULL, 1);
	if (!ci)
		return;
	EXPECT("length (objdump's)", ci->len, l->size);
	int taken = l->next_ip != l->ip + l->size;
	EXPECT("branch", o->f.branch, ci->branch != CODE_NO_BRANCH);
	if (ci->branch) {
		t->branches++;
		taken ? t->taken++ : t->not_taken++;
		t->rets += ci->branch == CODE_RET;
		t->mispredicted += o->f.mispredicted;
		EXPECT("taken", o->f.taken, taken);
		EXPECT("return", o->f.ret, ci->branch == CODE_RET);
		EXPECT("target", o->f.br_target,
		       taken ? l->next_ip : ci->branch == CODE_COND ? ci->target : 0);
		if (taken)
			check_mispredict(r, o, l, taken_at, t);
		if ((ci->branch == CODE_JMP || ci->branch == CODE_CALL) && ci->mem_operand) {
			t->mem_indirect++;
			t->mem_indirect_valid += o->f.addr_valid;
		}
	} else {
		EXPECT("taken (not a branch)", o->f.taken, 0);
		EXPECT("mispredicted (not a branch)", o->f.mispredicted, 0);
		EXPECT("return (not a branch)", o->f.ret, 0);
		EXPECT("target (not a branch)", o->f.br_target, 0);
		EXPECT("taken transfer of a non-branch", taken, 0);
	}
	EXPECT("microcoded", o->f.microcoded, 0);
	int load = 0, store = 0;
	for (uint32_t k = 0; k < l->naccesses && k < LACKEY_MAX_ACCESSES; k++) {
		load |= l->access[k].type == 'L' || l->access[k].type == 'M';
		store |= l->access[k].type == 'S' || l->access[k].type == 'M';
	}
	EXPECT("load", o->f.load, load);
	EXPECT("store", o->f.store, store);
	t->loads += load, t->stores += store;
	if (l->naccesses > 1) {
		t->two_accesses++;
		EXPECT("two accesses outside call [mem]",
		       l->naccesses == 2 && ci->branch == CODE_CALL && ci->mem_operand, 1);
	}
	EXPECT("address valid", o->f.addr_valid, l->naccesses > 0);
	if (!l->naccesses) {
		EXPECT("width", o->f.width, 0);
		EXPECT("data address", o->f.data_addr, 0);
		EXPECT("ADDR", o->addr, 0);
		return;
	}
	const struct lackey_access *a = &l->access[0];
	EXPECT("width", o->f.width, a->size);
	uint64_t want = place(a->addr, r->rsp0_lk);
	t->stack += want != a->addr;
	EXPECT("data address", place(o->f.data_addr, r->rsp0_sim), want);
	EXPECT("ADDR", o->addr, o->f.data_addr);
}

static void print_tally(const char *what, const struct tally *t)
{
	printf("check_ibs: %s: %" PRIu64 " samples against lackey, %" PRIu64
	       " mismatches; %" PRIu64 " branches (%" PRIu64 " taken, %" PRIu64
	       " not, %" PRIu64 " returns, %" PRIu64 " mispredicted: %" PRIu64
	       " taken ones equal to the LBR's flag), %" PRIu64 " loads, %" PRIu64
	       " stores (%" PRIu64 " of the stack, %" PRIu64
	       " with two accesses); memory-indirect jumps and calls: %" PRIu64 " of %" PRIu64
	       " with a valid address\n",
	       what, t->samples, t->mismatches, t->branches, t->taken, t->not_taken, t->rets,
	       t->mispredicted, t->lbr_checked, t->loads, t->stores, t->stack, t->two_accesses,
	       t->mem_indirect_valid, t->mem_indirect);
}

/* The references for ibs_ops: objdump, the LBR recording. */
static void refs_init(struct refs *r, const struct lbr **lbr_keep)
{
	memset(r, 0, sizeof(*r));
	char msg[256];
	ck_assert_msg(code_read(wl("ibs_ops"), &r->code, msg, sizeof(msg)) == 0, "%s", msg);
	/* the instructions counter at the same period, no skid: sample j at j P */
	const char *lbr = recording("lbr.data", 124, "-e", "instructions", "-c", "256", "--skid", "0",
	                            "-b", "--lbr-depth", "64", "--max-insns", FIXED_INSNS, "--",
	                            wl("ibs_ops"), OPS_N, NULL);
	struct lbr *v = read_lbr(lbr, &r->nlbr);
	ck_assert_uint_eq(r->nlbr, NFIXED);
	r->lbr = v;
	*lbr_keep = v;
}

/* ---- 1 and 3: fixed intervals ---- */

START_TEST(fixed_samples_are_every_pth_instruction)
{
	const char *data = recording("fixed.data", 124, "-e", "ibs_op/cnt_ctl=1/", "-c", "256",
	                             "--ibs-fixed", "--max-insns", FIXED_INSNS, "--",
	                             wl("ibs_ops"), OPS_N, NULL);
	size_t n;
	struct op *ops = ibs_read_ops(data, 1, &n);
	/* the machine stopped after exactly 10,000 P instructions, the last one tagged */
	ck_assert_uint_eq(n, NFIXED);
	struct refs r;
	const struct lbr *lbr;
	refs_init(&r, &lbr);
	r.rsp0_sim = initial_rsp(tmp_path("fixed.data.out"));
	uint64_t *want = malloc(n * sizeof(*want));
	ck_assert_ptr_nonnull(want);
	for (size_t i = 0; i < n; i++)
		want[i] = (i + 1) * P;
	struct pick p;
	lackey_records(want, n, r.nlbr, &p, &r.rsp0_lk);
	r.taken_mult = p.taken_mult;
	struct tally t = {0};
	for (size_t i = 0; i < n; i++) {
		const struct op *o = &ops[i];
		expect(&t, o, p.out[i].n, "period", o->period, P);
		expect(&t, o, p.out[i].n, "MaxCnt", o->f.max_cnt, P);
		expect(&t, o, p.out[i].n, "CntCtl", o->f.cnt_ctl, 1);
		compare(&r, o, &p.out[i], p.taken_at[i], &t);
	}
	print_tally("--ibs-fixed -c 256, samples 1..10000 = instructions 256 i", &t);
	ck_assert_uint_eq(t.mismatches, 0);
	ck_assert_uint_eq(t.samples, NFIXED);
	/* the samples reach every kind of op */
	ck_assert(t.taken && t.not_taken && t.rets && t.loads && t.stores && t.stack &&
	          t.lbr_checked);
	free(ops), free(want), free((void *)lbr);
	pick_free(&p);
	code_free(&r.code);
}
END_TEST

/* ---- 1: the K-th instruction from the machine itself ---- */

/* The address of the one instruction whose retirements ("insns") differ between two
 * truths of --truth-insns (after --max-insns K and K - 1): the K-th. */
static uint64_t kth_from_truths(const char *a, const char *b)
{
	struct code ca, cb;
	char msg[256];
	ck_assert_msg(code_read(wl("ibs_ops"), &ca, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_msg(code_read(wl("ibs_ops"), &cb, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_msg(code_blocks(&ca, a, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_msg(code_blocks(&cb, b, msg, sizeof(msg)) == 0, "%s", msg);
	uint64_t addr = 0, ra = 0, rb = 0;
	int diffs = 0;
	for (size_t i = 0; i < ca.n; i++) {
		ra += ca.insn[i].retired, rb += cb.insn[i].retired;
		if (ca.insn[i].retired != cb.insn[i].retired) {
			ck_assert_uint_eq(ca.insn[i].retired, cb.insn[i].retired + 1);
			addr = ca.insn[i].addr;
			diffs++;
		}
	}
	ck_assert_int_eq((long long)ra, truth_instructions(a));
	ck_assert_uint_eq(ra, rb + 1);
	ck_assert_int_eq(diffs, 1);
	code_free(&ca), code_free(&cb);
	return addr;
}

START_TEST(the_machine_counts_alike)
{
	static const uint64_t is[] = {1, 2, 37, 4321, NFIXED};
	const char *data = recording("fixed.data", 124, "-e", "ibs_op/cnt_ctl=1/", "-c", "256",
	                             "--ibs-fixed", "--max-insns", FIXED_INSNS, "--",
	                             wl("ibs_ops"), OPS_N, NULL);
	size_t n;
	struct op *ops = ibs_read_ops(data, 1, &n);
	ck_assert_uint_eq(n, NFIXED);
	for (size_t k = 0; k < sizeof(is) / sizeof(is[0]); k++) {
		uint64_t K = is[k] * P;
		char kk[32], k1[32];
		snprintf(kk, sizeof(kk), "%" PRIu64, K);
		snprintf(k1, sizeof(k1), "%" PRIu64, K - 1);
		const char *ta = tmp_path("k.json"), *tb = tmp_path("k1.json");
		ck_assert_int_eq(pmusim_run(NULL, NULL, "run", "--max-insns", kk, "--truth-json", ta,
		                            "--truth-insns", "--", wl("ibs_ops"), OPS_N, NULL),
		                 124);
		ck_assert_int_eq(pmusim_run(NULL, NULL, "run", "--max-insns", k1, "--truth-json", tb,
		                            "--truth-insns", "--", wl("ibs_ops"), OPS_N, NULL),
		                 124);
		ck_assert_int_eq(truth_instructions(ta), (long long)K);
		uint64_t from_truth = kth_from_truths(ta, tb);
		/* the instructions counter overflowing at K, interrupting at its instruction */
		const char *cd = tmp_path("ctr.data");
		ck_assert_int_eq(pmusim_run(NULL, NULL, "record", "-e", "instructions", "-c", kk,
		                            "--skid", "0", "--max-insns", kk, "-o", cd, "--",
		                            wl("ibs_ops"), OPS_N, NULL),
		                 124);
		struct perfdata *pd;
		char msg[256];
		ck_assert_msg(perfdata_open(cd, &pd, msg, sizeof(msg)) == 0, "%s", msg);
		struct perf_record r;
		uint64_t ctr_ip = 0;
		while (perfdata_next(pd, &r, msg, sizeof(msg)) == 1)
			if (r.type == PERF_RECORD_SAMPLE && !ctr_ip)
				ctr_ip = r.u.sample.ip;
		perfdata_close(pd);
		printf("check_ibs: instruction %" PRIu64 ": op sample %" PRIu64 " at %#" PRIx64
		       ", the truths' difference %#" PRIx64 ", the counter's sample %#" PRIx64 "\n",
		       K, is[k], ops[is[k] - 1].ip, from_truth, ctr_ip);
		ck_assert_uint_eq(ops[is[k] - 1].ip, from_truth);
		ck_assert_uint_eq(ctr_ip, from_truth);
	}
	/* one instruction less: one sample less */
	const char *less = recording("fixed-less.data", 124, "-e", "ibs_op/cnt_ctl=1/", "-c", "256",
	                             "--ibs-fixed", "--max-insns", "2559999", "--", wl("ibs_ops"),
	                             OPS_N, NULL);
	size_t m;
	free(ibs_read_ops(less, 1, &m));
	ck_assert_uint_eq(m, NFIXED - 1);
	free(ops);
}
END_TEST

/* ---- 2 and 3: random intervals ---- */

START_TEST(random_samples_are_at_their_periods)
{
	const char *data = recording("rand-a.data", 124, "-e", "ibs_op/cnt_ctl=1/", "-c", "256",
	                             "--pmu-seed", "11", "--max-insns", FIXED_INSNS, "--",
	                             wl("ibs_ops"), OPS_N, NULL);
	/* the same seed: the same bytes; another seed: others */
	const char *again = recording("rand-b.data", 124, "-e", "ibs_op/cnt_ctl=1/", "-c", "256",
	                              "--pmu-seed", "11", "--max-insns", FIXED_INSNS, "--",
	                              wl("ibs_ops"), OPS_N, NULL);
	const char *other = recording("rand-c.data", 124, "-e", "ibs_op/cnt_ctl=1/", "-c", "256",
	                              "--pmu-seed", "12", "--max-insns", FIXED_INSNS, "--",
	                              wl("ibs_ops"), OPS_N, NULL);
	size_t la, lb, lc;
	char *ba = slurp(data, &la), *bb = slurp(again, &lb), *bc = slurp(other, &lc);
	ck_assert(ba && bb && bc);
	ck_assert_msg(la == lb && memcmp(ba, bb, la) == 0, "the same --pmu-seed, other bytes");
	ck_assert_msg(la != lc || memcmp(ba, bc, la) != 0, "another --pmu-seed, the same bytes");
	free(ba), free(bb), free(bc);

	size_t n;
	struct op *ops = ibs_read_ops(data, 1, &n);
	struct refs r;
	const struct lbr *lbr;
	refs_init(&r, &lbr);
	r.rsp0_sim = initial_rsp(tmp_path("rand-a.data.out"));
	/* sample k is instruction period_1 + ... + period_k */
	uint64_t *want = malloc(n * sizeof(*want)), at = 0;
	ck_assert_ptr_nonnull(want);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(ops[i].period >= P - 127 && ops[i].period <= P, "sample %zu: period %" PRIu64,
		              i, ops[i].period);
		want[i] = at += ops[i].period;
	}
	ck_assert_uint_le(at, NFIXED * P);
	struct pick p;
	lackey_records(want, n, r.nlbr, &p, &r.rsp0_lk);
	r.taken_mult = p.taken_mult;
	struct tally t = {0};
	for (size_t i = 0; i < n; i++) {
		const struct op *o = &ops[i];
		expect(&t, o, p.out[i].n, "MaxCnt", o->f.max_cnt, P);
		expect(&t, o, p.out[i].n, "CntCtl", o->f.cnt_ctl, 1);
		compare(&r, o, &p.out[i], p.taken_at[i], &t);
	}
	print_tally("-c 256, random low bits, the sums of the periods", &t);
	ck_assert_uint_eq(t.mismatches, 0);
	ck_assert_uint_ge(t.samples, NFIXED);
	ck_assert(t.mem_indirect > 0);
	ck_assert_uint_eq(t.mem_indirect_valid, t.mem_indirect);
	free(ops), free(want), free((void *)lbr);
	pick_free(&p);
	code_free(&r.code);
}
END_TEST

/* The chi-square statistic's upper 0.001 point for 127 degrees of freedom: 181.993
 * (R's qchisq(0.999, 127); the regularized incomplete gamma function gives
 * Q(63.5, 181.99 / 2) = 0.0010005, so 181.99 is the 0.001 critical value to the
 * digits given). */
#define CHI2_127_P001 181.99

static const char *const seeds[] = {"1", "2", "3"};

/* ibs_ops' whole run in op mode with random low bits, seed s: over 100,000 samples. */
static const char *ops_seed_recording(int s)
{
	char name[32];
	snprintf(name, sizeof(name), "ops-seed%s.data", seeds[s]);
	return recording(name, 0, "-e", "ibs_op/cnt_ctl=1/", "-c", "256", "--pmu-seed", seeds[s], "--",
	                 wl("ibs_ops"), OPS_N, NULL);
}

START_TEST(random_intervals_are_uniform)
{
	size_t n;
	struct op *ops = ibs_read_ops(ops_seed_recording(_i), 1, &n);
	uint64_t bins[128] = {0}, bad = 0;
	for (size_t i = 0; i < n; i++) {
		if (ops[i].period < P - 127 || ops[i].period > P || ops[i].f.max_cnt != P)
			bad++;
		else
			bins[P - ops[i].period]++;
	}
	double e = (double)n / 128, chi2 = 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (int b = 0; b < 128; b++) {
		chi2 += ((double)bins[b] - e) * ((double)bins[b] - e) / e;
		lo = bins[b] < lo ? bins[b] : lo;
		hi = bins[b] > hi ? bins[b] : hi;
	}
	printf("check_ibs: --pmu-seed %s: %zu intervals, %" PRIu64
	       " outside [129, 256]; per value %" PRIu64 "..%" PRIu64
	       " (expected %.1f); chi-square %.2f (127 dof, 0.001 critical value %.2f)\n",
	       seeds[_i], n, bad, lo, hi, e, chi2, CHI2_127_P001);
	ck_assert_uint_ge(n, 100000);
	ck_assert_uint_eq(bad, 0);
	ck_assert_msg(chi2 < CHI2_127_P001, "chi-square %.2f", chi2);
	free(ops);
}
END_TEST

/* ---- 4: op counts against the exact block counts ---- */

struct workload {
	const char *name, *arg;
};
static const struct workload count_wls[] = {{"ibs_ops", OPS_N}, {"cpi_sort", "10"}};

/* Overlap of an estimate with the truth, instruction-weighted: with I the program's
 * instructions and n_B, c_B a basic block's instructions and exact executions, the
 * true share of each of B's instructions is c_B / I; the estimate's is its block's
 * samples s_B over S, all samples, spread evenly over its n_B instructions (the block
 * count estimate s_B x period / n_B, normalised). Overlap = sum over instructions of
 * min(estimated share, true share) = sum over blocks of min(s_B / S, n_B c_B / I):
 * 1 when the estimate is exact, 0 when it puts everything elsewhere. */
static double overlap_of(const struct code *c, const uint64_t *s, uint64_t S)
{
	double ov = 0;
	for (size_t b = 0; b < c->nblocks; b++) {
		double est = (double)s[b] / (double)S;
		double tru = (double)c->block[b].n * (double)c->block[b].count / (double)c->instructions;
		ov += est < tru ? est : tru;
	}
	return ov;
}

/* Per-instruction overlap (each instruction's own samples): a figure, no bound. */
static double insn_overlap(const struct code *c, const struct op *ops, size_t n)
{
	uint64_t *per = calloc(c->n, sizeof(*per));
	ck_assert_ptr_nonnull(per);
	for (size_t i = 0; i < n; i++)
		per[code_at(c, ops[i].ip) - c->insn]++;
	double ov = 0;
	for (size_t i = 0; i < c->n; i++) {
		double est = (double)per[i] / (double)n;
		double tru = (double)c->insn[i].count / (double)c->instructions;
		ov += est < tru ? est : tru;
	}
	free(per);
	return ov;
}

/* Samples per basic block; every sample's ip an executed instruction. */
static uint64_t *samples_per_block(const struct code *c, const struct op *ops, size_t n)
{
	uint64_t *s = calloc(c->nblocks, sizeof(*s)), stray = 0;
	ck_assert_ptr_nonnull(s);
	for (size_t i = 0; i < n; i++) {
		const struct code_insn *in = code_at(c, ops[i].ip);
		if (!in || in->block < 0) {
			if (stray++ < 5)
				fprintf(stderr, "check_ibs: a sample at %#" PRIx64 ", never executed\n",
				        ops[i].ip);
			continue;
		}
		s[in->block]++;
	}
	ck_assert_uint_eq(stray, 0);
	return s;
}

static void truth_of(const struct workload *w, const char *json, int insns, struct code *c)
{
	/* the program's stdout a file, as recording()'s: what it is decides
	 * stdio's buffering, and so the instructions of the program's last writes */
	const char *out = tmp_path("truth.out");
	int st = insns ? pmusim_run(out, NULL, "run", "--truth-json", json, "--truth-insns", "--",
	                            wl(w->name), w->arg, NULL)
	               : pmusim_run(out, NULL, "run", "--truth-json", json, "--", wl(w->name), w->arg,
	                            NULL);
	ck_assert_int_eq(st, 0);
	char msg[256];
	ck_assert_msg(code_read(wl(w->name), c, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_msg(code_blocks(c, json, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(truth_instructions(json), (long long)c->instructions);
}

START_TEST(op_counts_overlap_exact_blocks)
{
	const struct workload *w = &count_wls[_i];
	const char *data = _i == 0 ? ops_seed_recording(0)
	                           : recording("ops-cpi_sort.data", 0, "-e", "ibs_op/cnt_ctl=1/", "-c",
	                                       "256", "--pmu-seed", "1", "--", wl(w->name), w->arg,
	                                       NULL);
	size_t n;
	struct op *ops = ibs_read_ops(data, 1, &n);
	struct code c;
	truth_of(w, tmp_path("count.json"), 0, &c);
	uint64_t *s = samples_per_block(&c, ops, n), periods = 0;
	for (size_t i = 0; i < n; i++)
		periods += ops[i].period;
	double ov = overlap_of(&c, s, n), iov = insn_overlap(&c, ops, n);
	printf("check_ibs: %s: %zu op samples, %zu basic blocks, %" PRIu64
	       " instructions (the periods add up to %" PRIu64
	       "): block counts overlap %.4f %%, per instruction %.4f %%\n",
	       w->name, n, c.nblocks, c.instructions, periods, 100 * ov, 100 * iov);
	ck_assert_uint_ge(n, 100000);
	ck_assert_msg(ov >= 0.99, "%s: overlap %.4f", w->name, ov);
	free(ops), free(s);
	code_free(&c);
}
END_TEST

/* ---- 5: cycle mode against the exact cycles ---- */

/* Programs (about 18 to 26 million cycles each), periods and seeds: the
 * loops of ibs_ops, a sort, an interpreter's dispatch, a tree walk, pointer
 * chasing and a switch, each with its own mix of long and short instructions. */
static const struct cycle_run {
	struct workload w;
	const char *period, *seed;
} cycle_runs[] = {
    {{"ibs_ops", OPS_N}, "512", "1"},       {{"ibs_ops", OPS_N}, "512", "2"},
    {{"ibs_ops", OPS_N}, "272", "3"},       {{"cpi_sort", "10"}, "256", "1"},
    {{"cpi_sort", "10"}, "256", "2"},       {{"cpi_interp", "40000"}, "256", "1"},
    {{"cpi_interp", "40000"}, "4096", "2"}, {{"cpi_tree", "12"}, "256", "1"},
    {{"cpi_chase", "24"}, "256", "1"},      {{"switch", "800000"}, "256", "1"},
};

START_TEST(cycle_samples_follow_block_cycles)
{
	const struct cycle_run *r = &cycle_runs[e2e_row(_i)];
	const struct workload *w = &r->w;
	char name[64];
	snprintf(name, sizeof(name), "cyc-%s-%s.data", w->name, r->seed);
	const char *data = recording(name, 0, "-e", "ibs_op//", "-c", r->period, "--pmu-seed",
	                             r->seed, "--", wl(w->name), w->arg, NULL);
	uint64_t period = strtoull(r->period, NULL, 10);
	size_t n;
	struct op *ops = ibs_read_ops(data, 0, &n);
	struct code c;
	truth_of(w, tmp_path("cycles.json"), 1, &c);
	ck_assert(c.have_cycles);
	for (size_t i = 0; i < c.n; i++) /* a whole run: the truth's sections agree */
		ck_assert_uint_eq(c.insn[i].retired, c.insn[i].count);
	uint64_t bad = 0, idle = 0;
	for (size_t i = 0; i < n; i++) {
		bad += ops[i].period < period - 127 || ops[i].period > period ||
		       ops[i].f.max_cnt != period || ops[i].f.cnt_ctl;
		const struct code_insn *in = code_at(&c, ops[i].ip);
		if (in && !in->cycles) { /* an instruction that took no cycle cannot be tagged */
			idle++;
			fprintf(stderr, "check_ibs: %s: sample %zu at %#" PRIx64 ", which took no cycle (retired %" PRIu64 ")\n",
			        w->name, i, ops[i].ip, in->retired);
		}
	}
	uint64_t *s = samples_per_block(&c, ops, n);
	double zmax = 0;
	size_t big = 0, worst = 0;
	for (size_t b = 0; b < c.nblocks; b++) {
		double share = (double)c.block[b].cycles / (double)c.cycles;
		if (share < 0.01)
			continue;
		big++;
		double got = (double)s[b] / (double)n, sigma = sqrt(share * (1 - share) / (double)n);
		double z = fabs(got - share) / sigma;
		if (z > zmax)
			zmax = z, worst = b;
		if (z > 4)
			fprintf(stderr,
			        "check_ibs: %s: block at %#" PRIx64 ": %.4f %% of the samples, %.4f %% of "
			        "the cycles: %.2f sigma\n",
			        w->name, c.insn[c.block[b].first].addr, 100 * got, 100 * share, z);
	}
	printf("check_ibs: %s seed %s: %zu cycle-mode samples (-c %s), %" PRIu64
	       " cycles; %zu blocks with >= 1 %% of them, the largest difference %.2f sigma (block at "
	       "%#" PRIx64 "); %" PRIu64 " samples on instructions without cycles\n",
	       w->name, r->seed, n, r->period, c.cycles, big, zmax, c.insn[c.block[worst].first].addr,
	       idle);
	ck_assert_uint_eq(bad, 0);
	ck_assert_uint_eq(idle, 0);
	ck_assert_uint_ge(big, 4);
	ck_assert_msg(zmax <= 4, "%s: a block %.2f sigma off", w->name, zmax);
	free(ops), free(s);
	code_free(&c);
}
END_TEST

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0); /* a failing test's figures are printed too */
	e2e_init();
	Suite *s = suite_create("ibs");
	TCase *lk = tcase_create("lackey");
	tcase_set_timeout(lk, 600);
	tcase_add_test(lk, fixed_samples_are_every_pth_instruction);
	tcase_add_test(lk, the_machine_counts_alike);
	tcase_add_test(lk, random_samples_are_at_their_periods);
	suite_add_tcase(s, lk);
	TCase *st = tcase_create("statistics");
	tcase_set_timeout(st, 900);
	/* ASan: one seed, one program, every 4th cycle run, the code paths; the figures
	 * are the release run's */
	tcase_add_loop_test(st, random_intervals_are_uniform, 0, e2e_sanitized() ? 1 : 3);
	tcase_add_loop_test(st, op_counts_overlap_exact_blocks, 0, e2e_sanitized() ? 1 : 2);
	suite_add_tcase(s, st);
	TCase *cy = tcase_create("cycle_mode");
	tcase_set_timeout(cy, 900);
	tcase_add_loop_test(cy, cycle_samples_follow_block_cycles, 0,
	                    e2e_rows((int)(sizeof(cycle_runs) / sizeof(cycle_runs[0]))));
	suite_add_tcase(s, cy);
	return run_suite(s);
}
