/* Patch points of a region (region_patch.h): entry instructions of 5 bytes or
 * more that a `jmp rel32` may overwrite while threads run (Intel SDM vol. 3A,
 * 8.1.3; Linux's text_poke_bp for the int3-first write), chosen per outermost
 * loop by a greedy hitting set over the dominator tree's root paths. */
#include "profiler/region_patch.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"

#define NO_INSN UINT32_MAX

/* Candidate blocks of one loop entry, bottom-up along its dominator path. */
struct entry_cands {
	size_t loop, k; /* the loop (region's loop[] index) and its entry[k] */
	size_t *pos;    /* region positions of the candidate blocks */
	size_t npos;
	size_t point; /* index of the chosen point covering it */
};

struct ctx {
	const struct rcfg *g;
	const struct rgraph_region *r;
	const struct rflow *flow;
	uint64_t *target; /* every edge's to_addr, sorted; NULL: scan the edges */
	size_t ntarget;
	uint64_t maxlen;       /* the longest block's bytes */
	uint32_t *cand;        /* per position: first qualifying instruction, NO_INSN */
	uint8_t *why;          /* per position: why the block has none */
	uint8_t *in_loop;      /* per position */
	uint8_t *dom;          /* per position: 0 unknown, else 1 + enum rpatch_up */
	size_t *stamp, *stack; /* for the walk from a dominator */
	size_t *depth;         /* per position: depth in the dominator tree, 0 unknown */
};

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

int rpatch_store_of(uint64_t addr)
{
	return (addr & 7) + RPATCH_JMP_LEN <= 8 ? RPATCH_STORE_ATOMIC : RPATCH_STORE_INT3;
}

static int executed(const struct ctx *c, size_t b)
{
	return c->g->block[b].weight > 0 || (c->flow && c->flow->block[b].count > 0);
}

/* Whether an edge targets an address in [lo, hi). */
static int edge_into(const struct ctx *c, uint64_t lo, uint64_t hi)
{
	if (lo >= hi)
		return 0;
	if (!c->target) {
		for (size_t i = 0; i < c->g->nedge; i++)
			if (c->g->edge[i].to_addr >= lo && c->g->edge[i].to_addr < hi)
				return 1;
		return 0;
	}
	size_t a = 0, z = c->ntarget; /* first target >= lo */
	while (a < z) {
		size_t m = a + (z - a) / 2;
		if (c->target[m] < lo)
			a = m + 1;
		else
			z = m;
	}
	return a < c->ntarget && c->target[a] < hi;
}

/* Whether a block other than b has bytes in [lo, hi). Blocks are sorted by
 * start, and one that meets the range starts within maxlen before it. */
static int overlapped(const struct ctx *c, size_t b, uint64_t lo, uint64_t hi)
{
	const struct rcfg *g = c->g;
	size_t a = 0, z = g->nblock; /* first block starting at hi or later */
	while (a < z) {
		size_t m = a + (z - a) / 2;
		if (g->block[m].start < hi)
			a = m + 1;
		else
			z = m;
	}
	for (size_t j = a; j-- > 0;) {
		const struct rcfg_block *o = &g->block[j];
		if (o->start + c->maxlen <= lo)
			break;
		if (j != b && o->end > lo)
			return 1;
	}
	return 0;
}

static int insn_why(const struct ctx *c, size_t b, uint32_t i)
{
	const struct rcfg_block *k = &c->g->block[b];
	uint64_t addr = k->start + k->off[i];
	if (!executed(c, b))
		return RPATCH_WHY_NOT_EXECUTED;
	if (k->off[i + 1] - k->off[i] < RPATCH_JMP_LEN)
		return RPATCH_WHY_SHORT;
	if (edge_into(c, i > 0 ? addr : addr + 1, addr + RPATCH_JMP_LEN))
		return RPATCH_WHY_EDGE_INSIDE;
	if (overlapped(c, b, addr, addr + RPATCH_JMP_LEN))
		return RPATCH_WHY_OVERLAP;
	return RPATCH_WHY_OK;
}

static uint64_t longest_block(const struct rcfg *g)
{
	uint64_t m = 0;
	for (size_t i = 0; i < g->nblock; i++)
		if (g->block[i].end - g->block[i].start > m)
			m = g->block[i].end - g->block[i].start;
	return m;
}

