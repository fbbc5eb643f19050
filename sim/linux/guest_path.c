/* The guest's file names (see guest_path.h). A relative name is resolved from the
 * process's working directory (an O_PATH descriptor) or the directory fd it came with,
 * never from pmusim's. A name whose directory lies in /proc is first made absolute and
 * cleaned ("." "..", repeated "/") so that /proc/self, /proc/<pid>, /proc/thread-self and
 * the /dev names linked into them are recognised however they are spelt; opens never
 * follow a magic link (openat2 RESOLVE_NO_MAGICLINKS, Linux 5.6), and what an open or a
 * change reaches through ordinary symbolic links is checked after resolution. */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/openat2.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/vfs.h>
#include <unistd.h>

#include "common/outfile.h"
#include "sim/linux/guest_path.h"
#include "sim/linux/proc_self.h"
#include "sim/linux/sched.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

int host_dirfd(struct sim *s, uint64_t gdirfd)
{
	if ((int)gdirfd == AT_FDCWD)
		return s->p->cwd_fd >= 0 ? s->p->cwd_fd : AT_FDCWD;
	int h = fd_host(s, gdirfd);
	return h < 0 ? -2 : h;
}

static int on_procfs(int fd)
{
	struct statfs sf;
	return fstatfs(fd, &sf) == 0 && sf.f_type == PROC_SUPER_MAGIC;
}

/* The absolute path of host descriptor fd, as /proc/self/fd/N names it. */
static int fd_path(int fd, char *buf, size_t len)
{
	char link[64];
	snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
	ssize_t n = readlink(link, buf, len - 1);
	if (n < 0)
		return -errno;
	buf[n] = 0;
	return 0;
}

/* Cleans an absolute path in place: repeated slashes, "." and ".." (above the root
 * stays at the root), as the kernel walks a path without symbolic links. */
static void clean_path(char *p)
{
	char out[PATH_MAX];
	size_t o = 0;
	const char *c = p;
	while (*c) {
		while (*c == '/')
			c++;
		const char *e = c;
		while (*e && *e != '/')
			e++;
		size_t n = (size_t)(e - c);
		if (n == 0)
			break;
		if (n == 1 && c[0] == '.') {
		} else if (n == 2 && c[0] == '.' && c[1] == '.') {
			while (o > 0 && out[o - 1] != '/')
				o--;
			if (o > 0)
				o--;
		} else if (o + 1 + n < sizeof(out)) {
			out[o++] = '/';
			memcpy(out + o, c, n);
			o += n;
		}
		c = e;
	}
	if (o == 0)
		out[o++] = '/';
	out[o] = 0;
	memcpy(p, out, o + 1);
}

/* Whether number n (a /proc directory name) is the running guest process: its pid or
 * one of its threads' ids, or pmusim's own pid or thread (the guest that found pmusim's
 * pid in /proc sees itself there). */
static int is_own_pid(struct sim *s, unsigned long n)
{
	if (n == (unsigned long)getpid() || n == (unsigned long)syscall(SYS_gettid) || n == s->p->pid)
		return 1;
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].proc == s->p && s->threads[i].tid == n && s->threads[i].state != TS_EXITED)
			return 1;
	return 0;
}

/* A digits-only path component of length n as a number, or -1. */
static long component_number(const char *c, size_t n)
{
	if (n == 0 || n > 9)
		return -1;
	long v = 0;
	for (size_t i = 0; i < n; i++) {
		if (c[i] < '0' || c[i] > '9')
			return -1;
		v = v * 10 + (c[i] - '0');
	}
	return v;
}

/* If the cleaned absolute path abs names the own /proc directory or something in it,
 * stores what lies below it in rest and returns 1. */
