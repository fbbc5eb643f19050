/* Unit tests of profiler/region_prune: hand-made graphs and weights whose
 * counts, iterations and kept or dropped blocks and regions are worked out by
 * hand in the comments from region_prune.h's rules, and one chain from
 * hand-assembled code through discovery, regions and counts to the selection,
 * its kept addresses read off the encodings. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "profiler/region_prune.h"
#include "tests/unit/run_suite.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MAXB 8
#define MAXE 12
#define MAXR 3
#define MAXI 16 /* instructions per block */
#define OUT RCFG_NO_BLOCK
#define SKIP -1.0 /* an iteration count not checked */

struct tblock {
	uint32_t ninsns;
	int kind;
	double weight;
	uint32_t hops;
};

struct tedge {
	size_t from, to;
	int kind, observed;
	double weight;
};

/* The options of a row, written out in full (DEFAULTS: rprune_options_init's,
 * which the test defaults checks). */
struct topt {
	double cold, iters, loop_share;
	uint64_t insns;
	double min_share;
};
#define DEFAULTS                                                                                   \
	{                                                                                          \
		0.01, 4, 0.10, 8, 0.001                                                            \
	}

struct prune_case {
	int line;
	const char *name;
	double total;
	struct topt o;
	size_t nb, ne;
	struct tblock b[MAXB];
	struct tedge e[MAXE]; /* grouped by from, (kind, to) ascending in a group */
	int wb[MAXB];         /* expected enum rprune_block_why */
	size_t nr;
	int wr[MAXR];     /* expected enum rprune_region_why, by lowest block */
	double wit[MAXR]; /* expected best iterations, or SKIP */
	size_t nip;       /* expected kept instructions */
	double weight;    /* expected kept weight */
};

static uint16_t offs[MAXB][MAXI + 1];

/* The rcfg of a row: block i at 0x1000 + 0x100 i, one-byte instructions. */
static struct rcfg make_graph(struct rcfg_block *blk, struct rcfg_edge *edg,
                              const struct prune_case *c)
{
	memset(blk, 0, MAXB * sizeof(*blk));
	for (size_t i = 0; i < c->nb; i++) {
		ck_assert(c->b[i].ninsns <= MAXI);
		for (uint16_t k = 0; k <= MAXI; k++)
			offs[i][k] = k;
		blk[i] = (struct rcfg_block){.start = 0x1000 + 0x100 * i,
		                             .end = 0x1000 + 0x100 * i + c->b[i].ninsns,
		                             .off = offs[i],
		                             .ninsns = c->b[i].ninsns,
		                             .hops = c->b[i].hops,
		                             .kind = (uint8_t)c->b[i].kind,
		                             .weight = c->b[i].weight,
		                             .first_edge = c->ne};
		blk[i].flags = (uint8_t)((c->b[i].weight > 0 ? RCFG_SAMPLED : 0) |
		                         (c->b[i].kind == BK_RET ? RCFG_EXIT : 0));
	}
	for (size_t i = c->ne; i-- > 0;) {
		const struct tedge *t = &c->e[i];
		edg[i] = (struct rcfg_edge){.from = t->from,
		                            .to = t->to,
		                            .to_addr = t->to == OUT ? 0x9000 : blk[t->to].start,
		                            .kind = (uint8_t)t->kind,
		                            .out = t->to == OUT ? RCFG_OUT_HOPS : RCFG_IN,
		                            .observed = (uint8_t)t->observed,
		                            .weight = t->weight};
		if (t->to == OUT)
			blk[t->from].flags |= RCFG_EXIT;
		blk[t->from].first_edge = i;
		blk[t->from].nedge++;
	}
	return (struct rcfg){.block = blk, .nblock = c->nb, .edge = edg, .nedge = c->ne};
}

