/* The guest's file names (guest_path.c): resolved against the guest's own working
 * directory, never pmusim's (pmusim does not chdir), with the guest's own /proc entry
 * (/proc/self, /proc/thread-self, /proc/<its pid>, /dev/fd, /dev/std*) virtualised
 * (proc_self.c), and a guard that keeps every call away from pmusim's procfs entries and
 * from the files pmusim is writing. qemu-user and valgrind virtualise /proc/self for
 * the same reason: through it a program reads and writes its emulator's memory. */
#ifndef PMUSIM_SIM_LINUX_GUEST_PATH_H
#define PMUSIM_SIM_LINUX_GUEST_PATH_H

#include <limits.h>
#include <stdint.h>

struct sim;

/* What a guest path names. */
enum gpath_kind {
	GPATH_HOST = 0, /* a host file: dirfd and path */
	GPATH_SELF,     /* an entry of the process's own /proc directory: rest */
};

struct gpath {
	int kind;
	int dirfd;           /* host directory for a relative path (AT_FDCWD: path is absolute) */
	char path[PATH_MAX]; /* GPATH_HOST */
	char rest[PATH_MAX]; /* GPATH_SELF: below /proc/<pid>/, "" for the directory itself,
	                      * with task/<tid>/ of its own threads removed */
};

/* Reads the guest's path at addr, relative to guest directory fd gdirfd (AT_FDCWD: its
 * working directory), into gp. 0, or -errno for the guest (-EFAULT, -ENAMETOOLONG,
 * -EBADF for a bad gdirfd). */
int gpath_get(struct sim *s, uint64_t gdirfd, uint64_t addr, struct gpath *gp);

/* Like gpath_get, then turns an entry of the own /proc directory that stands for a host
 * file (exe, cwd, root, fd/N and below) into that file; other entries become the same
 * name in pmusim's /proc for reading their metadata. For calls that do not open. */
int gpath_host(struct sim *s, uint64_t gdirfd, uint64_t addr, struct gpath *gp);

/* Refuses (-EACCES) a call that changes or removes what gp names when that is one of
 * pmusim's files (an output being written) or lies in /proc; 0 otherwise. */
int gpath_may_change(struct sim *s, const struct gpath *gp);

/* Opens what gp names for the guest with open(2) flags and mode: a host file through
 * openat2 without magic links, checked not to be pmusim's; or a virtual entry. Returns
 * the host fd or -errno. */
int gpath_open(struct sim *s, const struct gpath *gp, int flags, int mode);

/* Host directory fd for a guest dirfd argument (AT_FDCWD: the process's working
 * directory), -2 when bad. */
int host_dirfd(struct sim *s, uint64_t gdirfd);

/* The host's umask becomes the running process's for a call that creates files, and
 * back (gpath_umask_leave with what gpath_umask_enter returned). */
unsigned gpath_umask_enter(struct sim *s);
void gpath_umask_leave(unsigned host);

/* The guest's working directory as a path (getcwd), 0 or -errno. */
int gpath_cwd(struct sim *s, char *buf, size_t len);

/* Makes host directory fd hfd (kept by the caller) the process's working directory:
 * 0 or -errno (-ENOTDIR). */
int gpath_chdir(struct sim *s, int hfd);

#endif
