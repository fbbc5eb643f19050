/* Partial inlining of hot calls (region_inline.h): per kept region, a
 * best-first worklist of call sites (a binary heap by count, call address,
 * depth, parent clone), where inlining one site adds the sites of its clone;
 * a callee's body is a walk from its entry through warm blocks, its counts
 * scaled by the site's share of the entry's executions, as an inliner with
 * profile feedback scales a callee's profile into each call site. */
#include "profiler/region_inline.h"

#include <stdlib.h>

#include "common/arrays.h"
#include "common/err.h"

struct ctx {
	const struct rcfg *g;
	const struct rgraph *rg;
	const struct rprune *p;
	const struct rinline_options *o;
	struct rinline *in;
	size_t site_cap, clone_cap;
	struct rinline_site *heap; /* sites waiting, best first at heap[0] */
	size_t nheap, heap_cap;
	size_t *mark; /* per block: the walk that last entered it */
	size_t walk;  /* this walk's number (0: none yet) */
	size_t *body; /* the last walk's blocks, g->nblock entries */
	size_t nbody;
	uint64_t body_insns;
};

void rinline_options_init(struct rinline_options *o)
{
	o->max_depth = RINLINE_MAX_DEPTH_DEFAULT;
	o->max_callee_insns = RINLINE_MAX_CALLEE_INSNS_DEFAULT;
	o->max_region_insns = RINLINE_MAX_REGION_INSNS_DEFAULT;
	o->min_call_fraction = RINLINE_MIN_CALL_FRACTION_DEFAULT;
	o->cold_fraction = RPRUNE_COLD_FRACTION_DEFAULT;
	o->sample_weight = 0;
}

const char *rinline_why_name(int why)
{
	static const char *const names[] = {"inlined", "indirect", "no_code", "recursive", "depth",
	                                    "cold",    "empty",    "too_big", "budget"};
	return why >= 0 && why <= RINLINE_WHY_BUDGET ? names[why] : "?";
}

void rinline_free(struct rinline *in)
{
	if (!in)
		return;
	for (size_t k = 0; in->clone && k < in->nclone; k++) {
		free(in->clone[k].block);
		free(in->clone[k].count);
	}
	for (size_t r = 0; in->region && r < in->nregion; r++)
		free(in->region[r].site);
	free(in->site);
	free(in->clone);
	free(in->region);
	free(in->ip);
	free(in);
}

struct region_cover rinline_cover(const struct rinline *in)
{
	return (struct region_cover){.ip = in->ip, .n = in->nip};
}

static int unit_range(double x)
{
	return x >= 0 && x <= 1; /* false for NaN */
}

/* The graph's own shape: what the walks and the call addresses rely on. */
static int check_graph(const struct rcfg *g, char *msg, size_t msglen)
{
	for (size_t b = 0; b < g->nblock; b++) {
		const struct rcfg_block *gb = &g->block[b];
		if (gb->ninsns == 0 || !gb->off)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "rinline: block %zu has no instruction", b);
		if (gb->nedge > g->nedge || gb->first_edge > g->nedge - gb->nedge)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "rinline: block %zu's edges are out of range", b);
	}
	for (size_t i = 0; i < g->nedge; i++) {
		const struct rcfg_edge *e = &g->edge[i];
		if (e->from >= g->nblock || (e->out == RCFG_IN && e->to >= g->nblock))
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "rinline: edge %zu joins no block", i);
	}
	return 0;
}

/* Options in range, and g, rg, f, p of one graph; every block in one region
 * (seen[] is scratch of g->nblock entries), so that no site is listed twice. */
