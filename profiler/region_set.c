/* The region set of a selection: which blocks each region's replacement copies,
 * its successor links and patch points, the samples' estimate of what it
 * captures (region_set_estimate.c); the JSON is region_set_json.c's. The rules:
 * region_set.h. */
#include "profiler/region_set.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "pmu_model/block.h"
#include "profiler/region_set_internal.h"

#define RSET_PASSES 3

/* Empties s's regions (the array stays). */
static void rset_clear(struct rset *s)
{
	for (size_t i = 0; i < s->nregion; i++) {
		struct rset_region *r = &s->region[i];
		for (uint32_t b = 0; r->block && b < r->nblock; b++) {
			free(r->block[b].off);
			free(r->block[b].succ);
		}
		free(r->block);
		free(r->clone);
		free(r->point);
		for (uint32_t l = 0; r->loop && l < r->nloop; l++)
			free(r->loop[l].block);
		free(r->loop);
		memset(r, 0, sizeof(*r));
	}
	s->nregion = 0;
	s->est_insns = 0;
}

void rset_free(struct rset *s)
{
	if (!s)
		return;
	rset_clear(s);
	free(s->region);
	free(s);
}

static int add_piece(struct build *c, size_t g, uint32_t clone, double count, int counted)
{
	if (c->npc == c->cappc) {
		size_t cap = c->cappc ? 2 * c->cappc : 64;
		struct piece *n = realloc(c->pc, cap * sizeof(*n));
		if (!n)
			return PMUSIM_ERR_NOMEM;
		c->pc = n, c->cappc = cap;
	}
	c->pc[c->npc++] = (struct piece){g, clone, count, counted};
	return 0;
}

double rsb_own_count(const struct build *c, size_t b)
{
	return c->p->block[b].counted ? c->p->block[b].count : 0;
}

/* Own code: kept blocks, point blocks and what points reach before a loop. */
static int mark_own(struct build *c, size_t *stack)
{
	const struct rcfg *g = c->g;
	for (size_t k = 0; k < c->reg->nblock; k++) {
		size_t b = c->reg->block[k];
		if (c->p->block[b].kept)
			c->own[b] = 1;
	}
	size_t n = 0;
	for (size_t k = 0; k < c->pt->npoint; k++) {
		size_t b = c->pt->point[k].block;
		if (!c->own[b] || !c->inloop[b])
			stack[n++] = b;
		c->own[b] = 1;
	}
	while (n) {
		size_t b = stack[--n];
		if (c->inloop[b])
			continue;
		const struct rcfg_block *gb = &g->block[b];
		for (size_t e = gb->first_edge; e < gb->first_edge + gb->nedge; e++) {
			const struct rcfg_edge *ed = &g->edge[e];
			if (ed->to == RCFG_NO_BLOCK || ed->kind == RCFG_CALL_RETURN ||
			    !c->inreg[ed->to] || c->own[ed->to])
				continue;
			c->own[ed->to] = 1;
			stack[n++] = ed->to;
		}
	}
	return 0;
}

/* The index of piece (g block b, clone k), or RSET_NONE. Pieces are few per
 * region; a linear search keeps this simple. */
uint32_t rsb_piece_of(const struct build *c, size_t b, uint32_t k)
{
	for (size_t i = 0; i < c->npc; i++)
		if (c->pc[i].g == b && c->pc[i].clone == k)
			return (uint32_t)i;
	return RSET_NONE;
}

static int piece_cmp(const void *a, const void *b)
{
	const struct piece *x = a, *y = b;
	if (x->clone != y->clone)
		return x->clone < y->clone ? -1 : 1;
	return x->g < y->g ? -1 : x->g > y->g;
}

/* The region's clones: inl's clones of sites in region ri, numbered 1.. in inl's order. */
static int number_clones(struct build *c)
{
	if (!c->inl)
		return 0;
	for (size_t k = 0; k < c->inl->nclone; k++) {
		const struct rinline_site *s = &c->inl->site[c->inl->clone[k].site];
		if (s->region != c->ri)
			continue;
		c->clone_of[k] = ++c->nclone;
		c->clone_ix[c->nclone] = k;
	}
	return 0;
}

