/* The REP reference behind the truth's REP figures (sim_rep_reference in sim.h): the
 * count register read by hooks of its own, not the block stream the REP unit reads.
 * Each REP string instruction of the program gets a code hook at its address and
 * one at the instruction after it. Per thread, an execution opens when the thread
 * enters the REP with no execution of that REP open (requested = RCX, or ECX when
 * the instruction's own bytes carry the address-size prefix 0x67: Intel SDM vol. 2,
 * REP/REPE/REPNE), and it closes when the thread reaches the instruction after it
 * (iterations = count before - count after; ended by its condition when the count
 * is not 0 then). A signal delivered while the thread is still at the REP ends the
 * part done so far and keeps the execution with the handler's frame; an
 * rt_sigreturn to that frame that goes back to the REP makes its next entry there
 * the same execution (pmu_model/block.h says why). */
#include "sim/rep_ref.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "sim/linux/linux.h"
#include "sim/machine/machine.h"
#include "sim/sim_state.h"
#include "sim/truth.h"

#define ROLE_SITE 1 /* a REP string instruction */
#define ROLE_NEXT 2 /* the instruction after one */
#define MAX_FRAMES 64

struct watched {
	uint64_t addr;
	uc_hook hook;
	int role;
	int ecx;       /* ROLE_SITE: ECX counts */
	uint64_t next; /* ROLE_SITE: the instruction after it */
};

struct execution {
	int valid, ecx;
	uint64_t site, next;
	uint64_t part_count; /* the count when this part began */
};

struct ref_frame {
	uint64_t frame;
	struct execution held; /* the REP execution the signal interrupted */
};

struct ref_thread {
	uint32_t tid;
	struct execution open;   /* in progress (or retired, the next instruction not reached) */
	struct execution resume; /* a handler returned into it: the next entry goes on with it */
	struct ref_frame *frames;
	size_t nframes, capframes;
};

struct rep_ref {
	struct sim *s;
	struct truth *t;
	uc_engine *uc; /* the engine of the program pmusim started (its first image) */
	struct watched *w;
	size_t nw, capw;
	struct ref_thread *th;
	size_t nth, capth, last;
};

/* Out of memory in the middle of a run: the figures would be wrong (as sim/truth.c). */
static void *need(void *p)
{
	if (!p)
		abort();
	return p;
}

static int is_image(const struct sim *s)
{
	return s->rep_ref && s->p->pid == GUEST_PID && s->p->image == 0 &&
	       s->p->uc == s->rep_ref->uc;
}