static int own_proc_entry(struct sim *s, const char *abs, char *rest)
{
	static const char *const std_names[] = {"/dev/stdin", "/dev/stdout", "/dev/stderr"};
	for (int i = 0; i < 3; i++)
		if (strcmp(abs, std_names[i]) == 0) {
			sprintf(rest, "fd/%d", i);
			return 1;
		}
	if (strncmp(abs, "/dev/fd", 7) == 0 && (abs[7] == 0 || abs[7] == '/')) {
		snprintf(rest, PATH_MAX, "fd%s", abs + 7);
		return 1;
	}
	if (strncmp(abs, "/proc/", 6) != 0)
		return 0;
	const char *c = abs + 6, *e = strchr(c, '/');
	size_t n = e ? (size_t)(e - c) : strlen(c);
	long num = component_number(c, n);
	int self = (n == 4 && memcmp(c, "self", 4) == 0) || (n == 11 && memcmp(c, "thread-self", 11) == 0) ||
		   (num >= 0 && is_own_pid(s, (unsigned long)num));
	if (!self)
		return 0;
	const char *r = e ? e + 1 : "";
	/* task/<own tid>/X is X: the entries pmusim virtualises are the same for each thread */
	if (strncmp(r, "task/", 5) == 0) {
		const char *t = r + 5, *te = strchr(t, '/');
		long tid = component_number(t, te ? (size_t)(te - t) : strlen(t));
		if (tid >= 0 && is_own_pid(s, (unsigned long)tid))
			r = te ? te + 1 : "";
	}
	snprintf(rest, PATH_MAX, "%s", r);
	return 1;
}

int gpath_get(struct sim *s, uint64_t gdirfd, uint64_t addr, struct gpath *gp)
{
	gp->kind = GPATH_HOST;
	int err = mem_read_str(s, addr, gp->path, PATH_MAX);
	if (err < 0)
		return err;
	int d = gp->path[0] == '/' ? AT_FDCWD : host_dirfd(s, gdirfd);
	if (d == -2)
		return -EBADF;
	gp->dirfd = d;
	char abs[PATH_MAX];
	if (gp->path[0] == '/') {
		if (strncmp(gp->path, "/proc", 5) != 0 && strncmp(gp->path, "/dev", 4) != 0 &&
		    strstr(gp->path, "/.") == NULL && strstr(gp->path, "//") == NULL)
			return 0; /* the common case: nothing to clean, not in /proc */
		snprintf(abs, sizeof(abs), "%s", gp->path);
	} else {
		/* relative to a directory in /proc (or /dev): where is it? */
		if (d == AT_FDCWD || gp->path[0] == 0)
			return 0;
		char base[PATH_MAX];
		struct statfs sf;
		if (fstatfs(d, &sf) != 0 || (sf.f_type != PROC_SUPER_MAGIC && sf.f_type != DEVPTS_SUPER_MAGIC &&
					     sf.f_type != TMPFS_MAGIC) ||
		    fd_path(d, base, sizeof(base)) < 0)
			return 0;
		size_t bl = strlen(base), pl = strlen(gp->path);
		if (bl + 1 + pl >= sizeof(abs))
			return -ENAMETOOLONG;
		memcpy(abs, base, bl);
		abs[bl] = '/';
		memcpy(abs + bl + 1, gp->path, pl + 1);
	}
	clean_path(abs);
	if (own_proc_entry(s, abs, gp->rest))
		gp->kind = GPATH_SELF;
	return 0;
}

int gpath_host(struct sim *s, uint64_t gdirfd, uint64_t addr, struct gpath *gp)
{
	int err = gpath_get(s, gdirfd, addr, gp);
	if (err < 0 || gp->kind != GPATH_SELF)
		return err;
	err = proc_self_host(s, gp->rest, &gp->dirfd, gp->path, sizeof(gp->path));
	if (err < 0)
		return err;
	gp->kind = GPATH_HOST;
	return 0;
}

/* Whether host descriptor fd is pmusim's: its procfs entries, or a file it writes. */
static int is_pmusims(int fd)
{
	struct stat st;
	if (fstat(fd, &st) == 0 && outfile_owns((unsigned long long)st.st_dev, (unsigned long long)st.st_ino))
		return 1;
	if (!on_procfs(fd))
		return 0;
	char p[PATH_MAX];
	if (fd_path(fd, p, sizeof(p)) < 0)
		return 1;
	char own[32];
	int n = snprintf(own, sizeof(own), "/proc/%d", (int)getpid());
	if (strncmp(p, own, (size_t)n) == 0 && (p[n] == 0 || p[n] == '/'))
		return 1;
	/* a thread of pmusim's, reached as /proc/<tid> */
	n = snprintf(own, sizeof(own), "/proc/%ld", (long)syscall(SYS_gettid));
	return strncmp(p, own, (size_t)n) == 0 && (p[n] == 0 || p[n] == '/');
}

