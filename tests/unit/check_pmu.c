/* The PMU model (pmu_model/) fed by hand-made retired blocks: overflow at the
 * exact event, period + delta, skid, refill, LBR filters, depth, order,
 * saturation and freeze, branch prediction, event names. Expected values are
 * counted by hand from the blocks below and the Skylake cost table (ALU = 1
 * quarter cycle, LOAD = 2, STORE = 4, BRANCH = 2, REP iteration = 4). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "pmu_model/bpred.h"
#include "pmu_model/events.h"
#include "pmu_model/lbr.h"
#include "pmu_model/pmu.h"
#include "tests/unit/run_suite.h"

/* L: a loop body of 8 instructions at 0x401000..0x401010 ending in a
 * conditional branch back to 0x401000 (7 ALU + branch = 7+2 = 9 quarter cycles).
 * C: "call 0x402000" alone; F: a 3-instruction function ending in ret;
 * I: "call *rax"; S: "rep movsb" after a store (STORE + STRING). */
static const uint16_t off_l[] = {0, 2, 4, 6, 8, 10, 12, 14, 16};
static const uint8_t cls_l[] = {IC_ALU, IC_ALU, IC_ALU, IC_ALU, IC_ALU, IC_ALU, IC_ALU, IC_BRANCH};
static const uint16_t off_1[] = {0, 5}, off_f[] = {0, 3, 6, 7}, off_s[] = {0, 4, 6};
static const uint8_t cls_c[] = {IC_BRANCH}, cls_f[] = {IC_LOAD, IC_ALU, IC_BRANCH};
static const uint8_t cls_s[] = {IC_STORE, IC_STRING};
static const struct block_info L = {0x401000, 0x401010, 0x40100e, 0x401000, 0, 8, BK_COND, CC_NE, 0, 2, off_l, cls_l};
static const struct block_info C = {0x401010, 0x401015, 0x401010, 0x402000, 1, 1, BK_CALL, 0, 0, 5, off_1, cls_c};
static const struct block_info F = {0x402000, 0x402007, 0x402006, 0, 2, 3, BK_RET, 0, 0, 1, off_f, cls_f};
static const struct block_info I = {0x401020, 0x401025, 0x401020, 0, 3, 1, BK_CALL_IND, 0, 0, 5, off_1, cls_c};
static const struct block_info S = {0x403000, 0x403006, 0x403004, 0, 4, 2, BK_REP, 0, 0, 2, off_s, cls_s};

#define MAXS 4096
static struct pmu_sample got[MAXS];
static struct lbr_entry got_br[MAXS][LBR_MAX_DEPTH];
static size_t ngot;

static void on_sample(void *ctx, const struct pmu_sample *s)
{
	(void)ctx;
	ck_assert_uint_lt(ngot, MAXS);
	got[ngot] = *s;
	memcpy(got_br[ngot], s->br, s->nbr * sizeof(*s->br));
	got[ngot].br = got_br[ngot];
	ngot++;
}

/* The default model without a misprediction penalty or taken-branch bubble,
 * for tests that count cycles by hand (a cold predictor mispredicts the first
 * taken branches). */
static const struct cpu_model *flat_cpu(void)
{
	static struct cpu_model m;
	m = *cpu_model_default();
	m.mispredict_cycles = 0;
	m.taken_branch_q = m.cost_q[IC_BRANCH];
	return &m;
}

static struct pmu *mk(struct pmu_config *cfg)
{
	struct pmu *p = NULL;
	char msg[200];
	ngot = 0;
	ck_assert_int_eq(pmu_new(cfg, (struct pmu_sample_sink){.sample = on_sample}, &p, msg, sizeof(msg)), 0);
	return p;
}

static void feed(struct pmu *p, const struct block_info *bi, uint32_t n, int kind, int taken,
		 uint64_t next, uint64_t iters)
{
	struct retired_block rb = {bi, next, iters, 7, n, (uint8_t)kind, (uint8_t)taken, 1, 0, 0, 0, 0, 0};
	struct block_sink s = pmu_block_sink(p);
	s.retire(s.ctx, &rb);
}

static void loop_iter(struct pmu *p, int taken)
{
	feed(p, &L, 8, BK_COND, taken, taken ? 0x401000 : 0x401010, 0);
}

/* Instruction overflow lands on the exact instruction inside a block: period
 * 13 = one full iteration (8) + 5 → the 5th instruction of the 2nd iteration. */
START_TEST(overflow_at_exact_instruction)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_INSTRUCTIONS, 13}}};
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 13; i++)
		loop_iter(p, 1);
	ck_assert_uint_eq(pmu_count(p, 0), 104);
	ck_assert_uint_eq(ngot, 8); /* 104 / 13 */
	for (size_t k = 0; k < ngot; k++) {
		uint64_t nth = 13 * (k + 1);           /* 1-based instruction number */
		uint64_t idx = (nth - 1) % 8;           /* its index in the loop body */
		ck_assert_uint_eq(got[k].ip, 0x401000 + off_l[idx]);
		ck_assert_uint_eq(got[k].next, 0x401000); /* the loop's back edge: where it goes on */
		ck_assert_uint_eq(got[k].period, 13);
		ck_assert_uint_eq(got[k].tid, 7);
	}
	pmu_free(p);
}
END_TEST

/* Each sample says where its thread goes on after the interrupt: the address
 * after the block its instruction retired in (a call's target, a return's
 * return address), whatever instruction of the block the sample names. */
