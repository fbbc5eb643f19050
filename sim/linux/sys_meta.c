/* File metadata and names: permissions, owners, times, hard and symbolic links,
 * directory-relative mkdir/rename, truncate. All pass through to the host file
 * system with the guest's paths (as qemu-user does); results are the host's. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim/linux/syscall_internal.h"
#include "sim/machine/memory.h"

static int64_t err_or_zero(long r)
{
	return r < 0 ? -errno : 0;
}

/* Two paths (old, new) after their directory fds, as renameat/linkat/symlinkat take them. */
static int64_t two_paths(struct sim *s, uint64_t pa, uint64_t pb, char *a, char *b)
{
	int r = get_path(s, pa, a);
	return r < 0 ? r : get_path(s, pb, b);
}

int sys_meta(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	const uint64_t *a = x->a;
	char p[PATH_MAX], q[PATH_MAX];
	int d, d2, h;
	int64_t r;
	switch (x->nr) {
	case SYS_chmod: case SYS_chown: case SYS_lchown: case SYS_truncate: case SYS_symlink:
	case SYS_link:
		if ((r = get_path(s, a[0], p)) < 0)
			break;
		if (x->nr == SYS_chmod)
			r = err_or_zero(chmod(p, (mode_t)a[1]));
		else if (x->nr == SYS_chown)
			r = err_or_zero(chown(p, (uid_t)a[1], (gid_t)a[2]));
		else if (x->nr == SYS_lchown)
			r = err_or_zero(lchown(p, (uid_t)a[1], (gid_t)a[2]));
		else if (x->nr == SYS_truncate)
			r = err_or_zero(truncate(p, (off_t)a[1]));
		else if ((r = get_path(s, a[1], q)) == 0)
			r = err_or_zero(x->nr == SYS_symlink ? symlink(p, q) : link(p, q));
		break;
	case SYS_fchmod: case SYS_fchown:
		if ((h = fd_host(s, a[0])) < 0)
			r = -EBADF;
		else
			r = err_or_zero(x->nr == SYS_fchmod ? fchmod(h, (mode_t)a[1])
							 : fchown(h, (uid_t)a[1], (gid_t)a[2]));
		break;
	case SYS_fchmodat: case SYS_fchownat: case SYS_mkdirat:
		if ((d = host_dirfd(s, a[0])) == -2)
			r = -EBADF;
		else if ((r = get_path(s, a[1], p)) == 0)
			r = err_or_zero(x->nr == SYS_fchmodat ? fchmodat(d, p, (mode_t)a[2], 0)
					: x->nr == SYS_mkdirat ? mkdirat(d, p, (mode_t)a[2])
							       : fchownat(d, p, (uid_t)a[2], (gid_t)a[3], (int)a[4]));
		break;
	case SYS_renameat: case SYS_renameat2: case SYS_linkat:
		if ((d = host_dirfd(s, a[0])) == -2 || (d2 = host_dirfd(s, a[2])) == -2)
			r = -EBADF;
		else if ((r = two_paths(s, a[1], a[3], p, q)) == 0)
			r = err_or_zero(x->nr == SYS_linkat ? linkat(d, p, d2, q, (int)a[4])
					: syscall(SYS_renameat2, d, p, d2, q, x->nr == SYS_renameat2 ? (unsigned)a[4] : 0u));
		break;
	case SYS_symlinkat:
		if ((d = host_dirfd(s, a[1])) == -2)
			r = -EBADF;
		else if ((r = two_paths(s, a[0], a[2], p, q)) == 0)
			r = err_or_zero(symlinkat(p, d, q));
		break;
	case SYS_utimensat: {
		/* NULL path: the file of the fd itself; times as given (guest time is simulated,
		 * UTIME_NOW takes the host's) */
		int64_t ts[4];
		if ((d = host_dirfd(s, a[0])) == -2) {
			r = -EBADF;
			break;
		}
		if (a[2] && mem_read(s, a[2], ts, sizeof(ts)) < 0) {
			r = -EFAULT;
			break;
		}
		if (a[1] && (r = get_path(s, a[1], p)) < 0)
			break;
		r = err_or_zero(syscall(SYS_utimensat, d, a[1] ? p : NULL, a[2] ? (void *)ts : NULL, (int)a[3]));
		break;
	}
	default:
		return 0;
	}
	*ret = r;
	return 1;
}
