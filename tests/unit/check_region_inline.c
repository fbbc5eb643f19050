/* Unit tests of profiler/region_inline: hand-made graphs and weights run
 * through rgraph_build, rflow_infer and rprune_select, whose call sites (order,
 * reasons), clones (blocks, scaled counts, scale, instructions, weight), region
 * totals and cover are worked out by hand in the comments from the rules of
 * region_inline.h (and region_prune.h for the counts and kept regions), and
 * one chain from hand-assembled code, its cover read off the encodings.
 *
 * Layout of every table: block i at 0x1000 + 0x100 i, one-byte instructions,
 * so block i's call (its last instruction) is at 0x1000 + 0x100 i + n - 1 and
 * returns to 0x1000 + 0x100 i + n for n instructions. A block's count is its
 * weight over its instructions (no fall-through chain pools two blocks here
 * unless said). */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "profiler/region_inline.h"
#include "tests/unit/run_suite.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MAXB 12
#define MAXE 12
#define MAXI 8 /* instructions per block */
#define MAXS 6
#define MAXC 4
#define MAXR 4
#define MAXK 4    /* blocks per clone */
#define MAXCOV 10 /* address ranges of a cover */
#define NONE RINLINE_NONE
#define AT(i) (0x1000 + 0x100 * (uint64_t)(i))

struct tblock {
	uint32_t ninsns;
	int kind;
	double weight;
	uint64_t callee;
};

struct tedge {
	size_t from, to;
	int kind, observed;
	double weight;
};

/* Inlining options of a row, in full (DEFAULTS: rinline_options_init's, which
 * the test defaults checks). */
struct topt {
	unsigned depth;
	uint64_t callee_insns, region_insns;
	double min_call, cold;
};
#define DEFAULTS                                                                                   \
	{                                                                                          \
		2, 200, 1000, 0.01, 0.01                                                           \
	}

struct xsite {
	size_t region, block, parent;
	unsigned depth;
	uint64_t call, ret, callee;
	double count;
	int why;
	size_t clone;
};

struct xclone {
	size_t site, entry;
	unsigned depth;
	size_t nblock;
	size_t block[MAXK];
	double count[MAXK];
	double scale;
	uint64_t ninsns;
	double weight;
};

struct xregion {
	int kept; /* by rprune, worked out from region_prune.h */
	size_t nsite;
	size_t site[MAXS];
	uint64_t insns;
	double weight;
};

/* Consecutive addresses of the cover: addr, addr + 1, .. (n of them). */
struct xrange {
	uint64_t addr;
	int n;
};

struct icase {
	int line;
	const char *name;
	struct topt o;
	size_t nb, ne;
	struct tblock b[MAXB];
	struct tedge e[MAXE]; /* grouped by from, (kind, to) ascending in a group */
	size_t ns;
	struct xsite s[MAXS]; /* every site, in rinline.site[] order */
	size_t nc;
	struct xclone c[MAXC];
	size_t nr;
	struct xregion r[MAXR];
	size_t ncov;
	struct xrange cov[MAXCOV];
};

static uint16_t offs[MAXB][MAXI + 1];

/* The rcfg of a row, as rcfg_discover would give it. */
static struct rcfg make_graph(struct rcfg_block *blk, struct rcfg_edge *edg, const struct icase *c)
{
	memset(blk, 0, MAXB * sizeof(*blk));
	for (size_t i = 0; i < c->nb; i++) {
		const struct tblock *t = &c->b[i];
		ck_assert(t->ninsns >= 1 && t->ninsns <= MAXI);
		for (uint16_t k = 0; k <= MAXI; k++)
			offs[i][k] = k;
		int call = t->kind == BK_CALL || t->kind == BK_CALL_IND;
		blk[i] = (struct rcfg_block){.start = AT(i),
		                             .end = AT(i) + t->ninsns,
		                             .target = t->kind == BK_CALL ? t->callee : 0,
		                             .callee = t->kind == BK_CALL ? t->callee : 0,
		                             .off = offs[i],
		                             .ninsns = t->ninsns,
		                             .kind = (uint8_t)t->kind,
		                             .weight = t->weight,
		                             .first_edge = c->ne};
		blk[i].flags =
		    (uint8_t)((t->weight > 0 ? RCFG_SAMPLED : 0) | (call ? RCFG_CALL : 0) |
		              (t->kind == BK_RET ? RCFG_EXIT : 0));
	}
	for (size_t i = c->ne; i-- > 0;) {
		const struct tedge *t = &c->e[i];
		ck_assert(i == 0 || c->e[i - 1].from <= t->from);
		edg[i] = (struct rcfg_edge){.from = t->from,
		                            .to = t->to,
		                            .to_addr = blk[t->to].start,
		                            .kind = (uint8_t)t->kind,
		                            .out = RCFG_IN,
		                            .observed = (uint8_t)t->observed,
		                            .weight = t->weight};
		blk[t->from].first_edge = i;
		blk[t->from].nedge++;
	}
	return (struct rcfg){.block = blk, .nblock = c->nb, .edge = edg, .nedge = c->ne};
}

/* The stages before inlining, each checked to succeed. */
struct stages {
	struct rgraph *rg;
	struct rflow *f;
	struct rprune *p;
};