static int check_inputs(const struct ctx *c, const struct rflow *f, uint8_t *seen, char *msg,
                        size_t msglen)
{
	const struct rinline_options *o = c->o;
	if (!unit_range(o->min_call_fraction) || !unit_range(o->cold_fraction))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
		                   "rinline: an option is out of range (min_call_fraction "
		                   "%g, cold_fraction %g: fractions in [0, 1])",
		                   o->min_call_fraction, o->cold_fraction);
	const struct rcfg *g = c->g;
	if (f->nblock != g->nblock || f->nedge != g->nedge || c->p->nblock != g->nblock ||
	    c->p->nregion != c->rg->nregion)
		return pmusim_fail(
		    msg, msglen, PMUSIM_ERR_ARG,
		    "rinline: the counts or the selection are not the graph's (blocks, "
		    "edges: %zu, %zu in g, %zu, %zu in f; %zu blocks in p; regions: "
		    "%zu in rg, %zu in p)",
		    g->nblock, g->nedge, f->nblock, f->nedge, c->p->nblock, c->rg->nregion,
		    c->p->nregion);
	int err = check_graph(g, msg, msglen);
	if (err)
		return err;
	for (size_t r = 0; r < c->rg->nregion; r++) {
		const struct rgraph_region *reg = &c->rg->region[r];
		for (size_t k = 0; k < reg->nblock; k++) {
			size_t b = reg->block[k];
			if (b >= g->nblock || seen[b])
				return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
				                   "rinline: region %zu's block %zu is not the "
				                   "graph's or in two regions",
				                   r, b);
			seen[b] = 1;
		}
	}
	return 0;
}

/* A block's count as region_prune.h gives it (a bound counts too); 0 without. */
static double count_of(const struct ctx *c, size_t b)
{
	return c->p->block[b].counted ? c->p->block[b].count : 0;
}

/* Whether a is considered before b: count descending, then call address, depth
 * and parent clone ascending. No two sites tie on all four: one call
 * instruction is one block, copied at most once per clone. */
static int site_before(const struct rinline_site *a, const struct rinline_site *b)
{
	if (a->count != b->count)
		return a->count > b->count;
	if (a->call != b->call)
		return a->call < b->call;
	if (a->depth != b->depth)
		return a->depth < b->depth;
	return a->parent < b->parent;
}

static int heap_push(struct ctx *c, const struct rinline_site *s)
{
	if (c->nheap == c->heap_cap) {
		size_t cap = c->heap_cap ? 2 * c->heap_cap : 16;
		struct rinline_site *h = realloc(c->heap, cap * sizeof(*h));
		if (!h)
			return PMUSIM_ERR_NOMEM;
		c->heap = h, c->heap_cap = cap;
	}
	size_t i = c->nheap++;
	while (i > 0 && site_before(s, &c->heap[(i - 1) / 2])) {
		c->heap[i] = c->heap[(i - 1) / 2];
		i = (i - 1) / 2;
	}
	c->heap[i] = *s;
	return 0;
}

static struct rinline_site heap_pop(struct ctx *c)
{
	struct rinline_site top = c->heap[0], last = c->heap[--c->nheap];
	size_t i = 0, n = c->nheap;
	for (;;) {
		size_t k = 2 * i + 1;
		if (k >= n)
			break;
		if (k + 1 < n && site_before(&c->heap[k + 1], &c->heap[k]))
			k++;
		if (!site_before(&c->heap[k], &last))
			break;
		c->heap[i] = c->heap[k];
		i = k;
	}
	if (n > 0)
		c->heap[i] = last;
	return top;
}

/* Queues block b as a site when it ends in a call, direct or not. */
static int queue_call(struct ctx *c, size_t region, size_t b, size_t parent, unsigned depth,
                      double count)
{
	const struct rcfg_block *gb = &c->g->block[b];
	if (!(gb->flags & RCFG_CALL))
		return 0;
	int direct = gb->kind == BK_CALL && gb->callee != 0;
	struct rinline_site s = {.region = region,
	                         .block = b,
	                         .parent = parent,
	                         .call = gb->start + gb->off[gb->ninsns - 1],
	                         .ret = gb->end,
	                         .callee = direct ? gb->callee : 0,
	                         .depth = depth,
	                         .count = count,
	                         .why = direct ? RINLINE_WHY_INLINED : RINLINE_WHY_INDIRECT,
	                         .clone = RINLINE_NONE};
	return heap_push(c, &s);
}

