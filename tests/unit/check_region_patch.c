/* Unit tests of profiler/region_patch: hand-made graphs whose blocks carry
 * hand-written instruction lengths at hand-chosen addresses (drawn beside
 * each table), run through rgraph_build; the patch points (block, instruction,
 * address, length, store) and each loop's status are written out by hand
 * from the drawings and the rules of region_patch.h: an instruction of 5
 * bytes or more, executed, no edge into its first 5 bytes, no other stream
 * over them; 5 bytes within one aligned 8-byte word (addr % 8 <= 3) written
 * by one atomic store, others by the int3 protocol. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>

#include "common/err.h"
#include "profiler/region_patch.h"
#include "tests/unit/run_suite.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
#define END (-1)

/* A block: its start, its instruction lengths (0 ends them), weight, flags. */
struct tblock {
	unsigned start;
	int len[6];
	double weight;
	int flags;
};

/* An edge; out != RCFG_IN leaves the graph, to addr (0: 0x9000). */
struct pedge {
	int from, to, kind, out;
	unsigned addr;
};

struct xpoint {
	int block, insn;
	unsigned addr;
	int len, store, nentry;
};

/* A loop's expected result: status, by (BY_OUTER), the uncovered entry with
 * why and up, and the point of each entry (COVERED). */
struct xloop {
	int status, by, entry, why, up;
	int point[4];
};

struct pcase {
	int line;
	const char *name;
	const struct tblock *b;
	size_t nb;
	const struct pedge *e;
	size_t ne;
	const double *count; /* a flow's block counts, NULL for none */
	const struct xpoint *pt;
	size_t npt;
	const struct xloop *lp;
	size_t nlp;
};

static struct rcfg *make_graph(const struct pcase *c)
{
	struct rcfg *g = calloc(1, sizeof(*g));
	ck_assert_ptr_nonnull(g);
	g->nblock = c->nb;
	g->block = calloc(c->nb + 1, sizeof(*g->block));
	g->nedge = c->ne;
	g->edge = calloc(c->ne + 1, sizeof(*g->edge));
	ck_assert(g->block && g->edge);
	for (size_t i = 0; i < c->nb; i++) {
		const struct tblock *t = &c->b[i];
		struct rcfg_block *b = &g->block[i];
		uint32_t n = 0;
		while (t->len[n])
			n++;
		b->off = calloc(n + 1, sizeof(*b->off));
		ck_assert_ptr_nonnull(b->off);
		for (uint32_t k = 0; k < n; k++)
			b->off[k + 1] = (uint16_t)(b->off[k] + t->len[k]);
		b->ninsns = n;
		b->start = t->start;
		b->end = t->start + b->off[n];
		b->weight = t->weight;
		b->flags = (uint8_t)t->flags;
		b->first_edge = c->ne;
		ck_assert(i == 0 || b->start > g->block[i - 1].start);
	}
	for (size_t k = 0; k < c->ne; k++) {
		const struct pedge *x = &c->e[k];
		ck_assert(k == 0 || c->e[k - 1].from <= x->from);
		struct rcfg_block *b = &g->block[x->from];
		if (b->nedge == 0)
			b->first_edge = k;
		b->nedge++;
		struct rcfg_edge *e = &g->edge[k];
		e->from = (size_t)x->from;
		e->kind = (uint8_t)x->kind;
		e->out = (uint8_t)x->out;
		e->to = x->out == RCFG_IN ? (size_t)x->to : RCFG_NO_BLOCK;
		e->to_addr = x->out == RCFG_IN ? g->block[x->to].start : x->addr ? x->addr : 0x9000;
	}
	return g;
}

static void print_result(const char *name, const struct rpatch *p)
{
	printf("%s: %zu points", name, p->npoint);
	for (size_t j = 0; j < p->npoint; j++)
		printf(" %#llx/%u/%s", (unsigned long long)p->point[j].addr, p->point[j].len,
		       rpatch_store_name(p->point[j].store));
	printf("; loops %zu covered, %zu by outer, %zu uncovered", p->ncovered, p->nby_outer,
	       p->nuncovered);
	for (size_t l = 0; l < p->nloop; l++)
		if (p->loop[l].status == RPATCH_UNCOVERED)
			printf(" (loop %zu: entry %zu %s, up %s)", l, p->loop[l].entry,
			       rpatch_why_name(p->loop[l].why), rpatch_up_name(p->loop[l].up));
	printf("\n");
}

static void check_points(int line, const struct rpatch *p, const struct xpoint *x, size_t n)
{
	ck_assert_msg(p->npoint == n, "line %d: %zu points, expected %zu", line, p->npoint, n);
	for (size_t j = 0; j < n; j++) {
		const struct rpatch_point *q = &p->point[j];
		ck_assert_msg(q->block == (size_t)x[j].block && q->insn == (uint32_t)x[j].insn &&
		                  q->addr == x[j].addr && q->len == x[j].len,
		              "line %d: point %zu at block %zu insn %u %#llx len %u", line, j,
		              q->block, q->insn, (unsigned long long)q->addr, q->len);
		ck_assert_msg(q->store == x[j].store && q->nentry == (size_t)x[j].nentry,
		              "line %d: point %zu store %s, %zu entries", line, j,
		              rpatch_store_name(q->store), q->nentry);
	}
}