static struct stages stages_of(const struct rcfg *g)
{
	char msg[256] = "";
	struct stages s = {0};
	int err = rgraph_build(g, &s.rg, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rgraph_build: %d %s", err, msg);
	err = rflow_infer(g, NULL, &s.f, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rflow_infer: %d %s", err, msg);
	double total = 0;
	for (size_t b = 0; b < g->nblock; b++)
		total += g->block[b].weight;
	err = rprune_select(g, s.rg, s.f, total, NULL, &s.p, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rprune_select: %d %s", err, msg);
	return s;
}

static void stages_free(struct stages *s)
{
	rprune_free(s->p);
	rflow_free(s->f);
	rgraph_free(s->rg);
}

static void print_result(const char *name, const struct rinline *in)
{
	printf("%s: %zu sites, %zu clones, %zu instructions covered\n", name, in->nsite, in->nclone,
	       in->nip);
	for (size_t j = 0; j < in->nsite; j++) {
		const struct rinline_site *s = &in->site[j];
		printf(
		    "  site %zu: region %zu block %zu call %#llx -> %#llx depth %u count %g %s\n",
		    j, s->region, s->block, (unsigned long long)s->call,
		    (unsigned long long)s->callee, s->depth, s->count, rinline_why_name(s->why));
	}
	for (size_t k = 0; k < in->nclone; k++)
		printf("  clone %zu: entry %zu, %zu blocks, scale %g, %llu insns, weight %g\n", k,
		       in->clone[k].entry, in->clone[k].nblock, in->clone[k].scale,
		       (unsigned long long)in->clone[k].ninsns, in->clone[k].weight);
}

static void check_sites(const struct icase *c, const struct rinline *in)
{
	ck_assert_msg(in->nsite == c->ns, "line %d: %zu sites, expected %zu", c->line, in->nsite,
	              c->ns);
	for (size_t j = 0; j < c->ns; j++) {
		const struct rinline_site *s = &in->site[j];
		const struct xsite *x = &c->s[j];
		ck_assert_msg(s->region == x->region && s->block == x->block &&
		                  s->parent == x->parent && s->depth == x->depth,
		              "line %d: site %zu region %zu block %zu parent %zu depth %u", c->line,
		              j, s->region, s->block, s->parent, s->depth);
		ck_assert_msg(s->call == x->call && s->ret == x->ret && s->callee == x->callee,
		              "line %d: site %zu call %#llx ret %#llx callee %#llx", c->line, j,
		              (unsigned long long)s->call, (unsigned long long)s->ret,
		              (unsigned long long)s->callee);
		ck_assert_msg(s->count == x->count && s->why == x->why && s->clone == x->clone,
		              "line %d: site %zu count %g %s clone %zu, expected %g %s %zu",
		              c->line, j, s->count, rinline_why_name(s->why), s->clone, x->count,
		              rinline_why_name(x->why), x->clone);
	}
}

static void check_clones(const struct icase *c, const struct rinline *in)
{
	ck_assert_msg(in->nclone == c->nc, "line %d: %zu clones, expected %zu", c->line, in->nclone,
	              c->nc);
	for (size_t k = 0; k < c->nc; k++) {
		const struct rinline_clone *q = &in->clone[k];
		const struct xclone *x = &c->c[k];
		ck_assert_msg(q->site == x->site && q->entry == x->entry && q->depth == x->depth &&
		                  q->nblock == x->nblock,
		              "line %d: clone %zu site %zu entry %zu depth %u, %zu blocks", c->line,
		              k, q->site, q->entry, q->depth, q->nblock);
		for (size_t j = 0; j < x->nblock; j++)
			ck_assert_msg(q->block[j] == x->block[j] && q->count[j] == x->count[j],
			              "line %d: clone %zu block[%zu] %zu count %g, expected %zu %g",
			              c->line, k, j, q->block[j], q->count[j], x->block[j],
			              x->count[j]);
		ck_assert_msg(q->scale == x->scale && q->ninsns == x->ninsns &&
		                  q->weight == x->weight,
		              "line %d: clone %zu scale %g insns %llu weight %g", c->line, k,
		              q->scale, (unsigned long long)q->ninsns, q->weight);
	}
}

static void check_regions(const struct icase *c, const struct rinline *in, const struct rprune *p)
{
	ck_assert_msg(in->nregion == c->nr && p->nregion == c->nr, "line %d: %zu regions", c->line,
	              in->nregion);
	for (size_t r = 0; r < c->nr; r++) {
		const struct rinline_region *q = &in->region[r];
		const struct xregion *x = &c->r[r];
		ck_assert_msg(p->region[r].kept == x->kept, "line %d: region %zu kept %d (%s)",
		              c->line, r, p->region[r].kept,
		              rprune_region_why_name(p->region[r].why));
		ck_assert_msg(q->nsite == x->nsite && q->inlined_insns == x->insns &&
		                  q->inlined_weight == x->weight,
		              "line %d: region %zu %zu sites, %llu insns, weight %g", c->line, r,
		              q->nsite, (unsigned long long)q->inlined_insns, q->inlined_weight);
		for (size_t j = 0; j < x->nsite; j++)
			ck_assert_msg(q->site[j] == x->site[j], "line %d: region %zu site[%zu] %zu",
			              c->line, r, j, q->site[j]);
	}
}

static void check_cover(const struct icase *c, const struct rinline *in)
{
	size_t n = 0;
	for (size_t k = 0; k < c->ncov; k++)
		for (int i = 0; i < c->cov[k].n; i++, n++)
			ck_assert_msg(n < in->nip && in->ip[n] == c->cov[k].addr + (uint64_t)i,
			              "line %d: cover[%zu] %#llx, expected %#llx", c->line, n,
			              n < in->nip ? (unsigned long long)in->ip[n] : 0ULL,
			              (unsigned long long)(c->cov[k].addr + (uint64_t)i));
	ck_assert_msg(in->nip == n, "line %d: %zu covered, expected %zu", c->line, in->nip, n);
	struct region_cover cv = rinline_cover(in);
	ck_assert(cv.ip == in->ip && cv.n == in->nip);
}

static void check_result(const struct icase *c, const struct rinline *in, const struct rprune *p)
{
	check_sites(c, in);
	check_clones(c, in);
	check_regions(c, in, p);
	check_cover(c, in);
}

static int is_default(const struct topt *o)
{
	struct topt d = DEFAULTS;
	return o->depth == d.depth && o->callee_insns == d.callee_insns &&
	       o->region_insns == d.region_insns && o->min_call == d.min_call && o->cold == d.cold;
}

/* Runs row c with rinline_options.sample_weight w. */
static void check_case(const struct icase *c, double w)
{
	struct rcfg_block blk[MAXB];
	struct rcfg_edge edg[MAXE];
	struct rcfg g = make_graph(blk, edg, c);
	struct stages st = stages_of(&g);
	struct rinline_options o = {.max_depth = c->o.depth,
	                            .max_callee_insns = c->o.callee_insns,
	                            .max_region_insns = c->o.region_insns,
	                            .min_call_fraction = c->o.min_call,
	                            .cold_fraction = c->o.cold,
	                            .sample_weight = w};
	char msg[256] = "";
	struct rinline *in = NULL;
	int err = rinline_run(&g, st.rg, st.f, st.p, &o, &in, msg, sizeof(msg));
	ck_assert_msg(err == 0, "line %d: rinline_run: %d %s", c->line, err, msg);
	print_result(c->name, in);
	check_result(c, in, st.p);
	rinline_free(in);
	/* a row at the defaults gives the same with no options at all */
	if (is_default(&c->o) && w == 0) {
		in = NULL;
		err = rinline_run(&g, st.rg, st.f, st.p, NULL, &in, msg, sizeof(msg));
		ck_assert_msg(err == 0, "line %d: rinline_run (NULL): %d %s", c->line, err, msg);
		check_result(c, in, st.p);
		rinline_free(in);
	}
	stages_free(&st);
}

#define B(n, k, w, callee)                                                                         \
	{                                                                                          \
		n, k, w, callee                                                                    \
	}
#define E(f, t, k)                                                                                 \
	{                                                                                          \
		f, t, k, 0, 0                                                                      \
	}
#define EO(f, t, k, w)                                                                             \
	{                                                                                          \
		f, t, k, 1, w                                                                      \
	}
#define CASE(name) __LINE__, name
#define CR RCFG_CALL_RETURN
#define FALL RCFG_FALL
#define TAKEN RCFG_TAKEN
#define INLINED RINLINE_WHY_INLINED

/* The caller loop most rows share: H (5 insns, ends in a call) returns to L
 * (2 insns, jcc back to H 990 times, out 10 times) and the return X (1 insn,
 * weight 20: count 20, above 1 % of H's). H and L have count c, so the loop
 * iterates c / (c - back) times per entry; 8 instructions in all. */

static const struct icase cases[] = {
    /* A loop calling a small leaf F (3 insns, 3000: 1000). Regions {H, L, X}
     * (kept: 1000 / 10 = 100 iterations, 8 insns) and {F} (3 insns: dropped
     * as tiny). H's call at 0x1004, count 1000, depth 1: F has code, is no
     * caller of itself, 1000 >= 1 % of the hottest 1000, F's count 1000 > 0,
     * body {F} of 3 insns <= 200 and <= 1000: inlined, scale 1000 / 1000 = 1,
     * weight 1000 x 3. The cover: the loop's 8 instructions and F's 3. */
    {CASE("a loop calling a small leaf"),
     DEFAULTS,
     4,
     3,
     {B(5, BK_CALL, 5000, AT(3)), B(2, BK_COND, 2000, 0), B(1, BK_RET, 20, 0),
      B(3, BK_RET, 3000, 0)},
     {E(0, 1, CR), EO(1, 2, FALL, 10), EO(1, 0, TAKEN, 990)},
     1,
     {{0, 0, NONE, 1, 0x1004, 0x1005, 0x1300, 1000, INLINED, 0}},
     1,
     {{0, 3, 1, 1, {3}, {1000}, 1, 3, 3000}},
     2,
     {{1, 1, {0}, 3, 3000}, {0, 0, {0}, 0, 0}},
     4,
     {{0x1000, 5}, {0x1100, 2}, {0x1200, 1}, {0x1300, 3}}},
    /* One callee, two sites: H (2 insns, 400) branches to C1 (call F, 300) or
     * C2 (call F, 100); they return to R1, R2 (1 insn each, 300, 100) which
     * jump to L (2 insns, 400: back 396, out 4) and X (1 insn, 8: above 1 %
     * of 400). 11 insns, 100 iterations: kept. F (5 insns, 2000: 400) is
     * entered 300 + 100 times. C1 first (300 > 100): scale 300 / 400 = 0.75,
     * count 300, weight 1500; C2: 0.25, 100, 500. F's 5 instructions are in
     * the cover once. */
    {CASE("a callee called from two sites"),
     DEFAULTS,
     8,
     8,
     {B(2, BK_COND, 800, 0), B(2, BK_CALL, 600, AT(7)), B(2, BK_CALL, 200, AT(7)),
      B(1, BK_JMP, 300, 0), B(1, BK_JMP, 100, 0), B(2, BK_COND, 800, 0), B(1, BK_RET, 8, 0),
      B(5, BK_RET, 2000, 0)},
     {E(0, 1, FALL), E(0, 2, TAKEN), E(1, 3, CR), E(2, 4, CR), E(3, 5, TAKEN), E(4, 5, TAKEN),
      EO(5, 6, FALL, 4), EO(5, 0, TAKEN, 396)},
     2,
     {{0, 1, NONE, 1, 0x1101, 0x1102, 0x1700, 300, INLINED, 0},
      {0, 2, NONE, 1, 0x1201, 0x1202, 0x1700, 100, INLINED, 1}},
     2,
     {{0, 7, 1, 1, {7}, {300}, 0.75, 5, 1500}, {1, 7, 1, 1, {7}, {100}, 0.25, 5, 500}},
     2,
     {{1, 2, {0, 1}, 10, 2000}, {0, 0, {0}, 0, 0}},
     8,
     {{0x1000, 2},
      {0x1100, 2},
      {0x1200, 2},
      {0x1300, 1},
      {0x1400, 1},
      {0x1500, 2},
      {0x1600, 1},
      {0x1700, 5}}},
    /* The same with F sampled at 1000: 200, fewer than C1's 300 (noise). C1:
     * 300 / 200 = 1.5, capped at 1: count 200, weight 1000; C2: 100 / 200 =
     * 0.5: count 100, weight 500. */
    {CASE("a site counted above its callee: scale capped at 1"),
     DEFAULTS,
     8,
     8,
     {B(2, BK_COND, 800, 0), B(2, BK_CALL, 600, AT(7)), B(2, BK_CALL, 200, AT(7)),
      B(1, BK_JMP, 300, 0), B(1, BK_JMP, 100, 0), B(2, BK_COND, 800, 0), B(1, BK_RET, 8, 0),
      B(5, BK_RET, 1000, 0)},
     {E(0, 1, FALL), E(0, 2, TAKEN), E(1, 3, CR), E(2, 4, CR), E(3, 5, TAKEN), E(4, 5, TAKEN),
      EO(5, 6, FALL, 4), EO(5, 0, TAKEN, 396)},
     2,
     {{0, 1, NONE, 1, 0x1101, 0x1102, 0x1700, 300, INLINED, 0},
      {0, 2, NONE, 1, 0x1201, 0x1202, 0x1700, 100, INLINED, 1}},
     2,
     {{0, 7, 1, 1, {7}, {200}, 1, 5, 1000}, {1, 7, 1, 1, {7}, {100}, 0.5, 5, 500}},
     2,
     {{1, 2, {0, 1}, 10, 1500}, {0, 0, {0}, 0, 0}},
     8,
     {{0x1000, 2},
      {0x1100, 2},
      {0x1200, 2},
      {0x1300, 1},
      {0x1400, 1},
      {0x1500, 2},
      {0x1600, 1},
      {0x1700, 5}}},
    /* A recursive callee, max_depth 4 so that depth does not stop it: the
     * loop (count 500, back 495: 100 iterations) calls R0 (2 insns, 2000:
     * 1000), whose jcc goes to R1 (2 insns, 1000: 500, call R0, returning to
     * R2) or to the return R2 (1 insn, 1000). Region {R0, R1, R2}: 5 insns,
     * dropped. H's site: scale 500 / 1000 = 0.5, body {R0, R1, R2} (R2 by
     * the jcc and by R1's call-return edge; all above 1 % of 1000), counts
     * 500, 250, 500, 5 insns, weight 500 x 2 + 250 x 2 + 500 = 2000. R1 in
     * the clone: count 250, depth 2, its callee R0 is the clone's own entry:
     * recursive. */
    {CASE("a recursive callee"),
     {4, 200, 1000, 0.01, 0.01},
     6,
     6,
     {B(5, BK_CALL, 2500, AT(3)), B(2, BK_COND, 1000, 0), B(1, BK_RET, 20, 0),
      B(2, BK_COND, 2000, 0), B(2, BK_CALL, 1000, AT(3)), B(1, BK_RET, 1000, 0)},
     {E(0, 1, CR), EO(1, 2, FALL, 5), EO(1, 0, TAKEN, 495), E(3, 4, FALL), E(3, 5, TAKEN),
      E(4, 5, CR)},
     2,
     {{0, 0, NONE, 1, 0x1004, 0x1005, 0x1300, 500, INLINED, 0},
      {0, 4, 0, 2, 0x1401, 0x1402, 0x1300, 250, RINLINE_WHY_RECURSIVE, NONE}},
     1,
     {{0, 3, 1, 3, {3, 4, 5}, {500, 250, 500}, 0.5, 5, 2000}},
     2,
     {{1, 2, {0, 1}, 5, 2000}, {0, 0, {0}, 0, 0}},
     6,
     {{0x1000, 5}, {0x1100, 2}, {0x1200, 1}, {0x1300, 2}, {0x1400, 2}, {0x1500, 1}}},
    /* Mutual recursion, max_depth 4: the loop (1000) calls F0 (2 insns, 2000:
     * 1000, call G0, returning to the return F1, 1000), G0 (2 insns, 1000,
     * call F0) returns to G1 (1000). H's site: clone {F0, F1}, scale 1, 3
     * insns, weight 3000. F0 in it (depth 2): G0 is neither that clone's
     * entry nor above it: clone {G0, G1}, scale 1, weight 3000. G0 in that
     * clone (depth 3) calls F0, the entry of the clone above: recursive. */
    {CASE("mutual recursion"),
     {4, 200, 1000, 0.01, 0.01},
     7,
     5,
     {B(5, BK_CALL, 5000, AT(3)), B(2, BK_COND, 2000, 0), B(1, BK_RET, 20, 0),
      B(2, BK_CALL, 2000, AT(5)), B(1, BK_RET, 1000, 0), B(2, BK_CALL, 2000, AT(3)),
      B(1, BK_RET, 1000, 0)},
     {E(0, 1, CR), EO(1, 2, FALL, 10), EO(1, 0, TAKEN, 990), E(3, 4, CR), E(5, 6, CR)},
     3,
     {{0, 0, NONE, 1, 0x1004, 0x1005, 0x1300, 1000, INLINED, 0},
      {0, 3, 0, 2, 0x1301, 0x1302, 0x1500, 1000, INLINED, 1},
      {0, 5, 1, 3, 0x1501, 0x1502, 0x1300, 1000, RINLINE_WHY_RECURSIVE, NONE}},
     2,
     {{0, 3, 1, 2, {3, 4}, {1000, 1000}, 1, 3, 3000},
      {1, 5, 2, 2, {5, 6}, {1000, 1000}, 1, 3, 3000}},
     3,
     {{1, 3, {0, 1, 2}, 6, 6000}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     7,
     {{0x1000, 5}, {0x1100, 2}, {0x1200, 1}, {0x1300, 2}, {0x1400, 1}, {0x1500, 2}, {0x1600, 1}}},
    /* A chain H -> F -> G at the default max_depth 2: F0 (2 insns, 2000:
     * 1000) calls G and returns to F1 (1 insn, 1000), reached only by that
     * call-return edge; G0 (3 insns, 6000: 2000, called from elsewhere too).
     * H: clone {F0, F1}, scale 1, weight 3000. F0 in it, depth 2 <= 2, count
     * 1000: scale 1000 / 2000 = 0.5, G0 at 1000, weight 3000. */
    {CASE("a chain of two calls, max_depth 2"),
     DEFAULTS,
     6,
     4,
     {B(5, BK_CALL, 5000, AT(3)), B(2, BK_COND, 2000, 0), B(1, BK_RET, 20, 0),
      B(2, BK_CALL, 2000, AT(5)), B(1, BK_RET, 1000, 0), B(3, BK_RET, 6000, 0)},
     {E(0, 1, CR), EO(1, 2, FALL, 10), EO(1, 0, TAKEN, 990), E(3, 4, CR)},
     2,
     {{0, 0, NONE, 1, 0x1004, 0x1005, 0x1300, 1000, INLINED, 0},
      {0, 3, 0, 2, 0x1301, 0x1302, 0x1500, 1000, INLINED, 1}},
     2,
     {{0, 3, 1, 2, {3, 4}, {1000, 1000}, 1, 3, 3000}, {1, 5, 2, 1, {5}, {1000}, 0.5, 3, 3000}},
     3,
     {{1, 2, {0, 1}, 6, 6000}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     6,
     {{0x1000, 5}, {0x1100, 2}, {0x1200, 1}, {0x1300, 2}, {0x1400, 1}, {0x1500, 3}}},
    /* ... max_depth 1: F0's call in the clone is at depth 2: too deep. */
    {CASE("a chain of two calls, max_depth 1"),
     {1, 200, 1000, 0.01, 0.01},
     6,
     4,
     {B(5, BK_CALL, 5000, AT(3)), B(2, BK_COND, 2000, 0), B(1, BK_RET, 20, 0),
      B(2, BK_CALL, 2000, AT(5)), B(1, BK_RET, 1000, 0), B(3, BK_RET, 6000, 0)},
     {E(0, 1, CR), EO(1, 2, FALL, 10), EO(1, 0, TAKEN, 990), E(3, 4, CR)},
     2,
     {{0, 0, NONE, 1, 0x1004, 0x1005, 0x1300, 1000, INLINED, 0},
      {0, 3, 0, 2, 0x1301, 0x1302, 0x1500, 1000, RINLINE_WHY_DEPTH, NONE}},
     1,
     {{0, 3, 1, 2, {3, 4}, {1000, 1000}, 1, 3, 3000}},
     3,
     {{1, 2, {0, 1}, 3, 3000}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     5,
     {{0x1000, 5}, {0x1100, 2}, {0x1200, 1}, {0x1300, 2}, {0x1400, 1}}},
    /* ... max_depth 0: nothing is inlined, the cover is the selection's. */
    {CASE("a chain of two calls, max_depth 0"),
     {0, 200, 1000, 0.01, 0.01},
     6,
     4,
     {B(5, BK_CALL, 5000, AT(3)), B(2, BK_COND, 2000, 0), B(1, BK_RET, 20, 0),
      B(2, BK_CALL, 2000, AT(5)), B(1, BK_RET, 1000, 0), B(3, BK_RET, 6000, 0)},
     {E(0, 1, CR), EO(1, 2, FALL, 10), EO(1, 0, TAKEN, 990), E(3, 4, CR)},
     1,
     {{0, 0, NONE, 1, 0x1004, 0x1005, 0x1300, 1000, RINLINE_WHY_DEPTH, NONE}},
     0,
     {{0}},
     3,
     {{1, 1, {0}, 0, 0}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     3,
     {{0x1000, 5}, {0x1100, 2}, {0x1200, 1}}},
    /* Every reason not to inline at once; max_callee_insns 3, min_call_fraction
     * 25 %. A loop of eight 2-insn blocks, each counted 1000 but C6 (200),
     * and the return X (20): C0 calls F (3 insns, 1000), C1 is indirect, C2
     * calls 0x8000 (no block), C3 calls B (4 insns, 1000), C4 calls E (no
     * weight, no edge: no count), D5's jcc goes to C6 (200 times) or past
     * it, C6 calls F, L7 loops back (990 of 1000). Hottest 1000. Ties at
     * 1000 by call address: C0 (F: 3 <= 3, scale 1, weight 3000), C1
     * indirect, C2 no code, C3 too big (4 > 3), C4 empty; then C6, 200 <
     * 250: cold. */
    {CASE("indirect, no code, too big, empty, cold"),
     {2, 3, 1000, 0.25, 0.01},
     12,
     10,
     {B(2, BK_CALL, 2000, AT(9)), B(2, BK_CALL_IND, 2000, 0), B(2, BK_CALL, 2000, 0x8000),
      B(2, BK_CALL, 2000, AT(10)), B(2, BK_CALL, 2000, AT(11)), B(2, BK_COND, 2000, 0),
      B(2, BK_CALL, 400, AT(9)), B(2, BK_COND, 2000, 0), B(1, BK_RET, 20, 0), B(3, BK_RET, 3000, 0),
      B(4, BK_RET, 4000, 0), B(1, BK_RET, 0, 0)},
     {E(0, 1, CR), E(1, 2, CR), E(2, 3, CR), E(3, 4, CR), E(4, 5, CR), EO(5, 7, FALL, 800),
      EO(5, 6, TAKEN, 200), E(6, 7, CR), EO(7, 8, FALL, 10), EO(7, 0, TAKEN, 990)},
     6,
     {{0, 0, NONE, 1, 0x1001, 0x1002, 0x1900, 1000, INLINED, 0},
      {0, 1, NONE, 1, 0x1101, 0x1102, 0, 1000, RINLINE_WHY_INDIRECT, NONE},
      {0, 2, NONE, 1, 0x1201, 0x1202, 0x8000, 1000, RINLINE_WHY_NO_CODE, NONE},
      {0, 3, NONE, 1, 0x1301, 0x1302, 0x1a00, 1000, RINLINE_WHY_TOO_BIG, NONE},
      {0, 4, NONE, 1, 0x1401, 0x1402, 0x1b00, 1000, RINLINE_WHY_EMPTY, NONE},
      {0, 6, NONE, 1, 0x1601, 0x1602, 0x1900, 200, RINLINE_WHY_COLD, NONE}},
     1,
     {{0, 9, 1, 1, {9}, {1000}, 1, 3, 3000}},
     4,
     {{1, 6, {0, 1, 2, 3, 4, 5}, 3, 3000}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     10,
     {{0x1000, 2},
      {0x1100, 2},
      {0x1200, 2},
      {0x1300, 2},
      {0x1400, 2},
      {0x1500, 2},
      {0x1600, 2},
      {0x1700, 2},
      {0x1800, 1},
      {0x1900, 3}}},
    /* The diamond of "a callee called from two sites" with C1 (100) calling
     * G (3 insns, 1200: 400) and C2 (300) calling F (5 insns, 2000: 400);
     * max_region_insns 6. C2 first: F's 5 <= 6, scale 0.75, count 300, weight
     * 1500. C1: 5 + 3 = 8 > 6: over the budget. */
    {CASE("the hotter site takes the budget"),
     {2, 200, 6, 0.01, 0.01},
     9,
     8,
     {B(2, BK_COND, 800, 0), B(2, BK_CALL, 200, AT(8)), B(2, BK_CALL, 600, AT(7)),
      B(1, BK_JMP, 100, 0), B(1, BK_JMP, 300, 0), B(2, BK_COND, 800, 0), B(1, BK_RET, 8, 0),
      B(5, BK_RET, 2000, 0), B(3, BK_RET, 1200, 0)},
     {E(0, 1, FALL), E(0, 2, TAKEN), E(1, 3, CR), E(2, 4, CR), E(3, 5, TAKEN), E(4, 5, TAKEN),
      EO(5, 6, FALL, 4), EO(5, 0, TAKEN, 396)},
     2,
     {{0, 2, NONE, 1, 0x1201, 0x1202, 0x1700, 300, INLINED, 0},
      {0, 1, NONE, 1, 0x1101, 0x1102, 0x1800, 100, RINLINE_WHY_BUDGET, NONE}},
     1,
     {{0, 7, 1, 1, {7}, {300}, 0.75, 5, 1500}},
     3,
     {{1, 2, {0, 1}, 5, 1500}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     8,
     {{0x1000, 2},
      {0x1100, 2},
      {0x1200, 2},
      {0x1300, 1},
      {0x1400, 1},
      {0x1500, 2},
      {0x1600, 1},
      {0x1700, 5}}},
    /* ... max_region_insns 8: 5 + 3 = 8 is within it. C1: G, scale 100 / 400
     * = 0.25, count 100, weight 300; the region inlines 8 insns, 1800. */
    {CASE("the budget reached exactly"),
     {2, 200, 8, 0.01, 0.01},
     9,
     8,
     {B(2, BK_COND, 800, 0), B(2, BK_CALL, 200, AT(8)), B(2, BK_CALL, 600, AT(7)),
      B(1, BK_JMP, 100, 0), B(1, BK_JMP, 300, 0), B(2, BK_COND, 800, 0), B(1, BK_RET, 8, 0),
      B(5, BK_RET, 2000, 0), B(3, BK_RET, 1200, 0)},
     {E(0, 1, FALL), E(0, 2, TAKEN), E(1, 3, CR), E(2, 4, CR), E(3, 5, TAKEN), E(4, 5, TAKEN),
      EO(5, 6, FALL, 4), EO(5, 0, TAKEN, 396)},
     2,
     {{0, 2, NONE, 1, 0x1201, 0x1202, 0x1700, 300, INLINED, 0},
      {0, 1, NONE, 1, 0x1101, 0x1102, 0x1800, 100, INLINED, 1}},
     2,
     {{0, 7, 1, 1, {7}, {300}, 0.75, 5, 1500}, {1, 8, 1, 1, {8}, {100}, 0.25, 3, 300}},
     3,
     {{1, 2, {0, 1}, 8, 1800}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     9,
     {{0x1000, 2},
      {0x1100, 2},
      {0x1200, 2},
      {0x1300, 1},
      {0x1400, 1},
      {0x1500, 2},
      {0x1600, 1},
      {0x1700, 5},
      {0x1800, 3}}},
    /* Ties, max_region_insns 9: C0 and C1 (2 insns, 500 each) both call F0
     * (2 insns, 2000: 1000, call G, returning to F1, 1 insn, 1000); L2 loops
     * back (495 of 500), X3 (2 insns, 20: 10). G0: 3 insns, 1500: 500. C0
     * before C1 (same count, lower address): clone {F0, F1} at 0.5 (500,
     * 500, weight 1500), and its F0 site (500, 0x1401, depth 2) waits behind
     * C1 (500, 0x1101): C1 gets the same clone. The two F0 sites tie on
     * count, address and depth: the one of clone 0 first, G at 500 / 500 =
     * 1 (weight 1500), 6 + 3 = 9 insns; the one of clone 1: 12 > 9. */
    {CASE("ties by address, then by parent clone"),
     {2, 200, 9, 0.01, 0.01},
     7,
     5,
     {B(2, BK_CALL, 1000, AT(4)), B(2, BK_CALL, 1000, AT(4)), B(2, BK_COND, 1000, 0),
      B(2, BK_RET, 20, 0), B(2, BK_CALL, 2000, AT(6)), B(1, BK_RET, 1000, 0),
      B(3, BK_RET, 1500, 0)},
     {E(0, 1, CR), E(1, 2, CR), EO(2, 3, FALL, 5), EO(2, 0, TAKEN, 495), E(4, 5, CR)},
     4,
     {{0, 0, NONE, 1, 0x1001, 0x1002, 0x1400, 500, INLINED, 0},
      {0, 1, NONE, 1, 0x1101, 0x1102, 0x1400, 500, INLINED, 1},
      {0, 4, 0, 2, 0x1401, 0x1402, 0x1600, 500, INLINED, 2},
      {0, 4, 1, 2, 0x1401, 0x1402, 0x1600, 500, RINLINE_WHY_BUDGET, NONE}},
     3,
     {{0, 4, 1, 2, {4, 5}, {500, 500}, 0.5, 3, 1500},
      {1, 4, 1, 2, {4, 5}, {500, 500}, 0.5, 3, 1500},
      {2, 6, 2, 1, {6}, {500}, 1, 3, 1500}},
     3,
     {{1, 4, {0, 1, 2, 3}, 9, 4500}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     7,
     {{0x1000, 2}, {0x1100, 2}, {0x1200, 2}, {0x1300, 2}, {0x1400, 2}, {0x1500, 1}, {0x1600, 3}}},
    /* A cold block inside the callee, and a bound in its body: the loop
     * (500) calls F0 (2 insns, 2000: 1000), whose jcc went 995 times to F1
     * (1 insn, no weight: rflow has no count, the observed in-edge bounds it
     * at 995) and 5 times to F2 (1 insn, 5: count 5), which jumps to F3 (2
     * insns, 1000: 500). 1 % of F0's 1000 is 10: F1 warm by its bound, F2
     * cold, F3 warm but reached only through F2. Body {F0, F1}, scale 0.5:
     * 500 and 497.5, 3 insns, weight 1000 + 497.5. */
    {CASE("a cold block in the callee left out"),
     DEFAULTS,
     7,
     6,
     {B(5, BK_CALL, 2500, AT(3)), B(2, BK_COND, 1000, 0), B(1, BK_RET, 20, 0),
      B(2, BK_COND, 2000, 0), B(1, BK_RET, 0, 0), B(1, BK_JMP, 5, 0), B(2, BK_RET, 1000, 0)},
     {E(0, 1, CR), EO(1, 2, FALL, 5), EO(1, 0, TAKEN, 495), EO(3, 4, FALL, 995), EO(3, 5, TAKEN, 5),
      E(5, 6, TAKEN)},
     1,
     {{0, 0, NONE, 1, 0x1004, 0x1005, 0x1300, 500, INLINED, 0}},
     1,
     {{0, 3, 1, 2, {3, 4}, {500, 497.5}, 0.5, 3, 1497.5}},
     2,
     {{1, 1, {0}, 3, 1497.5}, {0, 0, {0}, 0, 0}},
     5,
     {{0x1000, 5}, {0x1100, 2}, {0x1200, 1}, {0x1300, 2}, {0x1400, 1}}},
    /* A bridge ending in a call: H (4 insns, 4000: 1000) jccs to U (2 insns,
     * no weight, call F) or to L (2 insns, 2000: 1000, back 990 times); U
     * returns to L. No equation decides H's two edges nor U's: U has no
     * count, and is kept as a bridge from H to L (9 insns, 100 iterations).
     * It is a call of the replacement code: listed, count 0: cold. */
    {CASE("a bridge calling: count 0, cold"),
     DEFAULTS,
     5,
     5,
     {B(4, BK_COND, 4000, 0), B(2, BK_CALL, 0, AT(4)), B(2, BK_COND, 2000, 0), B(1, BK_RET, 20, 0),
      B(3, BK_RET, 3000, 0)},
     {E(0, 2, FALL), E(0, 1, TAKEN), E(1, 2, CR), EO(2, 3, FALL, 10), EO(2, 0, TAKEN, 990)},
     1,
     {{0, 1, NONE, 1, 0x1101, 0x1102, 0x1400, 0, RINLINE_WHY_COLD, NONE}},
     0,
     {{0}},
     2,
     {{1, 1, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     4,
     {{0x1000, 4}, {0x1100, 2}, {0x1200, 2}, {0x1300, 1}}},
    /* ... and so with min_call_fraction 0: a count of 0 scales nothing. */
    {CASE("a bridge calling, min_call_fraction 0"),
     {2, 200, 1000, 0, 0.01},
     5,
     5,
     {B(4, BK_COND, 4000, 0), B(2, BK_CALL, 0, AT(4)), B(2, BK_COND, 2000, 0), B(1, BK_RET, 20, 0),
      B(3, BK_RET, 3000, 0)},
     {E(0, 2, FALL), E(0, 1, TAKEN), E(1, 2, CR), EO(2, 3, FALL, 10), EO(2, 0, TAKEN, 990)},
     1,
     {{0, 1, NONE, 1, 0x1101, 0x1102, 0x1400, 0, RINLINE_WHY_COLD, NONE}},
     0,
     {{0}},
     2,
     {{1, 1, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
     4,
     {{0x1000, 4}, {0x1100, 2}, {0x1200, 2}, {0x1300, 1}}},
    /* A self-recursive region, kept for its share (100 %, no loop): R0 (4
     * insns, 4000: 1000) jccs to R1 (2 insns, 1000: 500, call R0) or to the
     * return R2 (2 insns, 2000: 1000), where R1 returns. R1's call is in
     * the region's own code, no clone: inlined once, scale 0.5, body {R0,
     * R1, R2} at 500, 250, 500, 8 insns, weight 2000 + 500 + 1000. The
     * clone's R1 (250, depth 2) calls the clone's own entry: recursive. The
     * clone copies kept code: the cover stays the region's 8. */
    {CASE("a self-recursive region"),
     DEFAULTS,
     3,
     3,
     {B(4, BK_COND, 4000, 0), B(2, BK_CALL, 1000, AT(0)), B(2, BK_RET, 2000, 0)},
     {E(0, 1, FALL), E(0, 2, TAKEN), E(1, 2, CR)},
     2,
     {{0, 1, NONE, 1, 0x1101, 0x1102, 0x1000, 500, INLINED, 0},
      {0, 1, 0, 2, 0x1101, 0x1102, 0x1000, 250, RINLINE_WHY_RECURSIVE, NONE}},
     1,
     {{0, 0, 1, 3, {0, 1, 2}, {500, 250, 500}, 0.5, 8, 3500}},
     1,
     {{1, 2, {0, 1}, 8, 3500}},
     3,
     {{0x1000, 4}, {0x1100, 2}, {0x1200, 2}}},
};

START_TEST(hand_made)
{
	check_case(&cases[_i], 0);
}
END_TEST

/* Rows run with a sample weight w (rinline_options.sample_weight): a site
 * whose block b is the graph's only way into the callee entry E from outside
 * the body, with (count(E) - count(b))^2 <= 9 x (count(b) x w / ninsns(b) +
 * count(E) x w / ninsns(E)), scales its clone by count(site) / count(b) (1 in
 * the region's own code) instead of count(site) / count(E).
 *
 * The loop most rows share: C (1 insn, call F, 300) returns to L (6 insns,
 * 1800: 300; jcc back to C 297 times, out 3 times) and the return X (1 insn,
 * 6: above 1 % of 300). 8 insns, 300 / 3 = 100 iterations: kept. F0 (4
 * insns, 1600: 400) alone is a region of 4 insns: dropped as tiny. C's call
 * at 0x1000 returns to 0x1001; no edge of the graph goes to F0 (calls are no
 * edges). The noise with w = 256: 300 x 256 / 1 + 400 x 256 / 4 = 76800 +
 * 25600 = 102400, and 100^2 = 10000 <= 9 x 102400: one execution of F0 per
 * call, scale 300 / 300 = 1, F0's own count 400, weight 1600. */
struct wcase {
	double w;
	struct icase c;
};

static const struct wcase weighted[] = {
    {256,
     {CASE("the only caller, within 3 sigma: scale 1"),
      DEFAULTS,
      4,
      3,
      {B(1, BK_CALL, 300, AT(3)), B(6, BK_COND, 1800, 0), B(1, BK_RET, 6, 0),
       B(4, BK_RET, 1600, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 297)},
      1,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 300, INLINED, 0}},
      1,
      {{0, 3, 1, 1, {3}, {400}, 1, 4, 1600}},
      2,
      {{1, 1, {0}, 4, 1600}, {0, 0, {0}, 0, 0}},
      4,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 4}}}},
    /* ... w = 1: 9 x (300 + 100) = 3600 < 10000, beyond 3 sigma: the old
     * scale 300 / 400 = 0.75, count 300, weight 1200. */
    {1,
     {CASE("the only caller, beyond 3 sigma: count(site) / count(E)"),
      DEFAULTS,
      4,
      3,
      {B(1, BK_CALL, 300, AT(3)), B(6, BK_COND, 1800, 0), B(1, BK_RET, 6, 0),
       B(4, BK_RET, 1600, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 297)},
      1,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 300, INLINED, 0}},
      1,
      {{0, 3, 1, 1, {3}, {300}, 0.75, 4, 1200}},
      2,
      {{1, 1, {0}, 4, 1200}, {0, 0, {0}, 0, 0}},
      4,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 4}}}},
    /* ... w = 0 (exact counts): the old scale 0.75, as without options. */
    {0,
     {CASE("the only caller, sample_weight 0: count(site) / count(E)"),
      DEFAULTS,
      4,
      3,
      {B(1, BK_CALL, 300, AT(3)), B(6, BK_COND, 1800, 0), B(1, BK_RET, 6, 0),
       B(4, BK_RET, 1600, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 297)},
      1,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 300, INLINED, 0}},
      1,
      {{0, 3, 1, 1, {3}, {300}, 0.75, 4, 1200}},
      2,
      {{1, 1, {0}, 4, 1200}, {0, 0, {0}, 0, 0}},
      4,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 4}}}},
    /* At the bound: C 171 (1 insn), L 6 insns 1026 (171, back 168, out 3: 57
     * iterations), F0 864 over 4 insns (216). w = 1: 171 / 1 + 216 / 4 =
     * 225, 9 x 225 = 2025 = 45^2 = (216 - 171)^2, and <= holds: scale 1,
     * count 216, weight 864. */
    {1,
     {CASE("the only caller, at exactly 3 sigma: scale 1"),
      DEFAULTS,
      4,
      3,
      {B(1, BK_CALL, 171, AT(3)), B(6, BK_COND, 1026, 0), B(1, BK_RET, 6, 0), B(4, BK_RET, 864, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 168)},
      1,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 171, INLINED, 0}},
      1,
      {{0, 3, 1, 1, {3}, {216}, 1, 4, 864}},
      2,
      {{1, 1, {0}, 4, 864}, {0, 0, {0}, 0, 0}},
      4,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 4}}}},
    /* ... w = 0.99: 9 x 225 x 0.99 = 2004.75 < 2025: scale 171 / 216,
     * count that x 216, weight that x 4 (written in the order computed). */
    {0.99,
     {CASE("the only caller, just beyond 3 sigma"),
      DEFAULTS,
      4,
      3,
      {B(1, BK_CALL, 171, AT(3)), B(6, BK_COND, 1026, 0), B(1, BK_RET, 6, 0), B(4, BK_RET, 864, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 168)},
      1,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 171, INLINED, 0}},
      1,
      {{0, 3, 1, 1, {3}, {171.0 / 216 * 216}, 171.0 / 216, 4, 171.0 / 216 * 216 * 4}},
      2,
      {{1, 1, {0}, 4, 171.0 / 216 * 216 * 4}, {0, 0, {0}, 0, 0}},
      4,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 4}}}},
    /* The 300 / 400 loop, w = 256, and a jump into F0 (a tail call) from J
     * (2 insns, 200: 100), a region {F0, J} of 6 insns, dropped: C is not
     * the only way into F0, so the old scale 0.75 (count 300, weight 1200). */
    {256,
     {CASE("a jump into the callee from another block: count(site) / count(E)"),
      DEFAULTS,
      5,
      4,
      {B(1, BK_CALL, 300, AT(3)), B(6, BK_COND, 1800, 0), B(1, BK_RET, 6, 0), B(4, BK_RET, 1600, 0),
       B(2, BK_JMP, 200, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 297), E(4, 3, TAKEN)},
      1,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 300, INLINED, 0}},
      1,
      {{0, 3, 1, 1, {3}, {300}, 0.75, 4, 1200}},
      2,
      {{1, 1, {0}, 4, 1200}, {0, 0, {0}, 0, 0}},
      4,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 4}}}},
    /* A jump back into F0 from the callee's own body: F0 (4 insns, 1600:
     * 400) jccs to F1 (1 insn, 10, jumping back to F0) 10 times and falls to
     * the return F2 (2 insns, 780: 390) 390 times; region {F0, F1, F2} of 7
     * insns, dropped. 1 % of 400 is 4: F1 and F2 warm, body {F0, F1, F2}, 7
     * insns. The edge F1 -> F0 comes from the body: C is still the only way
     * in, w = 256 as above: scale 1, counts 400, 10, 390, weight 1600 + 10 +
     * 780 = 2390. */
    {256,
     {CASE("a jump into the callee from its body: scale 1"),
      DEFAULTS,
      6,
      6,
      {B(1, BK_CALL, 300, AT(3)), B(6, BK_COND, 1800, 0), B(1, BK_RET, 6, 0),
       B(4, BK_COND, 1600, 0), B(1, BK_JMP, 10, 0), B(2, BK_RET, 780, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 297), EO(3, 5, FALL, 390),
       EO(3, 4, TAKEN, 10), E(4, 3, TAKEN)},
      1,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 300, INLINED, 0}},
      1,
      {{0, 3, 1, 3, {3, 4, 5}, {400, 10, 390}, 1, 7, 2390}},
      2,
      {{1, 1, {0}, 7, 2390}, {0, 0, {0}, 0, 0}},
      6,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 4}, {0x1400, 1}, {0x1500, 2}}}},
    /* ... with F1 cold (2, below 4; F2 796: 398): the body is {F0, F2}, 6
     * insns, and F1 -> F0 comes from outside it: the old scale 0.75, counts
     * 300 and 298.5, weight 1200 + 597 = 1797. */
    {256,
     {CASE("a jump into the callee from its cold block: count(site) / count(E)"),
      DEFAULTS,
      6,
      6,
      {B(1, BK_CALL, 300, AT(3)), B(6, BK_COND, 1800, 0), B(1, BK_RET, 6, 0),
       B(4, BK_COND, 1600, 0), B(1, BK_JMP, 2, 0), B(2, BK_RET, 796, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 297), EO(3, 5, FALL, 398),
       EO(3, 4, TAKEN, 2), E(4, 3, TAKEN)},
      1,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 300, INLINED, 0}},
      1,
      {{0, 3, 1, 2, {3, 5}, {300, 298.5}, 0.75, 6, 1797}},
      2,
      {{1, 1, {0}, 6, 1797}, {0, 0, {0}, 0, 0}},
      5,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 4}, {0x1500, 2}}}},
    /* In a clone the scale is the parent's: the loop calls F0 (2 insns, 800:
     * 400, call G), which returns to F1 (1 insn, 400); G0 (3 insns, 1230:
     * 410). w = 2. C: 300 x 2 / 1 + 400 x 2 / 2 = 1000, 9000 < 100^2: the
     * old scale 0.75, clone {F0, F1} at 300, 300, weight 900. F0's site in
     * it (count 300, depth 2): F0 (400 of 2) is the only way into G0 (410 of
     * 3), 10^2 <= 9 x (400 + 273.3): scale 300 / 400 = 0.75 (not 300 / 410),
     * G0 at 307.5, weight 922.5; the region inlines 6 insns, 1822.5. */
    {2,
     {CASE("the only caller in a clone: the parent clone's scale"),
      DEFAULTS,
      6,
      4,
      {B(1, BK_CALL, 300, AT(3)), B(6, BK_COND, 1800, 0), B(1, BK_RET, 6, 0),
       B(2, BK_CALL, 800, AT(5)), B(1, BK_RET, 400, 0), B(3, BK_RET, 1230, 0)},
      {E(0, 1, CR), EO(1, 2, FALL, 3), EO(1, 0, TAKEN, 297), E(3, 4, CR)},
      2,
      {{0, 0, NONE, 1, 0x1000, 0x1001, 0x1300, 300, INLINED, 0},
       {0, 3, 0, 2, 0x1301, 0x1302, 0x1500, 300, INLINED, 1}},
      2,
      {{0, 3, 1, 2, {3, 4}, {300, 300}, 0.75, 3, 900}, {1, 5, 2, 1, {5}, {307.5}, 0.75, 3, 922.5}},
      3,
      {{1, 2, {0, 1}, 6, 1822.5}, {0, 0, {0}, 0, 0}, {0, 0, {0}, 0, 0}},
      6,
      {{0x1000, 1}, {0x1100, 6}, {0x1200, 1}, {0x1300, 2}, {0x1400, 1}, {0x1500, 3}}}},
    /* "a callee called from two sites" with w = 256: C1 (300 of 2) and C2
     * (100 of 2) both call F (400 of 5), so neither is the only way in and
     * both keep the old scales 0.75 and 0.25 (as the header's "no other
     * caller" says; within noise each would be: 9 x (300 x 128 + 400 x
     * 51.2) = 529920 >= 100^2, 9 x (100 x 128 + 20480) = 299520 >= 300^2). */
    {256,
     {CASE("a second call site of the callee: count(site) / count(E)"),
      DEFAULTS,
      8,
      8,
      {B(2, BK_COND, 800, 0), B(2, BK_CALL, 600, AT(7)), B(2, BK_CALL, 200, AT(7)),
       B(1, BK_JMP, 300, 0), B(1, BK_JMP, 100, 0), B(2, BK_COND, 800, 0), B(1, BK_RET, 8, 0),
       B(5, BK_RET, 2000, 0)},
      {E(0, 1, FALL), E(0, 2, TAKEN), E(1, 3, CR), E(2, 4, CR), E(3, 5, TAKEN), E(4, 5, TAKEN),
       EO(5, 6, FALL, 4), EO(5, 0, TAKEN, 396)},
      2,
      {{0, 1, NONE, 1, 0x1101, 0x1102, 0x1700, 300, INLINED, 0},
       {0, 2, NONE, 1, 0x1201, 0x1202, 0x1700, 100, INLINED, 1}},
      2,
      {{0, 7, 1, 1, {7}, {300}, 0.75, 5, 1500}, {1, 7, 1, 1, {7}, {100}, 0.25, 5, 500}},
      2,
      {{1, 2, {0, 1}, 10, 2000}, {0, 0, {0}, 0, 0}},
      8,
      {{0x1000, 2},
       {0x1100, 2},
       {0x1200, 2},
       {0x1300, 1},
       {0x1400, 1},
       {0x1500, 2},
       {0x1600, 1},
       {0x1700, 5}}}},
};