/* The inlined clone (region number) of the call ending g block b in clone k, 0 when none. */
uint32_t rsb_inlined_at(const struct build *c, size_t b, uint32_t k)
{
	if (!c->inl)
		return 0;
	size_t parent = k ? c->clone_ix[k] : RINLINE_NONE;
	for (size_t s = 0; s < c->inl->nsite; s++) {
		const struct rinline_site *st = &c->inl->site[s];
		if (st->region == c->ri && st->block == b && st->parent == parent &&
		    st->why == RINLINE_WHY_INLINED)
			return (uint32_t)c->clone_of[st->clone];
	}
	return 0;
}

struct links {
	uint32_t *to;
	double *frac;
	uint32_t n, cap;
};

static int link_add(struct links *l, uint32_t to, double frac)
{
	for (uint32_t i = 0; i < l->n; i++)
		if (l->to[i] == to)
			return 0; /* two edges to one block (a jcc to its fall-through) are one link
			           */
	if (l->n == l->cap) {
		uint32_t cap = l->cap ? 2 * l->cap : 4;
		uint32_t *t = realloc(l->to, cap * sizeof(*t));
		if (!t)
			return PMUSIM_ERR_NOMEM;
		l->to = t;
		double *f = realloc(l->frac, cap * sizeof(*f));
		if (!f)
			return PMUSIM_ERR_NOMEM;
		l->frac = f, l->cap = cap;
	}
	l->to[l->n] = to, l->frac[l->n] = frac, l->n++;
	return 0;
}

static int links_of(const struct build *c, uint32_t pi, struct links *l)
{
	const struct piece *pc = &c->pc[pi];
	const struct rcfg_block *gb = &c->g->block[pc->g];
	for (size_t e = gb->first_edge; e < gb->first_edge + gb->nedge; e++) {
		const struct rcfg_edge *ed = &c->g->edge[e];
		if (ed->to == RCFG_NO_BLOCK || ed->kind == RCFG_CALL_RETURN)
			continue;
		uint32_t to = rsb_piece_of(c, ed->to, pc->clone);
		if (to != RSET_NONE && link_add(l, to, rsb_edge_frac(c, pc->g, e)) < 0)
			return PMUSIM_ERR_NOMEM;
	}
	uint32_t k = rsb_inlined_at(c, pc->g, pc->clone);
	if (k) {
		const struct rinline_clone *cl = &c->inl->clone[c->clone_ix[k]];
		uint32_t to = rsb_piece_of(c, cl->entry, k);
		if (to != RSET_NONE && link_add(l, to, 1) < 0)
			return PMUSIM_ERR_NOMEM;
	}
	if (pc->clone && gb->kind == BK_RET) {
		const struct rinline_site *st =
		    &c->inl->site[c->inl->clone[c->clone_ix[pc->clone]].site];
		uint32_t parent =
		    st->parent == RINLINE_NONE ? 0 : (uint32_t)c->clone_of[st->parent];
		const struct rcfg_block *rb = rcfg_block_at(c->g, st->ret);
		if (rb) {
			uint32_t to = rsb_piece_of(c, (size_t)(rb - c->g->block), parent);
			if (to != RSET_NONE && link_add(l, to, 1) < 0)
				return PMUSIM_ERR_NOMEM;
		}
	}
	return 0;
}

/* The point-holding pieces' flags: 1 + the point's instruction. */
uint32_t rsb_point_insn(const struct build *c, const struct piece *pc)
{
	if (pc->clone)
		return 0;
	for (size_t k = 0; k < c->pt->npoint; k++)
		if (c->pt->point[k].block == pc->g)
			return c->pt->point[k].insn + 1;
	return 0;
}

/* Keeps the pieces some point reaches by links; keep[i] set for them. */
static void reach(const struct build *c, struct links *lk, uint8_t *keep, uint32_t *stack)
{
	size_t n = 0;
	for (size_t i = 0; i < c->npc; i++)
		if (rsb_point_insn(c, &c->pc[i]))
			keep[i] = 1, stack[n++] = (uint32_t)i;
	while (n) {
		uint32_t a = stack[--n];
		for (uint32_t k = 0; k < lk[a].n; k++)
			if (!keep[lk[a].to[k]])
				keep[lk[a].to[k]] = 1, stack[n++] = lk[a].to[k];
	}
}

