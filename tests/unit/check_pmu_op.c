/* The op sampler (pmu.h, "Instruction-based op sampling") in op mode, fed
 * hand-made block streams (tests/unit/op_fixture.h): which instruction each
 * sample tags, counted by the test itself over the stream; the random low
 * bits of the interval (range and a chi-square over 128 values); the branch
 * facts of a tagged terminator against the predictor's documented behaviour
 * and pmu_mispredicts; the memory callback; pmu_op_next_min against the tags
 * that follow; refused configurations. The cycle mode, windows and a REP left
 * in the middle are in check_pmu_op_cycles.c. */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "pmu_model/pmu.h"
#include "profiler/stat_dist.h"
#include "tests/unit/op_fixture.h"
#include "tests/unit/run_suite.h"

/* Every sample's memory facts are what op_memory made for its instruction,
 * asked once, just before the sample (opf_mem_calls counts the calls). */
static void check_memory_facts(int mem)
{
	for (size_t i = 0; i < opf_ngot; i++) {
		const struct pmu_op_sample *s = &opf_got[i].s;
		struct pmu_op_mem want = mem ? opf_mem_of(s->insn) : (struct pmu_op_mem){0};
		if (!want.addr_valid)
			want.addr = 0;
		OPF_CHECK(s->mem.load == want.load && s->mem.store == want.store &&
		              s->mem.width == want.width && s->mem.addr_valid == want.addr_valid &&
		              s->mem.addr == want.addr,
		          "sample %zu (insn %llu): memory facts %u %u %u %u %#llx", i,
		          (unsigned long long)s->insn, s->mem.load, s->mem.store, s->mem.width,
		          s->mem.addr_valid, (unsigned long long)s->mem.addr);
	}
	ck_assert_uint_eq(opf_mem_calls, mem ? opf_ngot : 0);
}

static const struct position_row {
	int line;
	uint64_t period;
	int others; /* a cycles counter (skid 3 instructions) and an instructions counter (delta)
	               beside it */
	int attr;   /* per-instruction attribution: every block replayed */
	int mem;    /* an op_memory callback */
} position_rows[] = {
    {__LINE__, 16, 0, 0, 0},   {__LINE__, 48, 0, 0, 1},   {__LINE__, 1008, 0, 0, 0},
    {__LINE__, 16, 1, 0, 1},   {__LINE__, 1008, 1, 0, 0}, {__LINE__, 48, 0, 1, 0},
    {__LINE__, 4096, 1, 1, 1},
};

/* Op mode without randomness: sample i is instruction number i * P of the
 * stream, at its address and thread, floor(total / P) samples; another
 * sampling counter (with skid, delta; refill 0) moves none of them. */