START_TEST(sample_weight)
{
	check_case(&weighted[_i].c, weighted[_i].w);
}
END_TEST

/* The defaults the rows call DEFAULTS, and the header's constants. */
START_TEST(defaults)
{
	struct rinline_options o;
	rinline_options_init(&o);
	struct topt d = DEFAULTS;
	ck_assert(o.max_depth == d.depth && o.max_callee_insns == d.callee_insns &&
	          o.max_region_insns == d.region_insns && o.min_call_fraction == d.min_call &&
	          o.cold_fraction == d.cold && o.sample_weight == 0);
	ck_assert(o.max_depth == RINLINE_MAX_DEPTH_DEFAULT &&
	          o.max_callee_insns == RINLINE_MAX_CALLEE_INSNS_DEFAULT &&
	          o.max_region_insns == RINLINE_MAX_REGION_INSNS_DEFAULT &&
	          o.min_call_fraction == RINLINE_MIN_CALL_FRACTION_DEFAULT &&
	          o.cold_fraction == RPRUNE_COLD_FRACTION_DEFAULT);
}
END_TEST

static int run_bad(const struct rcfg *g, const struct stages *st, const struct rinline_options *o)
{
	char msg[256] = "";
	struct rinline *in = (struct rinline *)1;
	int err = rinline_run(g, st->rg, st->f, st->p, o, &in, msg, sizeof(msg));
	if (err == 0) {
		ck_assert_ptr_nonnull(in);
		rinline_free(in);
		return 0;
	}
	ck_assert_ptr_null(in);
	ck_assert(msg[0] && !strchr(msg, '\n'));
	printf("bad input: %s\n", msg);
	return err;
}

