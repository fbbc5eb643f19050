/* Threads of the guest on one simulated CPU (see sim/linux/sched.h).
 *
 * Scheduling is a function of simulated time only: the running thread keeps the
 * CPU until it blocks (futex, nanosleep, pause) or has retired `quantum`
 * instructions, checked at block boundaries; then the next runnable thread in
 * creation order gets it (round robin). When every thread waits, simulated time
 * jumps to the earliest deadline (timed wait, sleep, timer). Nothing depends on
 * the host, so a run is reproducible instruction for instruction.
 *
 * Semantics follow Linux: clone(2)/clone3(2) flags (futex(2): futex.c) and
 * the CLONE_CHILD_CLEARTID wake on thread exit (kernel/fork.c, mm_release). */
#include "sim/linux/sched.h"

#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "sim/linux/linux.h"
#include "sim/linux/process.h"
#include "sim/linux/signal.h"
#include "sim/linux/sys_timer.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/rep_ref.h"
#include "sim/sim_state.h"
#include "sim/stacks.h"

#define DEFAULT_QUANTUM 1000000ULL

int sched_init(struct sim *s)
{
	s->threads = calloc(SIM_MAX_THREADS, sizeof(*s->threads));
	if (!s->threads || uc_context_alloc(s->p->uc, &s->threads[0].regs) != UC_ERR_OK)
		return PMUSIM_ERR_NOMEM;
	s->threads[0].tid = GUEST_PID;
	s->threads[0].proc = s->p;
	s->p->nlive = 1;
	s->threads[0].wake_ns = UINT64_MAX;
	s->threads[0].run_start = 1;
	s->nthreads = s->nlive = 1;
	s->cur = 0;
	s->quantum = s->opt.quantum ? s->opt.quantum : DEFAULT_QUANTUM;
	s->attention_at = UINT64_MAX;
	machine_refresh_checks(s);
	return 0;
}

void thread_free_contexts(struct thread *t)
{
	sched_wait_fds_done(t);
	if (t->regs)
		uc_context_free(t->regs);
	t->regs = NULL;
	for (int k = 0; k < SIG_CTX_DEPTH; k++) {
		if (t->sigctx[k].regs)
			uc_context_free(t->sigctx[k].regs);
		t->sigctx[k].regs = NULL;
	}
	t->nsigctx = 0;
}

void sched_free(struct sim *s)
{
	if (!s->threads)
		return;
	for (size_t i = 0; i < s->nthreads; i++)
		thread_free_contexts(&s->threads[i]);
	free(s->threads);
}

struct thread *thread_slot(struct sim *s, int *is_new)
{
	/* a slot of an exited thread is reused (its register files are freed) */
	for (size_t i = 0; i < s->nthreads; i++)
		if (i != s->cur && s->threads[i].state == TS_EXITED && !s->threads[i].regs) {
			*is_new = 0;
			return &s->threads[i];
		}
	*is_new = 1;
	return s->nthreads < SIM_MAX_THREADS ? &s->threads[s->nthreads] : NULL;
}

struct thread *thread_by_tid(struct sim *s, uint32_t tid)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].tid == tid && s->threads[i].state != TS_EXITED)
			return &s->threads[i];
	return NULL;
}

uint32_t sched_cur_tid(const struct sim *s)
{
	return s->threads[s->cur].tid;
}

void sched_request(struct sim *s, uint64_t pc)
{
	s->attention = 1;
	s->resume_pc = pc;
	uc_emu_stop(s->p->uc);
}

static size_t runnable_count(const struct sim *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nthreads; i++)
		n += s->threads[i].state == TS_RUNNABLE;
	return n;
}

/* Where the running thread is in its slice: instructions, or clock cycles. */
static uint64_t slice_now(struct sim *s)
{
	return s->opt.quantum_cycles && s->clock ? s->clock(s->clock_ctx) : bstream_insns(s->bs);
}

void sched_update_attention(struct sim *s)
{
	uint64_t at = timers_next_insns(s);
	int others = runnable_count(s) > 1;
	s->cycle_slices = others && s->opt.quantum_cycles && s->clock;
	if (others && !s->cycle_slices && s->slice_end < at)
		at = s->slice_end;
	s->attention_at = at;
	machine_refresh_checks(s);
}

