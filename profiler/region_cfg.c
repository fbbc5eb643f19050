/* Hot control-flow graph discovery by forward disassembly from op samples
 * (region_cfg.h). Two passes: exploration finds, for every address reached, its
 * fewest hops (a shortest-path fixpoint, so the order of work does not matter)
 * and which instruction boundaries explored runs cover; then the block starts
 * are chosen from those facts and each block is cut from its run. */
#include "profiler/region_cfg.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"

#define NO_HOPS UINT32_MAX
#define EMPTY UINT64_MAX

/* What exploration knows of one address. */
#define S_EXPLORED 0x01 /* start of an explored run */
#define S_INTERIOR 0x02 /* an instruction boundary inside an explored run, not its start */
#define S_TARGET 0x04   /* target of an edge from an explored run */
#define S_CONVERGE 0x08 /* two streams reach it with different instructions before it */
#define S_QUEUED 0x10
#define S_LIMIT 0x20 /* max_blocks kept it from being explored */
#define S_HASPREV 0x40

struct site {
	uint64_t addr;  /* EMPTY: free slot */
	uint64_t prev;  /* S_HASPREV: the instruction before it in a run covering it */
	uint32_t dist;  /* fewest hops found to a run starting here */
	uint32_t cover; /* fewest hops of the explored runs it is a boundary of */
	uint8_t flags;
};

struct work {
	struct binary *code;
	struct rcfg_options opt;
	struct hot_ip *ip; /* sorted copies of hot's arrays */
	size_t nip;
	struct hot_branch *br;
	size_t nbr;
	struct hot_target *tg;
	size_t ntg;
	struct site *site; /* open addressing, linear probing; cap a power of two */
	size_t cap, nsite;
	uint64_t *queue;
	size_t qhead, qlen, qcap;
	size_t runs;
	int partial;
	uint64_t *lead; /* phase 2: the block starts, sorted */
	size_t nlead;
};

static size_t slot_of(uint64_t a, size_t cap)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a & (cap - 1);
}

static struct site *site_find(const struct work *w, uint64_t a)
{
	for (size_t i = slot_of(a, w->cap);; i = (i + 1) & (w->cap - 1)) {
		if (w->site[i].addr == a)
			return &w->site[i];
		if (w->site[i].addr == EMPTY)
			return NULL;
	}
}

static int site_grow(struct work *w)
{
	size_t ncap = w->cap ? w->cap * 2 : 1024;
	struct site *ns = malloc(ncap * sizeof(*ns));
	if (!ns)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < ncap; i++)
		ns[i].addr = EMPTY;
	for (size_t i = 0; i < w->cap; i++) {
		if (w->site[i].addr == EMPTY)
			continue;
		size_t j = slot_of(w->site[i].addr, ncap);
		while (ns[j].addr != EMPTY)
			j = (j + 1) & (ncap - 1);
		ns[j] = w->site[i];
	}
	free(w->site);
	w->site = ns;
	w->cap = ncap;
	return 0;
}

/* The site of a, added when new; NULL when out of memory. The pointer is valid
 * until the next site_get. */
static struct site *site_get(struct work *w, uint64_t a)
{
	struct site *s = w->cap ? site_find(w, a) : NULL;
	if (s)
		return s;
	if ((w->nsite + 1) * 2 > w->cap && site_grow(w))
		return NULL;
	size_t i = slot_of(a, w->cap);
	while (w->site[i].addr != EMPTY)
		i = (i + 1) & (w->cap - 1);
	w->site[i] = (struct site){.addr = a, .dist = NO_HOPS, .cover = NO_HOPS};
	w->nsite++;
	return &w->site[i];
}

static int push(struct work *w, uint64_t a)
{
	if (w->qlen == w->qcap) {
		size_t ncap = w->qcap ? w->qcap * 2 : 256;
		uint64_t *nq = realloc(w->queue, ncap * sizeof(*nq));
		if (!nq)
			return PMUSIM_ERR_NOMEM;
		w->queue = nq;
		w->qcap = ncap;
	}
	w->queue[w->qlen++] = a;
	return 0;
}

