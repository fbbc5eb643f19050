/* Linux x86-64 system-call entry (arch/x86/entry/entry_64.S semantics: number in
 * RAX, arguments in RDI RSI RDX R10 R8 R9, result in RAX, RCX = return RIP and
 * R11 = RFLAGS afterwards) and the process, time, identity and signal calls.
 * Files: sys_file.c; memory: sys_mem.c. Unsupported calls return -ENOSYS and
 * are named once on stderr (fatal with --strict). */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "sim/linux/linux.h"
#include "sim/linux/process.h"
#include "sim/linux/sched.h"
#include "sim/linux/signal.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

static int64_t put(struct sim *s, uint64_t addr, const void *v, size_t n)
{
	return mem_write(s, addr, v, n) < 0 ? -EFAULT : 0;
}

static int64_t do_uname(struct sim *s, uint64_t addr)
{
	struct utsname u;
	memset(&u, 0, sizeof(u));
	strcpy(u.sysname, "Linux");
	strcpy(u.nodename, "pmusim");
	strcpy(u.release, "6.1.0-pmusim");
	strcpy(u.version, "#1 SMP PREEMPT_DYNAMIC");
	strcpy(u.machine, "x86_64");
	strcpy(u.domainname, "(none)");
	return put(s, addr, &u, sizeof(u));
}

static int64_t do_prlimit(struct sim *s, uint64_t res, uint64_t newp, uint64_t oldp)
{
	uint64_t lim[2] = {RLIM_INFINITY, RLIM_INFINITY};
	if (res >= RLIM_NLIMITS)
		return -EINVAL;
	if (res == RLIMIT_STACK)
		lim[0] = STACK_SIZE;
	else if (res == RLIMIT_NOFILE)
		lim[0] = lim[1] = GUEST_FD_MAX;
	else if (res == RLIMIT_CORE)
		lim[0] = 0;
	(void)newp; /* limits are fixed: setting them is accepted and ignored */
	return oldp ? put(s, oldp, lim, sizeof(lim)) : 0;
}

/* A signal the kernel raises on the calling thread (e.g. SIGPIPE). */
int64_t sys_raise(struct sim *s, int sig)
{
	return signal_send(s, cur_thread(s), sig, 0, 0);
}

/* Sends sig to process p (t NULL) or thread t of it, as from the running thread. */
static int64_t send_to(struct sim *s, struct proc *p, struct thread *t, int sig, int code)
{
	struct proc *self = s->p;
	s->p = p;
	int64_t r = signal_send(s, t, sig, code, 0);
	s->p = self;
	if (p != self && !s->attention)
		sched_request(s, s->syscall_pc + 2); /* the receiver may run first */
	return r;
}

/* kill(pid, sig): pid > 0 one process; 0, -1 and -pgid every process (one
 * group, one session), the sender last. */
static int64_t do_kill(struct sim *s, int64_t pid, int sig)
{
	if (sig < 0 || sig > 64)
		return -EINVAL;
	/* kill(2): pid > 0 that process, 0 the caller's group, -1 every process but the
	 * caller, < -1 the group -pid */
	uint32_t group = pid == 0 ? s->p->pgid : pid < -1 ? (uint32_t)-pid : 0;
	int64_t r = -ESRCH;
	int self = 0;
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc *p = s->procs[i];
		int hit = pid > 0 ? p->pid == (uint64_t)pid : pid == -1 ? p != s->p : p->pgid == group;
		if (p->state != PROC_LIVE || !hit)
			continue;
		if (p == s->p) {
			self = 1; /* last: the caller's own signal may end the run */
			continue;
		}
		r = send_to(s, p, NULL, sig, 0 /* SI_USER */);
	}
	if (self)
		r = signal_send(s, NULL, sig, 0, 0);
	return r;
}

static int64_t do_tgkill(struct sim *s, int64_t tgid, int64_t tid, int sig)
{
	struct thread *t = tid > 0 ? thread_by_tid(s, (uint32_t)tid) : NULL;
	if (!t || (tgid != -1 && t->proc->pid != (uint64_t)tgid))
		return -ESRCH;
	return send_to(s, t->proc, t, sig, -6 /* SI_TKILL */);
}

static int64_t do_nanosleep(struct sim *s, const struct sysargs *x)
{
	const uint64_t *a = x->a;
	int64_t ts[2];
	uint64_t p = x->nr == SYS_nanosleep ? a[0] : a[2];
	if (mem_read(s, p, ts, sizeof(ts)) < 0)
		return -EFAULT;
	if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
		return -EINVAL;
	uint64_t d = (uint64_t)ts[0] * 1000000000ULL + (uint64_t)ts[1], now = sim_now_ns(s);
	if (x->nr == SYS_clock_nanosleep && (a[1] & 1)) { /* TIMER_ABSTIME */
		uint64_t base = a[0] == CLOCK_REALTIME ? s->realtime_base_ns : 0;
		d = d > now + base ? d - (now + base) : 0;
	}
	return sched_sleep_until(s, now + d);
}

