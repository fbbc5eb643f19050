/* Ground-truth counters fed by retired blocks (see sim/truth.h). Hot path: one
 * array slot per code-run id; only indirect transfers and partial retirements
 * go through hash tables. */
#include "sim/truth.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"

struct run_count {
	const struct block_info *bi;
	uint64_t part_execs; /* retirements cut short that were entered by a transfer */
};

struct pkey {            /* hash key: (a, b) -> count */
	uint64_t a, b, count;
	int kind;
};

struct pmap {
	struct pkey *slots;
	size_t cap, used;
};

struct truth {
	struct run_count *runs;
	uint32_t cap;
	/* retirements of each whole run by outcome, [id * 4 + run_start * 2 + taken]:
	 * one counter per block (execs, full, taken and not taken follow from them),
	 * kept by the block stream for jumps, Jccs and runs without a branch */
	struct block_counts whole;
	struct pmap partial; /* (id, ninsns) */
	struct pmap edges;   /* (from, to) for indirect, call and return */
	struct truth_branch *br;
	size_t nbr;
	struct truth_edge *ed;
	size_t ned;
	struct truth_stack *stk;   /* stack snapshots */
	size_t nstk, capstk;
	uint64_t *rets;
	size_t nrets, caprets;
	struct truth_rep *rep; /* REP sites, sorted by address (truth_rep_add) */
	size_t nrep, caprep;
	const uint64_t *cyc;   /* program cycles by run id (truth_set_run_cycles) */
	uint32_t ncyc;
	int has_cyc;
	truth_insn_fn insn_fn; /* truth_set_insn_figures */
	void *insn_ctx;
};

static size_t pmap_hash(uint64_t a, uint64_t b)
{
	uint64_t h = a * 0x9e3779b97f4a7c15ULL ^ (b + 0x632be59bd9b4e019ULL) * 0xc2b2ae3d27d4eb4fULL;
	return (size_t)(h ^ (h >> 29));
}

/* Entered by a control transfer (or at start). */
static uint64_t rc_execs(const struct truth *t, uint32_t id)
{
	return t->whole.n[id * 4 + 2] + t->whole.n[id * 4 + 3] + t->runs[id].part_execs;
}

/* Retired up to and including the terminator. */
static uint64_t rc_full(const struct truth *t, uint32_t id)
{
	const uint64_t *w = &t->whole.n[id * 4];
	return w[0] + w[1] + w[2] + w[3];
}

static int pmap_add(struct pmap *m, uint64_t a, uint64_t b, int kind, uint64_t n)
{
	if ((m->used + 1) * 2 > m->cap) {
		size_t nc = m->cap ? m->cap * 2 : 256;
		struct pkey *ns = calloc(nc, sizeof(*ns));
		if (!ns)
			return PMUSIM_ERR_NOMEM;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->slots[i].count)
				continue;
			size_t j = pmap_hash(m->slots[i].a, m->slots[i].b) & (nc - 1);
			while (ns[j].count)
				j = (j + 1) & (nc - 1);
			ns[j] = m->slots[i];
		}
		free(m->slots);
		m->slots = ns;
		m->cap = nc;
	}
	size_t mask = m->cap - 1;
	for (size_t j = pmap_hash(a, b) & mask;; j = (j + 1) & mask) {
		struct pkey *k = &m->slots[j];
		if (!k->count) {
			*k = (struct pkey){a, b, n, kind};
			m->used++;
			return 0;
		}
		if (k->a == a && k->b == b) {
			k->count += n;
			return 0;
		}
	}
}

struct truth *truth_new(void)
{
	struct truth *t = calloc(1, sizeof(struct truth));
	if (t)
		t->whole.kinds = 1u << BK_COND | 1u << BK_JMP | 1u << BK_NONE | 1u << BK_SYSCALL;
	return t;
}

void truth_free(struct truth *t)
{
	if (!t)
		return;
	free(t->runs);
	free(t->whole.n);
	free(t->partial.slots);
	free(t->edges.slots);
	free(t->br);
	free(t->ed);
	free(t->stk);
	free(t->rets);
	free(t->rep);
	free(t);
}