static int fill_block(const struct build *c, struct rset_block *o, const struct piece *pc,
                      const struct links *l, const uint32_t *newix, double inside)
{
	const struct rcfg_block *gb = &c->g->block[pc->g];
	o->start = gb->start, o->ninsns = gb->ninsns, o->clone = pc->clone, o->kind = gb->kind;
	o->count = pc->count, o->inside = inside;
	o->off = malloc((gb->ninsns + 1) * sizeof(uint16_t));
	o->succ = malloc((l->n + 1) * sizeof(uint32_t));
	if (!o->off || !o->succ)
		return PMUSIM_ERR_NOMEM;
	memcpy(o->off, gb->off, (gb->ninsns + 1) * sizeof(uint16_t));
	for (uint32_t k = 0; k < l->n; k++)
		if (newix[l->to[k]] != RSET_NONE)
			o->succ[o->nsucc++] = newix[l->to[k]];
	return 0;
}

static uint32_t gb_insns(const struct build *c, const struct piece *pc)
{
	return c->g->block[pc->g].ninsns;
}

static int fill_region(struct build *c, struct rset_region *out, struct links *lk,
                       const uint8_t *keep, const double *x)
{
	uint32_t *newix = malloc((c->npc + 1) * sizeof(uint32_t));
	if (!newix)
		return PMUSIM_ERR_NOMEM;
	uint32_t n = 0;
	for (size_t i = 0; i < c->npc; i++)
		newix[i] = keep[i] ? n++ : RSET_NONE;
	out->block = calloc(n + 1, sizeof(*out->block));
	out->clone = calloc(c->nclone + 1, sizeof(*out->clone));
	out->point = calloc(c->pt->npoint + 1, sizeof(*out->point));
	out->loop = calloc(c->reg->nloop + 1, sizeof(*out->loop));
	int err = out->block && out->clone && out->point && out->loop ? 0 : PMUSIM_ERR_NOMEM;
	for (size_t i = 0; !err && i < c->npc; i++) {
		if (!keep[i])
			continue;
		struct rset_block *o = &out->block[out->nblock++];
		const struct piece *pc = &c->pc[i];
		uint32_t pin = rsb_point_insn(c, pc);
		/* own code runs the executions its clones elsewhere do not */
		double cnt = pc->clone ? pc->count : pc->count * (1 - c->inlined[pc->g]);
		double inside = x[i] * cnt;
		if ((err = fill_block(c, o, pc, &lk[i], newix, inside)))
			break;
		uint32_t ni = gb_insns(c, pc);
		/* a call not inlined runs in the original code, unless it is the point */
		uint32_t run = ni - (o->nsucc == 0 && (o->kind == BK_CALL || o->kind == BK_CALL_IND) &&
		                     pin != ni);
		if (pin > 1) /* a point inside: every execution runs inside from it on */
			out->est_insns +=
			    inside * (double)(pin - 1) + cnt * (double)(run - (pin - 1));
		else
			out->est_insns += inside * (double)run;
	}
	for (uint32_t k = 1; !err && k <= c->nclone; k++) {
		const struct rinline_clone *cl = &c->inl->clone[c->clone_ix[k]];
		const struct rinline_site *st = &c->inl->site[cl->site];
		uint32_t e = rsb_piece_of(c, cl->entry, k);
		out->clone[out->nclone++] = (struct rset_clone){
		    st->call,
		    st->ret,
		    st->callee,
		    st->parent == RINLINE_NONE ? 0 : (uint32_t)c->clone_of[st->parent],
		    e == RSET_NONE ? RSET_NONE : newix[e],
		    cl->scale};
	}
	for (size_t k = 0; !err && k < c->pt->npoint; k++) {
		const struct rpatch_point *p = &c->pt->point[k];
		uint32_t b = rsb_piece_of(c, p->block, 0);
		out->point[out->npoint++] = (struct rset_point){p->addr, newix[b], p->insn, p->len};
	}
	for (size_t l = 0; !err && l < c->reg->nloop; l++) {
		const struct rgraph_loop *lp = &c->reg->loop[l];
		uint32_t h = rsb_piece_of(c, lp->header, 0);
		if (h == RSET_NONE || newix[h] == RSET_NONE)
			continue;
		struct rset_loop *o = &out->loop[out->nloop++];
		o->header = newix[h];
		if (!(o->block = malloc((lp->nblock + 1) * sizeof(uint32_t)))) {
			err = PMUSIM_ERR_NOMEM;
			break;
		}
		for (size_t k = 0; k < lp->nblock; k++) {
			uint32_t b = rsb_piece_of(c, lp->block[k], 0);
			if (b != RSET_NONE && newix[b] != RSET_NONE)
				o->block[o->nblock++] = newix[b];
		}
		for (uint32_t i = 1; i < o->nblock; i++) /* ascending: pieces are in g order */
			if (o->block[i] < o->block[i - 1])
				err = PMUSIM_ERR_INTERNAL;
	}
	free(newix);
	return err;
}

