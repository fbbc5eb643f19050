/* POSIX signals with Linux x86-64 frames (signal.c): actions, masks, pending sets,
 * delivery to handlers, rt_sigreturn and waiting for signals. A fault's signal comes
 * from the machine through signal_fault (linux.h). */
#ifndef PMUSIM_SIM_LINUX_SIGNAL_H
#define PMUSIM_SIM_LINUX_SIGNAL_H

#include <stdint.h>

struct proc;
struct sig_info_rec;
struct sim;
struct thread;

/* sig_info_rec.code of a pending bit that only timers' instances keep. */
#define SIG_INFO_NONE (-0x7fffffff - 1)

int64_t sys_rt_sigaction(struct sim *s, uint64_t sig, uint64_t act, uint64_t oact, uint64_t size);
int64_t sys_rt_sigprocmask(struct sim *s, int how, uint64_t set, uint64_t oset);
int64_t sys_sigaltstack(struct sim *s, uint64_t ss, uint64_t oss);
int64_t sys_rt_sigsuspend(struct sim *s, uint64_t mask);
int64_t sys_pause(struct sim *s);
int64_t sys_rt_sigpending(struct sim *s, uint64_t set);
/* Sends sig to thread t (t NULL: to the process). code: si_code. */
int64_t signal_send(struct sim *s, struct thread *t, int sig, int code, uint64_t addr);
/* A deliverable signal is pending for the running thread. */
int signal_deliverable(struct sim *s);
/* Delivers the running thread's pending signals (default action or handler
 * frame) with the thread stopped at pc; returns where it goes on. */
uint64_t signal_deliver(struct sim *s, uint64_t pc);
/* rt_sigreturn: restores the frame at RSP-8; returns the PC to go on at. */
uint64_t signal_return(struct sim *s);
/* rt_sigtimedwait(set, info, timeout, sigsetsize): a[0..3]. */
int64_t sys_rt_sigtimedwait(struct sim *s, const uint64_t *a);
/* Takes the first pending signal in set for the running thread, blocked or not (its own
 * before its process's): its number and *rec, or 0 when none. */
int signal_dequeue(struct sim *s, uint64_t set, struct sig_info_rec *rec);
/* The 128-byte siginfo_t of sig as a handler and sigwaitinfo see it
 * (uapi/asm-generic/siginfo.h). */
void signal_siginfo(int sig, const struct sig_info_rec *rec, unsigned char out[128]);
/* The running thread waits in its system call (which runs again when woken) for a signal
 * of set (unblock: sigtimedwait unblocks them meanwhile) until deadline (simulated ns,
 * UINT64_MAX: none; then the call sees sigwait_timed_out). Returns 0. */
int signal_wait(struct sim *s, uint64_t set, int unblock, uint64_t deadline);
/* Ends t's signal wait (the call ran again or was woken): its mask comes back. */
void signal_wait_end(struct thread *t);
/* A timer's signal becomes pending for thread t (NULL: the process s->p), its
 * instance kept on the timer (sys_timer.c): 1, or 0 when it is discarded. */
int signal_post_timer(struct sim *s, struct thread *t, int sig);
/* A timer of p dropped its pending instance of sig for thread tid (0: the process):
 * the pending bit goes when nothing else keeps it. */
void signal_timer_dropped(struct sim *s, struct proc *p, uint32_t tid, int sig);

#endif
