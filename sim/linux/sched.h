/* Threads of the guest and their scheduling on one simulated CPU (sched.c, and
 * sched_io.c for threads waiting for files): what the kernel keeps for a thread, and
 * how a system call blocks, sleeps or waits and is woken. The machine's entry points
 * into the scheduler (sched_tick, sched_attend, ...) are in linux.h. */
#ifndef PMUSIM_SIM_LINUX_SCHED_H
#define PMUSIM_SIM_LINUX_SCHED_H

#include <stdint.h>
#include <unicorn/unicorn.h>

#include "sim/machine/blockstream.h"
#include "sim/sim_state.h"

struct pollfd;

#define SIM_MAX_THREADS 512
#define SIG_CTX_DEPTH 16              /* nested signal frames whose full state is kept */

enum thread_state {
	TS_RUNNABLE = 0,
	TS_FUTEX,                /* futex wait: futex_addr, futex_bitset, wake_ns */
	TS_SLEEP,                /* nanosleep: wake_ns */
	TS_SIGWAIT,              /* pause, rt_sigsuspend: until a signal is delivered */
	TS_IO,                   /* read/write that would block: io_fd, io_events */
	TS_CHILD_WAIT,           /* wait4: until a child changes state */
	TS_VFORK,                /* vfork parent: until vfork_child executes or ends */
	TS_EXITED,
};

/* What the kernel keeps for a thread while another one runs (sched.c). */
struct thread {
	uint32_t tid;
	int state;
	struct proc *proc;         /* the process it belongs to */
	/* a blocked system call done again once it can go on (TS_IO, TS_CHILD_WAIT) */
	int retry;
	struct { long nr; uint64_t a[6]; } retry_args;
	uint64_t retry_pc;
	int io_fd;                 /* TS_IO: host fd and poll events */
	short io_events;
	struct pollfd *io_set;     /* TS_IO for poll/select/epoll: host fds to wait on (io_n), */
	int io_n;                  /* instead of io_fd; freed when the call ends */
	uint64_t io_deadline;      /* their timeout, simulated ns (UINT64_MAX: none; 0: not waiting) */
	int io_timed_out;          /* the deadline passed: the retried call returns what it has */
	uint32_t vfork_child;
	uc_context *regs;          /* registers while not running */
	uint64_t resume_pc;        /* where it goes on */
	int run_start;             /* block-stream state at the switch */
	int64_t wake_ret;          /* RAX when woken from a blocking system call */
	int has_wake_ret;
	uint64_t futex_addr;
	uint32_t futex_bitset;
	uint64_t wait_seq;         /* futex waiters are woken in arrival order */
	uint64_t wake_ns;          /* deadline of a timed wait, UINT64_MAX for none */
	uint64_t clear_child_tid;  /* CLONE_CHILD_CLEARTID / set_tid_address */
	uint64_t sigmask, pending; /* blocked and thread-directed pending signals */
	uint64_t suspend_mask;     /* rt_sigsuspend: mask to restore after the handler */
	int has_suspend_mask;
	uint64_t ss_sp, ss_size;   /* sigaltstack */
	int ss_flags;
	/* per handler frame: the registers to restore, and the REP execution the signal
	 * left in the middle (rt_sigreturn into it goes on with it) */
	struct { uint64_t frame; uc_context *regs; struct bstream_rep_held rep; } sigctx[SIG_CTX_DEPTH];
	int nsigctx;
	struct bstream_rep_held rep_held; /* a REP execution it goes on with when it runs again */
	/* what a pending signal carries into the handler's siginfo (signal_siginfo) */
	struct sig_info_rec info[65];
	/* rt_sigtimedwait or a blocking signalfd read (TS_SIGWAIT, sigwait set): a signal in
	 * sigwait_set (or one not blocked) makes the call run again. sigtimedwait unblocks the
	 * set while it waits (Linux's real_blocked): sigwait_mask is the mask to restore. */
	int sigwait, sigwait_unblocks, sigwait_timed_out;
	uint64_t sigwait_set, sigwait_mask;
	uint64_t sigwait_deadline;   /* simulated ns, UINT64_MAX: none */
	/* CPU time (its clock, CLOCK_THREAD_CPUTIME_ID): instructions it retired before it
	 * last lost the CPU, and the machine's count when it last got it */
	uint64_t cpu_ns, ran_from;
};

static inline struct thread *cur_thread(struct sim *s) { return &s->threads[s->cur]; }
struct thread *thread_by_tid(struct sim *s, uint32_t tid);
/* A slot for a new thread: an exited thread's (not the running one's), or the
 * next one (*is_new: then nthreads grows); NULL when all are taken. */
struct thread *thread_slot(struct sim *s, int *is_new);
/* Frees a thread's saved register files (before its process's engine closes:
 * Unicorn ties them to the engine). */
void thread_free_contexts(struct thread *t);

/* Stops emulation so the run loop calls sched_attend; the thread goes on at pc. */
void sched_request(struct sim *s, uint64_t pc);
/* Blocks the calling thread until ns (simulated time) or a signal. */
int64_t sched_sleep_until(struct sim *s, uint64_t ns);
/* The calling thread blocks in state; its system call runs again when woken. */
void sched_block_retry(struct sim *s, int state);
/* Wakes t to run its blocked system call again. */
void sched_retry(struct sim *s, struct thread *t);
/* Makes thread t runnable, its blocking call returning ret. */
void sched_wake(struct sim *s, struct thread *t, int64_t ret);

/* sched_io.c. The calling thread waits until one of the n host fds in set is ready or
 * simulated time reaches deadline_ns (UINT64_MAX: no deadline); then its system call
 * runs again, seeing cur_thread(s)->io_deadline armed (and io_timed_out when the
 * deadline passed). set is copied. 0, or -ENOMEM. */
int sched_wait_fds(struct sim *s, const struct pollfd *set, int n, uint64_t deadline_ns);
/* Ends such a wait: frees the set, disarms the deadline. */
void sched_wait_fds_done(struct thread *t);
/* Threads waiting for files that became ready go on (timeout as poll(2)'s); whether any
 * thread waits for a file. */
void sched_poll_io(struct sim *s, int timeout);
int sched_io_waiters(const struct sim *s);

/* System calls of threads (sched.c). */
int64_t sys_clone(struct sim *s, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid,
		  uint64_t tls);
int64_t sys_clone3(struct sim *s, uint64_t args, uint64_t size);
/* The calling thread blocks in its system call (state, until wake_ns, or
 * UINT64_MAX); the scheduler picks another. */
void sched_block_current(struct sim *s, int state, uint64_t wake_ns);

/* futex.c */
#define FUTEX_BITSET_ANY 0xffffffffu
int64_t sys_futex(struct sim *s, const uint64_t *a);
/* Wakes up to n waiters on addr, whatever their bitsets; returns how many. */
int futex_wake_any(struct sim *s, uint64_t addr, int64_t n);
/* exit: ends the calling thread (the process when it is the last). */
void sys_thread_exit(struct sim *s, int status);

#endif