int truth_add_stack(struct truth *t, uint32_t tid, uint32_t pid, uint64_t ip, const uint64_t *rets, size_t n)
{
	struct truth_stack *ns = grow_array(t->stk, &t->capstk, t->nstk + 1, sizeof(*ns));
	if (!ns)
		return PMUSIM_ERR_NOMEM;
	t->stk = ns;
	uint64_t *nr = grow_array(t->rets, &t->caprets, t->nrets + n, sizeof(*nr));
	if (!nr)
		return PMUSIM_ERR_NOMEM;
	t->rets = nr;
	if (n)
		arrays_copy(t->rets + t->nrets, rets, n, sizeof(*rets));
	t->stk[t->nstk++] = (struct truth_stack){tid, pid, ip, t->nrets, n};
	t->nrets += n;
	return 0;
}

size_t truth_stacks(const struct truth *t, const struct truth_stack **out)
{
	*out = t->stk;
	return t->nstk;
}

const uint64_t *truth_stack_rets(const struct truth *t)
{
	return t->rets;
}

static void truth_grow(struct truth *t, uint32_t id)
{
	uint32_t nc = t->cap ? t->cap : 1024;
	while (nc <= id)
		nc *= 2;
	struct run_count *nr = realloc(t->runs, nc * sizeof(*nr));
	uint64_t *nw = nr ? realloc(t->whole.n, (size_t)nc * 4 * sizeof(*nw)) : NULL;
	if (nr)
		t->runs = nr;
	if (!nw)
		abort(); /* out of memory in the middle of a run: counts would be wrong */
	memset(nr + t->cap, 0, (nc - t->cap) * sizeof(*nr));
	memset(nw + (size_t)t->cap * 4, 0, (size_t)(nc - t->cap) * 4 * sizeof(*nw));
	t->whole.n = nw;
	t->cap = t->whole.cap = nc;
}

/* Everything but the common case: first sight of a run, growth, blocks cut
 * short, and transfers whose targets go to the hash table. */
__attribute__((noinline)) static void truth_retire_slow(struct truth *t, const struct retired_block *rb)
{
	const struct block_info *bi = rb->info;
	uint32_t id = bi->id;
	if (id >= t->cap)
		truth_grow(t, id);
	struct run_count *c = &t->runs[id];
	c->bi = bi; /* the program's run, even with nothing retired: its cycles are the program's */
	if (rb->ninsns == 0)
		return; /* a REP left before anything retired (its figures: truth_rep_add) */
	if (rb->ninsns != bi->ninsns || rb->kind != bi->kind) {
		/* cut short (emulator block limit, fault, stop) */
		c->part_execs += rb->run_start;
		pmap_add(&t->partial, id, rb->ninsns, 0, 1);
		return;
	}
	t->whole.n[id * 4 + rb->run_start * 2 + (rb->taken != 0)]++;
	switch (rb->kind) {
	case BK_CALL: case BK_CALL_IND: case BK_JMP_IND: case BK_RET:
		pmap_add(&t->edges, bi->term, rb->next, rb->kind, 1);
		break;
	}
}

static void truth_retire(void *ctx, const struct retired_block *rb)
{
	truth_retire_slow(ctx, rb);
}

/* Hot path: a whole run already seen, ending in a conditional branch, a direct
 * jump or nothing: one counter; kept small so it needs no saved registers. */
static void truth_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
			unsigned flags)
{
	struct truth *t = ctx;
	uint32_t id = bi->id;
	int kind = bi->kind;
	if (id >= t->cap || !t->runs[id].bi ||
	    (kind != BK_COND && kind != BK_JMP && kind != BK_NONE && kind != BK_SYSCALL)) {
		struct retired_block rb;
		retired_block_whole(&rb, bi, next, sp, tid, flags);
		truth_retire_slow(t, &rb);
		return;
	}
	t->whole.n[id * 4 + (flags & (RB_WHOLE_TAKEN | RB_WHOLE_RUN_START))]++;
}

struct block_sink truth_sink(struct truth *t)
{
	return (struct block_sink){.retire = truth_retire, .ctx = t, .whole = truth_whole, .counts = &t->whole};
}

uint64_t truth_insns(const struct truth *t)
{
	uint64_t n = 0;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->runs[i].bi)
			n += rc_full(t, i) * t->runs[i].bi->ninsns;
	for (size_t i = 0; i < t->partial.cap; i++)
		n += t->partial.slots[i].count * t->partial.slots[i].b;
	return n;
}

