/* The Linux personality as the machine calls it (sim/machine/): to build and free a
 * simulation's processes, when the guest executes SYSCALL, when a slice or a timer is
 * due at a block boundary, after emulation stopped for the scheduler, and when the
 * guest faults. The personality's modules talk to each other through their own
 * headers (process.h, sched.h, signal.h, ...), which the machine does not include. */
#ifndef PMUSIM_SIM_LINUX_LINUX_H
#define PMUSIM_SIM_LINUX_LINUX_H

#include <stddef.h>
#include <stdint.h>

struct proc;
struct sim;

/* process.c */
struct proc *proc_alloc(struct sim *s);
/* Loads p->path as p's image into a new engine (p becomes s->p); 0 or pmusim_err. */
int proc_image_open(struct sim *s, struct proc *p, char *msg, size_t msglen);
void proc_free(struct sim *s, struct proc *p);
/* Makes p the running process (engine, decode cache, image sinks). */
void proc_enter(struct sim *s, struct proc *p);
/* The running process ends with a wait4 status word (the run, for the first). */
void proc_end(struct sim *s, int wait_status);

/* syscall.c: the SYSCALL instruction of the running thread (its registers in and out). */
void syscall_dispatch(struct sim *s);
/* sys_file.c: the first process's descriptors 0-2 are copies of pmusim's. */
void syscall_init_fds(struct sim *s);

/* sched.c: threads on one simulated CPU. */
int sched_init(struct sim *s);
void sched_free(struct sim *s);
/* hook_block found bstream_insns() >= attention_at at a block boundary (addr). */
void sched_tick(struct sim *s, uint64_t addr);
/* Called by the run loop after a requested stop: delivers signals, switches
 * threads, advances time over idle periods. Returns the PC to resume at (the
 * machine may have ended: s->stop_reason). */
uint64_t sched_attend(struct sim *s);
/* Recomputes attention_at from the slice end and the armed timers. */
void sched_update_attention(struct sim *s);
/* The thread id of the running thread. */
uint32_t sched_cur_tid(const struct sim *s);

/* signal.c: the running thread faulted at pc with sig: 1 and *pc_out when the program
 * handles it (a frame is built), 0 when it ends the program. */
int signal_fault(struct sim *s, int sig, int code, uint64_t pc, uint64_t addr, uint64_t *pc_out);

/* signalfd.c */
void signalfd_free(struct sim *s);

#endif
