/* Clocks and timers on the simulated clocks (see sim/linux/sys_timer.h): clock_gettime, the
 * interval timers (setitimer, getitimer, alarm) and the POSIX timers (timer_create,
 * timer_settime, timer_gettime, timer_getoverrun, timer_delete), one machinery for both.
 *
 * Semantics of kernel/time/posix-timers.c, posix-cpu-timers.c and itimer.c: an expired
 * periodic timer moves on by whole intervals (hrtimer_forward); a timer whose signal is
 * still pending queues no second one but counts the expirations, which reach si_overrun
 * and timer_getoverrun when the signal is taken. Each timer has its own queued instance
 * (the kernel's preallocated sigqueue), so two timers on one signal both arrive. Setting
 * or deleting a timer drops its pending signal (Linux 6.13 on). Timers are not inherited
 * by fork and execve deletes them. Simulated time is 1 ns per retired instruction plus
 * sleeps; CPU time is the instructions a thread (or a process's threads) retired. */
#include "sim/linux/sys_timer.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>

#include "sim/linux/linux.h"
#include "sim/linux/sched.h"
#include "sim/linux/signal.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define NS_PER_US 1000ULL
#define NS_PER_S 1000000000ULL
#define PTIMER_MAX 1024          /* per process; Linux's bound is RLIMIT_SIGPENDING */
#define SIGEV_SIZE 64            /* struct sigevent (uapi/asm-generic/siginfo.h) */
#define SI_KERNEL_C 0x80
#define SI_TIMER_C (-2)
#define CLOCK_SGI_CYCLE_C 10

/* A POSIX timer (struct k_itimer). */
struct ptimer {
	struct ktimer kt;
	int32_t id;                  /* -1: a free slot */
	int realtime;                /* CLOCK_REALTIME, _TAI: absolute times count from the epoch */
	int notify;                  /* SIGEV_SIGNAL, SIGEV_NONE, SIGEV_THREAD_ID */
	int signo;
	uint32_t tid;                /* SIGEV_THREAD_ID: the thread; 0: the process */
	uint64_t value;              /* sigev_value */
	int queued;                  /* its signal is pending, not yet taken */
	uint64_t queued_seq;         /* instances are taken in the order they were queued */
	uint64_t overrun;            /* expirations since its signal was queued */
	int32_t overrun_last;        /* of the last signal taken: timer_getoverrun */
};

struct ptimers {
	struct ptimer *v;
	size_t n, cap;
	uint32_t next_id;
	uint64_t seq;
};

/* --- clocks ----------------------------------------------------------------- */

/* Instructions retired so far, inside a system call counting up to it. */
static uint64_t insns_now(struct sim *s, int in_syscall)
{
	return in_syscall ? bstream_insns_before(s->bs, s->syscall_pc) + 1 : bstream_insns(s->bs);
}

/* The CPU time of the running thread since it got the CPU. */
static uint64_t running_for(struct sim *s, int in_syscall)
{
	uint64_t now = insns_now(s, in_syscall), from = cur_thread(s)->ran_from;
	return now > from ? now - from : 0;
}

/* Simulated time, as sim_now_ns counts it (the instruction about to retire included), and
 * as the scheduler does when every thread waits and time jumps. */
static uint64_t sim_clock(struct sim *s, int in_syscall)
{
	return in_syscall ? sim_now_ns(s) : bstream_insns(s->bs) + 1 + s->time_offset_ns;
}

/* Now on the clock of kt (owned by process p). */
static uint64_t clock_now(struct sim *s, const struct proc *p, const struct ktimer *kt, int in_syscall)
{
	const struct thread *c = cur_thread(s);
	if (kt->clock == TCLK_SIM)
		return sim_clock(s, in_syscall);
	if (kt->clock == TCLK_PROC_CPU)
		return p->cpu_ns + (c->proc == p ? running_for(s, in_syscall) : 0);
	const struct thread *t = thread_by_tid(s, kt->tid);
	if (!t)
		return 0;
	return t->cpu_ns + (t == c ? running_for(s, in_syscall) : 0);
}

/* A clock id as a timer's clock (kt->clock, kt->tid) and its process in *pp; *realtime
 * when its origin is the epoch. Linux's ids, and the CPU clocks of a process or thread
 * by id (include/linux/posix-timers.h, CPUCLOCK_*). 0, -EINVAL, or -EOPNOTSUPP for a
 * clock no timer can use (for_timer). */
