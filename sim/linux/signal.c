/* Signals (see sim/linux/signal.h): actions, masks, pending sets, delivery to guest
 * handlers and rt_sigreturn, rt_sigtimedwait. Timers' signals are queued on the timers
 * (sim/linux/sys_timer.c): the pending bit stays set while a timer or a plain instance pends.
 *
 * The handler's frame is Linux's x86-64 rt_sigframe (arch/x86/include/asm/
 * sigframe.h, uapi/asm/sigcontext.h, uapi/asm-generic/siginfo.h):
 *   +0   pretcode (sa_restorer)
 *   +8   ucontext: uc_flags, uc_link, uc_stack{sp, flags, size},
 *   +48  uc_mcontext = sigcontext: r8..r15 rdi rsi rbp rbx rdx rax rcx rsp rip
 *        eflags, cs gs fs ss (16 bits each), err, trapno, oldmask, cr2, fpstate,
 *        8 reserved words (256 bytes)
 *   +304 uc_sigmask
 *   +312 siginfo (128 bytes)
 * entered with RSP = frame (16-byte aligned minus 8, as after a call), RDI =
 * signal, RSI = &siginfo, RDX = &ucontext. The frame carries no FPU state
 * (fpstate = NULL): the full register file, SSE included, is kept on the host
 * and restored by rt_sigreturn, so handlers may use any register. */
#include "sim/linux/signal.h"

#include <errno.h>
#include <signal.h>
#include <string.h>

#include "sim/linux/linux.h"
#include "sim/linux/sched.h"
#include "sim/linux/sys_timer.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/cpu_state.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/rep_ref.h"
#include "sim/sim_state.h"
#include "sim/stacks.h"

#define SA_ONSTACK_F   0x08000000ULL
#define SA_NODEFER_F   0x40000000ULL
#define SA_RESETHAND_F 0x80000000ULL
#define SS_ONSTACK_F   1
#define SS_DISABLE_F   2
#define MINSIGSTKSZ_F  2048
#define FRAME_SIZE     440
#define UC_OFF         8
#define MC_OFF         48
#define MASK_OFF       304
#define INFO_OFF       312
#define SI_USER_C      0
#define SI_KERNEL_C    0x80
#define SI_TKILL_C     (-6)
#define SI_TIMER_C     (-2)
#define BIT(sig)       (1ULL << ((sig) - 1))
#define UNBLOCKABLE    (BIT(SIGKILL) | BIT(SIGSTOP))
#define SYNC_SIGNALS   (BIT(SIGSEGV) | BIT(SIGBUS) | BIT(SIGILL) | BIT(SIGTRAP) | BIT(SIGFPE) | BIT(SIGSYS))

/* sigcontext order of the general registers (r8 … rsp) */
static const int mc_regs[16] = {
	UC_X86_REG_R8,  UC_X86_REG_R9,  UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12,
	UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15, UC_X86_REG_RDI, UC_X86_REG_RSI,
	UC_X86_REG_RBP, UC_X86_REG_RBX, UC_X86_REG_RDX, UC_X86_REG_RAX, UC_X86_REG_RCX,
	UC_X86_REG_RSP,
};

static int default_ignored(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}

static int default_stops(int sig)
{
	return sig == SIGSTOP || sig == SIGTSTP || sig == SIGTTIN || sig == SIGTTOU;
}

static int is_handler(uint64_t h)
{
	return h != (uint64_t)(uintptr_t)SIG_DFL && h != (uint64_t)(uintptr_t)SIG_IGN;
}

static int blocks(const struct thread *t, int sig)
{
	return ((t->sigmask | (t->sigwait_unblocks ? t->sigwait_mask : 0)) & BIT(sig)) != 0;
}

/* The signal is thrown away when it is generated (ignored, explicitly or by default),
 * unless it is blocked: its action may change before it is unblocked, and sigwaitinfo
 * or a signalfd may take it (kernel/signal.c, sig_ignored). t NULL: the process, whose
 * signal any thread blocking it keeps. */
