/* What an illegal instruction was, for the one line pmusim prints when SIGILL ends a
 * program: the instruction as Capstone reads it, and whose limit it is. */
#ifndef PMUSIM_SIM_MACHINE_SIGILL_H
#define PMUSIM_SIM_MACHINE_SIGILL_H

#include <stddef.h>
#include <stdint.h>

struct sim;

/* "illegal instruction `mnemonic operands` (group): reason" into buf. The reason says
 * whether pmusim's CPUID does not report it (s->sigill_unreported), Unicorn 2.0.1
 * cannot execute it, or the program raised it on purpose (ud2). */
void sigill_describe(struct sim *s, uint64_t pc, char *buf, size_t len);

#endif
