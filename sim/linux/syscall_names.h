/* Names of Linux x86-64 system calls, for messages. */
#ifndef PMUSIM_SIM_LINUX_SYSCALL_NAMES_H
#define PMUSIM_SIM_LINUX_SYSCALL_NAMES_H

/* "openat" for 257; NULL for numbers Linux does not define. */
const char *syscall_name(long nr);

#endif