static int cmp_ip(const void *a, const void *b)
{
	uint64_t x = ((const struct hot_ip *)a)->ip, y = ((const struct hot_ip *)b)->ip;
	return (x > y) - (x < y);
}

static int cmp_branch(const void *a, const void *b)
{
	uint64_t x = ((const struct hot_branch *)a)->ip, y = ((const struct hot_branch *)b)->ip;
	return (x > y) - (x < y);
}

static int cmp_target(const void *a, const void *b)
{
	const struct hot_target *x = a, *y = b;
	if (x->from != y->from)
		return (x->from > y->from) - (x->from < y->from);
	return (x->to > y->to) - (x->to < y->to);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return (x > y) - (x < y);
}

static void *sorted_copy(const void *src, size_t n, size_t size,
                         int (*cmp)(const void *, const void *))
{
	void *p = malloc(n ? n * size : 1);
	if (p && n) {
		memcpy(p, src, n * size);
		arrays_sort(p, n, size, cmp);
	}
	return p;
}

static const struct hot_ip *hot_ip_at(const struct work *w, uint64_t a)
{
	struct hot_ip key = {.ip = a};
	return arrays_find(&key, w->ip, w->nip, sizeof(key), cmp_ip);
}

static const struct hot_branch *hot_branch_at(const struct work *w, uint64_t a)
{
	struct hot_branch key = {.ip = a};
	return arrays_find(&key, w->br, w->nbr, sizeof(key), cmp_branch);
}

