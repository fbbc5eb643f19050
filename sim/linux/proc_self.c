/* The guest process's own /proc directory (see proc_self.h). Generated files are
 * memfds written once at the open, as the kernel generates a seq_file when it is read;
 * their formats follow proc(5) (man-pages 6.03) and fs/proc/array.c, task_mmu.c.
 * Directory listings (the directory itself, fd/, task/) are generated at the open and
 * handed out by getdents64 in Linux's struct linux_dirent64 layout. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "sim/linux/guest_path.h"
#include "sim/linux/proc_self.h"
#include "sim/linux/sched.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

/* A generated directory: the names getdents64 gives, from pos on. */
struct vdir_entry {
	char name[24];
	unsigned char type; /* DT_* */
};
struct proc_vdir {
	int hfd;
	struct vdir_entry *e;
	size_t n, pos;
};
struct proc_vdirs {
	struct proc_vdir *d;
	size_t n, cap;
};

/* A text being generated, growing as needed. */
struct text {
	char *b;
	size_t n, cap;
	int oom;
};

static void add(struct text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct text *t, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(t->b ? t->b + t->n : NULL, t->b ? t->cap - t->n : 0, fmt, ap);
		va_end(ap);
		if (k < 0 || t->oom)
			return;
		if (t->b && t->n + (size_t)k < t->cap) {
			t->n += (size_t)k;
			return;
		}
		size_t cap = (t->cap ? t->cap * 2 : 4096) + (size_t)k;
		char *nb = realloc(t->b, cap);
		if (!nb) {
			t->oom = 1;
			return;
		}
		t->b = nb, t->cap = cap;
	}
}

static void add_bytes(struct text *t, const void *p, size_t n)
{
	if (t->oom)
		return;
	if (t->n + n + 1 > t->cap) {
		size_t cap = t->cap * 2 + n + 1;
		char *nb = realloc(t->b, cap);
		if (!nb) {
			t->oom = 1;
			return;
		}
		t->b = nb, t->cap = cap;
	}
	memcpy(t->b + t->n, p, n);
	t->n += n;
}

/* The contents as a new memfd at offset 0 (consumes t). */
static int text_fd(struct text *t, int flags)
{
	int fd = t->oom ? -1 : memfd_create("pmusim-proc", (flags & O_CLOEXEC) ? MFD_CLOEXEC : 0);
	int err = t->oom ? -ENOMEM : fd < 0 ? -errno : 0;
	size_t off = 0;
	while (!err && off < t->n) {
		ssize_t w = write(fd, t->b + off, t->n - off);
		if (w <= 0)
			err = -EIO;
		else
			off += (size_t)w;
	}
	free(t->b);
	if (!err && lseek(fd, 0, SEEK_SET) < 0)
		err = -errno;
	if (err && fd >= 0)
		close(fd);
	return err ? err : fd;
}

static const char *comm_of(const struct proc *p)
{
	const char *b = strrchr(p->path, '/');
	return b ? b + 1 : p->path;
}

static size_t own_threads(const struct sim *s)
{
	size_t n = 0;
	for (size_t i = 0; i < s->nthreads; i++)
		n += s->threads[i].proc == s->p && s->threads[i].state != TS_EXITED;
	return n;
}

static const char *area_name(const struct proc *p, const struct vma *v)
{
	if (v->start < STACK_TOP && v->end >= STACK_TOP - GUEST_PAGE && v->end <= STACK_TOP)
		return "[stack]";
	if (p->brk_cur > p->brk_start && v->start >= p->brk_start && v->end <= PAGE_UP(p->brk_cur))
		return "[heap]";
	for (size_t i = p->nexec_maps; i-- > 0;) {
		const struct sim_mapping *m = &p->exec_maps[i];
		if (v->start < m->addr + m->len && m->addr < v->end && !sim_mapping_is_anon(m))
			return m->path;
	}
	return "";
}