static size_t watched_index(const struct rep_ref *r, uint64_t addr)
{
	size_t lo = 0, hi = r->nw;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (r->w[mid].addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct watched *watched_find(struct rep_ref *r, uint64_t addr)
{
	size_t i = watched_index(r, addr);
	return i < r->nw && r->w[i].addr == addr ? &r->w[i] : NULL;
}

static struct ref_thread *thread_of(struct rep_ref *r, uint32_t tid)
{
	if (r->last < r->nth && r->th[r->last].tid == tid)
		return &r->th[r->last];
	for (size_t i = 0; i < r->nth; i++)
		if (r->th[i].tid == tid)
			return &r->th[r->last = i];
	r->th = need(grow_array(r->th, &r->capth, r->nth + 1, sizeof(*r->th)));
	memset(&r->th[r->nth], 0, sizeof(*r->th));
	r->th[r->nth].tid = tid;
	return &r->th[r->last = r->nth++];
}

static void add(struct rep_ref *r, uint64_t site, uint64_t execs, uint64_t requested,
                uint64_t iters, uint64_t cond)
{
	/* a REP copied into replacement code is the program's at its original address */
	int inverted;
	uint64_t orig = r->s->dbr ? sim_dbr_original(r->s, site, &inverted) : site;
	if (truth_rep_add(r->t, orig ? orig : site, execs, requested, iters, cond) < 0)
		abort(); /* as need() */
}

static uint64_t count_of(const struct execution *e, uint64_t rcx)
{
	return e->ecx ? rcx & 0xffffffffu : rcx;
}

/* The part of th's open execution ends with rcx in the count register: the REP
 * retired (its condition ended it when the count is not 0) or was left. */
static void end_part(struct rep_ref *r, struct ref_thread *th, uint64_t rcx, int retired)
{
	uint64_t c = count_of(&th->open, rcx);
	add(r, th->open.site, 0, 0, th->open.part_count - c, retired && c != 0);
	th->open.valid = 0;
}

static uint64_t rcx_now(struct sim *s)
{
	uint64_t v = 0;
	uc_reg_read(s->p->uc, UC_X86_REG_RCX, &v);
	return v;
}

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *ud)
{
	struct rep_ref *r = ud;
	struct sim *s = r->s;
	(void)size, (void)uc;
	const struct watched *w = watched_find(r, addr);
	struct ref_thread *th = is_image(s) && w ? thread_of(r, sched_cur_tid(s)) : NULL;
	if (!th)
		return;
	uint64_t rcx = rcx_now(s);
	if (th->open.valid && th->open.next == addr)
		end_part(r, th, rcx, 1);
	if (!(w->role & ROLE_SITE) || (th->open.valid && th->open.site == addr))
		return;     /* not a REP, or a further iteration of the open one */
	if (th->open.valid) /* never: an execution closes before another REP is entered */
		end_part(r, th, rcx, 0);
	struct execution e = {1, w->ecx, addr, w->next, 0};
	e.part_count = count_of(&e, rcx);
	if (!(th->resume.valid && th->resume.site == addr))
		add(r, addr, 1, e.part_count, 0, 0);
	th->resume.valid = 0;
	th->open = e;
}

/* The instruction's own reading: legacy prefixes and REX, then a one-byte string
 * opcode (movs, cmps, stos, lods, scas, ins, outs) with a REP prefix among them.
 * 1 and its length and address size, or 0. */
static int rep_string_at(struct sim *s, uint64_t addr, int *len, int *ecx)
{
	uint8_t b[15];
	size_t n = machine_read_code(s, addr, b, sizeof(b));
	int rep = 0;
	*ecx = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t x = b[i];
		if (x == 0xf2 || x == 0xf3)
			rep = 1;
		else if (x == 0x67)
			*ecx = 1;
		else if (!(x == 0x66 || x == 0xf0 || x == 0x2e || x == 0x36 || x == 0x3e ||
		           x == 0x26 || x == 0x64 || x == 0x65 || (x >= 0x40 && x <= 0x4f))) {
			int string = (x >= 0xa4 && x <= 0xa7) || (x >= 0xaa && x <= 0xaf) ||
			             (x >= 0x6c && x <= 0x6f);
			*len = (int)i + 1;
			return rep && string;
		}
	}
	return 0;
}

/* Gives addr the role (a hook the first time); 0 or a negative pmusim_err. */
static int watch(struct rep_ref *r, uint64_t addr, int role, int ecx, uint64_t next)
{
	struct watched *w = watched_find(r, addr);
	if (!w) {
		struct watched *nw = grow_array(r->w, &r->capw, r->nw + 1, sizeof(*nw));
		if (!nw)
			return PMUSIM_ERR_NOMEM;
		r->w = nw;
		size_t i = watched_index(r, addr);
		memmove(&r->w[i + 1], &r->w[i], (r->nw - i) * sizeof(*r->w));
		w = &r->w[i];
		*w = (struct watched){.addr = addr};
		r->nw++;
		if (uc_hook_add(r->uc, &w->hook, UC_HOOK_CODE, (void *)on_code, r, addr, addr) !=
		    UC_ERR_OK)
			return PMUSIM_ERR_EMU;
		/* code translated before the hook existed runs without it: translate again */
		uc_ctl_remove_cache(r->uc, addr, addr + 1);
	}
	w->role |= role;
	if (role == ROLE_SITE)
		w->ecx = ecx, w->next = next;
	return 0;
}

int rep_ref_watch(struct sim *s, uint64_t addr)
{
	struct rep_ref *r = s->rep_ref;
	if (!r || s->p->pid != GUEST_PID || s->p->image != 0)
		return 0;
	if (!r->uc)
		r->uc = s->p->uc;
	int len, ecx;
	if (!rep_string_at(s, addr, &len, &ecx))
		return 0;
	int err = watch(r, addr, ROLE_SITE, ecx, addr + (uint64_t)len);
	return err < 0 ? err : watch(r, addr + (uint64_t)len, ROLE_NEXT, 0, 0);
}