static int size_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

/* The body of entry e into c->body (ascending) and c->body_insns: the blocks
 * reached from e through in-graph edges of every kind (a call-return edge
 * keeps an inner call's return point in its callee) and warm blocks only. It
 * stops once past limit instructions: the body is too big whatever else it
 * holds. 0, or 1 when it stopped. */
static int walk_body(struct ctx *c, size_t e, uint64_t limit)
{
	const struct rcfg *g = c->g;
	double bar = c->o->cold_fraction * count_of(c, e);
	size_t walk = ++c->walk, n = 0, done = 0;
	c->mark[e] = walk;
	c->body[n++] = e;
	c->body_insns = g->block[e].ninsns;
	/* body[] doubles as the walk's stack: body[done ..] are yet to expand. */
	while (done < n && c->body_insns <= limit) {
		const struct rcfg_block *gb = &g->block[c->body[done++]];
		for (size_t i = gb->first_edge; i < gb->first_edge + gb->nedge; i++) {
			const struct rcfg_edge *x = &g->edge[i];
			if (x->out != RCFG_IN || c->mark[x->to] == walk)
				continue;
			const struct rprune_block *pb = &c->p->block[x->to];
			if (!pb->counted || !(pb->count > 0) || pb->count < bar)
				continue;
			c->mark[x->to] = walk;
			c->body[n++] = x->to;
			c->body_insns += g->block[x->to].ninsns;
		}
	}
	c->nbody = n;
	if (c->body_insns > limit)
		return 1;
	arrays_sort(c->body, n, sizeof(*c->body), size_cmp);
	return 0;
}

/* Why s is not inlined, in the header's order, or RINLINE_WHY_INLINED with
 * its body in c->body and its entry in *entry. */
static int decide(struct ctx *c, const struct rinline_site *s, uint64_t used, size_t *entry)
{
	if (s->why == RINLINE_WHY_INDIRECT)
		return RINLINE_WHY_INDIRECT;
	const struct rcfg_block *eb = rcfg_block_at(c->g, s->callee);
	if (!eb)
		return RINLINE_WHY_NO_CODE;
	size_t e = (size_t)(eb - c->g->block);
	for (size_t k = s->parent; k != RINLINE_NONE; k = c->in->site[c->in->clone[k].site].parent)
		if (c->in->clone[k].entry == e)
			return RINLINE_WHY_RECURSIVE;
	if (s->depth > c->o->max_depth)
		return RINLINE_WHY_DEPTH;
	/* A count of 0 is a bridge no sample and no equation counted: nothing
	 * to scale a clone by, whatever min_call_fraction says. */
	if (!(s->count > 0) || s->count < c->o->min_call_fraction * c->p->region[s->region].hottest)
		return RINLINE_WHY_COLD;
	if (!(count_of(c, e) > 0))
		return RINLINE_WHY_EMPTY;
	if (walk_body(c, e, c->o->max_callee_insns))
		return RINLINE_WHY_TOO_BIG;
	if (c->body_insns > c->o->max_region_insns - used)
		return RINLINE_WHY_BUDGET;
	*entry = e;
	return RINLINE_WHY_INLINED;
}

static int append_site(struct ctx *c, const struct rinline_site *s)
{
	struct rinline *in = c->in;
	if (in->nsite == c->site_cap) {
		size_t cap = c->site_cap ? 2 * c->site_cap : 16;
		struct rinline_site *a = realloc(in->site, cap * sizeof(*a));
		if (!a)
			return PMUSIM_ERR_NOMEM;
		in->site = a, c->site_cap = cap;
	}
	in->site[in->nsite++] = *s;
	return 0;
}

