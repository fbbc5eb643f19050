/* Call stacks in the machine (see sim.h, "Call stacks"): the OS side of the
 * thread-stack unit (work areas in reserved guest memory, the unit told about
 * threads as they come and go) and the true call stack of every thread, kept
 * independently of the unit for validation. */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/err.h"
#include "common/grow.h"
#include "pmu_model/tstack.h"
#include "sim/sim_internal.h"

/* Work areas live from AREAS_BASE up, far below MMAP_TOP where mmap hands
 * out addresses top-down: the program never gets them from mmap (a hint there
 * is ignored, MAP_FIXED fails), and it cannot touch them (no access rights). */

struct area_map {
	uint32_t tid;
	struct proc *proc;
	uint64_t addr, size;
	void *host;                /* the same bytes, mapped into the engine */
};

/* The true stack of one thread: calls in progress, the lowest slot last. */
struct frame {
	uint64_t slot, ret;
	uint64_t seq;              /* calls made before it, all threads */
};

struct shadow {
	uint32_t tid;
	struct frame *f;
	size_t n, cap;
};

struct sim_stacks {
	struct tstack_unit *unit;
	struct area_map *maps;
	size_t nmaps, capmaps;
	uint64_t next_addr;
	int truth;
	uint64_t calls;            /* calls seen by the truth */
	uint64_t since;            /* the true stacks hold the calls from this one on */
	struct shadow *sh;
	size_t nsh, capsh, cur;
};

static struct sim_stacks *stacks_of(struct sim *s)
{
	if (!s->stacks) {
		s->stacks = calloc(1, sizeof(*s->stacks));
		if (s->stacks) {
			s->stacks->next_addr = AREAS_BASE;
			s->stacks->cur = SIZE_MAX;
		}
	}
	return s->stacks;
}

static struct thread *live_thread(struct sim *s, uint32_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid && s->threads[i].state != TS_EXITED)
			return &s->threads[i];
	return NULL;
}

/* --- the OS side of the unit ------------------------------------------------ */

static struct area_map *map_of(struct sim_stacks *st, uint64_t addr)
{
	for (size_t i = 0; i < st->nmaps; i++)
		if (st->maps[i].addr == addr)
			return &st->maps[i];
	return NULL;
}

static int map_area(struct sim *s, struct tstack_area *a, uint64_t length)
{
	struct sim_stacks *st = s->stacks;
	struct thread *t = live_thread(s, a->tid);
	if (!t)
		return PMUSIM_ERR_ARG;
	struct area_map *nm = grow_array(st->maps, &st->capmaps, st->nmaps + 1, sizeof(*nm));
	if (!nm)
		return PMUSIM_ERR_NOMEM;
	st->maps = nm;
	uint64_t size = PAGE_UP(length * TSTACK_ENTRY_SIZE);
	void *host = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (host == MAP_FAILED)
		return PMUSIM_ERR_NOMEM;
	uint64_t addr = st->next_addr;
	if (addr + size > AREAS_END) {
		munmap(host, size);
		return PMUSIM_ERR_NOMEM;
	}
	if (t->proc->uc && uc_mem_map_ptr(t->proc->uc, addr, size, UC_PROT_NONE, host) != UC_ERR_OK) {
		munmap(host, size);
		return PMUSIM_ERR_EMU;
	}
	st->next_addr += size;
	st->maps[st->nmaps++] = (struct area_map){a->tid, t->proc, addr, size, host};
	a->start = addr;
	a->length = length;
	a->mem = host;
	return 0;
}

static void unmap_area(struct sim *s, uint64_t addr)
{
	struct sim_stacks *st = s->stacks;
	struct area_map *m = map_of(st, addr);
	if (!m)
		return;
	if (m->proc->uc)
		uc_mem_unmap(m->proc->uc, m->addr, m->size);
	munmap(m->host, m->size);
	*m = st->maps[--st->nmaps];
}

static int os_alloc(void *ctx, struct tstack_area *a, uint64_t length)
{
	return map_area(ctx, a, length);
}

/* Overflow: a larger area elsewhere, the entries copied, the old one freed. */
static int os_grow(void *ctx, struct tstack_area *a, uint64_t new_length)
{
	struct tstack_area old = *a;
	int err = map_area(ctx, a, new_length);
	if (err < 0) {
		*a = old;
		return err;
	}
	memcpy(a->mem, old.mem, old.top * sizeof(*a->mem));
	unmap_area(ctx, old.start);
	return 0;
}