START_TEST(sample_says_where_the_thread_goes_on)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_INSTRUCTIONS, 1}}};
	struct pmu *p = mk(&cfg);
	feed(p, &C, 1, BK_CALL, 1, 0x402000, 0);
	feed(p, &F, 3, BK_RET, 1, 0x401015, 0);
	ck_assert_uint_eq(ngot, 4);
	ck_assert_uint_eq(got[0].ip, 0x401010);
	ck_assert_uint_eq(got[0].next, 0x402000);
	for (size_t k = 1; k < 4; k++) {
		ck_assert_uint_eq(got[k].ip, 0x402000 + off_f[k - 1]);
		ck_assert_uint_eq(got[k].next, 0x401015);
	}
	pmu_free(p);
}
END_TEST

/* A context switch (new_context) empties the LBR: a sample 3 taken branches
 * after it holds those 3 only, though 10 were taken before; counters go on. */
START_TEST(context_switch_empties_lbr)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_NEAR_TAKEN, 13}}, .lbr_depth = 8,
				 .lbr_filter = LBR_F_ANY};
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 10; i++)
		loop_iter(p, 1);
	struct retired_block rb = {&L, 0x401000, 0, 8, 8, BK_COND, 1, 1, 1, 0, 0, 0, 0}; /* thread 8 runs now */
	struct block_sink s = pmu_block_sink(p);
	s.retire(s.ctx, &rb);
	rb.new_context = 0;
	s.retire(s.ctx, &rb);
	s.retire(s.ctx, &rb);
	ck_assert_uint_eq(ngot, 1);
	ck_assert_uint_eq(got[0].tid, 8);
	ck_assert_uint_eq(got[0].nbr, 3);
	ck_assert_uint_eq(pmu_count(p, 0), 13);
	pmu_free(p);
}
END_TEST

/* Cycles: one loop iteration is 9 quarter cycles; a period of 5 cycles = 20
 * quarters overflows inside the 3rd iteration, at its 2nd instruction (quarter
 * 18 + 1 + 1 = 20). */
START_TEST(cycles_overflow_at_exact_instruction)
{
	struct pmu_config cfg = {.nctr = 2, .ctr = {{EV_CYCLES, 5}, {EV_INSTRUCTIONS, 0}}};
	cfg.cpu = flat_cpu();
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 4; i++)
		loop_iter(p, 1);
	ck_assert_uint_eq(pmu_cycles(p), 9); /* 36 quarters */
	ck_assert_uint_eq(pmu_count(p, 0), 9);
	ck_assert_uint_ge(ngot, 1);
	ck_assert_uint_eq(got[0].ip, 0x401000 + off_l[1]);
	ck_assert_uint_eq(got[0].cycle, 5);
	ck_assert_uint_eq(pmu_count(p, 1), 32);
	pmu_free(p);
}
END_TEST

/* The overflow's cycle against the newest LBR entry: the loop's branches retire
 * at quarters 9, 18, 27 (cycles 2, 4, 6); a period of 5 cycles overflows at
 * cycle 5, one cycle after the 2nd branch. With 2 cycles of skid the PMI comes
 * after the 3rd branch (cycle 6): the overflow was 1 cycle before it. */
START_TEST(cycles_overflow_against_newest_entry)
{
	for (int skid = 0; skid <= 2; skid += 2) {
		struct pmu_config cfg = {.nctr = 2, .ctr = {{EV_CYCLES, 5}, {EV_INSTRUCTIONS, 7}}, .skid = (uint64_t)skid,
					 .skid_in_cycles = 1, .lbr_depth = 4, .lbr_filter = LBR_F_ANY};
		cfg.cpu = flat_cpu();
		struct pmu *p = mk(&cfg);
		for (int i = 0; i < 4; i++)
			loop_iter(p, 1);
		ck_assert_uint_ge(ngot, 2);
		size_t c = 0, o = 0;
		while (c < ngot && got[c].counter != 0)
			c++;
		while (o < ngot && got[o].counter != 1)
			o++;
		ck_assert_uint_lt(c, ngot);
		ck_assert_uint_lt(o, ngot);
		ck_assert_uint_eq(got[c].nbr, skid ? 3 : 2);
		ck_assert_int_eq(got[c].ovf_after_newest, skid ? -1 : 1);
		ck_assert_int_eq(got[o].ovf_after_newest, 0); /* an instructions sample says nothing of cycles */
		pmu_free(p);
	}
}
END_TEST

/* A cycles counter whose period is shorter than one instruction (a REP of 40
 * iterations after a taken branch that retired at cycle 2): every overflow is
 * a sample of its own at the PMI, period 3 each, overflowing at cycles 3, 6, 9
 * ..., that is 1, 4, 7 ... cycles after the newest LBR entry. */
START_TEST(cycles_overflows_in_one_instruction_are_samples_each)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_CYCLES, 3}}, .lbr_depth = 4, .lbr_filter = LBR_F_ANY};
	cfg.cpu = flat_cpu();
	struct pmu *p = mk(&cfg);
	loop_iter(p, 1);
	feed(p, &S, 2, BK_REP, 0, 0x403006, 40);
	uint64_t cycles = pmu_cycles(p);
	ck_assert_uint_ge(cycles, 40);
	ck_assert_uint_eq(ngot, cycles / 3);
	for (size_t i = 0; i < ngot; i++) {
		ck_assert_uint_eq(got[i].period, 3);
		ck_assert_uint_eq(got[i].nbr, 1);
		ck_assert_int_eq(got[i].ovf_after_newest, (int64_t)(3 * (i + 1)) - 2);
	}
	pmu_free(p);
}
END_TEST

/* Taken-branch sampling: every 3rd taken branch; the sample IP is the branch
 * and the newest LBR entry is that very branch (precise, skid 0). */