/* fs/proc/task_mmu.c show_map_vma: "%08lx-%08lx %c%c%c%c %08llx %02x:%02x %lu ", the
 * name padded to column 74. */
static void gen_maps(struct sim *s, struct text *t)
{
	const struct proc *p = s->p;
	for (size_t i = 0; i < p->nvmas; i++) {
		const struct vma *v = &p->vmas[i];
		const char *name = area_name(p, v);
		size_t before = t->n;
		add(t, "%08llx-%08llx %c%c%cp %08llx 00:00 0 ", (unsigned long long)v->start,
		    (unsigned long long)v->end, (v->prot & PROT_READ) ? 'r' : '-', (v->prot & PROT_WRITE) ? 'w' : '-',
		    (v->prot & PROT_EXEC) ? 'x' : '-', 0ULL);
		if (*name) {
			size_t col = t->n - before;
			add(t, "%*s%s", col < 73 ? (int)(73 - col) : 0, "", name);
		}
		add(t, "\n");
	}
}

static uint64_t vm_size(const struct proc *p)
{
	uint64_t n = 0;
	for (size_t i = 0; i < p->nvmas; i++)
		n += p->vmas[i].end - p->vmas[i].start;
	return n;
}

/* fs/proc/array.c do_task_stat: 52 fields; what pmusim does not model is 0. */
static void gen_stat(struct sim *s, struct text *t)
{
	const struct proc *p = s->p;
	unsigned long long ticks = p->cpu_ns / 10000000ULL; /* USER_HZ 100 */
	add(t, "%u (%.15s) R %u %u %u 0 -1 4194304 0 0 0 0 %llu 0 0 0 20 0 %zu 0 0 %llu 0 "
	       "18446744073709551615 0 0 %llu 0 0 0 0 0 0 0 0 0 17 0 0 0 0 0 0 0 0 %llu %llu %llu %llu %llu 0\n",
	    p->pid, comm_of(p), p->ppid, p->pgid, p->sid, ticks, own_threads(s), (unsigned long long)vm_size(p),
	    (unsigned long long)p->self_info.start_stack, (unsigned long long)p->brk_start,
	    (unsigned long long)p->self_info.arg_start, (unsigned long long)p->self_info.arg_end,
	    (unsigned long long)p->self_info.env_start, (unsigned long long)p->self_info.env_end);
}

static void gen_status(struct sim *s, struct text *t)
{
	const struct proc *p = s->p;
	unsigned um = p->umask;
	uint64_t ign = 0, cgt = 0;
	for (int i = 1; i < 65; i++) {
		if (p->sig_handlers[i] == (uint64_t)(uintptr_t)SIG_IGN)
			ign |= 1ULL << (i - 1);
		else if (p->sig_handlers[i] != (uint64_t)(uintptr_t)SIG_DFL)
			cgt |= 1ULL << (i - 1);
	}
	const struct thread *th = cur_thread(s);
	add(t, "Name:\t%.15s\nUmask:\t%04o\nState:\tR (running)\nTgid:\t%u\nNgid:\t0\nPid:\t%u\nPPid:\t%u\n"
	       "TracerPid:\t0\nUid:\t%u\t%u\t%u\t%u\nGid:\t%u\t%u\t%u\t%u\nFDSize:\t%d\n"
	       "VmSize:\t%8llu kB\nThreads:\t%zu\nSigPnd:\t%016llx\nShdPnd:\t%016llx\nSigBlk:\t%016llx\n"
	       "SigIgn:\t%016llx\nSigCgt:\t%016llx\nCpus_allowed:\t1\nCpus_allowed_list:\t0\n",
	    comm_of(p), (unsigned)um, p->pid, p->pid, p->ppid, p->uid[0], p->uid[1], p->uid[2], p->uid[1], p->gid[0],
	    p->gid[1], p->gid[2], p->gid[1], GUEST_FD_MAX, (unsigned long long)(vm_size(p) >> 10), own_threads(s),
	    (unsigned long long)th->pending, (unsigned long long)p->proc_pending, (unsigned long long)th->sigmask,
	    (unsigned long long)ign, (unsigned long long)cgt);
}