START_TEST(op_mode_tags_every_pth_instruction)
{
	const struct position_row *row = &position_rows[_i];
	struct opf_opts o = {.seed = 11, .nsteps = 60000, .reps = 1, .rep_left = 1, .cut = 1};
	opf_stream(&o);
	struct pmu_config cfg = {.op = {.period = row->period, .count_ops = 1, .no_random = 1},
	                         .seed = 3,
	                         .cpu = opf_cpu()};
	if (row->others) {
		cfg.nctr = 2;
		cfg.ctr[0] = (struct pmu_counter_config){EV_CYCLES, 997, 0};
		cfg.ctr[1] = (struct pmu_counter_config){EV_INSTRUCTIONS, 501, 0};
		cfg.skid = 3;
		cfg.delta = 50;
		cfg.lbr_depth = 16;
		cfg.lbr_filter = LBR_F_ANY;
	}
	char msg[200] = "";
	struct pmu *p = opf_pmu(&cfg, row->mem, msg, sizeof(msg));
	ck_assert_msg(p != NULL, "row at line %d: %s", row->line, msg);
	if (row->attr) {
		ck_assert_int_eq(pmu_attribute_runs(p), 0);
		ck_assert_int_eq(pmu_attribute_insns(p), 0);
	}
	opf_mem_on = row->mem;
	opf_feed(p);
	opf_mem_on = 0;
	ck_assert_uint_eq(pmu_instructions(p), opf_ninsns);
	ck_assert_msg(opf_ngot == opf_ninsns / row->period,
	              "row at line %d: %zu samples, want %llu", row->line, opf_ngot,
	              (unsigned long long)(opf_ninsns / row->period));
	ck_assert_uint_eq(pmu_op_samples(p), opf_ngot);
	unsigned tids = 0;
	for (size_t i = 0; i < opf_ngot; i++) {
		const struct opf_got *g = &opf_got[i];
		uint64_t k = (i + 1) * row->period;
		OPF_CHECK(g->insn == k && g->s.insn == k && g->s.ip == opf_addr[k - 1] &&
		              g->s.tid == opf_tid[k - 1],
		          "row at line %d, sample %zu: insn %llu (the PMU says %llu) at %#llx, "
		          "want %llu at %#llx",
		          row->line, i, (unsigned long long)g->insn, (unsigned long long)g->s.insn,
		          (unsigned long long)g->s.ip, (unsigned long long)k,
		          (unsigned long long)opf_addr[k - 1]);
		/* the test's model has no penalties: its clock is the PMU's (refill 0);
		 * in op mode tag_to_ret is the instruction's own cycles */
		OPF_CHECK(g->s.interval == row->period && g->s.cycle == opf_cycle(k) &&
		              g->s.tag_to_ret == opf_whole(k),
		          "row at line %d, sample %zu: interval %llu cycle %llu tag_to_ret %llu, "
		          "want %llu %llu %llu",
		          row->line, i, (unsigned long long)g->s.interval,
		          (unsigned long long)g->s.cycle, (unsigned long long)g->s.tag_to_ret,
		          (unsigned long long)row->period, (unsigned long long)opf_cycle(k),
		          (unsigned long long)opf_whole(k));
		tids |= 1u << (g->s.tid - 100);
	}
	ck_assert_uint_eq(tids, 7); /* samples of all three threads */
	if (row->others)
		ck_assert_uint_gt(opf_pmis, 1000);
	check_memory_facts(row->mem);
	size_t excused;
	opf_check_next_min(1, 0, &excused,
	                   "op mode, no randomness"); /* before every block, the next tag exactly */
	pmu_free(p);
	opf_free();
}
END_TEST

/* A loop of one 16-instruction run, handed over whole: the test numbers the
 * instructions itself (blocks fed so far). */
static const uint16_t loop_off[17] = {0,  3,  4,  9,  11, 12, 15, 19, 20,
                                      22, 27, 28, 30, 33, 35, 38, 40};
static const uint8_t loop_cls[16] = {IC_ALU, IC_LOAD, IC_ALU,  IC_STORE, IC_ALU,  IC_MUL,
                                     IC_ALU, IC_ALU,  IC_SIMD, IC_ALU,   IC_LOAD, IC_ALU,
                                     IC_NOP, IC_ALU,  IC_ALU,  IC_BRANCH};
static const struct block_info loop_bi = {
    0x500000, 0x500028, 0x500026, 0x500000, 0, 16, BK_COND, CC_NE, 0, 2, loop_off, loop_cls};
static uint64_t loop_blocks;          /* blocks fed before the one being fed */
static uint64_t *loop_tag, loop_ntag; /* the test's numbers of the tagged instructions */
static uint64_t *loop_iv;             /* the intervals the samples report */

static void on_loop_op(void *ctx, const struct pmu_op_sample *s)
{
	(void)ctx;
	uint32_t j = 0;
	while (j < 16 && loop_bi.start + loop_off[j] != s->ip)
		j++;
	OPF_CHECK(j < 16, "op sample at %#llx, not in the loop", (unsigned long long)s->ip);
	loop_tag[loop_ntag] = loop_blocks * 16 + j + 1;
	loop_iv[loop_ntag++] = s->interval;
}

/* Feeds the loop until n samples; their numbers are in loop_tag. */
static void run_loop(uint64_t period, uint64_t seed, size_t n)
{
	struct pmu_config cfg = {.op = {.period = period, .count_ops = 1}, .seed = seed};
	struct pmu *p = NULL;
	char msg[200] = "";
	ck_assert_msg(pmu_new(&cfg, (struct pmu_sample_sink){.op_sample = on_loop_op}, &p, msg,
	                      sizeof(msg)) == 0,
	              "%s", msg);
	free(loop_tag);
	free(loop_iv);
	loop_tag = malloc((n + 1) * sizeof(*loop_tag));
	loop_iv = malloc((n + 1) * sizeof(*loop_iv));
	ck_assert(loop_tag && loop_iv);
	loop_ntag = 0;
	struct block_sink sk = pmu_block_sink(p);
	for (loop_blocks = 0; loop_ntag < n; loop_blocks++)
		sk.whole(sk.ctx, &loop_bi, 0x500000, 0, 7, RB_WHOLE_TAKEN | RB_WHOLE_RUN_START);
	pmu_free(p);
}

