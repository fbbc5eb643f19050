/* Unit tests of profiler/region_graph: hand-made graphs (struct rcfg filled
 * here, block i at 0x1000 + 0x10 * i) whose regions, entries, exits, immediate
 * dominators and post-dominators and loops are written out by hand from the
 * drawings beside them; and random graphs checked against the definitions
 * themselves (d dominates b iff b is unreachable once d is removed), computed
 * here on adjacency matrices, sharing nothing with the code under test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "profiler/region_graph.h"
#include "tests/unit/rcfg_fixture.h"
#include "tests/unit/run_suite.h"

#define END (-1) /* ends a list */
#define PE (-2)  /* the pseudo-entry, as an idom */
#define PX (-3)  /* the pseudo-exit, as an ipdom */
#define NOP (-1) /* no parent loop */

struct xregion {
	int line;
	int block[12], entry[6], cycle_entry[4], exit[6], exit_block[6], sink[4];
	int idom[12], ipdom[12]; /* of block[i] */
};

struct xloop {
	int line;
	int region, header;
	int block[12], entry[6];
	int parent, depth, irreducible;
};

static size_t xlen(const int *x)
{
	size_t n = 0;
	while (x[n] != END)
		n++;
	return n;
}

static void check_list(int line, const char *what, const size_t *got, size_t n, const int *x)
{
	ck_assert_msg(n == xlen(x), "line %d: %zu %s, expected %zu", line, n, what, xlen(x));
	for (size_t i = 0; i < n; i++)
		ck_assert_msg(got[i] == (size_t)x[i], "line %d: %s[%zu] %zu, expected %d", line,
		              what, i, got[i], x[i]);
}

static size_t node_of(int x)
{
	return x == PE ? RGRAPH_ENTRY : x == PX ? RGRAPH_EXIT : (size_t)x;
}

static void check_region(const struct rgraph_region *r, const struct xregion *x)
{
	check_list(x->line, "blocks", r->block, r->nblock, x->block);
	check_list(x->line, "entries", r->entry, r->nentry, x->entry);
	check_list(x->line, "cycle entries", r->cycle_entry, r->ncycle_entry, x->cycle_entry);
	check_list(x->line, "exit edges", r->exit, r->nexit, x->exit);
	check_list(x->line, "exit blocks", r->exit_block, r->nexit_block, x->exit_block);
	check_list(x->line, "sinks", r->sink, r->nsink, x->sink);
	for (size_t i = 0; i < r->nblock; i++) {
		ck_assert_msg(r->idom[i] == node_of(x->idom[i]), "line %d: idom of %zu: %zu",
		              x->line, r->block[i], r->idom[i]);
		ck_assert_msg(r->ipdom[i] == node_of(x->ipdom[i]), "line %d: ipdom of %zu: %zu",
		              x->line, r->block[i], r->ipdom[i]);
		ck_assert_uint_eq(rgraph_pos(r, r->block[i]), i);
	}
}

static void check_loops(const struct rgraph *rg, const struct xloop *x, size_t nx)
{
	size_t nloop = 0, k = 0;
	for (size_t c = 0; c < rg->nregion; c++)
		nloop += rg->region[c].nloop;
	ck_assert_msg(nloop == nx, "%zu loops, expected %zu", nloop, nx);
	for (size_t c = 0; c < rg->nregion; c++)
		for (size_t i = 0; i < rg->region[c].nloop; i++, k++) {
			const struct rgraph_loop *l = &rg->region[c].loop[i];
			const struct xloop *e = &x[k];
			ck_assert_msg(c == (size_t)e->region && l->header == (size_t)e->header,
			              "line %d: loop of region %zu header %zu", e->line, c,
			              l->header);
			check_list(e->line, "loop blocks", l->block, l->nblock, e->block);
			check_list(e->line, "loop entries", l->entry, l->nentry, e->entry);
			ck_assert_msg(l->parent == node_of(e->parent) &&
			                  l->depth == (unsigned)e->depth,
			              "line %d: parent %zu depth %u", e->line, l->parent, l->depth);
			ck_assert_msg(l->irreducible == e->irreducible, "line %d: irreducible %d",
			              e->line, l->irreducible);
		}
}

