/* The samples' estimate of what a region's replacement code captures: per
 * copied block the share of its executions entered inside, one linear system
 * per region (region_set.h's estimate), solved by Gauss-Jordan elimination. */
#include <math.h>
#include <stdlib.h>

#include "common/err.h"
#include "profiler/region_set_internal.h"

/* The shares of block b's executions along each of its out-edges: the flow's
 * count where decided or observed, the rest shared among the undecided. */
double rsb_edge_frac(const struct build *c, size_t b, size_t e)
{
	const struct rcfg_block *gb = &c->g->block[b];
	double cnt = rsb_own_count(c, b), known = 0;
	size_t undecided = 0;
	if (!c->p->block[b].counted) /* no count to share: even shares */
		return gb->nedge ? 1.0 / (double)gb->nedge : 0;
	if (!(cnt > 0))
		return 0;
	for (size_t i = gb->first_edge; i < gb->first_edge + gb->nedge; i++) {
		if (c->f->edge[i].source == RFLOW_UNDECIDED)
			undecided++;
		else
			known += c->f->edge[i].count > 0 ? c->f->edge[i].count : 0;
	}
	double rest = cnt - known > 0 ? (cnt - known) / (double)undecided : 0;
	double v = c->f->edge[e].source == RFLOW_UNDECIDED ? rest : c->f->edge[e].count;
	/* estimates may send more out than the count: shares of the larger sum, so
	 * that no block passes on more than it gets */
	double sum = known > cnt ? known : cnt;
	return v > 0 ? v / sum : 0;
}

/* The estimated executions of edge e (out of block b): the flow's count
 * where decided or observed, else b's count shared as edge_frac shares it,
 * 0 when b has no count. */
static double edge_count(const struct build *c, size_t b, size_t e)
{
	if (c->f->edge[e].source != RFLOW_UNDECIDED)
		return c->f->edge[e].count > 0 ? c->f->edge[e].count : 0;
	return c->p->block[b].counted ? rsb_edge_frac(c, b, e) * rsb_own_count(c, b) : 0;
}

/* Row i of the system for p (region_set.h's estimate as fractions): own piece
 * B, p(B) = sum over B's in-edges in the graph from pieces of own code that
 * link to it, of p(A) x count(e), over the sum of count(e) of all its
 * in-edges; a call-return edge counts as linked when the call is inlined (its
 * clone returns inside). A clone's piece takes its call's piece's p. A piece
 * holding a point passes p = 1 on. */
struct system {
	double *m; /* nv rows of nv + 1 */
	size_t nv, w;
	uint32_t *var; /* per piece: its unknown, RSET_NONE when p is 1 */
};

static void add_term(struct system *sy, const struct build *c, uint32_t row, uint32_t a, double wgt)
{
	if (sy->var[a] == RSET_NONE || rsb_point_insn(c, &c->pc[a]))
		sy->m[row * sy->w + sy->nv] += wgt; /* p_out(A) = 1 */
	else
		sy->m[row * sy->w + sy->var[a]] -= wgt;
}

/* The scaled count of a clone's entry block. */
static double clone_entry_count(const struct rinline_clone *cl)
{
	for (size_t j = 0; j < cl->nblock; j++)
		if (cl->block[j] == cl->entry)
			return cl->count[j];
	return 0;
}

/* The ratio of clone k's counts to the original's (1 for own code). */
static double ratio_of(const struct build *c, uint32_t k)
{
	if (!k)
		return 1;
	const struct rinline_clone *cl = &c->inl->clone[c->clone_ix[k]];
	double e = rsb_own_count(c, cl->entry);
	return e > 0 ? clone_entry_count(cl) / e : 0;
}