static void check_loops(int line, const struct rgraph_region *r, const struct rpatch *p,
                        const struct xloop *x, size_t n)
{
	ck_assert_msg(p->nloop == n && r->nloop == n, "line %d: %zu loops, expected %zu", line,
	              p->nloop, n);
	for (size_t l = 0; l < n; l++) {
		const struct rpatch_loop *q = &p->loop[l];
		ck_assert_msg(q->status == x[l].status, "line %d: loop %zu %s", line, l,
		              rpatch_status_name(q->status));
		ck_assert_msg(q->by == (x[l].by == END ? RPATCH_NONE : (size_t)x[l].by) &&
		                  q->entry ==
		                      (x[l].entry == END ? RPATCH_NONE : (size_t)x[l].entry),
		              "line %d: loop %zu by %zu entry %zu", line, l, q->by, q->entry);
		ck_assert_msg(q->why == x[l].why && q->up == x[l].up, "line %d: loop %zu %s %s",
		              line, l, rpatch_why_name(q->why), rpatch_up_name(q->up));
		if (q->status != RPATCH_COVERED) {
			ck_assert_msg(q->point == NULL && x[l].point[0] == END, "line %d", line);
			continue;
		}
		size_t k = 0;
		for (; x[l].point[k] != END; k++)
			ck_assert_msg(q->point[k] == (size_t)x[l].point[k],
			              "line %d: loop %zu entry %zu by point %zu", line, l, k,
			              q->point[k]);
		ck_assert_msg(k == r->loop[l].nentry, "line %d: loop %zu has %zu entries", line, l,
		              r->loop[l].nentry);
	}
}

/* Runs c on region 0 of its graph. */
static void run_case(const struct pcase *c)
{
	struct rcfg *g = make_graph(c);
	struct rgraph *rg = NULL;
	char msg[256] = "";
	ck_assert_msg(rgraph_build(g, &rg, msg, sizeof(msg)) == 0, "%s", msg);
	struct rflow_block fb[16] = {{0}};
	struct rflow f = {fb, c->nb, NULL, 0, 0, 0, 0, 0};
	ck_assert(c->nb <= N(fb));
	for (size_t i = 0; c->count && i < c->nb; i++)
		fb[i].count = c->count[i];
	struct rpatch *p = NULL;
	int err = rpatch_find(g, &rg->region[0], c->count ? &f : NULL, &p, msg, sizeof(msg));
	ck_assert_msg(err == 0, "line %d: %d %s", c->line, err, msg);
	print_result(c->name, p);
	check_points(c->line, p, c->pt, c->npt);
	check_loops(c->line, &rg->region[0], p, c->lp, c->nlp);
	rpatch_free(p);
	rgraph_free(rg);
	rcfg_free(g);
}

/* clang-format off */
#define F RCFG_FALL
#define T RCFG_TAKEN
#define IN RCFG_IN
#define HOPS RCFG_OUT_HOPS
#define X RCFG_EXIT
#define AT RPATCH_STORE_ATOMIC
#define I3 RPATCH_STORE_INT3
#define COV RPATCH_COVERED, END, END, RPATCH_WHY_OK, RPATCH_UP_NONE
#define BYOUT(l) RPATCH_BY_OUTER, l, END, RPATCH_WHY_OK, RPATCH_UP_NONE, { END }
#define UNCOV(e, why, up) RPATCH_UNCOVERED, END, e, RPATCH_WHY_##why, RPATCH_UP_##up, { END }

/* The tables' rows: blocks {start, instruction lengths, weight, flags}, edges {from, to,
 * kind, out, target when leaving}, then the points and the loops expected
 * (clang-format would put one field a line). */

/* 0 -> 1 <-> 2 -> 3 ret; 1 the header. 0x1000 [5 1 1 1], 0x1008 [5 2],
 * 0x100f [2], 0x1011 [1]. Both 0 and 1 qualify: the point moves down to the
 * header (8 % 8 = 0: atomic). */
static const struct tblock header5_b[] = {
    {0x1000, {5, 1, 1, 1}, 10, 0}, {0x1008, {5, 2}, 40, 0}, {0x100f, {2}, 40, 0},
    {0x1011, {1}, 10, X}};
static const struct pedge loop_e[] = {
    {0, 1, F, IN, 0}, {1, 2, F, IN, 0}, {2, 1, T, IN, 0}, {2, 3, F, IN, 0}};
static const struct xpoint header5_p[] = {{1, 0, 0x1008, 5, AT, 1}};
static const struct xloop header5_l[] = {{COV, {0, END}}};