static void print_rgraph(const char *name, const struct rgraph *rg)
{
	size_t nloop = 0;
	for (size_t c = 0; c < rg->nregion; c++)
		nloop += rg->region[c].nloop;
	printf("%s: %zu regions, %zu loops\n", name, rg->nregion, nloop);
}

static void run_case(const char *name, const struct tgraph *t, const struct xregion *xr, size_t nxr,
                     const struct xloop *xl, size_t nxl)
{
	struct rcfg *g = make_rcfg(t);
	struct rgraph *rg = build(g);
	print_rgraph(name, rg);
	ck_assert_msg(rg->nregion == nxr, "%zu regions, expected %zu", rg->nregion, nxr);
	for (size_t c = 0; c < nxr; c++)
		check_region(&rg->region[c], &xr[c]);
	check_loops(rg, xl, nxl);
	rgraph_free(rg);
	rcfg_free(g);
}

#define CASE(t, xr, xl) run_case(__func__, &(t), xr, N(xr), xl, N(xl))
#define CASE_NO_LOOP(t, xr) run_case(__func__, &(t), xr, N(xr), NULL, 0)

#define TG(flags, edges)                                                                           \
	{                                                                                          \
		(int)N(flags), flags, edges, N(edges)                                              \
	}
#define F RCFG_FALL
#define T RCFG_TAKEN
#define CR RCFG_CALL_RETURN
#define IN RCFG_IN
#define X RCFG_EXIT

/* The tables' rows, one per region or loop (clang-format would put one field
 * a line): a region's blocks, entries, cycle entries, exit edges (row numbers
 * of the edge table), exit blocks, sinks, then idom and ipdom of each block;
 * a loop's region, header, blocks, entries, parent, depth, irreducible. */
/* clang-format off */
/* 0 -> 1 <-> 2 -> 3 ret: the loop {1, 2}, 2 -> 1 its back edge. */
static const int loop_flags[] = {0, 0, 0, X};
static const struct tedge loop_e[] = {
    {0, 1, F, IN}, {1, 2, F, IN}, {2, 1, T, IN}, {2, 3, F, IN}};
static const struct xregion loop_r[] = {
    {__LINE__, {0, 1, 2, 3, END}, {0, END}, {END}, {END}, {3, END}, {END},
     {PE, 0, 1, 2}, {1, 2, 3, PX}}};
static const struct xloop loop_l[] = {{__LINE__, 0, 1, {1, 2, END}, {1, END}, NOP, 1, 0}};

START_TEST(single_loop)
{
	struct tgraph t = TG(loop_flags, loop_e);
	CASE(t, loop_r, loop_l);
}
END_TEST

/* 0 -> 1 -> 2 <-> 3 -> 4 -> 5 ret, 4 -> 1: {2, 3} inside {1, 2, 3, 4}. */
static const int nest_flags[] = {0, 0, 0, 0, 0, X};
static const struct tedge nest_e[] = {{0, 1, F, IN}, {1, 2, F, IN}, {2, 3, F, IN}, {3, 2, T, IN},
                                      {3, 4, F, IN}, {4, 1, T, IN}, {4, 5, F, IN}};
static const struct xregion nest_r[] = {
    {__LINE__, {0, 1, 2, 3, 4, 5, END}, {0, END}, {END}, {END}, {5, END}, {END},
     {PE, 0, 1, 2, 3, 4}, {1, 2, 3, 4, 5, PX}}};
static const struct xloop nest_l[] = {
    {__LINE__, 0, 1, {1, 2, 3, 4, END}, {1, END}, NOP, 1, 0},
    {__LINE__, 0, 2, {2, 3, END}, {2, END}, 0, 2, 0}};

