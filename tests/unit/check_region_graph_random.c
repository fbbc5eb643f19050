/* Property tests of profiler/region_graph on seeded random graphs: every
 * figure is checked against its definition, computed here by brute force on
 * an adjacency matrix (reachability with a node removed, transitive closure,
 * peeling nodes without predecessors), sharing no code with the unit:
 *   - regions: a partition of the blocks, weakly connected, no edge between two;
 *   - terminal edges: entries are the blocks without predecessor plus the
 *     cycle entries, exits the blocks that leave plus the sinks; every block
 *     reached and reaching; no cycle entry or sink superfluous;
 *   - d dominates b iff b is unreachable from the pseudo-entry without d (and
 *     post-dominance on the reversed graph); the idom is the strict dominator
 *     that all the others dominate;
 *   - natural loops as their definition, irreducible loops exactly when the
 *     graph without back edges has a cycle, every block on such a cycle in one;
 *     loops nested or apart, parent the smallest loop holding one. */
#include <check.h>
#include <stdio.h>
#include <string.h>

#include "tests/unit/rcfg_fixture.h"
#include "tests/unit/run_suite.h"

#define MAXB 40
#define MAXN (MAXB + 2)
#define GRAPHS 200

/* A check in the loops below: a passing ck_assert writes a record per call. */
#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