/* The 0.001 critical value of chi-square with dof degrees of freedom, by
 * bisection on profiler/stat_dist.c's tail (its own suite checks it against
 * published tables). */
static double chi2_critical(double dof)
{
	double lo = 0, hi = 1000;
	for (int i = 0; i < 200; i++) {
		double mid = (lo + hi) / 2;
		if (chi2_sf(mid, dof) > 0.001)
			lo = mid;
		else
			hi = mid;
	}
	return lo;
}

#define NINTERVALS 100000

/* Random low bits: every interval (the distance from one tag to the next, by
 * the test's count) lies in [P - 127, P] and is the one the sample reports;
 * P - interval takes its 128 values uniformly: chi-square over 100,000
 * intervals below the 0.001 critical value for 127 degrees of freedom
 * (181.99; NIST/SEMATECH e-Handbook 1.3.6.7.4 lists 149.449 for 100, which
 * the same routine gives), on three seeds and two periods. */
START_TEST(random_low_bits_are_uniform)
{
	double crit = chi2_critical(127);
	ck_assert_msg(fabs(crit - 181.993) < 0.01, "critical value %.3f", crit);
	ck_assert_msg(fabs(chi2_critical(100) - 149.449) < 0.001, "critical value for 100 dof %.3f",
	              chi2_critical(100));
	static const struct {
		uint64_t period, seed;
	} runs[] = {{128, 1}, {128, 2}, {4096, 3}};
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		uint64_t P = runs[r].period;
		run_loop(P, runs[r].seed, NINTERVALS);
		uint64_t bins[128] = {0}, prev = 0;
		for (size_t i = 0; i < NINTERVALS; i++) {
			uint64_t iv = loop_tag[i] - prev;
			prev = loop_tag[i];
			OPF_CHECK(iv >= P - 127 && iv <= P && loop_iv[i] == iv,
			          "seed %llu: interval %llu, the sample says %llu",
			          (unsigned long long)runs[r].seed, (unsigned long long)iv,
			          (unsigned long long)loop_iv[i]);
			bins[P - iv]++;
		}
		double e = NINTERVALS / 128.0, x2 = 0;
		for (int v = 0; v < 128; v++)
			x2 += (bins[v] - e) * (bins[v] - e) / e;
		ck_assert_msg(x2 < crit,
		              "period %llu seed %llu: chi-square %.2f over 127 dof, critical %.2f",
		              (unsigned long long)P, (unsigned long long)runs[r].seed, x2, crit);
		fprintf(stderr,
		        "op random bits: period %llu seed %llu: chi-square %.2f (127 dof, 0.001: "
		        "%.2f)\n",
		        (unsigned long long)P, (unsigned long long)runs[r].seed, x2, crit);
	}
	free(loop_tag);
	free(loop_iv);
	loop_tag = loop_iv = NULL;
}
END_TEST

/* The same seed gives the same tags; another seed other tags. */
START_TEST(seed_fixes_the_sequence)
{
	enum { N = 20000 };
	static uint64_t a[N], b[N];
	run_loop(256, 42, N);
	memcpy(a, loop_tag, sizeof(a));
	run_loop(256, 42, N);
	ck_assert_mem_eq(a, loop_tag, sizeof(a));
	run_loop(256, 43, N);
	memcpy(b, loop_tag, sizeof(b));
	ck_assert_int_ne(memcmp(a, b, sizeof(a)), 0);
	free(loop_tag);
	free(loop_iv);
	loop_tag = loop_iv = NULL;
}
END_TEST

/* Random intervals on the mixed stream: each is the test's distance between
 * tags, in range; pmu_op_next_min before every block is the next tag. */
