/* Where a sampling counter's next period starts (pmu.h: reload at the overflow
 * or by the PMI handler) and each counter's own --delta stream, checked on a
 * hand-made stream of straight-line code whose every instruction has its own
 * address. The reference is this file's own walk of the stream: the program
 * cycle at the end of every instruction, summed from the default model's cost
 * table (cpu_model.c: class costs in quarter cycles; a taken jmp costs
 * taken_branch_q, the front-end redirect, and never mispredicts). A sample's
 * IP names its instruction, so its program cycle; nothing is taken from the
 * PMU's arithmetic but the samples (IP, period, time) it hands out. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "pmu_model/pmu.h"
#include "tests/unit/run_suite.h"

#define BASE 0x10000000ULL
#define RUN 16        /* instructions per block: 15 of mixed classes and a jmp */
#define NPAT 61       /* class patterns the blocks cycle through */
#define NBLOCKS 80000
#define NINSNS ((size_t)NBLOCKS * RUN)
#define P 400         /* cycles period */
#define DELTA 255
#define REFILL 50

static uint16_t off[RUN + 1];
static uint8_t cls[NPAT][RUN];
static struct block_info *blocks;
static uint64_t *end_q; /* program quarter cycles at the end of instruction k (refill left out) */

/* The test's own pseudo-random classes (an LCG: not the PMU's generator). */
static uint32_t lcg(uint32_t *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 16;
}

static uint8_t pick_class(uint32_t *s)
{
	uint32_t r = lcg(s) % 100;
	return r < 35 ? IC_ALU : r < 55 ? IC_LOAD : r < 65 ? IC_STORE : r < 75 ? IC_MUL : r < 85 ? IC_SIMD
	       : r < 92 ? IC_NOP : r < 96 ? IC_DIV : IC_OTHER;
}

/* Blocks at BASE + 64 b, each 16 four-byte instructions ending in a jmp to the
 * next block; block b has pattern (b * 7) % NPAT (its id: the same pattern,
 * the same run cost). */
static void make_stream(void)
{
	const struct cpu_model *m = cpu_model_default();
	uint32_t s = 12345;
	for (int i = 0; i <= RUN; i++)
		off[i] = (uint16_t)(4 * i);
	for (int k = 0; k < NPAT; k++) {
		for (int i = 0; i < RUN - 1; i++)
			cls[k][i] = pick_class(&s);
		cls[k][RUN - 1] = IC_BRANCH;
	}
	blocks = calloc(NBLOCKS, sizeof(*blocks));
	end_q = malloc(NINSNS * sizeof(*end_q));
	ck_assert(blocks && end_q);
	uint64_t q = 0;
	for (size_t b = 0; b < NBLOCKS; b++) {
		uint32_t pat = (uint32_t)(b * 7 % NPAT);
		uint64_t start = BASE + 64 * b;
		blocks[b] = (struct block_info){start, start + 64, start + 60, start + 64, pat, RUN, BK_JMP, 0, 0, 4,
						off, cls[pat]};
		for (int i = 0; i < RUN; i++) {
			q += i == RUN - 1 ? m->taken_branch_q : m->cost_q[cls[pat][i]];
			end_q[b * RUN + (size_t)i] = q;
		}
	}
}

static void free_stream(void)
{
	free(blocks);
	free(end_q);
}

/* Program cycles at the end of instruction k (the cycles counter's whole cycles). */
static uint64_t cyc(size_t k)
{
	return end_q[k] >> 2;
}

static size_t index_of(uint64_t ip)
{
	ck_assert_uint_ge(ip, BASE);
	ck_assert_uint_eq((ip - BASE) % 4, 0);
	ck_assert_uint_lt((ip - BASE) / 4, NINSNS);
	return (size_t)((ip - BASE) / 4);
}

/* The instruction in which program cycle o is reached: end_cyc(k-1) < o <= end_cyc(k). */
static size_t insn_at_cycle(uint64_t o)
{
	size_t lo = 0, hi = NINSNS;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cyc(mid) >= o)
			hi = mid;
		else
			lo = mid + 1;
	}
	return lo;
}

struct smp {
	uint32_t counter, nbr;
	uint64_t ip, cycle, period;
	struct lbr_entry br[8];
};

static struct smp *got;
static size_t ngot, capgot;