static void piece_row(struct system *sy, const struct build *c, uint32_t i)
{
	uint32_t row = sy->var[i], k = c->pc[i].clone;
	size_t bg = c->pc[i].g;
	double total = 0, r = ratio_of(c, k);
	for (size_t j = c->pred_at[bg]; j < c->pred_at[bg + 1]; j++) {
		size_t e = c->pred[j], ag = c->g->edge[e].from;
		double wgt = edge_count(c, ag, e) * r;
		total += wgt;
		uint32_t a = rsb_piece_of(c, ag, k);
		if (a == RSET_NONE || wgt == 0)
			continue;
		if (c->g->edge[e].kind == RCFG_CALL_RETURN && !rsb_inlined_at(c, ag, k))
			continue;
		add_term(sy, c, row, a, wgt);
	}
	if (k) {
		const struct rinline_clone *cl = &c->inl->clone[c->clone_ix[k]];
		if (cl->entry == bg) { /* the call into the clone */
			const struct rinline_site *st = &c->inl->site[cl->site];
			uint32_t parent =
			    st->parent == RINLINE_NONE ? 0 : (uint32_t)c->clone_of[st->parent];
			uint32_t a = rsb_piece_of(c, st->block, parent);
			double wgt = a == RSET_NONE ? 0 : c->pc[a].count;
			total += wgt;
			if (wgt > 0)
				add_term(sy, c, row, a, wgt);
		}
	}
	if (total > 0)
		for (size_t j = 0; j < sy->w; j++)
			sy->m[row * sy->w + j] /= total;
	sy->m[row * sy->w + row] += 1;
}

/* Gauss-Jordan elimination with partial pivoting; a column without a pivot
 * (an unknown the equations leave free) keeps 0. */
static void solve_dense(struct system *sy)
{
	size_t nv = sy->nv, w = sy->w;
	double *m = sy->m;
	for (size_t col = 0; col < nv; col++) {
		size_t piv = col;
		for (size_t r = col + 1; r < nv; r++)
			if (fabs(m[r * w + col]) > fabs(m[piv * w + col]))
				piv = r;
		if (piv != col)
			for (size_t j = 0; j < w; j++) {
				double t = m[col * w + j];
				m[col * w + j] = m[piv * w + j], m[piv * w + j] = t;
			}
		double d = m[col * w + col];
		if (fabs(d) < 1e-12)
			continue;
		for (size_t r = 0; r < nv; r++) {
			if (r == col || m[r * w + col] == 0)
				continue;
			double q = m[r * w + col] / d;
			for (size_t j = col; j < w; j++)
				m[r * w + j] -= q * m[col * w + j];
		}
	}
}

/* p per piece: the fraction of its executions (up to its point, if it holds
 * one) that run inside. */
int rsb_estimate(const struct build *c, double *p)
{
	size_t n = c->npc;
	struct system sy = {0};
	sy.var = malloc((n + 1) * sizeof(uint32_t));
	if (!sy.var)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		uint32_t pin = rsb_point_insn(c, &c->pc[i]);
		sy.var[i] = pin == 1 ? RSET_NONE : (uint32_t)sy.nv++;
		p[i] = pin == 1;
	}
	sy.w = sy.nv + 1;
	if (sy.nv > RSET_DENSE_MAX) { /* region_set.h: p = 0 off the points, a lower bound */
		free(sy.var);
		return 0;
	}
	if (!(sy.m = calloc(sy.nv * sy.w + 1, sizeof(double)))) {
		free(sy.var);
		return PMUSIM_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		if (sy.var[i] == RSET_NONE)
			continue;
		piece_row(&sy, c, (uint32_t)i);
	}
	solve_dense(&sy);
	for (size_t i = 0; i < n; i++) {
		if (sy.var[i] == RSET_NONE)
			continue;
		double d = sy.m[sy.var[i] * sy.w + sy.var[i]];
		double v = fabs(d) < 1e-12 ? 0 : sy.m[sy.var[i] * sy.w + sy.nv] / d;
		p[i] = !(v > 0) ? 0 : v > 1 ? 1 : v;
	}
	free(sy.m);
	free(sy.var);
	return 0;
}
