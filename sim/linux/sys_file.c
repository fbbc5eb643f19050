/* File system calls on host files through a guest file-descriptor table
 * (lowest free number first, as Linux allocates). Names are resolved by
 * guest_path.c: from the guest's own working directory, with its own /proc. */
#include <dirent.h>
#include <errno.h>
#include <poll.h>
#include <fcntl.h>
#include <signal.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <termios.h>
#include <unistd.h>

#include "sim/linux/guest_path.h"
#include "sim/linux/linux.h"
#include "sim/linux/proc_self.h"
#include "sim/linux/sched.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define IO_CHUNK (1u << 20)

void syscall_init_fds(struct sim *s)
{
	for (int i = 0; i < GUEST_FD_MAX; i++)
		s->p->fds[i] = -1;
	for (int i = 0; i < 3; i++)
		s->p->fds[i] = dup(i); /* the guest's 0-2 are pmusim's, but closing them is the guest's business */
}

void syscall_close_fds(struct sim *s)
{
	for (int i = 0; i < GUEST_FD_MAX; i++)
		if (s->p->fds[i] >= 0) {
			close(s->p->fds[i]);
			s->p->fds[i] = -1;
		}
}

int fd_host(const struct sim *s, uint64_t gfd)
{
	return gfd < GUEST_FD_MAX ? s->p->fds[gfd] : -1;
}

int64_t fd_install(struct sim *s, int hfd, uint64_t from)
{
	for (uint64_t i = from; i < GUEST_FD_MAX; i++)
		if (s->p->fds[i] < 0) {
			s->p->fds[i] = hfd;
			return (int64_t)i;
		}
	close(hfd);
	return -EMFILE;
}

/* Pipes, sockets and terminals can make a read or write wait. Then the calling
 * thread waits in the scheduler (TS_IO) and the call runs again once poll(2)
 * says the file is ready, so the other guest threads and processes go on
 * (the writer of the pipe, say). Returns 1 when the thread now waits. */
int io_must_wait(struct sim *s, int hfd, short events)
{
	struct stat st;
	/* files on disk never wait; pipes, sockets, terminals and the anonymous files
	 * (eventfd, epoll, timerfd: no file type in st_mode) may */
	if (fstat(hfd, &st) < 0 || S_ISREG(st.st_mode) || S_ISDIR(st.st_mode) || S_ISBLK(st.st_mode))
		return 0;
	int fl = fcntl(hfd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK))
		return 0; /* the guest asked not to wait: the host call says EAGAIN */
	struct pollfd pf = {hfd, events, 0};
	if (poll(&pf, 1, 0) != 0)
		return 0;
	struct thread *t = cur_thread(s);
	t->io_fd = hfd;
	t->io_events = events;
	sched_block_retry(s, TS_IO);
	return 1;
}

/* A write to a pipe or socket that is ready takes what fits (a blocking host
 * write of more than the free space would stop the whole machine). */
static ssize_t write_some(int hfd, const void *buf, size_t n)
{
	struct stat st;
	if (fstat(hfd, &st) < 0 || !(S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)))
		return write(hfd, buf, n);
	int fl = fcntl(hfd, F_GETFL);
	if (fl < 0 || (fl & O_NONBLOCK))
		return write(hfd, buf, n);
	fcntl(hfd, F_SETFL, fl | O_NONBLOCK);
	ssize_t r = write(hfd, buf, n);
	int e = errno;
	fcntl(hfd, F_SETFL, fl);
	errno = e;
	return r;
}

static int64_t do_read(struct sim *s, int hfd, uint64_t buf, uint64_t n, int64_t off)
{
	if (n > IO_CHUNK)
		n = IO_CHUNK;
	char *tmp = malloc(n ? n : 1);
	if (!tmp)
		return -ENOMEM;
	ssize_t r = off < 0 ? read(hfd, tmp, n) : pread(hfd, tmp, n, off);
	int64_t ret = r < 0 ? -errno : r;
	if (r > 0 && mem_write(s, buf, tmp, (size_t)r) < 0)
		ret = -EFAULT;
	free(tmp);
	return ret;
}