static uint32_t rnd(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

/* Graph number seed: 2-40 blocks, 0-3 out-edges each, a tenth leaving, the
 * targets near (loops, chains) or anywhere (irreducible cycles, merges). */
static struct rcfg *random_rcfg(uint64_t seed)
{
	static int flags[MAXB];
	static struct tedge e[MAXB * 3];
	uint64_t s = seed * 2654435761u + 1;
	int nb = 2 + (int)(rnd(&s) % (MAXB - 1));
	size_t ne = 0;
	for (int i = 0; i < nb; i++) {
		flags[i] = rnd(&s) % 8 == 0 ? RCFG_EXIT : 0;
		int nout = (int)(rnd(&s) % 4);
		for (int k = 0; k < nout; k++) {
			int near = i + (int)(rnd(&s) % 5) - 2;
			int to = rnd(&s) % 2 ? near : (int)(rnd(&s) % (uint32_t)nb);
			to = to < 0 ? 0 : to >= nb ? nb - 1 : to;
			int out = rnd(&s) % 10 == 0 ? RCFG_OUT_HOPS : RCFG_IN;
			e[ne++] = (struct tedge){i, to, (int)(rnd(&s) % 4), out};
		}
	}
	struct tgraph t = {nb, flags, e, ne};
	return make_rcfg(&t);
}

/* The region's graph: node 0 the pseudo-entry, 1 + i its block[i], n - 1 the
 * pseudo-exit; blk the blocks' node numbers (0 when not in the region). */
struct bg {
	int n;
	uint8_t adj[MAXN][MAXN];
	int blk[MAXB];
};

/* seen[v]: v is reachable from root through nodes other than avoid. */
static void reach(const struct bg *b, int root, int avoid, int rev, uint8_t *seen)
{
	int stack[MAXN], top = 0;
	memset(seen, 0, MAXN);
	if (root == avoid)
		return;
	seen[root] = 1;
	stack[top++] = root;
	while (top) {
		int u = stack[--top];
		for (int v = 0; v < b->n; v++)
			if ((rev ? b->adj[v][u] : b->adj[u][v]) && v != avoid && !seen[v]) {
				seen[v] = 1;
				stack[top++] = v;
			}
	}
}

static void make_bg(const struct rcfg *g, const struct rgraph_region *r, struct bg *b)
{
	memset(b, 0, sizeof(*b));
	b->n = (int)r->nblock + 2;
	for (size_t i = 0; i < r->nblock; i++)
		b->blk[r->block[i]] = (int)i + 1;
	for (size_t i = 0; i < r->nblock; i++)
		for (size_t k = 0; k < g->nedge; k++)
			if (g->edge[k].from == r->block[i] && g->edge[k].out == RCFG_IN)
				b->adj[i + 1][b->blk[g->edge[k].to]] = 1;
	for (size_t i = 0; i < r->nentry; i++)
		b->adj[0][b->blk[r->entry[i]]] = 1;
	for (size_t i = 0; i < r->nexit_block; i++)
		b->adj[b->blk[r->exit_block[i]]][b->n - 1] = 1;
}

static int in_list(const size_t *v, size_t n, size_t x)
{
	for (size_t i = 0; i < n; i++)
		if (v[i] == x)
			return 1;
	return 0;
}

static void check_sorted(const size_t *v, size_t n, const char *what, uint64_t seed)
{
	for (size_t i = 1; i < n; i++)
		CHECK(v[i - 1] < v[i], "graph %llu: %s not sorted", (unsigned long long)seed, what);
}

/* Regions partition the blocks, are weakly connected, no edge joins two. */
static void check_partition(const struct rcfg *g, const struct rgraph *rg, uint64_t seed)
{
	int region[MAXB];
	for (size_t i = 0; i < g->nblock; i++)
		region[i] = -1;
	for (size_t c = 0; c < rg->nregion; c++) {
		const struct rgraph_region *r = &rg->region[c];
		check_sorted(r->block, r->nblock, "blocks", seed);
		CHECK(c == 0 || r->block[0] > rg->region[c - 1].block[0], "graph %llu: order",
		      (unsigned long long)seed);
		for (size_t i = 0; i < r->nblock; i++) {
			CHECK(region[r->block[i]] == -1, "graph %llu: block twice",
			      (unsigned long long)seed);
			region[r->block[i]] = (int)c;
		}
	}
	for (size_t i = 0; i < g->nblock; i++)
		CHECK(region[i] >= 0, "graph %llu: block %zu in no region",
		      (unsigned long long)seed, i);
	for (size_t k = 0; k < g->nedge; k++)
		if (g->edge[k].out == RCFG_IN)
			CHECK(region[g->edge[k].from] == region[g->edge[k].to],
			      "graph %llu: edge %zu between regions", (unsigned long long)seed, k);
	/* weakly connected: one undirected sweep from each region's first block */
	for (size_t c = 0; c < rg->nregion; c++) {
		uint8_t seen[MAXB] = {0};
		seen[rg->region[c].block[0]] = 1;
		for (int again = 1; again;) {
			again = 0;
			for (size_t k = 0; k < g->nedge; k++) {
				const struct rcfg_edge *e = &g->edge[k];
				if (e->out == RCFG_IN && seen[e->from] != seen[e->to])
					seen[e->from] = seen[e->to] = again = 1;
			}
		}
		for (size_t i = 0; i < rg->region[c].nblock; i++)
			CHECK(seen[rg->region[c].block[i]], "graph %llu: region %zu not connected",
			      (unsigned long long)seed, c);
	}
}

/* Entries, exits, sinks against their definitions. */
static void check_terminals(const struct rcfg *g, const struct rgraph_region *r, struct bg *b,
                            uint64_t seed)
{
	unsigned long long sd = (unsigned long long)seed;
	uint8_t seen[MAXN];
	size_t nexit = 0;
	for (size_t i = 0; i < r->nblock; i++) {
		size_t x = r->block[i];
		int haspred = 0, leaves = (g->block[x].flags & RCFG_EXIT) || !g->block[x].nedge;
		for (size_t k = 0; k < g->nedge; k++) {
			const struct rcfg_edge *e = &g->edge[k];
			haspred |= e->out == RCFG_IN && e->to == x;
			if (e->from == x && e->out != RCFG_IN) {
				leaves = 1;
				CHECK(nexit < r->nexit && r->exit[nexit++] == k,
				      "graph %llu: exit %zu", sd, k);
			}
		}
		int cyc = in_list(r->cycle_entry, r->ncycle_entry, x);
		CHECK(in_list(r->entry, r->nentry, x) == (!haspred || cyc) && !(cyc && !haspred),
		      "graph %llu: block %zu entry", sd, x);
		int sink = in_list(r->sink, r->nsink, x);
		CHECK(in_list(r->exit_block, r->nexit_block, x) == (leaves || sink) &&
		          !(sink && leaves),
		      "graph %llu: block %zu exit", sd, x);
	}
	CHECK(nexit == r->nexit, "graph %llu: %zu exits", sd, r->nexit);
	check_sorted(r->entry, r->nentry, "entries", seed);
	check_sorted(r->exit_block, r->nexit_block, "exit blocks", seed);
	int px = b->n - 1;
	reach(b, 0, -1, 0, seen);
	for (int v = 1; v < px; v++)
		CHECK(seen[v], "graph %llu: node %d unreached", sd, v);
	reach(b, px, -1, 1, seen);
	for (int v = 1; v < px; v++)
		CHECK(seen[v], "graph %llu: node %d reaches no exit", sd, v);
	/* each chosen terminal edge is needed: without it, its block is cut off */
	for (size_t i = 0; i < r->ncycle_entry; i++) {
		int v = b->blk[r->cycle_entry[i]];
		b->adj[0][v] = 0;
		reach(b, 0, -1, 0, seen);
		CHECK(!seen[v], "graph %llu: cycle entry %d superfluous", sd, v);
		b->adj[0][v] = 1;
	}
	for (size_t i = 0; i < r->nsink; i++) {
		int v = b->blk[r->sink[i]];
		b->adj[v][px] = 0;
		reach(b, px, -1, 1, seen);
		CHECK(!seen[v], "graph %llu: sink %d superfluous", sd, v);
		b->adj[v][px] = 1;
	}
}

/* dom[d][v]: d dominates v from root (rev: post-dominates, towards root). */
static void brute_dom(const struct bg *b, int root, int rev, uint8_t dom[MAXN][MAXN])
{
	uint8_t seen[MAXN];
	for (int d = 0; d < b->n; d++) {
		reach(b, root, d, rev, seen);
		for (int v = 0; v < b->n; v++)
			dom[d][v] = d == v || !seen[v];
	}
}

static void check_tree(const struct rgraph_region *r, const struct bg *b, int root, int rev,
                       uint64_t seed)
{
	static uint8_t dom[MAXN][MAXN];
	brute_dom(b, root, rev, dom);
	for (int v = 1; v < b->n - 1; v++) {
		int idom = -1;
		for (int d = 0; d < b->n; d++) {
			if (d == v || !dom[d][v])
				continue;
			int all = 1; /* every other strict dominator of v dominates d */
			for (int e = 0; e < b->n; e++)
				if (e != v && dom[e][v] && !dom[e][d])
					all = 0;
			if (all)
				idom = d;
		}
		size_t want = idom == 0          ? RGRAPH_ENTRY
		              : idom == b->n - 1 ? RGRAPH_EXIT
		                                 : r->block[idom - 1];
		size_t got = rev ? r->ipdom[v - 1] : r->idom[v - 1];
		CHECK(idom >= 0 && got == want, "graph %llu: %s of block %zu: %zu, expected %zu",
		      (unsigned long long)seed, rev ? "ipdom" : "idom", r->block[v - 1], got, want);
	}
}

/* In-graph edges u -> v (nodes of blocks) with v dominating u. */
static void back_edges(const struct bg *b, uint8_t dom[MAXN][MAXN], uint8_t back[MAXN][MAXN])
{
	for (int u = 1; u < b->n - 1; u++)
		for (int v = 1; v < b->n - 1; v++)
			back[u][v] = b->adj[u][v] && dom[v][u];
}

static int loop_holds(const struct rgraph_loop *l, const struct bg *b, int v)
{
	for (size_t i = 0; i < l->nblock; i++)
		if (b->blk[l->block[i]] == v)
			return 1;
	return 0;
}

/* Natural loops: one per header of back edges, body by its definition. */
static void check_natural(const struct rgraph_region *r, const struct bg *b,
                          uint8_t back[MAXN][MAXN], uint64_t seed, size_t *nnat)
{
	unsigned long long sd = (unsigned long long)seed;
	uint8_t seen[MAXN];
	for (int h = 1; h < b->n - 1; h++) {
		const struct rgraph_loop *l = NULL;
		for (size_t i = 0; i < r->nloop; i++)
			if (!r->loop[i].irreducible && b->blk[r->loop[i].header] == h) {
				CHECK(!l, "graph %llu: two natural loops at %d", sd, h);
				l = &r->loop[i];
			}
		int header = 0;
		for (int s = 1; s < b->n - 1; s++)
			header |= back[s][h];
		CHECK(!!l == header, "graph %llu: natural loop at %d", sd, h);
		if (!l)
			continue;
		(*nnat)++;
		CHECK(l->nentry == 1 && l->entry[0] == l->header, "graph %llu: entry", sd);
		for (int v = 1; v < b->n - 1; v++) {
			int in = v == h;
			reach(b, v, h, 0, seen);
			for (int s = 1; s < b->n - 1; s++)
				in |= back[s][h] && seen[s];
			CHECK(loop_holds(l, b, v) == in, "graph %llu: loop %d, block %d", sd, h, v);
		}
	}
}

/* Irreducible loops exactly when the graph without back edges has a cycle;
 * each holds the blocks on such cycles it is headed by. */
static void check_irreducible(const struct rgraph_region *r, const struct bg *b,
                              uint8_t back[MAXN][MAXN], uint64_t seed, size_t *nirr)
{
	unsigned long long sd = (unsigned long long)seed;
	static uint8_t path[MAXN][MAXN];
	int n = b->n, cyclic = 0;
	for (int u = 0; u < n; u++)
		for (int v = 0; v < n; v++)
			path[u][v] = b->adj[u][v] && !back[u][v];
	for (int k = 0; k < n; k++) /* Warshall's transitive closure */
		for (int u = 0; u < n; u++)
			for (int v = 0; v < n; v++)
				path[u][v] |= path[u][k] && path[k][v];
	for (int v = 1; v < n - 1; v++) {
		if (!path[v][v])
			continue;
		cyclic = 1;
		int held = 0;
		for (size_t i = 0; i < r->nloop; i++)
			held |= r->loop[i].irreducible && loop_holds(&r->loop[i], b, v);
		CHECK(held, "graph %llu: block %d on an irreducible cycle, in no loop", sd, v);
	}
	size_t here = 0;
	for (size_t i = 0; i < r->nloop; i++) {
		const struct rgraph_loop *l = &r->loop[i];
		if (!l->irreducible)
			continue;
		here++;
		int h = b->blk[l->header];
		CHECK(path[h][h] && l->nentry >= 2 && l->entry[0] == l->header,
		      "graph %llu: irreducible loop at %d", sd, h);
	}
	CHECK(cyclic == (here > 0), "graph %llu: reducible %d, %zu irreducible loops", sd, !cyclic,
	      here);
	*nirr += here;
}

/* Every loop: entries are its blocks entered from outside it; loops nest or
 * are apart; parent is the smallest loop holding it; sorted by (header, size
 * descending). */
static void check_nest(const struct rgraph_region *r, const struct bg *b, uint64_t seed)
{
	unsigned long long sd = (unsigned long long)seed;
	for (size_t i = 0; i < r->nloop; i++) {
		const struct rgraph_loop *l = &r->loop[i];
		check_sorted(l->block, l->nblock, "loop blocks", seed);
		check_sorted(l->entry, l->nentry, "loop entries", seed);
		CHECK(i == 0 || r->loop[i - 1].header < l->header ||
		          (r->loop[i - 1].header == l->header && r->loop[i - 1].nblock > l->nblock),
		      "graph %llu: loop order", sd);
		for (int v = 1; v < b->n - 1; v++) {
			int entered = 0;
			for (int p = 0; p < b->n; p++)
				entered |= b->adj[p][v] && !loop_holds(l, b, p);
			int entry = in_list(l->entry, l->nentry, r->block[v - 1]);
			CHECK(entry == (entered && loop_holds(l, b, v)),
			      "graph %llu: loop entry %d", sd, v);
		}
		size_t parent = RGRAPH_NONE;
		for (size_t j = 0; j < r->nloop; j++) {
			const struct rgraph_loop *m = &r->loop[j];
			size_t common = 0;
			for (size_t k = 0; k < l->nblock; k++)
				common += in_list(m->block, m->nblock, l->block[k]);
			CHECK(j == i || common == 0 || common == l->nblock || common == m->nblock,
			      "graph %llu: loops %zu and %zu overlap", sd, i, j);
			CHECK(j == i || common != l->nblock || common != m->nblock,
			      "graph %llu: loops %zu and %zu alike", sd, i, j);
			if (j != i && common == l->nblock &&
			    (parent == RGRAPH_NONE || m->nblock < r->loop[parent].nblock))
				parent = j;
		}
		CHECK(l->parent == parent, "graph %llu: loop %zu's parent %zu, expected %zu", sd, i,
		      l->parent, parent);
		CHECK(l->depth == (parent == RGRAPH_NONE ? 1 : r->loop[parent].depth + 1),
		      "graph %llu: depth", sd);
	}
}

struct tally {
	size_t blocks, regions, natural, irreducible, cycle_entries, sinks, max_depth;
};

static void check_graph(uint64_t seed, struct tally *t)
{
	static struct bg b;
	static uint8_t dom[MAXN][MAXN], back[MAXN][MAXN];
	struct rcfg *g = random_rcfg(seed);
	struct rgraph *rg = build(g);
	check_partition(g, rg, seed);
	t->blocks += g->nblock;
	t->regions += rg->nregion;
	for (size_t c = 0; c < rg->nregion; c++) {
		const struct rgraph_region *r = &rg->region[c];
		make_bg(g, r, &b);
		check_terminals(g, r, &b, seed);
		check_tree(r, &b, 0, 0, seed);
		check_tree(r, &b, b.n - 1, 1, seed);
		brute_dom(&b, 0, 0, dom);
		back_edges(&b, dom, back);
		check_natural(r, &b, back, seed, &t->natural);
		check_irreducible(r, &b, back, seed, &t->irreducible);
		check_nest(r, &b, seed);
		t->cycle_entries += r->ncycle_entry;
		t->sinks += r->nsink;
		for (size_t i = 0; i < r->nloop; i++)
			if (r->loop[i].depth > t->max_depth)
				t->max_depth = r->loop[i].depth;
	}
	rgraph_free(rg);
	rcfg_free(g);
}

START_TEST(random_graphs)
{
	struct tally t = {0};
	for (uint64_t seed = 1; seed <= GRAPHS; seed++)
		check_graph(seed, &t);
	printf("random_graphs: %d graphs, %zu blocks, %zu regions, %zu natural loops, "
	       "%zu irreducible, %zu cycle entries, %zu sinks, nesting depth up to %zu\n",
	       GRAPHS, t.blocks, t.regions, t.natural, t.irreducible, t.cycle_entries, t.sinks,
	       t.max_depth);
	/* the graphs must exercise every rule, or the checks above check nothing */
	ck_assert(t.natural && t.irreducible && t.cycle_entries && t.sinks && t.max_depth >= 3);
	ck_assert(t.regions > GRAPHS);
}
END_TEST

/* The same graph twice gives the same regions (no dependence on addresses of
 * the heap or on uninitialised memory). */
START_TEST(deterministic)
{
	for (uint64_t seed = 1; seed <= 20; seed++) {
		struct rcfg *g = random_rcfg(seed);
		struct rgraph *a = build(g), *b = build(g);
		ck_assert_uint_eq(a->nregion, b->nregion);
		for (size_t c = 0; c < a->nregion; c++) {
			const struct rgraph_region *x = &a->region[c], *y = &b->region[c];
			ck_assert(x->nblock == y->nblock && x->nloop == y->nloop);
			ck_assert(!memcmp(x->idom, y->idom, x->nblock * sizeof(size_t)));
			ck_assert(!memcmp(x->ipdom, y->ipdom, x->nblock * sizeof(size_t)));
			for (size_t i = 0; i < x->nloop; i++)
				ck_assert(x->loop[i].header == y->loop[i].header &&
				          x->loop[i].nblock == y->loop[i].nblock);
		}
		rgraph_free(a);
		rgraph_free(b);
		rcfg_free(g);
	}
}
END_TEST

static Suite *region_graph_random_suite(void)
{
	Suite *s = suite_create("region_graph_random");
	TCase *tc = tcase_create("random");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, random_graphs);
	tcase_add_test(tc, deterministic);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(region_graph_random_suite());
}