static int build_region(struct build *c, struct rset_region *out)
{
	const struct rcfg *g = c->g;
	size_t *stack = malloc((g->nblock + 1) * sizeof(size_t));
	int err = stack ? 0 : PMUSIM_ERR_NOMEM;
	memset(c->own, 0, g->nblock), memset(c->inreg, 0, g->nblock),
	    memset(c->inloop, 0, g->nblock);
	for (size_t k = 0; k < c->reg->nblock; k++)
		c->inreg[c->reg->block[k]] = 1;
	for (size_t l = 0; l < c->reg->nloop; l++)
		for (size_t k = 0; k < c->reg->loop[l].nblock; k++)
			c->inloop[c->reg->loop[l].block[k]] = 1;
	if (!err)
		err = mark_own(c, stack);
	c->npc = 0;
	for (size_t k = 0; !err && k < c->reg->nblock; k++) {
		size_t b = c->reg->block[k];
		if (c->own[b])
			err = add_piece(c, b, 0, rsb_own_count(c, b), c->p->block[b].counted);
	}
	for (uint32_t k = 1; !err && k <= c->nclone; k++) {
		const struct rinline_clone *cl = &c->inl->clone[c->clone_ix[k]];
		for (size_t i = 0; !err && i < cl->nblock; i++)
			err = add_piece(c, cl->block[i], k, cl->count[i], cl->count[i] > 0);
	}
	if (!err)
		arrays_sort(c->pc, c->npc, sizeof(*c->pc), piece_cmp);
	struct links *lk = calloc(c->npc + 1, sizeof(*lk));
	uint8_t *keep = calloc(c->npc + 1, 1);
	double *x = calloc(c->npc + 1, sizeof(double));
	uint32_t *st = malloc((c->npc + 1) * sizeof(uint32_t));
	if (!lk || !keep || !x || !st)
		err = PMUSIM_ERR_NOMEM;
	for (size_t i = 0; !err && i < c->npc; i++)
		err = links_of(c, (uint32_t)i, &lk[i]);
	if (!err) {
		reach(c, lk, keep, st);
		err = rsb_estimate(c, x);
	}
	for (uint32_t k = 1; !err && k <= c->nclone; k++) { /* for the next pass */
		const struct rinline_site *site = &c->inl->site[c->inl->clone[c->clone_ix[k]].site];
		uint32_t parent =
		    site->parent == RINLINE_NONE ? 0 : (uint32_t)c->clone_of[site->parent];
		uint32_t a = rsb_piece_of(c, site->block, parent);
		c->site_p[c->clone_ix[k]] = a == RSET_NONE || !keep[a] ? 0 : x[a];
	}
	if (!err)
		err = fill_region(c, out, lk, keep, x);
	for (size_t i = 0; lk && i < c->npc; i++)
		free(lk[i].to), free(lk[i].frac);
	free(lk), free(keep), free(x), free(st), free(stack);
	return err;
}

/* The in-edges of every block, and the share of each block's executions that
 * run in clones (their counts over the original's, at most 1). */