/* Options out of range (NaN, negative, above 1) and inputs that are not one
 * graph's are refused with PMUSIM_ERR_ARG and no result. */
START_TEST(bad_input)
{
	const struct icase *c = &cases[0];
	struct rcfg_block blk[MAXB];
	struct rcfg_edge edg[MAXE];
	struct rcfg g = make_graph(blk, edg, c);
	struct stages st = stages_of(&g);
	struct rinline_options o;
	double bad[] = {-0.1, 1.5, NAN, -INFINITY};
	for (size_t i = 0; i < N(bad); i++) {
		rinline_options_init(&o);
		o.min_call_fraction = bad[i];
		ck_assert_int_eq(run_bad(&g, &st, &o), PMUSIM_ERR_ARG);
		rinline_options_init(&o);
		o.cold_fraction = bad[i];
		ck_assert_int_eq(run_bad(&g, &st, &o), PMUSIM_ERR_ARG);
	}
	/* the bounds themselves are in range */
	rinline_options_init(&o);
	o.min_call_fraction = 1;
	o.cold_fraction = 0;
	ck_assert_int_eq(run_bad(&g, &st, &o), 0);
	/* a selection of another graph: one block fewer, one region fewer */
	st.p->nblock--;
	ck_assert_int_eq(run_bad(&g, &st, NULL), PMUSIM_ERR_ARG);
	st.p->nblock++;
	st.p->nregion--;
	ck_assert_int_eq(run_bad(&g, &st, NULL), PMUSIM_ERR_ARG);
	st.p->nregion++;
	/* counts of another graph */
	st.f->nedge--;
	ck_assert_int_eq(run_bad(&g, &st, NULL), PMUSIM_ERR_ARG);
	st.f->nedge++;
	/* a region holding a block twice */
	size_t keep = st.rg->region[0].block[1];
	st.rg->region[0].block[1] = st.rg->region[0].block[0];
	ck_assert_int_eq(run_bad(&g, &st, NULL), PMUSIM_ERR_ARG);
	st.rg->region[0].block[1] = keep;
	/* an edge to no block */
	edg[0].to = 99;
	ck_assert_int_eq(run_bad(&g, &st, NULL), PMUSIM_ERR_ARG);
	edg[0].to = 1;
	ck_assert_int_eq(run_bad(&g, &st, NULL), 0);
	stages_free(&st);
}
END_TEST