static int64_t do_write(struct sim *s, int hfd, uint64_t buf, uint64_t n, int64_t off)
{
	if (n > IO_CHUNK)
		n = IO_CHUNK;
	char *tmp = malloc(n ? n : 1);
	if (!tmp)
		return -ENOMEM;
	int64_t ret;
	if (mem_read(s, buf, tmp, n) < 0)
		ret = -EFAULT;
	else {
		ssize_t r = off < 0 ? write_some(hfd, tmp, n) : pwrite(hfd, tmp, n, off);
		ret = r < 0 ? -errno : r;
		if (ret == -EPIPE)
			sys_raise(s, SIGPIPE);
	}
	free(tmp);
	return ret;
}

static int64_t do_iov(struct sim *s, int hfd, uint64_t iov, uint64_t cnt, int writing)
{
	if (cnt > 1024)
		return -EINVAL;
	int64_t total = 0;
	for (uint64_t i = 0; i < cnt; i++) {
		uint64_t v[2];
		if (mem_read(s, iov + 16 * i, v, 16) < 0)
			return total ? total : -EFAULT;
		if (v[1] == 0)
			continue;
		int64_t r = writing ? do_write(s, hfd, v[0], v[1], -1) : do_read(s, hfd, v[0], v[1], -1);
		if (r < 0)
			return total ? total : r;
		total += r;
		if ((uint64_t)r < v[1])
			break;
	}
	return total;
}

static int64_t put_stat(struct sim *s, uint64_t addr, int r, const struct stat *st)
{
	if (r < 0)
		return -errno;
	return mem_write(s, addr, st, sizeof(*st)) < 0 ? -EFAULT : 0;
}

static int64_t do_ioctl(struct sim *s, int hfd, uint64_t req, uint64_t arg)
{
	unsigned char buf[64];
	size_t sz;
	switch (req) {
	case TCGETS: sz = 36; break;      /* kernel struct termios */
	case TIOCGWINSZ: sz = 8; break;   /* struct winsize */
	case FIONREAD: sz = 4; break;
	case TIOCGPGRP: sz = 4; break;
	default:
		sim_note_once(s, NOTE_IOCTL, "ioctl requests other than TCGETS/TIOCGWINSZ/FIONREAD/TIOCGPGRP answer ENOTTY");
		return -ENOTTY;
	}
	long r = syscall(SYS_ioctl, hfd, req, buf);
	if (r < 0)
		return -errno;
	return mem_write(s, arg, buf, sz) < 0 ? -EFAULT : r;
}

static int64_t do_fcntl(struct sim *s, uint64_t gfd, int hfd, int cmd, uint64_t arg)
{
	switch (cmd) {
	case F_DUPFD:
	case F_DUPFD_CLOEXEC: {
		int n = fcntl(hfd, cmd == F_DUPFD ? F_DUPFD : F_DUPFD_CLOEXEC, 0);
		return n < 0 ? -errno : fd_install(s, n, arg);
	}
	case F_GETFD: case F_SETFD: case F_GETFL: case F_SETFL: {
		int r = fcntl(hfd, cmd, (int)arg);
		return r < 0 ? -errno : r;
	}
	case F_GETLK: case F_SETLK: case F_SETLKW: case F_OFD_GETLK: case F_OFD_SETLK: case F_OFD_SETLKW: {
		/* record locks on the host file: every guest process is pmusim, so POSIX locks
		 * of two guest processes do not exclude each other (OFD locks do); a lock
		 * held elsewhere answers EAGAIN rather than stopping the whole machine */
		struct flock fl;
		if (mem_read(s, arg, &fl, sizeof(fl)) < 0)
			return -EFAULT;
		int hcmd = cmd == F_SETLKW ? F_SETLK : cmd == F_OFD_SETLKW ? F_OFD_SETLK : cmd;
		if (fcntl(hfd, hcmd, &fl) < 0)
			return -errno;
		if ((cmd == F_GETLK || cmd == F_OFD_GETLK) && mem_write(s, arg, &fl, sizeof(fl)) < 0)
			return -EFAULT;
		return 0;
	}
	}
	(void)gfd;
	return -EINVAL;
}

