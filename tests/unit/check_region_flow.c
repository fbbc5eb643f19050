/* Unit tests of profiler/region_flow: hand-made graphs whose counts are worked
 * out by hand in the comments, and a property test on random graphs whose edge
 * counts come from random walks made here, checked against Gaussian elimination
 * over the rationals on the equations region_flow.h states (written here again,
 * sharing nothing with the solver). */
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "profiler/region_flow.h"
#include "tests/unit/run_suite.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define MAXB 8
#define MAXE 12
#define OUT RCFG_NO_BLOCK
#define UNK -1 /* an expected count that must be undecided / none */

struct tblock {
	uint32_t ninsns;
	int kind;
	double weight;
};

struct tedge {
	size_t from, to;
	int kind, observed;
	double weight;
};

struct want {
	double count; /* UNK with source none/undecided */
	int source;
};

struct flow_case {
	int line;
	const char *name;
	int entry;
	size_t nb, ne;
	struct tblock b[MAXB];
	struct tedge e[MAXE]; /* grouped by from */
	struct want wb[MAXB], we[MAXE];
};

/* The rcfg of a table row: edges in row order, each block's run found from them. */
static struct rcfg make_graph(struct rcfg_block *blk, struct rcfg_edge *edg, size_t nb,
                              const struct tblock *tb, size_t ne, const struct tedge *te)
{
	memset(blk, 0, nb * sizeof(*blk));
	for (size_t i = 0; i < nb; i++) {
		blk[i].start = 0x1000 + 0x10 * i;
		blk[i].ninsns = tb[i].ninsns;
		blk[i].kind = (uint8_t)tb[i].kind;
		blk[i].weight = tb[i].weight;
		blk[i].first_edge = ne;
	}
	for (size_t i = ne; i-- > 0;) {
		edg[i] = (struct rcfg_edge){.from = te[i].from,
		                            .to = te[i].to,
		                            .kind = (uint8_t)te[i].kind,
		                            .observed = (uint8_t)te[i].observed,
		                            .weight = te[i].weight};
		edg[i].out = te[i].to == OUT ? RCFG_OUT_HOPS : RCFG_IN;
		blk[te[i].from].first_edge = i;
		blk[te[i].from].nedge++;
	}
	return (struct rcfg){.block = blk, .nblock = nb, .edge = edg, .nedge = ne};
}

