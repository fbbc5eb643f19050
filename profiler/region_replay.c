/* The exact replay of a run against a region set: per thread a small state
 * (outside, or inside a region at a block and instruction), advanced
 * instruction by instruction as region_replay.h says. Patch points are found
 * by a sorted table looked up once per code run and cached by the run's id. */
#include "profiler/region_replay.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/json.h"

#define NO_REGION SIZE_MAX

struct thread {
	uint32_t tid;
	size_t region; /* NO_REGION: outside */
	uint32_t block;
	uint32_t insn; /* the next instruction expected in block */
	/* a call not inlined the replacement left for: its exit edge, counted at
	 * the callee's first instruction (call_region NO_REGION: none) */
	size_t call_region;
	uint64_t call_at;
	uint8_t call_kind;
};

/* A patch point of the whole set, for the look-up by address. */
struct gpoint {
	uint64_t addr;
	size_t region;
	uint32_t point;
};

/* What a code run holds: its first patch point's index in rreplay.gp, or
 * RUN_NO_POINT; valid for the run that starts at start. */
#define RUN_NO_POINT UINT32_MAX
struct run_cache {
	uint64_t start;
	uint32_t first; /* index in gp of the lowest point at or after start */
	uint8_t known;
	uint8_t has;
};

/* Exits by (from, to, kind): an open-addressing table per replay. */
struct exit_slot {
	uint64_t from, to;
	size_t region;
	uint64_t count;
	uint8_t kind, br, used;
};

struct rreplay {
	const struct rset *s;
	struct rreplay_region *reg;
	struct gpoint *gp;
	size_t ngp;
	struct run_cache *runs;
	uint32_t nruns;
	struct thread *th;
	size_t nth, capth;
	/* per region, per block: the loops it heads (index lists), and loop membership */
	uint32_t **heads;  /* heads[r][b]: 1 + index of the loop b heads, 0 none */
	uint8_t ***member; /* member[r][l][b]: block b is in loop l */
	struct exit_slot *ex;
	size_t excap, exn;
	uint64_t total, inside;
	int nomem;
};