/* rgraph, rflow (open entries) and the selection of g. */
static struct rprune *select_of(const struct rcfg *g, double total, const struct rprune_options *o)
{
	char msg[256] = "";
	struct rgraph *rg = NULL;
	int err = rgraph_build(g, &rg, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rgraph_build: %d %s", err, msg);
	struct rflow *f = NULL;
	err = rflow_infer(g, NULL, &f, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rflow_infer: %d %s", err, msg);
	struct rprune *p = NULL;
	err = rprune_select(g, rg, f, total, o, &p, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rprune_select: %d %s", err, msg);
	ck_assert_uint_eq(p->nregion, rg->nregion);
	rflow_free(f);
	rgraph_free(rg);
	return p;
}

static int kept_block(int why)
{
	return why == RPRUNE_B_HOT || why == RPRUNE_B_BRIDGE;
}

static void print_selection(const char *name, const struct rprune *p)
{
	printf("%s: %zu of %zu regions kept, %zu instructions, share %.4f\n", name, p->nkept_region,
	       p->nregion, p->nip, p->share);
	for (size_t r = 0; r < p->nregion; r++)
		printf("  region %zu %s iterations %g insns %llu share %.4f\n", r,
		       rprune_region_why_name(p->region[r].why), p->region[r].iterations,
		       (unsigned long long)p->region[r].ninsns, p->region[r].share);
}

static void check_case(const struct prune_case *c)
{
	struct rcfg_block blk[MAXB];
	struct rcfg_edge edg[MAXE];
	struct rcfg g = make_graph(blk, edg, c);
	struct rprune_options o = {.cold_fraction = c->o.cold,
	                           .min_iterations = c->o.iters,
	                           .loop_share = c->o.loop_share,
	                           .min_insns = c->o.insns,
	                           .min_share = c->o.min_share};
	struct rprune *p = select_of(&g, c->total, &o);
	print_selection(c->name, p);
	for (size_t i = 0; i < c->nb; i++) {
		const struct rprune_block *pb = &p->block[i];
		ck_assert_msg(pb->why == c->wb[i] && pb->kept == kept_block(c->wb[i]),
		              "line %d (%s): block %zu %s kept %d, expected %s", c->line, c->name,
		              i, rprune_block_why_name(pb->why), pb->kept,
		              rprune_block_why_name(c->wb[i]));
	}
	ck_assert_msg(p->nregion == c->nr, "line %d: %zu regions", c->line, p->nregion);
	size_t nkept = 0;
	for (size_t r = 0; r < c->nr; r++) {
		const struct rprune_region *pr = &p->region[r];
		int kept = c->wr[r] == RPRUNE_R_LOOP || c->wr[r] == RPRUNE_R_SHARE;
		nkept += (size_t)kept;
		ck_assert_msg(pr->why == c->wr[r] && pr->kept == kept,
		              "line %d (%s): region %zu %s, expected %s", c->line, c->name, r,
		              rprune_region_why_name(pr->why), rprune_region_why_name(c->wr[r]));
		ck_assert_msg(c->wit[r] == SKIP || pr->iterations == c->wit[r],
		              "line %d: region %zu iterations %g, expected %g", c->line, r,
		              pr->iterations, c->wit[r]);
		/* the per-loop figures hold the chosen loop's, worked out by hand above */
		ck_assert_msg(c->wit[r] == SKIP || pr->loop == RGRAPH_NONE ||
		                  pr->loop_iterations[pr->loop] == c->wit[r],
		              "line %d: region %zu loop %zu iterations %g, expected %g", c->line, r,
		              pr->loop, pr->loop_iterations[pr->loop], c->wit[r]);
	}
	ck_assert_uint_eq(p->nkept_region, nkept);
	ck_assert_msg(p->nip == c->nip && p->weight == c->weight,
	              "line %d: %zu instructions of weight %g, expected %zu, %g", c->line, p->nip,
	              p->weight, c->nip, c->weight);
	ck_assert(p->share == (c->total > 0 ? c->weight / c->total : 0));
	for (size_t i = 1; i < p->nip; i++)
		ck_assert(p->ip[i] > p->ip[i - 1]);
	rprune_free(p);
}

#define B(n, k, w, h)                                                                              \
	{                                                                                          \
		n, k, w, h                                                                         \
	}
#define E(f, t, k)                                                                                 \
	{                                                                                          \
		f, t, k, 0, 0                                                                      \
	}
#define EO(f, t, k, w)                                                                             \
	{                                                                                          \
		f, t, k, 1, w                                                                      \
	}
#define CASE(name, total) __LINE__, name, total

/* Block and region reasons, short. */
#define HOT RPRUNE_B_HOT
#define BRIDGE RPRUNE_B_BRIDGE
#define COLD RPRUNE_B_COLD
#define UNSAMPLED RPRUNE_B_UNSAMPLED
#define DEAD RPRUNE_B_DEAD_END
#define REGION RPRUNE_B_REGION

static const struct prune_case cases[] = {
    /* P (2 insns, 20: 10 times) falls into H (8 insns, 80000: 10000 times),
     * whose jcc went back 9990 and out 10 times to X; X falls to the return T,
     * a chain of 5 insns and weight 20: 4 times. The hottest is H, 1 % of it
     * 100: P and the tail are cold. H's entries 10000 - 9990 = 10, so 1000
     * iterations; its 8 instructions at 0x1100.. are the selection. */
    {CASE("hot loop, cold exit tail", 80040),
     DEFAULTS,
     4,
     4,
     {B(2, BK_NONE, 20, 0), B(8, BK_COND, 80000, 0), B(2, BK_NONE, 20, 0), B(3, BK_RET, 0, 0)},
     {E(0, 1, RCFG_FALL), EO(1, 2, RCFG_FALL, 10), EO(1, 1, RCFG_TAKEN, 9990), E(2, 3, RCFG_FALL)},
     {COLD, HOT, COLD, COLD},
     1,
     {RPRUNE_R_LOOP},
     {1000},
     8,
     80000},
    /* The same with 0.01 %: 1 is the bar, every block is hot. */
    {CASE("cold fraction lowered: the tail is kept", 80040),
     {0.0001, 4, 0.10, 8, 0.001},
     4,
     4,
     {B(2, BK_NONE, 20, 0), B(8, BK_COND, 80000, 0), B(2, BK_NONE, 20, 0), B(3, BK_RET, 0, 0)},
     {E(0, 1, RCFG_FALL), EO(1, 2, RCFG_FALL, 10), EO(1, 1, RCFG_TAKEN, 9990), E(2, 3, RCFG_FALL)},
     {HOT, HOT, HOT, HOT},
     1,
     {RPRUNE_R_LOOP},
     {1000},
     15,
     80040},
    /* A (4 insns, 440: 110) jcc: taken to U, fall to D; U jumps to B (4, 400:
     * 100), B back to A. U and D are explored (hop 1), unsampled, and no
     * equation decides their edges (A's out-edges are two unknowns). U lies on
     * A -> U -> B: a bridge; D is a return hanging off A: dropped. B -> A is
     * B's only edge: 100, so A's entries are 110 - 100 = 10, 11 iterations. */
    {CASE("unsampled bridge kept, unsampled hanger dropped", 840),
     DEFAULTS,
     4,
     4,
     {B(4, BK_COND, 440, 0), B(2, BK_JMP, 0, 1), B(2, BK_RET, 0, 1), B(4, BK_JMP, 400, 0)},
     {E(0, 2, RCFG_FALL), E(0, 1, RCFG_TAKEN), E(1, 3, RCFG_TAKEN), E(3, 0, RCFG_TAKEN)},
     {HOT, BRIDGE, UNSAMPLED, HOT},
     1,
     {RPRUNE_R_LOOP},
     {11},
     10,
     840},
    /* The same with A -> U seen once: U's bound 1 is below 1 % of 110, which
     * says nothing (it may run more), so U is still a bridge, not cold; A -> D
     * is now 110 - 1 = 109, D hot by that bound but a dead end. */
    {CASE("a bound below the bar is no count", 840),
     DEFAULTS,
     4,
     4,
     {B(4, BK_COND, 440, 0), B(2, BK_JMP, 0, 1), B(2, BK_RET, 0, 1), B(4, BK_JMP, 400, 0)},
     {E(0, 2, RCFG_FALL), EO(0, 1, RCFG_TAKEN, 1), E(1, 3, RCFG_TAKEN), E(3, 0, RCFG_TAKEN)},
     {HOT, BRIDGE, DEAD, HOT},
     1,
     {RPRUNE_R_LOOP},
     {11},
     10,
     840},
    /* H (8 insns, 8000: 1000) loops 900 times back and falls to U, so
     * H -> U = 100 and U, unsampled, runs at least 100 times (bound): hot. U's
     * jcc leaves or goes to X, whose jcc was seen leaving 20 + 30 times: X ran
     * 50 times (flow): hot. Neither is sampled nor leads back to H: dead ends.
     * H: 1000 / (1000 - 900) = 10 iterations. */
    {CASE("counted dead ends dropped", 8000),
     DEFAULTS,
     3,
     5,
     {B(8, BK_COND, 8000, 0), B(1, BK_COND, 0, 1), B(2, BK_COND, 0, 2)},
     {E(0, 1, RCFG_FALL), EO(0, 0, RCFG_TAKEN, 900), E(1, OUT, RCFG_FALL), E(1, 2, RCFG_TAKEN),
      EO(2, OUT, RCFG_FALL, 20), EO(2, OUT, RCFG_TAKEN, 30)},
     {HOT, DEAD, DEAD},
     1,
     {RPRUNE_R_LOOP},
     {10},
     8,
     8000},
    /* H (8 insns, 1600: 200) back 100, out 100 to the return E (bound 100, a
     * dead end): 200 / (200 - 100) = 2 iterations per entry, below 4, and
     * 1600 of 100000 is 1.6 %, below 10 %. */
    {CASE("loop of 2 iterations dropped", 100000),
     DEFAULTS,
     2,
     2,
     {B(8, BK_COND, 1600, 0), B(1, BK_RET, 0, 1)},
     {EO(0, 1, RCFG_FALL, 100), EO(0, 0, RCFG_TAKEN, 100)},
     {REGION, DEAD},
     1,
     {RPRUNE_R_ITERATIONS},
     {2},
     0,
     0},
    {CASE("loop of 2 iterations, min_iterations 2: kept", 100000),
     {0.01, 2, 0.10, 8, 0.001},
     2,
     2,
     {B(8, BK_COND, 1600, 0), B(1, BK_RET, 0, 1)},
     {EO(0, 1, RCFG_FALL, 100), EO(0, 0, RCFG_TAKEN, 100)},
     {HOT, DEAD},
     1,
     {RPRUNE_R_LOOP},
     {2},
     8,
     1600},
    /* H (8 insns, 80000: 10000) back 9900, out 100: 100 iterations. The return
     * E is sampled (300: an estimate apart from the edge's), 3 % of H: hot. */
    {CASE("loop of 100 iterations kept", 100000),
     DEFAULTS,
     2,
     2,
     {B(8, BK_COND, 80000, 0), B(1, BK_RET, 300, 1)},
     {EO(0, 1, RCFG_FALL, 100), EO(0, 0, RCFG_TAKEN, 9900)},
     {HOT, HOT},
     1,
     {RPRUNE_R_LOOP},
     {100},
     9,
     80300},
    /* min_iterations 101: the loop no longer keeps it, its 80.3 % share does. */
    {CASE("min_iterations 101: kept by share", 100000),
     {0.01, 101, 0.10, 8, 0.001},
     2,
     2,
     {B(8, BK_COND, 80000, 0), B(1, BK_RET, 300, 1)},
     {EO(0, 1, RCFG_FALL, 100), EO(0, 0, RCFG_TAKEN, 9900)},
     {HOT, HOT},
     1,
     {RPRUNE_R_SHARE},
     {100},
     9,
     80300},
    /* ... and with loop_share 90 % not even that. */
    {CASE("min_iterations 101, loop_share 0.9: dropped", 100000),
     {0.01, 101, 0.90, 8, 0.001},
     2,
     2,
     {B(8, BK_COND, 80000, 0), B(1, BK_RET, 300, 1)},
     {EO(0, 1, RCFG_FALL, 100), EO(0, 0, RCFG_TAKEN, 9900)},
     {REGION, REGION},
     1,
     {RPRUNE_R_ITERATIONS},
     {100},
     0,
     0},
    /* H (8 insns, 8000: 1000) with neither way of its jcc seen: the back edge
     * is undecided, taken as 0, so all 1000 executions count as entries: 1
     * iteration, the lower bound. 8 % of 100000: dropped. The return E has no
     * count and leads to no hot block. */
    {CASE("undecided back edge: 1 iteration at least", 100000),
     DEFAULTS,
     2,
     2,
     {B(8, BK_COND, 8000, 0), B(1, BK_RET, 0, 1)},
     {E(0, 1, RCFG_FALL), E(0, 0, RCFG_TAKEN)},
     {REGION, UNSAMPLED},
     1,
     {RPRUNE_R_ITERATIONS},
     {1},
     0,
     0},
    /* Noise: H's back edge seen 1000 times, as often as H ran: no entry left,
     * the loop iterates without end as far as the estimates tell. E's bound 5
     * is below 10: no count. */
    {CASE("back edges as hot as the header: infinite", 100000),
     DEFAULTS,
     2,
     2,
     {B(8, BK_COND, 8000, 0), B(1, BK_RET, 0, 1)},
     {EO(0, 1, RCFG_FALL, 5), EO(0, 0, RCFG_TAKEN, 1000)},
     {HOT, UNSAMPLED},
     1,
     {RPRUNE_R_LOOP},
     {INFINITY},
     8,
     8000},
    /* A falls into the return B, 6 insns and 600 each: a chain, 100 times.
     * No loop (0 iterations); 1200 of 2000 is 60 %, above 10 %. */
    {CASE("straight line above the share", 2000),
     DEFAULTS,
     2,
     1,
     {B(6, BK_NONE, 600, 0), B(6, BK_RET, 600, 0)},
     {E(0, 1, RCFG_FALL)},
     {HOT, HOT},
     1,
     {RPRUNE_R_SHARE},
     {0},
     12,
     1200},
    /* ... of 100000 it is 1.2 %. */
    {CASE("straight line below the share", 100000),
     DEFAULTS,
     2,
     1,
     {B(6, BK_NONE, 600, 0), B(6, BK_RET, 600, 0)},
     {E(0, 1, RCFG_FALL)},
     {REGION, REGION},
     1,
     {RPRUNE_R_ITERATIONS},
     {0},
     0,
     0},
    /* Three regions: the loop of 100 iterations; the return R alone (4 insns,
     * 400): fewer than 8 instructions; the return S alone (8 insns, 8): 0.008 %
     * of 100000, below 0.1 %. */
    {CASE("tiny regions dropped", 100000),
     DEFAULTS,
     4,
     2,
     {B(8, BK_COND, 80000, 0), B(1, BK_RET, 300, 1), B(4, BK_RET, 400, 0), B(8, BK_RET, 8, 0)},
     {EO(0, 1, RCFG_FALL, 100), EO(0, 0, RCFG_TAKEN, 9900)},
     {HOT, HOT, REGION, REGION},
     3,
     {RPRUNE_R_LOOP, RPRUNE_R_FEW_INSNS, RPRUNE_R_LOW_SHARE},
     {100, 0, 0},
     9,
     80300},
    /* min_insns 4, min_share 0.001 %, loop_share 0.4 %: R (0.4 %) is kept for
     * its share, S (0.008 %) is no longer tiny but has no loop. */
    {CASE("tiny regions, thresholds lowered", 100000),
     {0.01, 4, 0.004, 4, 0.00001},
     4,
     2,
     {B(8, BK_COND, 80000, 0), B(1, BK_RET, 300, 1), B(4, BK_RET, 400, 0), B(8, BK_RET, 8, 0)},
     {EO(0, 1, RCFG_FALL, 100), EO(0, 0, RCFG_TAKEN, 9900)},
     {HOT, HOT, HOT, REGION},
     3,
     {RPRUNE_R_LOOP, RPRUNE_R_SHARE, RPRUNE_R_ITERATIONS},
     {100, 0, 0},
     13,
     80700},
};

START_TEST(hand_made)
{
	check_case(&cases[_i]);
}
END_TEST

/* The defaults the rows call DEFAULTS. */
START_TEST(defaults)
{
	struct rprune_options o;
	rprune_options_init(&o);
	struct topt d = DEFAULTS;
	ck_assert(o.cold_fraction == d.cold && o.min_iterations == d.iters &&
	          o.loop_share == d.loop_share && o.min_insns == d.insns &&
	          o.min_share == d.min_share);
}
END_TEST

/* Options out of range and inputs that are not one graph's are refused. */
START_TEST(bad_input)
{
	const struct prune_case *c = &cases[0];
	struct rcfg_block blk[MAXB];
	struct rcfg_edge edg[MAXE];
	struct rcfg g = make_graph(blk, edg, c);
	char msg[256] = "";
	struct rgraph *rg = NULL;
	struct rflow *f = NULL;
	ck_assert_int_eq(rgraph_build(&g, &rg, msg, sizeof(msg)), 0);
	ck_assert_int_eq(rflow_infer(&g, NULL, &f, msg, sizeof(msg)), 0);
	struct rprune *p = (struct rprune *)1;
	struct rprune_options o;
	double bad[] = {-0.1, 1.5, NAN};
	for (size_t i = 0; i < N(bad); i++) {
		rprune_options_init(&o);
		o.cold_fraction = bad[i];
		ck_assert_int_eq(rprune_select(&g, rg, f, 1, &o, &p, msg, sizeof(msg)),
		                 PMUSIM_ERR_ARG);
		ck_assert_ptr_null(p);
		rprune_options_init(&o);
		o.min_share = bad[i];
		ck_assert_int_eq(rprune_select(&g, rg, f, 1, &o, &p, msg, sizeof(msg)),
		                 PMUSIM_ERR_ARG);
		rprune_options_init(&o);
		o.loop_share = bad[i];
		ck_assert_int_eq(rprune_select(&g, rg, f, 1, &o, &p, msg, sizeof(msg)),
		                 PMUSIM_ERR_ARG);
	}
	rprune_options_init(&o);
	o.min_iterations = NAN;
	ck_assert_int_eq(rprune_select(&g, rg, f, 1, &o, &p, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	/* counts of another graph: one block fewer */
	f->nblock--;
	ck_assert_int_eq(rprune_select(&g, rg, f, 1, NULL, &p, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	f->nblock++;
	printf("bad input: %s\n", msg);
	/* a region holding a block twice */
	size_t keep = rg->region[0].block[1];
	rg->region[0].block[1] = rg->region[0].block[0];
	ck_assert_int_eq(rprune_select(&g, rg, f, 1, NULL, &p, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	rg->region[0].block[1] = keep;
	ck_assert_int_eq(rprune_select(&g, rg, f, 1, NULL, &p, msg, sizeof(msg)), 0);
	rprune_free(p);
	rflow_free(f);
	rgraph_free(rg);
}
END_TEST

/* The cover is the kept instructions, in the form region_overlap_of takes:
 * row "hot loop, cold exit tail" keeps H's 8 at 0x1100 .. 0x1107; against
 * the whole loop region (P's 0x1000, 0x1001 too) weighted 1 each of 10, the
 * overlap is 8 of 10. */
START_TEST(cover)
{
	const struct prune_case *c = &cases[0];
	struct rcfg_block blk[MAXB];
	struct rcfg_edge edg[MAXE];
	struct rcfg g = make_graph(blk, edg, c);
	struct rprune *p = select_of(&g, c->total, NULL);
	ck_assert_uint_eq(p->nip, 8);
	for (size_t i = 0; i < 8; i++)
		ck_assert_uint_eq(p->ip[i], 0x1100 + i);
	static const uint64_t all[] = {0x1000, 0x1001, 0x1100, 0x1101, 0x1102,
	                               0x1103, 0x1104, 0x1105, 0x1106, 0x1107};
	struct hot_ip w[N(all)];
	for (size_t i = 0; i < N(all); i++)
		w[i] = (struct hot_ip){all[i], 1};
	struct hot_code exact = {.ip = w, .nip = N(w), .total = 10};
	struct region_cover a = rprune_cover(p), b = {all, N(all)};
	struct region_overlap ov;
	ck_assert_int_eq(region_overlap_of(&a, &b, &exact, &ov), 0);
	ck_assert(ov.both == 8 && ov.either == 10 && ov.jaccard == 0.8 && ov.share_a == 0.8);
	rprune_free(p);
}
END_TEST

/* The whole chain on hand-assembled code:
 * 1002: 48 ff c0    inc rax        <- loop head H, 8 insns
 * 1005: 48 01 c3    add rbx, rax
 * 1008: 48 31 da    xor rdx, rbx
 * 100b: 90          nop
 * 100c: 90          nop
 * 100d: 90          nop
 * 100e: 48 39 c8    cmp rax, rcx
 * 1011: 75 ef       jne 1002       taken 1990, fall 10
 * 1013: 48 85 db    test rbx, rbx  X, 2 insns, 10 each
 * 1016: 74 01       je 1019        taken 0, fall 10
 * 1018: c3          ret            Y, 10
 * 1019: c3          ret            Z, unsampled, one hop away
 * (1000: 31 c0, xor eax, eax before the loop: nothing explored reaches it.)
 * H runs 2000 times; X and Y 10, under 1 % of it: cold. Z: no count, no path
 * back to hot code: unsampled. H's entries 2000 - 1990 = 10: 200 iterations.
 * Kept: H's eight instructions; 16000 of 16030. */
static const uint8_t chain_code[] = {0x31, 0xc0, 0x48, 0xff, 0xc0, 0x48, 0x01, 0xc3, 0x48,
                                     0x31, 0xda, 0x90, 0x90, 0x90, 0x48, 0x39, 0xc8, 0x75,
                                     0xef, 0x48, 0x85, 0xdb, 0x74, 0x01, 0xc3, 0xc3};
static const uint64_t chain_kept[] = {0x1002, 0x1005, 0x1008, 0x100b,
                                      0x100c, 0x100d, 0x100e, 0x1011};

START_TEST(whole_chain)
{
	struct hot_ip ip[] = {{0x1002, 2000}, {0x1005, 2000}, {0x1008, 2000}, {0x100b, 2000},
	                      {0x100c, 2000}, {0x100d, 2000}, {0x100e, 2000}, {0x1011, 2000},
	                      {0x1013, 10},   {0x1016, 10},   {0x1018, 10}};
	struct hot_branch br[] = {{0x1011, 1990, 10}, {0x1016, 0, 10}};
	struct hot_code hot = {.ip = ip, .nip = N(ip), .branch = br, .nbranch = N(br)};
	for (size_t i = 0; i < N(ip); i++)
		hot.total += ip[i].weight;
	struct binary *bin = NULL;
	ck_assert_int_eq(binary_from_code(chain_code, sizeof(chain_code), 0x1000, &bin), 0);
	char msg[256] = "";
	struct rcfg *g = NULL;
	int err = rcfg_discover(bin, &hot, NULL, &g, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rcfg_discover: %d %s", err, msg);
	ck_assert_uint_eq(g->nblock, 4); /* H, X, Y, Z */
	struct rprune *p = select_of(g, hot.total, NULL);
	print_selection("whole chain", p);
	static const int why[] = {HOT, COLD, COLD, UNSAMPLED};
	for (size_t i = 0; i < N(why); i++)
		ck_assert_msg(p->block[i].why == why[i], "block %#llx %s",
		              (unsigned long long)g->block[i].start,
		              rprune_block_why_name(p->block[i].why));
	ck_assert_uint_eq(p->nregion, 1);
	ck_assert(p->region[0].why == RPRUNE_R_LOOP && p->region[0].iterations == 200);
	ck_assert_uint_eq(p->nip, N(chain_kept));
	for (size_t i = 0; i < N(chain_kept); i++)
		ck_assert_msg(p->ip[i] == chain_kept[i], "ip[%zu] %#llx", i,
		              (unsigned long long)p->ip[i]);
	ck_assert(hot.total == 16030 && p->weight == 16000 && p->share == 16000.0 / 16030);
	rprune_free(p);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

static Suite *prune_suite(void)
{
	Suite *s = suite_create("region_prune");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, hand_made, 0, (int)N(cases));
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, cover);
	tcase_add_test(tc, whole_chain);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(prune_suite());
}
