/* Threads waiting for files (see sim/linux/sched.h): the descriptors a blocked read, write,
 * poll, select or epoll_wait waits on, checked with the host's poll(2) whenever the
 * scheduler looks for work; a ready one makes its thread's system call run again. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "sim/linux/sched.h"
#include "sim/linux/signalfd.h"
#include "sim/sim_state.h"

int sched_wait_fds(struct sim *s, const struct pollfd *set, int n, uint64_t deadline_ns)
{
	struct thread *t = cur_thread(s);
	struct pollfd *copy = n ? malloc((size_t)n * sizeof(*copy)) : NULL;
	if (n && !copy)
		return -ENOMEM;
	if (n)
		arrays_copy(copy, set, (size_t)n, sizeof(*copy));
	free(t->io_set);
	t->io_set = copy;
	t->io_n = n;
	t->io_fd = -1;
	t->io_timed_out = 0;
	sched_block_retry(s, TS_IO);
	t->io_deadline = deadline_ns;
	t->wake_ns = deadline_ns;
	return 0;
}

void sched_wait_fds_done(struct thread *t)
{
	free(t->io_set);
	t->io_set = NULL;
	t->io_n = 0;
	t->io_deadline = 0;
	t->io_timed_out = 0;
}

/* Threads waiting for I/O whose file became ready go on; timeout as poll(2). */
void sched_poll_io(struct sim *s, int timeout)
{
	size_t n = 0, cap = 0;
	signalfd_refresh(s);
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].state == TS_IO)
			cap += s->threads[i].io_set ? (size_t)s->threads[i].io_n : 1;
	if (cap == 0)
		return;
	struct pollfd *pf = malloc(cap * sizeof(*pf));
	size_t *idx = malloc(cap * sizeof(*idx));
	if (!pf || !idx) {
		free(pf), free(idx);
		return;
	}
	for (size_t i = 0; i < s->nthreads; i++) {
		const struct thread *t = &s->threads[i];
		if (t->state != TS_IO)
			continue;
		if (!t->io_set) {
			pf[n] = (struct pollfd){t->io_fd, t->io_events, 0};
			idx[n++] = i;
		}
		for (int k = 0; t->io_set && k < t->io_n; k++) {
			pf[n] = t->io_set[k];
			pf[n].revents = 0;
			idx[n++] = i;
		}
	}
	if (poll(pf, n, timeout) > 0)
		for (size_t k = 0; k < n; k++)
			if (pf[k].revents)
				sched_retry(s, &s->threads[idx[k]]);
	free(pf), free(idx);
}

int sched_io_waiters(const struct sim *s)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].state == TS_IO)
			return 1;
	return 0;
}