static int discarded(const struct sim *s, const struct thread *t, int sig)
{
	uint64_t h = s->p->sig_handlers[sig];
	if (sig == SIGKILL || sig == SIGSTOP)
		return 0;
	if (h != (uint64_t)(uintptr_t)SIG_IGN && (h != (uint64_t)(uintptr_t)SIG_DFL || !default_ignored(sig)))
		return 0;
	if (t)
		return !blocks(t, sig);
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].proc == s->p && s->threads[i].state != TS_EXITED && blocks(&s->threads[i], sig))
			return 0;
	return 1;
}

static int waits_interruptibly(const struct thread *t)
{
	return t->state == TS_FUTEX || t->state == TS_SLEEP || t->state == TS_SIGWAIT ||
	       t->state == TS_IO || t->state == TS_CHILD_WAIT;
}

/* Waiting thread w learns that sig is pending for it: a sigwaitinfo or signalfd read
 * looks again, another interruptible wait ends with EINTR unless sig is blocked. */
static void notify_waiter(struct sim *s, struct thread *w, int sig)
{
	if (w->state == TS_SIGWAIT && w->sigwait) {
		if ((w->sigwait_set & BIT(sig)) || !(w->sigmask & BIT(sig)))
			sched_retry(s, w);
	} else if (waits_interruptibly(w) && !(w->sigmask & BIT(sig))) {
		sched_wake(s, w, -EINTR);
	}
}

/* sig becomes pending for thread t (NULL: the process) with rec (NULL: a timer's
 * instance, kept on the timer). 0 when it is discarded. */
static int post(struct sim *s, struct thread *t, int sig, const struct sig_info_rec *rec)
{
	if (discarded(s, t, sig))
		return 0;
	uint64_t *pend = t ? &t->pending : &s->p->proc_pending;
	struct sig_info_rec *info = t ? &t->info[sig] : &s->p->proc_info[sig];
	if (rec)
		*info = *rec;
	else if (!(*pend & BIT(sig)))
		info->code = SIG_INFO_NONE;
	*pend |= BIT(sig);
	if (t) {
		notify_waiter(s, t, sig);
		return 1;
	}
	/* every signalfd reader of the process looks (signalfd_notify wakes them all) */
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *w = &s->threads[i];
		if (w->proc == s->p && w->state == TS_SIGWAIT && w->sigwait && !w->sigwait_unblocks &&
		    (w->sigwait_set & BIT(sig)))
			sched_retry(s, w);
	}
	/* wake a waiting thread that accepts it, unless the running one will take it */
	struct thread *c = cur_thread(s);
	if (c->proc == s->p && c->state == TS_RUNNABLE && !(c->sigmask & BIT(sig)))
		return 1;
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *w = &s->threads[i];
		if (w->proc == s->p && w->state != TS_EXITED && !(w->sigmask & BIT(sig))) {
			notify_waiter(s, w, sig);
			break;
		}
	}
	return 1;
}

int64_t signal_send(struct sim *s, struct thread *t, int sig, int code, uint64_t addr)
{
	if (sig == 0)
		return 0;
	if (sig < 1 || sig > 64)
		return -EINVAL;
	struct sig_info_rec rec = {code, addr, GUEST_PID, 0, 0, 0};
	post(s, t, sig, &rec);
	return 0;
}

int signal_post_timer(struct sim *s, struct thread *t, int sig)
{
	return post(s, t, sig, NULL);
}

void signal_timer_dropped(struct sim *s, struct proc *p, uint32_t tid, int sig)
{
	struct thread *t = tid ? thread_by_tid(s, tid) : NULL;
	if ((tid && (!t || t->proc != p)) || timer_signal_queued(p, tid, sig))
		return;
	uint64_t *pend = t ? &t->pending : &p->proc_pending;
	if ((t ? t->info[sig].code : p->proc_info[sig].code) == SIG_INFO_NONE)
		*pend &= ~BIT(sig);
}

/* The signal of ready (not empty) taken first: synchronous ones, then the lowest number
 * (kernel/signal.c, next_signal). */