/* The same loop, header at 0x1004: its 5 bytes 0x1004 .. 0x1008 cross the
 * word at 0x1008, so the int3 protocol. */
static const struct tblock cross_b[] = {
    {0x1000, {2, 2}, 10, 0}, {0x1004, {5, 2}, 40, 0}, {0x100b, {2}, 40, 0},
    {0x100d, {1}, 10, X}};
static const struct xpoint cross_p[] = {{1, 0, 0x1004, 5, I3, 1}};

/* A header of short instructions [2 3] at 0x100b, its preheader 1 at 0x1002
 * [7 2]: 0 -> 1 -> 2 <-> 3 -> 4 ret. Patched in the preheader (2 + 5 <= 8). */
static const struct tblock pre7_b[] = {
    {0x1000, {1, 1}, 10, 0}, {0x1002, {7, 2}, 10, 0}, {0x100b, {2, 3}, 40, 0},
    {0x1010, {2}, 40, 0}, {0x1012, {1}, 10, X}};
static const struct pedge pre7_e[] = {
    {0, 1, F, IN, 0}, {1, 2, F, IN, 0}, {2, 3, F, IN, 0}, {3, 2, T, IN, 0}, {3, 4, F, IN, 0}};
static const struct xpoint pre7_p[] = {{1, 0, 0x1002, 7, AT, 1}};

/* A header [2 6 2] at 0x1001: its second instruction, at 0x1003, is patched
 * (allowed: control enters the block at its start and passes the 2-byte
 * instruction, which does not branch). 3 + 5 = 8: atomic, at the limit. */
static const struct tblock after_b[] = {
    {0x1000, {1}, 10, 0}, {0x1001, {2, 6, 2}, 40, 0}, {0x100b, {2}, 40, 0},
    {0x100d, {1}, 10, X}};
static const struct xpoint after_p[] = {{1, 1, 0x1003, 6, AT, 1}};

/* Irreducible: 0 -> 1, 0 -> 2, 1 -> 2, 2 -> 1, 2 -> 3 ret; entries 1 and 2.
 * With 0 a 6-byte jcc at 0x1000, one point there covers both entries. */
static const struct tblock irr1_b[] = {
    {0x1000, {6}, 10, 0}, {0x1006, {5}, 20, 0}, {0x100b, {5, 2}, 40, 0},
    {0x1012, {1}, 10, X}};
static const struct pedge irr_e[] = {
    {0, 1, F, IN, 0}, {0, 2, T, IN, 0}, {1, 2, F, IN, 0}, {2, 1, T, IN, 0}, {2, 3, F, IN, 0}};
static const struct xpoint irr1_p[] = {{0, 0, 0x1000, 6, AT, 2}};
static const struct xloop irr_one_l[] = {{COV, {0, 0, END}}};

/* The same with 0 short: a point at each entry, 1 at 0x1002 (atomic), 2 at
 * 0x1007 (7 + 5 > 8: int3). */
static const struct tblock irr2_b[] = {
    {0x1000, {2}, 10, 0}, {0x1002, {5}, 20, 0}, {0x1007, {5, 2}, 40, 0},
    {0x100e, {1}, 10, X}};
static const struct xpoint irr2_p[] = {{1, 0, 0x1002, 5, AT, 1}, {2, 0, 0x1007, 5, I3, 1}};
static const struct xloop irr_two_l[] = {{COV, {0, 1, END}}};

/* The same with entry 2 [2 2] short too: entry 1 alone qualifies, which
 * does not cover the loop; reported at entry 2, no point written. */
static const struct tblock irr3_b[] = {
    {0x1000, {2}, 10, 0}, {0x1002, {5}, 20, 0}, {0x1007, {2, 2}, 40, 0},
    {0x100b, {1}, 10, X}};
static const struct xloop irr_half_l[] = {{UNCOV(2, SHORT, ENTRY)}};

/* Nested: 0 -> 1 -> 2 <-> 3 -> 4 -> 5 ret, 4 -> 1. Outer header 1 [2 5] at
 * 0x1001, inner header 2 [5] at 0x1008 would qualify too; one point, at
 * 0x1003, the inner loop covered by the outer. */
static const struct tblock nest_b[] = {
    {0x1000, {1}, 10, 0}, {0x1001, {2, 5}, 20, 0}, {0x1008, {5}, 80, 0},
    {0x100d, {2}, 80, 0}, {0x100f, {2}, 20, 0}, {0x1011, {1}, 10, X}};
static const struct pedge nest_e[] = {
    {0, 1, F, IN, 0}, {1, 2, F, IN, 0}, {2, 3, F, IN, 0}, {3, 2, T, IN, 0},
    {3, 4, F, IN, 0}, {4, 1, T, IN, 0}, {4, 5, F, IN, 0}};
static const struct xpoint nest_p[] = {{1, 1, 0x1003, 5, AT, 1}};
static const struct xloop nest_l[] = {{COV, {0, END}}, {BYOUT(0)}};