static int gpoint_cmp(const void *a, const void *b)
{
	const struct gpoint *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int alloc_region(struct rreplay *r, size_t i)
{
	const struct rset_region *sr = &r->s->region[i];
	struct rreplay_region *o = &r->reg[i];
	o->point_entries = calloc(sr->npoint + 1, sizeof(uint64_t));
	o->block_execs = calloc(sr->nblock + 1, sizeof(uint64_t));
	o->header_execs = calloc(sr->nloop + 1, sizeof(uint64_t));
	o->loop_entries = calloc(sr->nloop + 1, sizeof(uint64_t));
	r->heads[i] = calloc(sr->nblock + 1, sizeof(uint32_t));
	r->member[i] = calloc(sr->nloop + 1, sizeof(uint8_t *));
	if (!o->point_entries || !o->block_execs || !o->header_execs || !o->loop_entries ||
	    !r->heads[i] || !r->member[i])
		return PMUSIM_ERR_NOMEM;
	for (uint32_t l = 0; l < sr->nloop; l++) {
		const struct rset_loop *lp = &sr->loop[l];
		if (!(r->member[i][l] = calloc(sr->nblock + 1, 1)))
			return PMUSIM_ERR_NOMEM;
		for (uint32_t k = 0; k < lp->nblock; k++)
			if (lp->block[k] < sr->nblock)
				r->member[i][l][lp->block[k]] = 1;
		if (lp->header < sr->nblock)
			r->heads[i][lp->header] = l + 1;
	}
	for (uint32_t k = 0; k < sr->npoint; k++)
		r->gp[r->ngp++] = (struct gpoint){sr->point[k].addr, i, k};
	return 0;
}

int rreplay_new(const struct rset *s, struct rreplay **out)
{
	struct rreplay *r = calloc(1, sizeof(*r));
	size_t np = 0;
	for (size_t i = 0; i < s->nregion; i++)
		np += s->region[i].npoint;
	if (!r)
		return PMUSIM_ERR_NOMEM;
	r->s = s;
	r->reg = calloc(s->nregion + 1, sizeof(*r->reg));
	r->heads = calloc(s->nregion + 1, sizeof(*r->heads));
	r->member = calloc(s->nregion + 1, sizeof(*r->member));
	r->gp = calloc(np + 1, sizeof(*r->gp));
	if (!r->reg || !r->heads || !r->member || !r->gp) {
		rreplay_free(r);
		return PMUSIM_ERR_NOMEM;
	}
	for (size_t i = 0; i < s->nregion; i++)
		if (alloc_region(r, i) < 0) {
			rreplay_free(r);
			return PMUSIM_ERR_NOMEM;
		}
	arrays_sort(r->gp, r->ngp, sizeof(*r->gp), gpoint_cmp);
	*out = r;
	return 0;
}

void rreplay_free(struct rreplay *r)
{
	if (!r)
		return;
	for (size_t i = 0; r->reg && i < r->s->nregion; i++) {
		free(r->reg[i].point_entries);
		free(r->reg[i].block_execs);
		free(r->reg[i].header_execs);
		free(r->reg[i].loop_entries);
		free(r->reg[i].exit);
		if (r->heads)
			free(r->heads[i]);
		for (uint32_t l = 0; r->member && r->member[i] && l < r->s->region[i].nloop; l++)
			free(r->member[i][l]);
		if (r->member)
			free(r->member[i]);
	}
	free(r->reg);
	free(r->heads);
	free(r->member);
	free(r->gp);
	free(r->runs);
	free(r->th);
	free(r->ex);
	free(r);
}

/* The index in gp of the first point at or above addr (ngp when none). */
static size_t gp_lower(const struct rreplay *r, uint64_t addr)
{
	size_t lo = 0, hi = r->ngp;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->gp[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct thread *thread_of(struct rreplay *r, uint32_t tid)
{
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].tid == tid)
			return &r->th[i];
	if (r->nth == r->capth) {
		size_t cap = r->capth ? 2 * r->capth : 8;
		struct thread *t = realloc(r->th, cap * sizeof(*t));
		if (!t) {
			r->nomem = 1;
			return NULL;
		}
		r->th = t, r->capth = cap;
	}
	struct thread *t = &r->th[r->nth++];
	*t = (struct thread){.tid = tid, .region = NO_REGION, .call_region = NO_REGION};
	return t;
}

static uint64_t exit_hash(uint64_t from, uint64_t to, size_t region, uint8_t kind)
{
	uint64_t h =
	    from * 0x9e3779b97f4a7c15ULL ^ (to + 0x632be59bd9b4e019ULL) * 0xbf58476d1ce4e5b9ULL;
	h ^= (uint64_t)region * 0x94d049bb133111ebULL + kind;
	return h ^ (h >> 31);
}

static int exit_grow(struct rreplay *r)
{
	size_t cap = r->excap ? 2 * r->excap : 256;
	struct exit_slot *n = calloc(cap, sizeof(*n));
	if (!n)
		return -1;
	for (size_t i = 0; i < r->excap; i++) {
		if (!r->ex[i].used)
			continue;
		const struct exit_slot *e = &r->ex[i];
		size_t j = exit_hash(e->from, e->to, e->region, e->kind) & (cap - 1);
		while (n[j].used)
			j = (j + 1) & (cap - 1);
		n[j] = *e;
	}
	free(r->ex);
	r->ex = n, r->excap = cap;
	return 0;
}

static void count_exit(struct rreplay *r, size_t region, uint64_t from, uint64_t to, uint8_t kind,
                       uint8_t br)
{
	if (2 * (r->exn + 1) > r->excap && exit_grow(r) < 0) {
		r->nomem = 1;
		return;
	}
	size_t j = exit_hash(from, to, region, kind) & (r->excap - 1);
	while (r->ex[j].used && !(r->ex[j].from == from && r->ex[j].to == to &&
	                          r->ex[j].region == region && r->ex[j].kind == kind))
		j = (j + 1) & (r->excap - 1);
	if (!r->ex[j].used) {
		r->ex[j] = (struct exit_slot){from, to, region, 0, kind, br, 1};
		r->exn++;
	}
	r->ex[j].count++;
	r->reg[region].exits++;
}

/* Control enters block b of region ri inside (at its start, or at a patch
 * point in it), from block from (RSET_NONE: through a point). A loop is
 * entered when b is one of its blocks and from is not (a loop entered at a
 * patch point inside it, past its header, is entered too). */
static void enter_block(struct rreplay *r, size_t ri, uint32_t b, uint32_t from)
{
	r->reg[ri].block_execs[b]++;
	uint32_t h = r->heads[ri][b];
	if (h)
		r->reg[ri].header_execs[h - 1]++;
	for (uint32_t l = 0; l < r->s->region[ri].nloop; l++)
		if (r->member[ri][l][b] && (from == RSET_NONE || !r->member[ri][l][from]))
			r->reg[ri].loop_entries[l]++;
}

/* An instruction at a run outside the replacement: a patch point enters. */
static void try_enter(struct rreplay *r, struct thread *t, uint64_t a, size_t gi)
{
	const struct gpoint *g = &r->gp[gi];
	if (g->addr != a)
		return;
	const struct rset_point *pt = &r->s->region[g->region].point[g->point];
	t->region = g->region, t->block = pt->block, t->insn = pt->insn + 1;
	r->reg[g->region].entries++;
	r->reg[g->region].point_entries[g->point]++;
	enter_block(r, g->region, pt->block, RSET_NONE);
	r->reg[g->region].insns++;
	r->inside++;
}

/* Whether block bi of region sr ends in a call its replacement leaves for: one
 * not inlined (no link into a clone) and not a patch point of the region (which
 * the replacement does itself), which runs in the original code. */
static int leaves_for_call(const struct rset_region *sr, uint32_t bi)
{
	const struct rset_block *b = &sr->block[bi];
	if ((b->kind != BK_CALL && b->kind != BK_CALL_IND) || b->nsucc != 0)
		return 0;
	for (uint32_t k = 0; k < sr->npoint; k++)
		if (sr->point[k].block == bi && sr->point[k].insn + 1 == b->ninsns)
			return 0;
	return 1;
}

/* Leaving t's region just before its block's call at a. */
static int leave_before_call(struct thread *t, const struct rset_block *b, uint64_t a)
{
	t->call_region = t->region, t->call_at = a, t->call_kind = b->kind;
	t->region = NO_REGION;
	return 0;
}

/* One instruction at a while inside; 1 when it stayed inside. */
static int step_inside(struct rreplay *r, struct thread *t, uint64_t a)
{
	const struct rset_region *sr = &r->s->region[t->region];
	const struct rset_block *b = &sr->block[t->block];
	if (t->insn < b->ninsns) {
		if (a == b->start + b->off[t->insn]) {
			if (t->insn + 1 == b->ninsns && leaves_for_call(sr, t->block))
				return leave_before_call(t, b, a);
			t->insn++;
			r->reg[t->region].insns++, r->inside++;
			return 1;
		}
		uint64_t from = b->start + b->off[t->insn - 1];
		count_exit(r, t->region, from, a, RREPLAY_EXIT_INTERRUPT, b->kind);
		t->region = NO_REGION;
		return 0;
	}
	for (uint32_t k = 0; k < b->nsucc; k++) {
		uint32_t s = b->succ[k];
		if (sr->block[s].start != a)
			continue;
		enter_block(r, t->region, s, t->block);
		t->block = s, t->insn = 1;
		if (sr->block[s].ninsns == 1 && leaves_for_call(sr, s))
			return leave_before_call(t, &sr->block[s], a);
		r->reg[t->region].insns++, r->inside++;
		return 1;
	}
	count_exit(r, t->region, b->start + b->off[b->ninsns - 1], a, RREPLAY_EXIT_EDGE, b->kind);
	t->region = NO_REGION;
	return 0;
}

/* The cache entry of code run bi: its first patch point at or after its start. */
static const struct run_cache *run_of(struct rreplay *r, const struct block_info *bi)
{
	if (bi->id >= r->nruns) {
		uint32_t n = r->nruns ? r->nruns : 1024;
		while (n <= bi->id)
			n *= 2;
		struct run_cache *c = realloc(r->runs, (size_t)n * sizeof(*c));
		if (!c)
			return NULL;
		memset(c + r->nruns, 0, (size_t)(n - r->nruns) * sizeof(*c));
		r->runs = c, r->nruns = n;
	}
	struct run_cache *c = &r->runs[bi->id];
	if (!c->known || c->start != bi->start) {
		size_t gi = gp_lower(r, bi->start);
		c->start = bi->start, c->known = 1;
		c->has = gi < r->ngp && r->gp[gi].addr < bi->end;
		c->first = (uint32_t)gi;
	}
	return c;
}

static void replay_run(struct rreplay *r, const struct block_info *bi, uint32_t ninsns,
                       uint32_t tid)
{
	r->total += ninsns;
	struct thread *t = thread_of(r, tid);
	if (!t || !ninsns)
		return;
	const struct run_cache *c = NULL;
	for (uint32_t i = 0; i < ninsns; i++) {
		uint64_t a = bi->start + bi->off[i];
		if (t->call_region != NO_REGION) {
			count_exit(r, t->call_region, t->call_at, a, RREPLAY_EXIT_EDGE, t->call_kind);
			t->call_region = NO_REGION;
		}
		if (t->region != NO_REGION && step_inside(r, t, a))
			continue;
		if (!c && !(c = run_of(r, bi))) {
			r->nomem = 1;
			return;
		}
		if (!c->has)
			return; /* outside, and no point in the rest of the run */
		size_t gi = c->first;
		while (gi < r->ngp && r->gp[gi].addr < a)
			gi++;
		try_enter(r, t, a, gi);
	}
}

static void sink_retire(void *ctx, const struct retired_block *rb)
{
	replay_run(ctx, rb->info, rb->ninsns, rb->tid);
}

static void sink_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp,
                       uint32_t tid, unsigned flags)
{
	(void)next, (void)sp, (void)flags;
	replay_run(ctx, bi, bi->ninsns, tid);
}