static int clock_decode(struct sim *s, int64_t id, int for_timer, struct ktimer *kt, struct proc **pp,
			int *realtime)
{
	memset(kt, 0, sizeof(*kt));
	*pp = s->p;
	*realtime = 0;
	if (id < 0) {
		int64_t which = id & 3, pid = (int32_t) ~(id >> 3);
		if (which == 3)
			return -EINVAL; /* a clock by file descriptor: none here */
		if (id & 4) { /* one thread's, of the caller's process */
			const struct thread *t = pid ? thread_by_tid(s, (uint32_t)pid) : cur_thread(s);
			if (!t || t->proc != s->p)
				return -EINVAL;
			kt->clock = TCLK_THREAD_CPU, kt->tid = t->tid;
			return 0;
		}
		if (pid) {
			const struct thread *t = thread_by_tid(s, (uint32_t)pid);
			if (!t || t->tid != t->proc->pid)
				return -EINVAL;
			*pp = t->proc;
		}
		kt->clock = TCLK_PROC_CPU;
		return 0;
	}
	switch (id) {
	case CLOCK_REALTIME: case CLOCK_TAI:
		*realtime = 1;
		return 0;
	case CLOCK_MONOTONIC: case CLOCK_BOOTTIME:
		return 0;
	case CLOCK_PROCESS_CPUTIME_ID:
		kt->clock = TCLK_PROC_CPU;
		return 0;
	case CLOCK_THREAD_CPUTIME_ID:
		kt->clock = TCLK_THREAD_CPU, kt->tid = cur_thread(s)->tid;
		return 0;
	case CLOCK_REALTIME_COARSE: case CLOCK_REALTIME_ALARM:
		*realtime = 1;
		return for_timer ? -EOPNOTSUPP : 0; /* alarm timers want an RTC the machine lacks */
	case CLOCK_MONOTONIC_RAW: case CLOCK_MONOTONIC_COARSE: case CLOCK_BOOTTIME_ALARM:
		return for_timer ? -EOPNOTSUPP : 0;
	}
	return -EINVAL; /* CLOCK_SGI_CYCLE (gone) and numbers past CLOCK_TAI */
}

int64_t timer_clock_gettime(struct sim *s, int64_t id, uint64_t tsp)
{
	struct ktimer kt;
	struct proc *p;
	int realtime, err = clock_decode(s, id, 0, &kt, &p, &realtime);
	if (err < 0)
		return err;
	uint64_t ns = clock_now(s, p, &kt, 1) + (realtime ? s->realtime_base_ns : 0);
	int64_t ts[2] = {(int64_t)(ns / NS_PER_S), (int64_t)(ns % NS_PER_S)};
	return tsp && mem_write(s, tsp, ts, sizeof(ts)) < 0 ? -EFAULT : 0;
}

/* --- the machinery both kinds share ------------------------------------------- */

/* Expirations of kt by now (0 when it is not due); moves it on to its next one. */
static uint64_t ktimer_expire(struct ktimer *kt, uint64_t now)
{
	if (!kt->deadline || kt->deadline > now)
		return 0;
	if (!kt->interval) {
		kt->deadline = 0;
		return 1;
	}
	uint64_t k = (now - kt->deadline) / kt->interval + 1;
	kt->deadline += k * kt->interval;
	return k;
}

/* Time left on kt, 0 when disarmed or due. */
static uint64_t ktimer_left(const struct ktimer *kt, uint64_t now)
{
	return kt->deadline > now ? kt->deadline - now : 0;
}

/* The machine's instruction count at which kt of process p expires, if the running
 * thread keeps the CPU; UINT64_MAX when it cannot while it does. */
static uint64_t ktimer_insns(struct sim *s, const struct proc *p, const struct ktimer *kt)
{
	if (!kt->deadline)
		return UINT64_MAX;
	if (kt->clock == TCLK_SIM) /* sim_clock reaches the deadline there */
		return kt->deadline > s->time_offset_ns + 1 ? kt->deadline - s->time_offset_ns - 1 : 0;
	const struct thread *c = cur_thread(s);
	if ((kt->clock == TCLK_PROC_CPU && c->proc != p) || (kt->clock == TCLK_THREAD_CPU && c->tid != kt->tid))
		return UINT64_MAX; /* its clock stands still until its thread runs */
	return bstream_insns(s->bs) + ktimer_left(kt, clock_now(s, p, kt, 0));
}

