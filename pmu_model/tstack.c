/* The thread-stack unit (see pmu_model/tstack.h). */
#include "pmu_model/tstack.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define HEAP_BASE 0x7ed000000000ULL /* nominal addresses of areas the unit allocates itself */

struct mark {
	uint64_t addr;
	int kind;
};

struct tstack_unit {
	struct tstack_config cfg;
	struct tstack_os os;
	int enabled;
	struct tstack_area *areas;
	size_t nareas, capareas;
	size_t cur;                 /* current-area register (index), SIZE_MAX before any */
	uint64_t insns;
	uint64_t overflows;
	uint64_t next_start;        /* for areas the unit allocates itself */
	struct mark *marks;
	size_t nmarks;
	uint64_t *funcs;            /* sorted function entries */
	size_t nfuncs;
};

int tstack_new(const struct tstack_config *cfg, struct tstack_os os, struct tstack_unit **out)
{
	*out = NULL;
	if (cfg->area_entries == 0 || (cfg->mode != TSTACK_STACK && cfg->mode != TSTACK_HISTORY))
		return PMUSIM_ERR_ARG;
	struct tstack_unit *u = calloc(1, sizeof(*u));
	if (!u)
		return PMUSIM_ERR_NOMEM;
	u->cfg = *cfg;
	u->os = os;
	u->enabled = cfg->enabled;
	u->cur = SIZE_MAX;
	u->next_start = HEAP_BASE;
	*out = u;
	return 0;
}

void tstack_free(struct tstack_unit *u)
{
	if (!u)
		return;
	if (!u->os.alloc)
		for (size_t i = 0; i < u->nareas; i++)
			free(u->areas[i].mem);
	free(u->areas);
	free(u->marks);
	free(u->funcs);
	free(u);
}

void tstack_enable(struct tstack_unit *u, int on)
{
	u->enabled = on;
}

int tstack_add_marker(struct tstack_unit *u, uint64_t addr, enum tstack_marker kind)
{
	struct mark *nm = realloc(u->marks, (u->nmarks + 1) * sizeof(*nm));
	if (!nm)
		return PMUSIM_ERR_NOMEM;
	u->marks = nm;
	u->marks[u->nmarks++] = (struct mark){addr, kind};
	return 0;
}

int tstack_add_function(struct tstack_unit *u, uint64_t entry)
{
	uint64_t *nf = realloc(u->funcs, (u->nfuncs + 1) * sizeof(*nf));
	if (!nf)
		return PMUSIM_ERR_NOMEM;
	u->funcs = nf;
	size_t i = u->nfuncs++;
	while (i > 0 && u->funcs[i - 1] > entry) {
		u->funcs[i] = u->funcs[i - 1];
		i--;
	}
	u->funcs[i] = entry;
	return 0;
}