struct block_sink rreplay_sink(struct rreplay *r)
{
	return (struct block_sink){.retire = sink_retire, .whole = sink_whole, .ctx = r};
}

static int exit_cmp(const void *a, const void *b)
{
	const struct rreplay_exit *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	if (x->to != y->to)
		return x->to < y->to ? -1 : 1;
	return (int)x->kind - (int)y->kind;
}

int rreplay_finish(struct rreplay *r)
{
	size_t nr = r->s->nregion;
	for (size_t i = 0; i < nr; i++) {
		free(r->reg[i].exit);
		r->reg[i].exit = NULL, r->reg[i].nexit = 0;
	}
	size_t *n = calloc(nr + 1, sizeof(size_t));
	if (!n)
		return PMUSIM_ERR_NOMEM;
	for (size_t j = 0; j < r->excap; j++)
		if (r->ex[j].used)
			n[r->ex[j].region]++;
	for (size_t i = 0; i < nr; i++)
		if (n[i] && !(r->reg[i].exit = malloc(n[i] * sizeof(struct rreplay_exit)))) {
			free(n);
			return PMUSIM_ERR_NOMEM;
		}
	for (size_t j = 0; j < r->excap; j++) {
		const struct exit_slot *e = &r->ex[j];
		if (e->used)
			r->reg[e->region].exit[r->reg[e->region].nexit++] =
			    (struct rreplay_exit){e->from, e->to, e->kind, e->br, e->count};
	}
	for (size_t i = 0; i < nr; i++)
		if (r->reg[i].nexit)
			arrays_sort(r->reg[i].exit, r->reg[i].nexit, sizeof(struct rreplay_exit),
			      exit_cmp);
	free(n);
	return r->nomem ? PMUSIM_ERR_NOMEM : 0;
}