/* Whether a POSIX timer expires by itself. A SIGEV_NONE one is only read; one whose
 * signal pends waits until it is taken (as Linux rearms it then), and counts the
 * expirations it missed meanwhile as overruns (ptimer_catch_up). */
static int ptimer_live(const struct ptimer *t)
{
	return t->id >= 0 && t->notify != SIGEV_NONE && !t->queued && t->kt.deadline;
}

/* A timer that is not live moves on to its next expiry after now: overruns. */
static void ptimer_catch_up(struct sim *s, struct ptimer *pt, int in_syscall)
{
	pt->overrun += ktimer_expire(&pt->kt, clock_now(s, s->p, &pt->kt, in_syscall));
}

static const int itimer_signal[3] = {SIGALRM, SIGVTALRM, SIGPROF};

/* sig to process p (t NULL) or its thread t, as from the machine. */
static int post(struct sim *s, struct proc *p, struct thread *t, int sig, int timer)
{
	struct proc *self = s->p;
	s->p = p;
	int r = timer ? signal_post_timer(s, t, sig) : (signal_send(s, t, sig, SI_KERNEL_C, 0), 1);
	s->p = self;
	return r;
}

/* POSIX timer pt of p expired k times. */
static void ptimer_fire(struct sim *s, struct proc *p, struct ptimer *pt, uint64_t k)
{
	struct thread *t = NULL;
	if (pt->tid && (!(t = thread_by_tid(s, pt->tid)) || t->proc != p))
		return; /* its thread is gone: nobody gets it */
	if (post(s, p, t, pt->signo, 1)) {
		pt->queued = 1;
		pt->queued_seq = ++p->ptimers->seq;
		pt->overrun = k - 1;
	}
}

void timers_due(struct sim *s)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc *p = s->procs[i];
		if (p->state != PROC_LIVE)
			continue;
		for (int k = 0; k < 3; k++)
			if (ktimer_expire(&p->itimers[k], clock_now(s, p, &p->itimers[k], 0)))
				post(s, p, NULL, itimer_signal[k], 0);
		for (size_t k = 0; p->ptimers && k < p->ptimers->n; k++) {
			struct ptimer *pt = &p->ptimers->v[k];
			uint64_t n = ptimer_live(pt) ? ktimer_expire(&pt->kt, clock_now(s, p, &pt->kt, 0)) : 0;
			if (n)
				ptimer_fire(s, p, pt, n);
			struct thread *t;
			if (pt->id >= 0 && pt->queued && pt->tid && (!(t = thread_by_tid(s, pt->tid)) || t->proc != p))
				pt->queued = 0; /* its thread ended with the signal pending: the timer goes on */
		}
	}
}

uint64_t timers_next_insns(struct sim *s)
{
	uint64_t at = UINT64_MAX;
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc *p = s->procs[i];
		if (p->state != PROC_LIVE)
			continue;
		for (int k = 0; k < 3; k++) {
			uint64_t d = ktimer_insns(s, p, &p->itimers[k]);
			at = d < at ? d : at;
		}
		for (size_t k = 0; p->ptimers && k < p->ptimers->n; k++) {
			uint64_t d = ptimer_live(&p->ptimers->v[k]) ? ktimer_insns(s, p, &p->ptimers->v[k].kt) : UINT64_MAX;
			at = d < at ? d : at;
		}
	}
	return at;
}

uint64_t timers_next_sim_ns(struct sim *s)
{
	uint64_t at = UINT64_MAX;
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct proc *p = s->procs[i];
		if (p->state != PROC_LIVE)
			continue;
		for (int k = 0; k < 3; k++)
			if (p->itimers[k].clock == TCLK_SIM && p->itimers[k].deadline && p->itimers[k].deadline < at)
				at = p->itimers[k].deadline;
		for (size_t k = 0; p->ptimers && k < p->ptimers->n; k++) {
			const struct ptimer *pt = &p->ptimers->v[k];
			if (ptimer_live(pt) && pt->kt.clock == TCLK_SIM && pt->kt.deadline < at)
				at = pt->kt.deadline;
		}
	}
	return at;
}