static void on_sample(void *ctx, const struct pmu_sample *s)
{
	(void)ctx;
	if (ngot == capgot) {
		capgot = capgot ? 2 * capgot : 8192;
		got = realloc(got, capgot * sizeof(*got));
		ck_assert_ptr_nonnull(got);
	}
	struct smp *g = &got[ngot++];
	*g = (struct smp){s->counter, s->nbr, s->ip, s->cycle, s->period, {{0}}};
	ck_assert_uint_le(s->nbr, 8);
	memcpy(g->br, s->br, s->nbr * sizeof(*s->br));
}

/* Runs the whole stream through a PMU of cfg (blocks in their whole-run form,
 * as the block stream hands most of them over); the samples are in got. */
static struct pmu *run_stream(const struct pmu_config *cfg)
{
	struct pmu *p = NULL;
	char msg[200] = "";
	ngot = 0;
	ck_assert_msg(pmu_new(cfg, (struct pmu_sample_sink){.sample = on_sample}, &p, msg, sizeof(msg)) == 0, "%s", msg);
	struct block_sink s = pmu_block_sink(p);
	for (size_t b = 0; b < NBLOCKS; b++)
		s.whole(s.ctx, &blocks[b], blocks[b].target, 0, 7, RB_WHOLE_TAKEN | RB_WHOLE_RUN_START);
	return p;
}

/* The spacing rules to check samples against. */
enum rule {
	AT_OVERFLOW,  /* overflow i+1 = overflow i + P + R(i+1) - A */
	AT_INTERRUPT, /* overflow i+1 = PMI i + P + R(i+1) - A */
};

/* Checks every sample of a one-counter cycles recording against rule: where
 * its overflow lies (the cycle the rule gives must fall in the instruction
 * `skid` instructions before the sample's, or, skid in cycles, the sample's
 * instruction must be the first to end at or after the overflowing
 * instruction's end + skid cycles), that its period is P + R with R in
 * 0..DELTA and its time the PMI's cycle on the clock (program cycles + the
 * refills before it). Returns the samples that break a rule; *ovf_last: the
 * program cycle of the last overflow; *spacings: the sum of the program
 * cycles between overflows (from the start to the first, then S(i) + P +
 * R(i+1) - A or P + R(i+1) - A). */
static size_t spacing_mismatches(enum rule rule, uint64_t skid, int skid_cycles, uint64_t *ovf_last,
				 uint64_t *spacings)
{
	size_t bad = 0;
	uint64_t o = 0, pmi = 0; /* the previous overflow and its PMI, program cycles */
	*spacings = 0;
	for (size_t i = 0; i < ngot; i++) {
		const struct smp *s = &got[i];
		size_t k = index_of(s->ip);
		uint64_t refill = i ? REFILL : 0; /* charged after the previous PMI, counted in this period */
		uint64_t skid_cyc = rule == AT_INTERRUPT && i ? pmi - o : 0; /* S(i): the counter stopped */
		*spacings += skid_cyc + s->period - refill;
		o += skid_cyc + s->period - refill;
		size_t j = insn_at_cycle(o);
		int ok = s->period >= P && s->period <= P + DELTA && s->cycle == cyc(k) + i * REFILL;
		if (!skid_cycles) {
			ok &= j + skid == k;
		} else {
			size_t first = j; /* the first instruction ending skid cycles after j ends */
			while (first < NINSNS && end_q[first] < end_q[j] + 4 * skid)
				first++;
			ok &= first == k;
		}
		bad += !ok;
		pmi = cyc(k);
	}
	*ovf_last = o;
	return bad;
}

static const struct {
	int line;
	enum pmu_reload reload;
	uint64_t skid;
	int skid_cycles;
} spacing_rows[] = {
	{__LINE__, PMU_RELOAD_INTERRUPT, 3, 0},
	{__LINE__, PMU_RELOAD_INTERRUPT, 20, 1},
	{__LINE__, PMU_RELOAD_OVERFLOW, 3, 0},
	{__LINE__, PMU_RELOAD_OVERFLOW, 20, 1},
};

/* Every sample where its reload's rule puts it (0 mismatches on thousands),
 * and not where the other rule would (the check can fail). The spacings add
 * up: the last overflow plus the cycles after it are the program's cycles,
 * which the cycles counter counts with each PMI's refill on top. */
