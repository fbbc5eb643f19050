/* The REP unit (see pmu_model/rep.h). */
#include "pmu_model/rep.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

struct rep_unit {
	struct rep_config cfg;
	struct rep_handler h;
	uint64_t rcr;           /* repeat-count register */
	uint64_t exec_ctr;      /* REP-execution counter */
	uint64_t occurrences;   /* REP-occurrence counter (counts up; overflows every 1) */
	uint64_t interrupts;
	uint64_t insns;         /* instructions retired so far */
	/* instruction-information buffer: start and end pointers, full flag */
	struct rep_record *ib;
	uint32_t start, end;
	int full;
	/* the in-memory variant: bytes, buffer-pointer, IB-size and next-entry registers */
	uint8_t *mem;
	uint64_t bp, ibsize, next;
};

static const char *const mode_names[REP_MODE_COUNT] = {"first", "last", "buffer", "membuffer", "counter",
								  "patch"};

int rep_mode_parse(const char *name)
{
	for (int i = 0; i < REP_MODE_COUNT; i++)
		if (strcmp(name, mode_names[i]) == 0)
			return i;
	return -1;
}

const char *rep_mode_name(int mode)
{
	return mode >= 0 && mode < REP_MODE_COUNT ? mode_names[mode] : "?";
}

static int buffered(const struct rep_unit *u)
{
	return u->cfg.mode == REP_BUFFER || u->cfg.mode == REP_MEMBUFFER;
}

int rep_unit_new(const struct rep_config *cfg, struct rep_handler h, struct rep_unit **out)
{
	*out = NULL;
	if ((unsigned)cfg->mode >= REP_PATCH)
		return PMUSIM_ERR_ARG;
	struct rep_unit *u = calloc(1, sizeof(*u));
	if (!u)
		return PMUSIM_ERR_NOMEM;
	u->cfg = *cfg;
	u->h = h;
	if (buffered(u)) {
		if (cfg->entries == 0) {
			free(u);
			return PMUSIM_ERR_ARG;
		}
		u->ib = calloc(cfg->entries, sizeof(*u->ib));
		if (cfg->mode == REP_MEMBUFFER) {
			u->ibsize = (uint64_t)cfg->entries * REP_MEM_ENTRY;
			u->bp = REP_MEM_BASE;
			u->mem = calloc(cfg->entries, REP_MEM_ENTRY);
		}
		if (!u->ib || (cfg->mode == REP_MEMBUFFER && !u->mem)) {
			free(u->ib);
			free(u->mem);
			free(u);
			return PMUSIM_ERR_NOMEM;
		}
	}
	*out = u;
	return 0;
}

void rep_unit_free(struct rep_unit *u)
{
	if (!u)
		return;
	free(u->ib);
	free(u->mem);
	free(u);
}

static void interrupt(struct rep_unit *u, const struct rep_record *r, size_t n)
{
	u->interrupts++;
	if (u->h.interrupt && n)
		u->h.interrupt(u->h.ctx, r, n);
}

/* The full-flag interrupt: the handler drains start..end and resets the pointers. */
/* One entry in memory (layout in rep.h). */
static void mem_store(uint8_t *p, const struct rep_record *r)
{
	memset(p, 0, REP_MEM_ENTRY);
	p[0] = r->kind, p[1] = r->end, p[2] = r->has_actual, p[3] = r->resumed;
	memcpy(p + 4, &r->tid, 4);
	memcpy(p + 8, &r->site, 8);
	memcpy(p + 16, &r->to, 8);
	memcpy(p + 24, &r->requested, 8);
	memcpy(p + 32, &r->actual, 8);
	memcpy(p + 40, &r->insn, 8);
}

static void mem_load(const uint8_t *p, struct rep_record *r)
{
	memset(r, 0, sizeof(*r));
	r->kind = p[0], r->end = p[1], r->has_actual = p[2], r->resumed = p[3];
	memcpy(&r->tid, p + 4, 4);
	memcpy(&r->site, p + 8, 8);
	memcpy(&r->to, p + 16, 8);
	memcpy(&r->requested, p + 24, 8);
	memcpy(&r->actual, p + 32, 8);
	memcpy(&r->insn, p + 40, 8);
}

static void drain(struct rep_unit *u)
{
	if (u->mem) { /* the handler reads the entries from memory and resets next-entry */
		uint32_t n = (uint32_t)(u->next / REP_MEM_ENTRY);
		if (n == 0)
			return;
		for (uint32_t i = 0; i < n; i++)
			mem_load(u->mem + (size_t)i * REP_MEM_ENTRY, &u->ib[i]);
		interrupt(u, u->ib, n);
		u->next = 0;
		u->full = 0;
		return;
	}
	uint32_t n = u->full ? u->cfg.entries : u->end - u->start;
	if (n == 0)
		return;
	interrupt(u, u->ib + u->start, n);
	u->start = u->end = 0;
	u->full = 0;
}