START_TEST(taken_branch_trigger_is_newest_lbr_entry)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_NEAR_TAKEN, 3}}, .lbr_depth = 8,
				 .lbr_filter = LBR_F_ANY};
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 9; i++)
		loop_iter(p, 1);
	loop_iter(p, 0);
	ck_assert_uint_eq(ngot, 3);
	for (size_t k = 0; k < ngot; k++) {
		ck_assert_uint_eq(got[k].ip, 0x40100e);
		ck_assert_uint_eq(got[k].nbr, 3 * (k + 1) < 8 ? 3 * (k + 1) : 8);
		ck_assert_uint_eq(got[k].br[0].from, 0x40100e);
		ck_assert_uint_eq(got[k].br[0].to, 0x401000);
		ck_assert_uint_eq(got[k].br[0].kind, BK_COND);
		ck_assert_uint_eq(got[k].ip_after_newest, 0); /* the IP is that entry */
	}
	pmu_free(p);
}
END_TEST

/* A branches sample at a conditional branch that falls through after the same
 * branch was taken: the IP equals the newest entry's source, but the
 * instruction there retired after it. */
START_TEST(ip_after_the_newest_entry)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_BRANCHES, 2}}, .lbr_depth = 8, .lbr_filter = LBR_F_ANY};
	struct pmu *p = mk(&cfg);
	loop_iter(p, 1);
	loop_iter(p, 0);
	ck_assert_uint_eq(ngot, 1);
	ck_assert_uint_eq(got[0].ip, 0x40100e);
	ck_assert_uint_eq(got[0].br[0].from, 0x40100e);
	ck_assert_uint_eq(got[0].ip_after_newest, 1);
	pmu_free(p);
}
END_TEST

/* Branch-event counts over a mixed stream, against hand counts. */
START_TEST(event_counts)
{
	struct pmu_config cfg = {.nctr = 10,
				 .ctr = {{EV_INSTRUCTIONS, 0}, {EV_BRANCHES, 0}, {EV_NEAR_TAKEN, 0}, {EV_COND, 0},
					 {EV_COND_TAKEN, 0}, {EV_NEAR_CALL, 0}, {EV_NEAR_RETURN, 0},
					 {EV_INDIRECT, 0}, {EV_REP_ITERATIONS, 0}, {EV_CYCLES, 0}}};
	struct pmu *p = mk(&cfg);
	loop_iter(p, 1);                                   /* 8 insns, cond taken */
	loop_iter(p, 0);                                   /* 8 insns, cond not taken */
	feed(p, &C, 1, BK_CALL, 1, 0x402000, 0);           /* call */
	feed(p, &F, 3, BK_RET, 1, 0x401015, 0);            /* 3 insns, ret */
	feed(p, &I, 1, BK_CALL_IND, 1, 0x402000, 0);       /* indirect call */
	feed(p, &F, 3, BK_RET, 1, 0x401025, 0);
	feed(p, &S, 2, BK_REP, 0, 0x403006, 100);          /* store + rep movsb ×100 */
	feed(p, &L, 3, BK_NONE, 0, 0x401006, 0);           /* cut after 3 instructions */
	static const uint64_t want[] = {8 + 8 + 1 + 3 + 1 + 3 + 2 + 3, 6, 5, 2, 1, 2, 2, 1, 100};
	for (unsigned i = 0; i < 9; i++)
		ck_assert_msg(pmu_count(p, i) == want[i], "counter %u: %llu, want %llu", i,
			      (unsigned long long)pmu_count(p, i), (unsigned long long)want[i]);
	ck_assert_uint_eq(pmu_instructions(p), want[0]);
	ck_assert_uint_eq(pmu_count(p, 9), pmu_cycles(p));
	pmu_free(p);
}
END_TEST

/* Period + delta: every period lies in [P, P+D], the seed fixes the sequence,
 * and the draws cover the range roughly uniformly (each quarter of [0, D] gets
 * 20–30 % of 4,000 draws). */
/* Frequency mode (perf -F) on a 1 MHz clock: 200,000 samples per second is one
 * every 5 cycles. A cycles counter's period is those 5 cycles from the start and
 * stays there: the loop body is 8 instructions in 9 quarter cycles, so 40
 * iterations are 90 cycles, 18 samples. */
START_TEST(freq_cycles_period_is_the_clock)
{
	static struct cpu_model m;
	m = *flat_cpu();
	m.mhz = 1;
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_CYCLES, 0, 200000}}, .cpu = &m};
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 40; i++)
		loop_iter(p, 1);
	ck_assert_uint_eq(pmu_cycles(p), 90);
	ck_assert_uint_eq(ngot, 18);
	for (size_t k = 0; k < ngot; k++) {
		ck_assert_uint_eq(got[k].period, 5);
		ck_assert_uint_eq(got[k].cycle, 5 * (k + 1));
	}
	pmu_free(p);
}
END_TEST

/* An instructions counter starts at the clock's 5 (as if one event per cycle)
 * and adapts to the rate: 8 instructions per 2.25 cycles is 17.8 per 5 cycles,
 * so the late periods average about 17.8 (the overflow time is known to a whole
 * cycle only, hence the band). */
START_TEST(freq_instructions_period_adapts)
{
	static struct cpu_model m;
	m = *flat_cpu();
	m.mhz = 1;
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_INSTRUCTIONS, 0, 200000}}, .cpu = &m};
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 4000; i++)
		loop_iter(p, 1);
	ck_assert_uint_gt(ngot, 1000);
	ck_assert_uint_eq(got[0].period, 5);
	uint64_t sum = 0;
	for (size_t k = ngot - 200; k < ngot; k++)
		sum += got[k].period;
	ck_assert_msg(sum >= 200 * 17 && sum <= 200 * 19, "late periods average %.2f", (double)sum / 200);
	/* and the samples come about every 5 cycles: 9000 cycles, about 1800 */
	ck_assert_msg(ngot >= 1700 && ngot <= 1900, "%zu samples", ngot);
	pmu_free(p);
}
END_TEST

