/* The software REP tracer (rep_patch.c; sim_rep_patch in sim/sim.h): one REP of the
 * program at a time patched with an INT3 that traps to pmusim. The block hook asks
 * whether the patch must move, the interrupt hook whether an INT3 is the patch's, the
 * run loop moves it and handles its trap, fork keeps it out of the child. */
#ifndef PMUSIM_SIM_MACHINE_REP_PATCH_H
#define PMUSIM_SIM_MACHINE_REP_PATCH_H

#include <stdint.h>

struct proc;
struct sim;

/* Patches the REP the next restart wants (patch_want) instead of the one patched now. */
void rep_patch_arm(struct sim *s);
/* A block of the program starts at addr: 1 when the patch must move first
 * (emulation then restarts there through rep_patch_arm). */
int rep_patch_check(struct sim *s, uint64_t addr);
/* 1 when an INT3 at int3_addr is the tracer's patch. */
int rep_patch_is_trap(const struct sim *s, uint64_t int3_addr);
/* After the patch trapped (emulation stopped): records, restores; returns the PC. */
uint64_t rep_patch_trap(struct sim *s);
/* A fork's copy of the program gets the original byte back. */
void rep_patch_restore_in(struct sim *s, struct proc *child);

#endif