static int next_signal(uint64_t ready)
{
	uint64_t pick = ready & SYNC_SIGNALS ? ready & SYNC_SIGNALS : ready;
	return __builtin_ctzll(pick) + 1;
}

/* Takes a pending instance of sig for the running thread t: its own first, then its
 * process's (dequeue_signal); timers' instances in the order they were queued. */
static struct sig_info_rec take(struct sim *s, struct thread *t, int sig)
{
	int own = (t->pending & BIT(sig)) != 0;
	uint64_t *pend = own ? &t->pending : &s->p->proc_pending;
	struct sig_info_rec *info = own ? &t->info[sig] : &s->p->proc_info[sig], rec;
	uint32_t tid = own ? t->tid : 0;
	if (timer_take_signal(s, tid, sig, &rec)) {
		if (info->code == SIG_INFO_NONE && !timer_signal_queued(s->p, tid, sig))
			*pend &= ~BIT(sig);
		return rec;
	}
	rec = *info;
	*pend &= ~BIT(sig);
	if (rec.code == SIG_INFO_NONE) /* its timer went away unnoticed: a kernel signal then */
		rec.code = SI_KERNEL_C;
	return rec;
}

int signal_dequeue(struct sim *s, uint64_t set, struct sig_info_rec *rec)
{
	struct thread *t = cur_thread(s);
	uint64_t ready = (t->pending | s->p->proc_pending) & set;
	if (!ready)
		return 0;
	int sig = next_signal(ready);
	*rec = take(s, t, sig);
	return sig;
}

void signal_siginfo(int sig, const struct sig_info_rec *rec, unsigned char out[128])
{
	memset(out, 0, 128);
	int32_t head[3] = {sig, 0, rec->code};
	memcpy(out, head, sizeof(head));
	if ((SYNC_SIGNALS & BIT(sig)) && rec->code > 0) {
		memcpy(out + 16, &rec->addr, 8); /* si_addr */
	} else if (rec->code == SI_TIMER_C) {
		int32_t tm[2] = {rec->timerid, rec->overrun}; /* si_timerid, si_overrun, si_value */
		memcpy(out + 16, tm, sizeof(tm));
		memcpy(out + 24, &rec->value, 8);
	} else if (rec->code == SI_USER_C || rec->code == SI_TKILL_C) {
		uint32_t who[2] = {rec->pid, 0}; /* si_pid, si_uid */
		memcpy(out + 16, who, sizeof(who));
	}
}

void signal_wait_end(struct thread *t)
{
	if (t->sigwait && t->sigwait_unblocks)
		t->sigmask = t->sigwait_mask;
	t->sigwait = t->sigwait_unblocks = 0;
}

int signal_wait(struct sim *s, uint64_t set, int unblock, uint64_t deadline)
{
	struct thread *t = cur_thread(s);
	t->sigwait = 1;
	t->sigwait_set = set;
	t->sigwait_unblocks = unblock;
	t->sigwait_mask = t->sigmask;
	t->sigwait_timed_out = 0;
	t->sigwait_deadline = deadline;
	if (unblock)
		t->sigmask &= ~set;
	sched_block_retry(s, TS_SIGWAIT);
	t->wake_ns = deadline;
	return 0;
}

int signal_deliverable(struct sim *s)
{
	const struct thread *t = cur_thread(s);
	return ((t->pending | s->p->proc_pending) & ~(t->sigmask & ~UNBLOCKABLE)) != 0;
}

/* sig's default action ends the running process (the run, for the first). */
static void die(struct sim *s, int sig, uint64_t pc)
{
	if (s->p->pid == GUEST_PID) {
		s->res->fault_pc = pc;
		sim_stop(s, SIM_END_SIGNAL, sig);
	} else {
		proc_end(s, sig);
	}
}