START_TEST(spacing_follows_the_reload)
{
	const int r = _i;
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_CYCLES, P}}, .delta = DELTA, .skid = spacing_rows[r].skid,
				 .skid_in_cycles = spacing_rows[r].skid_cycles, .refill_cycles = REFILL,
				 .reload = spacing_rows[r].reload, .seed = 11};
	make_stream();
	struct pmu *p = run_stream(&cfg);
	enum rule own = cfg.reload == PMU_RELOAD_INTERRUPT ? AT_INTERRUPT : AT_OVERFLOW;
	enum rule other = own == AT_INTERRUPT ? AT_OVERFLOW : AT_INTERRUPT;
	uint64_t last, sum, ignored[2];
	size_t bad = spacing_mismatches(own, cfg.skid, cfg.skid_in_cycles, &last, &sum);
	size_t bad_other = spacing_mismatches(other, cfg.skid, cfg.skid_in_cycles, &ignored[0], &ignored[1]);
	uint64_t program = cyc(NINSNS - 1);
	printf("check_pmu_reload: row at line %d (%s, skid %llu%s): %zu samples, %zu mismatches; the other "
	       "rule: %zu\n", spacing_rows[r].line, own == AT_INTERRUPT ? "interrupt" : "overflow",
	       (unsigned long long)cfg.skid, cfg.skid_in_cycles ? "c" : "", ngot, bad, bad_other);
	ck_assert_uint_ge(ngot, 4000);
	ck_assert_msg(bad == 0, "row at line %d: %zu of %zu samples off", spacing_rows[r].line, bad, ngot);
	ck_assert_msg(bad_other > ngot / 2, "row at line %d: the other rule fits %zu of %zu", spacing_rows[r].line,
		      ngot - bad_other, ngot);
	/* the spacings and the cycles after the last overflow are the program's
	 * (the walk's) cycles, which the clock counts with every PMI's refill */
	ck_assert_uint_lt(last, program);
	ck_assert_uint_eq(sum + (program - last), program);
	ck_assert_uint_eq(pmu_count(p, 0), program + ngot * REFILL);
	pmu_free(p);
	free_stream();
}
END_TEST

/* Reload at the interrupt with several counters: cycles (P) and instructions
 * (P - 50), skid 3 instructions. Each counter's overflow lies its period after
 * the PMI that last reloaded it, counted in its own events (cycles on the
 * clock, which carries every PMI's refill); a PMI lands 3 instructions after
 * the first overflow since the last one, and every counter that overflowed by
 * then is in it once. The counter that did not overflow goes on counting. */
START_TEST(several_counters_in_one_interrupt)
{
	struct pmu_config cfg = {.nctr = 2, .ctr = {{EV_CYCLES, P}, {EV_INSTRUCTIONS, P - 50}}, .delta = DELTA,
				 .skid = 3, .refill_cycles = REFILL, .reload = PMU_RELOAD_INTERRUPT, .seed = 5};
	make_stream();
	struct pmu *p = run_stream(&cfg);
	/* the clock at the end of instruction k: program cycles + a refill per
	 * PMI at an earlier instruction (samples of one PMI share its IP, and
	 * every instruction runs once) */
	uint64_t *clk = malloc(NINSNS * sizeof(*clk));
	ck_assert_ptr_nonnull(clk);
	size_t npmi = 0, next = 0;
	for (size_t k = 0; k < NINSNS; k++) {
		clk[k] = cyc(k) + npmi * REFILL;
		for (; next < ngot && index_of(got[next].ip) == k; next++)
			npmi += next == 0 || got[next].ip != got[next - 1].ip;
	}
	ck_assert_uint_eq(next, ngot);
	size_t shared = 0, bad = 0;
	uint64_t reload_clock = 0; /* the cycles counter's last reload, on the clock */
	size_t reload_insn = 0;    /* the instructions counter's: instructions retired before it */
	for (size_t i = 0; i < ngot;) {
		size_t k = index_of(got[i].ip), first_ovf = NINSNS, n = 0;
		int seen[2] = {0, 0};
		for (; i < ngot && index_of(got[i].ip) == k; i++, n++) {
			const struct smp *s = &got[i];
			ck_assert_uint_lt(s->counter, 2);
			bad += seen[s->counter]++ != 0; /* once per PMI */
			size_t j;
			if (s->counter == 0) { /* the first instruction at whose end the clock reaches it */
				uint64_t target = reload_clock + s->period;
				size_t lo = 0, hi = NINSNS;
				while (lo < hi) {
					size_t mid = lo + (hi - lo) / 2;
					if (clk[mid] >= target)
						hi = mid;
					else
						lo = mid + 1;
				}
				j = lo;
			} else {
				j = reload_insn + s->period - 1;
			}
			first_ovf = j < first_ovf ? j : first_ovf;
			bad += j > k || k > j + 3; /* its PMI: its own, or one already pending */
		}
		bad += first_ovf + 3 != k;
		shared += n > 1;
		if (seen[0]) /* reloaded at this PMI; the other counter counts on */
			reload_clock = clk[k];
		if (seen[1])
			reload_insn = k + 1;
	}
	printf("check_pmu_reload: two counters: %zu samples at %zu PMIs (%zu with both), %zu mismatches\n", ngot,
	       npmi, shared, bad);
	ck_assert_uint_ge(ngot, 8000);
	ck_assert_uint_gt(shared, 20);
	ck_assert_uint_eq(bad, 0);
	free(clk);
	pmu_free(p);
	free_stream();
}
END_TEST

