/* signalfd descriptors (fs/signalfd.c; struct signalfd_siginfo of uapi/linux/signalfd.h).
 *
 * The guest's descriptor is the read end of a host pipe, so that the host's poll(2) and
 * epoll, which stand for the guest's, see it as they see every other file: the pipe
 * holds one byte exactly while the signalfd's owner (the process that made it) has a
 * signal of its mask pending, kept so by signalfd_refresh before the host looks. A
 * pipe's inode is its own, which finds the signalfd behind any duplicate of the
 * descriptor (dup, fork). A read takes signals as the reading thread's sigwaitinfo would
 * (its own, then its process's) and waits like it. Deviations: readiness is the owner
 * process's (Linux: the polling thread's, so a child polling an inherited signalfd sees
 * its parent's signals here); fstat shows a FIFO, not an anonymous inode. */
#include "sim/linux/signalfd.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim/linux/linux.h"
#include "sim/linux/sched.h"
#include "sim/linux/signal.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define SSI_SIZE 128             /* struct signalfd_siginfo */
#define SFD_CLOEXEC_F O_CLOEXEC  /* fs/signalfd.c checks they are the same */
#define SFD_NONBLOCK_F O_NONBLOCK
#define SI_TIMER_C (-2)
#define BIT(sig) (1ULL << ((sig) - 1))
#define UNBLOCKABLE (BIT(SIGKILL) | BIT(SIGSTOP))

struct sigfd {
	dev_t dev;                   /* the pipe's */
	ino_t ino;
	int rd, wr;                  /* pmusim's own ends: wr puts the byte in, rd takes it back */
	uint64_t mask;
	uint32_t owner;              /* pid of the process that made it */
	int full;                    /* the byte is in the pipe */
};

struct sigfds {
	struct sigfd *v;
	size_t n, cap;
};

/* The signalfd behind host descriptor hfd, or NULL. */
static struct sigfd *sigfd_of(struct sim *s, int hfd)
{
	struct stat st;
	if (!s->sigfds || !s->sigfds->n || fstat(hfd, &st) < 0 || !S_ISFIFO(st.st_mode))
		return NULL;
	for (size_t i = 0; i < s->sigfds->n; i++)
		if (s->sigfds->v[i].ino == st.st_ino && s->sigfds->v[i].dev == st.st_dev)
			return &s->sigfds->v[i];
	return NULL;
}

/* Whether f's owner has a signal of its mask pending (for itself or any of its threads). */
static int sigfd_ready(struct sim *s, const struct sigfd *f)
{
	for (size_t i = 0; i < s->nprocs; i++) {
		const struct proc *p = s->procs[i];
		if (p->pid != f->owner)
			continue;
		if (p->state != PROC_LIVE)
			return 0;
		uint64_t pend = p->proc_pending;
		for (size_t k = 0; k < s->nthreads; k++)
			if (s->threads[k].proc == p && s->threads[k].state != TS_EXITED)
				pend |= s->threads[k].pending;
		return (pend & f->mask) != 0;
	}
	return 0;
}

static void sigfd_update(struct sim *s, struct sigfd *f)
{
	int ready = sigfd_ready(s, f);
	char c = 's';
	if (ready && !f->full)
		f->full = write(f->wr, &c, 1) == 1;
	else if (!ready && f->full)
		f->full = read(f->rd, &c, 1) != 1; /* the byte is there: no wait */
}

void signalfd_refresh(struct sim *s)
{
	for (size_t i = 0; s->sigfds && i < s->sigfds->n; i++)
		sigfd_update(s, &s->sigfds->v[i]);
}

static void sigfd_close(struct sigfd *f)
{
	close(f->rd);
	close(f->wr);
}

/* Whether a descriptor of some process still leads to f. */
static int sigfd_used(struct sim *s, const struct sigfd *f)
{
	struct stat st;
	for (size_t i = 0; i < s->nprocs; i++)
		for (int k = 0; k < GUEST_FD_MAX; k++)
			if (s->procs[i]->fds[k] >= 0 && fstat(s->procs[i]->fds[k], &st) == 0 &&
			    st.st_ino == f->ino && st.st_dev == f->dev)
				return 1;
	return 0;
}

/* Forgets the signalfds nobody can read any more (their descriptors were closed). */
static void sigfd_collect(struct sim *s)
{
	size_t k = 0;
	for (size_t i = 0; i < s->sigfds->n; i++) {
		if (sigfd_used(s, &s->sigfds->v[i]))
			s->sigfds->v[k++] = s->sigfds->v[i];
		else
			sigfd_close(&s->sigfds->v[i]);
	}
	s->sigfds->n = k;
}

void signalfd_free(struct sim *s)
{
	for (size_t i = 0; s->sigfds && i < s->sigfds->n; i++)
		sigfd_close(&s->sigfds->v[i]);
	if (s->sigfds)
		free(s->sigfds->v);
	free(s->sigfds);
	s->sigfds = NULL;
}