START_TEST(random_intervals_on_the_mixed_stream)
{
	struct opf_opts o = {.seed = 5, .nsteps = 40000, .reps = 1, .rep_left = 1, .cut = 1};
	opf_stream(&o);
	struct pmu_config cfg = {.op = {.period = 512, .count_ops = 1}, .seed = 9};
	char msg[200] = "";
	struct pmu *p = opf_pmu(&cfg, 0, msg, sizeof(msg));
	ck_assert_msg(p != NULL, "%s", msg);
	opf_feed(p);
	ck_assert_uint_gt(opf_ngot, 1000);
	uint64_t prev = 0;
	for (size_t i = 0; i < opf_ngot; i++) {
		const struct opf_got *g = &opf_got[i];
		OPF_CHECK(
		    g->s.insn == g->insn && g->s.interval == g->insn - prev &&
		        g->s.interval >= 512 - 127 && g->s.interval <= 512,
		    "sample %zu: insn %llu (the test's %llu), interval %llu (the test's %llu)", i,
		    (unsigned long long)g->s.insn, (unsigned long long)g->insn,
		    (unsigned long long)g->s.interval, (unsigned long long)(g->insn - prev));
		prev = g->insn;
	}
	ck_assert_uint_lt(opf_ninsns - prev, 512); /* no tag missed after the last */
	size_t excused;
	opf_check_next_min(1, 0, &excused, "op mode, random");
	pmu_free(p);
	opf_free();
}
END_TEST

/* Configurations the op sampler refuses, each with a message, and some it
 * takes. */
static const struct {
	int line;
	struct pmu_op_config op;
	int ok;
	const char *says; /* a word of the message */
} config_rows[] = {
    {__LINE__, {.period = 17, .count_ops = 1}, 0, "multiple of 16"},
    {__LINE__, {.period = 100, .count_ops = 1}, 0, "multiple of 16"},
    {__LINE__, {.period = 17, .count_ops = 1, .no_random = 1}, 0, "multiple of 16"},
    {__LINE__, {.period = 112}, 0, "at least 128"},
    {__LINE__, {.period = 16, .count_ops = 1}, 0, "at least 128"},
    {__LINE__, {.period = 16, .count_ops = 1, .no_random = 1}, 1, NULL},
    {__LINE__, {.period = 112, .no_random = 1}, 1, NULL},
    {__LINE__, {.period = 128}, 1, NULL},
    {__LINE__, {.period = 128, .window_on = 11, .window_every = 10}, 0, "window"},
    {__LINE__, {.period = 128, .window_on = 0, .window_every = 10}, 0, "window"},
    {__LINE__, {.period = 128, .window_on = 10, .window_every = 10}, 1, NULL},
    {__LINE__, {.period = 128, .window_on = 1, .window_every = 1000}, 1, NULL},
    {__LINE__, {.period = 0, .window_on = 11, .window_every = 10}, 1, NULL}, /* op sampling off */
};

START_TEST(refused_configurations)
{
	struct pmu_config cfg = {.op = config_rows[_i].op};
	struct pmu *p = NULL;
	char msg[200] = "";
	int r = pmu_new(&cfg, (struct pmu_sample_sink){0}, &p, msg, sizeof(msg));
	if (config_rows[_i].ok) {
		ck_assert_msg(r == 0 && p, "row at line %d refused: %s", config_rows[_i].line, msg);
		ck_assert_int_eq(pmu_op_next_min(p) == UINT64_MAX, config_rows[_i].op.period == 0);
		pmu_free(p);
		return;
	}
	ck_assert_msg(r == PMUSIM_ERR_ARG && p == NULL, "row at line %d: %d", config_rows[_i].line,
	              r);
	ck_assert_msg(strstr(msg, config_rows[_i].says) && !strchr(msg, '\n'),
	              "row at line %d: '%s'", config_rows[_i].line, msg);
}
END_TEST

/* Branch facts. Runs of 16 instructions, a tag every 16 (op mode, no
 * randomness): each row below feeds one block and the tag falls at its
 * instruction `at`. The default model's predictor (bpred.h): direct jumps and
 * calls are always predicted; an indirect branch is predicted when its buffer
 * slot holds the target (empty at first); a return when the return stack's
 * top is its target (pushed by calls; empty slots hold 0); the direction
 * counters start weakly not-taken, so a conditional branch not taken on a
 * fresh counter is predicted and the first taken one is not. mis -1: only
 * compared with pmu_mispredicts' step. */
