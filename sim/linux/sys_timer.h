/* Clocks, interval and POSIX timers on the simulated clocks (sys_timer.c): what the
 * scheduler asks of them (the next expiry, the ones due) and what signals and execve
 * tell them. Their system calls are sys_timer (syscall_internal.h). */
#ifndef PMUSIM_SIM_LINUX_SYS_TIMER_H
#define PMUSIM_SIM_LINUX_SYS_TIMER_H

#include <stdint.h>

struct proc;
struct sig_info_rec;
struct sim;

/* clock_gettime(id, tsp) in a system call. */
int64_t timer_clock_gettime(struct sim *s, int64_t id, uint64_t tsp);
/* Timers that expired by now send their signals. */
void timers_due(struct sim *s);
/* The instruction count at which the next timer expires while the running thread keeps
 * the CPU (UINT64_MAX: none). */
uint64_t timers_next_insns(struct sim *s);
/* The first deadline in simulated ns of the timers counting simulated time (UINT64_MAX:
 * none), to which time jumps when every thread waits. */
uint64_t timers_next_sim_ns(struct sim *s);
/* Takes the oldest pending instance of sig from the running process's timers that
 * target thread tid (0: the process): 1 and *rec (SI_TIMER), or 0. */
int timer_take_signal(struct sim *s, uint32_t tid, int sig, struct sig_info_rec *rec);
/* Whether a timer of p has sig pending for tid (0: the process). */
int timer_signal_queued(const struct proc *p, uint32_t tid, int sig);
/* sig became ignored: p's timers forget their pending instances of it. */
void timers_flush_signal(struct sim *s, struct proc *p, int sig);
/* execve deletes p's POSIX timers (interval timers stay). */
void timers_exec(struct sim *s, struct proc *p);
void timers_free(struct proc *p);

#endif