/* Outer header 1 [2] and preheader [1] short, inner header 2 [5] at 0x1003:
 * the outer loop uncovered, the inner one patched in its place. */
static const struct tblock inner_b[] = {
    {0x1000, {1}, 10, 0}, {0x1001, {2}, 20, 0}, {0x1003, {5}, 80, 0},
    {0x1008, {2}, 80, 0}, {0x100a, {2}, 20, 0}, {0x100c, {1}, 10, X}};
static const struct xpoint inner_p[] = {{2, 0, 0x1003, 5, AT, 1}};
static const struct xloop inner_l[] = {{UNCOV(1, SHORT, ENTRY)}, {COV, {0, END}}};

/* The header's 5 bytes 0x1002 .. 0x1006 overlapped by block 2, another
 * stream at 0x1004 [3] (sampled, no edge to it: its own region); the
 * preheader short: 0 -> 1 <-> 3 -> 4 ret. Uncovered. */
static const struct tblock overlap_b[] = {
    {0x1000, {1, 1}, 10, 0}, {0x1002, {5, 2}, 40, 0}, {0x1004, {3}, 1, 0},
    {0x1009, {2}, 40, 0}, {0x100b, {1}, 10, X}};
static const struct pedge overlap_e[] = {
    {0, 1, F, IN, 0}, {1, 3, F, IN, 0}, {3, 1, T, IN, 0}, {3, 4, F, IN, 0}};
static const struct xloop overlap_l[] = {{UNCOV(1, OVERLAP, ENTRY)}};

/* Block 3 jumps to 0x1008, inside the header's first 5 bytes 0x1006 ..
 * 0x100a (code not explored, more hops away): the header is refused, the
 * preheader's 6-byte instruction at 0x1000 patched instead. */
static const struct tblock inside_b[] = {
    {0x1000, {6}, 10, 0}, {0x1006, {5, 2}, 40, 0}, {0x100d, {2, 2}, 40, 0},
    {0x1011, {2}, 10, 0}, {0x1013, {1}, 10, X}};
static const struct pedge inside_e[] = {
    {0, 1, F, IN, 0}, {1, 2, F, IN, 0}, {2, 1, T, IN, 0}, {2, 3, F, IN, 0},
    {3, 4, F, IN, 0}, {3, -1, T, HOPS, 0x1008}};
static const struct xpoint inside_p[] = {{0, 0, 0x1000, 6, AT, 1}};

/* The loop 1 <-> 2 never executed (weight 0, no flow): header 0x1002 [5 2]
 * refused; with a flow that counts it 3 times, patched. */
static const struct tblock cold_b[] = {
    {0x1000, {1, 1}, 10, 0}, {0x1002, {5, 2}, 0, 0}, {0x1009, {2}, 0, 0},
    {0x100b, {1}, 10, X}};
static const double cold_count[] = {5, 3, 3, 5};
static const struct xpoint cold_p[] = {{1, 0, 0x1002, 5, AT, 1}};
static const struct xloop cold_l[] = {{UNCOV(1, NOT_EXECUTED, ENTRY)}};

/* Header [2 2] short; its dominator 0 has a 6-byte jcc but may leave the
 * graph (its taken edge is more hops away): uncovered, the walk stopped at
 * an exit. */
static const struct tblock leave_b[] = {
    {0x1000, {6}, 10, 0}, {0x1006, {2, 2}, 40, 0}, {0x100a, {2}, 40, 0},
    {0x100c, {1}, 10, X}};
static const struct pedge leave_e[] = {
    {0, 1, F, IN, 0}, {0, -1, T, HOPS, 0}, {1, 2, F, IN, 0}, {2, 1, T, IN, 0},
    {2, 3, F, IN, 0}};
static const struct xloop leave_l[] = {{UNCOV(1, SHORT, EXIT)}};

/* Two loops in a row, 0 -> 1 <-> 2 -> 3 <-> 4 -> 5 ret: the first patched at
 * 0x1003; the second's header 3 [2 2] short and its dominator 2 inside the
 * first loop: uncovered, the walk stopped at a loop. */
static const struct tblock seq_b[] = {
    {0x1000, {1}, 10, 0}, {0x1001, {2, 5}, 40, 0}, {0x1008, {2}, 40, 0},
    {0x100a, {2, 2}, 40, 0}, {0x100e, {2}, 40, 0}, {0x1010, {1}, 10, X}};
static const struct pedge seq_e[] = {
    {0, 1, F, IN, 0}, {1, 2, F, IN, 0}, {2, 1, T, IN, 0}, {2, 3, F, IN, 0},
    {3, 4, F, IN, 0}, {4, 3, T, IN, 0}, {4, 5, F, IN, 0}};
static const struct xpoint seq_p[] = {{1, 1, 0x1003, 5, AT, 1}};
static const struct xloop seq_l[] = {{COV, {0, END}}, {UNCOV(3, SHORT, LOOP)}};