/* The entries generated as files, and whether a write is taken (and dropped). */
static int gen_file(struct sim *s, const char *name, struct text *t, int *writable)
{
	*writable = 0;
	const struct proc_self_info *in = &s->p->self_info;
	if (strcmp(name, "maps") == 0)
		gen_maps(s, t);
	else if (strcmp(name, "stat") == 0)
		gen_stat(s, t);
	else if (strcmp(name, "status") == 0)
		gen_status(s, t);
	else if (strcmp(name, "comm") == 0) {
		add(t, "%.15s\n", comm_of(s->p));
		*writable = 1; /* pthread_setname_np writes task/<tid>/comm; names are not modelled */
	} else if (strcmp(name, "auxv") == 0)
		add_bytes(t, in->auxv, in->nauxv * 16);
	else if (strcmp(name, "cmdline") == 0)
		add_bytes(t, in->cmdline, in->cmdline_len);
	else if (strcmp(name, "environ") == 0)
		add_bytes(t, in->environ, in->environ_len);
	else
		return 0;
	return 1;
}

/* Host files that tell nothing of pmusim's memory or files: read through. */
static int passed_through(const char *name)
{
	static const char *const names[] = {"mountinfo", "mounts", "mountstats", "cgroup", "limits",
					    "oom_score", "oom_score_adj", "loginuid", "sessionid",
					    "uid_map", "gid_map", "setgroups", "personality"};
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strcmp(name, names[i]) == 0)
			return 1;
	return strncmp(name, "net/", 4) == 0 || strcmp(name, "net") == 0;
}

static struct proc_vdirs *vdirs_of(struct sim *s)
{
	if (!s->proc_vdirs)
		s->proc_vdirs = calloc(1, sizeof(struct proc_vdirs));
	return s->proc_vdirs;
}

static void entry(struct proc_vdir *d, size_t cap, const char *name, unsigned char type)
{
	if (d->n < cap) {
		snprintf(d->e[d->n].name, sizeof(d->e[d->n].name), "%s", name);
		d->e[d->n++].type = type;
	}
}

/* A generated directory: host fd of an empty-looking directory (pmusim's /proc/self/fd,
 * whose own listing is never shown) and the names of the guest's. */
static int open_vdir(struct sim *s, const char *rest, int flags)
{
	if ((flags & O_ACCMODE) != O_RDONLY)
		return -EISDIR;
	struct proc_vdirs *vs = vdirs_of(s);
	if (!vs || (vs->n == vs->cap && !(vs->d = realloc(vs->d, (vs->cap = vs->cap * 2 + 8) * sizeof(*vs->d)))))
		return -ENOMEM;
	size_t cap = GUEST_FD_MAX + s->nthreads + 32;
	struct proc_vdir d = {.e = calloc(cap, sizeof(struct vdir_entry))};
	if (!d.e)
		return -ENOMEM;
	entry(&d, cap, ".", DT_DIR);
	entry(&d, cap, "..", DT_DIR);
	char num[24];
	if (strcmp(rest, "fd") == 0) {
		for (int i = 0; i < GUEST_FD_MAX; i++)
			if (s->p->fds[i] >= 0)
				snprintf(num, sizeof(num), "%d", i), entry(&d, cap, num, DT_LNK);
	} else if (strcmp(rest, "task") == 0) {
		for (size_t i = 0; i < s->nthreads; i++)
			if (s->threads[i].proc == s->p && s->threads[i].state != TS_EXITED)
				snprintf(num, sizeof(num), "%u", s->threads[i].tid), entry(&d, cap, num, DT_DIR);
	} else {
		static const char *const files[] = {"auxv", "cmdline", "comm", "environ", "maps", "mem",
						    "stat", "status", "cgroup", "limits", "mountinfo", "mounts"};
		static const char *const links[] = {"cwd", "exe", "root"};
		entry(&d, cap, "fd", DT_DIR);
		entry(&d, cap, "task", DT_DIR);
		for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++)
			entry(&d, cap, files[i], DT_REG);
		for (size_t i = 0; i < sizeof(links) / sizeof(links[0]); i++)
			entry(&d, cap, links[i], DT_LNK);
	}
	d.hfd = open("/proc/self/fd", O_RDONLY | O_DIRECTORY | ((flags & O_CLOEXEC) ? O_CLOEXEC : 0));
	if (d.hfd < 0) {
		free(d.e);
		return -errno;
	}
	vs->d[vs->n++] = d;
	return d.hfd;
}

