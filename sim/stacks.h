/* Call stacks in the machine (stacks.c; sim_tstack_new, sim_true_stack and the rest in
 * sim/sim.h): the thread-stack unit's OS side and the true stacks. It sits between the
 * two halves: the machine gives it hooks in every engine and every TB entry, the Linux
 * personality tells it about threads, execve and signal frames. */
#ifndef PMUSIM_SIM_STACKS_H
#define PMUSIM_SIM_STACKS_H

#include <stdint.h>

struct proc;
struct sim;

/* Thread tid was created; a fork's child (copy_from: the parent thread, 0 for a new
 * thread) starts in its parent's calls. */
void stacks_thread_created(struct sim *s, uint32_t tid, uint32_t copy_from);
void stacks_thread_exited(struct sim *s, uint32_t tid);
/* After execve of process p (its new engine is open) by thread tid. */
void stacks_exec(struct sim *s, struct proc *p, uint32_t tid);
void stacks_free(struct sim *s);
/* A signal frame at `frame` (its saved RIP at ip_slot) sends thread tid from ip
 * to handler; after the interrupted block retired. */
void stacks_signal_enter(struct sim *s, uint32_t tid, uint64_t ip, uint64_t frame, uint64_t ip_slot,
			 uint64_t handler);
/* rt_sigreturn of the frame whose saved RIP was at ip_slot: thread tid goes on
 * at ip with RSP sp; before the system call's block retires. */
void stacks_signal_return(struct sim *s, uint32_t tid, uint64_t ip, uint64_t sp, uint64_t ip_slot);
/* The markers' hooks in a new engine; 0 or a negative pmusim_err. */
int stacks_add_hooks(struct sim *s, struct proc *p);
/* Every TB entry, before the pending one retires (markers). */
void stacks_block_start(struct sim *s, uint64_t addr);
/* 1 while a marked instruction waits for the next one to act (stacks_block_start). */
int stacks_mark_armed(const struct sim *s);

#endif
