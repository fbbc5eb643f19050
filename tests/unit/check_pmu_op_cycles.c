/* The op sampler (pmu.h, "Instruction-based op sampling") counting cycles,
 * with activation windows, and with REPs left in the middle, fed hand-made
 * block streams (tests/unit/op_fixture.h). The reference is the test's walk
 * of the stream on its own clock (op_fixture.h: quarter cycles summed from
 * the cost table it chose, whole cycles = quarters / 4): the running count of
 * whole cycles (or instructions) reaches the interval during the tagged
 * instruction; pmu_op_next_min before every block against the tags that
 * follow; sample shares per instruction of a loop against its exact cycle
 * shares. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "pmu_model/pmu.h"
#include "profiler/stat_dist.h"
#include "tests/unit/op_fixture.h"
#include "tests/unit/run_suite.h"

static int in_window(const struct pmu_op_config *c, uint64_t cycle)
{
	return !c->window_every || cycle % c->window_every < c->window_on;
}

/* Walks the stream as the documented counter does and checks every sample
 * against it: an instruction counts when it retires inside a window (always
 * without windows), by 1 (op mode) or its whole cycles; the first to retire
 * in a window starts a fresh count; the instruction during which the count
 * reaches the sample's interval is the one tagged (the count before it is
 * below the interval, with it at or above); tag_to_ret is what the
 * instruction adds beyond the interval (cycle mode) or its own cycles (op
 * mode). The next count starts after the tagged instruction in op mode; in
 * cycle mode it starts with what the tagged instruction added beyond the
 * interval, and each time that reaches the period again the interval is
 * lost (one tag in flight). A REP left in the middle adds its iterations'
 * whole cycles the same way, but retires nothing and is never sampled: each
 * interval they run out is lost. Lost intervals are only known without
 * randomness: with it, a count carried over that may hold a lost interval
 * (at least P - 127) leaves the next sample's count unchecked (a resync; the
 * rest of it is checked). Without randomness the interval is the period, so
 * the walk gives every tag; with it, the samples' intervals (each in
 * [P - 127, P]). Returns the intervals lost; *resyncs the resyncs. */