/* Two loops behind one jcc: 0 [7] at 0x1000 -> 1 <-> 2 and -> 3 <-> 4, both
 * -> 5 ret; headers short: one point covers both loops. */
static const struct tblock fork_b[] = {
    {0x1000, {7}, 10, 0}, {0x1007, {2}, 40, 0}, {0x1009, {2}, 40, 0},
    {0x100b, {3}, 40, 0}, {0x100e, {2}, 40, 0}, {0x1010, {1}, 10, X}};
static const struct pedge fork_e[] = {
    {0, 1, F, IN, 0}, {0, 3, T, IN, 0}, {1, 2, F, IN, 0}, {2, 1, T, IN, 0},
    {2, 5, F, IN, 0}, {3, 4, F, IN, 0}, {4, 3, T, IN, 0}, {4, 5, F, IN, 0}};
static const struct xpoint fork_p[] = {{0, 0, 0x1000, 7, AT, 2}};
static const struct xloop fork_l[] = {{COV, {0, END}}, {COV, {0, END}}};

/* The same with long headers and the jcc between the loops: 0 [5 2] at
 * 0x1000 <-> 1 [2] -> 2 ret; 3 [7] at 0x100a, the pseudo-entry's only
 * successor, jccs to 0 or falls to 4 [5 2] at 0x1011 <-> 5 [2] -> 6 ret.
 * idom(0) = idom(4) = 3; 3 is in no loop and goes to loop blocks only. Each
 * header qualifies, but the highest candidate of both is 3, and no block
 * below 3 covers both: one point at 0x100a (10 % 8 = 2: atomic), after the
 * first loop's code. Loops by header: 0 {0, 1}, then 1 {4, 5}. */
static const struct tblock before_b[] = {
    {0x1000, {5, 2}, 40, 0}, {0x1007, {2}, 40, 0}, {0x1009, {1}, 10, X},
    {0x100a, {7}, 10, 0}, {0x1011, {5, 2}, 40, 0}, {0x1018, {2}, 40, 0},
    {0x101a, {1}, 10, X}};
static const struct pedge before_e[] = {
    {0, 1, F, IN, 0}, {1, 2, F, IN, 0}, {1, 0, T, IN, 0}, {3, 4, F, IN, 0},
    {3, 0, T, IN, 0}, {4, 5, F, IN, 0}, {5, 6, F, IN, 0}, {5, 4, T, IN, 0}};
static const struct xpoint before_p[] = {{3, 0, 0x100a, 7, AT, 2}};

/* The same with the second loop (blocks 4, 5) never executed: 3 still
 * covers it (3 executed); with a flow counting every block, the same. */
static const struct tblock before_cold_b[] = {
    {0x1000, {5, 2}, 40, 0}, {0x1007, {2}, 40, 0}, {0x1009, {1}, 10, X},
    {0x100a, {7}, 10, 0}, {0x1011, {5, 2}, 0, 0}, {0x1018, {2}, 0, 0},
    {0x101a, {1}, 10, X}};
static const double before_count[] = {4, 4, 1, 1, 4, 4, 1};


#define ROW(name, b, e, count, p, l) {__LINE__, name, b, N(b), e, N(e), count, p, N(p), l, N(l)}
#define ROW0(name, b, e, count, l) {__LINE__, name, b, N(b), e, N(e), count, NULL, 0, l, N(l)}

static const struct pcase cases[] = {
    ROW("header5", header5_b, loop_e, NULL, header5_p, header5_l),
    ROW("cross8", cross_b, loop_e, NULL, cross_p, header5_l),
    ROW("preheader7", pre7_b, pre7_e, NULL, pre7_p, header5_l),
    ROW("long_after_short", after_b, loop_e, NULL, after_p, header5_l),
    ROW("irreducible_dom", irr1_b, irr_e, NULL, irr1_p, irr_one_l),
    ROW("irreducible_two", irr2_b, irr_e, NULL, irr2_p, irr_two_l),
    ROW("nested", nest_b, nest_e, NULL, nest_p, nest_l),
    ROW("inner_for_outer", inner_b, nest_e, NULL, inner_p, inner_l),
    ROW0("overlap", overlap_b, overlap_e, NULL, overlap_l),
    ROW("edge_inside", inside_b, inside_e, NULL, inside_p, header5_l),
    ROW0("never_executed", cold_b, loop_e, NULL, cold_l),
    ROW("executed_by_flow", cold_b, loop_e, cold_count, cold_p, header5_l),
    ROW0("dominator_leaves", leave_b, leave_e, NULL, leave_l),
    ROW("second_loop", seq_b, seq_e, NULL, seq_p, seq_l),
    ROW("two_loops_one_point", fork_b, fork_e, NULL, fork_p, fork_l),
    ROW0("irreducible_half", irr3_b, irr_e, NULL, irr_half_l),
    ROW("dominator_before_loops", before_b, before_e, NULL, before_p, fork_l),
    ROW("dominator_before_cold_loop", before_cold_b, before_e, NULL, before_p, fork_l),
    ROW("dominator_before_counted_loop", before_cold_b, before_e, before_count, before_p, fork_l),
};