/* A cycles counter of period 3 cycles over two REPs of 40 iterations (store 1
 * cycle, REP 41 cycles each): reloaded at the overflow it overflows 14 times
 * in each REP (one PMI, a sample per overflow); reloaded at the interrupt it
 * stops at its first overflow, so each REP gives one sample of period 3, at
 * the REP, and the next period starts at the PMI after it. */
START_TEST(stopped_counter_overflows_once)
{
	static const uint16_t off_s[] = {0, 4, 6};
	static const uint8_t cls_s[] = {IC_STORE, IC_STRING};
	static const struct block_info rep = {0x403000, 0x403006, 0x403004, 0, 0, 2, BK_REP, 0, 0, 2, off_s, cls_s};
	const struct cpu_model *m = cpu_model_default();
	ck_assert_uint_eq(m->cost_q[IC_STORE] + m->cost_q[IC_STRING] + 40 * m->rep_iter_q, 168);
	for (int mode = 0; mode < 2; mode++) {
		struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_CYCLES, 3}},
					 .reload = mode ? PMU_RELOAD_INTERRUPT : PMU_RELOAD_OVERFLOW};
		struct pmu *p = NULL;
		char msg[200];
		ngot = 0;
		ck_assert_int_eq(pmu_new(&cfg, (struct pmu_sample_sink){.sample = on_sample}, &p, msg, sizeof(msg)), 0);
		struct block_sink sk = pmu_block_sink(p);
		struct retired_block rb = {&rep, 0x403006, 40, 7, 2, BK_REP, 0, 1, 0, 40, 0, 0, RB_REP_RAN};
		sk.retire(sk.ctx, &rb);
		ck_assert_uint_eq(ngot, mode ? 1 : 14);
		sk.retire(sk.ctx, &rb);
		ck_assert_uint_eq(pmu_count(p, 0), 84);
		ck_assert_uint_eq(ngot, mode ? 2 : 28);
		for (size_t i = 0; i < ngot; i++) {
			ck_assert_uint_eq(got[i].ip, 0x403004);
			ck_assert_uint_eq(got[i].period, 3);
		}
		if (mode) { /* reloaded at cycle 42 (the first REP's end): overflow at 45, PMI at 84 */
			ck_assert_uint_eq(got[0].cycle, 42);
			ck_assert_uint_eq(got[1].cycle, 84);
		}
		pmu_free(p);
	}
}
END_TEST

/* Frequency mode reloaded at the interrupt: the period is adapted from the
 * events and cycles counted since the last reload, not the stopped skid. A
 * cycles counter asked for 2e9 / 300 samples per second of the 2 GHz clock
 * counts 300 cycles in 300 counting cycles: its period stays 300 through a
 * skid of 20 cycles and a refill of 50 (counted cycles both). */
START_TEST(frequency_mode_adapts_at_the_reload)
{
	struct pmu_config cfg = {.nctr = 1, .ctr = {{EV_CYCLES, 0, 2000000000 / 300}}, .skid = 20,
				 .skid_in_cycles = 1, .refill_cycles = REFILL, .reload = PMU_RELOAD_INTERRUPT};
	ck_assert_uint_eq(cpu_model_default()->mhz, 2000);
	make_stream();
	struct pmu *p = run_stream(&cfg);
	ck_assert_uint_ge(ngot, 4000);
	for (size_t i = 0; i < ngot; i++)
		ck_assert_msg(got[i].period == 300, "sample %zu: period %llu", i, (unsigned long long)got[i].period);
	pmu_free(p);
	free_stream();
}
END_TEST