static size_t check_walk(const struct pmu_op_config *c, const char *what, size_t *resyncs)
{
	uint64_t P = c->period, acc = 0, cur_w = UINT64_MAX, lost = 0;
	uint64_t shortest = c->no_random ? P : P - 127;
	int synced = 1;
	size_t i = 0;
	*resyncs = 0;
	for (size_t k = 0; k < opf_nsteps; k++) {
		const struct opf_step *st = &opf_steps[k];
		for (uint64_t n = st->base + 1; n <= st->base + st->n; n++) {
			uint64_t cyc = opf_cycle(n);
			int tagged = i < opf_ngot && opf_got[i].insn == n;
			if (!in_window(c, cyc)) {
				OPF_CHECK(!tagged,
				          "%s: sample %zu at insn %llu, retiring at cycle %llu out "
				          "of the windows",
				          what, i, (unsigned long long)n, (unsigned long long)cyc);
				continue;
			}
			if (c->window_every && cyc / c->window_every != cur_w) {
				cur_w = cyc / c->window_every;
				acc = 0;
				synced = 1;
			}
			uint64_t ev = c->count_ops ? 1 : opf_whole(n);
			if (!tagged) {
				acc += ev;
				OPF_CHECK(!synced || acc < P,
				          "%s: no tag by insn %llu, %llu counted (sample %zu is at "
				          "insn %llu)",
				          what, (unsigned long long)n, (unsigned long long)acc, i,
				          i < opf_ngot ? (unsigned long long)opf_got[i].insn
				                       : 0ULL);
				continue;
			}
			const struct pmu_op_sample *s = &opf_got[i].s;
			uint64_t iv = s->interval;
			OPF_CHECK(c->no_random ? iv == P : iv >= P - 127 && iv <= P,
			          "%s: sample %zu interval %llu", what, i, (unsigned long long)iv);
			OPF_CHECK(!synced || (acc < iv && iv <= acc + ev),
			          "%s: sample %zu at insn %llu: %llu counted before it, it adds "
			          "%llu, interval %llu",
			          what, i, (unsigned long long)n, (unsigned long long)acc,
			          (unsigned long long)ev, (unsigned long long)iv);
			uint64_t ttr = c->count_ops ? opf_whole(n) : acc + ev - iv;
			if (!synced) /* only its count is unknown: what it adds beyond it is at most ev */
				ttr = s->tag_to_ret < ev ? s->tag_to_ret : UINT64_MAX;
			OPF_CHECK(s->insn == n && s->ip == opf_addr[n - 1] &&
			              s->tid == opf_tid[n - 1] && s->cycle == cyc &&
			              s->tag_to_ret == ttr,
			          "%s: sample %zu: insn %llu ip %#llx cycle %llu tag_to_ret %llu; "
			          "want %llu %#llx %llu %llu",
			          what, i, (unsigned long long)s->insn, (unsigned long long)s->ip,
			          (unsigned long long)s->cycle, (unsigned long long)s->tag_to_ret,
			          (unsigned long long)n, (unsigned long long)opf_addr[n - 1],
			          (unsigned long long)cyc, (unsigned long long)ttr);
			acc = c->count_ops ? 0 : ttr;
			synced = 1;
			if (acc >= shortest && !c->no_random) {
				synced = 0;
				++*resyncs;
			}
			while (synced && acc >= P) {
				acc -= P;
				lost++;
			}
			i++;
		}
		if (!st->rep_left || c->count_ops)
			continue;
		/* the iterations of a REP left: after the instructions before it */
		uint64_t q = st->n ? opf_q1[st->base + st->n - 1] : st->q0, cyc = st->q1 >> 2;
		if (!in_window(c, cyc))
			continue;
		if (c->window_every && cyc / c->window_every != cur_w) {
			cur_w = cyc / c->window_every;
			acc = 0;
			synced = 1;
		}
		ck_assert_msg(c->no_random, "%s: a REP left with random intervals", what);
		acc += cyc - (q >> 2);
		while (acc >= P) {
			acc -= P;
			lost++;
		}
	}
	ck_assert_msg(i == opf_ngot, "%s: %zu samples, the walk matched %zu", what, opf_ngot, i);
	return lost;
}

static struct pmu *run(const struct pmu_config *cfg)
{
	char msg[200] = "";
	struct pmu *p = opf_pmu(cfg, 0, msg, sizeof(msg));
	ck_assert_msg(p != NULL, "%s", msg);
	opf_feed(p);
	ck_assert_uint_eq(pmu_instructions(p), opf_ninsns);
	ck_assert_uint_eq(pmu_op_samples(p), opf_ngot);
	return p;
}

static const struct walk_row {
	int line;
	struct pmu_op_config op;
	int reps, rep_left;
	int others; /* a cycles counter with skid and an instructions counter beside it (refill 0)
	             */
} walk_rows[] = {
    /* cycle mode */
    {__LINE__, {.period = 64, .no_random = 1}, 1, 1, 0},
    {__LINE__, {.period = 16, .no_random = 1}, 1, 1, 0},
    {__LINE__, {.period = 1008, .no_random = 1}, 1, 1, 1},
    {__LINE__, {.period = 256}, 1, 0, 0},
    {__LINE__, {.period = 2048}, 1, 0, 1},
    /* windows, op and cycle mode */
    {__LINE__,
     {.period = 16, .count_ops = 1, .no_random = 1, .window_on = 300, .window_every = 1000},
     1,
     1,
     0},
    {__LINE__,
     {.period = 160, .count_ops = 1, .no_random = 1, .window_on = 999, .window_every = 1000},
     1,
     1,
     1},
    {__LINE__, {.period = 128, .count_ops = 1, .window_on = 700, .window_every = 1000}, 1, 1, 0},
    {__LINE__, {.period = 32, .no_random = 1, .window_on = 100, .window_every = 400}, 1, 0, 0},
    {__LINE__, {.period = 32, .no_random = 1, .window_on = 100, .window_every = 400}, 1, 1, 0},
    {__LINE__, {.period = 256, .window_on = 2000, .window_every = 5000}, 1, 0, 1},
    {__LINE__, {.period = 16, .no_random = 1, .window_on = 1, .window_every = 37}, 1, 1, 0},
};

