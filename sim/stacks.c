/* Call stacks in the machine (see sim.h, "Call stacks"): the OS side of the
 * thread-stack unit (work areas in reserved guest memory, the unit told about
 * threads as they come and go, signal deliveries and sigreturns, and marked
 * instructions that are not branches) and the true call stack of every
 * thread, kept apart from the unit as the machine's self-check. */
#include "sim/stacks.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/err.h"
#include "common/grow.h"
#include "pmu_model/tstack.h"
#include "sim/dbr.h"
#include "sim/linux/sched.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

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
	int saved_ip;              /* a signal frame's saved RIP: what the slot holds now counts */
};

/* A marked instruction that is not a branch has run on thread tid; its effect
 * is known once the next instruction (after) is reached with nothing between. */
struct mark_pending {
	uint32_t tid;
	uint64_t addr, after;
	uint64_t insns;            /* retired before it */
	int armed;
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
	uint64_t *marks;           /* marker addresses, hooked in every engine */
	size_t nmarks, capmarks;
	struct mark_pending pending;
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
	/* a rewritten run's unit reads the program's own calls and returns (the
	 * map's stream), not the replacement's pushes and jumps */
	if (s->dbr)
		err = dbr_add_image_sink(s, tstack_sink(st->unit));
	else
		err = bstream_add_sink(s->bs, tstack_sink(st->unit));
	if (err < 0 || (s->dbr && (err = dbr_track_sp(s)) < 0))
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

static int shadow_push(struct shadow *sh, uint64_t slot, uint64_t ret, uint64_t seq, int saved_ip)
{
	struct frame *f = grow_array(sh->f, &sh->cap, sh->n + 1, sizeof(*f));
	if (!f)
		return PMUSIM_ERR_NOMEM;
	sh->f = f;
	sh->f[sh->n++] = (struct frame){slot, ret, seq, saved_ip};
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
		shadow_push(sh, rb->sp, rb->info->end, s->stacks->calls++, 0);
}

int sim_track_true_stacks(struct sim *s)
{
	struct sim_stacks *st = stacks_of(s);
	if (!st)
		return PMUSIM_ERR_NOMEM;
	st->truth = 1;
	bstream_want_sp(s->bs);
	return bstream_add_sink(s->bs, (struct block_sink){.retire = truth_retire, .ctx = s});
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
		if (f->slot < rsp || uc_mem_read(t->proc->uc, f->slot, &v, 8) != UC_ERR_OK ||
		    (v != f->ret && !f->saved_ip))
			continue; /* popped, or overwritten since (a handler may rewrite the saved RIP) */
		rets[(*n)++] = v;
	}
	return 0;
}

/* --- signals ----------------------------------------------------------------- */

void stacks_signal_enter(struct sim *s, uint32_t tid, uint64_t ip, uint64_t frame, uint64_t ip_slot,
			 uint64_t handler)
{
	struct sim_stacks *st = s->stacks;
	if (!st)
		return;
	uint64_t restorer = 0;
	mem_read(s, frame, &restorer, 8); /* the frame's pretcode, written just now */
	if (st->unit) {
		/* interrupted in replacement code: the program's instruction there */
		uint64_t at = sim_dbr_resolve(s, ip);
		struct tstack_signal sig = {tid, at ? at : ip, ip_slot, handler, restorer, frame};
		tstack_signal_enter(st->unit, &sig);
	}
	/* the truth: two more return addresses on the stack, the handler's (the
	 * restorer, at the frame's start) and the interrupted code's (the saved RIP) */
	struct shadow *sh = st->truth ? shadow_of(st, tid, 1) : NULL;
	if (sh) {
		shadow_push(sh, ip_slot, ip, st->calls, 1);
		shadow_push(sh, frame, restorer, st->calls++, 0);
	}
}

void stacks_signal_return(struct sim *s, uint32_t tid, uint64_t ip, uint64_t sp, uint64_t ip_slot)
{
	struct sim_stacks *st = s->stacks;
	if (!st)
		return;
	if (st->unit) {
		uint64_t at = sim_dbr_resolve(s, ip);
		tstack_signal_return(st->unit, tid, at ? at : ip, sp);
	}
	/* rt_sigreturn restores what the frame holding ip_slot saved: every frame
	 * made since that frame was written is gone */
	struct shadow *sh = st->truth ? shadow_of(st, tid, 0) : NULL;
	for (size_t i = sh ? sh->n : 0; i > 0; i--)
		if (sh->f[i - 1].saved_ip && sh->f[i - 1].slot == ip_slot) {
			sh->n = i - 1;
			break;
		}
}