/* The samples of counter c (a copy). */
static struct smp *samples_of(uint32_t c, size_t *n)
{
	struct smp *out = malloc((ngot + 1) * sizeof(*out));
	ck_assert_ptr_nonnull(out);
	*n = 0;
	for (size_t i = 0; i < ngot; i++)
		if (got[i].counter == c)
			out[(*n)++] = got[i];
	return out;
}

static int same_sample(const struct smp *a, const struct smp *b)
{
	return a->ip == b->ip && a->cycle == b->cycle && a->period == b->period && a->nbr == b->nbr &&
	       memcmp(a->br, b->br, a->nbr * sizeof(a->br[0])) == 0;
}

/* Each counter draws its deltas from its own stream, chosen by its event and
 * its index among that event's counters: cycles alone, and cycles second
 * after an instructions counter, give the same samples (IP, time, period,
 * LBR) with skid 0 and refill 0, in both reload modes; the instructions
 * counter too. With a refill the other counter's PMIs move the samples but
 * not the periods. A second cycles counter draws another stream. */
START_TEST(counters_draw_their_own_periods)
{
	make_stream();
	for (int mode = 0; mode < 2; mode++) {
		enum pmu_reload rl = mode ? PMU_RELOAD_INTERRUPT : PMU_RELOAD_OVERFLOW;
		struct pmu_config one = {.nctr = 1, .ctr = {{EV_CYCLES, P}}, .delta = DELTA, .lbr_depth = 8,
					 .lbr_filter = LBR_F_ANY, .reload = rl, .seed = 3};
		struct pmu_config ins = one, two = one, cc = one;
		ins.ctr[0] = (struct pmu_counter_config){EV_INSTRUCTIONS, P - 50, 0};
		two.nctr = 2;
		two.ctr[0] = ins.ctr[0];
		two.ctr[1] = one.ctr[0];
		cc.nctr = 2;
		cc.ctr[1] = one.ctr[0];
		size_t na, nb, ni, nj, nc;
		pmu_free(run_stream(&one));
		struct smp *a = samples_of(0, &na);
		pmu_free(run_stream(&ins));
		struct smp *i1 = samples_of(0, &ni);
		pmu_free(run_stream(&two));
		struct smp *b = samples_of(1, &nb), *i2 = samples_of(0, &nj);
		ck_assert_uint_ge(na, 4000);
		ck_assert_uint_eq(na, nb);
		ck_assert_uint_eq(ni, nj);
		size_t differ = 0;
		for (size_t i = 0; i < na; i++)
			differ += !same_sample(&a[i], &b[i]);
		for (size_t i = 0; i < ni; i++)
			differ += !same_sample(&i1[i], &i2[i]);
		ck_assert_uint_eq(differ, 0);
		/* a refill: the instructions counter's PMIs add cycles to the cycles counter's periods */
		two.refill_cycles = 20;
		pmu_free(run_stream(&two));
		free(b);
		b = samples_of(1, &nb);
		size_t moved = 0, periods = 0, n = na < nb ? na : nb;
		for (size_t i = 0; i < n; i++) {
			moved += a[i].ip != b[i].ip;
			periods += a[i].period != b[i].period;
		}
		ck_assert_uint_gt(moved, n / 2);
		ck_assert_uint_eq(periods, 0);
		/* two cycles counters: the first draws what it draws alone, the second another stream */
		pmu_free(run_stream(&cc));
		struct smp *c0 = samples_of(0, &nc), *c1 = samples_of(1, &nb);
		ck_assert_uint_eq(nc, na);
		periods = 0;
		for (size_t i = 0; i < na; i++)
			differ += !same_sample(&a[i], &c0[i]);
		for (size_t i = 0; i < n && i < nb; i++)
			periods += c0[i].period == c1[i].period;
		ck_assert_uint_eq(differ, 0);
		ck_assert_uint_lt(periods, n / 50); /* agreeing by chance: 1 in 256 */
		free(a), free(b), free(i1), free(i2), free(c0), free(c1);
	}
	free_stream();
}
END_TEST

int main(void)
{
	Suite *s = suite_create("pmu_reload");
	TCase *tc = tcase_create("pmu_reload");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, spacing_follows_the_reload, 0, (int)(sizeof(spacing_rows) / sizeof(spacing_rows[0])));
	tcase_add_test(tc, several_counters_in_one_interrupt);
	tcase_add_test(tc, stopped_counter_overflows_once);
	tcase_add_test(tc, frequency_mode_adapts_at_the_reload);
	tcase_add_test(tc, counters_draw_their_own_periods);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
