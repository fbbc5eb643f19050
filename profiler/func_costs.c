/* Exact per-function costs, self and inclusive (see profiler/func_costs.h). */
#include "profiler/func_costs.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"

struct frame {
	size_t func;          /* index in fc->f */
	uint64_t ret;         /* the return address its call pushed; 0: none (entered otherwise) */
	struct fc_cost at;    /* the thread's costs when it was pushed */
	int outer;            /* the function's outermost frame on this thread's stack */
	size_t edge;          /* with detail, the call edge that pushed it; SIZE_MAX: none */
};

struct thread {
	uint32_t tid;
	struct fc_cost total; /* everything the thread retired */
	struct frame *st;
	size_t n, cap;
	int how;              /* how the thread's last block left: HOW_* */
	uint64_t jmp_to;      /* HOW_JUMP: where */
};

enum { HOW_NONE, HOW_CALL, HOW_RET, HOW_JUMP };

/* What the sink knows of a run, by its id: the function of each of its
 * instructions when they differ (rare: a run falling into the next function). */
struct runinfo {
	uint8_t known;
	uint8_t split;        /* its instructions lie in more than one function */
	size_t term_func;     /* the function of its terminator (last instruction) */
	size_t *func;         /* split: per instruction */
};

struct func_costs {
	const struct symtab *st;
	size_t st_count;      /* symtab_count when runs were looked up */
	struct fc_clock clock;
	uint64_t last_cycles, last_misses;
	struct fc_func *f;
	size_t nf, capf;
	size_t *slot;         /* open addressing by address: index + 1, 0 empty */
	size_t nslot;
	struct runinfo *run;
	size_t caprun;
	struct thread *th;
	size_t nth, capth;
	size_t cur;           /* the thread of the last block */
	int err;
	int detail;
	struct fc_run *runs;  /* detail: by run id */
	size_t capruns;
	struct fc_edge *edge; /* detail: call edges, a hash by (site, callee) */
	size_t nedge, capedge;
	size_t *eslot, neslot;
};

static uint64_t clock_read(uint64_t (*fn)(void *), void *ctx)
{
	return fn ? fn(ctx) : 0;
}

struct func_costs *func_costs_new(const struct symtab *st, struct fc_clock clock)
{
	struct func_costs *fc = calloc(1, sizeof(*fc));
	if (!fc)
		return NULL;
	fc->st = st;
	fc->st_count = symtab_count(st);
	fc->clock = clock;
	fc->last_cycles = clock_read(clock.cycles, clock.ctx);
	fc->last_misses = clock_read(clock.misses, clock.ctx);
	fc->cur = SIZE_MAX;
	return fc;
}

static void forget_runs(struct func_costs *fc)
{
	for (size_t i = 0; i < fc->caprun; i++)
		free(fc->run[i].func);
	if (fc->caprun)
		memset(fc->run, 0, fc->caprun * sizeof(*fc->run));
}

void func_costs_free(struct func_costs *fc)
{
	if (!fc)
		return;
	forget_runs(fc);
	free(fc->run);
	free(fc->runs);
	free(fc->edge);
	free(fc->eslot);
	for (size_t i = 0; i < fc->nth; i++)
		free(fc->th[i].st);
	free(fc->th);
	free(fc->f);
	free(fc->slot);
	free(fc);
}

static size_t hash_of(uint64_t a, size_t n)
{
	return (size_t)((a * 0x9e3779b97f4a7c15ULL) >> 17) & (n - 1);
}

static int rehash(struct func_costs *fc, size_t n)
{
	size_t *ns = calloc(n, sizeof(*ns));
	if (!ns)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < fc->nf; i++) {
		size_t h = hash_of(fc->f[i].addr, n);
		while (ns[h])
			h = (h + 1) & (n - 1);
		ns[h] = i + 1;
	}
	free(fc->slot);
	fc->slot = ns;
	fc->nslot = n;
	return 0;
}

/* The entry of the function at addr (0: no symbol), made when new; SIZE_MAX
 * when out of memory. */