/* Index of the first recorded target of the indirect branch at from. */
static size_t targets_of(const struct work *w, uint64_t from)
{
	size_t lo = 0, hi = w->ntg;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (w->tg[mid].from < from)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The direct successors of a run's terminator (at most two), with their edge
 * kinds and hop costs. Indirect targets come from targets_of. */
struct succ {
	uint64_t to;
	uint8_t kind, cost;
};

static size_t direct_succ(int kind, uint64_t end, uint64_t target, struct succ s[2])
{
	switch (kind) {
	case BK_COND:
		s[0] = (struct succ){end, RCFG_FALL, 1};
		s[1] = (struct succ){target, RCFG_TAKEN, 1};
		return 2;
	case BK_JMP:
		s[0] = (struct succ){target, RCFG_TAKEN, 0};
		return 1;
	case BK_CALL:
	case BK_CALL_IND:
		s[0] = (struct succ){end, RCFG_CALL_RETURN, 0};
		return 1;
	case BK_SYSCALL:
	case BK_REP:
	case BK_NONE:
		s[0] = (struct succ){end, RCFG_FALL, 0};
		return 1;
	default: /* BK_JMP_IND: targets_of; BK_RET, BK_TRAP: none */
		return 0;
	}
}

static int run_sampled(const struct work *w, const struct block_info *r)
{
	for (uint32_t i = 0; i < r->ninsns; i++)
		if (hot_ip_at(w, r->start + r->off[i]))
			return 1;
	return 0;
}

/* Offers d hops to the run at a; queues a when that is fewer than it had and
 * within max_hops (a run holding a sampled instruction is at 0 whatever d). */
static int offer(struct work *w, uint64_t a, uint32_t d, int as_target)
{
	const struct block_info *r = binary_run(w->code, a);
	struct site *s = site_get(w, a);
	if (!s)
		return PMUSIM_ERR_NOMEM;
	if (as_target)
		s->flags |= S_TARGET;
	if (!r)
		return 0;
	if (d > 0 && s->dist > d && run_sampled(w, r))
		d = 0;
	if (d > w->opt.max_hops || d >= s->dist)
		return 0;
	s->dist = d;
	if (s->flags & S_QUEUED)
		return 0;
	s->flags |= S_QUEUED;
	return push(w, a);
}

/* Records that run r, at d hops, covers its instruction boundaries. */
static int cover_run(struct work *w, const struct block_info *r, uint32_t d)
{
	for (uint32_t i = 0; i < r->ninsns; i++) {
		struct site *b = site_get(w, r->start + r->off[i]);
		if (!b)
			return PMUSIM_ERR_NOMEM;
		if (d < b->cover)
			b->cover = d;
		if (i == 0)
			continue;
		uint64_t prev = r->start + r->off[i - 1];
		b->flags |= S_INTERIOR;
		if ((b->flags & S_HASPREV) && b->prev != prev)
			b->flags |= S_CONVERGE;
		b->prev = prev;
		b->flags |= S_HASPREV;
	}
	return 0;
}

/* Explores the run at a (once) and offers its successors its hops. */
static int visit(struct work *w, uint64_t a)
{
	struct site *s = site_get(w, a);
	if (!s)
		return PMUSIM_ERR_NOMEM;
	s->flags &= (uint8_t)~S_QUEUED;
	uint32_t d = s->dist;
	if (!(s->flags & S_EXPLORED)) {
		if (w->runs == w->opt.max_blocks) {
			s->flags |= S_LIMIT;
			w->partial = 1;
			return 0;
		}
		s->flags |= S_EXPLORED;
		w->runs++;
	}
	const struct block_info *r = binary_run(w->code, a);
	int err = cover_run(w, r, d);
	struct succ sc[2];
	size_t n = direct_succ(r->kind, r->end, r->target, sc);
	for (size_t i = 0; i < n && !err; i++)
		err = offer(w, sc[i].to, d + sc[i].cost, 1);
	if (r->kind == BK_JMP_IND)
		for (size_t i = targets_of(w, r->term);
		     i < w->ntg && w->tg[i].from == r->term && !err; i++)
			err = offer(w, w->tg[i].to, d, 1);
	return err;
}

static int explore(struct work *w)
{
	for (size_t i = 0; i < w->nip; i++) {
		int err = offer(w, w->ip[i].ip, 0, 0);
		if (err)
			return err;
	}
	while (w->qhead < w->qlen) {
		int err = visit(w, w->queue[w->qhead++]);
		if (err)
			return err;
	}
	return 0;
}

static int is_lead(const struct work *w, uint64_t a)
{
	return arrays_find(&a, w->lead, w->nlead, sizeof(a), cmp_u64) != NULL;
}

static int pick_leads(struct work *w)
{
	w->lead = malloc((w->nsite ? w->nsite : 1) * sizeof(*w->lead));
	if (!w->lead)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < w->cap; i++) {
		const struct site *s = &w->site[i];
		if (s->addr == EMPTY || s->cover == NO_HOPS)
			continue;
		if ((s->flags & (S_TARGET | S_CONVERGE)) ||
		    ((s->flags & S_EXPLORED) && !(s->flags & S_INTERIOR)))
			w->lead[w->nlead++] = s->addr;
	}
	arrays_sort(w->lead, w->nlead, sizeof(*w->lead), cmp_u64);
	return 0;
}

static int add_edge(struct rcfg *g, size_t *cap, const struct rcfg_edge *e)
{
	if (g->nedge == *cap) {
		size_t ncap = *cap ? *cap * 2 : 64;
		struct rcfg_edge *ne = realloc(g->edge, ncap * sizeof(*ne));
		if (!ne)
			return PMUSIM_ERR_NOMEM;
		g->edge = ne;
		*cap = ncap;
	}
	g->edge[g->nedge++] = *e;
	return 0;
}

/* The edge from block bi to a: in the graph when a starts a block, else why not. */
static struct rcfg_edge edge_to(const struct work *w, size_t bi, uint64_t a, int kind)
{
	struct rcfg_edge e = {.from = bi, .to = RCFG_NO_BLOCK, .to_addr = a, .kind = (uint8_t)kind};
	const uint64_t *l = arrays_find(&a, w->lead, w->nlead, sizeof(a), cmp_u64);
	const struct site *s = site_find(w, a);
	if (l)
		e.to = (size_t)(l - w->lead);
	else if (!binary_has_code(w->code, a))
		e.out = RCFG_OUT_NOCODE;
	else if (s && (s->flags & S_LIMIT))
		e.out = RCFG_OUT_LIMIT;
	else
		e.out = RCFG_OUT_HOPS;
	return e;
}