static int prepare(struct build *c)
{
	const struct rcfg *g = c->g;
	c->pred_at = calloc(g->nblock + 2, sizeof(size_t));
	c->pred = malloc((g->nedge + 1) * sizeof(size_t));
	c->inlined = calloc(g->nblock + 1, sizeof(double));
	c->site_p = malloc(((c->inl ? c->inl->nclone : 0) + 1) * sizeof(double));
	if (!c->pred_at || !c->pred || !c->inlined || !c->site_p)
		return PMUSIM_ERR_NOMEM;
	for (size_t k = 0; c->inl && k < c->inl->nclone; k++)
		c->site_p[k] = 1;
	for (size_t e = 0; e < g->nedge; e++)
		if (g->edge[e].to != RCFG_NO_BLOCK)
			c->pred_at[g->edge[e].to + 2]++;
	for (size_t b = 0; b < g->nblock; b++)
		c->pred_at[b + 2] += c->pred_at[b + 1];
	for (size_t e = 0; e < g->nedge; e++)
		if (g->edge[e].to != RCFG_NO_BLOCK)
			c->pred[c->pred_at[g->edge[e].to + 1]++] = e;
	return 0;
}

/* Each block's share of executions run by clones: a clone runs its callee's
 * blocks for the executions of its call inside the replacement, its counts
 * over the original's times p of the call's block (region_set.h). */
static void inlined_shares(struct build *c)
{
	memset(c->inlined, 0, (c->g->nblock + 1) * sizeof(double));
	for (size_t k = 0; c->inl && k < c->inl->nclone; k++) {
		const struct rinline_clone *cl = &c->inl->clone[k];
		for (size_t j = 0; j < cl->nblock; j++) {
			double o = rsb_own_count(c, cl->block[j]);
			if (o > 0)
				c->inlined[cl->block[j]] += c->site_p[k] * cl->count[j] / o;
		}
	}
	for (size_t b = 0; b < c->g->nblock; b++)
		if (c->inlined[b] > 1)
			c->inlined[b] = 1;
}

static int build_one(struct build *c, const struct rgraph *rg, struct rpatch *const *patch,
                     size_t ri, struct rset *s, char *msg, size_t msglen)
{
	size_t ncl = c->inl ? c->inl->nclone : 0;
	if (ri >= rg->nregion || !patch[ri])
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
		                   "rset: region %zu is not a kept region with patch points", ri);
	if (!patch[ri]->npoint)
		return 0;
	c->reg = &rg->region[ri], c->pt = patch[ri], c->ri = ri, c->nclone = 0;
	memset(c->clone_of, 0, (ncl + 1) * sizeof(size_t));
	number_clones(c);
	struct rset_region *o = &s->region[s->nregion++];
	o->start = c->g->block[c->reg->block[0]].start;
	int err = build_region(c, o);
	s->est_insns += o->est_insns;
	return err;
}

int rset_build(const struct rcfg *g, const struct rgraph *rg, const struct rflow *f,
               const struct rprune *p, struct rpatch *const *patch, const struct rinline *inl,
               const size_t *order, size_t norder, double total, struct rset **out, char *msg,
               size_t msglen)
{
	struct rset *s = calloc(1, sizeof(*s));
	struct build c = {.g = g, .f = f, .p = p, .inl = inl};
	size_t ncl = inl ? inl->nclone : 0;
	c.clone_of = calloc(ncl + 1, sizeof(size_t));
	c.clone_ix = calloc(ncl + 2, sizeof(size_t));
	c.own = malloc(g->nblock + 1), c.inreg = malloc(g->nblock + 1),
	c.inloop = malloc(g->nblock + 1);
	if (s)
		s->region = calloc(norder + 1, sizeof(*s->region));
	int err = s && s->region && c.clone_of && c.clone_ix && c.own && c.inreg && c.inloop
	              ? prepare(&c)
	              : PMUSIM_ERR_NOMEM;
	/* the regions' estimates depend on each other through clones: a few
	 * passes, each with the shares the last one's p gives */
	for (int pass = 0; !err && pass < RSET_PASSES; pass++) {
		inlined_shares(&c);
		if (pass)
			rset_clear(s);
		for (size_t i = 0; !err && i < norder; i++)
			err = build_one(&c, rg, patch, order[i], s, msg, msglen);
	}
	free(c.pc), free(c.clone_of), free(c.clone_ix), free(c.own), free(c.inreg), free(c.inloop);
	free(c.pred_at), free(c.pred), free(c.inlined), free(c.site_p);
	if (err) {
		if (err == PMUSIM_ERR_NOMEM)
			pmusim_fail(msg, msglen, err, "rset: out of memory");
		rset_free(s);
		return err;
	}
	s->total = total;
	s->est_share = total > 0 ? s->est_insns / total : 0;
	*out = s;
	return 0;
}