static void periods(uint64_t seed, uint64_t *out, size_t n)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_INSTRUCTIONS, 100}}, .delta = 40, .seed = seed};
	struct pmu *p = mk(&cfg);
	while (ngot < n)
		loop_iter(p, 1);
	for (size_t i = 0; i < n; i++)
		out[i] = got[i].period;
	pmu_free(p);
}

START_TEST(delta_distribution_and_seed)
{
	static uint64_t a[4000], b[4000], c[4000];
	periods(1, a, 4000);
	periods(1, b, 4000);
	periods(2, c, 4000);
	ck_assert_mem_eq(a, b, sizeof(a));
	ck_assert_int_ne(memcmp(a, c, sizeof(a)), 0);
	unsigned quarter[4] = {0}, seen[41] = {0};
	for (size_t i = 0; i < 4000; i++) {
		ck_assert_uint_ge(a[i], 100);
		ck_assert_uint_le(a[i], 140);
		seen[a[i] - 100] = 1;
		quarter[(a[i] - 100) * 4 / 41]++;
	}
	for (int q = 0; q < 4; q++)
		ck_assert_msg(quarter[q] > 800 && quarter[q] < 1200, "quarter %d: %u", q, quarter[q]);
	for (int v = 0; v <= 40; v++)
		ck_assert_msg(seen[v], "delta %d never drawn", v);
	/* sample positions follow the periods: total events = sum of periods */
	uint64_t sum = 0;
	for (size_t i = 0; i < 4000; i++)
		sum += a[i];
	ck_assert_uint_gt(sum, 4000 * 100);
}
END_TEST

/* Skid 5 instructions: the PMI lands 5 instructions after the overflow; from
 * the last instruction of an iteration that is the 5th of the next one. The
 * LBR then holds that iteration's branch too. */
START_TEST(skid_in_instructions)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_INSTRUCTIONS, 16}}, .skid = 5,
				 .lbr_depth = 4, .lbr_filter = LBR_F_ANY};
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 4; i++)
		loop_iter(p, 1);
	ck_assert_uint_eq(ngot, 1); /* overflow at insn 16 (2nd branch); lands at insn 21; 2nd overflow at 32 still pending */
	ck_assert_uint_eq(got[0].ip, 0x401000 + off_l[4]);
	ck_assert_uint_eq(got[0].nbr, 2);
	loop_iter(p, 1);
	ck_assert_uint_eq(ngot, 2);
	ck_assert_uint_eq(got[1].ip, 0x401000 + off_l[4]);
	ck_assert_uint_eq(got[1].nbr, 4);
	pmu_free(p);
}
END_TEST

/* Skid in cycles: overflow at cycle 5 (2nd instruction of the 3rd iteration,
 * quarter 20); +2 cycles = quarter 28 → the 8th instruction of that iteration
 * (quarters 18..27 for insns 1..7 → 25; branch → 27; so the first instruction of
 * the 4th iteration at 28). */
START_TEST(skid_in_cycles)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_CYCLES, 5}}, .skid = 2, .skid_in_cycles = 1};
	cfg.cpu = flat_cpu();
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 4; i++)
		loop_iter(p, 1);
	ck_assert_uint_ge(ngot, 1);
	ck_assert_uint_eq(got[0].ip, 0x401000);
	ck_assert_uint_eq(got[0].cycle, 7);
	pmu_free(p);
}
END_TEST

/* Refill: each PMI charges 100 cycles to the next instruction; the cycles
 * counter and the LBR cycle count see them. */
START_TEST(refill_cycles_are_charged)
{
	struct pmu_config cfg = {.nctr = 2, .ctr = {{EV_NEAR_TAKEN, 2}, {EV_CYCLES, 0}},
				 .refill_cycles = 100, .lbr_depth = 4, .lbr_filter = LBR_F_ANY};
	cfg.cpu = flat_cpu();
	struct pmu *p = mk(&cfg);
	for (int i = 0; i < 4; i++)
		loop_iter(p, 1);
	/* 4 × 9 quarters = 9 cycles, plus 2 PMIs; the 2nd PMI's refill is still owed */
	ck_assert_uint_eq(ngot, 2);
	ck_assert_uint_eq(pmu_count(p, 1), (36 + 400) / 4);
	ck_assert_uint_eq(pmu_cycles(p), (36 + 800) / 4);
	/* branch 3 (quarter 27, +100 cycles of refill) after branch 2 (quarter 18) */
	ck_assert_uint_eq(got[1].br[1].cycles, (27 + 400) / 4 - 18 / 4);
	ck_assert_uint_eq(got[1].br[0].cycles, (36 + 400) / 4 - (27 + 400) / 4);
	pmu_free(p);
}
END_TEST

/* LBR filters keep only the branches they name. */
static const struct {
	int line;
	const char *spec;
	unsigned want_calls, want_rets, want_conds, want_ind;
} filter_rows[] = {
	{__LINE__, "any", 2, 2, 1, 1},   {__LINE__, "any_call", 2, 0, 0, 1},
	{__LINE__, "call", 1, 0, 0, 0},  {__LINE__, "ind_call", 1, 0, 0, 1},
	{__LINE__, "any_ret,u", 0, 2, 0, 0}, {__LINE__, "cond", 0, 0, 1, 0},
	{__LINE__, "ind_jmp", 0, 0, 0, 0},   {__LINE__, "u", 2, 2, 1, 1},
	{__LINE__, "k", 0, 0, 0, 0},
};