const struct rreplay_region *rreplay_region(const struct rreplay *r, size_t i)
{
	return i < r->s->nregion ? &r->reg[i] : NULL;
}

uint64_t rreplay_total(const struct rreplay *r)
{
	return r->total;
}

uint64_t rreplay_inside(const struct rreplay *r)
{
	return r->inside;
}

static double pct(double a, double b)
{
	return b > 0 ? 100 * a / b : 0;
}

static const char *exit_kind_name(int k)
{
	return k == RREPLAY_EXIT_INTERRUPT ? "interrupt" : "edge";
}

int rreplay_write_text(FILE *f, const struct rreplay *r)
{
	const struct rset *s = r->s;
	fprintf(f,
	        "# replay: %" PRIu64 " instructions, %" PRIu64
	        " inside replacement code (%.3f %%); the samples estimated %.3f %%\n",
	        r->total, r->inside, pct((double)r->inside, (double)r->total), 100 * s->est_share);
	for (size_t i = 0; i < s->nregion; i++) {
		const struct rset_region *sr = &s->region[i];
		const struct rreplay_region *o = &r->reg[i];
		fprintf(f,
		        "region 0x%" PRIx64 ": %" PRIu64
		        " instructions inside (%.3f %%, estimated %.3f %%), %" PRIu64
		        " entries, %" PRIu64 " exits\n",
		        sr->start, o->insns, pct((double)o->insns, (double)r->total),
		        s->total > 0 ? 100 * sr->est_insns / s->total : 0, o->entries, o->exits);
		for (uint32_t k = 0; k < sr->npoint; k++)
			fprintf(f, "  patch 0x%" PRIx64 ": %" PRIu64 " entries\n",
			        sr->point[k].addr, o->point_entries[k]);
		for (uint32_t l = 0; l < sr->nloop; l++) {
			uint64_t e = o->loop_entries[l], h = o->header_execs[l];
			fprintf(f,
			        "  loop 0x%" PRIx64 ": %" PRIu64 " entries, %" PRIu64
			        " header executions",
			        sr->block[sr->loop[l].header].start, e, h);
			if (e)
				fprintf(f, ", %.2f iterations per entry", (double)h / (double)e);
			fputc('\n', f);
		}
		for (size_t k = 0; k < o->nexit; k++)
			fprintf(f, "  exit 0x%" PRIx64 " -> 0x%" PRIx64 " %s: %" PRIu64 "\n",
			        o->exit[k].from, o->exit[k].to,
			        o->exit[k].kind == RREPLAY_EXIT_EDGE
			            ? br_kind_name(o->exit[k].br)
			            : exit_kind_name(o->exit[k].kind),
			        o->exit[k].count);
	}
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}