enum { RA, RB, RC, RD, RE, RF, RG, RH, RX, RY, RZ, NR };
static const struct {
	uint64_t start, target;
	uint32_t n;
	int kind;
} br_runs[NR] = {
    [RA] = {0x410000, 0, 16, BK_CALL_IND},    [RB] = {0x420000, 0, 16, BK_RET},
    [RC] = {0x430000, 0x431000, 16, BK_COND}, [RD] = {0x440000, 0, 16, BK_JMP_IND},
    [RE] = {0x450000, 0, 16, BK_REP},         [RF] = {0x460000, 0, 16, BK_SYSCALL},
    [RG] = {0x470000, 0x480000, 16, BK_JMP},  [RH] = {0x480000, 0x420000, 16, BK_CALL},
    [RX] = {0x490000, 0x490000, 24, BK_COND}, [RY] = {0x4a0000, 0x4a8000, 8, BK_COND},
    [RZ] = {0x4b0000, 0, 17, BK_REP},
};
static struct opf_run br_run[NR];

#define END(r) (br_run[r].bi.end)
static const struct {
	int line;
	int run;
	uint32_t n; /* retired (n < the run's: cut short) */
	int taken;
	int next_run; /* where it goes: a run's start; -1 the fall-through; -2 0x999000 */
	int whole;
	int at;  /* the tagged instruction's index */
	int mis; /* expected misprediction (-1: pmu_mispredicts' step only) */
} br_rows[] = {
    {__LINE__, RA, 16, 1, RB, 0, 15, 1}, /* call *: empty buffer */
    {__LINE__, RB, 16, 1, -3, 1, 15, 0}, /* ret to A's fall-through: the call pushed it */
    {__LINE__, RA, 16, 1, RB, 1, 15, 0}, /* the same target again */
    {__LINE__, RB, 16, 1, -3, 0, 15, 0},
    {__LINE__, RA, 16, 1, RG, 0, 15, 1}, /* another target */
    {__LINE__, RG, 16, 1, RH, 1, 15, 0}, /* jmp */
    {__LINE__, RH, 16, 1, RB, 0, 15, 0}, /* call */
    {__LINE__, RB, 16, 1, -4, 1, 15, 0}, /* ret to H's fall-through */
    {__LINE__, RB, 16, 1, -3, 0, 15, 0}, /* ret to A's (the 3rd call) */
    {__LINE__, RB, 16, 1, -2, 1, 15, 1}, /* ret with the stack empty */
    {__LINE__, RC, 16, 0, -1, 1, 15, 0}, /* jcc not taken, fresh counter */
    {__LINE__, RC, 16, 1, -5, 0, 15, 1}, /* jcc taken, first time */
    {__LINE__, RD, 16, 1, RF, 0, 15, 1}, /* jmp *: empty buffer */
    {__LINE__, RD, 16, 1, RF, 1, 15, 0},
    {__LINE__, RE, 16, 0, -1, 0, 15, 0}, /* rep movs, 40 iterations */
    {__LINE__, RF, 16, 0, -1, 1, 15, 0}, /* syscall */
    {__LINE__, RX, 24, 1, RX, 0, 15, 0}, /* the tag in the middle of the run */
    {__LINE__, RY, 8, 0, -1, 1, 7, -1},  /* jcc not taken */
    {__LINE__, RX, 16, 0, -6, 0, 15, 0}, /* cut short after 16 */
    {__LINE__, RZ, 16, 0, -6, 0, 15, 0}, /* 16 before a rep, the rep not retired */
    {__LINE__, RC, 16, 1, -5, 1, 15, -1},
    {__LINE__, RC, 16, 0, -1, 0, 15, -1},
};

static uint64_t br_next(size_t i)
{
	const struct block_info *bi = &br_run[br_rows[i].run].bi;
	switch (br_rows[i].next_run) {
	case -1:
		return bi->end;
	case -2:
		return 0x999000;
	case -3:
		return END(RA);
	case -4:
		return END(RH);
	case -5:
		return bi->target;
	case -6:
		return bi->start + br_run[br_rows[i].run].off[br_rows[i].n];
	default:
		return br_run[br_rows[i].next_run].bi.start;
	}
}