int rpatch_insn_why(const struct rcfg *g, const struct rflow *flow, size_t b, uint32_t insn)
{
	assert(b < g->nblock && insn < g->block[b].ninsns);
	struct ctx c = {.g = g, .flow = flow, .maxlen = longest_block(g)};
	return insn_why(&c, b, insn);
}

/* The block's first qualifying instruction into c->cand[p], or NO_INSN with
 * the reason into c->why[p]: NOT_EXECUTED for a cold block, else the first
 * long instruction's, SHORT when it has none. */
static void block_cand(struct ctx *c, size_t p)
{
	size_t b = c->r->block[p];
	const struct rcfg_block *k = &c->g->block[b];
	c->cand[p] = NO_INSN;
	c->why[p] = RPATCH_WHY_SHORT;
	if (!executed(c, b)) {
		c->why[p] = RPATCH_WHY_NOT_EXECUTED;
		return;
	}
	for (uint32_t i = 0; i < k->ninsns; i++) {
		int w = insn_why(c, b, i);
		if (w == RPATCH_WHY_OK) {
			c->cand[p] = i;
			return;
		}
		if (w != RPATCH_WHY_SHORT && c->why[p] == RPATCH_WHY_SHORT)
			c->why[p] = (uint8_t)w;
	}
}

/* Whether block position p may hold a point for loops it dominates:
 * RPATCH_UP_NONE when it lies in no loop and every path from it reaches a
 * loop block without leaving the region, else why not. Paths from p stop at
 * loop blocks; every other block they reach lies in no loop, so they are
 * acyclic and end at a loop block or at an exit. */
static int dom_ok(struct ctx *c, size_t p)
{
	if (c->dom[p])
		return c->dom[p] - 1;
	int res = RPATCH_UP_NONE;
	if (c->in_loop[p])
		res = RPATCH_UP_LOOP;
	size_t n = 0;
	if (res == RPATCH_UP_NONE) {
		c->stack[n++] = p;
		c->stamp[p] = p + 1;
	}
	while (n > 0 && res == RPATCH_UP_NONE) {
		const struct rcfg_block *k = &c->g->block[c->r->block[c->stack[--n]]];
		if ((k->flags & RCFG_EXIT) || k->nedge == 0)
			res = RPATCH_UP_EXIT;
		for (size_t e = k->first_edge; e < k->first_edge + k->nedge && !res; e++) {
			const struct rcfg_edge *x = &c->g->edge[e];
			size_t q = x->out == RCFG_IN ? rgraph_pos(c->r, x->to) : RGRAPH_NONE;
			if (q == RGRAPH_NONE)
				res = RPATCH_UP_EXIT;
			else if (!c->in_loop[q] && c->stamp[q] != p + 1) {
				c->stamp[q] = p + 1;
				c->stack[n++] = q;
			}
		}
	}
	c->dom[p] = (uint8_t)(res + 1);
	return res;
}

/* Depth of position p in the dominator tree (1 under the pseudo-entry),
 * without recursion: a chain of dominators may be as long as the region. */
static size_t dom_depth(struct ctx *c, size_t p)
{
	size_t n = 0, q = p;
	while (q != RGRAPH_NONE && !c->depth[q]) {
		c->stack[n++] = q;
		size_t d = c->r->idom[q];
		q = d == RGRAPH_ENTRY ? RGRAPH_NONE : rgraph_pos(c->r, d);
	}
	size_t base = q == RGRAPH_NONE ? 0 : c->depth[q];
	while (n > 0)
		c->depth[c->stack[--n]] = ++base;
	return c->depth[p];
}

/* The candidates of the entry at position pe, bottom-up: its own block when it
 * qualifies, then each dominator the walk accepts that has a qualifying
 * instruction; *up says why the walk stopped. */
static size_t entry_chain(struct ctx *c, size_t pe, size_t *out, uint8_t *up)
{
	size_t n = 0;
	if (c->cand[pe] != NO_INSN)
		out[n++] = pe;
	for (size_t d = c->r->idom[pe];;) {
		if (d == RGRAPH_ENTRY) {
			*up = RPATCH_UP_ENTRY;
			return n;
		}
		size_t q = rgraph_pos(c->r, d);
		int w = dom_ok(c, q);
		if (w != RPATCH_UP_NONE) {
			*up = (uint8_t)w;
			return n;
		}
		if (c->cand[q] != NO_INSN)
			out[n++] = q;
		d = c->r->idom[q];
	}
}

