/* The thread-stack unit (see pmu_model/tstack.h). */
#include "pmu_model/tstack.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"

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
	uint64_t *funcs;            /* function entries, sorted when funcs_sorted */
	size_t nfuncs, capfuncs;
	int funcs_sorted;
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

static void release_area(struct tstack_unit *u, struct tstack_area *a)
{
	if (u->os.release)
		u->os.release(u->os.ctx, a);
	else if (!u->os.alloc)
		free(a->mem);
	a->mem = NULL;
}

void tstack_free(struct tstack_unit *u)
{
	if (!u)
		return;
	for (size_t i = 0; i < u->nareas; i++)
		release_area(u, &u->areas[i]);
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
	uint64_t *nf = grow_array(u->funcs, &u->capfuncs, u->nfuncs + 1, sizeof(*nf));
	if (!nf)
		return PMUSIM_ERR_NOMEM;
	u->funcs = nf;
	u->funcs[u->nfuncs++] = entry;
	u->funcs_sorted = 0;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int is_function(struct tstack_unit *u, uint64_t a)
{
	if (!u->funcs_sorted) {
		arrays_sort(u->funcs, u->nfuncs, sizeof(*u->funcs), cmp_u64);
		u->funcs_sorted = 1;
	}
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

int tstack_marker_at(const struct tstack_unit *u, uint64_t addr)
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
	arrays_copy(m, a->mem, a->top, sizeof(*m)); /* the entries move to the new area */
	free(a->mem);
	a->mem = m;
	a->start = u->next_start;
	a->length = new_length;
	u->next_start += new_length * sizeof(*m);
	return 0;
}

static struct tstack_area *find_area(struct tstack_unit *u, uint32_t tid, size_t *idx)
{
	for (size_t i = 0; i < u->nareas; i++)
		if (u->areas[i].tid == tid) {
			*idx = i;
			return &u->areas[i];
		}
	return NULL;
}

/* A new area from the OS, of the size the tracer asked for. */
static struct tstack_area *new_area(struct tstack_unit *u, uint32_t tid)
{
	struct tstack_area *na = grow_array(u->areas, &u->capareas, u->nareas + 1, sizeof(*na));
	if (!na)
		return NULL;
	u->areas = na;
	struct tstack_area *a = &u->areas[u->nareas];
	memset(a, 0, sizeof(*a));
	a->tid = tid;
	int err = u->os.alloc ? u->os.alloc(u->os.ctx, a, u->cfg.area_entries) : heap_alloc(u, a, u->cfg.area_entries);
	if (err < 0)
		return NULL;
	u->nareas++;
	return a;
}

/* The current-area register follows the running thread; a thread that runs
 * without an area (one that existed before tracking) gets one now. */
static struct tstack_area *area_for(struct tstack_unit *u, uint32_t tid)
{
	if (u->cur != SIZE_MAX && u->areas[u->cur].tid == tid)
		return &u->areas[u->cur];
	size_t i;
	struct tstack_area *a = find_area(u, tid, &i);
	if (!a && (a = new_area(u, tid)) != NULL)
		i = u->nareas - 1;
	if (a)
		u->cur = i;
	return a;
}

static int grow_area(struct tstack_unit *u, struct tstack_area *a, uint64_t nl)
{
	return u->os.grow ? u->os.grow(u->os.ctx, a, nl) : heap_grow(u, a, nl);
}

static void push(struct tstack_unit *u, struct tstack_area *a, uint64_t callee, uint64_t ret, uint64_t sp,
		 uint64_t bits)
{
	if (a->top == a->length) {
		/* overflow interrupt: the OS moves the area to a larger one */
		u->overflows++;
		uint64_t nl = a->length * 2;
		int err = grow_area(u, a, nl);
		if (err < 0)
			return;
	}
	a->mem[a->top++] = (struct tstack_entry){callee, ret, sp, (u->insns & TSTACK_STAMP_MASK) | bits};
}

/* Entries whose return-address slot lies below the stack pointer sp are
 * frames that are gone (sp 0: not known, the newest one goes). */
static void unwind_to(struct tstack_area *a, uint64_t sp)
{
	if (!sp) {
		if (a->top > 0)
			a->top--;
		return;
	}
	while (a->top > 0 && a->mem[a->top - 1].sp < sp)
		a->top--;
}

/* A ret to `to` leaving RSP at sp: when it returns through one of the frames
 * (same return address, or none known: a marker's frame; slot below the new
 * RSP), every frame whose slot is below the new RSP is gone; without RSP, the
 * newest such frame and those above it. A ret that matches no frame changes
 * nothing. */
static void ret_to(struct tstack_area *a, uint64_t to, uint64_t sp)
{
	for (uint64_t i = a->top; i > 0; i--) {
		const struct tstack_entry *e = &a->mem[i - 1];
		if ((e->ret == to || (!e->ret && sp)) && (!sp || e->sp < sp)) {
			if (sp)
				unwind_to(a, sp);
			else
				a->top = i - 1;
			return;
		}
	}
}

/* A marker at addr (a call or a return whatever the instruction is); next:
 * where execution went on, sp: RSP after it (0: not known). */
static void apply_mark(struct tstack_unit *u, struct tstack_area *a, int mark, uint64_t addr, uint64_t next,
		       uint64_t sp)
{
	if (mark == TSTACK_MARK_CALL)
		push(u, a, next, 0, sp, 0);
	else if (u->cfg.mode == TSTACK_HISTORY)
		push(u, a, addr, next, sp, TSTACK_EXIT_BIT | TSTACK_UNWIND_BIT);
	else
		unwind_to(a, sp);
}

void tstack_mark_retired(struct tstack_unit *u, uint32_t tid, uint64_t addr, uint64_t next, uint64_t sp)
{
	int mark = tstack_marker_at(u, addr);
	struct tstack_area *a = u->enabled && mark >= 0 ? area_for(u, tid) : NULL;
	if (a)
		apply_mark(u, a, mark, addr, next, sp);
}

/* The newest signal frame's index + 1, or 0 when there is none. */
static uint64_t newest_signal(const struct tstack_area *a)
{
	for (uint64_t i = a->top; i > 0; i--)
		if (a->mem[i - 1].stamp & TSTACK_SIGNAL_BIT)
			return i;
	return 0;
}

/* rt_sigreturn in a stack: back to the interrupted code. */
static void signal_return_to(struct tstack_area *a, uint64_t sp)
{
	uint64_t i = newest_signal(a);
	if (i)
		a->top = i - 1;
	else
		unwind_to(a, sp); /* the delivery came before tracking did */
}

void tstack_signal_enter(struct tstack_unit *u, const struct tstack_signal *sig)
{
	struct tstack_area *a = u->enabled ? area_for(u, sig->tid) : NULL;
	if (!a)
		return;
	/* the interrupted frame: its "return address" is where the interrupt came from */
	push(u, a, sig->restorer, sig->ip, sig->ip_slot, TSTACK_SIGNAL_BIT);
	push(u, a, sig->handler, sig->restorer, sig->frame, 0);
}

void tstack_signal_return(struct tstack_unit *u, uint32_t tid, uint64_t ip, uint64_t sp)
{
	struct tstack_area *a = u->enabled ? area_for(u, tid) : NULL;
	if (!a)
		return;
	if (u->cfg.mode == TSTACK_HISTORY)
		push(u, a, 0, ip, sp, TSTACK_EXIT_BIT | TSTACK_SIGNAL_BIT);
	else
		signal_return_to(a, sp);
}

/* A retired block, its instructions counted. */
static void retire_counted(struct tstack_unit *u, const struct retired_block *rb)
{
	const struct block_info *bi = rb->info;
	if (!u->enabled || rb->ninsns == 0)
		return;
	struct tstack_area *a = area_for(u, rb->tid);
	if (!a)
		return;
	int kind = rb->kind, mark = u->nmarks && br_kind_is_branch(kind) ? tstack_marker_at(u, bi->term) : -1;
	int hist = u->cfg.mode == TSTACK_HISTORY;
	if (mark >= 0) {
		/* a marked branch is what the marker says, not what it is */
		apply_mark(u, a, mark, bi->term, rb->next, rb->sp);
	} else if (kind == BK_CALL || kind == BK_CALL_IND) {
		push(u, a, rb->next, bi->end, rb->sp, 0);
	} else if (kind == BK_RET) {
		if (hist)
			push(u, a, bi->term, rb->next, rb->sp, TSTACK_EXIT_BIT);
		else
			ret_to(a, rb->next, rb->sp);
	} else if (kind == BK_JMP || kind == BK_JMP_IND) {
		if (kind == BK_JMP_IND && rb->sp) {
			/* longjmp: the frames below the new RSP are gone */
			if (hist)
				push(u, a, bi->term, rb->next, rb->sp, TSTACK_EXIT_BIT | TSTACK_UNWIND_BIT);
			else
				unwind_to(a, rb->sp);
		}
		if (u->nfuncs && is_function(u, rb->next)) {
			/* a tail call: the routine on top is replaced by the one jumped to */
			if (hist)
				push(u, a, rb->next, 0, rb->sp, TSTACK_TAIL_BIT);
			else if (a->top > 0)
				a->mem[a->top - 1].callee = rb->next;
		}
	}
}

static void tstack_retire(void *ctx, const struct retired_block *rb)
{
	struct tstack_unit *u = ctx;
	u->insns += rb->ninsns;
	retire_counted(u, rb);
}

/* A whole block: only transfers other than a Jcc change a stack (a Jcc too
 * when markers may make it something else), and the running thread's area
 * exists already. */
static void tstack_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
			 unsigned flags)
{
	struct tstack_unit *u = ctx;
	int kind = bi->kind;
	u->insns += bi->ninsns;
	if (!u->enabled)
		return;
	if ((!br_kind_is_branch(kind) || (kind == BK_COND && !u->nmarks)) && u->cur != SIZE_MAX &&
	    u->areas[u->cur].tid == tid)
		return;
	struct retired_block rb;
	retired_block_whole(&rb, bi, next, sp, tid, flags);
	retire_counted(u, &rb);
}

