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

#include "sim/syscall_internal.h"

#define EPOCH_BASE_S 1767225600ULL  /* guest boots at 2026-01-01T00:00:00Z */
#define ARCH_SET_GS 0x1001
#define ARCH_SET_FS 0x1002
#define ARCH_GET_FS 0x1003
#define ARCH_GET_GS 0x1004

static int64_t put(struct sim *s, uint64_t addr, const void *v, size_t n)
{
	return mem_write(s, addr, v, n) < 0 ? -EFAULT : 0;
}

static int64_t do_clock_gettime(struct sim *s, uint64_t clk, uint64_t tsp)
{
	uint64_t ns = sim_now_ns(s);
	if (clk == CLOCK_REALTIME || clk == CLOCK_REALTIME_COARSE || clk == CLOCK_TAI)
		ns += EPOCH_BASE_S * 1000000000ULL;
	else if (clk > CLOCK_TAI)
		return -EINVAL;
	int64_t ts[2] = {(int64_t)(ns / 1000000000ULL), (int64_t)(ns % 1000000000ULL)};
	return tsp ? put(s, tsp, ts, sizeof(ts)) : 0;
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

static int sig_default_ignored(int sig)
{
	return sig == SIGCHLD || sig == SIGURG || sig == SIGWINCH || sig == SIGCONT;
}

/* A signal sent by the guest to itself (or raised on it, e.g. SIGPIPE). */
int64_t sys_raise(struct sim *s, int sig)
{
	if (sig == 0)
		return 0;
	if (sig < 1 || sig > 64)
		return -EINVAL;
	if (s->sig_handlers[sig] == (uint64_t)(uintptr_t)SIG_IGN && sig != SIGKILL && sig != SIGSTOP)
		return 0;
	if (s->sig_handlers[sig] == (uint64_t)(uintptr_t)SIG_DFL || sig == SIGKILL) {
		if (sig_default_ignored(sig))
			return 0;
		s->res->fault_pc = 0;
		sim_stop(s, SIM_END_SIGNAL, sig);
		return 0;
	}
	sim_note_once(s, NOTE_SIGNAL_HANDLER,
		      "delivery to guest signal handlers is not supported yet; the signal ends the program");
	sim_stop(s, SIM_END_SIGNAL, sig);
	return 0;
}

static int64_t do_rt_sigaction(struct sim *s, uint64_t sig, uint64_t act, uint64_t oact)
{
	if (sig < 1 || sig > 64 || sig == SIGKILL || sig == SIGSTOP)
		return act ? -EINVAL : 0;
	uint64_t old[4] = {s->sig_handlers[sig], s->sig_flags[sig], s->sig_restorer[sig], s->sig_mask[sig]};
	if (act) {
		uint64_t n[4];
		if (mem_read(s, act, n, sizeof(n)) < 0)
			return -EFAULT;
		s->sig_handlers[sig] = n[0];
		s->sig_flags[sig] = n[1];
		s->sig_restorer[sig] = n[2];
		s->sig_mask[sig] = n[3];
	}
	return oact ? put(s, oact, old, sizeof(old)) : 0;
}

static int64_t do_rt_sigprocmask(struct sim *s, int how, uint64_t set, uint64_t oset)
{
	uint64_t old = s->sigmask, n;
	if (set) {
		if (mem_read(s, set, &n, 8) < 0)
			return -EFAULT;
		if (how == SIG_BLOCK)
			s->sigmask |= n;
		else if (how == SIG_UNBLOCK)
			s->sigmask &= ~n;
		else if (how == SIG_SETMASK)
			s->sigmask = n;
		else
			return -EINVAL;
	}
	return oset ? put(s, oset, &old, 8) : 0;
}

static int64_t do_misc(struct sim *s, const struct sysargs *x, int *handled)
{
	const uint64_t *a = x->a;
	*handled = 1;
	switch (x->nr) {
	case SYS_exit:
	case SYS_exit_group:
		sim_stop(s, SIM_END_EXIT, (int)(a[0] & 0xff));
		return 0;
	case SYS_getpid: case SYS_gettid: return GUEST_PID;
	case SYS_getppid: return 1;
	case SYS_getuid: return getuid();
	case SYS_geteuid: return geteuid();
	case SYS_getgid: return getgid();
	case SYS_getegid: return getegid();
	case SYS_getpgrp: case SYS_getsid: case SYS_getpgid: return GUEST_PID;
	case SYS_set_tid_address: s->tid_address = a[0]; return GUEST_PID;
	case SYS_set_robust_list: return a[1] == 24 ? 0 : -EINVAL;
	case SYS_rseq: {
		if (a[2] & 1) /* unregister */
			return 0;
		uint32_t cpu[2] = {0, 0}; /* cpu_id_start, cpu_id: always CPU 0 */
		return put(s, a[0], cpu, sizeof(cpu));
	}
	case SYS_arch_prctl:
		switch (a[0]) {
		case ARCH_SET_FS: uc_reg_write(s->uc, UC_X86_REG_FS_BASE, &a[1]); return 0;
		case ARCH_SET_GS: uc_reg_write(s->uc, UC_X86_REG_GS_BASE, &a[1]); return 0;
		case ARCH_GET_FS: case ARCH_GET_GS: {
			uint64_t v;
			uc_reg_read(s->uc, a[0] == ARCH_GET_FS ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE, &v);
			return put(s, a[1], &v, 8);
		}
		}
		return -EINVAL;
	case SYS_prlimit64: return do_prlimit(s, a[1], a[2], a[3]);
	case SYS_getrlimit: return do_prlimit(s, a[0], 0, a[1]);
	case SYS_setrlimit: return 0;
	case SYS_uname: return do_uname(s, a[0]);
	case SYS_clock_gettime: return do_clock_gettime(s, a[0], a[1]);
	case SYS_clock_getres: {
		int64_t ts[2] = {0, 1};
		return a[1] ? put(s, a[1], ts, sizeof(ts)) : 0;
	}
	case SYS_gettimeofday: {
		uint64_t ns = sim_now_ns(s) + EPOCH_BASE_S * 1000000000ULL;
		int64_t tv[2] = {(int64_t)(ns / 1000000000ULL), (int64_t)(ns % 1000000000ULL / 1000)};
		return a[0] ? put(s, a[0], tv, sizeof(tv)) : 0;
	}
	case SYS_time: {
		int64_t t = (int64_t)((sim_now_ns(s) / 1000000000ULL) + EPOCH_BASE_S);
		if (a[0] && put(s, a[0], &t, 8) < 0)
			return -EFAULT;
		return t;
	}
	case SYS_nanosleep: case SYS_clock_nanosleep: {
		int64_t ts[2];
		uint64_t p = x->nr == SYS_nanosleep ? a[0] : a[2];
		if (mem_read(s, p, ts, sizeof(ts)) < 0)
			return -EFAULT;
		if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
			return -EINVAL;
		uint64_t d = (uint64_t)ts[0] * 1000000000ULL + (uint64_t)ts[1];
		if (x->nr == SYS_clock_nanosleep && (a[1] & 1)) { /* TIMER_ABSTIME */
			uint64_t now = sim_now_ns(s) + (a[0] == CLOCK_REALTIME ? EPOCH_BASE_S * 1000000000ULL : 0);
			d = d > now ? d - now : 0;
		}
		s->time_offset_ns += d;
		return 0;
	}
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
	case SYS_rt_sigaction: return do_rt_sigaction(s, a[0], a[1], a[2]);
	case SYS_rt_sigprocmask: return do_rt_sigprocmask(s, (int)a[0], a[1], a[2]);
	case SYS_sigaltstack: return a[1] ? put(s, a[1], (uint64_t[3]){0, 2 /* SS_DISABLE */, 0}, 24) : 0;
	case SYS_kill:
		return (a[0] == GUEST_PID || a[0] == 0) ? sys_raise(s, (int)a[1]) : -EPERM;
	case SYS_tgkill:
		return a[1] == GUEST_PID ? sys_raise(s, (int)a[2]) : -ESRCH;
	case SYS_tkill:
		return a[0] == GUEST_PID ? sys_raise(s, (int)a[1]) : -ESRCH;
	case SYS_sched_yield: return 0;
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
			const char *b = strrchr(s->opt.path, '/');
			strncpy(comm, b ? b + 1 : s->opt.path, 15);
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
	case SYS_futex:
		/* one thread: a wake finds nobody; a wait could only deadlock */
		if ((a[1] & 0x7f) == 1 /* FUTEX_WAKE */)
			return 0;
		sim_note_once(s, NOTE_FUTEX, "futex waits return EAGAIN (threads come later)");
		return -EAGAIN;
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

void syscall_dispatch(struct sim *s)
{
	static const int argregs[6] = {UC_X86_REG_RDI, UC_X86_REG_RSI, UC_X86_REG_RDX,
				       UC_X86_REG_R10, UC_X86_REG_R8, UC_X86_REG_R9};
	struct sysargs x;
	uint64_t nr, rip, rflags;
	uc_reg_read(s->uc, UC_X86_REG_RAX, &nr);
	uc_reg_read(s->uc, UC_X86_REG_RIP, &rip);
	uc_reg_read(s->uc, UC_X86_REG_RFLAGS, &rflags);
	x.nr = (long)nr;
	for (int i = 0; i < 6; i++)
		uc_reg_read(s->uc, argregs[i], &x.a[i]);
	s->syscall_pc = rip;
	int64_t ret;
	int handled;
	if (!sys_file(s, &x, &ret) && !sys_mem(s, &x, &ret)) {
		ret = do_misc(s, &x, &handled);
		if (!handled)
			sim_warn_unsupported(s, x.nr);
	}
	uint64_t r = (uint64_t)ret, next = rip + 2;
	uc_reg_write(s->uc, UC_X86_REG_RAX, &r);
	uc_reg_write(s->uc, UC_X86_REG_RCX, &next);
	uc_reg_write(s->uc, UC_X86_REG_R11, &rflags);
}