/* Every sample where the walk puts it, on mixed streams of three threads,
 * blocks whole, cut short, REPs retired and left. */
START_TEST(samples_follow_the_walk)
{
	const struct walk_row *row = &walk_rows[_i];
	struct opf_opts o = {.seed = 100 + (uint64_t)_i,
	                     .nsteps = 50000,
	                     .reps = row->reps,
	                     .rep_left = row->rep_left,
	                     .cut = 1};
	opf_stream(&o);
	struct pmu_config cfg = {.op = row->op, .seed = 21, .cpu = opf_cpu()};
	if (row->others) {
		cfg.nctr = 2;
		cfg.ctr[0] = (struct pmu_counter_config){EV_CYCLES, 1501, 0};
		cfg.ctr[1] = (struct pmu_counter_config){EV_INSTRUCTIONS, 333, 0};
		cfg.skid = 5;
		cfg.skid_in_cycles = 1;
		cfg.delta = 100;
	}
	struct pmu *p = run(&cfg);
	char what[64];
	snprintf(what, sizeof(what), "row at line %d", row->line);
	size_t resyncs;
	size_t lost = check_walk(&row->op, what, &resyncs);
	/* a resync checks less: most samples must be checked in full */
	ck_assert_uint_le(resyncs * 20, opf_ngot);
	if (row->op.no_random && !row->op.count_ops)
		ck_assert_uint_eq(lost, pmu_op_lost_tags(p));
	ck_assert_uint_gt(opf_ngot, 200);
	if (row->others)
		ck_assert_uint_gt(opf_pmis, 200);
	if (row->rep_left && !row->op.count_ops)
		ck_assert_uint_gt(lost, 0); /* the stream did leave a tag in a REP */
	size_t excused;
	opf_check_next_min(!row->op.window_every && row->op.count_ops, 1, &excused, what);
	fprintf(stderr,
	        "%s: %zu samples, %zu intervals lost (no_random), %zu resyncs, %zu next_min values "
	        "excused by REPs\n",
	        what, opf_ngot, lost, resyncs, excused);
	pmu_free(p);
	opf_free();
}
END_TEST

static const struct nm_row {
	int line;
	struct pmu_op_config op;
	int reps;
	uint32_t refill;
	int others;
} nm_rows[] = {
    {__LINE__, {.period = 128}, 0, 0, 0},
    {__LINE__, {.period = 16, .no_random = 1}, 0, 0, 0},
    {__LINE__, {.period = 128}, 0, 40, 0},
    {__LINE__, {.period = 128}, 0, 40, 1},
    {__LINE__, {.period = 16, .no_random = 1}, 0, 40, 1},
    {__LINE__, {.period = 128, .window_on = 40, .window_every = 100}, 0, 0, 0},
    {__LINE__, {.period = 16, .no_random = 1, .window_on = 40, .window_every = 100}, 0, 0, 0},
    {__LINE__, {.period = 16, .no_random = 1, .window_on = 5, .window_every = 60}, 0, 0, 0},
    {__LINE__,
     {.period = 16, .count_ops = 1, .no_random = 1, .window_on = 40, .window_every = 100},
     1,
     0,
     0},
    {__LINE__, {.period = 128, .count_ops = 1, .window_on = 200, .window_every = 300}, 1, 40, 1},
    {__LINE__, {.period = 128, .window_on = 300, .window_every = 1000}, 0, 40, 1},
};

/* pmu_op_next_min before every block is at most the next tag's number, on
 * long random streams without REPs (with them, check_walk's rows count the
 * values REP iterations excuse): cycle mode with and without windows, with a
 * refill after every interrupt, and with counters whose PMIs land beside the
 * op samples. */