static struct proc_vdir *vdir_of(struct sim *s, int hfd)
{
	struct proc_vdirs *vs = s->proc_vdirs;
	for (size_t i = 0; vs && i < vs->n; i++)
		if (vs->d[i].hfd == hfd)
			return &vs->d[i];
	return NULL;
}

int proc_self_getdents(struct sim *s, int hfd, char *buf, size_t len, int64_t *ret)
{
	struct proc_vdir *d = vdir_of(s, hfd);
	if (!d)
		return 0;
	size_t off = 0;
	while (d->pos < d->n) {
		const struct vdir_entry *e = &d->e[d->pos];
		size_t nl = strlen(e->name);
		size_t reclen = (19 + nl + 1 + 7) & ~(size_t)7; /* d_ino 8, d_off 8, d_reclen 2, d_type 1 */
		if (off + reclen > len)
			break;
		uint64_t ino = 1000 + d->pos;
		int64_t next = (int64_t)d->pos + 1;
		uint16_t rl = (uint16_t)reclen;
		memset(buf + off, 0, reclen);
		memcpy(buf + off, &ino, 8);
		memcpy(buf + off + 8, &next, 8);
		memcpy(buf + off + 16, &rl, 2);
		buf[off + 18] = (char)e->type;
		memcpy(buf + off + 19, e->name, nl);
		off += reclen;
		d->pos++;
	}
	*ret = off == 0 && d->pos < d->n ? -EINVAL : (int64_t)off;
	return 1;
}

int proc_self_rewind(struct sim *s, int hfd)
{
	struct proc_vdir *d = vdir_of(s, hfd);
	if (d)
		d->pos = 0;
	return d != NULL;
}

void proc_self_closed(struct sim *s, int hfd)
{
	struct proc_vdirs *vs = s->proc_vdirs;
	for (size_t i = 0; vs && i < vs->n; i++)
		if (vs->d[i].hfd == hfd) {
			free(vs->d[i].e);
			vs->d[i] = vs->d[--vs->n];
			return;
		}
}

void proc_self_free(struct sim *s)
{
	struct proc_vdirs *vs = s->proc_vdirs;
	if (!vs)
		return;
	for (size_t i = 0; i < vs->n; i++)
		free(vs->d[i].e);
	free(vs->d);
	free(vs);
	s->proc_vdirs = NULL;
}

/* "fd/N" or "fd/N/below": N's host descriptor and what follows it. */
static int fd_entry(struct sim *s, const char *rest, int *hfd, const char **below)
{
	const char *c = rest + 3;
	if (*c < '0' || *c > '9')
		return -ENOENT;
	char *end;
	unsigned long g = strtoul(c, &end, 10);
	if (*end && *end != '/')
		return -ENOENT;
	*hfd = fd_host(s, g);
	*below = *end ? end + 1 : "";
	return *hfd < 0 ? -ENOENT : 0;
}

static int starts(const char *rest, const char *name)
{
	size_t n = strlen(name);
	return strncmp(rest, name, n) == 0 && (rest[n] == 0 || rest[n] == '/');
}