int tstack_replay(struct tstack_area *st, const struct tstack_entry *rec, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		const struct tstack_entry *r = &rec[i];
		if (r->stamp & TSTACK_EXIT_BIT) {
			if (r->stamp & TSTACK_SIGNAL_BIT)
				signal_return_to(st, r->sp);
			else if (r->stamp & TSTACK_UNWIND_BIT)
				unwind_to(st, r->sp);
			else
				ret_to(st, r->ret, r->sp);
		} else if (r->stamp & TSTACK_TAIL_BIT) {
			if (st->top > 0)
				st->mem[st->top - 1].callee = r->callee;
		} else {
			size_t cap = (size_t)st->length;
			struct tstack_entry *m = grow_array(st->mem, &cap, (size_t)st->top + 1, sizeof(*m));
			if (!m)
				return PMUSIM_ERR_NOMEM;
			st->mem = m;
			st->length = cap;
			st->mem[st->top++] = *r;
		}
	}
	return 0;
}

int tstack_thread_created(struct tstack_unit *u, uint32_t tid, uint32_t copy_from)
{
	size_t i;
	if (find_area(u, tid, &i))
		return 0;
	const struct tstack_area *from = copy_from ? find_area(u, copy_from, &i) : NULL;
	size_t fi = from ? i : 0;
	struct tstack_area *a = new_area(u, tid);
	if (!a)
		return PMUSIM_ERR_NOMEM;
	if (from) {
		from = &u->areas[fi]; /* new_area may have moved the array */
		while (a->length < from->top) {
			int err = grow_area(u, a, a->length * 2);
			if (err < 0)
				return err;
		}
		memcpy(a->mem, from->mem, from->top * sizeof(*a->mem));
		a->top = from->top;
	}
	return 0;
}

void tstack_thread_reset(struct tstack_unit *u, uint32_t tid)
{
	size_t i;
	struct tstack_area *a = find_area(u, tid, &i);
	if (a)
		a->top = 0;
}

void tstack_thread_exited(struct tstack_unit *u, uint32_t tid)
{
	size_t i;
	struct tstack_area *a = find_area(u, tid, &i);
	if (!a)
		return;
	release_area(u, a);
	arrays_move(&u->areas[i], &u->areas[i + 1], u->nareas - i - 1, sizeof(*a));
	u->nareas--;
	u->cur = SIZE_MAX;
}

struct block_sink tstack_sink(struct tstack_unit *u)
{
	return (struct block_sink){.retire = tstack_retire, .ctx = u, .whole = tstack_whole};
}

const struct tstack_area *tstack_area(const struct tstack_unit *u, uint32_t tid)
{
	size_t i;
	return find_area((struct tstack_unit *)u, tid, &i);
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