/* The out-edges of block bi, whose last instruction is at term. */
static int block_edges(const struct work *w, struct rcfg *g, size_t bi, uint64_t term, size_t *cap)
{
	struct rcfg_block *b = &g->block[bi];
	struct succ sc[2];
	size_t n = direct_succ(b->kind, b->end, b->target, sc);
	const struct hot_branch *hb = b->kind == BK_COND ? hot_branch_at(w, term) : NULL;
	int err = 0;
	b->first_edge = g->nedge;
	for (size_t i = 0; i < n && !err; i++) {
		struct rcfg_edge e = edge_to(w, bi, sc[i].to, sc[i].kind);
		if (hb) {
			e.observed = 1;
			e.weight = sc[i].kind == RCFG_TAKEN ? hb->taken : hb->fall;
		}
		err = add_edge(g, cap, &e);
	}
	size_t first = targets_of(w, term);
	if (b->kind == BK_JMP_IND) {
		for (size_t i = first; i < w->ntg && w->tg[i].from == term && !err; i++) {
			struct rcfg_edge e = edge_to(w, bi, w->tg[i].to, RCFG_INDIRECT);
			e.observed = 1;
			e.weight = w->tg[i].weight;
			err = add_edge(g, cap, &e);
		}
	}
	b->nedge = g->nedge - b->first_edge;
	int leaves =
	    b->kind == BK_RET || b->kind == BK_TRAP || (b->kind == BK_JMP_IND && !b->nedge);
	for (size_t i = b->first_edge; i < g->nedge; i++)
		leaves |= g->edge[i].out != RCFG_IN;
	if (leaves)
		b->flags |= RCFG_EXIT;
	return err;
}

/* Block bi, starting at a: its run up to the next block start on its stream. */
static int build_block(struct work *w, struct rcfg *g, size_t bi, uint64_t a, size_t *cap)
{
	const struct block_info *r = binary_run(w->code, a);
	struct rcfg_block *b = &g->block[bi];
	uint32_t n = 1;
	while (n < r->ninsns && !is_lead(w, a + r->off[n]))
		n++;
	int whole = n == r->ninsns;
	b->start = a;
	b->ninsns = n;
	b->end = a + r->off[n];
	b->off = malloc((n + 1) * sizeof(*b->off));
	if (!b->off)
		return PMUSIM_ERR_NOMEM;
	memcpy(b->off, r->off, (n + 1) * sizeof(*b->off));
	b->kind = whole ? r->kind : BK_NONE;
	if (whole && (r->kind == BK_COND || r->kind == BK_JMP || r->kind == BK_CALL))
		b->target = r->target;
	if (b->kind == BK_CALL)
		b->callee = r->target;
	if (b->kind == BK_CALL || b->kind == BK_CALL_IND)
		b->flags |= RCFG_CALL;
	b->hops = site_find(w, a)->cover;
	for (uint32_t i = 0; i < n; i++) {
		const struct hot_ip *h = hot_ip_at(w, a + b->off[i]);
		if (h) {
			b->flags |= RCFG_SAMPLED;
			b->weight += h->weight;
		}
	}
	g->weight += b->weight;
	return block_edges(w, g, bi, a + b->off[n - 1], cap);
}

void rcfg_options_init(struct rcfg_options *o)
{
	o->max_hops = RCFG_MAX_HOPS_DEFAULT;
	o->max_blocks = RCFG_MAX_BLOCKS_DEFAULT;
}

static void work_fini(struct work *w)
{
	free(w->ip);
	free(w->br);
	free(w->tg);
	free(w->site);
	free(w->queue);
	free(w->lead);
}