START_TEST(why_names)
{
	static const char *const names[] = {"inlined", "indirect", "no_code", "recursive", "depth",
	                                    "cold",    "empty",    "too_big", "budget"};
	ck_assert_int_eq(N(names), RINLINE_WHY_BUDGET + 1);
	for (size_t i = 0; i < N(names); i++)
		ck_assert_str_eq(rinline_why_name((int)i), names[i]);
	ck_assert_str_eq(rinline_why_name(-1), "?");
	ck_assert_str_eq(rinline_why_name(RINLINE_WHY_BUDGET + 1), "?");
}
END_TEST

/* The cover of row "a loop calling a small leaf" against the selection's,
 * each instruction weighted 1 (of 11): the selection alone covers the loop's
 * 8, inlining adds F's 3, so the overlap is 8 of 11 and inlining's share 1. */
START_TEST(cover_overlap)
{
	const struct icase *c = &cases[0];
	struct rcfg_block blk[MAXB];
	struct rcfg_edge edg[MAXE];
	struct rcfg g = make_graph(blk, edg, c);
	struct stages st = stages_of(&g);
	char msg[256] = "";
	struct rinline *in = NULL;
	ck_assert_int_eq(rinline_run(&g, st.rg, st.f, st.p, NULL, &in, msg, sizeof(msg)), 0);
	static const uint64_t all[] = {0x1000, 0x1001, 0x1002, 0x1003, 0x1004, 0x1100,
	                               0x1101, 0x1200, 0x1300, 0x1301, 0x1302};
	struct hot_ip w[N(all)];
	for (size_t i = 0; i < N(all); i++)
		w[i] = (struct hot_ip){all[i], 1};
	struct hot_code exact = {.ip = w, .nip = N(w), .total = 11};
	struct region_cover a = rinline_cover(in), b = rprune_cover(st.p);
	struct region_overlap ov;
	ck_assert_int_eq(region_overlap_of(&a, &b, &exact, &ov), 0);
	ck_assert(ov.both == 8 && ov.either == 11 && ov.share_a == 1 && ov.share_b == 8.0 / 11);
	rinline_free(in);
	stages_free(&st);
}
END_TEST

