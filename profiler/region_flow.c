/* Count inference on a hot control-flow graph: block counts from instruction
 * weights pooled along fall-through chains, then edge counts by flow
 * conservation (Kirchhoff's law at every block), solved by propagating
 * equations left with one unknown. The model and its limits: region_flow.h. */
#include "profiler/region_flow.h"

#include <assert.h>
#include <stdlib.h>

#include "common/err.h"

void rflow_options_init(struct rflow_options *o)
{
	o->entry = RFLOW_ENTRY_OPEN;
}

const char *rflow_block_source_name(int source)
{
	static const char *const names[] = {"none", "samples", "chain", "flow"};
	return source >= 0 && source <= RFLOW_B_FLOW ? names[source] : "?";
}

const char *rflow_edge_source_name(int source)
{
	static const char *const names[] = {"undecided", "observed", "decided"};
	return source >= 0 && source <= RFLOW_DECIDED ? names[source] : "?";
}

void rflow_free(struct rflow *f)
{
	if (!f)
		return;
	free(f->block);
	free(f->edge);
	free(f);
}

/* Terminators after which control may go where no edge of the graph says. */
static int has_exit(const struct rcfg_block *b)
{
	return b->kind == BK_RET || b->kind == BK_TRAP || b->kind == BK_JMP_IND;
}

/* The working state: the graph's in-edges by target, the links, and per
 * equation (2b: out(b), 2b+1: in(b)) its unknowns left and the sum of its
 * edges known. */
struct solver {
	const struct rcfg *g;
	struct rflow *f;
	size_t *in_start; /* in-edges of b: in_edge[in_start[b] .. in_start[b+1]] */
	size_t *in_edge;
	size_t *link_out; /* the link out of b, SIZE_MAX when none */
	uint8_t *link_in; /* 1 when b is a link's target */
	uint8_t *used;    /* per equation: it holds no free unknown */
	size_t *nunk;     /* per equation */
	double *ksum;     /* per equation */
	size_t *work;     /* equations to look at; each pushed at most twice per unknown */
	size_t nwork, work_cap;
};

static int check_graph(const struct rcfg *g, char *msg, size_t msglen)
{
	for (size_t i = 0; i < g->nblock; i++) {
		const struct rcfg_block *b = &g->block[i];
		if (!b->ninsns)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "block %zu has no instruction", i);
		if (b->first_edge > g->nedge || b->nedge > g->nedge - b->first_edge)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "block %zu: edges past the graph's", i);
		for (size_t k = 0; k < b->nedge; k++)
			if (g->edge[b->first_edge + k].from != i)
				return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
				                   "block %zu: edge %zu is not from it", i,
				                   b->first_edge + k);
	}
	for (size_t i = 0; i < g->nedge; i++) {
		const struct rcfg_edge *e = &g->edge[i];
		if (e->from >= g->nblock || (e->to != RCFG_NO_BLOCK && e->to >= g->nblock))
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "edge %zu: no such block",
			                   i);
	}
	return 0;
}

static int solver_init(struct solver *s, const struct rcfg *g, struct rflow *f)
{
	size_t nb = g->nblock, ne = g->nedge;
	*s = (struct solver){.g = g, .f = f};
	s->in_start = calloc(nb + 1, sizeof(*s->in_start));
	s->in_edge = calloc(ne + 1, sizeof(*s->in_edge));
	s->link_out = calloc(nb + 1, sizeof(*s->link_out));
	s->link_in = calloc(nb + 1, 1);
	s->used = calloc(2 * nb + 1, 1);
	s->nunk = calloc(2 * nb + 1, sizeof(*s->nunk));
	s->ksum = calloc(2 * nb + 1, sizeof(*s->ksum));
	s->work_cap = 4 * (ne + nb) + 1;
	s->work = calloc(s->work_cap, sizeof(*s->work));
	if (!s->in_start || !s->in_edge || !s->link_out || !s->link_in || !s->used || !s->nunk ||
	    !s->ksum || !s->work)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < ne; i++)
		if (g->edge[i].to != RCFG_NO_BLOCK)
			s->in_start[g->edge[i].to + 1]++;
	for (size_t b = 0; b < nb; b++)
		s->in_start[b + 1] += s->in_start[b];
	size_t *fill = s->nunk; /* borrowed as a cursor; zeroed again below */
	for (size_t i = 0; i < ne; i++) {
		size_t to = g->edge[i].to;
		if (to != RCFG_NO_BLOCK)
			s->in_edge[s->in_start[to] + fill[to]++] = i;
	}
	for (size_t b = 0; b < nb; b++)
		fill[b] = 0;
	return 0;
}