void sched_tick(struct sim *s, uint64_t addr)
{
	sched_request(s, addr);
}

void sched_wake(struct sim *s, struct thread *t, int64_t ret)
{
	if (t->state == TS_EXITED || t->state == TS_RUNNABLE)
		return;
	t->state = TS_RUNNABLE;
	t->wake_ret = ret;
	t->has_wake_ret = 1;
	t->wake_ns = UINT64_MAX;
	sched_wait_fds_done(t); /* a signal ended a poll: its next call starts afresh */
	signal_wait_end(t);
	if (t->has_suspend_mask && ret != -EINTR) { /* ppoll's mask, when no handler restores it */
		t->sigmask = t->suspend_mask;
		t->has_suspend_mask = 0;
	}
	sched_update_attention(s);
}

/* The calling thread blocks in its system call; the scheduler picks another. */
void sched_block_current(struct sim *s, int state, uint64_t wake_ns)
{
	struct thread *t = cur_thread(s);
	t->state = state;
	t->wake_ns = wake_ns;
	sched_request(s, s->syscall_pc + 2);
}

int64_t sched_sleep_until(struct sim *s, uint64_t ns)
{
	sched_block_current(s, TS_SLEEP, ns);
	return 0;
}

/* --- clone ---------------------------------------------------------------- */

static int64_t new_thread(struct sim *s, uint64_t flags, uint64_t stack, uint64_t ptid,
			  uint64_t ctid, uint64_t tls)
{
	if (!(flags & CLONE_THREAD_F))
		return sys_fork(s, flags, stack, ptid, ctid); /* a new process (CLONE_VM too: copied) */
	if ((flags & (CLONE_VM_F | CLONE_SIGHAND_F)) != (CLONE_VM_F | CLONE_SIGHAND_F))
		return -EINVAL;
	int is_new;
	struct thread *parent = cur_thread(s), *t = thread_slot(s, &is_new);
	if (!t)
		return -EAGAIN;
	memset(t, 0, sizeof(*t));
	if (uc_context_alloc(s->p->uc, &t->regs) != UC_ERR_OK)
		return -ENOMEM;
	t->proc = s->p;
	t->tid = s->next_tid;
	uint32_t tid = t->tid;
	if ((flags & CLONE_PARENT_SETTID_F) && mem_write(s, ptid, &tid, 4) < 0)
		return uc_context_free(t->regs), t->regs = NULL, -EFAULT;
	if ((flags & CLONE_CHILD_SETTID_F) && mem_write(s, ctid, &tid, 4) < 0)
		return uc_context_free(t->regs), t->regs = NULL, -EFAULT;
	/* the child returns 0 from the call, on its own stack, with its own TLS */
	uint64_t next = s->syscall_pc + 2, zero = 0, rflags;
	uc_reg_read(s->p->uc, UC_X86_REG_RFLAGS, &rflags);
	uc_context_save(s->p->uc, t->regs);
	uc_context_reg_write(t->regs, UC_X86_REG_RAX, &zero);
	uc_context_reg_write(t->regs, UC_X86_REG_RIP, &next);
	uc_context_reg_write(t->regs, UC_X86_REG_RCX, &next);
	uc_context_reg_write(t->regs, UC_X86_REG_R11, &rflags);
	if (stack)
		uc_context_reg_write(t->regs, UC_X86_REG_RSP, &stack);
	if (flags & CLONE_SETTLS_F)
		uc_context_reg_write(t->regs, UC_X86_REG_FS_BASE, &tls);
	t->state = TS_RUNNABLE;
	t->resume_pc = next;
	t->run_start = 1;
	t->wake_ns = UINT64_MAX;
	t->clear_child_tid = (flags & CLONE_CHILD_CLEARTID_F) ? ctid : 0;
	t->sigmask = parent->sigmask;
	s->next_tid++;
	s->nthreads += is_new;
	s->nlive++;
	s->p->nlive++;
	stacks_thread_created(s, tid, 0);
	if (s->task.fork)
		s->task.fork(s->task.ctx, s->p->pid, s->p->pid, tid, parent->tid);
	sched_update_attention(s);
	return tid;
}

int64_t sys_clone(struct sim *s, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid,
		  uint64_t tls)
{
	return new_thread(s, flags & ~0xffULL, stack, ptid, ctid, tls);
}

