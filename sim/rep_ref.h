/* The REP reference (rep_ref.c; sim_rep_reference in sim/sim.h): REP figures read from
 * registers by hooks of its own, for the truth. It sits between the two halves: the
 * machine tells it the REP instructions it meets and the code that changes, the Linux
 * personality the signal frames and context switches it does not hook. */
#ifndef PMUSIM_SIM_REP_REF_H
#define PMUSIM_SIM_REP_REF_H

#include <stdint.h>

struct rep_ref;
struct sim;

/* hook_specials met a REP string instruction at addr in the running process: 0 or a
 * negative pmusim_err. */
int rep_ref_watch(struct sim *s, uint64_t addr);
/* The running process's code in [addr, addr + len) changed. */
void rep_ref_invalidate(struct sim *s, uint64_t addr, uint64_t len);
/* The running thread, stopped at pc (its registers still those), enters a signal
 * handler whose frame is at frame. */
void rep_ref_signal(struct sim *s, uint64_t frame, uint64_t pc);
/* The running thread's rt_sigreturn restored the frame at frame; it goes on at pc. */
void rep_ref_sigreturn(struct sim *s, uint64_t frame, uint64_t pc);
/* The running thread, stopped at pc, loses the CPU. */
void rep_ref_switch_out(struct sim *s, uint64_t pc);
/* The run ended (the running thread's registers are its last). */
void rep_ref_run_end(struct sim *s);
void rep_ref_free(struct rep_ref *r);

#endif
