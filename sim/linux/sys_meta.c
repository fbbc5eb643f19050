/* File metadata and names: permissions, owners, times, hard and symbolic links,
 * directory-relative mkdir/rename, truncate. All pass through to the host file
 * system with the guest's paths resolved by guest_path.c (as qemu-user does), except on
 * pmusim's own files; results are the host's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim/linux/guest_path.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/memory.h"

static int64_t err_or_zero(long r)
{
	return r < 0 ? -errno : 0;
}

/* Resolves guest path pa (relative to guest dirfd gd) for a call that changes what it
 * names: refused when that is pmusim's. */
static int changing(struct sim *s, uint64_t gd, uint64_t pa, struct gpath *gp)
{
	int r = gpath_host(s, gd, pa, gp); /* fd/N of its own /proc: the file behind N */
	return r < 0 ? r : gpath_may_change(s, gp);
}

/* truncate(2) as an open for writing and ftruncate: the open's checks apply. */
static int64_t truncate_path(struct sim *s, const struct gpath *gp, off_t len)
{
	int fd = gpath_open(s, gp, O_WRONLY | O_CLOEXEC, 0);
	if (fd < 0)
		return fd;
	int64_t r = err_or_zero(ftruncate(fd, len));
	close(fd);
	return r;
}

int sys_meta(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	const uint64_t *a = x->a;
	struct gpath p, q;
	char target[PATH_MAX];
	uint64_t cwd = (uint64_t)AT_FDCWD;
	int h;
	int64_t r;
	switch (x->nr) {
	case SYS_chmod: case SYS_chown: case SYS_lchown: case SYS_truncate:
		if ((r = changing(s, cwd, a[0], &p)) < 0)
			break;
		if (x->nr == SYS_chmod)
			r = err_or_zero(fchmodat(p.dirfd, p.path, (mode_t)a[1], 0));
		else if (x->nr == SYS_truncate)
			r = truncate_path(s, &p, (off_t)a[1]);
		else
			r = err_or_zero(fchownat(p.dirfd, p.path, (uid_t)a[1], (gid_t)a[2],
						 x->nr == SYS_lchown ? AT_SYMLINK_NOFOLLOW : 0));
		break;
	case SYS_symlink: /* the target is text, stored as given */
		if ((r = mem_read_str(s, a[0], target, sizeof(target))) < 0 || (r = changing(s, cwd, a[1], &q)) < 0)
			break;
		r = err_or_zero(symlinkat(target, q.dirfd, q.path));
		break;
	case SYS_link:
		if ((r = changing(s, cwd, a[0], &p)) < 0 || (r = changing(s, cwd, a[1], &q)) < 0)
			break;
		r = err_or_zero(linkat(p.dirfd, p.path, q.dirfd, q.path, 0));
		break;
	case SYS_fchmod: case SYS_fchown:
		if ((h = fd_host(s, a[0])) < 0)
			r = -EBADF;
		else
			r = err_or_zero(x->nr == SYS_fchmod ? fchmod(h, (mode_t)a[1])
							 : fchown(h, (uid_t)a[1], (gid_t)a[2]));
		break;
	case SYS_fchmodat: case SYS_fchownat: case SYS_mkdirat:
		if ((r = changing(s, a[0], a[1], &p)) < 0)
			break;
		unsigned host_mask = gpath_umask_enter(s); /* mkdirat's mode: the process's umask */
		r = err_or_zero(x->nr == SYS_fchmodat ? fchmodat(p.dirfd, p.path, (mode_t)a[2], 0)
				: x->nr == SYS_mkdirat ? mkdirat(p.dirfd, p.path, (mode_t)a[2])
						       : fchownat(p.dirfd, p.path, (uid_t)a[2], (gid_t)a[3], (int)a[4]));
		gpath_umask_leave(host_mask);
		break;
	case SYS_renameat: case SYS_renameat2: case SYS_linkat:
		if ((r = changing(s, a[0], a[1], &p)) < 0 || (r = changing(s, a[2], a[3], &q)) < 0)
			break;
		r = err_or_zero(x->nr == SYS_linkat ? linkat(p.dirfd, p.path, q.dirfd, q.path, (int)a[4])
				: syscall(SYS_renameat2, p.dirfd, p.path, q.dirfd, q.path,
					  x->nr == SYS_renameat2 ? (unsigned)a[4] : 0u));
		break;
	case SYS_symlinkat:
		if ((r = mem_read_str(s, a[0], target, sizeof(target))) < 0 || (r = changing(s, a[1], a[2], &q)) < 0)
			break;
		r = err_or_zero(symlinkat(target, q.dirfd, q.path));
		break;
	case SYS_utimensat: {
		/* NULL path: the file of the fd itself; times as given (guest time is simulated,
		 * UTIME_NOW takes the host's) */
		int64_t ts[4];
		if (a[2] && mem_read(s, a[2], ts, sizeof(ts)) < 0) {
			r = -EFAULT;
			break;
		}
		if (!a[1]) {
			r = (h = fd_host(s, a[0])) < 0 ? -EBADF
			    : err_or_zero(syscall(SYS_utimensat, h, NULL, a[2] ? (void *)ts : NULL, (int)a[3]));
			break;
		}
		if ((r = changing(s, a[0], a[1], &p)) < 0)
			break;
		r = err_or_zero(syscall(SYS_utimensat, p.dirfd, p.path, a[2] ? (void *)ts : NULL, (int)a[3]));
		break;
	}
	default:
		return 0;
	}
	*ret = r;
	return 1;
}