int rreplay_write_json(FILE *f, const struct rreplay *r)
{
	const struct rset *s = r->s;
	fprintf(f,
	        "{\"instructions\": %" PRIu64 ", \"inside\": %" PRIu64
	        ", \"inside_share\": %.6f, \"estimated_share\": %.6f,\n \"regions\": [",
	        r->total, r->inside, r->total ? (double)r->inside / (double)r->total : 0.0,
	        s->est_share);
	for (size_t i = 0; i < s->nregion; i++) {
		const struct rset_region *sr = &s->region[i];
		const struct rreplay_region *o = &r->reg[i];
		fprintf(f,
		        "%s\n  {\"start\": \"0x%" PRIx64 "\", \"insns\": %" PRIu64
		        ", \"estimated_insns\": %.6g, \"entries\": %" PRIu64 ", \"exits\": %" PRIu64
		        ", \"points\": [",
		        i ? "," : "", sr->start, o->insns, sr->est_insns, o->entries, o->exits);
		for (uint32_t k = 0; k < sr->npoint; k++)
			fprintf(f, "%s{\"addr\": \"0x%" PRIx64 "\", \"entries\": %" PRIu64 "}",
			        k ? ", " : "", sr->point[k].addr, o->point_entries[k]);
		fputs("], \"loops\": [", f);
		for (uint32_t l = 0; l < sr->nloop; l++)
			fprintf(f,
			        "%s{\"header\": \"0x%" PRIx64 "\", \"entries\": %" PRIu64
			        ", \"header_executions\": %" PRIu64 "}",
			        l ? ", " : "", sr->block[sr->loop[l].header].start,
			        o->loop_entries[l], o->header_execs[l]);
		fputs("], \"blocks\": [", f);
		for (uint32_t b = 0; b < sr->nblock; b++)
			fprintf(f,
			        "%s{\"start\": \"0x%" PRIx64
			        "\", \"clone\": %u, \"executions\": %" PRIu64 "}",
			        b ? ", " : "", sr->block[b].start, sr->block[b].clone,
			        o->block_execs[b]);
		fputs("], \"exit_edges\": [", f);
		for (size_t k = 0; k < o->nexit; k++)
			fprintf(f,
			        "%s\n    {\"from\": \"0x%" PRIx64 "\", \"to\": \"0x%" PRIx64
			        "\", \"kind\": \"%s\", \"count\": %" PRIu64 "}",
			        k ? "," : "", o->exit[k].from, o->exit[k].to,
			        o->exit[k].kind == RREPLAY_EXIT_EDGE
			            ? br_kind_name(o->exit[k].br)
			            : exit_kind_name(o->exit[k].kind),
			        o->exit[k].count);
		fputs("]}", f);
	}
	fputs("]}\n", f);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