static void solver_fini(struct solver *s)
{
	free(s->in_start);
	free(s->in_edge);
	free(s->link_out);
	free(s->link_in);
	free(s->used);
	free(s->nunk);
	free(s->ksum);
	free(s->work);
}

static void find_links(struct solver *s)
{
	const struct rcfg *g = s->g;
	for (size_t b = 0; b < g->nblock; b++) {
		const struct rcfg_block *blk = &g->block[b];
		s->link_out[b] = SIZE_MAX;
		if (blk->nedge != 1 || has_exit(blk))
			continue;
		const struct rcfg_edge *e = &g->edge[blk->first_edge];
		if (e->kind != RCFG_FALL || e->to == RCFG_NO_BLOCK || e->to == b ||
		    s->in_start[e->to + 1] - s->in_start[e->to] != 1)
			continue;
		s->link_out[b] = blk->first_edge;
		s->link_in[e->to] = 1;
	}
}

/* Pools the chain starting at head; in a ring, head is any of its blocks and
 * the walk stops when it comes back. */
static void pool_chain(struct solver *s, size_t head)
{
	const struct rcfg *g = s->g;
	double w = 0, n = 0;
	size_t len = 0, b = head;
	do {
		w += g->block[b].weight;
		n += g->block[b].ninsns;
		len++;
		s->f->block[b].chain = head;
		b = s->link_out[b] == SIZE_MAX ? SIZE_MAX : g->edge[s->link_out[b]].to;
	} while (b != SIZE_MAX && b != head);
	uint8_t source = w == 0 ? RFLOW_B_NONE : len > 1 ? RFLOW_B_CHAIN : RFLOW_B_SAMPLES;
	b = head;
	do {
		s->f->block[b].count = w == 0 ? 0 : w / n;
		s->f->block[b].source = source;
		b = s->link_out[b] == SIZE_MAX ? SIZE_MAX : g->edge[s->link_out[b]].to;
	} while (b != SIZE_MAX && b != head);
}

static void block_counts(struct solver *s)
{
	size_t nb = s->g->nblock;
	for (size_t b = 0; b < nb; b++)
		s->f->block[b].chain = SIZE_MAX;
	for (size_t b = 0; b < nb; b++)
		if (!s->link_in[b])
			pool_chain(s, b);
	/* what is left lies on rings of links; lowest index first names each */
	for (size_t b = 0; b < nb; b++)
		if (s->f->block[b].chain == SIZE_MAX)
			pool_chain(s, b);
}

static void push(struct solver *s, size_t eq)
{
	if (s->used[eq] && s->nunk[eq] == 1) {
		assert(s->nwork < s->work_cap);
		s->work[s->nwork++] = eq;
	}
}

/* Edge i is now known: the equations it is in lose an unknown. */
static void edge_known(struct solver *s, size_t i)
{
	const struct rcfg_edge *e = &s->g->edge[i];
	double v = s->f->edge[i].count;
	s->nunk[2 * e->from]--;
	s->ksum[2 * e->from] += v;
	push(s, 2 * e->from);
	if (e->to != RCFG_NO_BLOCK) {
		s->nunk[2 * e->to + 1]--;
		s->ksum[2 * e->to + 1] += v;
		push(s, 2 * e->to + 1);
	}
}

static void count_known(struct solver *s, size_t b)
{
	s->nunk[2 * b]--;
	s->nunk[2 * b + 1]--;
	push(s, 2 * b);
	push(s, 2 * b + 1);
}