struct cands {
	struct entry_cands *e;
	size_t n;
	size_t *buf; /* one chain, as long as the region */
};

static void drop_cands(struct cands *v, size_t from)
{
	while (v->n > from)
		free(v->e[--v->n].pos);
}

/* Makes loop l a target: its entries' candidates into v, or, when an entry
 * has none, l uncovered and its child loops targets in its place. */
static int add_target(struct ctx *c, struct rpatch *res, struct cands *v, size_t l)
{
	const struct rgraph_loop *L = &c->r->loop[l];
	struct rpatch_loop *out = &res->loop[l];
	size_t first = v->n;
	for (size_t k = 0; k < L->nentry; k++) {
		size_t pe = rgraph_pos(c->r, L->entry[k]);
		uint8_t up = RPATCH_UP_NONE;
		size_t n = entry_chain(c, pe, v->buf, &up);
		if (n == 0) {
			drop_cands(v, first);
			out->status = RPATCH_UNCOVERED;
			out->entry = L->entry[k];
			out->why = c->why[pe];
			out->up = up;
			for (size_t j = 0; j < c->r->nloop; j++)
				if (c->r->loop[j].parent == l) {
					int err = add_target(c, res, v, j);
					if (err)
						return err;
				}
			return 0;
		}
		struct entry_cands *e = &v->e[v->n];
		e->pos = malloc(n * sizeof(*e->pos));
		if (!e->pos)
			return PMUSIM_ERR_NOMEM;
		arrays_copy(e->pos, v->buf, n, sizeof(*e->pos));
		e->npos = n;
		e->loop = l;
		e->k = k;
		e->point = RPATCH_NONE;
		v->n++;
	}
	out->status = RPATCH_COVERED;
	return 0;
}

static int has_pos(const struct entry_cands *e, size_t p)
{
	for (size_t i = 0; i < e->npos; i++)
		if (e->pos[i] == p)
			return 1;
	return 0;
}

struct order {
	size_t depth, block, loop, idx;
};

static int cmp_order(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->depth != y->depth)
		return x->depth < y->depth ? 1 : -1; /* deepest first */
	if (x->block != y->block)
		return x->block < y->block ? -1 : 1;
	return (x->loop > y->loop) - (x->loop < y->loop);
}

/* The fewest points covering every entry of v (positions into pts, entries'
 * .point set): each entry, deepest highest candidate first, takes a chosen
 * point already on its path or its highest candidate. */
static int greedy(struct ctx *c, struct cands *v, size_t *pts, size_t *npts)
{
	struct order *o = malloc((v->n + 1) * sizeof(*o));
	if (!o)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < v->n; i++) {
		const struct entry_cands *e = &v->e[i];
		o[i] = (struct order){dom_depth(c, e->pos[e->npos - 1]),
		                      c->r->loop[e->loop].entry[e->k], e->loop, i};
	}
	if (v->n)
		arrays_sort(o, v->n, sizeof(*o), cmp_order);
	*npts = 0;
	for (size_t i = 0; i < v->n; i++) {
		struct entry_cands *e = &v->e[o[i].idx];
		for (size_t j = 0; j < *npts && e->point == RPATCH_NONE; j++)
			if (has_pos(e, pts[j]))
				e->point = j;
		if (e->point == RPATCH_NONE) {
			pts[*npts] = e->pos[e->npos - 1];
			e->point = (*npts)++;
		}
	}
	free(o);
	return 0;
}

/* Moves point j down to the deepest block on every path of the entries it
 * covers (its first entry's candidates, bottom-up, hold that block). */
static void push_down(const struct cands *v, size_t *pts, size_t j)
{
	const struct entry_cands *e0 = NULL;
	for (size_t i = 0; i < v->n && !e0; i++)
		if (v->e[i].point == j)
			e0 = &v->e[i];
	assert(e0);
	for (size_t a = 0; a < e0->npos; a++) {
		int all = 1;
		for (size_t i = 0; i < v->n && all; i++)
			if (v->e[i].point == j && !has_pos(&v->e[i], e0->pos[a]))
				all = 0;
		if (all) {
			pts[j] = e0->pos[a];
			return;
		}
	}
	assert(0 && "a point's own block covers its entries");
}