START_TEST(nested_loops)
{
	struct tgraph t = TG(nest_flags, nest_e);
	CASE(t, nest_r, nest_l);
}
END_TEST

/* 0 -> {1, 2} -> 3 ret: 0 dominates the join, 3 post-dominates the fork. */
static const int diamond_flags[] = {0, 0, 0, X};
static const struct tedge diamond_e[] = {
    {0, 1, F, IN}, {0, 2, T, IN}, {1, 3, T, IN}, {2, 3, F, IN}};
static const struct xregion diamond_r[] = {
    {__LINE__, {0, 1, 2, 3, END}, {0, END}, {END}, {END}, {3, END}, {END},
     {PE, 0, 0, 0}, {3, 3, 3, PX}}};

START_TEST(diamond)
{
	struct tgraph t = TG(diamond_flags, diamond_e);
	CASE_NO_LOOP(t, diamond_r);
}
END_TEST

/* Three components: 0 -> 1 ret; the cycle 2 <-> 3, which nothing enters
 * (discovery found no code before it), leaving from 3; 4 alone, no edge. */
static const int two_flags[] = {0, X, 0, X, 0};
static const struct tedge two_e[] = {
    {0, 1, F, IN}, {2, 3, F, IN}, {3, 2, T, IN}, {3, 0, F, RCFG_OUT_HOPS}};
static const struct xregion two_r[] = {
    {__LINE__, {0, 1, END}, {0, END}, {END}, {END}, {1, END}, {END}, {PE, 0}, {1, PX}},
    {__LINE__, {2, 3, END}, {2, END}, {2, END}, {3, END}, {3, END}, {END}, {PE, 2}, {3, PX}},
    {__LINE__, {4, END}, {4, END}, {END}, {END}, {4, END}, {END}, {PE}, {PX}}};
static const struct xloop two_l[] = {{__LINE__, 1, 2, {2, 3, END}, {2, END}, NOP, 1, 0}};

START_TEST(components)
{
	struct tgraph t = TG(two_flags, two_e);
	CASE(t, two_r, two_l);
}
END_TEST

/* 0 -> 1 and 0 -> 2, 1 <-> 2, 1 -> 3 ret: the cycle {1, 2} entered at both,
 * neither dominating the other: no back edge, an irreducible loop. */
static const int irr_flags[] = {0, 0, 0, X};
static const struct tedge irr_e[] = {
    {0, 1, F, IN}, {0, 2, T, IN}, {1, 2, F, IN}, {1, 3, T, IN}, {2, 1, T, IN}};
static const struct xregion irr_r[] = {
    {__LINE__, {0, 1, 2, 3, END}, {0, END}, {END}, {END}, {3, END}, {END},
     {PE, 0, 0, 1}, {1, 3, 1, PX}}};
static const struct xloop irr_l[] = {{__LINE__, 0, 1, {1, 2, END}, {1, 2, END}, NOP, 1, 1}};

START_TEST(irreducible)
{
	struct tgraph t = TG(irr_flags, irr_e);
	CASE(t, irr_r, irr_l);
}
END_TEST

/* 0 -> 1 -> {2, 3}, 2 <-> 3, 2 -> 2, 3 -> 4 -> 1, 4 -> 5 ret: the natural
 * loop {2} inside the irreducible {2, 3} inside the natural {1, 2, 3, 4}. */
static const int nirr_flags[] = {0, 0, 0, 0, 0, X};
static const struct tedge nirr_e[] = {{0, 1, F, IN}, {1, 2, F, IN}, {1, 3, T, IN}, {2, 2, T, IN},
                                      {2, 3, F, IN}, {3, 2, T, IN}, {3, 4, F, IN}, {4, 1, T, IN},
                                      {4, 5, F, IN}};
static const struct xregion nirr_r[] = {
    {__LINE__, {0, 1, 2, 3, 4, 5, END}, {0, END}, {END}, {END}, {5, END}, {END},
     {PE, 0, 1, 1, 3, 4}, {1, 3, 3, 4, 5, PX}}};