/* Whether block b is the graph's only way into e: no other block calls it
 * directly (calls are no edges of the graph), and every edge into e from a block
 * outside c->body (the callee's body just walked) comes from b. */
static int only_way_in(const struct ctx *c, size_t b, size_t e)
{
	for (size_t j = 0; j < c->g->nblock; j++)
		if (j != b && c->g->block[j].callee == c->g->block[e].start)
			return 0;
	for (size_t i = 0; i < c->g->nedge; i++) {
		const struct rcfg_edge *ed = &c->g->edge[i];
		if (ed->to != e || ed->from == b)
			continue;
		if (!arrays_find(&ed->from, c->body, c->nbody, sizeof(*c->body), size_cmp))
			return 0;
	}
	return 1;
}

/* Whether block b's calls are all of e's executions: b is the only way in and,
 * from samples, the two counts differ by at most three standard deviations of
 * their noise (region_inline.h's sample_weight). */
static int one_caller(const struct ctx *c, size_t b, size_t e)
{
	double cb = count_of(c, b), ce = count_of(c, e), w = c->o->sample_weight;
	if (!(w > 0) || !(cb > 0) || !only_way_in(c, b, e))
		return 0;
	double var = cb * w / c->g->block[b].ninsns + ce * w / c->g->block[e].ninsns;
	return (ce - cb) * (ce - cb) <= 9 * var;
}

/* The clone of site in->site[si] from c->body, and its calls queued. */
static int make_clone(struct ctx *c, size_t si, size_t e)
{
	struct rinline *in = c->in;
	if (in->nclone == c->clone_cap) {
		size_t cap = c->clone_cap ? 2 * c->clone_cap : 8;
		struct rinline_clone *a = realloc(in->clone, cap * sizeof(*a));
		if (!a)
			return PMUSIM_ERR_NOMEM;
		in->clone = a, c->clone_cap = cap;
	}
	struct rinline_site *s = &in->site[si];
	struct rinline_clone *k = &in->clone[in->nclone];
	*k = (struct rinline_clone){.site = si, .entry = e, .depth = s->depth};
	k->block = malloc(c->nbody * sizeof(*k->block));
	k->count = malloc(c->nbody * sizeof(*k->count));
	if (!k->block || !k->count) {
		free(k->block);
		free(k->count);
		return PMUSIM_ERR_NOMEM;
	}
	size_t ci = in->nclone++;
	s->clone = ci;
	/* count(E) counts every execution of E, so a site counted above it is
	 * noise: the clone runs at most as often as the callee. When the site's
	 * block is the graph's only way into E from outside the body, flow
	 * conservation makes E's executions the site's (within sampling noise):
	 * the clone runs the
	 * callee's counts times the site's own scale (1 in own code), and the
	 * callee's many sampled instructions, not the one call instruction,
	 * say how often. */
	double scale = one_caller(c, s->block, e) ? s->count / count_of(c, s->block)
	                                           : s->count / count_of(c, e);
	k->scale = scale > 1 ? 1 : scale;
	k->nblock = c->nbody;
	k->ninsns = c->body_insns;
	for (size_t j = 0; j < c->nbody; j++) {
		size_t b = c->body[j];
		k->block[j] = b;
		k->count[j] = k->scale * count_of(c, b);
		k->weight += k->count[j] * c->g->block[b].ninsns;
	}
	struct rinline_region *rr = &in->region[s->region];
	rr->inlined_insns += k->ninsns;
	rr->inlined_weight += k->weight;
	for (size_t j = 0; j < k->nblock; j++) {
		int err = queue_call(c, s->region, k->block[j], ci, s->depth + 1, k->count[j]);
		if (err)
			return err;
	}
	return 0;
}