/* Writes the frame and points the registers at the handler. */
static uint64_t enter_handler(struct sim *s, struct thread *t, int sig, const struct sig_info_rec *rec,
			      uint64_t pc)
{
	uint64_t handler = s->p->sig_handlers[sig];
	uint64_t regs[16], rflags, flags = s->p->sig_flags[sig];
	for (int i = 0; i < 16; i++)
		uc_reg_read(s->p->uc, mc_regs[i], &regs[i]);
	uc_reg_read(s->p->uc, UC_X86_REG_RFLAGS, &rflags);
	uint64_t rsp = regs[15];
	int on_alt = t->ss_size && rsp > t->ss_sp && rsp <= t->ss_sp + t->ss_size;
	uint64_t sp = rsp - 128; /* the red zone stays intact */
	if ((flags & SA_ONSTACK_F) && t->ss_size && !on_alt)
		sp = t->ss_sp + t->ss_size;
	uint64_t frame = ((sp - FRAME_SIZE) & ~15ULL) - 8;

	uint64_t oldmask = t->has_suspend_mask ? t->suspend_mask : t->sigmask;
	t->has_suspend_mask = 0;
	unsigned char f[FRAME_SIZE];
	memset(f, 0, sizeof(f));
	uint64_t w;
	memcpy(f, &s->p->sig_restorer[sig], 8);
	w = 6; /* UC_SIGCONTEXT_SS | UC_STRICT_RESTORE_SS */
	memcpy(f + UC_OFF, &w, 8);
	memcpy(f + UC_OFF + 16, &t->ss_sp, 8);
	uint32_t ssf = t->ss_size ? (on_alt ? SS_ONSTACK_F : 0) : SS_DISABLE_F;
	memcpy(f + UC_OFF + 24, &ssf, 4);
	memcpy(f + UC_OFF + 32, &t->ss_size, 8);
	memcpy(f + MC_OFF, regs, sizeof(regs));
	memcpy(f + MC_OFF + 128, &pc, 8);
	memcpy(f + MC_OFF + 136, &rflags, 8);
	uint16_t seg[4] = {0x33, 0, 0, 0x2b}; /* cs gs fs ss */
	memcpy(f + MC_OFF + 144, seg, sizeof(seg));
	w = sig == SIGSEGV || sig == SIGBUS ? 14 : sig == SIGFPE ? 0 : sig == SIGILL ? 6 : 0;
	memcpy(f + MC_OFF + 160, &w, 8);          /* trapno */
	memcpy(f + MC_OFF + 168, &oldmask, 8);    /* oldmask */
	if (sig == SIGSEGV || sig == SIGBUS)
		memcpy(f + MC_OFF + 176, &rec->addr, 8); /* cr2 */
	memcpy(f + MASK_OFF, &oldmask, 8);
	signal_siginfo(sig, rec, f + INFO_OFF);
	if (mem_write(s, frame, f, sizeof(f)) < 0) {
		/* no room for the frame: Linux kills with SIGSEGV */
		die(s, SIGSEGV, pc);
		return pc;
	}
	/* a REP left in the middle by this signal stays with the frame: the handler's own
	 * entries into it are executions of their own */
	struct bstream_rep_held rep = bstream_rep_take(s->bs, pc);
	rep_ref_signal(s, frame, pc);
	/* keep the whole register file for rt_sigreturn */
	if (t->nsigctx == SIG_CTX_DEPTH) {
		uc_context *oldest = t->sigctx[0].regs;
		memmove(&t->sigctx[0], &t->sigctx[1], (SIG_CTX_DEPTH - 1) * sizeof(t->sigctx[0]));
		t->nsigctx--;
		t->sigctx[t->nsigctx].regs = oldest;
	} else if (!t->sigctx[t->nsigctx].regs &&
		   uc_context_alloc(s->p->uc, &t->sigctx[t->nsigctx].regs) != UC_ERR_OK) {
		t->sigctx[t->nsigctx].regs = NULL; /* slots keep their context once allocated */
	}
	if (t->sigctx[t->nsigctx].regs) {
		uc_reg_write(s->p->uc, UC_X86_REG_RIP, &pc);
		uc_context_save(s->p->uc, t->sigctx[t->nsigctx].regs);
		t->sigctx[t->nsigctx].frame = frame;
		t->sigctx[t->nsigctx].rep = rep;
		t->nsigctx++;
	}
	t->sigmask |= s->p->sig_mask[sig] & ~UNBLOCKABLE;
	if (!(flags & SA_NODEFER_F))
		t->sigmask |= BIT(sig);
	if (flags & SA_RESETHAND_F)
		s->p->sig_handlers[sig] = (uint64_t)(uintptr_t)SIG_DFL;
	uint64_t arg1 = (uint64_t)sig, arg2 = frame + INFO_OFF, arg3 = frame + UC_OFF, zero = 0;
	rflags &= ~((1ULL << 10) | (1ULL << 8)); /* DF and TF clear in the handler */
	uc_reg_write(s->p->uc, UC_X86_REG_RSP, &frame);
	uc_reg_write(s->p->uc, UC_X86_REG_RDI, &arg1);
	uc_reg_write(s->p->uc, UC_X86_REG_RSI, &arg2);
	uc_reg_write(s->p->uc, UC_X86_REG_RDX, &arg3);
	uc_reg_write(s->p->uc, UC_X86_REG_RAX, &zero);
	uc_reg_write(s->p->uc, UC_X86_REG_RFLAGS, &rflags);
	cpu_state_reset_fpu(s->p->uc); /* rt_sigreturn brings the interrupted code's back */
	bstream_set_next_run_start(s->bs, 1);
	uc_reg_write(s->p->uc, UC_X86_REG_RIP, &handler);
	stacks_signal_enter(s, t->tid, pc, frame, frame + MC_OFF + 128, handler);
	return handler;
}