/* A new signalfd for mask: its guest descriptor, or -errno. */
static int64_t sigfd_new(struct sim *s, uint64_t mask, int flags)
{
	if (!s->sigfds && !(s->sigfds = calloc(1, sizeof(*s->sigfds))))
		return -ENOMEM;
	struct sigfds *tab = s->sigfds;
	sigfd_collect(s);
	if (tab->n == tab->cap) {
		size_t cap = tab->cap ? tab->cap * 2 : 4;
		struct sigfd *v = realloc(tab->v, cap * sizeof(*v));
		if (!v)
			return -ENOMEM;
		tab->v = v, tab->cap = cap;
	}
	int p[2];
	struct stat st;
	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	struct sigfd f = {0, 0, fcntl(p[0], F_DUPFD_CLOEXEC, 0), p[1], mask, s->p->pid, 0};
	if (f.rd < 0 || fstat(p[0], &st) < 0 || fcntl(p[1], F_SETFL, O_NONBLOCK) < 0 ||
	    ((flags & SFD_NONBLOCK_F) && fcntl(p[0], F_SETFL, O_NONBLOCK) < 0) ||
	    (!(flags & SFD_CLOEXEC_F) && fcntl(p[0], F_SETFD, 0) < 0)) {
		int e = errno;
		close(p[0]), close(p[1]);
		if (f.rd >= 0)
			close(f.rd);
		return -e;
	}
	f.dev = st.st_dev, f.ino = st.st_ino;
	int64_t g = fd_install(s, p[0], 0);
	if (g < 0) {
		sigfd_close(&f);
		return g;
	}
	tab->v[tab->n++] = f;
	sigfd_update(s, &tab->v[tab->n - 1]);
	return g;
}

/* signalfd(fd, mask, sizemask) and signalfd4(fd, mask, sizemask, flags): fd -1 makes
 * one, another fd that is a signalfd gets the new mask. */
int64_t sys_signalfd(struct sim *s, const struct sysargs *x)
{
	const uint64_t *a = x->a;
	int flags = x->nr == SYS_signalfd4 ? (int)a[3] : 0;
	uint64_t mask;
	if (a[2] != 8)
		return -EINVAL;
	if (mem_read(s, a[1], &mask, 8) < 0)
		return -EFAULT;
	if (flags & ~(SFD_CLOEXEC_F | SFD_NONBLOCK_F))
		return -EINVAL;
	mask &= ~UNBLOCKABLE;
	if ((int)a[0] == -1)
		return sigfd_new(s, mask, flags);
	int h = (int)a[0] < 0 ? -1 : fd_host(s, (uint32_t)a[0]);
	if (h < 0)
		return -EBADF;
	struct sigfd *f = sigfd_of(s, h);
	if (!f)
		return -EINVAL;
	f->mask = mask;
	sigfd_update(s, f);
	return (int)a[0];
}

/* struct signalfd_siginfo of sig (signalfd_copyinfo: the fields siginfo_layout picks). */
static void ssi_fill(int sig, const struct sig_info_rec *rec, unsigned char o[SSI_SIZE])
{
	memset(o, 0, SSI_SIZE);
	uint32_t signo = (uint32_t)sig;
	int32_t code = rec->code, lo = (int32_t)rec->value;
	memcpy(o, &signo, 4);                /* ssi_signo */
	memcpy(o + 8, &code, 4);             /* ssi_code */
	if (code == SI_TIMER_C) {
		memcpy(o + 24, &rec->timerid, 4); /* ssi_tid */
		memcpy(o + 32, &rec->overrun, 4); /* ssi_overrun */
		memcpy(o + 44, &lo, 4);           /* ssi_int */
		memcpy(o + 48, &rec->value, 8);   /* ssi_ptr */
	} else if (code > 0 && code < 0x80 && sig != SIGCHLD) {
		memcpy(o + 72, &rec->addr, 8);    /* ssi_addr */
	} else {
		memcpy(o + 12, &rec->pid, 4);     /* ssi_pid (ssi_uid stays 0) */
	}
}

/* read of n bytes at buf on signalfd f (host descriptor hfd). */
static int64_t sigfd_read(struct sim *s, struct sigfd *f, int hfd, uint64_t buf, uint64_t n)
{
	struct thread *t = cur_thread(s);
	int retried = t->sigwait;
	if (retried)
		signal_wait_end(t);
	uint64_t count = n / SSI_SIZE, done = 0;
	int64_t err = 0;
	if (!count)
		return -EINVAL;
	for (; done < count; done++) {
		struct sig_info_rec rec;
		unsigned char o[SSI_SIZE];
		int sig = signal_dequeue(s, f->mask, &rec);
		if (!sig)
			break;
		ssi_fill(sig, &rec, o);
		if (mem_write(s, buf + done * SSI_SIZE, o, SSI_SIZE) < 0) {
			err = -EFAULT; /* the signal is lost, as in Linux */
			break;
		}
	}
	signalfd_refresh(s);
	if (done)
		return (int64_t)(done * SSI_SIZE);
	if (err)
		return err;
	int fl = fcntl(hfd, F_GETFL);
	if (fl >= 0 && (fl & O_NONBLOCK))
		return -EAGAIN;
	if (signal_deliverable(s))
		return -EINTR; /* a handler is to run first */
	return signal_wait(s, f->mask, 0, UINT64_MAX);
}

int signalfd_io(struct sim *s, const struct sysargs *x, int hfd, int64_t *ret)
{
	struct sigfd *f = sigfd_of(s, hfd);
	if (!f)
		return 0;
	const uint64_t *a = x->a;
	switch (x->nr) {
	case SYS_read:
		*ret = sigfd_read(s, f, hfd, a[1], a[2]);
		return 1;
	case SYS_readv: { /* into the first buffer that has room */
		uint64_t v[2] = {0, 0};
		if (a[2] > 1024)
			return *ret = -EINVAL, 1;
		for (uint64_t i = 0; i < a[2] && !v[1]; i++)
			if (mem_read(s, a[1] + 16 * i, v, sizeof(v)) < 0)
				return *ret = -EFAULT, 1;
		*ret = sigfd_read(s, f, hfd, v[0], v[1]);
		return 1;
	}
	case SYS_write: case SYS_writev:
		*ret = -EINVAL; /* a signalfd has no write operation */
		return 1;
	}
	return 0;
}