/* --- interval timers (setitimer, getitimer, alarm) ---------------------------- */

static void ns_to_tv(uint64_t ns, int64_t tv[2])
{
	tv[0] = (int64_t)(ns / NS_PER_S);
	tv[1] = (int64_t)(ns % NS_PER_S / NS_PER_US);
}

static void itimer_get(struct sim *s, int k, int64_t out[4])
{
	const struct ktimer *kt = &s->p->itimers[k];
	ns_to_tv(kt->interval, out);
	ns_to_tv(ktimer_left(kt, clock_now(s, s->p, kt, 1)), out + 2);
}

/* Arms itimer k to expire value ns from now (0: disarms). */
static void itimer_arm(struct sim *s, int k, uint64_t value, uint64_t interval)
{
	struct ktimer *kt = &s->p->itimers[k];
	kt->clock = k ? TCLK_PROC_CPU : TCLK_SIM;
	kt->interval = interval;
	kt->deadline = value ? clock_now(s, s->p, kt, 1) + value : 0;
	sched_update_attention(s);
}

static int64_t sys_itimer(struct sim *s, long nr, const uint64_t *a)
{
	int64_t cur[4];
	if (nr == SYS_alarm) {
		itimer_get(s, 0, cur);
		int64_t left = cur[2] + (cur[3] > 0);
		itimer_arm(s, 0, a[0] * NS_PER_S, 0);
		return left;
	}
	if (a[0] > 2)
		return -EINVAL;
	int k = (int)a[0];
	if (nr == SYS_getitimer) {
		itimer_get(s, k, cur);
		return mem_write(s, a[1], cur, sizeof(cur)) < 0 ? -EFAULT : 0;
	}
	/* setitimer(which, new, old) */
	int64_t nv[4] = {0};
	if (a[1] && mem_read(s, a[1], nv, sizeof(nv)) < 0)
		return -EFAULT;
	for (int i = 0; i < 4; i++)
		if (nv[i] < 0 || ((i & 1) && nv[i] >= 1000000))
			return -EINVAL;
	itimer_get(s, k, cur);
	if (a[2] && mem_write(s, a[2], cur, sizeof(cur)) < 0)
		return -EFAULT;
	itimer_arm(s, k, (uint64_t)nv[2] * NS_PER_S + (uint64_t)nv[3] * NS_PER_US,
		   (uint64_t)nv[0] * NS_PER_S + (uint64_t)nv[1] * NS_PER_US);
	return 0;
}

/* --- POSIX timers ------------------------------------------------------------ */

static struct ptimer *ptimer_find(struct proc *p, uint64_t id)
{
	for (size_t i = 0; p->ptimers && i < p->ptimers->n; i++)
		if (p->ptimers->v[i].id >= 0 && (uint64_t)p->ptimers->v[i].id == id)
			return &p->ptimers->v[i];
	return NULL;
}

/* A slot for a new timer of p with a fresh id (Linux counts them up from 0); NULL when p
 * has PTIMER_MAX. */
static struct ptimer *ptimer_alloc(struct proc *p)
{
	if (!p->ptimers && !(p->ptimers = calloc(1, sizeof(*p->ptimers))))
		return NULL;
	struct ptimers *tab = p->ptimers;
	struct ptimer *slot = NULL;
	size_t used = 0;
	for (size_t i = 0; i < tab->n; i++) {
		if (tab->v[i].id < 0)
			slot = slot ? slot : &tab->v[i];
		else
			used++;
	}
	if (used >= PTIMER_MAX)
		return NULL;
	if (!slot) {
		if (tab->n == tab->cap) {
			size_t cap = tab->cap ? tab->cap * 2 : 8;
			struct ptimer *v = realloc(tab->v, cap * sizeof(*v));
			if (!v)
				return NULL;
			tab->v = v, tab->cap = cap;
		}
		slot = &tab->v[tab->n++];
	}
	memset(slot, 0, sizeof(*slot));
	slot->id = -1;
	uint32_t id;
	do /* ids wrap at INT_MAX; one in use is skipped */
		id = tab->next_id++ & 0x7fffffff;
	while (ptimer_find(p, id));
	slot->id = (int32_t)id;
	return slot;
}