static int cmp_branch(const void *a, const void *b)
{
	const struct truth_branch *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct truth_edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

int truth_branches(struct truth *t, const struct truth_branch **out, size_t *n)
{
	free(t->br);
	t->br = calloc(t->cap + 1, sizeof(*t->br));
	if (!t->br)
		return PMUSIM_ERR_NOMEM;
	size_t k = 0;
	for (uint32_t i = 0; i < t->cap; i++) {
		const struct run_count *c = &t->runs[i];
		if (!c->bi || !rc_full(t, i) || (c->bi->kind != BK_COND && c->bi->kind != BK_JMP))
			continue;
		/* a jump's outcome is always taken; a Jcc's is its own */
		const uint64_t *w = &t->whole.n[i * 4];
		uint64_t taken = w[1] + w[3], not_taken = w[0] + w[2];
		t->br[k++] = (struct truth_branch){c->bi->term, c->bi->end, c->bi->target, c->bi->kind,
						   taken, not_taken};
	}
	arrays_sort(t->br, k, sizeof(*t->br), cmp_branch);
	size_t w = 0; /* merge runs that share a terminator */
	for (size_t i = 0; i < k; i++) {
		if (w && t->br[w - 1].addr == t->br[i].addr) {
			t->br[w - 1].taken += t->br[i].taken;
			t->br[w - 1].not_taken += t->br[i].not_taken;
		} else {
			t->br[w++] = t->br[i];
		}
	}
	t->nbr = w;
	*out = t->br;
	*n = w;
	return 0;
}

int truth_edges(struct truth *t, const struct truth_edge **out, size_t *n)
{
	free(t->ed);
	t->ed = calloc(t->edges.used + 1, sizeof(*t->ed));
	if (!t->ed)
		return PMUSIM_ERR_NOMEM;
	size_t k = 0;
	for (size_t i = 0; i < t->edges.cap; i++) {
		const struct pkey *p = &t->edges.slots[i];
		if (p->count)
			t->ed[k++] = (struct truth_edge){p->a, p->b, p->kind, p->count};
	}
	arrays_sort(t->ed, k, sizeof(*t->ed), cmp_edge);
	t->ned = k;
	*out = t->ed;
	*n = k;
	return 0;
}

/* --- per-function and per-site aggregates for JSON -------------------------- */

struct fn_count {
	uint64_t insns, calls;
};

/* Adds count executions of the first k instructions of bi to per-function totals. */
static void add_fn_insns(const struct symtab *st, struct fn_count *fc, uint64_t *unknown,
			 const struct block_info *bi, int k, uint64_t count)
{
	for (int i = 0; i < k; i++) {
		const struct sym *s = symtab_lookup(st, bi->start + bi->off[i]);
		if (s)
			fc[s - symtab_at(st, 0)].insns += count;
		else
			*unknown += count;
	}
}

int truth_function_counts(struct truth *t, const struct symtab *st, uint64_t **insns,
			  uint64_t **calls, uint64_t *unknown)
{
	size_t nf = symtab_count(st);
	struct fn_count *fc = calloc(nf + 1, sizeof(*fc));
	*insns = calloc(nf + 1, sizeof(uint64_t));
	*calls = calloc(nf + 1, sizeof(uint64_t));
	if (!fc || !*insns || !*calls) {
		free(fc);
		return PMUSIM_ERR_NOMEM;
	}
	*unknown = 0;
	for (uint32_t i = 0; i < t->cap; i++) {
		const struct run_count *c = &t->runs[i];
		if (c->bi && rc_full(t, i))
			add_fn_insns(st, fc, unknown, c->bi, c->bi->ninsns, rc_full(t, i));
	}
	for (size_t i = 0; i < t->partial.cap; i++) {
		const struct pkey *p = &t->partial.slots[i];
		if (p->count)
			add_fn_insns(st, fc, unknown, t->runs[p->a].bi, (int)p->b, p->count);
	}
	for (size_t i = 0; i < t->edges.cap; i++) {
		const struct pkey *p = &t->edges.slots[i];
		if (!p->count || (p->kind != BK_CALL && p->kind != BK_CALL_IND))
			continue;
		const struct sym *s = symtab_lookup(st, p->b);
		if (s && s->addr == p->b)
			fc[s - symtab_at(st, 0)].calls += p->count;
	}
	for (size_t i = 0; i < nf; i++) {
		(*insns)[i] = fc[i].insns;
		(*calls)[i] = fc[i].calls;
	}
	free(fc);
	return 0;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int truth_rep_add(struct truth *t, uint64_t site, uint64_t executions, uint64_t requested, uint64_t iterations,
		  uint64_t by_condition)
{
	size_t lo = 0, hi = t->nrep;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->rep[mid].addr < site)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == t->nrep || t->rep[lo].addr != site) {
		struct truth_rep *nr = grow_array(t->rep, &t->caprep, t->nrep + 1, sizeof(*nr));
		if (!nr)
			return PMUSIM_ERR_NOMEM;
		t->rep = nr;
		memmove(&t->rep[lo + 1], &t->rep[lo], (t->nrep - lo) * sizeof(*t->rep));
		t->rep[lo] = (struct truth_rep){.addr = site};
		t->nrep++;
	}
	struct truth_rep *r = &t->rep[lo];
	r->executions += executions;
	r->requested = sat_add(r->requested, requested);
	r->iterations += iterations;
	r->by_condition += by_condition;
	return 0;
}