START_TEST(next_min_is_a_lower_bound)
{
	const struct nm_row *row = &nm_rows[_i];
	struct opf_opts o = {
	    .seed = 300 + (uint64_t)_i, .nsteps = 60000, .reps = row->reps, .cut = 1};
	opf_stream(&o);
	struct pmu_config cfg = {
	    .op = row->op, .seed = 4, .cpu = opf_cpu(), .refill_cycles = row->refill};
	if (row->others) {
		cfg.nctr = 2;
		cfg.ctr[0] = (struct pmu_counter_config){EV_CYCLES, 211, 0};
		cfg.ctr[1] = (struct pmu_counter_config){EV_INSTRUCTIONS, 97, 0};
	}
	struct pmu *p = run(&cfg);
	ck_assert_uint_gt(opf_ngot, 200);
	char what[64];
	snprintf(what, sizeof(what), "row at line %d", row->line);
	size_t excused;
	opf_check_next_min(0, row->reps, &excused, what);
	pmu_free(p);
	opf_free();
}
END_TEST

/* A loop of 128 quarter cycles (32 whole cycles, starting on a whole cycle),
 * from the test's cost table: the whole cycles each instruction adds are
 * 0, 24, 0, 2, 0, 1, 0, 1, 3, 1. */
static const uint16_t loop_off[11] = {0, 2, 5, 7, 11, 14, 15, 19, 23, 25, 27};
static const uint8_t loop_cls[10] = {IC_ALU, IC_DIV,  IC_ALU,  IC_STORE, IC_MUL,
                                     IC_NOP, IC_SIMD, IC_LOAD, IC_OTHER, IC_BRANCH};
static const struct block_info loop_bi = {
    0x600000, 0x60001b, 0x600019, 0x600000, 0, 10, BK_COND, CC_NE, 0, 2, loop_off, loop_cls};
static uint64_t loop_hits[10];

static void on_loop_op(void *ctx, const struct pmu_op_sample *s)
{
	(void)ctx;
	uint32_t j = 0;
	while (j < 10 && loop_bi.start + loop_off[j] != s->ip)
		j++;
	OPF_CHECK(j < 10, "op sample at %#llx, not in the loop", (unsigned long long)s->ip);
	loop_hits[j]++;
}

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

/* Whole cycles each loop instruction adds (loop_bi starts on a whole cycle). */
static void loop_cycles(uint64_t w[10])
{
	uint64_t q = 0, sum = 0;
	for (int j = 0; j < 10; j++) {
		w[j] = ((q + opf_cost[loop_cls[j]]) >> 2) - (q >> 2);
		q += opf_cost[loop_cls[j]];
		sum += w[j];
	}
	ck_assert_uint_eq(q, 128);
	ck_assert_uint_eq(sum, 32);
}

/* Runs the loop until 100,000 op samples (period, seed) and returns the
 * chi-square of the samples per instruction against the shares want (none
 * where want is 0, asserted), with its degrees of freedom in *dof. */
static double loop_chi2(uint64_t period, uint64_t seed, const double want[10], int *dof,
                        uint64_t *lost)
{
	struct pmu_config cfg = {.op = {.period = period}, .seed = seed, .cpu = opf_cpu()};
	struct pmu *p = NULL;
	char msg[200] = "";
	ck_assert_msg(pmu_new(&cfg, (struct pmu_sample_sink){.op_sample = on_loop_op}, &p, msg,
	                      sizeof(msg)) == 0,
	              "%s", msg);
	memset(loop_hits, 0, sizeof(loop_hits));
	struct block_sink sk = pmu_block_sink(p);
	while (pmu_op_samples(p) < 100000)
		sk.whole(sk.ctx, &loop_bi, loop_bi.start, 0, 7, RB_WHOLE_TAKEN | RB_WHOLE_RUN_START);
	double n = (double)pmu_op_samples(p), x2 = 0;
	*dof = -1;
	for (int j = 0; j < 10; j++) {
		if (want[j] == 0) {
			ck_assert_msg(loop_hits[j] == 0, "instruction %d adds no cycle, %llu samples", j,
			              (unsigned long long)loop_hits[j]);
			continue;
		}
		double e = n * want[j];
		x2 += (loop_hits[j] - e) * (loop_hits[j] - e) / e;
		++*dof;
	}
	*lost = pmu_op_lost_tags(p);
	pmu_free(p);
	return x2;
}

