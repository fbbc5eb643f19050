/* Helpers shared by the system-call modules (syscall.c, sys_*.c, signalfd.c).
 * Every handler takes the six argument registers and returns the value the
 * guest sees in RAX: >= 0 on success, -errno on failure (Linux x86-64 ABI). */
#ifndef PMUSIM_SIM_LINUX_SYSCALL_INTERNAL_H
#define PMUSIM_SIM_LINUX_SYSCALL_INTERNAL_H

#include <stdint.h>

struct sim;

struct sysargs {
	long nr;
	uint64_t a[6];
};

/* Returns 1 and sets *ret when the call is one of this module's. */
int sys_file(struct sim *s, const struct sysargs *x, int64_t *ret);
int sys_mem(struct sim *s, const struct sysargs *x, int64_t *ret);

/* Runs one system call (the dispatcher without the register traffic). */
int64_t syscall_run(struct sim *s, const struct sysargs *x);

/* wait4 (process.c). */
int64_t sys_wait4(struct sim *s, const struct sysargs *x);

/* Raises signal sig on the guest: default actions end the run (syscall.c). */
int64_t sys_raise(struct sim *s, int sig);

/* File metadata, links and renames (sys_meta.c); 1 and *ret when it is one. */
int sys_meta(struct sim *s, const struct sysargs *x, int64_t *ret);

/* Closes every descriptor of the running process. */
void syscall_close_fds(struct sim *s);

/* Host fd behind a guest fd, or -1. */
int fd_host(const struct sim *s, uint64_t gfd);
/* Gives host fd hfd the lowest free guest number >= from; the number, or -EMFILE (hfd
 * closed). */
int64_t fd_install(struct sim *s, int hfd, uint64_t from);
/* Whether a read (POLLIN) or write (POLLOUT) on host fd hfd would block: then the
 * calling thread now waits in the scheduler and the call runs again later (1). */
int io_must_wait(struct sim *s, int hfd, short events);

/* Waiting for files (sys_poll.c), sockets (sys_net.c), identities, groups, sessions and
 * other process attributes (sys_ident.c); 1 and *ret when the call is theirs. */
int sys_poll(struct sim *s, const struct sysargs *x, int64_t *ret);
int sys_net(struct sim *s, const struct sysargs *x, int64_t *ret);
int sys_ident(struct sim *s, const struct sysargs *x, int64_t *ret);
/* Clocks and timers (sys_timer.c): clock_gettime, setitimer, getitimer, alarm, timer_*. */
int sys_timer(struct sim *s, const struct sysargs *x, int64_t *ret);

/* signalfd and signalfd4 (signalfd.c). */
int64_t sys_signalfd(struct sim *s, const struct sysargs *x);
/* read, readv, write or writev x on host descriptor hfd: 1 and *ret when hfd is a
 * signalfd's. */
int signalfd_io(struct sim *s, const struct sysargs *x, int hfd, int64_t *ret);

#endif