START_TEST(lbr_filters)
{
	uint32_t f;
	const char *bad;
	int user;
	ck_assert_int_eq(lbr_parse_filter(filter_rows[_i].spec, &f, &bad, &user), 0);
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_INSTRUCTIONS, 1000}}, .lbr_depth = 16, .lbr_filter = f};
	struct pmu *p = mk(&cfg);
	loop_iter(p, 1);
	loop_iter(p, 0);
	feed(p, &C, 1, BK_CALL, 1, 0x402000, 0);
	feed(p, &F, 3, BK_RET, 1, 0x401015, 0);
	feed(p, &I, 1, BK_CALL_IND, 1, 0x402000, 0);
	feed(p, &F, 3, BK_RET, 1, 0x401025, 0);
	for (int i = 0; i < 124; i++) /* reach 1000 instructions: the 1st sample */
		loop_iter(p, 0);
	ck_assert_uint_eq(ngot, 1);
	unsigned calls = 0, rets = 0, conds = 0, ind = 0;
	for (uint32_t i = 0; i < got[0].nbr; i++) {
		int k = got[0].br[i].kind;
		calls += k == BK_CALL || k == BK_CALL_IND;
		rets += k == BK_RET;
		conds += k == BK_COND;
		ind += k == BK_CALL_IND;
	}
	ck_assert_msg(calls == filter_rows[_i].want_calls && rets == filter_rows[_i].want_rets &&
			      conds == filter_rows[_i].want_conds && ind == filter_rows[_i].want_ind,
		      "row at line %d (%s): calls %u rets %u conds %u ind %u", filter_rows[_i].line,
		      filter_rows[_i].spec, calls, rets, conds, ind);
	pmu_free(p);
}
END_TEST

START_TEST(lbr_filter_words_rejected)
{
	uint32_t f;
	const char *bad;
	int user;
	ck_assert_int_eq(lbr_parse_filter("any,bogus,cond", &f, &bad, &user), PMUSIM_ERR_ARG);
	ck_assert_int_eq((int)strcspn(bad, ","), 5);
	ck_assert_int_eq(strncmp(bad, "bogus", 5), 0);
	ck_assert_int_eq(lbr_parse_filter("any,,cond", &f, &bad, &user), PMUSIM_ERR_ARG);
	ck_assert_int_eq(lbr_parse_filter("anycallsandmorewordsthanbeforeinonelongword", &f, &bad, &user),
			 PMUSIM_ERR_ARG);
}
END_TEST

/* Depth wrap-around and newest-first order: depth 4 after 10 branches holds
 * branches 10, 9, 8, 7. */
START_TEST(lbr_wraps_newest_first)
{
	struct lbr l;
	struct lbr_entry out[LBR_MAX_DEPTH];
	ck_assert_int_eq(lbr_init(&l, 4, LBR_F_ANY), 0);
	ck_assert_int_eq(lbr_init(&l, 6, LBR_F_ANY), PMUSIM_ERR_ARG);
	lbr_init(&l, 4, LBR_F_ANY);
	ck_assert_uint_eq(lbr_read(&l, out), 0);
	for (uint64_t i = 1; i <= 10; i++)
		lbr_record(&l, 0x1000 * i, 0x1000 * i + 8, BK_JMP, 0, i * 10);
	ck_assert_uint_eq(lbr_read(&l, out), 4);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(out[i].from, 0x1000 * (10 - (uint64_t)i));
		ck_assert_uint_eq(out[i].cycles, 10);
	}
	for (uint32_t depth = 8; depth <= 64; depth *= 2) {
		lbr_init(&l, depth, LBR_F_ANY);
		for (uint64_t i = 1; i <= 200; i++)
			lbr_record(&l, i, i + 1, BK_COND, (int)(i & 1), i);
		ck_assert_uint_eq(lbr_read(&l, out), depth);
		for (uint32_t i = 0; i < depth; i++) {
			ck_assert_uint_eq(out[i].from, 200 - i);
			ck_assert_uint_eq(out[i].mispred, (200 - i) & 1);
		}
	}
}
END_TEST

/* Cycle counts saturate at 16 bits: a REP of 100,000 iterations (400,000 quarters)
 * between two branches. */
START_TEST(lbr_cycles_saturate)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_NEAR_TAKEN, 2}}, .lbr_depth = 4, .lbr_filter = LBR_F_ANY};
	cfg.cpu = flat_cpu();
	struct pmu *p = mk(&cfg);
	loop_iter(p, 1);
	feed(p, &S, 2, BK_REP, 0, 0x403006, 100000);
	loop_iter(p, 1);
	ck_assert_uint_eq(ngot, 1);
	ck_assert_uint_eq(got[0].br[0].cycles, 65535);
	ck_assert_uint_eq(got[0].br[1].cycles, 2); /* 9 quarters after cycle 0 */
	pmu_free(p);
}
END_TEST

/* A REP left in the middle by a fault (a block of the store only, carrying 40
 * iterations of a rep movsb that did not retire): the iterations and their cycles
 * count, the REP is no instruction; a rep_iterations overflow among them interrupts
 * at the REP. */