int64_t sys_clone3(struct sim *s, uint64_t args, uint64_t size)
{
	/* struct clone_args (include/uapi/linux/sched.h): flags, pidfd, child_tid,
	 * parent_tid, exit_signal, stack, stack_size, tls, … */
	uint64_t ca[8] = {0};
	if (size < 64)
		return -EINVAL;
	if (mem_read(s, args, ca, sizeof(ca)) < 0)
		return -EFAULT;
	uint64_t stack = ca[5] ? ca[5] + ca[6] : 0;
	return new_thread(s, ca[0], stack, ca[3], ca[2], ca[7]);
}

/* --- exit ------------------------------------------------------------------- */

void sys_thread_exit(struct sim *s, int status)
{
	struct thread *t = cur_thread(s);
	if (s->p->nlive == 1) {
		proc_end(s, (status & 0xff) << 8);
		return;
	}
	if (t->clear_child_tid) {
		uint32_t zero = 0;
		if (mem_write(s, t->clear_child_tid, &zero, 4) == 0)
			futex_wake_any(s, t->clear_child_tid, 1);
	}
	t->state = TS_EXITED;
	stacks_thread_exited(s, t->tid);
	thread_free_contexts(t);
	s->nlive--;
	s->p->nlive--;
	sched_request(s, s->syscall_pc + 2);
}

void sched_block_retry(struct sim *s, int state)
{
	struct thread *t = cur_thread(s);
	const struct sysargs *x = s->cur_args;
	t->retry_args.nr = x->nr;
	memcpy(t->retry_args.a, x->a, sizeof(t->retry_args.a));
	t->retry_pc = s->syscall_pc;
	t->state = state;
	t->wake_ns = UINT64_MAX;
	sched_request(s, s->syscall_pc + 2);
}

void sched_retry(struct sim *s, struct thread *t)
{
	if (t->state == TS_EXITED || t->state == TS_RUNNABLE)
		return;
	t->state = TS_RUNNABLE;
	t->retry = 1;
	t->wake_ns = UINT64_MAX;
	sched_update_attention(s);
}

/* --- switching -------------------------------------------------------------- */

/* Every thread waits: jump simulated time to the first deadline and let it
 * pass. 0, or -1 when nothing can ever wake anybody. */
static int idle_until_next_event(struct sim *s)
{
	uint64_t first = timers_next_sim_ns(s);
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct thread *t = &s->threads[i];
		if ((t->state == TS_FUTEX || t->state == TS_SLEEP || t->state == TS_IO || t->state == TS_SIGWAIT) &&
		    t->wake_ns < first)
			first = t->wake_ns;
	}
	if (first == UINT64_MAX) {
		if (!sched_io_waiters(s))
			return -1;
		sched_poll_io(s, -1); /* only the world outside can go on: wait for it */
		return 0;
	}
	uint64_t now = bstream_insns(s->bs) + 1 + s->time_offset_ns;
	if (first > now)
		s->time_offset_ns += first - now;
	now = first;
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = &s->threads[i];
		if ((t->state == TS_FUTEX || t->state == TS_SLEEP) && t->wake_ns <= now)
			sched_wake(s, t, t->state == TS_FUTEX ? -ETIMEDOUT : 0);
		if (t->state == TS_IO && t->wake_ns <= now) { /* poll's timeout: the call answers */
			t->io_timed_out = 1;
			sched_retry(s, t);
		}
		if (t->state == TS_SIGWAIT && t->wake_ns <= now) { /* sigtimedwait's timeout */
			t->sigwait_timed_out = 1;
			sched_retry(s, t);
		}
	}
	timers_due(s);
	return 0;
}

static void save_thread(struct sim *s, struct thread *t, uint64_t pc)
{
	rep_ref_switch_out(s, pc);
	bstream_finish(s->bs, pc, 0);
	t->run_start = bstream_next_run_start(s->bs);
	t->rep_held = bstream_rep_take(s->bs, pc);
	uint64_t now = bstream_insns(s->bs), ran = now > t->ran_from ? now - t->ran_from : 0;
	t->cpu_ns += ran; /* its CPU time, and its process's */
	if (t->proc)
		t->proc->cpu_ns += ran;
	t->ran_from = now;
	if (t->state == TS_EXITED)
		return;
	uc_reg_write(s->p->uc, UC_X86_REG_RIP, &pc);
	uc_context_save(s->p->uc, t->regs);
	t->resume_pc = pc;
}