static size_t func_index(struct func_costs *fc, uint64_t addr)
{
	if (fc->nslot && fc->nslot > 2 * fc->nf) {
		for (size_t h = hash_of(addr, fc->nslot); fc->slot[h]; h = (h + 1) & (fc->nslot - 1))
			if (fc->f[fc->slot[h] - 1].addr == addr)
				return fc->slot[h] - 1;
	} else if (rehash(fc, fc->nslot ? fc->nslot * 2 : 64) < 0) {
		return SIZE_MAX;
	} else {
		return func_index(fc, addr);
	}
	struct fc_func *nf = grow_array(fc->f, &fc->capf, fc->nf + 1, sizeof(*nf));
	if (!nf)
		return SIZE_MAX;
	fc->f = nf;
	fc->f[fc->nf] = (struct fc_func){.addr = addr};
	size_t h = hash_of(addr, fc->nslot);
	while (fc->slot[h])
		h = (h + 1) & (fc->nslot - 1);
	fc->slot[h] = ++fc->nf;
	return fc->nf - 1;
}

static uint64_t func_addr(const struct func_costs *fc, uint64_t at)
{
	const struct sym *s = symtab_lookup(fc->st, at);
	return s ? s->addr : 0;
}

static const struct runinfo *run_of(struct func_costs *fc, const struct block_info *bi)
{
	if (symtab_count(fc->st) != fc->st_count) { /* a library's functions came */
		forget_runs(fc);
		fc->st_count = symtab_count(fc->st);
	}
	if (bi->id >= fc->caprun) {
		size_t old = fc->caprun;
		struct runinfo *nr = grow_array(fc->run, &fc->caprun, (size_t)bi->id + 1, sizeof(*nr));
		if (!nr)
			return NULL;
		memset(nr + old, 0, (fc->caprun - old) * sizeof(*nr));
		fc->run = nr;
	}
	struct runinfo *r = &fc->run[bi->id];
	if (r->known)
		return r;
	uint64_t first = func_addr(fc, bi->start), last = func_addr(fc, bi->start + bi->off[bi->ninsns - 1]);
	size_t tf = func_index(fc, last);
	if (tf == SIZE_MAX)
		return NULL;
	r->term_func = tf;
	if (first != last) {
		r->func = malloc(bi->ninsns * sizeof(*r->func));
		if (!r->func)
			return NULL;
		for (uint32_t i = 0; i < bi->ninsns; i++)
			if ((r->func[i] = func_index(fc, func_addr(fc, bi->start + bi->off[i]))) == SIZE_MAX)
				return NULL;
		r->split = 1;
	}
	r->known = 1;
	return r;
}

static struct thread *thread_of(struct func_costs *fc, uint32_t tid)
{
	if (fc->cur < fc->nth && fc->th[fc->cur].tid == tid)
		return &fc->th[fc->cur];
	for (size_t i = 0; i < fc->nth; i++)
		if (fc->th[i].tid == tid)
			return &fc->th[fc->cur = i];
	struct thread *nt = grow_array(fc->th, &fc->capth, fc->nth + 1, sizeof(*nt));
	if (!nt)
		return NULL;
	fc->th = nt;
	memset(&nt[fc->nth], 0, sizeof(*nt));
	nt[fc->nth].tid = tid;
	fc->cur = fc->nth++;
	return &nt[fc->cur];
}

static int on_stack(const struct thread *t, size_t func)
{
	for (size_t i = t->n; i > 0; i--)
		if (t->st[i - 1].func == func && t->st[i - 1].outer)
			return 1;
	return 0;
}

static int push_edge(struct func_costs *fc, struct thread *t, size_t func, uint64_t ret, size_t edge)
{
	struct frame *ns = grow_array(t->st, &t->cap, t->n + 1, sizeof(*ns));
	if (!ns)
		return PMUSIM_ERR_NOMEM;
	t->st = ns;
	t->st[t->n] = (struct frame){func, ret, t->total, !on_stack(t, func), edge};
	t->n++;
	(void)fc;
	return 0;
}

static int push(struct func_costs *fc, struct thread *t, size_t func, uint64_t ret)
{
	return push_edge(fc, t, func, ret, SIZE_MAX);
}

static void pop(struct func_costs *fc, struct thread *t)
{
	const struct frame *fr = &t->st[--t->n];
	if (fr->edge != SIZE_MAX)
		for (int k = 0; k < FC_NKIND; k++)
			fc->edge[fr->edge].incl.v[k] += t->total.v[k] - fr->at.v[k];
	if (!fr->outer)
		return;
	struct fc_cost *in = &fc->f[fr->func].incl;
	for (int k = 0; k < FC_NKIND; k++)
		in->v[k] += t->total.v[k] - fr->at.v[k];
}

void func_costs_keep_detail(struct func_costs *fc)
{
	fc->detail = 1;
}

static size_t edge_hash(uint64_t site, uint64_t callee, size_t n)
{
	return hash_of(site * 31 + callee, n);
}