static int64_t do_dup3(struct sim *s, uint64_t oldfd, uint64_t newfd, int flags)
{
	int h = fd_host(s, oldfd);
	if (h < 0 || newfd >= GUEST_FD_MAX)
		return -EBADF;
	if (oldfd == newfd)
		return (int64_t)newfd;
	int n = fcntl(h, (flags & O_CLOEXEC) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
	if (n < 0)
		return -errno;
	if (s->p->fds[newfd] >= 0)
		close(s->p->fds[newfd]);
	s->p->fds[newfd] = n;
	return (int64_t)newfd;
}

static int64_t do_readlink(struct sim *s, uint64_t gdir, uint64_t path, uint64_t buf, uint64_t sz)
{
	struct gpath gp;
	char out[PATH_MAX];
	int err = gpath_get(s, gdir, path, &gp);
	if (err < 0)
		return err;
	ssize_t n = gp.kind == GPATH_SELF ? proc_self_readlink(s, gp.rest, out, sizeof(out)) : -EINVAL;
	if (n == -EINVAL && gp.kind == GPATH_SELF) /* a link below cwd/, root/ or fd/N/ */
		err = proc_self_host(s, gp.rest, &gp.dirfd, gp.path, sizeof(gp.path));
	if (err < 0)
		return err;
	if (n == -EINVAL && (n = readlinkat(gp.dirfd, gp.path, out, sizeof(out))) < 0)
		n = -errno;
	if (n < 0)
		return n;
	if ((uint64_t)n > sz)
		n = (ssize_t)sz;
	return mem_write(s, buf, out, (size_t)n) < 0 ? -EFAULT : n;
}

static int64_t do_openat(struct sim *s, uint64_t gdir, uint64_t path, int flags, int mode)
{
	struct gpath gp;
	int err = gpath_get(s, gdir, path, &gp);
	if (err < 0)
		return err;
	int h = gpath_open(s, &gp, flags, mode);
	return h < 0 ? h : fd_install(s, h, 0);
}

/* A changing call on what gp names: refused when that is pmusim's. */
#define CHANGE(gp) do { int e_ = gpath_may_change(s, &(gp)); if (e_ < 0) return e_; } while (0)

static int64_t err_or_zero(int r)
{
	return r < 0 ? -errno : 0;
}

static int64_t do_chdir(struct sim *s, const struct gpath *gp)
{
	int fd = openat(gp->dirfd, gp->path, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	int64_t r = gpath_chdir(s, fd);
	close(fd);
	return r;
}

static int64_t do_path_call(struct sim *s, const struct sysargs *x)
{
	const uint64_t *a = x->a;
	struct gpath p, q;
	struct stat st;
	int r;
	/* the calls without a directory fd take the working directory's */
	uint64_t cwd = (uint64_t)AT_FDCWD;
	switch (x->nr) {
	case SYS_stat: case SYS_lstat:
		if ((r = gpath_host(s, cwd, a[0], &p)) < 0)
			return r;
		r = fstatat(p.dirfd, p.path, &st, x->nr == SYS_lstat ? AT_SYMLINK_NOFOLLOW : 0);
		return put_stat(s, a[1], r, &st);
	case SYS_newfstatat:
		if ((r = gpath_host(s, a[0], a[1], &p)) < 0)
			return r;
		return put_stat(s, a[2], fstatat(p.dirfd, p.path, &st, (int)a[3]), &st);
	case SYS_access:
		if ((r = gpath_host(s, cwd, a[0], &p)) < 0)
			return r;
		return err_or_zero(faccessat(p.dirfd, p.path, (int)a[1], 0));
	case SYS_faccessat: case SYS_faccessat2:
		if ((r = gpath_host(s, a[0], a[1], &p)) < 0)
			return r;
		return err_or_zero(faccessat(p.dirfd, p.path, (int)a[2], x->nr == SYS_faccessat2 ? (int)a[3] : 0));
	case SYS_unlink:
		if ((r = gpath_host(s, cwd, a[0], &p)) < 0)
			return r;
		CHANGE(p);
		return err_or_zero(unlinkat(p.dirfd, p.path, 0));
	case SYS_unlinkat:
		if ((r = gpath_host(s, a[0], a[1], &p)) < 0)
			return r;
		CHANGE(p);
		return err_or_zero(unlinkat(p.dirfd, p.path, (int)a[2]));
	case SYS_mkdir: {
		if ((r = gpath_host(s, cwd, a[0], &p)) < 0)
			return r;
		CHANGE(p);
		unsigned host_mask = gpath_umask_enter(s);
		r = mkdirat(p.dirfd, p.path, (mode_t)a[1]);
		int e = errno;
		gpath_umask_leave(host_mask);
		return r < 0 ? -e : 0;
	}
	case SYS_rmdir:
		if ((r = gpath_host(s, cwd, a[0], &p)) < 0)
			return r;
		CHANGE(p);
		return err_or_zero(unlinkat(p.dirfd, p.path, AT_REMOVEDIR));
	case SYS_chdir:
		if ((r = gpath_host(s, cwd, a[0], &p)) < 0)
			return r;
		return do_chdir(s, &p);
	case SYS_rename:
		if ((r = gpath_host(s, cwd, a[0], &p)) < 0 || (r = gpath_host(s, cwd, a[1], &q)) < 0)
			return r;
		CHANGE(p);
		CHANGE(q);
		return err_or_zero(renameat(p.dirfd, p.path, q.dirfd, q.path));
	case SYS_statx: {
		unsigned char sx[256]; /* struct statx */
		if ((r = gpath_host(s, a[0], a[1], &p)) < 0)
			return r;
		if (syscall(SYS_statx, p.dirfd, p.path, (int)a[2], (unsigned)a[3], sx) < 0)
			return -errno;
		return mem_write(s, a[4], sx, sizeof(sx)) < 0 ? -EFAULT : 0;
	}
	case SYS_statfs: {
		struct statfs sf;
		if ((r = gpath_host(s, cwd, a[0], &p)) < 0)
			return r;
		int fd = openat(p.dirfd, p.path, O_PATH | O_CLOEXEC);
		if (fd < 0)
			return -errno;
		r = fstatfs(fd, &sf);
		close(fd);
		if (r < 0)
			return -errno;
		return mem_write(s, a[1], &sf, sizeof(sf)) < 0 ? -EFAULT : 0;
	}
	}
	return -ENOSYS;
}

int sys_file(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	const uint64_t *a = x->a;
	int h = (x->nr == SYS_open || x->nr == SYS_openat) ? -1 : fd_host(s, a[0]);
	struct stat st;
	switch (x->nr) {
	case SYS_read: case SYS_write: case SYS_pread64: case SYS_pwrite64:
	case SYS_readv: case SYS_writev: case SYS_lseek: case SYS_fstat: case SYS_close:
	case SYS_ioctl: case SYS_fcntl: case SYS_getdents64: case SYS_fsync:
	case SYS_fdatasync: case SYS_ftruncate: case SYS_fchdir: case SYS_fstatfs:
		if (h < 0) {
			*ret = -EBADF;
			return 1;
		}
	}
	if (s->sigfds && (x->nr == SYS_read || x->nr == SYS_readv || x->nr == SYS_write || x->nr == SYS_writev) &&
	    signalfd_io(s, x, h, ret))
		return 1;
	switch (x->nr) {
	case SYS_read: case SYS_readv:
		if (io_must_wait(s, h, POLLIN))
			return *ret = 0, 1;
		*ret = x->nr == SYS_read ? do_read(s, h, a[1], a[2], -1) : do_iov(s, h, a[1], a[2], 0);
		return 1;
	case SYS_write: case SYS_writev:
		if (io_must_wait(s, h, POLLOUT))
			return *ret = 0, 1;
		if (s->write_notice)
			s->write_notice(s->write_notice_ctx, h);
		*ret = x->nr == SYS_write ? do_write(s, h, a[1], a[2], -1) : do_iov(s, h, a[1], a[2], 1);
		return 1;
	case SYS_pread64: *ret = do_read(s, h, a[1], a[2], (int64_t)a[3]); return 1;
	case SYS_pwrite64: *ret = do_write(s, h, a[1], a[2], (int64_t)a[3]); return 1;

	case SYS_open: *ret = do_openat(s, (uint64_t)AT_FDCWD, a[0], (int)a[1], (int)a[2]); return 1;
	case SYS_creat:
		*ret = do_openat(s, (uint64_t)AT_FDCWD, a[0], O_CREAT | O_WRONLY | O_TRUNC, (int)a[1]);
		return 1;
	case SYS_openat: *ret = do_openat(s, a[0], a[1], (int)a[2], (int)a[3]); return 1;
	case SYS_close:
		proc_self_closed(s, h);
		close(h);
		s->p->fds[a[0]] = -1;
		*ret = 0;
		return 1;
	case SYS_lseek: {
		if (a[1] == 0 && a[2] == SEEK_SET && proc_self_rewind(s, h)) {
			*ret = 0;
			return 1;
		}
		off_t r = lseek(h, (off_t)a[1], (int)a[2]);
		*ret = r < 0 ? -errno : r;
		return 1;
	}
	case SYS_fstat: *ret = put_stat(s, a[1], fstat(h, &st), &st); return 1;
	case SYS_ioctl: *ret = do_ioctl(s, h, a[1], a[2]); return 1;
	case SYS_fcntl: *ret = do_fcntl(s, a[0], h, (int)a[1], a[2]); return 1;
	case SYS_dup: {
		int hh = fd_host(s, a[0]);
		int n = hh < 0 ? -1 : dup(hh);
		*ret = hh < 0 ? -EBADF : n < 0 ? -errno : fd_install(s, n, 0);
		return 1;
	}
	case SYS_dup2: *ret = do_dup3(s, a[0], a[1], 0); return 1;
	case SYS_dup3: *ret = do_dup3(s, a[0], a[1], (int)a[2]); return 1;
	case SYS_pipe2: case SYS_pipe: {
		int p[2];
		if (pipe2(p, x->nr == SYS_pipe2 ? (int)a[1] : 0) < 0) {
			*ret = -errno;
			return 1;
		}
		int32_t g[2] = {(int32_t)fd_install(s, p[0], 0), (int32_t)fd_install(s, p[1], 0)};
		*ret = mem_write(s, a[0], g, sizeof(g)) < 0 ? -EFAULT : 0;
		return 1;
	}
	case SYS_getdents64: {
		uint64_t n = a[2] > IO_CHUNK ? IO_CHUNK : a[2];
		char *tmp = malloc(n ? n : 1);
		int64_t gen;
		long r = !tmp ? -1 : proc_self_getdents(s, h, tmp, n, &gen) ? (gen < 0 ? (errno = (int)-gen, -1) : gen)
								     : syscall(SYS_getdents64, h, tmp, n);
		*ret = r < 0 ? -errno : (mem_write(s, a[1], tmp, (size_t)r) < 0 ? -EFAULT : r);
		free(tmp);
		return 1;
	}
	case SYS_fsync: *ret = fsync(h) < 0 ? -errno : 0; return 1;
	case SYS_fdatasync: *ret = fdatasync(h) < 0 ? -errno : 0; return 1;
	case SYS_ftruncate: *ret = ftruncate(h, (off_t)a[1]) < 0 ? -errno : 0; return 1;
	case SYS_fchdir: *ret = gpath_chdir(s, h); return 1;
	case SYS_readlink: *ret = do_readlink(s, (uint64_t)AT_FDCWD, a[0], a[1], a[2]); return 1;
	case SYS_readlinkat: *ret = do_readlink(s, a[0], a[1], a[2], a[3]); return 1;
	case SYS_getcwd: {
		char cwd[PATH_MAX];
		int err = gpath_cwd(s, cwd, sizeof(cwd));
		size_t n = strlen(cwd) + 1;
		*ret = err < 0 ? err : n > a[1] ? -ERANGE : mem_write(s, a[0], cwd, n) < 0 ? -EFAULT : (int64_t)n;
		return 1;
	}
	case SYS_umask: /* the process's own: pmusim's outputs keep pmusim's */
		*ret = s->p->umask;
		s->p->umask = (unsigned)a[0] & 0777;
		return 1;
	case SYS_stat: case SYS_lstat: case SYS_newfstatat: case SYS_access: case SYS_faccessat:
	case SYS_faccessat2: case SYS_unlink: case SYS_unlinkat: case SYS_mkdir: case SYS_rmdir:
	case SYS_chdir: case SYS_rename: case SYS_statfs: case SYS_statx:
		*ret = do_path_call(s, x);
		return 1;
	case SYS_fstatfs: {
		struct statfs sf;
		*ret = fstatfs(h, &sf) < 0 ? -errno : mem_write(s, a[1], &sf, sizeof(sf)) < 0 ? -EFAULT : 0;
		return 1;
	}
	}
	return 0;
}
