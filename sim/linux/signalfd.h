/* signalfd descriptors (signalfd.c): host pipes whose readiness follows their owner's
 * pending signals. Their system calls are sys_signalfd and signalfd_io
 * (syscall_internal.h); signalfd_free is the machine's (linux.h). */
#ifndef PMUSIM_SIM_LINUX_SIGNALFD_H
#define PMUSIM_SIM_LINUX_SIGNALFD_H

struct sim;

/* After the readiness of a signalfd may have changed, before the host's poll(2) looks at
 * it: each one's host pipe holds a byte exactly when its owner has a signal of its mask
 * pending. */
void signalfd_refresh(struct sim *s);

#endif