static void os_release(void *ctx, struct tstack_area *a)
{
	unmap_area(ctx, a->start);
	a->mem = NULL;
}

int sim_tstack_new(struct sim *s, const struct tstack_config *cfg, struct tstack_unit **out)
{
	struct sim_stacks *st = stacks_of(s);
	if (!st || st->unit)
		return st ? PMUSIM_ERR_ARG : PMUSIM_ERR_NOMEM;
	int err = tstack_new(cfg, (struct tstack_os){os_alloc, os_grow, os_release, s}, &st->unit);
	if (err < 0)
		return err;
	if ((err = bstream_add_sink(s->bs, tstack_sink(st->unit))) < 0)
		return err;
	bstream_want_sp(s->bs);
	for (size_t i = 0; i < s->nthreads && err >= 0; i++) /* the threads there are */
		if (s->threads[i].state != TS_EXITED)
			err = tstack_thread_created(st->unit, s->threads[i].tid, 0);
	*out = st->unit;
	return err;
}

size_t sim_threads(struct sim *s, struct sim_thread_info *out, size_t max)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nthreads && n < max; i++) {
		const struct thread *t = &s->threads[i];
		if (t->state != TS_EXITED)
			out[n++] = (struct sim_thread_info){t->tid, t->proc->pid, i == s->cur, t->resume_pc};
	}
	return n;
}

int sim_thread_user_regs(struct sim *s, uint32_t tid, uint64_t regs[24])
{
	/* perf_regs.h (x86): AX BX CX DX SI DI BP SP IP FLAGS CS SS DS ES FS GS R8..R15 */
	static const int uc_reg[24] = {
		UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RSI,
		UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP, UC_X86_REG_RIP, UC_X86_REG_EFLAGS,
		UC_X86_REG_CS, UC_X86_REG_SS, UC_X86_REG_DS, UC_X86_REG_ES, UC_X86_REG_FS, UC_X86_REG_GS,
		UC_X86_REG_R8, UC_X86_REG_R9, UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12,
		UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15,
	};
	struct thread *t = live_thread(s, tid);
	if (!t)
		return PMUSIM_ERR_ARG;
	for (int i = 0; i < 24; i++) {
		uint64_t v = 0;
		if (t == cur_thread(s))
			uc_reg_read(s->p->uc, uc_reg[i], &v);
		else
			uc_context_reg_read(t->regs, uc_reg[i], &v);
		regs[i] = i >= 9 && i < 16 ? v & 0xffffffffu : v;
	}
	if (t != cur_thread(s))
		regs[8] = t->resume_pc;
	return 0;
}

int sim_read_memory(struct sim *s, uint32_t tid, uint64_t addr, void *buf, size_t len)
{
	struct thread *t = live_thread(s, tid);
	if (!t || !t->proc->uc || uc_mem_read(t->proc->uc, addr, buf, len) != UC_ERR_OK)
		return PMUSIM_ERR_ARG;
	return 0;
}

/* --- the true stacks ------------------------------------------------------- */

static struct shadow *shadow_of(struct sim_stacks *st, uint32_t tid, int create)
{
	if (st->cur != SIZE_MAX && st->sh[st->cur].tid == tid)
		return &st->sh[st->cur];
	for (size_t i = 0; i < st->nsh; i++)
		if (st->sh[i].tid == tid)
			return &st->sh[st->cur = i];
	if (!create)
		return NULL;
	struct shadow *ns = grow_array(st->sh, &st->capsh, st->nsh + 1, sizeof(*ns));
	if (!ns)
		return NULL;
	st->sh = ns;
	st->sh[st->nsh] = (struct shadow){.tid = tid};
	return &st->sh[st->cur = st->nsh++];
}

static int shadow_push(struct shadow *sh, uint64_t slot, uint64_t ret, uint64_t seq)
{
	struct frame *f = grow_array(sh->f, &sh->cap, sh->n + 1, sizeof(*f));
	if (!f)
		return PMUSIM_ERR_NOMEM;
	sh->f = f;
	sh->f[sh->n++] = (struct frame){slot, ret, seq};
	return 0;
}

/* Every call writes its return address at a slot of the stack; a frame is
 * alive while its slot is at or above the stack pointer and still holds that
 * address. The list only drops what can no longer be alive: slots at or below
 * a new call's, and slots below RSP after a ret or an indirect jump. */