static void buffer_put(struct rep_unit *u, const struct rep_record *r)
{
	if (u->mem) {
		mem_store(u->mem + u->next, r);
		u->next += REP_MEM_ENTRY;
		if (u->next + REP_MEM_ENTRY > u->ibsize) {
			u->full = 1;
			drain(u);
		}
		return;
	}
	u->ib[u->end++] = *r;
	if (u->end == u->cfg.entries) {
		u->full = 1;
		drain(u);
	}
}

/* SSE: a trap after every iteration of this part, the handler reading the count
 * register (before the iteration) and the iteration's index in its execution. */
static void single_steps(struct rep_unit *u, const struct retired_block *rb, uint64_t at)
{
	uint64_t before = rb->rep_left + rb->rep_iters; /* the count when the part began */
	for (uint64_t i = 0; i < rb->rep_iters; i++) {
		struct rep_record st = {.kind = REP_ENTRY_STEP, .tid = rb->tid, .site = rb->info->term,
					.requested = before - i, .actual = rb->rep_count - before + i, .insn = at};
		if (buffered(u))
			buffer_put(u, &st);
		else
			interrupt(u, &st, 1);
	}
}

static void on_rep(struct rep_unit *u, const struct retired_block *rb, uint64_t at)
{
	int sse = (u->cfg.control & REP_F_SSE) != 0;
	int first = !(rb->rep_part & RB_REP_RESUMED);
	struct rep_record r = {0};
	r.kind = REP_ENTRY_REP;
	r.tid = rb->tid;
	r.site = rb->info->term;
	r.insn = at;
	/* a first execution copies the count register into RCR; a continuation finds
	 * RCR as the operating system restored it with the thread's context */
	u->rcr = rb->rep_count;
	r.requested = u->rcr;
	if (first)
		u->occurrences++;
	if (u->cfg.mode == REP_FIRST) {
		if (first)
			interrupt(u, &r, 1); /* the handler reads RCR; the end is not known yet */
		if (sse)
			single_steps(u, rb, at);
		u->exec_ctr = rb->rep_iters;
		return;
	}
	if (sse)
		single_steps(u, rb, at);
	/* the REP retired (RCR - count = iterations done) or was left in the middle */
	u->exec_ctr = rb->rep_iters;
	r.actual = rb->rep_iters;
	r.has_actual = 1;
	r.resumed = (uint8_t)!first;
	if (rb->rep_part & RB_REP_LEFT)
		r.end = REP_END_INTERRUPTED;
	else
		r.end = rb->rep_left ? REP_END_CONDITION : REP_END_COUNT;
	if (buffered(u))
		buffer_put(u, &r);
	else
		interrupt(u, &r, 1); /* REP_LAST, REP_COUNTER: the handler reads RCR and the counter */
}

static void rep_retire(void *ctx, const struct retired_block *rb)
{
	struct rep_unit *u = ctx;
	const struct block_info *bi = rb->info;
	/* the instructions retired before the REP (or the branch) */
	uint64_t before_term = u->insns + (rb->kind != BK_NONE && rb->ninsns ? rb->ninsns - 1 : rb->ninsns);
	u->insns += rb->ninsns;
	if (!(u->cfg.control & REP_F_RE))
		return;
	if (rb->rep_part & RB_REP_RAN)
		on_rep(u, rb, before_term);
	else if ((u->cfg.control & REP_F_TBE) && buffered(u) && br_kind_is_branch(rb->kind) && rb->taken) {
		struct rep_record r = {.kind = REP_ENTRY_BRANCH, .tid = rb->tid, .site = bi->term,
				       .to = rb->next, .insn = before_term};
		buffer_put(u, &r);
	}
}

struct block_sink rep_unit_sink(struct rep_unit *u)
{
	return (struct block_sink){.retire = rep_retire, .ctx = u};
}

void rep_unit_flush(struct rep_unit *u)
{
	if (buffered(u))
		drain(u);
}

uint64_t rep_unit_rcr(const struct rep_unit *u) { return u->rcr; }
uint64_t rep_unit_exec_counter(const struct rep_unit *u) { return u->exec_ctr; }
uint64_t rep_unit_occurrences(const struct rep_unit *u) { return u->occurrences; }
uint64_t rep_unit_interrupts(const struct rep_unit *u) { return u->interrupts; }
uint32_t rep_unit_buffer_fill(const struct rep_unit *u)
{
	if (u->mem)
		return (uint32_t)(u->next / REP_MEM_ENTRY);
	return u->full ? u->cfg.entries : u->end - u->start;
}

const uint8_t *rep_unit_memory(const struct rep_unit *u, uint64_t *bp, uint64_t *ibsize, uint64_t *next)
{
	*bp = u->bp, *ibsize = u->ibsize, *next = u->next;
	return u->mem;
}