int proc_self_host(struct sim *s, const char *rest, int *dirfd, char *path, size_t len)
{
	*dirfd = AT_FDCWD;
	if (strcmp(rest, "exe") == 0) {
		snprintf(path, len, "%s", s->p->exe_abs);
	} else if (starts(rest, "cwd")) {
		*dirfd = host_dirfd(s, (uint64_t)AT_FDCWD);
		snprintf(path, len, "%s", rest[3] ? rest + 4 : ".");
	} else if (starts(rest, "root")) {
		snprintf(path, len, "/%s", rest[4] ? rest + 5 : "");
	} else if (strncmp(rest, "fd/", 3) == 0) {
		int h;
		const char *below;
		int err = fd_entry(s, rest, &h, &below);
		if (err < 0)
			return err;
		if (*below) {
			*dirfd = h;
			snprintf(path, len, "%s", below);
		} else {
			snprintf(path, len, "/proc/self/fd/%d", h);
		}
	} else if (strcmp(rest, "mem") == 0 || strcmp(rest, "pagemap") == 0) {
		return -EACCES;
	} else {
		snprintf(path, len, "/proc/self/%s", rest); /* for its metadata */
	}
	return 0;
}

int64_t proc_self_readlink(struct sim *s, const char *rest, char *out, size_t len)
{
	int n;
	if (rest[0] == 0)
		n = snprintf(out, len, "%u", s->p->pid);
	else if (strcmp(rest, "exe") == 0)
		n = snprintf(out, len, "%s", s->p->exe_abs);
	else if (strcmp(rest, "root") == 0)
		n = snprintf(out, len, "/");
	else if (strcmp(rest, "cwd") == 0) {
		int err = gpath_cwd(s, out, len);
		if (err < 0)
			return err;
		n = (int)strlen(out);
	} else if (strncmp(rest, "fd/", 3) == 0) {
		int h;
		const char *below;
		int err = fd_entry(s, rest, &h, &below);
		if (err < 0)
			return err;
		if (*below)
			return -EINVAL;
		char link[64];
		snprintf(link, sizeof(link), "/proc/self/fd/%d", h);
		ssize_t r = readlink(link, out, len);
		return r < 0 ? -errno : r;
	} else
		return -EINVAL;
	return n < 0 ? -EINVAL : (size_t)n >= len ? (int64_t)len : n;
}

int proc_self_open(struct sim *s, const char *rest, int flags, int mode)
{
	if (rest[0] == 0 || strcmp(rest, "fd") == 0 || strcmp(rest, "task") == 0)
		return open_vdir(s, rest, flags);
	struct text t = {0};
	int writable;
	if (gen_file(s, rest, &t, &writable)) {
		if ((flags & O_ACCMODE) != O_RDONLY && !writable) {
			free(t.b);
			return -EACCES;
		}
		return text_fd(&t, flags);
	}
	if (passed_through(rest)) {
		if ((flags & O_ACCMODE) != O_RDONLY)
			return -EACCES;
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "/proc/self/%s", rest);
		int h = open(p, flags & (O_RDONLY | O_CLOEXEC | O_DIRECTORY | O_NOFOLLOW | O_NONBLOCK));
		return h < 0 ? -errno : h;
	}
	struct gpath gp = {.kind = GPATH_HOST};
	int err = proc_self_host(s, rest, &gp.dirfd, gp.path, sizeof(gp.path));
	if (err < 0)
		return err;
	if (strcmp(rest, "exe") == 0 || starts(rest, "cwd") || starts(rest, "root") ||
	    (strncmp(rest, "fd/", 3) == 0 && gp.dirfd != AT_FDCWD))
		return gpath_open(s, &gp, flags, mode);
	if (strncmp(rest, "fd/", 3) == 0) {
		/* reopening a descriptor of the guest's own (a new open file, as Linux does) */
		int h = open(gp.path, flags, mode);
		return h < 0 ? -errno : h;
	}
	return -ENOENT;
}