/* Its pending signal, if any, goes away (the timer was set again or deleted). */
static void ptimer_unqueue(struct sim *s, struct proc *p, struct ptimer *pt)
{
	if (!pt->queued)
		return;
	pt->queued = 0;
	signal_timer_dropped(s, p, pt->tid, pt->signo);
}

/* sigevent at sevp (0: the default, SIGALRM with the timer's id) into pt (good_sigevent). */
static int64_t ptimer_event(struct sim *s, struct ptimer *pt, const unsigned char *ev)
{
	if (!ev) {
		pt->notify = SIGEV_SIGNAL, pt->signo = SIGALRM, pt->value = (uint32_t)pt->id;
		return 0;
	}
	int32_t signo, notify, tid;
	memcpy(&pt->value, ev, 8);
	memcpy(&signo, ev + 8, 4);
	memcpy(&notify, ev + 12, 4);
	memcpy(&tid, ev + 16, 4);
	pt->notify = notify, pt->signo = signo;
	switch (notify) {
	case SIGEV_THREAD_ID: { /* a thread of the caller's process */
		const struct thread *t = thread_by_tid(s, (uint32_t)tid);
		if (tid <= 0 || !t || t->proc != s->p)
			return -EINVAL;
		pt->tid = (uint32_t)tid;
	}
		/* fall through */
	case SIGEV_SIGNAL:
	case SIGEV_THREAD: /* glibc never passes it; the kernel takes it as SIGEV_SIGNAL */
		if (signo <= 0 || signo > 64)
			return -EINVAL;
		pt->notify = notify == SIGEV_THREAD ? SIGEV_SIGNAL : notify;
		return 0;
	case SIGEV_NONE:
		return 0;
	}
	return -EINVAL;
}

static int64_t timer_create_(struct sim *s, int64_t clk, uint64_t sevp, uint64_t idp)
{
	unsigned char ev[SIGEV_SIZE];
	if (sevp && mem_read(s, sevp, ev, sizeof(ev)) < 0)
		return -EFAULT;
	struct ktimer kt;
	struct proc *owner;
	int realtime;
	int64_t err = clock_decode(s, clk, 1, &kt, &owner, &realtime);
	if (err < 0)
		return err;
	if (owner != s->p)
		return -EINVAL; /* another process's CPU clock: not kept here */
	struct ptimer *pt = ptimer_alloc(s->p);
	if (!pt)
		return -EAGAIN;
	pt->kt = kt;
	pt->realtime = realtime;
	int32_t id = pt->id;
	if ((err = ptimer_event(s, pt, sevp ? ev : NULL)) < 0 || (err = mem_write(s, idp, &id, 4) < 0 ? -EFAULT : 0) < 0) {
		pt->id = -1;
		return err;
	}
	return 0;
}

/* struct itimerspec of pt (interval, value) as timer_gettime reports it. */
static void ptimer_get(struct sim *s, struct ptimer *pt, int64_t out[4])
{
	uint64_t now = clock_now(s, s->p, &pt->kt, 1);
	if (!ptimer_live(pt))
		ptimer_catch_up(s, pt, 1); /* nobody else moves it on */
	uint64_t left = ktimer_left(&pt->kt, now);
	out[0] = (int64_t)(pt->kt.interval / NS_PER_S), out[1] = (int64_t)(pt->kt.interval % NS_PER_S);
	out[2] = (int64_t)(left / NS_PER_S), out[3] = (int64_t)(left % NS_PER_S);
}

static int64_t timer_settime_(struct sim *s, uint64_t id, int flags, uint64_t newp, uint64_t oldp)
{
	int64_t nv[4], old[4];
	if (!newp)
		return -EINVAL;
	if (mem_read(s, newp, nv, sizeof(nv)) < 0)
		return -EFAULT;
	for (int i = 0; i < 4; i += 2)
		if (nv[i] < 0 || nv[i + 1] < 0 || nv[i + 1] >= (int64_t)NS_PER_S)
			return -EINVAL;
	struct ptimer *pt = ptimer_find(s->p, id);
	if (!pt)
		return -EINVAL;
	ptimer_get(s, pt, old);
	ptimer_unqueue(s, s->p, pt);
	pt->overrun_last = 0;
	uint64_t value = (uint64_t)nv[2] * NS_PER_S + (uint64_t)nv[3], now = clock_now(s, s->p, &pt->kt, 1);
	pt->kt.interval = value ? (uint64_t)nv[0] * NS_PER_S + (uint64_t)nv[1] : 0;
	if (!value) {
		pt->kt.deadline = 0;
	} else if (flags & TIMER_ABSTIME) { /* a time on the clock; a past one expires at once */
		uint64_t base = pt->realtime ? s->realtime_base_ns : 0;
		pt->kt.deadline = value > base ? value - base : 1;
	} else {
		pt->kt.deadline = now + value;
	}
	sched_update_attention(s);
	return oldp && mem_write(s, oldp, old, sizeof(old)) < 0 ? -EFAULT : 0;
}