static const struct xloop nirr_l[] = {
    {__LINE__, 0, 1, {1, 2, 3, 4, END}, {1, END}, NOP, 1, 0},
    {__LINE__, 0, 2, {2, 3, END}, {2, 3, END}, 0, 2, 1},
    {__LINE__, 0, 2, {2, END}, {2, END}, 1, 3, 0}};

START_TEST(irreducible_nested)
{
	struct tgraph t = TG(nirr_flags, nirr_e);
	CASE(t, nirr_r, nirr_l);
}
END_TEST

/* 0 -> 1 -> 1, 1 -> 2 ret. */
static const int self_flags[] = {0, 0, X};
static const struct tedge self_e[] = {{0, 1, F, IN}, {1, 1, T, IN}, {1, 2, F, IN}};
static const struct xregion self_r[] = {
    {__LINE__, {0, 1, 2, END}, {0, END}, {END}, {END}, {2, END}, {END}, {PE, 0, 1}, {1, 2, PX}}};
static const struct xloop self_l[] = {{__LINE__, 0, 1, {1, END}, {1, END}, NOP, 1, 0}};

START_TEST(self_loop)
{
	struct tgraph t = TG(self_flags, self_e);
	CASE(t, self_r, self_l);
}
END_TEST

/* 0 -> 3 ret, 0 -> 1 <-> 2 with no way out: 2, the highest block of the
 * cycle, gets the pseudo-exit edge, so 0's post-dominator is the pseudo-exit. */
static const int inf_flags[] = {0, 0, 0, X};
static const struct tedge inf_e[] = {{0, 1, F, IN}, {0, 3, T, IN}, {1, 2, F, IN}, {2, 1, T, IN}};
static const struct xregion inf_r[] = {
    {__LINE__, {0, 1, 2, 3, END}, {0, END}, {END}, {END}, {2, 3, END}, {2, END},
     {PE, 0, 1, 0}, {PX, 2, PX, PX}}};
static const struct xloop inf_l[] = {{__LINE__, 0, 1, {1, 2, END}, {1, END}, NOP, 1, 0}};

START_TEST(infinite_loop)
{
	struct tgraph t = TG(inf_flags, inf_e);
	CASE(t, inf_r, inf_l);
}
END_TEST

/* 0 call -> 1 -> {2 call, 3}, 2 -> 3 ret: call-return edges join a call to
 * its return point; 4 calls and its return point has no code (leaves). */
static const int call_flags[] = {RCFG_CALL, 0, RCFG_CALL, X, RCFG_CALL | X};
static const struct tedge call_e[] = {{0, 1, CR, IN},
                                      {1, 3, F, IN},
                                      {1, 2, T, IN},
                                      {2, 3, CR, IN},
                                      {4, 0, CR, RCFG_OUT_NOCODE}};
static const struct xregion call_r[] = {
    {__LINE__, {0, 1, 2, 3, END}, {0, END}, {END}, {END}, {3, END}, {END},
     {PE, 0, 1, 1}, {1, 3, 3, PX}},
    {__LINE__, {4, END}, {4, END}, {END}, {4, END}, {4, END}, {END}, {PE}, {PX}}};

START_TEST(calls)
{
	struct tgraph t = TG(call_flags, call_e);
	CASE_NO_LOOP(t, call_r);
}
END_TEST

/* 0's fall-through leaves (no code there), its jump goes to 1 ret. */
static const int out_flags[] = {X, X};
static const struct tedge out_e[] = {{0, 0, F, RCFG_OUT_NOCODE}, {0, 1, T, IN}};
static const struct xregion out_r[] = {
    {__LINE__, {0, 1, END}, {0, END}, {END}, {0, END}, {0, 1, END}, {END}, {PE, 0}, {PX, PX}}};

START_TEST(edge_leaving)
{
	struct tgraph t = TG(out_flags, out_e);
	CASE_NO_LOOP(t, out_r);
}
END_TEST