START_TEST(patch_points)
{
	run_case(&cases[_i]);
}
END_TEST

/* Instruction by instruction, on the graphs above (cases[] by row number). */
struct xwhy {
	int line;
	const struct pcase *c;
	int block, insn, with_flow, why;
};

static const struct xwhy whys[] = {
    {__LINE__, &cases[0], 0, 0, 0, RPATCH_WHY_OK},           /* 0x1000, 5 bytes */
    {__LINE__, &cases[0], 0, 1, 0, RPATCH_WHY_SHORT},        /* 0x1005, 1 byte */
    {__LINE__, &cases[3], 1, 0, 0, RPATCH_WHY_SHORT},        /* 0x1001, 2 bytes */
    {__LINE__, &cases[3], 1, 1, 0, RPATCH_WHY_OK},           /* 0x1003, 6 bytes */
    {__LINE__, &cases[8], 1, 0, 0, RPATCH_WHY_OVERLAP},      /* block 2 at 0x1004 */
    {__LINE__, &cases[9], 1, 0, 0, RPATCH_WHY_EDGE_INSIDE},  /* an edge to 0x1008 */
    {__LINE__, &cases[9], 0, 0, 0, RPATCH_WHY_OK},           /* 0x1000: 0x1006 is past it */
    {__LINE__, &cases[10], 1, 0, 0, RPATCH_WHY_NOT_EXECUTED},
    {__LINE__, &cases[11], 1, 0, 1, RPATCH_WHY_OK},          /* count 3 */
    {__LINE__, &cases[11], 2, 0, 0, RPATCH_WHY_NOT_EXECUTED}, /* cold before short */
};
/* clang-format on */

START_TEST(insn_why)
{
	const struct xwhy *x = &whys[_i];
	struct rcfg *g = make_graph(x->c);
	struct rflow_block fb[16] = {{0}};
	struct rflow f = {fb, x->c->nb, NULL, 0, 0, 0, 0, 0};
	for (size_t i = 0; x->c->count && i < x->c->nb; i++)
		fb[i].count = x->c->count[i];
	int why = rpatch_insn_why(g, x->with_flow ? &f : NULL, (size_t)x->block, (uint32_t)x->insn);
	ck_assert_msg(why == x->why, "line %d: %s", x->line, rpatch_why_name(why));
	rcfg_free(g);
}
END_TEST

/* An edge to the start of an instruction that is not its block's first
 * (code not explored jumping there) refuses it: control would enter past
 * the block's start. Block 1 of long_after_short, [2 6 2] at 0x1001. */
START_TEST(edge_to_second_insn)
{
	static const struct pedge e[] = {{0, 1, F, IN, 0},
	                                 {1, 2, F, IN, 0},
	                                 {2, 1, T, IN, 0},
	                                 {2, 3, F, IN, 0},
	                                 {3, -1, T, HOPS, 0x1003}};
	struct pcase c = cases[3];
	c.e = e;
	c.ne = N(e);
	struct rcfg *g = make_graph(&c);
	ck_assert_int_eq(rpatch_insn_why(g, NULL, 1, 1), RPATCH_WHY_EDGE_INSIDE);
	g->edge[4].to_addr = 0x1008; /* the first byte past the 5 */
	ck_assert_int_eq(rpatch_insn_why(g, NULL, 1, 1), RPATCH_WHY_OK);
	g->edge[4].to_addr = 0x1007; /* the last of the 5 */
	ck_assert_int_eq(rpatch_insn_why(g, NULL, 1, 1), RPATCH_WHY_EDGE_INSIDE);
	rcfg_free(g);
}
END_TEST

/* The 5 bytes at addr lie within one aligned 8-byte word iff addr % 8 <= 3. */
START_TEST(store_of)
{
	static const struct {
		int line;
		uint64_t addr;
		int store;
	} x[] = {{__LINE__, 0x1000, AT}, {__LINE__, 0x1003, AT},
	         {__LINE__, 0x1004, I3}, {__LINE__, 0x1007, I3},
	         {__LINE__, 0x1008, AT}, {__LINE__, 0x100b, AT},
	         {__LINE__, 0x100c, I3}, {__LINE__, 0xffffffffffffff0bULL, AT}};
	for (size_t i = 0; i < N(x); i++)
		ck_assert_msg(rpatch_store_of(x[i].addr) == x[i].store, "line %d", x[i].line);
}
END_TEST