START_TEST(rep_left_in_the_middle)
{
	struct pmu_config cfg = {.nctr = 3, .ctr = {{EV_INSTRUCTIONS, 0}, {EV_REP_ITERATIONS, 25}, {EV_CYCLES, 0}}};
	cfg.cpu = flat_cpu();
	struct pmu *p = mk(&cfg);
	struct retired_block rb = {&S, 0x403004, 40, 7, 1, BK_NONE, 0, 1, 0, 100, 0, 60, RB_REP_RAN | RB_REP_LEFT};
	struct block_sink s = pmu_block_sink(p);
	s.retire(s.ctx, &rb);
	ck_assert_uint_eq(pmu_count(p, 0), 1);
	ck_assert_uint_eq(pmu_count(p, 1), 40);
	ck_assert_uint_eq(pmu_cycles(p) * 4,
			  (uint64_t)flat_cpu()->cost_q[IC_STORE] + 40 * (uint64_t)flat_cpu()->rep_iter_q);
	ck_assert_uint_eq(ngot, 1);
	ck_assert_uint_eq(got[0].ip, 0x403004);
	ck_assert_uint_eq(got[0].next, 0x403004); /* the REP goes on where it was left */
	ck_assert_uint_eq(got[0].period, 25);
	/* the same with nothing retired before it */
	rb.ninsns = 0;
	s.retire(s.ctx, &rb);
	ck_assert_uint_eq(pmu_count(p, 0), 1);
	ck_assert_uint_eq(pmu_count(p, 1), 80);
	ck_assert_uint_eq(ngot, 2); /* overflows at 50 and 75: one interrupt */
	ck_assert_uint_eq(got[1].ip, 0x403004);
	ck_assert_uint_eq(got[1].period, 50);
	pmu_free(p);
}
END_TEST

/* A frozen LBR records nothing; the PMU freezes it while a sample is handed over. */
static struct pmu *freeze_pmu;
static void try_record_while_frozen(void *ctx, const struct pmu_sample *s)
{
	(void)ctx;
	on_sample(NULL, s);
	/* the handler's own branches: fed to the model while the PMI is handled */
	ck_assert_int_eq(s->nbr, 1);
}

START_TEST(lbr_freeze_on_pmi)
{
	struct lbr l;
	struct lbr_entry out[LBR_MAX_DEPTH];
	lbr_init(&l, 8, LBR_F_ANY);
	lbr_record(&l, 1, 2, BK_JMP, 0, 1);
	lbr_freeze(&l);
	lbr_record(&l, 3, 4, BK_JMP, 0, 2);
	ck_assert_uint_eq(lbr_read(&l, out), 1);
	lbr_unfreeze(&l);
	lbr_record(&l, 5, 6, BK_JMP, 0, 3);
	ck_assert_uint_eq(lbr_read(&l, out), 2);
	ck_assert_uint_eq(out[0].from, 5);
	ck_assert_uint_eq(out[1].from, 1);
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_NEAR_TAKEN, 1}}, .lbr_depth = 8, .lbr_filter = LBR_F_ANY};
	char msg[100];
	ngot = 0;
	ck_assert_int_eq(pmu_new(&cfg, (struct pmu_sample_sink){.sample = try_record_while_frozen}, &freeze_pmu,
				 msg, sizeof(msg)), 0);
	feed(freeze_pmu, &C, 1, BK_CALL, 1, 0x402000, 0);
	ck_assert_uint_eq(ngot, 1);
	pmu_free(freeze_pmu);
}
END_TEST

/* Branch prediction: a loop branch taken 9 times then not taken, repeated:
 * gshare with history learns the exit after warm-up; the RSB predicts nested
 * returns; a changing indirect target mispredicts. */
START_TEST(branch_predictor)
{
	struct bpred bp;
	ck_assert_int_eq(bpred_init(&bp, cpu_model_default()), 0);
	int late = 0;
	for (int rep = 0; rep < 200; rep++)
		for (int i = 0; i < 10; i++) {
			int m = bpred_update(&bp, BK_COND, 0x401000, 0x401002, i < 9, 0);
			if (rep >= 100)
				late += m;
		}
	ck_assert_int_eq(late, 0);
	/* calls 3 deep, then returns: all predicted */
	ck_assert_int_eq(bpred_update(&bp, BK_CALL, 0x1000, 0x1005, 1, 0x2000), 0);
	ck_assert_int_eq(bpred_update(&bp, BK_CALL, 0x2000, 0x2005, 1, 0x3000), 0);
	ck_assert_int_eq(bpred_update(&bp, BK_CALL_IND, 0x3000, 0x3002, 1, 0x4000), 1); /* first seen */
	ck_assert_int_eq(bpred_update(&bp, BK_RET, 0x4000, 0, 1, 0x3002), 0);
	ck_assert_int_eq(bpred_update(&bp, BK_RET, 0x3010, 0, 1, 0x2005), 0);
	ck_assert_int_eq(bpred_update(&bp, BK_RET, 0x2010, 0, 1, 0x1005), 0);
	ck_assert_int_eq(bpred_update(&bp, BK_RET, 0x1010, 0, 1, 0x9999), 1); /* empty RSB */
	ck_assert_int_eq(bpred_update(&bp, BK_JMP_IND, 0x5000, 0, 1, 0x6000), 1);
	ck_assert_int_eq(bpred_update(&bp, BK_JMP_IND, 0x5000, 0, 1, 0x6000), 0);
	ck_assert_int_eq(bpred_update(&bp, BK_JMP_IND, 0x5000, 0, 1, 0x7000), 1);
	ck_assert_int_eq(bpred_update(&bp, BK_JMP, 0x5000, 0, 1, 0x7000), 0);
	bpred_fini(&bp);
}
END_TEST