static int64_t do_misc(struct sim *s, const struct sysargs *x, int *handled)
{
	const uint64_t *a = x->a;
	*handled = 1;
	switch (x->nr) {
	case SYS_exit:
		sys_thread_exit(s, (int)(a[0] & 0xff));
		return 0;
	case SYS_exit_group:
		proc_end(s, (int)(a[0] & 0xff) << 8);
		return 0;
	case SYS_fork: return sys_fork(s, 0, 0, 0, 0);
	case SYS_vfork: return sys_fork(s, CLONE_VFORK_F, 0, 0, 0);
	case SYS_execve: return sys_execve(s, a[0], a[1], a[2]);
	case SYS_wait4: return sys_wait4(s, x);
	case SYS_getpid: return s->p->pid;
	case SYS_gettid: return cur_thread(s)->tid;
	case SYS_clone: return sys_clone(s, a[0], a[1], a[2], a[3], a[4]);
	case SYS_clone3: return sys_clone3(s, a[0], a[1]);
	case SYS_futex: return sys_futex(s, a);
	case SYS_rt_sigreturn:
		s->sigreturn = 1;
		sched_request(s, s->syscall_pc + 2);
		return 0;
	case SYS_pause: return sys_pause(s);
	case SYS_rt_sigsuspend: return a[1] == 8 ? sys_rt_sigsuspend(s, a[0]) : -EINVAL;
	case SYS_rt_sigpending: return sys_rt_sigpending(s, a[0]);
	case SYS_rt_sigtimedwait: return sys_rt_sigtimedwait(s, a);
	case SYS_signalfd: case SYS_signalfd4: return sys_signalfd(s, x);
	case SYS_getppid: return s->p->ppid;
	case SYS_set_tid_address:
		cur_thread(s)->clear_child_tid = a[0];
		return cur_thread(s)->tid;
	case SYS_set_robust_list: return a[1] == 24 ? 0 : -EINVAL;
	case SYS_rseq: {
		if (a[2] & 1) /* unregister */
			return 0;
		uint32_t cpu[2] = {0, 0}; /* cpu_id_start, cpu_id: always CPU 0 */
		return put(s, a[0], cpu, sizeof(cpu));
	}
	case SYS_arch_prctl:
		switch (a[0]) {
		case ARCH_SET_FS: uc_reg_write(s->p->uc, UC_X86_REG_FS_BASE, &a[1]); return 0;
		case ARCH_SET_GS: uc_reg_write(s->p->uc, UC_X86_REG_GS_BASE, &a[1]); return 0;
		case ARCH_GET_FS: case ARCH_GET_GS: {
			uint64_t v;
			uc_reg_read(s->p->uc, a[0] == ARCH_GET_FS ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE, &v);
			return put(s, a[1], &v, 8);
		}
		}
		return -EINVAL;
	case SYS_prlimit64: return do_prlimit(s, a[1], a[2], a[3]);
	case SYS_getrlimit: return do_prlimit(s, a[0], 0, a[1]);
	case SYS_setrlimit: return 0;
	case SYS_uname: return do_uname(s, a[0]);
	case SYS_clock_getres: {
		int64_t ts[2] = {0, 1};
		return a[1] ? put(s, a[1], ts, sizeof(ts)) : 0;
	}
	case SYS_gettimeofday: {
		uint64_t ns = sim_now_ns(s) + s->realtime_base_ns;
		int64_t tv[2] = {(int64_t)(ns / 1000000000ULL), (int64_t)(ns % 1000000000ULL / 1000)};
		return a[0] ? put(s, a[0], tv, sizeof(tv)) : 0;
	}
	case SYS_time: {
		int64_t t = (int64_t)((sim_now_ns(s) + s->realtime_base_ns) / 1000000000ULL);
		if (a[0] && put(s, a[0], &t, 8) < 0)
			return -EFAULT;
		return t;
	}
	case SYS_nanosleep: case SYS_clock_nanosleep: return do_nanosleep(s, x);
	case SYS_getrandom: {
		uint64_t n = a[1] > (1u << 20) ? (1u << 20) : a[1];
		unsigned char buf[4096];
		for (uint64_t done = 0; done < n;) {
			size_t k = n - done > sizeof(buf) ? sizeof(buf) : (size_t)(n - done);
			rng_fill(&s->rng, buf, k);
			if (mem_write(s, a[0] + done, buf, k) < 0)
				return done ? (int64_t)done : -EFAULT;
			done += k;
		}
		return (int64_t)n;
	}
	case SYS_rt_sigaction: return sys_rt_sigaction(s, a[0], a[1], a[2], a[3]);
	case SYS_rt_sigprocmask: return sys_rt_sigprocmask(s, (int)a[0], a[1], a[2]);
	case SYS_sigaltstack: return sys_sigaltstack(s, a[0], a[1]);
	case SYS_kill: return do_kill(s, (int64_t)a[0], (int)a[1]);
	case SYS_tgkill: return do_tgkill(s, (int64_t)a[0], (int64_t)a[1], (int)a[2]);
	case SYS_tkill: return do_tgkill(s, -1, (int64_t)a[0], (int)a[1]);
	case SYS_sched_yield:
		s->slice_end = 0; /* the slice ends here */
		sched_request(s, s->syscall_pc + 2);
		return 0;
	case SYS_fadvise64: return 0; /* advice only */
	/* extended attributes: files have none here (deterministic, like a plain filesystem) */
	case SYS_getxattr: case SYS_lgetxattr: case SYS_fgetxattr: return -ENODATA;
	case SYS_listxattr: case SYS_llistxattr: case SYS_flistxattr: return 0;
	case SYS_prctl:
		switch (a[0]) {
		case 15: /* PR_SET_NAME */
			return 0;
		case 16: /* PR_GET_NAME: the program's base name, as Linux's comm */ {
			char comm[16] = {0};
			const char *b = strrchr(s->p->path, '/');
			strncpy(comm, b ? b + 1 : s->p->path, 15);
			return put(s, a[1], comm, 16);
		}
		}
		return -EINVAL;
	case SYS_sched_getaffinity: {
		uint64_t mask = 1;
		if (a[1] < 8)
			return -EINVAL;
		return put(s, a[2], &mask, 8) < 0 ? -EFAULT : 8;
	}
	case SYS_getcpu: {
		uint32_t z = 0;
		if (a[0] && put(s, a[0], &z, 4) < 0)
			return -EFAULT;
		return a[1] ? put(s, a[1], &z, 4) : 0;
	}
	case SYS_sysinfo: {
		uint64_t info[14] = {0};
		info[0] = sim_now_ns(s) / 1000000000ULL; /* uptime */
		info[4] = 8ULL << 30;                     /* totalram */
		info[5] = 4ULL << 30;                     /* freeram */
		((uint32_t *)info)[26] = 1;               /* mem_unit */
		((uint16_t *)info)[40] = 1;               /* procs */
		return put(s, a[0], info, 112);
	}
	case SYS_getrusage: {
		uint64_t ru[18] = {0};
		uint64_t us = sim_now_ns(s) / 1000;
		ru[0] = us / 1000000, ru[1] = us % 1000000;
		return put(s, a[1], ru, sizeof(ru));
	}
	}
	*handled = 0;
	return -ENOSYS;
}