/* clang-format on */

/* From discovery itself: the loop of check_region_cfg's first case, whose
 * sampled instructions are inside it, so discovery found nothing before it.
 * 1000: 31 c0       xor eax, eax
 * 1002: 48 ff c0    inc rax          <- block 0, its own back edge's target
 * 1005: 48 39 c8    cmp rax, rcx
 * 1008: 75 f8       jne 1002
 * 100a: c3          ret              <- block 1
 * Block 0 has a predecessor (itself), so it becomes a cycle entry. */
START_TEST(discovered_loop)
{
	static const uint8_t code[] = {0x31, 0xc0, 0x48, 0xff, 0xc0, 0x48,
	                               0x39, 0xc8, 0x75, 0xf8, 0xc3};
	struct hot_ip ip[] = {{0x1005, 10}, {0x1008, 10}};
	struct hot_branch br[] = {{0x1008, 9, 1}};
	struct hot_code hot = {.ip = ip, .nip = 2, .branch = br, .nbranch = 1, .total = 20};
	struct binary *bin;
	struct rcfg *g = NULL;
	char msg[256] = "";
	ck_assert_int_eq(binary_from_code(code, sizeof(code), 0x1000, &bin), 0);
	ck_assert_msg(rcfg_discover(bin, &hot, NULL, &g, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert(g->nblock == 2 && g->block[0].start == 0x1002 && g->block[1].start == 0x100a);
	struct rgraph *rg = build(g);
	print_rgraph(__func__, rg);
	static const struct xregion xr = {__LINE__, {0, 1, END}, {0, END}, {0, END}, {END},
	                                  {1, END}, {END},       {PE, 0},  {1, PX}};
	static const struct xloop xl[] = {{__LINE__, 0, 0, {0, END}, {0, END}, NOP, 1, 0}};
	ck_assert_uint_eq(rg->nregion, 1);
	check_region(&rg->region[0], &xr);
	check_loops(rg, xl, N(xl));
	ck_assert(rg->region[0].weight == 20);
	rgraph_free(rg);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

START_TEST(bad_input_and_empty)
{
	struct tgraph t = TG(loop_flags, loop_e);
	struct rcfg *g = make_rcfg(&t);
	struct rgraph *rg = (struct rgraph *)&t;
	char msg[128] = "";
	g->edge[2].from = 1; /* block 2's edge range holds it */
	ck_assert_int_eq(rgraph_build(g, &rg, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	ck_assert_ptr_null(rg);
	printf("bad_input: %s\n", msg);
	g->edge[2].from = 2;
	g->edge[1].to = 4;
	ck_assert_int_eq(rgraph_build(g, &rg, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	g->edge[1].to = 2;
	g->block[3].first_edge = 3, g->block[3].nedge = 2;
	ck_assert_int_eq(rgraph_build(g, &rg, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	g->block[3].nedge = 0;
	rg = build(g);
	ck_assert_uint_eq(rg->nregion, 1);
	rgraph_free(rg);
	rcfg_free(g);
	struct rcfg empty = {0};
	rg = build(&empty);
	ck_assert_uint_eq(rg->nregion, 0);
	rgraph_free(rg);
}
END_TEST

static Suite *region_graph_suite(void)
{
	Suite *s = suite_create("region_graph");
	TCase *tc = tcase_create("hand_made");
	tcase_add_test(tc, single_loop);
	tcase_add_test(tc, nested_loops);
	tcase_add_test(tc, diamond);
	tcase_add_test(tc, components);
	tcase_add_test(tc, irreducible);
	tcase_add_test(tc, irreducible_nested);
	tcase_add_test(tc, self_loop);
	tcase_add_test(tc, infinite_loop);
	tcase_add_test(tc, calls);
	tcase_add_test(tc, edge_leaving);
	tcase_add_test(tc, discovered_loop);
	tcase_add_test(tc, bad_input_and_empty);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(region_graph_suite());
}