/* Loops left unset lie inside a covered target: the nearest one holds them. */
static void mark_by_outer(const struct rgraph_region *r, struct rpatch *res)
{
	for (size_t l = 0; l < r->nloop; l++) {
		if (res->loop[l].status != UINT8_MAX)
			continue;
		size_t a = r->loop[l].parent;
		while (a != RGRAPH_NONE && res->loop[a].status != RPATCH_COVERED)
			a = r->loop[a].parent;
		assert(a != RGRAPH_NONE);
		res->loop[l].status = RPATCH_BY_OUTER;
		res->loop[l].by = a;
	}
	for (size_t l = 0; l < r->nloop; l++) {
		uint8_t s = res->loop[l].status;
		res->ncovered += s == RPATCH_COVERED;
		res->nby_outer += s == RPATCH_BY_OUTER;
		res->nuncovered += s == RPATCH_UNCOVERED;
	}
}

static int cmp_point(const void *a, const void *b)
{
	const struct rpatch_point *x = a, *y = b;
	return (x->addr > y->addr) - (x->addr < y->addr);
}

/* The points at positions pts, sorted by address, and each covered loop's
 * entry -> point map. */
static int emit(struct ctx *c, const struct cands *v, const size_t *pts, size_t npts,
                struct rpatch *res)
{
	res->point = calloc(npts + 1, sizeof(*res->point));
	size_t *rank = calloc(npts + 1, sizeof(*rank));
	if (!res->point || !rank) {
		free(rank);
		return PMUSIM_ERR_NOMEM;
	}
	for (size_t j = 0; j < npts; j++) {
		size_t b = c->r->block[pts[j]];
		const struct rcfg_block *k = &c->g->block[b];
		uint32_t i = c->cand[pts[j]];
		struct rpatch_point *p = &res->point[j];
		unsigned len = k->off[i + 1] - k->off[i]; /* at most 15 on x86 */
		p->block = b;
		p->insn = i;
		p->addr = k->start + k->off[i];
		p->len = (uint8_t)(len > UINT8_MAX ? UINT8_MAX : len);
		p->nentry = j;
		p->store = (uint8_t)rpatch_store_of(p->addr);
	}
	res->npoint = npts;
	if (npts)
		arrays_sort(res->point, npts, sizeof(*res->point), cmp_point);
	for (size_t j = 0; j < npts; j++) {
		assert(j == 0 || res->point[j].addr != res->point[j - 1].addr);
		/* nentry held the point's index before the sort; it counts entries
		 * from here on */
		rank[res->point[j].nentry] = j;
		res->point[j].nentry = 0;
	}
	int err = 0;
	for (size_t i = 0; i < v->n && !err; i++) {
		struct rpatch_loop *l = &res->loop[v->e[i].loop];
		if (!l->point)
			l->point = calloc(c->r->loop[v->e[i].loop].nentry, sizeof(*l->point));
		if (!l->point) {
			err = PMUSIM_ERR_NOMEM;
			break;
		}
		l->point[v->e[i].k] = rank[v->e[i].point];
		res->point[rank[v->e[i].point]].nentry++;
	}
	free(rank);
	return err;
}

static int ctx_init(struct ctx *c, const struct rcfg *g, const struct rgraph_region *r)
{
	size_t n = r->nblock + 1;
	c->maxlen = longest_block(g);
	c->target = malloc((g->nedge + 1) * sizeof(*c->target));
	c->cand = calloc(n, sizeof(*c->cand));
	c->why = calloc(n, 1);
	c->in_loop = calloc(n, 1);
	c->dom = calloc(n, 1);
	c->stamp = calloc(n, sizeof(*c->stamp));
	c->stack = calloc(n, sizeof(*c->stack));
	c->depth = calloc(n, sizeof(*c->depth));
	if (!c->target || !c->cand || !c->why || !c->in_loop || !c->dom || !c->stamp || !c->stack ||
	    !c->depth)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < g->nedge; i++)
		c->target[i] = g->edge[i].to_addr;
	c->ntarget = g->nedge;
	if (g->nedge)
		arrays_sort(c->target, g->nedge, sizeof(*c->target), cmp_u64);
	for (size_t l = 0; l < r->nloop; l++)
		for (size_t i = 0; i < r->loop[l].nblock; i++)
			c->in_loop[rgraph_pos(r, r->loop[l].block[i])] = 1;
	for (size_t p = 0; p < r->nblock; p++)
		block_cand(c, p);
	return 0;
}