static int edge_rehash(struct func_costs *fc, size_t n)
{
	size_t *ns = calloc(n, sizeof(*ns));
	if (!ns)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < fc->nedge; i++) {
		size_t h = edge_hash(fc->edge[i].site, fc->edge[i].callee, n);
		while (ns[h])
			h = (h + 1) & (n - 1);
		ns[h] = i + 1;
	}
	free(fc->eslot);
	fc->eslot = ns;
	fc->neslot = n;
	return 0;
}

/* The edge (site, callee), made when new; SIZE_MAX when out of memory. */
static size_t edge_index(struct func_costs *fc, uint64_t site, uint64_t callee)
{
	if (2 * (fc->nedge + 1) > fc->neslot && edge_rehash(fc, fc->neslot ? fc->neslot * 2 : 64) < 0)
		return SIZE_MAX;
	size_t h = edge_hash(site, callee, fc->neslot);
	for (; fc->eslot[h]; h = (h + 1) & (fc->neslot - 1))
		if (fc->edge[fc->eslot[h] - 1].site == site && fc->edge[fc->eslot[h] - 1].callee == callee)
			return fc->eslot[h] - 1;
	struct fc_edge *ne = grow_array(fc->edge, &fc->capedge, fc->nedge + 1, sizeof(*ne));
	if (!ne)
		return SIZE_MAX;
	fc->edge = ne;
	ne[fc->nedge] = (struct fc_edge){.site = site, .callee = callee};
	fc->eslot[h] = ++fc->nedge;
	return fc->nedge - 1;
}

/* Detail: the run, and its terminator's branch costs. */
static int note_run(struct func_costs *fc, const struct retired_block *rb, uint64_t misses)
{
	const struct block_info *bi = rb->info;
	if (bi->id >= fc->capruns) {
		size_t old = fc->capruns;
		struct fc_run *nr = grow_array(fc->runs, &fc->capruns, (size_t)bi->id + 1, sizeof(*nr));
		if (!nr)
			return PMUSIM_ERR_NOMEM;
		memset(nr + old, 0, (fc->capruns - old) * sizeof(*nr));
		fc->runs = nr;
	}
	struct fc_run *r = &fc->runs[bi->id];
	if (!r->bi)
		r->bi = bi;
	if (rb->kind == BK_COND)
		r->branch[0]++, r->branch[1] += misses;
	else if (rb->kind == BK_JMP_IND || rb->kind == BK_CALL_IND)
		r->branch[2]++, r->branch[3] += misses;
	return 0;
}

const struct fc_run *func_costs_runs(const struct func_costs *fc, size_t *n)
{
	*n = fc->capruns;
	return fc->runs;
}

static int by_edge(const void *a, const void *b)
{
	const struct fc_edge *x = a, *y = b;
	if (x->site != y->site)
		return x->site < y->site ? -1 : 1;
	return x->callee < y->callee ? -1 : x->callee > y->callee;
}

const struct fc_edge *func_costs_edges(struct func_costs *fc, size_t *n)
{
	if (fc->nedge)
		arrays_sort(fc->edge, fc->nedge, sizeof(*fc->edge), by_edge);
	edge_rehash(fc, fc->neslot ? fc->neslot : 64);
	*n = fc->nedge;
	return fc->edge;
}

/* Where the thread's stack stands for a run in function func, given how its
 * last block left. */
static int place(struct func_costs *fc, struct thread *t, size_t func, uint64_t start)
{
	if (t->how == HOW_CALL)
		return 0; /* pushed with the call */
	if (t->n && t->st[t->n - 1].func == func)
		return 0;
	if (t->how == HOW_JUMP && t->n && start == t->jmp_to && fc->f[func].addr == start) {
		uint64_t ret = t->st[t->n - 1].ret; /* a tail call: the callee takes the frame */
		pop(fc, t);
		return push(fc, t, func, ret);
	}
	for (size_t i = t->n; i > 0; i--)
		if (t->st[i - 1].func == func) {
			while (t->n > i)
				pop(fc, t);
			return 0;
		}
	return push(fc, t, func, 0);
}

/* A return to `to`: the newest frame it returns through and those above it go. */
static void ret_to(struct func_costs *fc, struct thread *t, uint64_t to)
{
	for (size_t i = t->n; i > 0; i--)
		if (t->st[i - 1].ret == to) {
			while (t->n >= i)
				pop(fc, t);
			return;
		}
}

