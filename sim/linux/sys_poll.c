/* Waiting for files: poll, ppoll, select, pselect6, the epoll calls and eventfd. The
 * guest's descriptors are host descriptors behind the guest's numbers, so readiness
 * is the host's poll(2) (epoll: the host's own epoll set, whose event data is the
 * guest's and passes through untouched). A call that must wait makes the thread wait
 * in the scheduler (sched_wait_fds) so the other guest threads and processes go on;
 * timeouts run on the simulated clock. Layouts: uapi/asm-generic/poll.h,
 * uapi/linux/eventpoll.h (packed on x86-64: 12 bytes an event), fd_set of
 * include/uapi/linux/posix_types.h. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/eventfd.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim/linux/sched.h"
#include "sim/linux/signalfd.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define POLL_MAX 4096      /* descriptors one call may name (RLIMIT_NOFILE here) */
#define NS_PER_MS 1000000ULL
#define EVENT_SIZE 12      /* struct epoll_event: u32 events, u64 data, packed */

/* The deadline of a call that started now with a timeout of ns (UINT64_MAX: none);
 * a retried call keeps the one it had. */
static uint64_t deadline(struct sim *s, int has_timeout, uint64_t ns)
{
	struct thread *t = cur_thread(s);
	if (t->io_deadline)
		return t->io_deadline;
	return has_timeout ? sim_now_ns(s) + ns : UINT64_MAX;
}

/* After the host found nothing ready: wait (0) or answer (1, the call returns 0). */
static int wait_or_time_out(struct sim *s, const struct pollfd *set, int n, uint64_t until, int64_t *err)
{
	struct thread *t = cur_thread(s);
	*err = 0;
	if (t->io_timed_out || until <= sim_now_ns(s)) {
		sched_wait_fds_done(t);
		return 1;
	}
	*err = sched_wait_fds(s, set, n, until);
	return *err < 0;
}

/* A temporary signal mask for the wait (ppoll, pselect6, epoll_pwait), as
 * rt_sigsuspend: the old one comes back when the call returns or its handler ends. */
static int64_t set_wait_mask(struct sim *s, uint64_t maskp, uint64_t size)
{
	struct thread *t = cur_thread(s);
	if (!maskp || t->has_suspend_mask)
		return 0;
	uint64_t m;
	if (size != 8)
		return -EINVAL;
	if (mem_read(s, maskp, &m, 8) < 0)
		return -EFAULT;
	t->suspend_mask = t->sigmask;
	t->has_suspend_mask = 1;
	t->sigmask = m & ~((1ULL << (SIGKILL - 1)) | (1ULL << (SIGSTOP - 1)));
	return 0;
}

static void restore_mask(struct sim *s)
{
	struct thread *t = cur_thread(s);
	if (t->state == TS_RUNNABLE && t->has_suspend_mask) {
		t->sigmask = t->suspend_mask;
		t->has_suspend_mask = 0;
	}
}

/* poll and ppoll: nfds guest pollfds at ufds. */
static int64_t do_poll(struct sim *s, uint64_t ufds, uint64_t nfds, int has_timeout, uint64_t timeout_ns)
{
	if (nfds > POLL_MAX)
		return -EINVAL;
	signalfd_refresh(s); /* signalfds tell the host what they hold */
	struct pollfd *g = calloc(nfds ? nfds : 1, sizeof(*g)), *h = calloc(nfds ? nfds : 1, sizeof(*h));
	int64_t r = -ENOMEM;
	if (!g || !h)
		goto out;
	r = -EFAULT;
	if (nfds && mem_read(s, ufds, g, nfds * sizeof(*g)) < 0)
		goto out;
	int ready = 0;
	for (uint64_t i = 0; i < nfds; i++) {
		/* a negative fd is skipped; an unknown one is POLLNVAL */
		h[i] = (struct pollfd){g[i].fd < 0 ? -1 : fd_host(s, (uint64_t)g[i].fd), g[i].events, 0};
		g[i].revents = 0;
		if (g[i].fd >= 0 && h[i].fd < 0)
			g[i].revents = POLLNVAL;
	}
	if (poll(h, nfds, 0) < 0) {
		r = -errno;
		goto out;
	}
	for (uint64_t i = 0; i < nfds; i++) {
		if (h[i].fd >= 0)
			g[i].revents = h[i].revents;
		ready += g[i].revents != 0;
	}
	if (!ready) {
		uint64_t until = deadline(s, has_timeout, timeout_ns);
		int64_t err;
		if (!wait_or_time_out(s, h, (int)nfds, until, &err)) {
			r = 0; /* waiting: the call runs again */
			goto out;
		}
		if (err) {
			r = err;
			goto out;
		}
	}
	sched_wait_fds_done(cur_thread(s));
	r = nfds && mem_write(s, ufds, g, nfds * sizeof(*g)) < 0 ? -EFAULT : ready;
out:
	free(g), free(h);
	return r;
}

