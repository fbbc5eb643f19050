/* Pruning of hot super-regions: cold and unsampled blocks cut by count
 * relative to the region's hottest sampled block, dead ends cut by backward
 * reachability from sampled hot code, regions kept for a loop that iterates
 * often (header count over entries from outside, a lower bound) or for their
 * weight. The rules and their order: region_prune.h. */
#include "profiler/region_prune.h"

#include <math.h>
#include <stdlib.h>

#include "common/arrays.h"
#include "common/err.h"

/* A block's class after step 1's count test. */
enum { C_UNKNOWN = 0, C_HOT, C_COLD };

struct ctx {
	const struct rcfg *g;
	const struct rgraph *rg;
	const struct rflow *f;
	const struct rprune_options *o;
	size_t *region_of; /* per block */
	size_t *pred_at;   /* in-graph in-edges of block b: pred[pred_at[b] .. pred_at[b+1]] */
	size_t *pred;      /* edge indices */
	size_t *stack;     /* nblock entries, for the searches */
	uint8_t *cls;      /* per block, C_* */
	struct rprune *p;
};

void rprune_options_init(struct rprune_options *o)
{
	o->cold_fraction = RPRUNE_COLD_FRACTION_DEFAULT;
	o->min_iterations = RPRUNE_MIN_ITERATIONS_DEFAULT;
	o->loop_share = RPRUNE_LOOP_SHARE_DEFAULT;
	o->min_insns = RPRUNE_MIN_INSNS_DEFAULT;
	o->min_share = RPRUNE_MIN_SHARE_DEFAULT;
}

const char *rprune_block_why_name(int why)
{
	static const char *const names[] = {"hot",       "bridge",   "cold",
	                                    "unsampled", "dead_end", "region"};
	return why >= 0 && why <= RPRUNE_B_REGION ? names[why] : "?";
}

const char *rprune_region_why_name(int why)
{
	static const char *const names[] = {"loop",      "share",     "empty",
	                                    "few_insns", "low_share", "iterations"};
	return why >= 0 && why <= RPRUNE_R_ITERATIONS ? names[why] : "?";
}

void rprune_free(struct rprune *p)
{
	if (!p)
		return;
	free(p->block);
	for (size_t r = 0; p->region && r < p->nregion; r++)
		free(p->region[r].loop_iterations);
	free(p->region);
	free(p->ip);
	free(p);
}

struct region_cover rprune_cover(const struct rprune *p)
{
	return (struct region_cover){.ip = p->ip, .n = p->nip};
}

static int unit_range(double x)
{
	return x >= 0 && x <= 1; /* false for NaN */
}

static int check_inputs(const struct ctx *c, char *msg, size_t msglen)
{
	const struct rprune_options *o = c->o;
	if (!unit_range(o->cold_fraction) || !unit_range(o->loop_share) ||
	    !unit_range(o->min_share) || !(o->min_iterations >= 0))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
		                   "rprune: an option is out of range (fractions in [0, 1], "
		                   "min_iterations at least 0)");
	if (c->f->nblock != c->g->nblock || c->f->nedge != c->g->nedge)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
		                   "rprune: the counts are not the graph's (%zu blocks, %zu edges "
		                   "vs %zu, %zu)",
		                   c->f->nblock, c->f->nedge, c->g->nblock, c->g->nedge);
	for (size_t b = 0; b < c->g->nblock; b++) {
		const struct rcfg_block *gb = &c->g->block[b];
		if (gb->nedge > c->g->nedge || gb->first_edge > c->g->nedge - gb->nedge)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "rprune: block %zu's edges are out of range", b);
	}
	for (size_t i = 0; i < c->g->nedge; i++) {
		const struct rcfg_edge *e = &c->g->edge[i];
		if (e->from >= c->g->nblock || (e->out == RCFG_IN && e->to >= c->g->nblock))
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "rprune: edge %zu joins no block", i);
	}
	return 0;
}

/* Which region holds each block; every block in exactly one. */
static int map_regions(struct ctx *c, char *msg, size_t msglen)
{
	size_t nb = c->g->nblock;
	for (size_t b = 0; b < nb; b++)
		c->region_of[b] = RGRAPH_NONE;
	for (size_t r = 0; r < c->rg->nregion; r++) {
		const struct rgraph_region *reg = &c->rg->region[r];
		for (size_t k = 0; k < reg->nblock; k++) {
			size_t b = reg->block[k];
			if (b >= nb || c->region_of[b] != RGRAPH_NONE)
				return pmusim_fail(
				    msg, msglen, PMUSIM_ERR_ARG,
				    "rprune: region %zu's block %zu is not the graph's "
				    "or in two regions",
				    r, b);
			c->region_of[b] = r;
		}
	}
	for (size_t b = 0; b < nb; b++)
		if (c->region_of[b] == RGRAPH_NONE)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "rprune: block %zu is in no region", b);
	return 0;
}