/* The whole chain on hand-assembled code:
 * 1000: 48 ff c0        inc rax          H, 6 insns, 1000 each
 * 1003: 90 90 90 90     nop x 4
 * 1007: e8 14 00 00 00  call 1020        returns to 100c
 * 100c: 48 39 c8        cmp rax, rcx     L, 2 insns, 1000 each
 * 100f: 75 ef           jne 1000         taken 980, fall 20
 * 1011: c3              ret              X, 20
 * 1012: 90 x 14         (padding, never reached)
 * 1020: 48 01 c3        add rbx, rax     F, 3 insns, 1000 each
 * 1023: 48 31 da        xor rdx, rbx
 * 1026: c3              ret
 * Blocks H, L, X, F; H's callee 0x1020. The loop iterates 1000 / 20 = 50
 * times, 9 insns: kept; F (3 insns) dropped as tiny. H's call at 0x1007
 * returning to 0x100c, count 1000: F inlined at scale 1, weight 3000. The
 * cover: the loop's 9 instruction addresses and F's 3. */
static const uint8_t chain_code[] = {0x48, 0xff, 0xc0, 0x90, 0x90, 0x90, 0x90, 0xe8, 0x14, 0x00,
                                     0x00, 0x00, 0x48, 0x39, 0xc8, 0x75, 0xef, 0xc3, 0x90, 0x90,
                                     0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90, 0x90,
                                     0x90, 0x90, 0x48, 0x01, 0xc3, 0x48, 0x31, 0xda, 0xc3};
