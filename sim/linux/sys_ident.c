/* Who a process is and what it belongs to: user and group ids (real, effective, saved;
 * kept per guest process, starting as pmusim's, changing nothing on the host), process
 * groups and sessions (setpgid, setsid; kill and wait4 use them), and other process
 * attributes real tools ask for: times, getgroups, capget, close_range,
 * copy_file_range. Rules: credentials(7), setpgid(2), setsid(2). */
#include <errno.h>
#include <fcntl.h>
#include <linux/capability.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim/linux/syscall_internal.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define TICKS_PER_S 100 /* sysconf(_SC_CLK_TCK) on x86-64 Linux */
#define CLOSE_RANGE_CLOEXEC_F 4
#define KEEP ((uint64_t)(uint32_t)-1) /* an id argument of -1: unchanged */

static struct proc *proc_by_pid(struct sim *s, uint64_t pid)
{
	if (pid == 0)
		return s->p;
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i]->pid == pid && s->procs[i]->state != PROC_REAPED)
			return s->procs[i];
	return NULL;
}

/* setresuid/setresgid: a privileged process (effective uid 0) sets any; another only
 * to one of its current three. */
static int64_t set_ids(struct sim *s, uint32_t ids[3], const uint64_t want[3])
{
	int privileged = s->p->uid[1] == 0;
	for (int k = 0; k < 3; k++) {
		if (want[k] == KEEP || privileged)
			continue;
		if (want[k] != ids[0] && want[k] != ids[1] && want[k] != ids[2])
			return -EPERM;
	}
	for (int k = 0; k < 3; k++)
		if (want[k] != KEEP)
			ids[k] = (uint32_t)want[k];
	return 0;
}

static int64_t get_ids(struct sim *s, const uint32_t ids[3], const uint64_t *a)
{
	for (int k = 0; k < 3; k++)
		if (mem_write(s, a[k], &ids[k], 4) < 0)
			return -EFAULT;
	return 0;
}

static int64_t do_setpgid(struct sim *s, uint64_t pid, uint64_t pgid)
{
	struct proc *p = proc_by_pid(s, pid);
	if (!p || (p != s->p && p->ppid != s->p->pid))
		return -ESRCH;
	if ((int64_t)pgid < 0)
		return -EINVAL;
	if (p->sid != s->p->sid || p->pid == p->sid) /* another session, or a session leader */
		return -EPERM;
	uint32_t g = pgid ? (uint32_t)pgid : p->pid;
	if (g != p->pid) { /* joining a group: one of the same session */
		int exists = 0;
		for (size_t i = 0; i < s->nprocs; i++)
			exists |= s->procs[i]->state == PROC_LIVE && s->procs[i]->pgid == g && s->procs[i]->sid == p->sid;
		if (!exists)
			return -EPERM;
	}
	p->pgid = g;
	return 0;
}

static int64_t do_close_range(struct sim *s, uint64_t first, uint64_t last, uint64_t flags)
{
	if (first > last || (flags & ~(uint64_t)(CLOSE_RANGE_CLOEXEC_F | 2 /* UNSHARE */)))
		return -EINVAL;
	for (uint64_t fd = first; fd <= last && fd < GUEST_FD_MAX; fd++) {
		int h = s->p->fds[fd];
		if (h < 0)
			continue;
		if (flags & CLOSE_RANGE_CLOEXEC_F) {
			fcntl(h, F_SETFD, FD_CLOEXEC);
		} else {
			close(h);
			s->p->fds[fd] = -1;
		}
	}
	return 0;
}

static int64_t do_copy_file_range(struct sim *s, const uint64_t *a)
{
	int in = fd_host(s, a[0]), out = fd_host(s, a[2]);
	if (in < 0 || out < 0)
		return -EBADF;
	int64_t off[2];
	if ((a[1] && mem_read(s, a[1], &off[0], 8) < 0) || (a[3] && mem_read(s, a[3], &off[1], 8) < 0))
		return -EFAULT;
	size_t len = a[4] > (1u << 30) ? (1u << 30) : (size_t)a[4];
	ssize_t r = copy_file_range(in, a[1] ? (off_t *)&off[0] : NULL, out, a[3] ? (off_t *)&off[1] : NULL, len,
				    (unsigned)a[5]);
	if (r < 0)
		return -errno;
	if ((a[1] && mem_write(s, a[1], &off[0], 8) < 0) || (a[3] && mem_write(s, a[3], &off[1], 8) < 0))
		return -EFAULT;
	return r;
}

/* process_vm_readv and process_vm_writev: between the calling process's own iovecs and
 * those of pid, which may only be itself (the other guest processes run in engines of
 * their own; nothing outside the guest is reachable). Copies what fits in order, as
 * Linux does, and stops at the first fault. */
static int64_t vm_copy(struct sim *s, const uint64_t *a, int writing)
{
	if (a[5] != 0)
		return -EINVAL;
	if (a[0] != s->p->pid) {
		for (size_t i = 0; i < s->nprocs; i++)
			if (s->procs[i]->pid == a[0] && s->procs[i]->state == PROC_LIVE)
				return -EPERM;
		return -ESRCH;
	}
	if (a[2] > 1024 || a[4] > 1024)
		return -EINVAL;
	uint64_t li = 0, ri = 0, loff = 0, roff = 0, l[2] = {0, 0}, r[2] = {0, 0};
	int64_t done = 0;
	char buf[4096];
	for (;;) {
		while (loff == l[1] && li < a[2]) {
			if (mem_read(s, a[1] + 16 * li++, l, 16) < 0)
				return done ? done : -EFAULT;
			loff = 0;
		}
		while (roff == r[1] && ri < a[4]) {
			if (mem_read(s, a[3] + 16 * ri++, r, 16) < 0)
				return done ? done : -EFAULT;
			roff = 0;
		}
		if (loff == l[1] || roff == r[1])
			return done;
		uint64_t n = l[1] - loff < r[1] - roff ? l[1] - loff : r[1] - roff;
		if (n > sizeof(buf))
			n = sizeof(buf);
		uint64_t from = writing ? l[0] + loff : r[0] + roff, to = writing ? r[0] + roff : l[0] + loff;
		if (mem_read(s, from, buf, n) < 0 || mem_write(s, to, buf, n) < 0)
			return done ? done : -EFAULT;
		loff += n, roff += n, done += (int64_t)n;
	}
}