static void set_up_equations(struct solver *s, int entry_model)
{
	const struct rcfg *g = s->g;
	for (size_t b = 0; b < g->nblock; b++) {
		size_t nin = s->in_start[b + 1] - s->in_start[b];
		int entry = entry_model == RFLOW_ENTRY_OPEN ? !s->link_in[b] : nin == 0;
		s->used[2 * b] = !has_exit(&g->block[b]);
		s->used[2 * b + 1] = !entry;
		/* every unknown first, then each known one removes itself */
		size_t c_unk = s->f->block[b].source == RFLOW_B_NONE;
		s->nunk[2 * b] = g->block[b].nedge + c_unk;
		s->nunk[2 * b + 1] = nin + c_unk;
	}
	for (size_t i = 0; i < g->nedge; i++)
		if (g->edge[i].observed) {
			s->f->edge[i].count = g->edge[i].weight;
			s->f->edge[i].source = RFLOW_OBSERVED;
			edge_known(s, i);
		}
	for (size_t eq = 0; eq < 2 * g->nblock; eq++)
		if (s->used[eq] && s->nunk[eq] == 1)
			push(s, eq);
}

/* Equation eq has one unknown left: finds it and decides it. */
static void solve_one(struct solver *s, size_t eq)
{
	const struct rcfg *g = s->g;
	size_t b = eq / 2;
	struct rflow_block *fb = &s->f->block[b];
	if (fb->source == RFLOW_B_NONE) {
		fb->count = s->ksum[eq];
		fb->source = RFLOW_B_FLOW;
		s->f->nnegative += fb->count < 0;
		count_known(s, b);
		return;
	}
	size_t n = eq % 2 ? s->in_start[b + 1] - s->in_start[b] : g->block[b].nedge;
	for (size_t k = 0; k < n; k++) {
		size_t i = eq % 2 ? s->in_edge[s->in_start[b] + k] : g->block[b].first_edge + k;
		struct rflow_edge *fe = &s->f->edge[i];
		if (fe->source != RFLOW_UNDECIDED)
			continue;
		fe->count = fb->count - s->ksum[eq];
		fe->source = RFLOW_DECIDED;
		s->f->nnegative += fe->count < 0;
		edge_known(s, i);
		return;
	}
	assert(!"an equation with one unknown has none");
}

static void propagate(struct solver *s)
{
	while (s->nwork) {
		size_t eq = s->work[--s->nwork];
		/* pushed when it had one unknown; another equation may have decided it since */
		if (s->nunk[eq] == 1)
			solve_one(s, eq);
	}
}

int rflow_infer(const struct rcfg *g, const struct rflow_options *opt, struct rflow **out,
                char *msg, size_t msglen)
{
	*out = NULL;
	struct rflow_options def;
	if (!opt) {
		rflow_options_init(&def);
		opt = &def;
	}
	if (opt->entry != RFLOW_ENTRY_OPEN && opt->entry != RFLOW_ENTRY_CLOSED)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "unknown entry model %d",
		                   opt->entry);
	int err = check_graph(g, msg, msglen);
	if (err)
		return err;
	struct rflow *f = calloc(1, sizeof(*f));
	if (f) {
		f->block = calloc(g->nblock + 1, sizeof(*f->block));
		f->edge = calloc(g->nedge + 1, sizeof(*f->edge));
	}
	struct solver s;
	if (!f || !f->block || !f->edge || solver_init(&s, g, f) != 0) {
		if (f && f->block && f->edge)
			solver_fini(&s);
		rflow_free(f);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "out of memory for %zu blocks",
		                   g->nblock);
	}
	f->nblock = g->nblock;
	f->nedge = g->nedge;
	find_links(&s);
	block_counts(&s);
	set_up_equations(&s, opt->entry);
	propagate(&s);
	solver_fini(&s);
	for (size_t i = 0; i < g->nedge; i++) {
		f->nobserved += f->edge[i].source == RFLOW_OBSERVED;
		f->ndecided += f->edge[i].source == RFLOW_DECIDED;
		f->nundecided += f->edge[i].source == RFLOW_UNDECIDED;
	}
	*out = f;
	return 0;
}