/* select and pselect6: fd_sets of nfds bits at in, out, ex. */
static int64_t do_select(struct sim *s, uint64_t nfds, const uint64_t sets[3], int has_timeout,
			 uint64_t timeout_ns)
{
	if (nfds > POLL_MAX)
		return -EINVAL;
	signalfd_refresh(s);
	size_t words = (nfds + 63) / 64;
	uint64_t bits[3][POLL_MAX / 64] = {{0}};
	for (int k = 0; k < 3; k++)
		if (sets[k] && words && mem_read(s, sets[k], bits[k], words * 8) < 0)
			return -EFAULT;
	static const short ev[3] = {POLLIN, POLLOUT, POLLPRI};
	struct pollfd *h = calloc(nfds ? nfds : 1, sizeof(*h));
	if (!h)
		return -ENOMEM;
	int n = 0;
	int64_t r = 0;
	for (uint64_t fd = 0; fd < nfds; fd++) {
		short e = 0;
		for (int k = 0; k < 3; k++)
			if (bits[k][fd / 64] >> (fd % 64) & 1)
				e |= ev[k];
		if (!e)
			continue;
		int hfd = fd_host(s, fd);
		if (hfd < 0) {
			free(h);
			return -EBADF;
		}
		h[n++] = (struct pollfd){hfd, e, 0};
	}
	if (poll(h, (nfds_t)n, 0) < 0) {
		free(h);
		return -errno;
	}
	uint64_t out[3][POLL_MAX / 64] = {{0}};
	int ready = 0, i = 0;
	for (uint64_t fd = 0; fd < nfds; fd++) {
		if (fd_host(s, fd) < 0 || i >= n || h[i].fd != fd_host(s, fd))
			continue;
		short re = h[i].revents, want = h[i].events;
		i++;
		/* select's readiness as the kernel's: hang-up and errors count as readable */
		if ((want & POLLIN) && (re & (POLLIN | POLLHUP | POLLERR)))
			out[0][fd / 64] |= 1ULL << (fd % 64), ready++;
		if ((want & POLLOUT) && (re & (POLLOUT | POLLERR)))
			out[1][fd / 64] |= 1ULL << (fd % 64), ready++;
		if ((want & POLLPRI) && (re & POLLPRI))
			out[2][fd / 64] |= 1ULL << (fd % 64), ready++;
	}
	if (!ready) {
		int64_t err;
		if (!wait_or_time_out(s, h, n, deadline(s, has_timeout, timeout_ns), &err)) {
			free(h);
			return 0;
		}
		r = err;
	}
	free(h);
	if (r < 0)
		return r;
	sched_wait_fds_done(cur_thread(s));
	for (int k = 0; k < 3; k++)
		if (sets[k] && words && mem_write(s, sets[k], out[k], words * 8) < 0)
			return -EFAULT;
	return ready;
}

/* epoll_wait and its variants on the guest's epoll descriptor epfd. */
static int64_t do_epoll_wait(struct sim *s, uint64_t epfd, uint64_t events, int64_t maxevents, int has_timeout,
			     uint64_t timeout_ns)
{
	int h = fd_host(s, epfd);
	if (h < 0)
		return -EBADF;
	if (maxevents <= 0 || maxevents > POLL_MAX)
		return -EINVAL;
	signalfd_refresh(s);
	struct epoll_event *ev = calloc((size_t)maxevents, sizeof(*ev));
	if (!ev)
		return -ENOMEM;
	int n = epoll_wait(h, ev, (int)maxevents, 0);
	int64_t r = n;
	if (n < 0) {
		r = -errno;
	} else if (n == 0) {
		struct pollfd pf = {h, POLLIN, 0}; /* an epoll descriptor is readable when an event is ready */
		int64_t err;
		r = wait_or_time_out(s, &pf, 1, deadline(s, has_timeout, timeout_ns), &err) ? err : 0;
	} else {
		sched_wait_fds_done(cur_thread(s));
		/* glibc's struct epoll_event is packed on x86-64 like the kernel's */
		if (mem_write(s, events, ev, (size_t)n * EVENT_SIZE) < 0)
			r = -EFAULT;
	}
	free(ev);
	return r;
}