void rep_ref_invalidate(struct sim *s, uint64_t addr, uint64_t len)
{
	struct rep_ref *r = s->rep_ref;
	if (!is_image(s))
		return;
	size_t k = 0;
	for (size_t i = 0; i < r->nw; i++) {
		struct watched *w = &r->w[i];
		/* a REP there may be gone; an instruction after a REP elsewhere stays one */
		if (w->addr >= addr && w->addr < addr + len)
			w->role &= ~ROLE_SITE;
		if (!w->role) {
			uc_hook_del(r->uc, w->hook);
			continue;
		}
		r->w[k++] = *w;
	}
	r->nw = k;
}

void rep_ref_signal(struct sim *s, uint64_t frame, uint64_t pc)
{
	struct rep_ref *r = s->rep_ref;
	struct ref_thread *th = is_image(s) ? thread_of(r, sched_cur_tid(s)) : NULL;
	if (!th)
		return;
	struct execution held = {0};
	if (th->open.valid) {
		held = th->open;
		int left = pc == th->open.site;
		end_part(r, th, rcx_now(s), !left);
		if (!left) /* it retired; the instruction after it had not run yet */
			held.valid = 0;
	} else if (th->resume.valid && th->resume.site == pc) {
		held = th->resume; /* interrupted again before it went on */
	}
	th->resume.valid = 0;
	if (th->nframes == MAX_FRAMES) { /* nested this deep: the oldest frame is forgotten */
		memmove(th->frames, th->frames + 1, (MAX_FRAMES - 1) * sizeof(*th->frames));
		th->nframes--;
	}
	th->frames =
	    need(grow_array(th->frames, &th->capframes, th->nframes + 1, sizeof(*th->frames)));
	th->frames[th->nframes++] = (struct ref_frame){frame, held};
}

void rep_ref_sigreturn(struct sim *s, uint64_t frame, uint64_t pc)
{
	struct rep_ref *r = s->rep_ref;
	struct ref_thread *th = is_image(s) ? thread_of(r, sched_cur_tid(s)) : NULL;
	if (!th)
		return;
	size_t k = th->nframes;
	while (k > 0 && th->frames[k - 1].frame != frame)
		k--;
	if (k == 0)
		return; /* not a frame a signal built here */
	const struct execution *held = &th->frames[k - 1].held;
	if (held->valid && held->site == pc)
		th->resume = *held;
	th->nframes = k - 1; /* the frames above it were left by siglongjmp */
}

void rep_ref_switch_out(struct sim *s, uint64_t pc)
{
	struct rep_ref *r = s->rep_ref;
	struct ref_thread *th = is_image(s) ? thread_of(r, sched_cur_tid(s)) : NULL;
	if (th && th->open.valid && pc != th->open.site)
		end_part(r, th, rcx_now(s), 1); /* retired: its count is final */
}

void rep_ref_run_end(struct sim *s)
{
	struct rep_ref *r = s->rep_ref;
	struct ref_thread *th = is_image(s) ? thread_of(r, sched_cur_tid(s)) : NULL;
	if (!th || !th->open.valid)
		return;
	uint64_t rip = 0;
	uc_reg_read(s->p->uc, UC_X86_REG_RIP, &rip);
	end_part(r, th, rcx_now(s), rip != th->open.site);
}

int sim_rep_reference(struct sim *s, struct truth *t)
{
	if (s->rep_ref)
		return PMUSIM_ERR_ARG;
	s->rep_ref = calloc(1, sizeof(*s->rep_ref));
	if (!s->rep_ref)
		return PMUSIM_ERR_NOMEM;
	s->rep_ref->s = s;
	s->rep_ref->t = t;
	return 0;
}

void rep_ref_free(struct rep_ref *r)
{
	if (!r)
		return;
	for (size_t i = 0; i < r->nth; i++)
		free(r->th[i].frames);
	free(r->th);
	free(r->w);
	free(r);
}