int sys_ident(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	const uint64_t *a = x->a;
	struct proc *p = s->p;
	int64_t r;
	switch (x->nr) {
	case SYS_process_vm_readv: r = vm_copy(s, a, 0); break;
	case SYS_process_vm_writev: r = vm_copy(s, a, 1); break;
	case SYS_ptrace: r = -EPERM; break; /* as under a seccomp or Yama policy that forbids it */
	case SYS_getuid: r = p->uid[0]; break;
	case SYS_geteuid: r = p->uid[1]; break;
	case SYS_getgid: r = p->gid[0]; break;
	case SYS_getegid: r = p->gid[1]; break;
	case SYS_getresuid: r = get_ids(s, p->uid, a); break;
	case SYS_getresgid: r = get_ids(s, p->gid, a); break;
	case SYS_setresuid: case SYS_setresgid: {
		uint64_t w[3] = {(uint32_t)a[0], (uint32_t)a[1], (uint32_t)a[2]};
		r = set_ids(s, x->nr == SYS_setresuid ? p->uid : p->gid, w);
		break;
	}
	case SYS_setreuid: case SYS_setregid: {
		uint32_t *ids = x->nr == SYS_setreuid ? p->uid : p->gid;
		uint64_t rid = (uint32_t)a[0], eid = (uint32_t)a[1];
		/* the saved id follows the effective one when the real one is set or the
		 * effective one becomes other than the real */
		uint64_t sid = (rid != KEEP || (eid != KEEP && eid != ids[0])) ? (eid != KEEP ? eid : ids[1]) : KEEP;
		uint64_t w[3] = {rid, eid, sid};
		r = set_ids(s, ids, w);
		break;
	}
	case SYS_setuid: case SYS_setgid: {
		uint32_t *ids = x->nr == SYS_setuid ? p->uid : p->gid;
		uint64_t id = (uint32_t)a[0];
		/* privileged: all three; otherwise only the effective one */
		uint64_t w[3] = {p->uid[1] == 0 ? id : KEEP, id, p->uid[1] == 0 ? id : KEEP};
		r = set_ids(s, ids, w);
		break;
	}
	case SYS_setfsuid: r = p->uid[1]; break; /* the old value; file access stays pmusim's */
	case SYS_setfsgid: r = p->gid[1]; break;
	case SYS_getgroups: {
		gid_t g[256];
		int n = getgroups(256, g);
		if (n < 0)
			r = -errno;
		else if (a[0] == 0)
			r = n;
		else if ((int)a[0] < n)
			r = -EINVAL;
		else
			r = mem_write(s, a[1], g, (size_t)n * sizeof(gid_t)) < 0 ? -EFAULT : n;
		break;
	}
	case SYS_setgroups: r = p->uid[1] == 0 ? 0 : -EPERM; break; /* accepted; the host's stay */
	case SYS_capget: {
		struct __user_cap_header_struct h;
		struct __user_cap_data_struct d[2] = {{0}};
		if (mem_read(s, a[0], &h, sizeof(h)) < 0) {
			r = -EFAULT;
			break;
		}
		h.pid = 0; /* pmusim's own capabilities stand for every guest process */
		r = syscall(SYS_capget, &h, a[1] ? d : NULL) < 0 ? -errno : 0;
		if (mem_write(s, a[0], &h, sizeof(h)) < 0 || (r == 0 && a[1] && mem_write(s, a[1], d, sizeof(d)) < 0))
			r = -EFAULT;
		break;
	}
	case SYS_capset: r = -EPERM; break; /* pmusim's capabilities are not the guest's to change */
	case SYS_getpgrp: r = p->pgid; break;
	case SYS_getpgid: case SYS_getsid: {
		struct proc *q = proc_by_pid(s, a[0]);
		r = !q ? -ESRCH : x->nr == SYS_getpgid ? (int64_t)q->pgid : (int64_t)q->sid;
		break;
	}
	case SYS_setpgid: r = do_setpgid(s, a[0], a[1]); break;
	case SYS_setsid: {
		int leader = 0;
		for (size_t i = 0; i < s->nprocs; i++)
			leader |= s->procs[i]->state == PROC_LIVE && s->procs[i]->pgid == p->pid;
		if (leader) {
			r = -EPERM;
			break;
		}
		p->sid = p->pgid = p->pid;
		r = p->sid;
		break;
	}
	case SYS_times: {
		uint64_t ticks = sim_now_ns(s) / (1000000000ULL / TICKS_PER_S);
		uint64_t tms[4] = {ticks, 0, 0, 0}; /* user, system, children's */
		if (a[0] && mem_write(s, a[0], tms, sizeof(tms)) < 0)
			r = -EFAULT;
		else
			r = (int64_t)ticks;
		break;
	}
	case SYS_close_range: r = do_close_range(s, (uint32_t)a[0], (uint32_t)a[1], a[2]); break;
	case SYS_copy_file_range: r = do_copy_file_range(s, a); break;
	default:
		return 0;
	}
	*ret = r;
	return 1;
}