static const uint64_t chain_cover[] = {0x1000, 0x1003, 0x1004, 0x1005, 0x1006, 0x1007,
                                       0x100c, 0x100f, 0x1011, 0x1020, 0x1023, 0x1026};

START_TEST(whole_chain)
{
	struct hot_ip ip[] = {{0x1000, 1000}, {0x1003, 1000}, {0x1004, 1000}, {0x1005, 1000},
	                      {0x1006, 1000}, {0x1007, 1000}, {0x100c, 1000}, {0x100f, 1000},
	                      {0x1011, 20},   {0x1020, 1000}, {0x1023, 1000}, {0x1026, 1000}};
	struct hot_branch br[] = {{0x100f, 980, 20}};
	struct hot_code hot = {.ip = ip, .nip = N(ip), .branch = br, .nbranch = N(br)};
	for (size_t i = 0; i < N(ip); i++)
		hot.total += ip[i].weight;
	struct binary *bin = NULL;
	ck_assert_int_eq(binary_from_code(chain_code, sizeof(chain_code), 0x1000, &bin), 0);
	char msg[256] = "";
	struct rcfg *g = NULL;
	int err = rcfg_discover(bin, &hot, NULL, &g, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rcfg_discover: %d %s", err, msg);
	ck_assert_uint_eq(g->nblock, 4); /* H, L, X, F */
	ck_assert(g->block[0].callee == 0x1020 && g->block[3].start == 0x1020);
	struct stages st = stages_of(g);
	struct rinline *in = NULL;
	err = rinline_run(g, st.rg, st.f, st.p, NULL, &in, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rinline_run: %d %s", err, msg);
	print_result("whole chain", in);
	ck_assert(st.p->region[0].kept && !st.p->region[1].kept);
	ck_assert_uint_eq(in->nsite, 1);
	const struct rinline_site *s = &in->site[0];
	ck_assert(s->region == 0 && s->block == 0 && s->call == 0x1007 && s->ret == 0x100c &&
	          s->callee == 0x1020 && s->depth == 1 && s->count == 1000 &&
	          s->why == RINLINE_WHY_INLINED && s->clone == 0);
	ck_assert_uint_eq(in->nclone, 1);
	const struct rinline_clone *k = &in->clone[0];
	ck_assert(k->entry == 3 && k->nblock == 1 && k->block[0] == 3 && k->count[0] == 1000 &&
	          k->scale == 1 && k->ninsns == 3 && k->weight == 3000);
	ck_assert_uint_eq(in->nip, N(chain_cover));
	for (size_t i = 0; i < N(chain_cover); i++)
		ck_assert_msg(in->ip[i] == chain_cover[i], "ip[%zu] %#llx", i,
		              (unsigned long long)in->ip[i]);
	rinline_free(in);
	stages_free(&st);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

static Suite *inline_suite(void)
{
	Suite *s = suite_create("region_inline");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, hand_made, 0, (int)N(cases));
	tcase_add_loop_test(tc, sample_weight, 0, (int)N(weighted));
	tcase_add_test(tc, defaults);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, why_names);
	tcase_add_test(tc, cover_overlap);
	tcase_add_test(tc, whole_chain);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(inline_suite());
}