/* In-graph in-edges per block, as a compressed table: edges by target. */
static void build_preds(struct ctx *c)
{
	const struct rcfg *g = c->g;
	for (size_t b = 0; b <= g->nblock; b++)
		c->pred_at[b] = 0;
	for (size_t i = 0; i < g->nedge; i++)
		if (g->edge[i].out == RCFG_IN)
			c->pred_at[g->edge[i].to + 1]++;
	for (size_t b = 0; b < g->nblock; b++)
		c->pred_at[b + 1] += c->pred_at[b];
	/* stack serves as each block's fill cursor; edges go in in edge order. */
	for (size_t b = 0; b < g->nblock; b++)
		c->stack[b] = c->pred_at[b];
	for (size_t i = 0; i < g->nedge; i++)
		if (g->edge[i].out == RCFG_IN)
			c->pred[c->stack[g->edge[i].to]++] = i;
}

static int is_anchor(const struct rflow_block *fb)
{
	return fb->source == RFLOW_B_SAMPLES || fb->source == RFLOW_B_CHAIN;
}

/* Each block's count, or the edge bound where rflow has none. */
static void block_counts(struct ctx *c)
{
	const struct rcfg *g = c->g;
	for (size_t b = 0; b < g->nblock; b++) {
		struct rprune_block *pb = &c->p->block[b];
		const struct rflow_block *fb = &c->f->block[b];
		if (fb->source != RFLOW_B_NONE) {
			pb->count = fb->count;
			pb->counted = 1;
			continue;
		}
		double in = 0, out = 0;
		for (size_t k = c->pred_at[b]; k < c->pred_at[b + 1]; k++)
			if (c->f->edge[c->pred[k]].source != RFLOW_UNDECIDED)
				in += c->f->edge[c->pred[k]].count;
		const struct rcfg_block *gb = &g->block[b];
		for (size_t i = gb->first_edge; i < gb->first_edge + gb->nedge; i++)
			if (c->f->edge[i].source != RFLOW_UNDECIDED)
				out += c->f->edge[i].count;
		double lb = in > out ? in : out;
		if (lb > 0) {
			pb->count = lb;
			pb->counted = pb->bound = 1;
		}
	}
}

/* Step 1's count test, with each region's hottest anchor count. */
static void classify(struct ctx *c)
{
	for (size_t b = 0; b < c->g->nblock; b++)
		if (is_anchor(&c->f->block[b])) {
			struct rprune_region *pr = &c->p->region[c->region_of[b]];
			if (c->f->block[b].count > pr->hottest)
				pr->hottest = c->f->block[b].count;
		}
	for (size_t b = 0; b < c->g->nblock; b++) {
		const struct rprune_block *pb = &c->p->block[b];
		double hottest = c->p->region[c->region_of[b]].hottest;
		int hot = pb->counted && hottest > 0 && pb->count > 0 &&
		          pb->count >= c->o->cold_fraction * hottest;
		if (hot)
			c->cls[b] = C_HOT;
		else if (pb->counted && !pb->bound)
			c->cls[b] = C_COLD;
		else
			c->cls[b] = C_UNKNOWN;
	}
}

/* Marks in seen[] every block reached from the blocks already marked, along
 * in-graph edges (backward: against them), entering only blocks with
 * allow[b] set. */
static void reach(const struct ctx *c, const uint8_t *allow, uint8_t *seen, int backward)
{
	size_t n = 0;
	for (size_t b = 0; b < c->g->nblock; b++)
		if (seen[b])
			c->stack[n++] = b;
	while (n > 0) {
		size_t b = c->stack[--n];
		size_t lo, hi;
		if (backward)
			lo = c->pred_at[b], hi = c->pred_at[b + 1];
		else
			lo = c->g->block[b].first_edge, hi = lo + c->g->block[b].nedge;
		for (size_t k = lo; k < hi; k++) {
			const struct rcfg_edge *e = &c->g->edge[backward ? c->pred[k] : k];
			if (e->out != RCFG_IN)
				continue;
			size_t m = backward ? e->from : e->to;
			if (allow[m] && !seen[m]) {
				seen[m] = 1;
				c->stack[n++] = m;
			}
		}
	}
}