int gpath_may_change(struct sim *s, const struct gpath *gp)
{
	(void)s;
	if (gp->kind == GPATH_SELF)
		return -EACCES;
	/* the guest's own descriptor, as gpath_host names it (glibc's fchmodat with
	 * AT_SYMLINK_NOFOLLOW changes the file of an O_PATH descriptor this way) */
	if (gp->dirfd == AT_FDCWD && strncmp(gp->path, "/proc/self/fd/", 14) == 0) {
		int h = atoi(gp->path + 14);
		return is_pmusims(h) ? -EACCES : 0;
	}
	int fd = openat(gp->dirfd, gp->path, O_PATH | O_NOFOLLOW | O_CLOEXEC);
	if (fd < 0)
		return 0; /* nothing there: the call itself says what happens */
	int bad = is_pmusims(fd);
	close(fd);
	if (!bad && (fd = openat(gp->dirfd, gp->path, O_PATH | O_CLOEXEC)) >= 0) {
		bad = is_pmusims(fd);
		close(fd);
	}
	return bad ? -EACCES : 0;
}

int gpath_open(struct sim *s, const struct gpath *gp, int flags, int mode)
{
	if (gp->kind == GPATH_SELF)
		return proc_self_open(s, gp->rest, flags, mode);
	struct open_how how = {
		.flags = (uint64_t)(unsigned)(flags | O_CLOEXEC) & ~(uint64_t)0xffffffff00000000ULL,
		.mode = (flags & (O_CREAT | __O_TMPFILE)) ? (uint64_t)(mode & 07777) : 0,
		.resolve = RESOLVE_NO_MAGICLINKS,
	};
	/* the guest's close-on-exec is kept in its own flag: pmusim's descriptors never
	 * reach a host child, so every host descriptor is close-on-exec */
	if (!(flags & O_CLOEXEC))
		how.flags &= ~(uint64_t)O_CLOEXEC;
	int creates = (flags & (O_CREAT | __O_TMPFILE)) != 0;
	unsigned host_mask = creates ? gpath_umask_enter(s) : 0;
	long h = syscall(SYS_openat2, gp->dirfd, gp->path, &how, sizeof(how));
	int e = errno;
	if (creates)
		gpath_umask_leave(host_mask);
	errno = e;
	if (h < 0)
		return errno == ELOOP && !(flags & O_NOFOLLOW) ? -EACCES : -errno;
	if (is_pmusims((int)h)) {
		close((int)h);
		return -EACCES;
	}
	return (int)h;
}

unsigned gpath_umask_enter(struct sim *s)
{
	return (unsigned)umask((mode_t)s->p->umask);
}

void gpath_umask_leave(unsigned host)
{
	umask((mode_t)host);
}

int gpath_cwd(struct sim *s, char *buf, size_t len)
{
	if (s->p->cwd_fd < 0)
		return getcwd(buf, len) ? 0 : -errno;
	char p[PATH_MAX];
	int err = fd_path(s->p->cwd_fd, p, sizeof(p));
	if (err < 0)
		return err;
	if (strlen(p) + 1 > len)
		return -ERANGE;
	memcpy(buf, p, strlen(p) + 1);
	return 0;
}

int gpath_chdir(struct sim *s, int hfd)
{
	struct stat st;
	if (fstat(hfd, &st) != 0)
		return -errno;
	if (!S_ISDIR(st.st_mode))
		return -ENOTDIR;
	int fd = fcntl(hfd, F_DUPFD_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (s->p->cwd_fd >= 0)
		close(s->p->cwd_fd);
	s->p->cwd_fd = fd;
	return 0;
}