/* Sample shares per instruction against exact cycle shares. Each interval
 * counts from the cycle the previous one ran out in and takes 128
 * consecutive values, so where intervals run out is a renewal process over
 * cycles, uniform modulo the loop's 32 cycles in the long run: each sample
 * tags instruction j with probability w_j / 32 (w_j its whole cycles) when no
 * interval can run out twice within one instruction (the shortest, P - 127,
 * is longer than the loop's longest instruction, 24 cycles). So the counts
 * are multinomial: chi-square over the instructions that add cycles below the
 * 0.001 critical value, none on those that add none; on three seeds and two
 * periods, no interval lost. */
START_TEST(cycle_shares_of_a_loop)
{
	uint64_t w[10];
	loop_cycles(w);
	double want[10];
	for (int j = 0; j < 10; j++)
		want[j] = (double)w[j] / 32;
	static const struct {
		uint64_t period, seed;
	} runs[] = {{256, 1}, {256, 2}, {4096, 3}};
	for (size_t r = 0; r < sizeof(runs) / sizeof(runs[0]); r++) {
		int dof;
		uint64_t lost;
		double x2 = loop_chi2(runs[r].period, runs[r].seed, want, &dof, &lost);
		double crit = chi2_critical(dof);
		ck_assert_msg(x2 < crit,
		              "period %llu seed %llu: chi-square %.2f over %d dof, critical %.2f",
		              (unsigned long long)runs[r].period, (unsigned long long)runs[r].seed,
		              x2, dof, crit);
		ck_assert_uint_eq(lost, 0);
		fprintf(stderr, "cycle shares: period %llu seed %llu: chi-square %.2f (%d dof, 0.001: %.2f)\n",
		        (unsigned long long)runs[r].period, (unsigned long long)runs[r].seed, x2, dof,
		        crit);
	}
}
END_TEST

/* Period 128: intervals of 1 to 128 cycles, so two can run out within the
 * DIV's 24 cycles, and the second is lost (one tag in flight): an instruction
 * is tagged when at least one interval runs out in its cycles. For a renewal
 * process with intervals X (here U{1..128}, mean m = 64.5) in its stationary
 * state, the cycles R from a given point to the next run-out have P(R = r) =
 * P(X >= r) / m (renewal theory's forward recurrence time), so instruction j
 * is tagged with probability sum_{r=1}^{w_j} (129 - r) / 128 / m, shares
 * proportional to those. The counts match them (chi-square) and not the cycle
 * shares: what pmu.h documents, the DIV under-sampled. */
START_TEST(short_periods_lose_tags_in_long_instructions)
{
	uint64_t w[10];
	loop_cycles(w);
	double tag[10], sum = 0, by_cycles[10];
	for (int j = 0; j < 10; j++) {
		tag[j] = 0;
		for (uint64_t r = 1; r <= w[j]; r++)
			tag[j] += (129.0 - (double)r) / 128 / 64.5;
		sum += tag[j];
		by_cycles[j] = (double)w[j] / 32;
	}
	for (int j = 0; j < 10; j++)
		tag[j] /= sum;
	for (uint64_t seed = 1; seed <= 2; seed++) {
		int dof;
		uint64_t lost;
		double x2 = loop_chi2(128, seed, tag, &dof, &lost);
		double crit = chi2_critical(dof);
		ck_assert_msg(x2 < crit, "seed %llu: chi-square %.2f over %d dof, critical %.2f",
		              (unsigned long long)seed, x2, dof, crit);
		ck_assert_uint_gt(lost, 1000);
		double x2c = loop_chi2(128, seed, by_cycles, &dof, &lost);
		ck_assert_msg(x2c > crit, "seed %llu: chi-square %.2f against cycle shares",
		              (unsigned long long)seed, x2c);
		fprintf(stderr,
		        "period 128 seed %llu: chi-square %.2f against the renewal shares, %.2f "
		        "against cycle shares (%d dof, 0.001: %.2f), %llu intervals lost\n",
		        (unsigned long long)seed, x2, x2c, dof, crit, (unsigned long long)lost);
	}
}
END_TEST