static int64_t do_epoll_ctl(struct sim *s, uint64_t epfd, int op, uint64_t fd, uint64_t evp)
{
	int h = fd_host(s, epfd), t = fd_host(s, fd);
	if (h < 0 || t < 0)
		return -EBADF;
	struct epoll_event ev = {0};
	if (op != EPOLL_CTL_DEL && mem_read(s, evp, &ev, EVENT_SIZE) < 0)
		return -EFAULT;
	return epoll_ctl(h, op, t, &ev) < 0 ? -errno : 0;
}

/* A struct timespec at p as nanoseconds; 0 with *has 0 for NULL. */
static int64_t read_timespec(struct sim *s, uint64_t p, int *has, uint64_t *ns)
{
	*has = p != 0;
	*ns = 0;
	if (!p)
		return 0;
	int64_t ts[2];
	if (mem_read(s, p, ts, sizeof(ts)) < 0)
		return -EFAULT;
	if (ts[0] < 0 || ts[1] < 0 || ts[1] >= 1000000000)
		return -EINVAL;
	*ns = (uint64_t)ts[0] * 1000000000ULL + (uint64_t)ts[1];
	return 0;
}

int sys_poll(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	const uint64_t *a = x->a;
	int has;
	uint64_t ns;
	int64_t r;
	switch (x->nr) {
	case SYS_poll:
		*ret = do_poll(s, a[0], a[1], (int)a[2] >= 0, (int)a[2] >= 0 ? (uint64_t)(int)a[2] * NS_PER_MS : 0);
		return 1;
	case SYS_ppoll:
		if ((r = read_timespec(s, a[2], &has, &ns)) < 0 || (r = set_wait_mask(s, a[3], a[4])) < 0)
			return *ret = r, 1;
		*ret = do_poll(s, a[0], a[1], has, ns);
		restore_mask(s);
		return 1;
	case SYS_select: {
		uint64_t sets[3] = {a[1], a[2], a[3]};
		has = a[4] != 0;
		ns = 0;
		if (has) {
			int64_t tv[2];
			if (mem_read(s, a[4], tv, sizeof(tv)) < 0)
				return *ret = -EFAULT, 1;
			if (tv[0] < 0 || tv[1] < 0)
				return *ret = -EINVAL, 1;
			ns = (uint64_t)tv[0] * 1000000000ULL + (uint64_t)tv[1] * 1000ULL;
		}
		*ret = do_select(s, a[0], sets, has, ns);
		return 1;
	}
	case SYS_pselect6: {
		uint64_t sets[3] = {a[1], a[2], a[3]}, sig[2] = {0, 0};
		if ((r = read_timespec(s, a[4], &has, &ns)) < 0)
			return *ret = r, 1;
		if (a[5] && mem_read(s, a[5], sig, sizeof(sig)) < 0) /* {sigset_t *, size_t} */
			return *ret = -EFAULT, 1;
		if ((r = set_wait_mask(s, sig[0], sig[1])) < 0)
			return *ret = r, 1;
		*ret = do_select(s, a[0], sets, has, ns);
		restore_mask(s);
		return 1;
	}
	case SYS_epoll_create: case SYS_epoll_create1: {
		if (x->nr == SYS_epoll_create && (int)a[0] <= 0)
			return *ret = -EINVAL, 1;
		int h = epoll_create1(x->nr == SYS_epoll_create1 ? (int)a[0] : 0);
		*ret = h < 0 ? -errno : fd_install(s, h, 0);
		return 1;
	}
	case SYS_epoll_ctl: *ret = do_epoll_ctl(s, a[0], (int)a[1], a[2], a[3]); return 1;
	case SYS_epoll_wait:
		*ret = do_epoll_wait(s, a[0], a[1], (int)a[2], (int)a[3] >= 0,
				     (int)a[3] >= 0 ? (uint64_t)(int)a[3] * NS_PER_MS : 0);
		return 1;
	case SYS_epoll_pwait: case SYS_epoll_pwait2:
		if (x->nr == SYS_epoll_pwait2) {
			if ((r = read_timespec(s, a[3], &has, &ns)) < 0)
				return *ret = r, 1;
		} else {
			has = (int)a[3] >= 0;
			ns = has ? (uint64_t)(int)a[3] * NS_PER_MS : 0;
		}
		if ((r = set_wait_mask(s, a[4], a[5])) < 0)
			return *ret = r, 1;
		*ret = do_epoll_wait(s, a[0], a[1], (int)a[2], has, ns);
		restore_mask(s);
		return 1;
	case SYS_eventfd: case SYS_eventfd2: {
		int h = eventfd((unsigned)a[0], x->nr == SYS_eventfd2 ? (int)a[1] : 0);
		*ret = h < 0 ? -errno : fd_install(s, h, 0);
		return 1;
	}
	}
	return 0;
}