static int work_init(struct work *w, struct binary *code, const struct hot_code *hot,
                     const struct rcfg_options *opt)
{
	memset(w, 0, sizeof(*w));
	w->code = code;
	if (opt)
		w->opt = *opt;
	else
		rcfg_options_init(&w->opt);
	w->nip = hot->nip;
	w->nbr = hot->nbranch;
	w->ntg = hot->ntarget;
	w->ip = sorted_copy(hot->ip, w->nip, sizeof(*w->ip), cmp_ip);
	w->br = sorted_copy(hot->branch, w->nbr, sizeof(*w->br), cmp_branch);
	w->tg = sorted_copy(hot->target, w->ntg, sizeof(*w->tg), cmp_target);
	if (!w->ip || !w->br || !w->tg || site_grow(w))
		return PMUSIM_ERR_NOMEM;
	return 0;
}

static int build(struct work *w, struct rcfg *g)
{
	size_t cap = 0;
	g->block = calloc(w->nlead ? w->nlead : 1, sizeof(*g->block));
	if (!g->block)
		return PMUSIM_ERR_NOMEM;
	g->nblock = w->nlead;
	for (size_t i = 0; i < w->nlead; i++) {
		int err = build_block(w, g, i, w->lead[i], &cap);
		if (err)
			return err;
	}
	g->runs = w->runs;
	g->partial = w->partial;
	return 0;
}

int rcfg_discover(struct binary *code, const struct hot_code *hot, const struct rcfg_options *opt,
                  struct rcfg **out, char *msg, size_t msglen)
{
	*out = NULL;
	if (opt && opt->max_blocks == 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
		                   "rcfg: max_blocks must be at least 1");
	struct work w;
	struct rcfg *g = calloc(1, sizeof(*g));
	int err = g ? work_init(&w, code, hot, opt) : PMUSIM_ERR_NOMEM;
	if (!err)
		err = explore(&w);
	if (!err)
		err = pick_leads(&w);
	if (!err)
		err = build(&w, g);
	if (g)
		work_fini(&w);
	if (err) {
		rcfg_free(g);
		return pmusim_fail(msg, msglen, err, "rcfg: out of memory");
	}
	*out = g;
	return 0;
}

void rcfg_free(struct rcfg *g)
{
	if (!g)
		return;
	for (size_t i = 0; i < g->nblock; i++)
		free(g->block[i].off);
	free(g->block);
	free(g->edge);
	free(g);
}

static int cmp_block_start(const void *key, const void *elem)
{
	uint64_t a = *(const uint64_t *)key, s = ((const struct rcfg_block *)elem)->start;
	return (a > s) - (a < s);
}

const struct rcfg_block *rcfg_block_at(const struct rcfg *g, uint64_t addr)
{
	return arrays_find(&addr, g->block, g->nblock, sizeof(*g->block), cmp_block_start);
}

const struct rcfg_block *rcfg_block_holding(const struct rcfg *g, uint64_t addr)
{
	/* Blocks are shorter than 64 KiB (uint16_t offsets), so only the blocks
	 * starting in the 64 KiB before addr can hold it. */
	size_t lo = 0, hi = g->nblock;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->block[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0 && addr - g->block[i].start < 65536;) {
		const struct rcfg_block *b = &g->block[i];
		for (uint32_t k = 0; k < b->ninsns && b->start + b->off[k] <= addr; k++)
			if (b->start + b->off[k] == addr)
				return b;
	}
	return NULL;
}

const char *rcfg_edge_kind_name(int kind)
{
	static const char *const names[] = {"fall", "taken", "indirect", "call_ret"};
	return kind >= 0 && kind <= RCFG_CALL_RETURN ? names[kind] : "?";
}

const char *rcfg_out_name(int out)
{
	static const char *const names[] = {"in", "hops", "nocode", "limit"};
	return out >= 0 && out <= RCFG_OUT_LIMIT ? names[out] : "?";
}
