/* The ELF loader (loader.c): the running process's program and its interpreter into
 * guest memory, and the initial stack as Linux's binfmt_elf lays it out. */
#ifndef PMUSIM_SIM_LINUX_LOADER_H
#define PMUSIM_SIM_LINUX_LOADER_H

#include <stddef.h>
#include <stdint.h>

struct sim;

/* Maps s->p->path (and its PT_INTERP or sim_options.interp) into the running process's
 * engine and sets its load biases, entry points, program headers and brk; 0 or a
 * negative pmusim_err (msg says why). */
int loader_load(struct sim *s, char *msg, size_t msglen);
/* Maps the stack and writes argc, argv, envp, auxv and their strings; *sp: the
 * initial RSP. 0 or a negative pmusim_err. */
int loader_setup_stack(struct sim *s, uint64_t *sp);

#endif