int64_t syscall_run(struct sim *s, const struct sysargs *x)
{
	int64_t ret;
	int handled;
	if (!sys_file(s, x, &ret) && !sys_mem(s, x, &ret) && !sys_meta(s, x, &ret) && !sys_poll(s, x, &ret) &&
	    !sys_net(s, x, &ret) && !sys_ident(s, x, &ret) && !sys_timer(s, x, &ret)) {
		ret = do_misc(s, x, &handled);
		if (!handled)
			sim_warn_unsupported(s, x->nr);
	}
	return ret;
}

void syscall_dispatch(struct sim *s)
{
	static const int argregs[6] = {UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX,
				       UC_X86_REG_R10, UC_X86_REG_R8, UC_X86_REG_R9};
	struct sysargs x;
	uint64_t nr, rip, rflags;
	uc_reg_read(s->p->uc, UC_X86_REG_RAX, &nr);
	uc_reg_read(s->p->uc, UC_X86_REG_RIP, &rip);
	uc_reg_read(s->p->uc, UC_X86_REG_RFLAGS, &rflags);
	x.nr = (long)nr;
	for (int i = 0; i < 6; i++)
		uc_reg_read(s->p->uc, argregs[i], &x.a[i]);
	s->syscall_pc = rip;
	s->cur_args = &x;
	/* A stop signal ends the run here rather than let a call start that may wait, or
	 * let one it cut short (a FIFO's open, EINTR) answer the program. */
	if (*s->interrupt_flag) {
		sim_stop(s, SIM_END_SIGNAL, *s->interrupt_flag);
		return;
	}
	int64_t ret = syscall_run(s, &x);
	if (*s->interrupt_flag && !s->stop_reason) {
		sim_stop(s, SIM_END_SIGNAL, *s->interrupt_flag);
		return;
	}
	uint64_t r = (uint64_t)ret, next = rip + 2;
	if (!s->attention && !s->stop_reason && signal_deliverable(s))
		sched_request(s, next); /* deliver on the way back to user mode */
	uc_reg_write(s->p->uc, UC_X86_REG_RAX, &r);
	uc_reg_write(s->p->uc, UC_X86_REG_RCX, &next);
	uc_reg_write(s->p->uc, UC_X86_REG_R11, &rflags);
}