/* Steps 1 and 2: every block's kept and why, before the regions are judged. */
static int prune_blocks(struct ctx *c)
{
	size_t nb = c->g->nblock;
	uint8_t *buf = calloc(3 * nb + 1, 1);
	if (!buf)
		return PMUSIM_ERR_NOMEM;
	uint8_t *fwd = buf, *bwd = buf + nb, *unknown = buf + 2 * nb;
	for (size_t b = 0; b < nb; b++) {
		fwd[b] = bwd[b] = c->cls[b] == C_HOT;
		unknown[b] = c->cls[b] == C_UNKNOWN;
	}
	reach(c, unknown, fwd, 0);
	reach(c, unknown, bwd, 1);
	for (size_t b = 0; b < nb; b++) {
		struct rprune_block *pb = &c->p->block[b];
		if (c->cls[b] == C_HOT)
			pb->why = RPRUNE_B_HOT;
		else if (c->cls[b] == C_COLD)
			pb->why = RPRUNE_B_COLD;
		else
			pb->why = fwd[b] && bwd[b] ? RPRUNE_B_BRIDGE : RPRUNE_B_UNSAMPLED;
		pb->kept = pb->why == RPRUNE_B_HOT || pb->why == RPRUNE_B_BRIDGE;
	}
	/* Step 2: what reaches a hot anchor through kept blocks stays. */
	uint8_t *kept = fwd, *live = bwd;
	for (size_t b = 0; b < nb; b++) {
		kept[b] = c->p->block[b].kept;
		live[b] = c->cls[b] == C_HOT && is_anchor(&c->f->block[b]);
	}
	reach(c, kept, live, 1);
	for (size_t b = 0; b < nb; b++)
		if (kept[b] && !live[b]) {
			c->p->block[b].kept = 0;
			c->p->block[b].why = RPRUNE_B_DEAD_END;
		}
	free(buf);
	return 0;
}

static int in_sorted(const size_t *a, size_t n, size_t x)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (a[mid] == x)
			return 1;
		if (a[mid] < x)
			lo = mid + 1;
		else
			hi = mid;
	}
	return 0;
}

/* A loop's iterations per entry, the lower bound region_prune.h describes. */
static double loop_iterations(const struct ctx *c, const struct rgraph_loop *l)
{
	const struct rflow_block *h = &c->f->block[l->header];
	if (h->source == RFLOW_B_NONE)
		return 0;
	double entries = 0;
	for (size_t k = 0; k < l->nentry; k++) {
		size_t en = l->entry[k];
		if (c->f->block[en].source == RFLOW_B_NONE)
			return 0;
		double inner = 0;
		for (size_t j = c->pred_at[en]; j < c->pred_at[en + 1]; j++) {
			size_t e = c->pred[j];
			if (c->f->edge[e].source != RFLOW_UNDECIDED &&
			    in_sorted(l->block, l->nblock, c->g->edge[e].from))
				inner += c->f->edge[e].count;
		}
		entries += c->f->block[en].count - inner;
	}
	if (!(entries > 0))
		return INFINITY;
	return h->count / entries;
}