static uint64_t load_thread(struct sim *s, size_t idx)
{
	struct thread *t = &s->threads[idx];
	struct proc *old = s->p;
	s->cur = idx;
	if (t->proc != old) {
		if (old->state != PROC_LIVE)
			proc_image_close(s, old); /* emulation stopped: its engine can go */
		proc_enter(s, t->proc);
	}
	uc_context_restore(s->p->uc, t->regs);
	t->ran_from = bstream_insns(s->bs);
	bstream_set_tid(s->bs, t->tid);
	bstream_set_next_run_start(s->bs, t->run_start);
	bstream_rep_give(s->bs, t->rep_held);
	t->rep_held.valid = 0;
	bstream_new_context(s->bs);
	s->slice_end = slice_now(s) + s->quantum;
	return t->resume_pc;
}

/* The next runnable thread after the current one, round robin; -1 when none. */
static long pick_next(const struct sim *s)
{
	for (size_t k = 1; k <= s->nthreads; k++) {
		size_t i = (s->cur + k) % s->nthreads;
		if (s->threads[i].state == TS_RUNNABLE)
			return (long)i;
	}
	return -1;
}

uint64_t sched_attend(struct sim *s)
{
	uint64_t pc = s->resume_pc;
	s->attention = 0;
	if (s->sigreturn) {
		s->sigreturn = 0;
		pc = signal_return(s);
		bstream_finish(s->bs, pc, 0);
	}
	timers_due(s);
	if (s->exec_pending)
		pc = proc_exec(s, pc);
	for (int guard = 0; guard < 1000000 && !s->stop_reason; guard++) {
		struct thread *t = cur_thread(s);
		if (t->state == TS_RUNNABLE && t->has_wake_ret) {
			uc_reg_write(s->p->uc, UC_X86_REG_RAX, &t->wake_ret);
			t->has_wake_ret = 0;
		}
		if (t->state == TS_RUNNABLE && t->retry) {
			/* its blocked system call can go on now */
			struct sysargs x = {t->retry_args.nr, {0}};
			memcpy(x.a, t->retry_args.a, sizeof(x.a));
			t->retry = 0;
			s->syscall_pc = t->retry_pc;
			s->cur_args = &x;
			int64_t r = syscall_run(s, &x);
			if (t->state == TS_RUNNABLE) {
				signal_wait_end(t); /* ended however the call ended */
				uc_reg_write(s->p->uc, UC_X86_REG_RAX, &r);
			}
			if (s->exec_pending)
				pc = proc_exec(s, pc);
			continue;
		}
		if (t->state == TS_RUNNABLE && signal_deliverable(s)) {
			bstream_finish(s->bs, pc, 0);
			pc = signal_deliver(s, pc);
			continue;
		}
		int slice_over = slice_now(s) >= s->slice_end;
		if (slice_over || t->state != TS_RUNNABLE)
			sched_poll_io(s, 0);
		if (t->state == TS_RUNNABLE && t->retry)
			continue; /* its file just became ready: the call runs again first */
		if (t->state == TS_RUNNABLE && (!slice_over || runnable_count(s) == 1))
			break;
		long next = pick_next(s);
		if (next < 0) {
			if (*s->interrupt_flag) { /* a stop signal ended the host's wait */
				bstream_finish(s->bs, pc, 0);
				sim_stop(s, SIM_END_SIGNAL, *s->interrupt_flag);
				break;
			}
			if (idle_until_next_event(s) < 0) {
				bstream_finish(s->bs, pc, 0);
				snprintf(s->res->message, sizeof(s->res->message),
					 "deadlock: all %zu threads wait and nothing can wake them (Linux would hang)",
					 s->nlive);
				sim_stop(s, SIM_END_DEADLOCK, 0);
				break;
			}
			continue;
		}
		if ((size_t)next == s->cur) {
			/* it was woken (or its slice renewed) while nobody else could run */
			s->slice_end = slice_now(s) + s->quantum;
			continue;
		}
		save_thread(s, t, pc);
		pc = load_thread(s, (size_t)next);
	}
	sched_update_attention(s);
	return pc;
}