static void truth_retire(void *ctx, const struct retired_block *rb)
{
	struct sim *s = ctx;
	int k = rb->kind;
	if (k != BK_CALL && k != BK_CALL_IND && k != BK_RET && k != BK_JMP_IND)
		return;
	struct shadow *sh = shadow_of(s->stacks, rb->tid, 1);
	if (!sh)
		return;
	int call = k == BK_CALL || k == BK_CALL_IND;
	while (sh->n > 0 && (call ? sh->f[sh->n - 1].slot <= rb->sp : sh->f[sh->n - 1].slot < rb->sp))
		sh->n--;
	if (call)
		shadow_push(sh, rb->sp, rb->info->end, s->stacks->calls++);
}

int sim_track_true_stacks(struct sim *s)
{
	struct sim_stacks *st = stacks_of(s);
	if (!st)
		return PMUSIM_ERR_NOMEM;
	st->truth = 1;
	bstream_want_sp(s->bs);
	return bstream_add_sink(s->bs, (struct block_sink){truth_retire, s});
}

void sim_true_stacks_start(struct sim *s)
{
	if (s->stacks)
		s->stacks->since = s->stacks->calls;
}

int sim_true_stack(struct sim *s, uint32_t tid, uint64_t *rets, size_t max, size_t *n)
{
	*n = 0;
	struct thread *t = live_thread(s, tid);
	if (!t || !s->stacks || !s->stacks->truth)
		return PMUSIM_ERR_ARG;
	uint64_t rsp = 0;
	if (t == cur_thread(s))
		uc_reg_read(s->p->uc, UC_X86_REG_RSP, &rsp);
	else
		uc_context_reg_read(t->regs, UC_X86_REG_RSP, &rsp);
	struct shadow *sh = shadow_of(s->stacks, tid, 0);
	for (size_t i = sh ? sh->n : 0; i > 0 && *n < max; i--) {
		const struct frame *f = &sh->f[i - 1];
		uint64_t v = 0;
		if (f->seq < s->stacks->since)
			continue; /* made before tracking started */
		if (f->slot < rsp || uc_mem_read(t->proc->uc, f->slot, &v, 8) != UC_ERR_OK || v != f->ret)
			continue; /* popped, or overwritten since */
		rets[(*n)++] = v;
	}
	return 0;
}

/* --- threads coming and going ---------------------------------------------- */

void stacks_thread_created(struct sim *s, uint32_t tid, uint32_t copy_from)
{
	struct sim_stacks *st = s->stacks;
	if (!st)
		return;
	if (st->unit)
		tstack_thread_created(st->unit, tid, copy_from);
	struct shadow *from = copy_from ? shadow_of(st, copy_from, 0) : NULL;
	size_t fi = from ? (size_t)(from - st->sh) : 0;
	struct shadow *sh = st->truth ? shadow_of(st, tid, 1) : NULL;
	if (sh && from) {
		from = &st->sh[fi];
		sh->n = 0;
		for (size_t i = 0; i < from->n; i++)
			shadow_push(sh, from->f[i].slot, from->f[i].ret, from->f[i].seq);
	}
}

void stacks_thread_exited(struct sim *s, uint32_t tid)
{
	struct sim_stacks *st = s->stacks;
	if (!st)
		return;
	if (st->unit)
		tstack_thread_exited(st->unit, tid);
	struct shadow *sh = shadow_of(st, tid, 0);
	if (sh) {
		free(sh->f);
		*sh = st->sh[--st->nsh];
		st->cur = SIZE_MAX;
	}
}

void stacks_exec(struct sim *s, struct proc *p, uint32_t tid)
{
	struct sim_stacks *st = s->stacks;
	if (!st)
		return;
	for (size_t i = 0; i < st->nmaps; i++) /* the areas stay where they were */
		if (st->maps[i].proc == p)
			uc_mem_map_ptr(p->uc, st->maps[i].addr, st->maps[i].size, UC_PROT_NONE, st->maps[i].host);
	if (st->unit)
		tstack_thread_reset(st->unit, tid);
	struct shadow *sh = shadow_of(st, tid, 0);
	if (sh)
		sh->n = 0;
}

void stacks_free(struct sim *s)
{
	struct sim_stacks *st = s->stacks;
	if (!st)
		return;
	tstack_free(st->unit); /* releases the areas */
	for (size_t i = 0; i < st->nsh; i++)
		free(st->sh[i].f);
	free(st->sh);
	free(st->maps);
	free(st);
	s->stacks = NULL;
}