/* Takes the action of sig for the running thread, stopped at pc. */
static uint64_t act(struct sim *s, int sig, const struct sig_info_rec *rec, uint64_t pc)
{
	struct thread *t = cur_thread(s);
	uint64_t h = s->p->sig_handlers[sig];
	if (sig == SIGKILL || h == (uint64_t)(uintptr_t)SIG_DFL) {
		if (sig != SIGKILL && default_ignored(sig))
			return pc;
		if (sig != SIGKILL && default_stops(sig)) {
			sim_note_once(s, NOTE_STOP_SIGNAL, "stop signals (SIGSTOP, SIGTSTP, …) are ignored: nothing would continue the process");
			return pc;
		}
		s->res->fault_addr = rec->addr;
		die(s, sig, (SYNC_SIGNALS & BIT(sig)) && rec->code > 0 ? pc : 0);
		return pc;
	}
	if (h == (uint64_t)(uintptr_t)SIG_IGN)
		return pc;
	return enter_handler(s, t, sig, rec, pc);
}

uint64_t signal_deliver(struct sim *s, uint64_t pc)
{
	struct thread *t = cur_thread(s);
	uint64_t ready = (t->pending | s->p->proc_pending) & ~(t->sigmask & ~UNBLOCKABLE);
	if (!ready)
		return pc;
	int sig = next_signal(ready);
	struct sig_info_rec rec = take(s, t, sig);
	return act(s, sig, &rec, pc);
}

int signal_fault(struct sim *s, int sig, int code, uint64_t pc, uint64_t addr, uint64_t *pc_out)
{
	struct thread *t = cur_thread(s);
	if (!is_handler(s->p->sig_handlers[sig]) || (t->sigmask & BIT(sig)))
		return 0; /* default action (Linux forces it when the fault is blocked or ignored) */
	struct sig_info_rec rec = {code, addr, GUEST_PID, 0, 0, 0};
	*pc_out = enter_handler(s, t, sig, &rec, pc);
	return !s->stop_reason;
}