static void ctx_fini(struct ctx *c)
{
	free(c->target);
	free(c->cand);
	free(c->why);
	free(c->in_loop);
	free(c->dom);
	free(c->stamp);
	free(c->stack);
	free(c->depth);
}

static int find(struct ctx *c, struct rpatch *res)
{
	const struct rgraph_region *r = c->r;
	size_t nent = 0;
	for (size_t l = 0; l < r->nloop; l++)
		nent += r->loop[l].nentry;
	struct cands v = {calloc(nent + 1, sizeof(*v.e)), 0, calloc(r->nblock + 1, sizeof(size_t))};
	size_t *pts = calloc(nent + 1, sizeof(*pts));
	int err = v.e && v.buf && pts ? 0 : PMUSIM_ERR_NOMEM;
	for (size_t l = 0; l < r->nloop && !err; l++)
		if (r->loop[l].parent == RGRAPH_NONE)
			err = add_target(c, res, &v, l);
	size_t npts = 0;
	if (!err)
		err = greedy(c, &v, pts, &npts);
	for (size_t j = 0; j < npts && !err; j++)
		push_down(&v, pts, j);
	if (!err) {
		mark_by_outer(r, res);
		err = emit(c, &v, pts, npts, res);
	}
	if (v.e)
		drop_cands(&v, 0);
	free(v.e);
	free(v.buf);
	free(pts);
	return err;
}

int rpatch_find(const struct rcfg *g, const struct rgraph_region *r, const struct rflow *flow,
                struct rpatch **out, char *msg, size_t msglen)
{
	*out = NULL;
	if (flow && flow->nblock != g->nblock)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
		                   "rpatch: the flow has %zu blocks, the graph %zu", flow->nblock,
		                   g->nblock);
	for (size_t p = 0; p < r->nblock; p++)
		if (r->block[p] >= g->nblock)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "rpatch: region block %zu is no block of the graph",
			                   r->block[p]);
	struct rpatch *res = calloc(1, sizeof(*res));
	if (!res || !(res->loop = calloc(r->nloop + 1, sizeof(*res->loop)))) {
		free(res);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rpatch: out of memory");
	}
	res->nloop = r->nloop;
	for (size_t l = 0; l < r->nloop; l++)
		res->loop[l] = (struct rpatch_loop){UINT8_MAX,   RPATCH_NONE,   NULL,
		                                    RPATCH_NONE, RPATCH_WHY_OK, RPATCH_UP_NONE};
	struct ctx c = {.g = g, .r = r, .flow = flow};
	int err = ctx_init(&c, g, r);
	if (!err)
		err = find(&c, res);
	ctx_fini(&c);
	if (err) {
		rpatch_free(res);
		return pmusim_fail(msg, msglen, err, "rpatch: out of memory");
	}
	*out = res;
	return 0;
}

void rpatch_free(struct rpatch *p)
{
	if (!p)
		return;
	for (size_t l = 0; l < p->nloop; l++)
		free(p->loop[l].point);
	free(p->loop);
	free(p->point);
	free(p);
}

static const char *name_of(const char *const *names, size_t n, int v)
{
	return v >= 0 && (size_t)v < n ? names[v] : "?";
}

const char *rpatch_store_name(int store)
{
	static const char *const n[] = {"atomic", "int3"};
	return name_of(n, 2, store);
}

const char *rpatch_why_name(int why)
{
	static const char *const n[] = {"ok", "not_executed", "short", "edge_inside", "overlap"};
	return name_of(n, 5, why);
}

const char *rpatch_up_name(int up)
{
	static const char *const n[] = {"none", "entry", "loop", "exit"};
	return name_of(n, 4, up);
}

const char *rpatch_status_name(int status)
{
	static const char *const n[] = {"covered", "by_outer", "uncovered"};
	return name_of(n, 3, status);
}