/* The n instructions rb retired, function by function in order: each stretch
 * in one function placed on the stack before its instructions count (a run that
 * falls into the next function enters it there). The function of the last one,
 * which takes the run's cycles and branch costs; SIZE_MAX when out of memory. */
static size_t add_insns(struct func_costs *fc, struct thread *t, const struct runinfo *r, const struct block_info *bi,
			uint32_t n)
{
	uint32_t i = 0;
	size_t fn = r->split ? r->func[0] : r->term_func;
	do {
		uint32_t j = i;
		if (r->split)
			for (fn = r->func[i]; j < n && r->func[j] == fn; j++)
				;
		else
			j = n;
		if (place(fc, t, fn, i == 0 ? bi->start : 0) < 0)
			return SIZE_MAX;
		t->how = HOW_NONE; /* the rest of the run is reached by falling in */
		t->total.v[FC_INSNS] += j - i;
		fc->f[fn].self.v[FC_INSNS] += j - i;
		i = j;
	} while (i < n);
	return fn;
}

static void retire(void *ctx, const struct retired_block *rb)
{
	struct func_costs *fc = ctx;
	const struct block_info *bi = rb->info;
	if (fc->err)
		return;
	const struct runinfo *r = run_of(fc, bi);
	struct thread *t = r ? thread_of(fc, rb->tid) : NULL;
	if (!t) {
		fc->err = PMUSIM_ERR_NOMEM;
		return;
	}
	size_t last = add_insns(fc, t, r, bi, rb->ninsns);
	if (last == SIZE_MAX) {
		fc->err = PMUSIM_ERR_NOMEM;
		return;
	}
	uint64_t cyc = clock_read(fc->clock.cycles, fc->clock.ctx), mis = clock_read(fc->clock.misses, fc->clock.ctx);
	int cond = rb->kind == BK_COND, ind = rb->kind == BK_JMP_IND || rb->kind == BK_CALL_IND;
	uint64_t dm = mis - fc->last_misses;
	struct fc_cost d = {{0, cyc - fc->last_cycles, br_kind_is_branch(rb->kind), dm, (uint64_t)cond,
			     cond ? dm : 0, (uint64_t)ind, ind ? dm : 0}};
	fc->last_cycles = cyc, fc->last_misses = mis;
	if (fc->detail && note_run(fc, rb, dm) < 0) {
		fc->err = PMUSIM_ERR_NOMEM;
		return;
	}
	struct fc_func *tf = &fc->f[last];
	for (int k = FC_CYCLES; k < FC_NKIND; k++)
		tf->self.v[k] += d.v[k], t->total.v[k] += d.v[k];
	t->how = HOW_NONE;
	if (rb->kind == BK_CALL || rb->kind == BK_CALL_IND) {
		size_t callee = func_index(fc, func_addr(fc, rb->next)), e = SIZE_MAX;
		if (callee != SIZE_MAX && fc->detail && (e = edge_index(fc, bi->term, fc->f[callee].addr)) == SIZE_MAX)
			callee = SIZE_MAX;
		if (callee == SIZE_MAX || push_edge(fc, t, callee, bi->end, e) < 0) {
			fc->err = PMUSIM_ERR_NOMEM;
			return;
		}
		if (e != SIZE_MAX)
			fc->edge[e].calls++;
		if (fc->f[callee].addr == rb->next) /* entered at its first instruction, as the truth counts */
			fc->f[callee].calls++;
		t->how = HOW_CALL;
	} else if (rb->kind == BK_RET) {
		ret_to(fc, t, rb->next);
		t->how = HOW_RET;
	} else if (rb->kind == BK_JMP || rb->kind == BK_JMP_IND) {
		t->how = HOW_JUMP;
		t->jmp_to = rb->next;
	}
}

struct block_sink func_costs_sink(struct func_costs *fc)
{
	return (struct block_sink){.retire = retire, .ctx = fc};
}

void func_costs_finish(struct func_costs *fc)
{
	for (size_t i = 0; i < fc->nth; i++)
		while (fc->th[i].n)
			pop(fc, &fc->th[i]);
}

static int by_addr(const void *a, const void *b)
{
	const struct fc_func *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

const struct fc_func *func_costs_list(struct func_costs *fc, size_t *n)
{
	if (fc->nf)
		arrays_sort(fc->f, fc->nf, sizeof(*fc->f), by_addr);
	forget_runs(fc); /* indices moved */
	rehash(fc, fc->nslot ? fc->nslot : 64);
	*n = fc->nf;
	return fc->f;
}

int func_costs_error(const struct func_costs *fc)
{
	return fc->err;
}