START_TEST(bad_input)
{
	struct rcfg *g = make_graph(&cases[0]);
	struct rgraph *rg = NULL;
	char msg[256] = "";
	ck_assert_int_eq(rgraph_build(g, &rg, msg, sizeof(msg)), 0);
	struct rflow_block fb[2] = {{0}};
	struct rflow f = {fb, 2, NULL, 0, 0, 0, 0, 0};
	struct rpatch *p = (struct rpatch *)g;
	ck_assert_int_eq(rpatch_find(g, &rg->region[0], &f, &p, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	ck_assert_ptr_null(p);
	printf("bad_input: %s\n", msg);
	struct rgraph_region none = {0};
	ck_assert_int_eq(rpatch_find(g, &none, NULL, &p, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(p->npoint + p->nloop, 0);
	rpatch_free(p);
	rgraph_free(rg);
	rcfg_free(g);
}
END_TEST

/* rpatch_add_reentry after rpatch_find on rows of cases[] (named, so that a
 * row moved is caught): a point at the first qualifying instruction of every
 * entry block of a covered or by-outer loop that holds no point yet. The
 * points expected in full, by address, with reentry; the loops' point[]
 * indices into the new order. */
struct rpoint {
	int block, insn;
	unsigned addr;
	int len, store, nentry, reentry;
};

struct rcase {
	int line;
	const char *name; /* the row's */
	const struct pcase *c;
	const struct rpoint *pt;
	size_t npt;
	const struct xloop *lp;
	size_t nlp;
};

/* clang-format off */
/* dominator_before_loops: both headers qualify at their first instruction,
 * 0x1000 [5] (atomic) and 0x1011 [5] (17 % 8 = 1: atomic); no edge lands in
 * 0x1001 .. 0x1004 nor 0x1012 .. 0x1015 (the targets: 0x1000, 0x1007,
 * 0x1009, 0x1011, 0x1018, 0x101a). The covering point 0x100a moves from
 * index 0 to 1, and both loops' point[0] with it. */
static const struct rpoint before_r[] = {
    {0, 0, 0x1000, 5, AT, 0, 1}, {3, 0, 0x100a, 7, AT, 2, 0}, {4, 0, 0x1011, 5, AT, 0, 1}};
static const struct xloop before_rl[] = {{COV, {1, END}}, {COV, {1, END}}};
/* ... the second loop never executed (no flow): its header refused, the
 * first loop's alone added. */
static const struct rpoint before_cold_r[] = {
    {0, 0, 0x1000, 5, AT, 0, 1}, {3, 0, 0x100a, 7, AT, 2, 0}};
/* irreducible_dom: the point at 0x1000 covers entries 1 and 2; each gets
 * one, 0x1006 [5] (6 % 8 = 6: int3) and 0x100b [5] (11 % 8 = 3: atomic); the
 * edges land on 0x1006, 0x100b and 0x1012 only. */
static const struct rpoint irr1_r[] = {
    {0, 0, 0x1000, 6, AT, 2, 0}, {1, 0, 0x1006, 5, I3, 0, 1}, {2, 0, 0x100b, 5, AT, 0, 1}};
/* nested: the outer header 1 holds the point 0x1003; the inner header 2, by
 * outer, [5] at 0x1008 (atomic), gets one (0x100d, the next target, is past
 * its 5 bytes). */
static const struct rpoint nest_r[] = {{1, 1, 0x1003, 5, AT, 1, 0}, {2, 0, 0x1008, 5, AT, 0, 1}};
/* Nothing added: the header holds the point (header5, executed_by_flow),
 * each entry does (irreducible_two), the header's instructions are short
 * (preheader7: [2 3]; two_loops_one_point: [2] and [3]), its long one has
 * an edge inside (edge_inside), the loop is uncovered (irreducible_half:
 * entry 1's 0x1002 [5] qualifies, yet no point), or covered at its own
 * header beside an uncovered one (second_loop, inner_for_outer). */
static const struct rpoint header5_r[] = {{1, 0, 0x1008, 5, AT, 1, 0}};
static const struct rpoint cold_r[] = {{1, 0, 0x1002, 5, AT, 1, 0}};
static const struct rpoint irr2_r[] = {{1, 0, 0x1002, 5, AT, 1, 0}, {2, 0, 0x1007, 5, I3, 1, 0}};
static const struct rpoint pre7_r[] = {{1, 0, 0x1002, 7, AT, 1, 0}};
static const struct rpoint fork_r[] = {{0, 0, 0x1000, 7, AT, 2, 0}};
static const struct rpoint inside_r[] = {{0, 0, 0x1000, 6, AT, 1, 0}};
static const struct rpoint seq_r[] = {{1, 1, 0x1003, 5, AT, 1, 0}};
static const struct rpoint inner_r[] = {{2, 0, 0x1003, 5, AT, 1, 0}};

#define RROW(name, row, p, l) {__LINE__, name, &cases[row], p, N(p), l, N(l)}
#define RROW0(name, row, l) {__LINE__, name, &cases[row], NULL, 0, l, N(l)}

static const struct rcase reentries[] = {
    RROW("dominator_before_loops", 16, before_r, before_rl),
    RROW("dominator_before_cold_loop", 17, before_cold_r, before_rl),
    RROW("dominator_before_counted_loop", 18, before_r, before_rl),
    RROW("irreducible_dom", 4, irr1_r, irr_one_l),
    RROW("nested", 6, nest_r, nest_l),
    RROW("header5", 0, header5_r, header5_l),
    RROW("executed_by_flow", 11, cold_r, header5_l),
    RROW("irreducible_two", 5, irr2_r, irr_two_l),
    RROW("preheader7", 2, pre7_r, header5_l),
    RROW("two_loops_one_point", 14, fork_r, fork_l),
    RROW("edge_inside", 9, inside_r, header5_l),
    RROW0("irreducible_half", 15, irr_half_l),
    RROW("second_loop", 13, seq_r, seq_l),
    RROW("inner_for_outer", 7, inner_r, inner_l),
};
/* clang-format on */

static void check_rpoints(int line, const struct rpatch *p, const struct rpoint *x, size_t n)
{
	ck_assert_msg(p->npoint == n, "line %d: %zu points, expected %zu", line, p->npoint, n);
	for (size_t j = 0; j < n; j++) {
		const struct rpatch_point *q = &p->point[j];
		ck_assert_msg(q->block == (size_t)x[j].block && q->insn == (uint32_t)x[j].insn &&
		                  q->addr == x[j].addr && q->len == x[j].len,
		              "line %d: point %zu at block %zu insn %u %#llx len %u", line, j,
		              q->block, q->insn, (unsigned long long)q->addr, q->len);
		ck_assert_msg(q->store == x[j].store && q->nentry == (size_t)x[j].nentry &&
		                  q->reentry == x[j].reentry,
		              "line %d: point %zu store %s, %zu entries, reentry %u", line, j,
		              rpatch_store_name(q->store), q->nentry, q->reentry);
		ck_assert_msg(j == 0 || q->addr > p->point[j - 1].addr,
		              "line %d: point %zu out of order", line, j);
	}
}

START_TEST(reentry_points)
{
	const struct rcase *x = &reentries[_i];
	const struct pcase *c = x->c;
	ck_assert_str_eq(c->name, x->name);
	struct rcfg *g = make_graph(c);
	struct rgraph *rg = NULL;
	char msg[256] = "";
	ck_assert_msg(rgraph_build(g, &rg, msg, sizeof(msg)) == 0, "%s", msg);
	struct rflow_block fb[16] = {{0}};
	struct rflow f = {fb, c->nb, NULL, 0, 0, 0, 0, 0};
	ck_assert(c->nb <= N(fb));
	for (size_t i = 0; c->count && i < c->nb; i++)
		fb[i].count = c->count[i];
	const struct rflow *fp = c->count ? &f : NULL;
	const struct rgraph_region *r = &rg->region[0];
	struct rpatch *p = NULL;
	int err = rpatch_find(g, r, fp, &p, msg, sizeof(msg));
	ck_assert_msg(err == 0, "line %d: %d %s", x->line, err, msg);
	/* the row's own points first, none a re-entry point */
	check_points(c->line, p, c->pt, c->npt);
	for (size_t j = 0; j < p->npoint; j++)
		ck_assert_uint_eq(p->point[j].reentry, 0);
	size_t ncov = p->ncovered, nby = p->nby_outer, nun = p->nuncovered;
	err = rpatch_add_reentry(g, r, fp, p, msg, sizeof(msg));
	ck_assert_msg(err == 0, "line %d: %d %s", x->line, err, msg);
	print_result(x->name, p);
	check_rpoints(x->line, p, x->pt, x->npt);
	check_loops(x->line, r, p, x->lp, x->nlp);
	ck_assert(p->ncovered == ncov && p->nby_outer == nby && p->nuncovered == nun);
	/* every entry of a covered loop still names a point that covers */
	for (size_t l = 0; l < p->nloop; l++)
		for (size_t k = 0; p->loop[l].point && k < r->loop[l].nentry; k++) {
			const struct rpatch_point *q = &p->point[p->loop[l].point[k]];
			ck_assert_msg(!q->reentry && q->nentry > 0, "line %d: loop %zu entry %zu",
			              x->line, l, k);
		}
	/* a second pass finds nothing more to add */
	err = rpatch_add_reentry(g, r, fp, p, msg, sizeof(msg));
	ck_assert_msg(err == 0, "line %d: %d %s", x->line, err, msg);
	check_rpoints(x->line, p, x->pt, x->npt);
	check_loops(x->line, r, p, x->lp, x->nlp);
	rpatch_free(p);
	rgraph_free(rg);
	rcfg_free(g);
}
END_TEST

static Suite *region_patch_suite(void)
{
	Suite *s = suite_create("region_patch");
	TCase *tc = tcase_create("hand_made");
	tcase_add_loop_test(tc, patch_points, 0, (int)N(cases));
	tcase_add_loop_test(tc, insn_why, 0, (int)N(whys));
	tcase_add_test(tc, edge_to_second_insn);
	tcase_add_test(tc, store_of);
	tcase_add_test(tc, bad_input);
	tcase_add_loop_test(tc, reentry_points, 0, (int)N(reentries));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(region_patch_suite());
}