uint64_t signal_return(struct sim *s)
{
	struct thread *t = cur_thread(s);
	uint64_t rsp, frame, mc[18], mask;
	uc_reg_read(s->p->uc, UC_X86_REG_RSP, &rsp);
	frame = rsp - 8;
	if (mem_read(s, frame + MC_OFF, mc, sizeof(mc)) < 0 || mem_read(s, frame + MASK_OFF, &mask, 8) < 0) {
		die(s, SIGSEGV, s->syscall_pc);
		return s->syscall_pc + 2;
	}
	int k = t->nsigctx - 1;
	while (k >= 0 && t->sigctx[k].frame != frame)
		k--;
	struct bstream_rep_held rep = {0, 0, 0};
	if (k >= 0) {
		/* frames above it were left by longjmp (with any REP they held: those
		 * executions ended where they were left); this one's full state comes back */
		uc_context_restore(s->p->uc, t->sigctx[k].regs);
		rep = t->sigctx[k].rep;
		t->nsigctx = k;
	}
	for (int i = 0; i < 16; i++)
		uc_reg_write(s->p->uc, mc_regs[i], &mc[i]);
	uint64_t cur;
	uc_reg_read(s->p->uc, UC_X86_REG_RFLAGS, &cur);
	const uint64_t user_flags = 0x40dd5; /* AC OF DF TF SF ZF AF PF CF (FIX_EFLAGS) */
	cur = (cur & ~user_flags) | (mc[17] & user_flags);
	uc_reg_write(s->p->uc, UC_X86_REG_RFLAGS, &cur);
	uc_reg_write(s->p->uc, UC_X86_REG_RIP, &mc[16]);
	t->sigmask = mask & ~UNBLOCKABLE;
	stacks_signal_return(s, t->tid, mc[16], mc[15], frame + MC_OFF + 128);
	if (rep.valid && rep.site == mc[16])
		bstream_rep_give(s->bs, rep); /* back into the REP it left: the same execution */
	rep_ref_sigreturn(s, frame, mc[16]);
	return mc[16];
}

/* --- system calls -------------------------------------------------------- */

int64_t sys_rt_sigaction(struct sim *s, uint64_t sig, uint64_t act_p, uint64_t oact, uint64_t size)
{
	if (size != 8)
		return -EINVAL;
	if (sig < 1 || sig > 64 || ((sig == SIGKILL || sig == SIGSTOP) && act_p))
		return -EINVAL;
	uint64_t old[4] = {s->p->sig_handlers[sig], s->p->sig_flags[sig], s->p->sig_restorer[sig], s->p->sig_mask[sig]};
	if (act_p) {
		uint64_t n[4];
		if (mem_read(s, act_p, n, sizeof(n)) < 0)
			return -EFAULT;
		s->p->sig_handlers[sig] = n[0];
		s->p->sig_flags[sig] = n[1];
		s->p->sig_restorer[sig] = n[2];
		s->p->sig_mask[sig] = n[3];
		uint64_t h = n[0];
		if (h == (uint64_t)(uintptr_t)SIG_IGN || (h == (uint64_t)(uintptr_t)SIG_DFL && default_ignored((int)sig))) {
			/* pending instances go away, blocked or not (POSIX) */
			s->p->proc_pending &= ~BIT(sig);
			for (size_t i = 0; i < s->nthreads; i++)
				if (s->threads[i].proc == s->p)
					s->threads[i].pending &= ~BIT(sig);
			timers_flush_signal(s, s->p, (int)sig);
		}
	}
	return oact && mem_write(s, oact, old, sizeof(old)) < 0 ? -EFAULT : 0;
}

int64_t sys_rt_sigprocmask(struct sim *s, int how, uint64_t set, uint64_t oset)
{
	struct thread *t = cur_thread(s);
	uint64_t old = t->sigmask, n;
	if (set) {
		if (mem_read(s, set, &n, 8) < 0)
			return -EFAULT;
		if (how == SIG_BLOCK)
			t->sigmask |= n;
		else if (how == SIG_UNBLOCK)
			t->sigmask &= ~n;
		else if (how == SIG_SETMASK)
			t->sigmask = n;
		else
			return -EINVAL;
		t->sigmask &= ~UNBLOCKABLE;
	}
	return oset && mem_write(s, oset, &old, 8) < 0 ? -EFAULT : 0;
}