int truth_rep_sites(struct truth *t, struct truth_rep **out, size_t *n)
{
	*out = malloc((t->nrep + 1) * sizeof(**out));
	if (!*out)
		return PMUSIM_ERR_NOMEM;
	if (t->nrep)
		memcpy(*out, t->rep, t->nrep * sizeof(**out));
	*n = t->nrep;
	return 0;
}

static int cmp_bi(const void *a, const void *b)
{
	const struct block_info *x = *(const struct block_info *const *)a;
	const struct block_info *y = *(const struct block_info *const *)b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

int truth_runs(struct truth *t, const struct block_info ***bi, uint64_t **execs, size_t *n)
{
	size_t k = 0;
	*bi = calloc(t->cap + 1, sizeof(**bi));
	*execs = calloc(t->cap + 1, 8);
	if (!*bi || !*execs)
		return PMUSIM_ERR_NOMEM;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->runs[i].bi && rc_execs(t, i))
			(*bi)[k++] = t->runs[i].bi;
	arrays_sort(*bi, k, sizeof(**bi), cmp_bi);
	for (size_t i = 0; i < k; i++)
		(*execs)[i] = rc_execs(t, (*bi)[i]->id);
	*n = k;
	return 0;
}

/* --- program cycles (from the timing model) ------------------------------------- */

void truth_set_run_cycles(struct truth *t, const uint64_t *cyc, uint32_t n)
{
	t->cyc = cyc;
	t->ncyc = n;
	t->has_cyc = 1;
}

void truth_set_insn_figures(struct truth *t, truth_insn_fn fn, void *ctx)
{
	t->insn_fn = fn;
	t->insn_ctx = ctx;
}

truth_insn_fn truth_insn_figures(const struct truth *t, void **ctx)
{
	*ctx = t->insn_ctx;
	return t->insn_fn;
}

int truth_program_runs(struct truth *t, const struct block_info ***bi, size_t *n)
{
	size_t k = 0;
	*bi = malloc((t->cap ? t->cap : 1) * sizeof(**bi));
	if (!*bi)
		return PMUSIM_ERR_NOMEM;
	for (uint32_t i = 0; i < t->cap; i++)
		if (t->runs[i].bi)
			(*bi)[k++] = t->runs[i].bi;
	*n = k;
	return 0;
}

int truth_has_cycles(const struct truth *t)
{
	return t->has_cyc;
}

uint64_t truth_run_cycles(const struct truth *t, uint32_t id)
{
	return id < t->ncyc ? t->cyc[id] : 0;
}

void truth_cycle_totals(const struct truth *t, uint64_t *own, uint64_t *unlisted, uint64_t *other)
{
	*own = *unlisted = *other = 0;
	for (uint32_t i = 0; i < t->ncyc; i++) {
		if (i < t->cap && t->runs[i].bi) {
			*own += t->cyc[i];
			if (!rc_execs(t, i))
				*unlisted += t->cyc[i];
		} else {
			*other += t->cyc[i];
		}
	}
}

int truth_function_cycles(struct truth *t, const struct symtab *st, uint64_t **cycles, uint64_t *unknown)
{
	size_t nf = symtab_count(st);
	*cycles = calloc(nf + 1, sizeof(uint64_t));
	if (!*cycles)
		return PMUSIM_ERR_NOMEM;
	*unknown = 0;
	for (uint32_t i = 0; i < t->cap && i < t->ncyc; i++) {
		if (!t->runs[i].bi || !t->cyc[i])
			continue;
		const struct sym *s = symtab_lookup(st, t->runs[i].bi->term);
		if (s)
			(*cycles)[s - symtab_at(st, 0)] += t->cyc[i];
		else
			*unknown += t->cyc[i];
	}
	return 0;
}