/* A misprediction costs the model's penalty in cycles and counts as a miss. */
START_TEST(mispredict_penalty)
{
	struct pmu_config cfg = {.nctr = 2, .ctr = {{EV_BRANCH_MISSES, 0}, {EV_CYCLES, 0}}};
	struct pmu *p = mk(&cfg);
	loop_iter(p, 1); /* weakly-not-taken counters: the first taken branch mispredicts */
	ck_assert_uint_eq(pmu_count(p, 0), 1);
	/* 7 ALU (7 quarters) + a taken branch (4 quarters, the redirect) + 16 cycles */
	ck_assert_uint_eq(cpu_model_default()->mispredict_cycles, 16);
	ck_assert_uint_eq(pmu_cycles(p), (7 + 4 + 4 * 16) / 4);
	loop_iter(p, 0); /* predicted: 9 quarters */
	ck_assert_uint_eq(pmu_count(p, 0), 1);
	ck_assert_uint_eq(pmu_cycles(p), (7 + 4 + 4 * 16 + 9) / 4);
	pmu_free(p);
}
END_TEST

static const struct {
	int line;
	const char *text;
	int ok;
	enum pmu_event ev;
	int precise;
} name_rows[] = {
	{__LINE__, "instructions", 1, EV_INSTRUCTIONS, 0},
	{__LINE__, "instructions:u", 1, EV_INSTRUCTIONS, 0},
	{__LINE__, "inst_retired.any", 1, EV_INSTRUCTIONS, 0},
	{__LINE__, "cycles:upp", 1, EV_CYCLES, 2},
	{__LINE__, "cpu-cycles", 1, EV_CYCLES, 0},
	{__LINE__, "branches", 1, EV_BRANCHES, 0},
	{__LINE__, "branch-instructions", 1, EV_BRANCHES, 0},
	{__LINE__, "branch-misses", 1, EV_BRANCH_MISSES, 0},
	{__LINE__, "br_inst_retired.near_taken", 1, EV_NEAR_TAKEN, 0},
	{__LINE__, "br_inst_retired.cond", 1, EV_COND, 0},
	{__LINE__, "br_inst_retired.cond_taken:u", 1, EV_COND_TAKEN, 0},
	{__LINE__, "br_inst_retired.near_call", 1, EV_NEAR_CALL, 0},
	{__LINE__, "br_inst_retired.near_return", 1, EV_NEAR_RETURN, 0},
	{__LINE__, "br_inst_retired.indirect", 1, EV_INDIRECT, 0},
	{__LINE__, "rep_iterations", 1, EV_REP_ITERATIONS, 0},
	{__LINE__, "ex_ret_instr", 1, EV_INSTRUCTIONS, 0},
	{__LINE__, "ls_not_halted_cyc:u", 1, EV_CYCLES, 0},
	{__LINE__, "ex_ret_brn", 1, EV_BRANCHES, 0},
	{__LINE__, "ex_ret_brn_misp", 1, EV_BRANCH_MISSES, 0},
	{__LINE__, "EX_RET_BRN_TKN:pp", 1, EV_NEAR_TAKEN, 2},
	{__LINE__, "ex_ret_cond", 1, EV_COND, 0},
	{__LINE__, "ex_ret_near_ret", 1, EV_NEAR_RETURN, 0},
	{__LINE__, "ex_ret_ind_brch_instr", 0, 0, 0},
	{__LINE__, "cycles:k", 0, 0, 0},
	{__LINE__, "cycles:", 0, 0, 0},
	{__LINE__, "cache-misses", 0, 0, 0},
	{__LINE__, "instruction", 0, 0, 0},
	{__LINE__, "", 0, 0, 0},
};

START_TEST(event_names)
{
	struct pmu_event_spec sp;
	int r = pmu_event_parse(name_rows[_i].text, &sp);
	ck_assert_msg((r == 0) == name_rows[_i].ok, "row at line %d: '%s' gave %d", name_rows[_i].line,
		      name_rows[_i].text, r);
	if (r == 0) {
		ck_assert_int_eq(sp.ev, name_rows[_i].ev);
		ck_assert_int_eq(sp.precise, name_rows[_i].precise);
	}
}
END_TEST