/* The sites of kept region r, hottest first, and its clones. */
static int run_region(struct ctx *c, size_t r)
{
	struct rinline *in = c->in;
	const struct rgraph_region *reg = &c->rg->region[r];
	size_t first = in->nsite;
	c->nheap = 0;
	for (size_t k = 0; k < reg->nblock; k++) {
		size_t b = reg->block[k];
		if (!c->p->block[b].kept)
			continue;
		int err = queue_call(c, r, b, RINLINE_NONE, 1, count_of(c, b));
		if (err)
			return err;
	}
	while (c->nheap > 0) {
		struct rinline_site s = heap_pop(c);
		size_t e = RINLINE_NONE;
		s.why = (uint8_t)decide(c, &s, in->region[r].inlined_insns, &e);
		if (append_site(c, &s))
			return PMUSIM_ERR_NOMEM;
		if (s.why == RINLINE_WHY_INLINED && make_clone(c, in->nsite - 1, e))
			return PMUSIM_ERR_NOMEM;
	}
	struct rinline_region *rr = &in->region[r];
	rr->nsite = in->nsite - first;
	rr->site = malloc((rr->nsite ? rr->nsite : 1) * sizeof(*rr->site));
	if (!rr->site)
		return PMUSIM_ERR_NOMEM;
	for (size_t j = 0; j < rr->nsite; j++)
		rr->site[j] = first + j;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The selection's instructions and every clone's, sorted, each once. */
static int collect_cover(struct ctx *c)
{
	struct rinline *in = c->in;
	size_t n = c->p->nip;
	for (size_t k = 0; k < in->nclone; k++)
		n += in->clone[k].ninsns;
	in->ip = malloc((n ? n : 1) * sizeof(*in->ip));
	if (!in->ip)
		return PMUSIM_ERR_NOMEM;
	n = 0;
	for (size_t i = 0; i < c->p->nip; i++)
		in->ip[n++] = c->p->ip[i];
	for (size_t k = 0; k < in->nclone; k++)
		for (size_t j = 0; j < in->clone[k].nblock; j++) {
			const struct rcfg_block *gb = &c->g->block[in->clone[k].block[j]];
			for (uint32_t i = 0; i < gb->ninsns; i++)
				in->ip[n++] = gb->start + gb->off[i];
		}
	arrays_sort(in->ip, n, sizeof(*in->ip), cmp_u64);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || in->ip[i] != in->ip[m - 1])
			in->ip[m++] = in->ip[i];
	in->nip = m;
	return 0;
}

static int run(struct ctx *c, char *msg, size_t msglen)
{
	size_t nb = c->g->nblock;
	c->mark = calloc(nb + 1, sizeof(*c->mark));
	c->body = malloc((nb + 1) * sizeof(*c->body));
	c->in->region = calloc(c->rg->nregion + 1, sizeof(*c->in->region));
	if (!c->mark || !c->body || !c->in->region)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rinline: out of memory");
	c->in->nregion = c->rg->nregion;
	for (size_t r = 0; r < c->rg->nregion; r++)
		if (c->p->region[r].kept && run_region(c, r))
			return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rinline: out of memory");
	if (collect_cover(c))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rinline: out of memory");
	return 0;
}

int rinline_run(const struct rcfg *g, const struct rgraph *rg, const struct rflow *f,
                const struct rprune *p, const struct rinline_options *opt, struct rinline **out,
                char *msg, size_t msglen)
{
	struct rinline_options def;
	if (!opt) {
		rinline_options_init(&def);
		opt = &def;
	}
	*out = NULL;
	struct ctx c = {.g = g, .rg = rg, .p = p, .o = opt};
	uint8_t *seen = calloc(g->nblock + 1, 1);
	if (!seen)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rinline: out of memory");
	int err = check_inputs(&c, f, seen, msg, msglen);
	free(seen);
	if (err)
		return err;
	c.in = calloc(1, sizeof(*c.in));
	if (!c.in)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rinline: out of memory");
	err = run(&c, msg, msglen);
	free(c.mark);
	free(c.body);
	free(c.heap);
	if (err) {
		rinline_free(c.in);
		return err;
	}
	*out = c.in;
	return 0;
}