static int64_t timer_delete_(struct sim *s, uint64_t id)
{
	struct ptimer *pt = ptimer_find(s->p, id);
	if (!pt)
		return -EINVAL;
	ptimer_unqueue(s, s->p, pt);
	pt->id = -1;
	sched_update_attention(s);
	return 0;
}

int timer_take_signal(struct sim *s, uint32_t tid, int sig, struct sig_info_rec *rec)
{
	struct ptimer *best = NULL;
	for (size_t i = 0; s->p->ptimers && i < s->p->ptimers->n; i++) {
		struct ptimer *pt = &s->p->ptimers->v[i];
		if (pt->id >= 0 && pt->queued && pt->signo == sig && pt->tid == tid &&
		    (!best || pt->queued_seq < best->queued_seq))
			best = pt;
	}
	if (!best)
		return 0;
	best->queued = 0;
	ptimer_catch_up(s, best, 0);
	sched_update_attention(s); /* it runs again */
	best->overrun_last = best->overrun > 0x7fffffff ? 0x7fffffff : (int32_t)best->overrun;
	best->overrun = 0;
	memset(rec, 0, sizeof(*rec));
	rec->code = SI_TIMER_C;
	rec->timerid = best->id;
	rec->overrun = best->overrun_last;
	rec->value = best->value;
	return 1;
}

int timer_signal_queued(const struct proc *p, uint32_t tid, int sig)
{
	for (size_t i = 0; p->ptimers && i < p->ptimers->n; i++) {
		const struct ptimer *pt = &p->ptimers->v[i];
		if (pt->id >= 0 && pt->queued && pt->signo == sig && pt->tid == tid)
			return 1;
	}
	return 0;
}

void timers_flush_signal(struct sim *s, struct proc *p, int sig)
{
	for (size_t i = 0; p->ptimers && i < p->ptimers->n; i++)
		if (p->ptimers->v[i].signo == sig)
			p->ptimers->v[i].queued = 0;
	sched_update_attention(s);
}

void timers_exec(struct sim *s, struct proc *p)
{
	for (size_t i = 0; p->ptimers && i < p->ptimers->n; i++)
		if (p->ptimers->v[i].id >= 0)
			ptimer_unqueue(s, p, &p->ptimers->v[i]);
	timers_free(p);
}

void timers_free(struct proc *p)
{
	if (p->ptimers)
		free(p->ptimers->v);
	free(p->ptimers);
	p->ptimers = NULL;
}

int sys_timer(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	const uint64_t *a = x->a;
	struct ptimer *pt;
	int64_t cur[4];
	switch (x->nr) {
	case SYS_getitimer: case SYS_setitimer: case SYS_alarm: *ret = sys_itimer(s, x->nr, a); return 1;
	case SYS_clock_gettime: *ret = timer_clock_gettime(s, (int32_t)a[0], a[1]); return 1;
	case SYS_timer_create: *ret = timer_create_(s, (int32_t)a[0], a[1], a[2]); return 1;
	case SYS_timer_settime: *ret = timer_settime_(s, (uint32_t)a[0], (int)a[1], a[2], a[3]); return 1;
	case SYS_timer_gettime:
		if (!(pt = ptimer_find(s->p, (uint32_t)a[0])))
			return *ret = -EINVAL, 1;
		ptimer_get(s, pt, cur);
		*ret = mem_write(s, a[1], cur, sizeof(cur)) < 0 ? -EFAULT : 0;
		return 1;
	case SYS_timer_getoverrun:
		pt = ptimer_find(s->p, (uint32_t)a[0]);
		*ret = pt ? pt->overrun_last : -EINVAL;
		return 1;
	case SYS_timer_delete: *ret = timer_delete_(s, (uint32_t)a[0]); return 1;
	}
	return 0;
}