/* Rules on regions, from their blocks kept so far. */
static void judge_region(struct ctx *c, size_t r, double total)
{
	const struct rgraph_region *reg = &c->rg->region[r];
	struct rprune_region *pr = &c->p->region[r];
	pr->loop = RGRAPH_NONE;
	for (size_t k = 0; k < reg->nblock; k++) {
		size_t b = reg->block[k];
		if (!c->p->block[b].kept)
			continue;
		pr->nkept++;
		pr->ninsns += c->g->block[b].ninsns;
		pr->weight += c->g->block[b].weight;
	}
	pr->share = total > 0 ? pr->weight / total : 0;
	for (size_t i = 0; i < reg->nloop; i++) {
		const struct rgraph_loop *l = &reg->loop[i];
		double it = loop_iterations(c, l);
		pr->loop_iterations[i] = it;
		if (!c->p->block[l->header].kept)
			continue;
		if (pr->loop == RGRAPH_NONE || it > pr->iterations)
			pr->iterations = it, pr->loop = i;
	}
	if (pr->nkept == 0)
		pr->why = RPRUNE_R_EMPTY;
	else if (pr->ninsns < c->o->min_insns)
		pr->why = RPRUNE_R_FEW_INSNS;
	else if (pr->share < c->o->min_share)
		pr->why = RPRUNE_R_LOW_SHARE;
	else if (pr->loop != RGRAPH_NONE && pr->iterations >= c->o->min_iterations)
		pr->why = RPRUNE_R_LOOP;
	else if (pr->share >= c->o->loop_share)
		pr->why = RPRUNE_R_SHARE;
	else
		pr->why = RPRUNE_R_ITERATIONS;
	pr->kept = pr->why == RPRUNE_R_LOOP || pr->why == RPRUNE_R_SHARE;
	if (pr->kept)
		return;
	for (size_t k = 0; k < reg->nblock; k++) {
		struct rprune_block *pb = &c->p->block[reg->block[k]];
		if (pb->kept)
			pb->kept = 0, pb->why = RPRUNE_B_REGION;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

/* The kept instructions' addresses, sorted, each once, and the kept weight. */
static int collect(struct ctx *c, double total)
{
	struct rprune *p = c->p;
	size_t n = 0;
	for (size_t b = 0; b < c->g->nblock; b++)
		if (p->block[b].kept)
			n += c->g->block[b].ninsns;
	p->ip = malloc((n ? n : 1) * sizeof(*p->ip));
	if (!p->ip)
		return PMUSIM_ERR_NOMEM;
	n = 0;
	for (size_t b = 0; b < c->g->nblock; b++) {
		const struct rcfg_block *gb = &c->g->block[b];
		if (!p->block[b].kept)
			continue;
		p->weight += gb->weight;
		for (uint32_t i = 0; i < gb->ninsns; i++)
			p->ip[n++] = gb->start + gb->off[i];
	}
	arrays_sort(p->ip, n, sizeof(*p->ip), cmp_u64);
	size_t m = 0;
	for (size_t i = 0; i < n; i++)
		if (m == 0 || p->ip[i] != p->ip[m - 1])
			p->ip[m++] = p->ip[i];
	p->nip = m;
	p->share = total > 0 ? p->weight / total : 0;
	for (size_t r = 0; r < p->nregion; r++)
		p->nkept_region += p->region[r].kept;
	return 0;
}

static int run(struct ctx *c, double total, char *msg, size_t msglen)
{
	size_t nb = c->g->nblock;
	c->region_of = malloc((nb + 1) * sizeof(size_t));
	c->pred_at = calloc(nb + 2, sizeof(size_t));
	c->pred = malloc((c->g->nedge + 1) * sizeof(size_t));
	c->stack = malloc((nb + 1) * sizeof(size_t));
	c->cls = calloc(nb + 1, 1);
	c->p->block = calloc(nb + 1, sizeof(*c->p->block));
	c->p->region = calloc(c->rg->nregion + 1, sizeof(*c->p->region));
	if (!c->region_of || !c->pred_at || !c->pred || !c->stack || !c->cls || !c->p->block ||
	    !c->p->region)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rprune: out of memory");
	c->p->nblock = nb;
	c->p->nregion = c->rg->nregion;
	for (size_t r = 0; r < c->rg->nregion; r++)
		if (c->rg->region[r].nloop &&
		    !(c->p->region[r].loop_iterations =
		          malloc(c->rg->region[r].nloop * sizeof(double))))
			return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rprune: out of memory");
	int err = map_regions(c, msg, msglen);
	if (err)
		return err;
	build_preds(c);
	block_counts(c);
	classify(c);
	if (prune_blocks(c))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rprune: out of memory");
	for (size_t r = 0; r < c->rg->nregion; r++)
		judge_region(c, r, total);
	if (collect(c, total))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rprune: out of memory");
	return 0;
}

int rprune_select(const struct rcfg *g, const struct rgraph *rg, const struct rflow *f,
                  double total, const struct rprune_options *opt, struct rprune **out, char *msg,
                  size_t msglen)
{
	struct rprune_options def;
	if (!opt) {
		rprune_options_init(&def);
		opt = &def;
	}
	*out = NULL;
	struct ctx c = {.g = g, .rg = rg, .f = f, .o = opt};
	int err = check_inputs(&c, msg, msglen);
	if (err)
		return err;
	c.p = calloc(1, sizeof(*c.p));
	if (!c.p)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "rprune: out of memory");
	err = run(&c, total, msg, msglen);
	free(c.region_of);
	free(c.pred_at);
	free(c.pred);
	free(c.stack);
	free(c.cls);
	if (err) {
		rprune_free(c.p);
		return err;
	}
	*out = c.p;
	return 0;
}