START_TEST(too_many_counters)
{
	struct pmu_config cfg = {.nctr = 10};
	for (int i = 0; i < 10; i++)
		cfg.ctr[i].ev = EV_BRANCHES;
	struct pmu *p = NULL;
	char msg[200] = "";
	ck_assert_int_eq(pmu_new(&cfg, (struct pmu_sample_sink){0}, &p, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	ck_assert_ptr_null(p);
	ck_assert_ptr_nonnull(strstr(msg, "programmable"));
	cfg.nctr = 1;
	cfg.lbr_depth = 12;
	ck_assert_int_eq(pmu_new(&cfg, (struct pmu_sample_sink){0}, &p, msg, sizeof(msg)), PMUSIM_ERR_ARG);
}
END_TEST

/* The whole-run form of a block (block_sink.whole), as the block stream hands
 * over most blocks. */
static void feed_whole(struct pmu *p, const struct block_info *bi, int taken, uint64_t next)
{
	struct block_sink s = pmu_block_sink(p);
	s.whole(s.ctx, bi, next, 0, 7, (taken ? RB_WHOLE_TAKEN : 0) | RB_WHOLE_RUN_START);
}

static uint64_t run_cycles_of(const struct pmu *p, uint32_t id)
{
	const uint64_t *c;
	uint32_t n;
	ck_assert_int_eq(pmu_run_cycles(p, &c, &n), 0);
	return id < n ? c[id] : 0;
}

/* Program cycles by run: what the cycles counter counts in each block (the
 * clock's whole cycles after it less before it). Default model: L taken with a
 * cold predictor = 7 ALU + taken branch (4 quarters) + 16-cycle misprediction =
 * 75 quarters (clock 18); L not taken, predicted = 9 quarters (clock 84 q = 21);
 * S, a store and a REP of 10 iterations = 4 + 4 + 10 × 4 = 48 quarters (clock
 * 132 q = 33). L (id 0): 21, S (id 4): 12; again with L as a run of id 5000 (the
 * arrays grow). */
START_TEST(run_cycles_by_hand)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_CYCLES, 0}}};
	for (int far = 0; far < 2; far++) {
		struct block_info l = L;
		l.id = far ? 5000 : 0;
		struct pmu *p = mk(&cfg);
		const uint64_t *c;
		uint32_t n;
		ck_assert_int_eq(pmu_run_cycles(p, &c, &n), PMUSIM_ERR_ARG); /* not asked for */
		ck_assert_int_eq(pmu_attribute_runs(p), 0);
		feed(p, &l, 8, BK_COND, 1, 0x401000, 0);
		ck_assert_uint_eq(run_cycles_of(p, l.id), 18);
		feed_whole(p, &l, 0, 0x401010);
		ck_assert_uint_eq(run_cycles_of(p, l.id), 21);
		feed(p, &S, 2, BK_REP, 0, 0x403006, 10);
		ck_assert_uint_eq(run_cycles_of(p, l.id), 21);
		ck_assert_uint_eq(run_cycles_of(p, S.id), 12);
		ck_assert_uint_eq(pmu_count(p, 0), 33);
		ck_assert_uint_eq(pmu_mispredicts(p), 1);
		pmu_free(p);
	}
}
END_TEST

/* The refill after a PMI is no program cycle. Flat model (L = 9 quarters, F =
 * load + ALU + ret = 5), a PMI every 12 instructions with a refill of 100
 * cycles: the 1st lands at L's 4th instruction in iteration 2 (its 400 quarters
 * charged to the 5th: clock 9, 418, then 427 after iteration 3); the 2nd at the
 * end of iteration 3, charged to F's first instruction (clock 427 + 400 + 5 =
 * 832 q = 208 cycles). L: 2 + (104 - 2 - 100) + (106 - 104) = 6 cycles, F: 208 -
 * 106 - 100 = 2; they add up to the 32 quarters (8 cycles) the program ran,
 * the cycles counter's 208 less 2 refills of 100. */
START_TEST(run_cycles_leave_out_the_refill)
{
	struct pmu_config cfg = {.nctr = 2, .ctr = {{EV_INSTRUCTIONS, 12}, {EV_CYCLES, 0}}, .refill_cycles = 100};
	cfg.cpu = flat_cpu();
	struct pmu *p = mk(&cfg);
	ck_assert_int_eq(pmu_attribute_runs(p), 0);
	feed_whole(p, &L, 1, 0x401000);
	ck_assert_uint_eq(run_cycles_of(p, L.id), 2);
	feed_whole(p, &L, 1, 0x401000);
	ck_assert_uint_eq(ngot, 1);
	ck_assert_uint_eq(got[0].ip, 0x401000 + off_l[3]);
	ck_assert_uint_eq(run_cycles_of(p, L.id), 4);
	feed_whole(p, &L, 1, 0x401000);
	ck_assert_uint_eq(ngot, 2);
	ck_assert_uint_eq(run_cycles_of(p, L.id), 6);
	feed_whole(p, &F, 1, 0x401015);
	ck_assert_uint_eq(run_cycles_of(p, L.id), 6);
	ck_assert_uint_eq(run_cycles_of(p, F.id), 2);
	ck_assert_uint_eq(pmu_count(p, 1), 208);
	pmu_free(p);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmu");
	TCase *tc = tcase_create("pmu");
	tcase_add_test(tc, overflow_at_exact_instruction);
	tcase_add_test(tc, context_switch_empties_lbr);
	tcase_add_test(tc, cycles_overflow_at_exact_instruction);
	tcase_add_test(tc, cycles_overflow_against_newest_entry);
	tcase_add_test(tc, ip_after_the_newest_entry);
	tcase_add_test(tc, sample_says_where_the_thread_goes_on);
	tcase_add_test(tc, cycles_overflows_in_one_instruction_are_samples_each);
	tcase_add_test(tc, taken_branch_trigger_is_newest_lbr_entry);
	tcase_add_test(tc, event_counts);
	tcase_add_test(tc, freq_cycles_period_is_the_clock);
	tcase_add_test(tc, freq_instructions_period_adapts);
	tcase_add_test(tc, delta_distribution_and_seed);
	tcase_add_test(tc, skid_in_instructions);
	tcase_add_test(tc, skid_in_cycles);
	tcase_add_test(tc, refill_cycles_are_charged);
	tcase_add_loop_test(tc, lbr_filters, 0, (int)(sizeof(filter_rows) / sizeof(filter_rows[0])));
	tcase_add_test(tc, lbr_filter_words_rejected);
	tcase_add_test(tc, lbr_wraps_newest_first);
	tcase_add_test(tc, lbr_cycles_saturate);
	tcase_add_test(tc, rep_left_in_the_middle);
	tcase_add_test(tc, lbr_freeze_on_pmi);
	tcase_add_test(tc, branch_predictor);
	tcase_add_test(tc, mispredict_penalty);
	tcase_add_test(tc, run_cycles_by_hand);
	tcase_add_test(tc, run_cycles_leave_out_the_refill);
	tcase_add_loop_test(tc, event_names, 0, (int)(sizeof(name_rows) / sizeof(name_rows[0])));
	tcase_add_test(tc, too_many_counters);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