/* A REP left in the middle, by hand: 3 loop iterations (96 cycles), a store
 * (quarters 384..389: cycle 97) and a REP of 1000 iterations (3000 quarters,
 * to quarter 3389: cycle 847) that does not retire, then 10 iterations;
 * period 64 cycles, no randomness. The count reaches 64 at the loop branch
 * of iteration 2 (cycle 64, tag_to_ret 0), then 64 again at cycle 128, in
 * the REP's iterations: no sample; every 64 cycles after that (192, ...,
 * 832) too, in the REP: 12 intervals lost. The next runs out at cycle 896
 * (a sample's cycle less its tag_to_ret is the cycle at which its count was
 * reached), in the first iterations after the REP. */
START_TEST(rep_left_is_never_sampled)
{
	static const uint16_t s_off[3] = {0, 4, 6};
	static const uint8_t s_cls[2] = {IC_STORE, IC_STRING};
	static struct opf_run srun = {
	    .bi = {0x700000, 0x700006, 0x700004, 0, 1, 2, BK_REP, 0, 0, 2, NULL, NULL}};
	memcpy(srun.off, s_off, sizeof(s_off));
	memcpy(srun.cls, s_cls, sizeof(s_cls));
	srun.bi.off = srun.off;
	srun.bi.cls = srun.cls;
	static struct opf_run lrun;
	lrun.bi = loop_bi;
	memcpy(lrun.off, loop_off, sizeof(loop_off));
	memcpy(lrun.cls, loop_cls, sizeof(loop_cls));
	lrun.bi.off = lrun.off;
	lrun.bi.cls = lrun.cls;
	opf_free();
	opf_nsteps = 14;
	opf_steps = calloc(opf_nsteps, sizeof(*opf_steps));
	ck_assert_ptr_nonnull(opf_steps);
	for (size_t k = 0; k < opf_nsteps; k++)
		opf_steps[k] = (struct opf_step){.run = &lrun,
		                                 .next = loop_bi.start,
		                                 .tid = 7,
		                                 .n = 10,
		                                 .kind = BK_COND,
		                                 .taken = 1,
		                                 .whole = 1};
	opf_steps[3] = (struct opf_step){.run = &srun,
	                                 .next = 0x700004,
	                                 .rep_iters = 1000,
	                                 .tid = 7,
	                                 .n = 1,
	                                 .kind = BK_NONE,
	                                 .rep_left = 1};
	opf_walk_all();
	struct pmu_config cfg = {.op = {.period = 64, .no_random = 1}, .cpu = opf_cpu()};
	struct pmu *p = run(&cfg);
	size_t resyncs;
	ck_assert_uint_eq(check_walk(&cfg.op, "rep left by hand", &resyncs), 12);
	ck_assert_uint_eq(pmu_op_lost_tags(p), 12);
	ck_assert_uint_ge(opf_ngot, 2);
	ck_assert_uint_eq(opf_got[0].s.ip, 0x600019);
	ck_assert_uint_eq(opf_got[0].s.cycle, 64);
	ck_assert_uint_eq(opf_got[0].s.tag_to_ret, 0);
	for (size_t i = 0; i < opf_ngot; i++)
		ck_assert_uint_ne(opf_got[i].s.ip, 0x700004);
	ck_assert_uint_eq(opf_got[1].s.cycle - opf_got[1].s.tag_to_ret, 896);
	ck_assert_uint_eq(opf_got[1].step, 5);
	pmu_free(p);
	opf_free();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmu_op_cycles");
	TCase *tc = tcase_create("pmu_op_cycles");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, samples_follow_the_walk, 0,
	                    (int)(sizeof(walk_rows) / sizeof(walk_rows[0])));
	tcase_add_loop_test(tc, next_min_is_a_lower_bound, 0,
	                    (int)(sizeof(nm_rows) / sizeof(nm_rows[0])));
	tcase_add_test(tc, cycle_shares_of_a_loop);
	tcase_add_test(tc, short_periods_lose_tags_in_long_instructions);
	tcase_add_test(tc, rep_left_is_never_sampled);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