START_TEST(branch_facts_of_the_tagged_instruction)
{
	uint64_t rnd = 77;
	for (int r = 0; r < NR; r++)
		opf_make_run(&br_run[r], (uint32_t)r, br_runs[r].start, br_runs[r].n,
		             br_runs[r].kind, br_runs[r].target, &rnd);
	size_t nrows = sizeof(br_rows) / sizeof(br_rows[0]);
	opf_free();
	opf_steps = calloc(nrows, sizeof(*opf_steps));
	ck_assert_ptr_nonnull(opf_steps);
	for (size_t i = 0; i < nrows; i++) {
		const struct opf_run *r = &br_run[br_rows[i].run];
		int cut = br_rows[i].n < r->bi.ninsns;
		opf_steps[i] = (struct opf_step){
		    .run = r,
		    .next = br_next(i),
		    .rep_iters = r->bi.kind == BK_REP && !cut ? 40 : 0,
		    .tid = 7,
		    .n = br_rows[i].n,
		    .kind = (uint8_t)(cut ? BK_NONE : r->bi.kind),
		    .taken = (uint8_t)br_rows[i].taken,
		    .whole = (uint8_t)br_rows[i].whole,
		};
	}
	opf_nsteps = nrows;
	opf_walk_all();
	struct pmu_config cfg = {.op = {.period = 16, .count_ops = 1, .no_random = 1}};
	char msg[200] = "";
	struct pmu *p = opf_pmu(&cfg, 0, msg, sizeof(msg));
	ck_assert_msg(p != NULL, "%s", msg);
	for (size_t i = 0; i < nrows; i++) {
		const struct opf_step *st = &opf_steps[i];
		const struct block_info *bi = &st->run->bi;
		uint64_t mis0 = pmu_mispredicts(p);
		size_t n0 = opf_ngot;
		opf_feed_range(p, i, i + 1);
		uint64_t dmis = pmu_mispredicts(p) - mis0;
		ck_assert_msg(opf_ngot == n0 + 1, "row at line %d: %zu samples", br_rows[i].line,
		              opf_ngot - n0);
		const struct pmu_op_sample *s = &opf_got[n0].s;
		int at = br_rows[i].at;
		int term = (uint32_t)at + 1 == st->n && st->kind != BK_NONE;
		ck_assert_msg(s->ip == bi->start + st->run->off[at], "row at line %d: ip %#llx",
		              br_rows[i].line, (unsigned long long)s->ip);
		/* kind, branch, taken, ret, microcoded, target: opf_on_op checked them
		 * (opf_facts_ok) */
		ck_assert_int_eq(opf_facts_ok(s, st, (uint32_t)at), 1);
		/* the tagged terminator is the block's only branch: its misprediction is the step
		 */
		ck_assert_msg(s->mispredicted == (term ? dmis : 0),
		              "row at line %d: mispredicted %u, the step %llu", br_rows[i].line,
		              s->mispredicted, (unsigned long long)dmis);
		if (br_rows[i].mis >= 0)
			ck_assert_msg(s->mispredicted == br_rows[i].mis,
			              "row at line %d: mispredicted %u", br_rows[i].line,
			              s->mispredicted);
		ck_assert_uint_eq(s->insn, 16 * (n0 + 1));
	}
	pmu_free(p);
	opf_free();
}
END_TEST

/* The memory callback on a short stream with a tag at every instruction. */
START_TEST(memory_facts_once_per_sample)
{
	struct opf_opts o = {.seed = 8, .nsteps = 2000, .reps = 1, .rep_left = 1, .cut = 1};
	opf_stream(&o);
	struct pmu_config cfg = {.op = {.period = 16, .count_ops = 1, .no_random = 1}};
	for (int mem = 0; mem < 2; mem++) {
		char msg[200] = "";
		struct pmu *p = opf_pmu(&cfg, mem, msg, sizeof(msg));
		ck_assert_msg(p != NULL, "%s", msg);
		opf_mem_on = mem;
		opf_feed(p);
		opf_mem_on = 0;
		ck_assert_uint_eq(opf_ngot, opf_ninsns / 16);
		check_memory_facts(mem);
		pmu_free(p);
	}
	opf_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmu_op");
	TCase *tc = tcase_create("pmu_op");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, op_mode_tags_every_pth_instruction, 0,
	                    (int)(sizeof(position_rows) / sizeof(position_rows[0])));
	tcase_add_test(tc, random_low_bits_are_uniform);
	tcase_add_test(tc, seed_fixes_the_sequence);
	tcase_add_test(tc, random_intervals_on_the_mixed_stream);
	tcase_add_loop_test(tc, refused_configurations, 0,
	                    (int)(sizeof(config_rows) / sizeof(config_rows[0])));
	tcase_add_test(tc, branch_facts_of_the_tagged_instruction);
	tcase_add_test(tc, memory_facts_once_per_sample);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
