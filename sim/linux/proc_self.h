/* The guest process's own /proc directory (proc_self.c), as Linux's proc(5) shows a
 * process itself: maps of its own address space, exe, cwd and root, fd/ of its own
 * descriptors, auxv, cmdline, environ, stat, status, comm and task/. Its memory is not
 * reachable (mem and pagemap are refused); a few host files that say nothing about
 * pmusim (mountinfo, cgroup, limits...) are passed through for reading. The names are
 * what lies below /proc/<pid>/ (guest_path.h: struct gpath.rest). */
#ifndef PMUSIM_SIM_LINUX_PROC_SELF_H
#define PMUSIM_SIM_LINUX_PROC_SELF_H

#include <stddef.h>
#include <stdint.h>

struct sim;

/* Opens entry rest with open(2) flags: a host fd (a memfd with the generated contents,
 * the host file a link entry stands for, or a directory whose listing getdents
 * generates), or -errno. */
int proc_self_open(struct sim *s, const char *rest, int flags, int mode);

/* Where a link entry (exe, cwd, root, fd/N and anything below them) leads, as a host
 * dirfd and path; any other entry: pmusim's own of that name, for its metadata only.
 * 0 or -errno (-ENOENT for fd/N not open). */
int proc_self_host(struct sim *s, const char *rest, int *dirfd, char *path, size_t len);

/* readlink of an entry: the guest pid for the directory itself ("self"), the targets of
 * exe, cwd, root and fd/N; the length, or -errno (-EINVAL: not a link). */
int64_t proc_self_readlink(struct sim *s, const char *rest, char *out, size_t len);

/* getdents64 on host fd hfd: 1 and *ret (bytes written to buf, or -errno) when hfd is a
 * generated directory, 0 otherwise. */
int proc_self_getdents(struct sim *s, int hfd, char *buf, size_t len, int64_t *ret);

/* lseek to 0 on a generated directory starts its listing again; 1 when hfd is one. */
int proc_self_rewind(struct sim *s, int hfd);

/* hfd is being closed: forgets a generated directory's listing. */
void proc_self_closed(struct sim *s, int hfd);

/* Frees every generated listing (the end of the simulation). */
void proc_self_free(struct sim *s);

#endif