int64_t sys_sigaltstack(struct sim *s, uint64_t ss, uint64_t oss)
{
	struct thread *t = cur_thread(s);
	uint64_t rsp;
	uc_reg_read(s->p->uc, UC_X86_REG_RSP, &rsp);
	int on_alt = t->ss_size && rsp > t->ss_sp && rsp <= t->ss_sp + t->ss_size;
	uint64_t old[3] = {t->ss_sp, t->ss_size ? (on_alt ? SS_ONSTACK_F : 0) : SS_DISABLE_F, t->ss_size};
	if (ss) {
		uint64_t n[3];
		if (mem_read(s, ss, n, sizeof(n)) < 0)
			return -EFAULT;
		if (on_alt)
			return -EPERM;
		uint32_t fl = (uint32_t)n[1];
		if (fl & SS_DISABLE_F) {
			t->ss_sp = t->ss_size = 0;
		} else if (fl & ~(uint32_t)(SS_ONSTACK_F | (1u << 31))) {
			return -EINVAL;
		} else {
			if (n[2] < MINSIGSTKSZ_F)
				return -ENOMEM;
			t->ss_sp = n[0];
			t->ss_size = n[2];
		}
	}
	return oss && mem_write(s, oss, old, sizeof(old)) < 0 ? -EFAULT : 0;
}

int64_t sys_rt_sigsuspend(struct sim *s, uint64_t maskp)
{
	struct thread *t = cur_thread(s);
	uint64_t m;
	if (mem_read(s, maskp, &m, 8) < 0)
		return -EFAULT;
	t->suspend_mask = t->sigmask;
	t->has_suspend_mask = 1;
	t->sigmask = m & ~UNBLOCKABLE;
	t->state = TS_SIGWAIT;
	t->wake_ns = UINT64_MAX;
	if (signal_deliverable(s))
		t->state = TS_RUNNABLE;
	else
		sched_request(s, s->syscall_pc + 2);
	return -EINTR;
}

int64_t sys_pause(struct sim *s)
{
	struct thread *t = cur_thread(s);
	if (!signal_deliverable(s)) {
		t->state = TS_SIGWAIT;
		t->wake_ns = UINT64_MAX;
		sched_request(s, s->syscall_pc + 2);
	}
	return -EINTR;
}

int64_t sys_rt_sigpending(struct sim *s, uint64_t set)
{
	const struct thread *t = cur_thread(s);
	uint64_t p = (t->pending | s->p->proc_pending) & t->sigmask;
	return mem_write(s, set, &p, 8) < 0 ? -EFAULT : 0;
}

/* rt_sigtimedwait(set, info, timeout, sigsetsize) (kernel/signal.c, do_sigtimedwait): takes
 * a pending signal of set, or waits for one with the set unblocked; EAGAIN when the
 * timeout passes, EINTR when another signal's handler is to run. */
int64_t sys_rt_sigtimedwait(struct sim *s, const uint64_t *a)
{
	struct thread *t = cur_thread(s);
	uint64_t set, deadline = UINT64_MAX;
	int retried = t->sigwait, timed_out = retried && t->sigwait_timed_out;
	if (retried) {
		deadline = t->sigwait_deadline;
		signal_wait_end(t);
	}
	if (a[3] != 8)
		return -EINVAL;
	if (mem_read(s, a[0], &set, 8) < 0)
		return -EFAULT;
	set &= ~UNBLOCKABLE;
	if (!retried && a[2]) {
		int64_t ts[2];
		if (mem_read(s, a[2], ts, sizeof(ts)) < 0)
			return -EFAULT;
		if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
			return -EINVAL;
		deadline = sim_now_ns(s) + (uint64_t)ts[0] * 1000000000ULL + (uint64_t)ts[1];
	}
	struct sig_info_rec rec;
	int sig = signal_dequeue(s, set, &rec);
	if (sig) {
		unsigned char info[128];
		signal_siginfo(sig, &rec, info);
		return a[1] && mem_write(s, a[1], info, sizeof(info)) < 0 ? -EFAULT : sig;
	}
	if (timed_out || deadline <= sim_now_ns(s))
		return -EAGAIN;
	if (signal_deliverable(s))
		return -EINTR;
	return signal_wait(s, set, 1, deadline);
}