static struct rflow *infer(const struct rcfg *g, int entry)
{
	struct rflow_options o;
	rflow_options_init(&o);
	o.entry = entry;
	struct rflow *f = NULL;
	char msg[256] = "";
	int err = rflow_infer(g, &o, &f, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rflow_infer: %d %s", err, msg);
	return f;
}

#define B(n, k, w)                                                                                 \
	{                                                                                          \
		n, k, w                                                                            \
	}
#define E(f, t, k)                                                                                 \
	{                                                                                          \
		f, t, k, 0, 0                                                                      \
	}
#define EO(f, t, k, w)                                                                             \
	{                                                                                          \
		f, t, k, 1, w                                                                      \
	}
#define W(c, s)                                                                                    \
	{                                                                                          \
		c, s                                                                               \
	}
#define CASE(name, entry, nb, ne) __LINE__, name, entry, nb, ne

static const struct flow_case cases[] = {
    /* A straight chain A -syscall-> B -rep-> C -> ret, samples on B only:
     * 3 + 2 + 5 = 10 instructions, weight 30, so every block ran 30 / 10 = 3
     * times, and each link is its source's only out-edge: 3. */
    {CASE("chain pooled from one block", RFLOW_ENTRY_OPEN, 3, 2),
     {B(3, BK_SYSCALL, 0), B(2, BK_REP, 30), B(5, BK_RET, 0)},
     {E(0, 1, RCFG_FALL), E(1, 2, RCFG_FALL)},
     {W(3, RFLOW_B_CHAIN), W(3, RFLOW_B_CHAIN), W(3, RFLOW_B_CHAIN)},
     {W(3, RFLOW_DECIDED), W(3, RFLOW_DECIDED)}},
    /* The same chain with a jump from D into B: B has two in-edges, so A is a
     * chain of its own (no samples: none) and B-C another, (20 + 15) / 7 = 5.
     * D (1 insn, weight 4) jumps to B 4 times; B's in-equation is open (OPEN
     * model): A -> B + A = 0 keeps two unknowns. */
    {CASE("jump into a chain cuts it", RFLOW_ENTRY_OPEN, 4, 3),
     {B(3, BK_SYSCALL, 0), B(2, BK_REP, 20), B(5, BK_RET, 15), B(1, BK_JMP, 4)},
     {E(0, 1, RCFG_FALL), E(1, 2, RCFG_FALL), E(3, 1, RCFG_TAKEN)},
     {W(UNK, RFLOW_B_NONE), W(5, RFLOW_B_CHAIN), W(5, RFLOW_B_CHAIN), W(4, RFLOW_B_SAMPLES)},
     {W(UNK, RFLOW_UNDECIDED), W(5, RFLOW_DECIDED), W(4, RFLOW_DECIDED)}},
    /* ... and with the graph closed, B's in-equation gives A -> B = 5 - 4 = 1,
     * then A's out-equation A = 1. */
    {CASE("jump into a chain, closed", RFLOW_ENTRY_CLOSED, 4, 3),
     {B(3, BK_SYSCALL, 0), B(2, BK_REP, 20), B(5, BK_RET, 15), B(1, BK_JMP, 4)},
     {E(0, 1, RCFG_FALL), E(1, 2, RCFG_FALL), E(3, 1, RCFG_TAKEN)},
     {W(1, RFLOW_B_FLOW), W(5, RFLOW_B_CHAIN), W(5, RFLOW_B_CHAIN), W(4, RFLOW_B_SAMPLES)},
     {W(1, RFLOW_DECIDED), W(5, RFLOW_DECIDED), W(4, RFLOW_DECIDED)}},
    /* A loop: preheader P (2 insns, 20: 10 times) falls into head H (4 insns,
     * 400: 100 times) whose jcc was seen taken back 90 and falling out 10 to X.
     * P -> P's only out-edge: 10. (H has two in-edges: no chain.) */
    {CASE("loop with observed jcc", RFLOW_ENTRY_OPEN, 3, 3),
     {B(2, BK_NONE, 20), B(4, BK_COND, 400), B(1, BK_RET, 10)},
     {E(0, 1, RCFG_FALL), EO(1, 2, RCFG_FALL, 10), EO(1, 1, RCFG_TAKEN, 90)},
     {W(10, RFLOW_B_SAMPLES), W(100, RFLOW_B_SAMPLES), W(10, RFLOW_B_SAMPLES)},
     {W(10, RFLOW_DECIDED), W(10, RFLOW_OBSERVED), W(90, RFLOW_OBSERVED)}},
    /* The preheader unsampled: open, P -> H + P = 0 has two unknowns and H's
     * in-equation an entry; closed, H's in-equation gives P -> H = 100 - 90 = 10
     * and P's out-equation P = 10. */
    {CASE("loop, preheader unsampled, open", RFLOW_ENTRY_OPEN, 3, 3),
     {B(2, BK_NONE, 0), B(4, BK_COND, 400), B(1, BK_RET, 10)},
     {E(0, 1, RCFG_FALL), EO(1, 2, RCFG_FALL, 10), EO(1, 1, RCFG_TAKEN, 90)},
     {W(UNK, RFLOW_B_NONE), W(100, RFLOW_B_SAMPLES), W(10, RFLOW_B_SAMPLES)},
     {W(UNK, RFLOW_UNDECIDED), W(10, RFLOW_OBSERVED), W(90, RFLOW_OBSERVED)}},
    {CASE("loop, preheader unsampled, closed", RFLOW_ENTRY_CLOSED, 3, 3),
     {B(2, BK_NONE, 0), B(4, BK_COND, 400), B(1, BK_RET, 10)},
     {E(0, 1, RCFG_FALL), EO(1, 2, RCFG_FALL, 10), EO(1, 1, RCFG_TAKEN, 90)},
     {W(10, RFLOW_B_FLOW), W(100, RFLOW_B_SAMPLES), W(10, RFLOW_B_SAMPLES)},
     {W(10, RFLOW_DECIDED), W(10, RFLOW_OBSERVED), W(90, RFLOW_OBSERVED)}},
    /* A diamond A(jcc, 2 insns, 100: 50) -fall-> B(3, 60: 20) -jmp-> D(1, 50),
     * A -taken-> C(2, unsampled) -fall-> D, jcc not observed. Open: only
     * B -> D = 20 (B's out-edge); A's out-equation has two unknowns, D's in an
     * entry. Closed: D in: C -> D = 50 - 20 = 30; C out: C = 30; C in:
     * A -> C = 30; A out: A -> B = 50 - 30 = 20. */
    {CASE("diamond, open", RFLOW_ENTRY_OPEN, 4, 4),
     {B(2, BK_COND, 100), B(3, BK_JMP, 60), B(2, BK_NONE, 0), B(1, BK_RET, 50)},
     {E(0, 1, RCFG_FALL), E(0, 2, RCFG_TAKEN), E(1, 3, RCFG_TAKEN), E(2, 3, RCFG_FALL)},
     {W(50, RFLOW_B_SAMPLES), W(20, RFLOW_B_SAMPLES), W(UNK, RFLOW_B_NONE), W(50, RFLOW_B_SAMPLES)},
     {W(UNK, RFLOW_UNDECIDED), W(UNK, RFLOW_UNDECIDED), W(20, RFLOW_DECIDED),
      W(UNK, RFLOW_UNDECIDED)}},
    {CASE("diamond, closed", RFLOW_ENTRY_CLOSED, 4, 4),
     {B(2, BK_COND, 100), B(3, BK_JMP, 60), B(2, BK_NONE, 0), B(1, BK_RET, 50)},
     {E(0, 1, RCFG_FALL), E(0, 2, RCFG_TAKEN), E(1, 3, RCFG_TAKEN), E(2, 3, RCFG_FALL)},
     {W(50, RFLOW_B_SAMPLES), W(20, RFLOW_B_SAMPLES), W(30, RFLOW_B_FLOW), W(50, RFLOW_B_SAMPLES)},
     {W(20, RFLOW_DECIDED), W(30, RFLOW_DECIDED), W(20, RFLOW_DECIDED), W(30, RFLOW_DECIDED)}},
    /* Two jccs P(10) and Q(6) with the same targets R(7) and S(9), no
     * direction observed: P->R + P->S = 10, Q->R + Q->S = 6, P->R + Q->R = 7,
     * P->S + Q->S = 9. Rank 3 for 4 unknowns (P->R = 3 + t, P->S = 7 - t,
     * Q->R = 4 - t, Q->S = 2 + t fit any t): none is decided. */
    {CASE("two unknowns at every block", RFLOW_ENTRY_CLOSED, 4, 4),
     {B(1, BK_COND, 10), B(1, BK_COND, 6), B(1, BK_RET, 7), B(1, BK_RET, 9)},
     {E(0, 2, RCFG_FALL), E(0, 3, RCFG_TAKEN), E(1, 2, RCFG_TAKEN), E(1, 3, RCFG_FALL)},
     {W(10, RFLOW_B_SAMPLES), W(6, RFLOW_B_SAMPLES), W(7, RFLOW_B_SAMPLES), W(9, RFLOW_B_SAMPLES)},
     {W(UNK, RFLOW_UNDECIDED), W(UNK, RFLOW_UNDECIDED), W(UNK, RFLOW_UNDECIDED),
      W(UNK, RFLOW_UNDECIDED)}},
    /* Exact input (a truth): entry E (2 insns, once) falls into loop head H
     * (3 insns, 11 times: jcc taken to exit X once, falls to T 10 times); T
     * (2 insns, jcc: taken to L-arm Ee 4, falls to Th 6); Th (1 insn, syscall)
     * falls into Th2 (2 insns, jmp to latch L): a chain of 3 insns, weight
     * 6 + 12 = 18, 6 times; Ee (2 insns) falls into L 4 times; L (2 insns, 10)
     * jumps back to H. Falls: E->H = 1 (E out), Th->Th2 = 6 (Th out), Ee->L = 4
     * (Ee out); jumps Th2->L = 6, L->H = 10. */
    {CASE("exact loop with if/else", RFLOW_ENTRY_OPEN, 8, 9),
     {B(2, BK_NONE, 2), B(3, BK_COND, 33), B(2, BK_COND, 20), B(1, BK_SYSCALL, 6), B(2, BK_JMP, 12),
      B(2, BK_NONE, 8), B(2, BK_JMP, 20), B(1, BK_RET, 1)},
     {E(0, 1, RCFG_FALL), EO(1, 2, RCFG_FALL, 10), EO(1, 7, RCFG_TAKEN, 1), EO(2, 3, RCFG_FALL, 6),
      EO(2, 5, RCFG_TAKEN, 4), E(3, 4, RCFG_FALL), E(4, 6, RCFG_TAKEN), E(5, 6, RCFG_FALL),
      E(6, 1, RCFG_TAKEN)},
     {W(1, RFLOW_B_SAMPLES), W(11, RFLOW_B_SAMPLES), W(10, RFLOW_B_SAMPLES), W(6, RFLOW_B_CHAIN),
      W(6, RFLOW_B_CHAIN), W(4, RFLOW_B_SAMPLES), W(10, RFLOW_B_SAMPLES), W(1, RFLOW_B_SAMPLES)},
     {W(1, RFLOW_DECIDED), W(10, RFLOW_OBSERVED), W(1, RFLOW_OBSERVED), W(6, RFLOW_OBSERVED),
      W(4, RFLOW_OBSERVED), W(6, RFLOW_DECIDED), W(6, RFLOW_DECIDED), W(4, RFLOW_DECIDED),
      W(10, RFLOW_DECIDED)}},
    /* Exact input, no jcc observed, closed: the same shape as a straight
     * function A(jcc 3 insns, 7 times) -fall-> B(1, 5) -fall-> C(2, 7: join),
     * A -taken-> C. B's out: B->C = 5; C in: A->C = 7 - 5 = 2; A out:
     * A->B = 7 - 2 = 5 (checks B in). C leaves the graph through a jump. */
    {CASE("exact join, closed", RFLOW_ENTRY_CLOSED, 3, 4),
     {B(3, BK_COND, 21), B(1, BK_NONE, 5), B(2, BK_JMP, 14)},
     {E(0, 1, RCFG_FALL), E(0, 2, RCFG_TAKEN), E(1, 2, RCFG_FALL), E(2, OUT, RCFG_TAKEN)},
     {W(7, RFLOW_B_SAMPLES), W(5, RFLOW_B_SAMPLES), W(7, RFLOW_B_SAMPLES)},
     {W(5, RFLOW_DECIDED), W(2, RFLOW_DECIDED), W(5, RFLOW_DECIDED), W(7, RFLOW_DECIDED)}},
};

static void check_case(const struct flow_case *c)
{
	struct rcfg_block blk[MAXB];
	struct rcfg_edge edg[MAXE];
	struct rcfg g = make_graph(blk, edg, c->nb, c->b, c->ne, c->e);
	struct rflow *f = infer(&g, c->entry);
	size_t mismatches = 0;
	for (size_t i = 0; i < c->nb; i++) {
		const struct want *w = &c->wb[i];
		const struct rflow_block *b = &f->block[i];
		ck_assert_msg(b->source == w->source, "line %d (%s): block %zu source %s", c->line,
		              c->name, i, rflow_block_source_name(b->source));
		if (w->count != UNK)
			mismatches += b->count != w->count;
		ck_assert_msg(w->count == UNK || b->count == w->count,
		              "line %d (%s): block %zu count %g", c->line, c->name, i, b->count);
	}
	for (size_t i = 0; i < c->ne; i++) {
		const struct want *w = &c->we[i];
		const struct rflow_edge *e = &f->edge[i];
		ck_assert_msg(e->source == w->source, "line %d (%s): edge %zu source %s", c->line,
		              c->name, i, rflow_edge_source_name(e->source));
		if (w->count != UNK)
			mismatches += e->count != w->count;
		ck_assert_msg(w->count == UNK || e->count == w->count,
		              "line %d (%s): edge %zu count %g", c->line, c->name, i, e->count);
	}
	ck_assert_uint_eq(f->nobserved + f->ndecided + f->nundecided, c->ne);
	ck_assert_uint_eq(f->nnegative, 0);
	printf("%s: %zu observed, %zu decided, %zu undecided, %zu mismatches\n", c->name,
	       f->nobserved, f->ndecided, f->nundecided, mismatches);
	rflow_free(f);
}

START_TEST(hand_made)
{
	check_case(&cases[_i]);
}
END_TEST

/* Samples that disagree: B's samples say 5 while the jcc before it says it
 * fell through 8 times; B's count stands and the jcc's other arm decided from
 * the join comes out 7 - 8 = -1, reported as computed and counted. */
START_TEST(noisy_negative)
{
	static const struct tblock tb[] = {B(1, BK_COND, 7), B(1, BK_NONE, 5), B(1, BK_RET, 7)};
	static const struct tedge te[] = {EO(0, 1, RCFG_FALL, 8), E(0, 2, RCFG_TAKEN),
	                                  E(1, 2, RCFG_FALL)};
	struct rcfg_block blk[3];
	struct rcfg_edge edg[3];
	struct rcfg g = make_graph(blk, edg, 3, tb, 3, te);
	struct rflow *f = infer(&g, RFLOW_ENTRY_OPEN);
	ck_assert(f->edge[1].source == RFLOW_DECIDED && f->edge[1].count == -1);
	ck_assert(f->edge[2].source == RFLOW_DECIDED && f->edge[2].count == 5);
	ck_assert_uint_eq(f->nnegative, 1);
	rflow_free(f);
}
END_TEST

START_TEST(bad_input)
{
	static const struct tblock tb[] = {B(1, BK_JMP, 1), B(0, BK_RET, 1)};
	static const struct tedge te[] = {E(0, 1, RCFG_TAKEN)};
	struct rcfg_block blk[2];
	struct rcfg_edge edg[1];
	struct rcfg g = make_graph(blk, edg, 2, tb, 1, te);
	struct rflow *f = (struct rflow *)1;
	char msg[128] = "";
	ck_assert_int_eq(rflow_infer(&g, NULL, &f, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	ck_assert_ptr_null(f);
	ck_assert_msg(strstr(msg, "no instruction") != NULL, "%s", msg);
	blk[1].ninsns = 1;
	edg[0].to = 7;
	ck_assert_int_eq(rflow_infer(&g, NULL, &f, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	edg[0].to = 1;
	struct rflow_options o = {.entry = 9};
	ck_assert_int_eq(rflow_infer(&g, &o, &f, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	struct rcfg empty = {0};
	ck_assert_int_eq(rflow_infer(&empty, NULL, &f, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(f->nblock + f->nedge, 0);
	rflow_free(f);
}
END_TEST

/* ---- property test ---- */

static uint64_t rng_state;

static unsigned rnd(unsigned n)
{
	/* xorshift64*: seeded, so every run draws the same graphs */
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return (unsigned)((rng_state * 0x2545F4914F6CDD1DULL) >> 33) % n;
}

struct gen {
	size_t nb, ne;
	struct tblock b[MAXB];
	struct tedge e[MAXE];
	long bcount[MAXB], ecount[MAXE];
	int exit[MAXB], entry[MAXB], link[MAXE], link_end[MAXB]; /* link_end: source or target */
	int linked_in[MAXB];
};

static size_t rnd_target(size_t nb)
{
	return rnd(10) == 0 ? OUT : rnd((unsigned)nb);
}

static void gen_edge(struct gen *x, size_t from, size_t to, int kind)
{
	x->e[x->ne++] = (struct tedge){from, to, kind, 0, 0};
}

/* Blocks of random kinds, their edges to random blocks (sometimes out). */
static void gen_shape(struct gen *x)
{
	memset(x, 0, sizeof(*x));
	x->nb = 2 + rnd(MAXB - 1);
	for (size_t i = 0; i < x->nb; i++) {
		unsigned k = rnd(20), room = (unsigned)(MAXE - x->ne);
		x->b[i].ninsns = 1 + rnd(4);
		if (k < 7 && room >= 2) {
			x->b[i].kind = BK_COND;
			gen_edge(x, i, rnd_target(x->nb), RCFG_FALL);
			gen_edge(x, i, rnd_target(x->nb), RCFG_TAKEN);
		} else if (k < 10 && room >= 1) {
			x->b[i].kind = BK_JMP;
			gen_edge(x, i, rnd_target(x->nb), RCFG_TAKEN);
		} else if (k < 14 && room >= 1) {
			x->b[i].kind = k < 12 ? BK_NONE : BK_SYSCALL;
			gen_edge(x, i, rnd_target(x->nb), RCFG_FALL);
		} else if (k < 16 && room >= 1) {
			x->b[i].kind = BK_CALL;
			gen_edge(x, i, rnd_target(x->nb), RCFG_CALL_RETURN);
		} else if (k < 18 && room >= 1) {
			x->b[i].kind = BK_JMP_IND;
			for (unsigned n = 1 + rnd(room < 2 ? 1 : 2); n > 0; n--)
				gen_edge(x, i, rnd((unsigned)x->nb), RCFG_INDIRECT);
		} else {
			x->b[i].kind = BK_RET;
		}
		x->exit[i] = x->b[i].kind == BK_RET || x->b[i].kind == BK_JMP_IND;
	}
}

/* Links and entries as region_flow.h defines them. */
static void gen_links(struct gen *x, int entry_model)
{
	int indeg[MAXB] = {0}, outdeg[MAXB] = {0};
	for (size_t i = 0; i < x->ne; i++) {
		outdeg[x->e[i].from]++;
		if (x->e[i].to != OUT)
			indeg[x->e[i].to]++;
	}
	for (size_t i = 0; i < x->ne; i++) {
		const struct tedge *e = &x->e[i];
		x->link[i] = e->kind == RCFG_FALL && e->to != OUT && e->to != e->from &&
		             outdeg[e->from] == 1 && !x->exit[e->from] && indeg[e->to] == 1;
		if (x->link[i]) {
			x->linked_in[e->to] = 1;
			x->link_end[e->to] = x->link_end[e->from] = 1;
		}
	}
	for (size_t b = 0; b < x->nb; b++)
		x->entry[b] = entry_model == RFLOW_ENTRY_OPEN ? !x->linked_in[b] : indeg[b] == 0;
}

/* One execution: from an entry to an exit (a return, an indirect jump's
 * unseen target, an edge out); a walk that finds none in 60 steps is dropped. */
static void gen_walk(struct gen *x)
{
	size_t starts[MAXB], ns = 0, path[64], np = 0;
	for (size_t b = 0; b < x->nb; b++)
		if (x->entry[b])
			starts[ns++] = b;
	if (!ns)
		return;
	size_t b = starts[rnd((unsigned)ns)], visited[64], nv = 0;
	for (;;) {
		if (nv == 60)
			return;
		visited[nv++] = b;
		size_t first = MAXE, n = 0;
		for (size_t i = 0; i < x->ne; i++)
			if (x->e[i].from == b) {
				first = i < first ? i : first;
				n++;
			}
		unsigned pick = rnd((unsigned)(n + (size_t)x->exit[b]));
		if (pick == n)
			break;
		path[np++] = first + pick;
		b = x->e[first + pick].to;
		if (b == OUT)
			break;
	}
	for (size_t i = 0; i < nv; i++)
		x->bcount[visited[i]]++;
	for (size_t i = 0; i < np; i++)
		x->ecount[path[i]]++;
}

/* Rationals, enough for the elimination of a 0/±1 matrix of at most 16 rows. */
struct q {
	int64_t n, d; /* d > 0, gcd(n, d) = 1 */
};

static int64_t gcd64(int64_t a, int64_t b)
{
	a = a < 0 ? -a : a;
	while (b) {
		int64_t t = a % b;
		a = b;
		b = t < 0 ? -t : t;
	}
	return a ? a : 1;
}

static struct q q_make(__int128 n, __int128 d)
{
	if (d < 0) {
		n = -n;
		d = -d;
	}
	ck_assert(n < INT64_MAX && n > -INT64_MAX && d < INT64_MAX);
	int64_t g = gcd64((int64_t)n, (int64_t)d);
	return (struct q){(int64_t)n / g, (int64_t)d / g};
}

/* a - f * b */
static struct q q_submul(struct q a, struct q f, struct q b)
{
	__int128 fn = (__int128)f.n * b.n, fd = (__int128)f.d * b.d;
	struct q p = q_make(fn, fd);
	return q_make((__int128)a.n * p.d - (__int128)p.n * a.d, (__int128)a.d * p.d);
}

#define MAXV (MAXE + MAXB)

/* Which unknowns the equations fix: reduced row echelon form of the matrix
 * (rows: equations, columns: unknowns); an unknown is fixed when it is a pivot
 * whose row holds no free column. */
static void determined(struct q m[2 * MAXB][MAXV], size_t nr, size_t nc, int *fixed)
{
	size_t row = 0;
	int pivot_row[MAXV];
	for (size_t c = 0; c < nc; c++) {
		pivot_row[c] = -1;
		size_t p = row;
		while (p < nr && m[p][c].n == 0)
			p++;
		if (p == nr)
			continue;
		for (size_t k = 0; k < nc; k++) {
			struct q t = m[p][k];
			m[p][k] = m[row][k];
			m[row][k] = t;
		}
		struct q inv = q_make(m[row][c].d, m[row][c].n);
		for (size_t k = 0; k < nc; k++)
			m[row][k] =
			    q_make((__int128)m[row][k].n * inv.n, (__int128)m[row][k].d * inv.d);
		for (size_t r = 0; r < nr; r++) {
			struct q f = m[r][c];
			if (r == row || f.n == 0)
				continue;
			for (size_t k = 0; k < nc; k++)
				m[r][k] = q_submul(m[r][k], f, m[row][k]);
		}
		pivot_row[c] = (int)row++;
	}
	for (size_t c = 0; c < nc; c++) {
		fixed[c] = pivot_row[c] >= 0;
		for (size_t k = 0; k < nc && fixed[c]; k++)
			if (k != c && pivot_row[k] < 0 && m[pivot_row[c]][k].n != 0)
				fixed[c] = 0;
	}
}

/* The equations of region_flow.h on x's unknowns (edges not observed, then
 * blocks of weight 0): out(b) unless b has an exit, in(b) unless b is an entry. */
static void reference(const struct gen *x, int *efixed, int *bfixed)
{
	static struct q m[2 * MAXB][MAXV];
	int ecol[MAXE], bcol[MAXB];
	size_t nc = 0, nr = 0;
	for (size_t i = 0; i < x->ne; i++)
		ecol[i] = x->e[i].observed ? -1 : (int)nc++;
	for (size_t b = 0; b < x->nb; b++)
		bcol[b] = x->b[b].weight > 0 ? -1 : (int)nc++;
	for (size_t b = 0; b < x->nb; b++)
		for (int side = 0; side < 2; side++) {
			if (side == 0 ? x->exit[b] : x->entry[b])
				continue;
			for (size_t c = 0; c < nc; c++)
				m[nr][c] = (struct q){0, 1};
			for (size_t i = 0; i < x->ne; i++)
				if (ecol[i] >= 0 && (side == 0 ? x->e[i].from : x->e[i].to) == b)
					m[nr][ecol[i]].n += 1;
			if (bcol[b] >= 0)
				m[nr][bcol[b]].n = -1;
			nr++;
		}
	int fixed[MAXV];
	determined(m, nr, nc, fixed);
	for (size_t i = 0; i < x->ne; i++)
		efixed[i] = ecol[i] < 0 || fixed[ecol[i]];
	for (size_t b = 0; b < x->nb; b++)
		bfixed[b] = bcol[b] < 0 || fixed[bcol[b]];
}

struct tally {
	size_t graphs, edges, observed, decided, fixed_edges, falls_fixed, falls_decided, gaps;
	size_t blocks_flow;
};

static void gen_graph(struct gen *x, int entry_model)
{
	gen_shape(x);
	gen_links(x, entry_model);
	for (unsigned n = rnd(40); n > 0; n--)
		gen_walk(x);
	for (size_t b = 0; b < x->nb; b++) {
		x->b[b].weight = (double)x->bcount[b] * x->b[b].ninsns;
		/* unsampled, outside any chain (a chain's weight is pooled) */
		if (!x->link_end[b] && rnd(4) == 0)
			x->b[b].weight = 0;
	}
	for (size_t i = 0; i < x->ne; i++)
		if (x->e[i].kind != RCFG_CALL_RETURN && x->b[x->e[i].from].kind == BK_COND &&
		    rnd(2)) {
			x->e[i].observed = 1;
			x->e[i].weight = (double)x->ecount[i];
		}
}

/* One random graph: what the solver says must be true (every count it gives
 * equals the walks'), never a guess (every unknown it decides the equations
 * fix), and, open, complete (every unknown the equations fix it decides). */
static void check_random(int entry_model, struct tally *t)
{
	struct gen x;
	gen_graph(&x, entry_model);
	struct rcfg_block blk[MAXB];
	struct rcfg_edge edg[MAXE];
	struct rcfg g = make_graph(blk, edg, x.nb, x.b, x.ne, x.e);
	struct rflow *f = infer(&g, entry_model);
	int efixed[MAXE], bfixed[MAXB];
	reference(&x, efixed, bfixed);
	int complete = entry_model == RFLOW_ENTRY_OPEN;
	for (size_t i = 0; i < x.ne; i++) {
		const struct rflow_edge *e = &f->edge[i];
		int decided = e->source != RFLOW_UNDECIDED, fall = x.e[i].kind == RCFG_FALL;
		ck_assert_msg(!decided || e->count == (double)x.ecount[i],
		              "graph %zu edge %zu: %g, walks %ld", t->graphs, i, e->count,
		              x.ecount[i]);
		ck_assert_msg(!decided || efixed[i], "graph %zu edge %zu: a guess", t->graphs, i);
		ck_assert_msg(!complete || decided || !efixed[i],
		              "graph %zu edge %zu: fixed, undecided", t->graphs, i);
		t->observed += e->source == RFLOW_OBSERVED;
		t->decided += e->source == RFLOW_DECIDED;
		t->fixed_edges += efixed[i];
		t->falls_fixed += fall && efixed[i];
		t->falls_decided += fall && decided;
		t->gaps += efixed[i] && !decided;
	}
	for (size_t b = 0; b < x.nb; b++) {
		const struct rflow_block *fb = &f->block[b];
		int known = fb->source != RFLOW_B_NONE;
		ck_assert_msg(!known || fb->count == (double)x.bcount[b],
		              "graph %zu block %zu: %g, walks %ld", t->graphs, b, fb->count,
		              x.bcount[b]);
		ck_assert_msg(known == (x.b[b].weight > 0) || fb->source == RFLOW_B_FLOW,
		              "graph %zu block %zu: source %s", t->graphs, b,
		              rflow_block_source_name(fb->source));
		ck_assert_msg(!known || bfixed[b], "graph %zu block %zu: a guess", t->graphs, b);
		ck_assert_msg(!complete || known || !bfixed[b], "graph %zu block %zu: undecided",
		              t->graphs, b);
		t->blocks_flow += fb->source == RFLOW_B_FLOW;
	}
	ck_assert_uint_eq(f->nnegative, 0);
	t->edges += x.ne;
	t->graphs++;
	rflow_free(f);
}

static void random_graphs(int entry_model, const char *name)
{
	rng_state = 0x9e3779b97f4a7c15ULL + (uint64_t)entry_model;
	struct tally t = {0};
	for (int i = 0; i < 8000; i++)
		check_random(entry_model, &t);
	printf("random %s: %zu graphs, %zu edges: %zu observed, %zu decided, %zu known or fixed by "
	       "the "
	       "equations (%zu falls fixed, %zu falls decided), %zu fixed but undecided; %zu "
	       "block counts by flow\n",
	       name, t.graphs, t.edges, t.observed, t.decided, t.fixed_edges, t.falls_fixed,
	       t.falls_decided, t.gaps, t.blocks_flow);
}

START_TEST(random_open)
{
	random_graphs(RFLOW_ENTRY_OPEN, "open");
}
END_TEST

START_TEST(random_closed)
{
	random_graphs(RFLOW_ENTRY_CLOSED, "closed");
}
END_TEST

static Suite *region_flow_suite(void)
{
	Suite *s = suite_create("region_flow");
	TCase *tc = tcase_create("infer");
	tcase_add_loop_test(tc, hand_made, 0, (int)N(cases));
	tcase_add_test(tc, noisy_negative);
	tcase_add_test(tc, bad_input);
	tcase_add_test(tc, random_open);
	tcase_add_test(tc, random_closed);
	tcase_set_timeout(tc, 60);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(region_flow_suite());
}