/* --- markers ------------------------------------------------------------------ */

/* Every instruction from a marker's address up to 15 bytes on (the longest
 * x86 instruction) is hooked, so that the one after it is seen too. */
#define MARK_REACH 15

static int marked(const struct sim_stacks *st, uint64_t addr)
{
	for (size_t i = 0; i < st->nmarks; i++)
		if (st->marks[i] == addr)
			return 1;
	return 0;
}

/* The instruction after a marked one is reached: the marker acts now, with
 * the registers as that instruction left them, if nothing ran in between. */
static void mark_settle(struct sim *s, uint64_t addr)
{
	struct sim_stacks *st = s->stacks;
	struct mark_pending *m = &st->pending;
	if (!m->armed || addr != m->after)
		return;
	m->armed = 0;
	machine_refresh_checks(s);
	if (m->tid != cur_thread(s)->tid || bstream_insns_before(s->bs, addr) != m->insns + 1)
		return; /* it faulted, or a signal handler ran first */
	uint64_t sp;
	uc_reg_read(s->p->uc, UC_X86_REG_RSP, &sp);
	tstack_mark_retired(st->unit, m->tid, m->addr, addr, sp);
}

static void hook_mark(uc_engine *uc, uint64_t addr, uint32_t size, void *ud)
{
	struct sim *s = ud;
	struct sim_stacks *st = s->stacks;
	(void)uc, (void)size;
	mark_settle(s, addr);
	const struct block_info *bi;
	uint64_t tb_end;
	if (!marked(st, addr) || !bstream_current(s->bs, &bi, &tb_end))
		return;
	int i = block_insn_index(bi, addr);
	if (i < 0)
		return;
	if (addr == bi->term && br_kind_is_branch(bi->kind)) {
		bstream_sp_after_block(s->bs); /* the unit sees it when the block retires */
		return;
	}
	st->pending = (struct mark_pending){cur_thread(s)->tid, addr, bi->start + bi->off[i + 1],
					    bstream_insns_before(s->bs, addr), 1};
	machine_refresh_checks(s);
}

void stacks_block_start(struct sim *s, uint64_t addr)
{
	if (stacks_mark_armed(s))
		mark_settle(s, addr);
}

int stacks_mark_armed(const struct sim *s)
{
	return s->stacks && s->stacks->pending.armed;
}

static int hook_marks(struct sim *s, struct proc *p, size_t from)
{
	for (size_t i = from; p->uc && i < s->stacks->nmarks; i++) {
		uc_hook h;
		uint64_t a = s->stacks->marks[i];
		if (uc_hook_add(p->uc, &h, UC_HOOK_CODE, (void *)hook_mark, s, a, a + MARK_REACH) != UC_ERR_OK)
			return PMUSIM_ERR_EMU;
		uc_ctl_remove_cache(p->uc, a, a + MARK_REACH + 1); /* code translated before */
	}
	return 0;
}

int stacks_add_hooks(struct sim *s, struct proc *p)
{
	return s->stacks ? hook_marks(s, p, 0) : 0;
}

int sim_tstack_mark(struct sim *s, uint64_t addr, int kind)
{
	struct sim_stacks *st = s->stacks;
	if (!st || !st->unit)
		return PMUSIM_ERR_ARG;
	int err = tstack_add_marker(st->unit, addr, (enum tstack_marker)kind);
	if (err < 0 || marked(st, addr))
		return err;
	uint64_t *nm = grow_array(st->marks, &st->capmarks, st->nmarks + 1, sizeof(*nm));
	if (!nm)
		return PMUSIM_ERR_NOMEM;
	st->marks = nm;
	st->marks[st->nmarks++] = addr;
	for (size_t i = 0; i < s->nprocs && err >= 0; i++)
		if (s->procs[i]->state == PROC_LIVE)
			err = hook_marks(s, s->procs[i], st->nmarks - 1);
	return err;
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
			shadow_push(sh, from->f[i].slot, from->f[i].ret, from->f[i].seq, from->f[i].saved_ip);
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
	free(st->marks);
	free(st);
	s->stacks = NULL;
}