static int is_function(const struct tstack_unit *u, uint64_t a)
{
	size_t lo = 0, hi = u->nfuncs;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (u->funcs[mid] < a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < u->nfuncs && u->funcs[lo] == a;
}

static int marker_at(const struct tstack_unit *u, uint64_t addr)
{
	for (size_t i = 0; i < u->nmarks; i++)
		if (u->marks[i].addr == addr)
			return u->marks[i].kind;
	return -1;
}

/* The OS's part when the unit allocates for itself. */
static int heap_alloc(struct tstack_unit *u, struct tstack_area *a, uint64_t length)
{
	a->mem = calloc(length, sizeof(*a->mem));
	if (!a->mem)
		return PMUSIM_ERR_NOMEM;
	a->start = u->next_start;
	a->length = length;
	u->next_start += length * sizeof(*a->mem);
	return 0;
}

static int heap_grow(struct tstack_unit *u, struct tstack_area *a, uint64_t new_length)
{
	struct tstack_entry *m = calloc(new_length, sizeof(*m));
	if (!m)
		return PMUSIM_ERR_NOMEM;
	memcpy(m, a->mem, a->top * sizeof(*m)); /* the entries move to the new area */
	free(a->mem);
	a->mem = m;
	a->start = u->next_start;
	a->length = new_length;
	u->next_start += new_length * sizeof(*m);
	return 0;
}

/* The current-area register follows the running thread; a thread that runs
 * for the first time gets its area from the OS. */
static struct tstack_area *area_for(struct tstack_unit *u, uint32_t tid)
{
	if (u->cur != SIZE_MAX && u->areas[u->cur].tid == tid)
		return &u->areas[u->cur];
	for (size_t i = 0; i < u->nareas; i++)
		if (u->areas[i].tid == tid) {
			u->cur = i;
			return &u->areas[i];
		}
	if (u->nareas == u->capareas) {
		size_t nc = u->capareas ? u->capareas * 2 : 8;
		struct tstack_area *na = realloc(u->areas, nc * sizeof(*na));
		if (!na)
			return NULL;
		u->areas = na;
		u->capareas = nc;
	}
	struct tstack_area *a = &u->areas[u->nareas];
	memset(a, 0, sizeof(*a));
	a->tid = tid;
	int err = u->os.alloc ? u->os.alloc(u->os.ctx, a, u->cfg.area_entries) : heap_alloc(u, a, u->cfg.area_entries);
	if (err < 0)
		return NULL;
	u->cur = u->nareas++;
	return a;
}

static void push(struct tstack_unit *u, struct tstack_area *a, uint64_t callee, uint64_t ret, int kind)
{
	if (a->top == a->length) {
		/* overflow interrupt: the OS moves the area to a larger one */
		u->overflows++;
		uint64_t nl = a->length * 2;
		int err = u->os.grow ? u->os.grow(u->os.ctx, a, nl) : heap_grow(u, a, nl);
		if (err < 0)
			return;
	}
	a->mem[a->top++] = (struct tstack_entry){callee, ret, u->insns, (uint8_t)kind};
}

static void pop(struct tstack_unit *u, struct tstack_area *a, uint64_t from)
{
	if (u->cfg.mode == TSTACK_HISTORY) {
		push(u, a, from, 0, TSTACK_EXIT);
		return;
	}
	if (a->top > 0) /* a return with no matching entry changes nothing */
		a->top--;
}

static void tstack_retire(void *ctx, const struct retired_block *rb)
{
	struct tstack_unit *u = ctx;
	const struct block_info *bi = rb->info;
	u->insns += rb->ninsns;
	if (!u->enabled || rb->ninsns == 0)
		return;
	struct tstack_area *a = area_for(u, rb->tid);
	if (!a)
		return;
	int kind = rb->kind, mark = u->nmarks ? marker_at(u, bi->term) : -1;
	if (mark == TSTACK_MARK_CALL && kind != BK_NONE)
		push(u, a, rb->next, 0, TSTACK_ENTRY);
	else if (mark == TSTACK_MARK_RETURN && kind != BK_NONE)
		pop(u, a, bi->term);
	else if (kind == BK_CALL || kind == BK_CALL_IND)
		push(u, a, rb->next, bi->end, TSTACK_ENTRY);
	else if (kind == BK_RET)
		pop(u, a, bi->term);
	else if (kind == BK_JMP && u->nfuncs && is_function(u, rb->next)) {
		/* a tail call: the routine on top is replaced by the one jumped to */
		if (u->cfg.mode == TSTACK_HISTORY) {
			push(u, a, bi->term, 0, TSTACK_EXIT);
			push(u, a, rb->next, 0, TSTACK_ENTRY);
		} else if (a->top > 0) {
			a->mem[a->top - 1].callee = rb->next;
		}
	}
}

struct block_sink tstack_sink(struct tstack_unit *u)
{
	return (struct block_sink){tstack_retire, u};
}

const struct tstack_area *tstack_area(const struct tstack_unit *u, uint32_t tid)
{
	for (size_t i = 0; i < u->nareas; i++)
		if (u->areas[i].tid == tid)
			return &u->areas[i];
	return NULL;
}

const struct tstack_area *tstack_current(const struct tstack_unit *u)
{
	return u->cur == SIZE_MAX ? NULL : &u->areas[u->cur];
}

uint64_t tstack_overflows(const struct tstack_unit *u)
{
	return u->overflows;
}

size_t tstack_nareas(const struct tstack_unit *u)
{
	return u->nareas;
}

const struct tstack_area *tstack_area_at(const struct tstack_unit *u, size_t i)
{
	return i < u->nareas ? &u->areas[i] : NULL;
}
