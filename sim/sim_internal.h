/* Private state of the machine, shared by the sim/ modules that implement it
 * (machine, loader, memory, system calls, CPUID). Not for other layers. */
#ifndef PMUSIM_SIM_SIM_INTERNAL_H
#define PMUSIM_SIM_SIM_INTERNAL_H

#include <poll.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#include "common/rng.h"
#include "sim/machine/blockstream.h"
#include "sim/sim.h"

#define GUEST_PAGE 4096ULL
#define PAGE_DOWN(x) ((x) & ~(GUEST_PAGE - 1))
#define PAGE_UP(x) (((x) + GUEST_PAGE - 1) & ~(GUEST_PAGE - 1))

/* Layout of the guest address space (fixed, so runs are reproducible). */
#define STACK_TOP     0x7ffffffff000ULL
#define STACK_SIZE    (8ULL << 20)
#define MMAP_TOP      0x7ffff7fff000ULL   /* mmap areas grow down from here */
#define PIE_BASE      0x555555554000ULL   /* where ET_DYN programs are placed */
#define AREAS_BASE    0x7e0000000000ULL   /* reserved for the thread-stack unit's work */
#define AREAS_END     0x7f0000000000ULL   /* areas (stacks.c): mmap never gives it out */
#define GUEST_FD_MAX  1024
#define GUEST_PID     1000                 /* pid and main thread id of the guest */

struct vma {
	uint64_t start, end;
	int prot;                /* PROT_* of the guest */
	int unbacked;            /* reserved (PROT_NONE, anonymous), not in the engine's map yet */
};

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

/* What the kernel keeps for a thread while another one runs (sim/sched.c). */
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
	struct sig_info_rec {
		int code;                /* si_code; SIG_INFO_NONE: only timers' instances pend */
		uint64_t addr;           /* faults: si_addr */
		uint32_t pid;            /* SI_USER, SI_TKILL: the sender */
		int32_t timerid, overrun;/* SI_TIMER */
		uint64_t value;          /* SI_TIMER: sigev_value */
	} info[65];
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

#define SIG_INFO_NONE (-0x7fffffff - 1)

/* A timer on a simulated clock (setitimer's, timer_create's; sim/sys_timer.c). */
enum timer_clock {
	TCLK_SIM = 0,        /* simulated time (CLOCK_MONOTONIC, _REALTIME, _BOOTTIME, ITIMER_REAL) */
	TCLK_PROC_CPU,       /* the process's CPU time (ITIMER_VIRTUAL, _PROF, CLOCK_PROCESS_CPUTIME_ID) */
	TCLK_THREAD_CPU,     /* one thread's (CLOCK_THREAD_CPUTIME_ID) */
};
struct ktimer {
	uint64_t deadline;         /* ns of its clock, 0 when disarmed */
	uint64_t interval;
	int clock;                 /* enum timer_clock */
	uint32_t tid;              /* TCLK_THREAD_CPU: the thread */
};
struct ptimers;
struct sigfds;

struct hooked_site {
	struct dc_special sp;
	uc_hook hook;
};

/* One process: an address space (its own Unicorn engine), files, signal
 * actions and the program image. The threads are the machine's (sim->threads,
 * each pointing at its process). */
struct proc {
	uint32_t pid, ppid;
	uint32_t pgid, sid;          /* process group and session (inherited by fork) */
	uint32_t uid[3], gid[3];     /* real, effective, saved (inherited; start as pmusim's) */
	int state;                   /* PROC_LIVE, PROC_ZOMBIE (exited, not waited for), PROC_REAPED */
	int wait_status;             /* wait4 status word once a zombie */
	uint64_t exit_seq;           /* order of the ends, for wait4 */
	size_t nlive;                /* its threads not exited */
	int image;                   /* 0: the program pmusim started; counts execs */
	uc_engine *uc;
	char *path;                  /* program as given to execve (or the command line) */
	char **argv, **envp;         /* owned copies for an exec'd image; NULL for the first */
	char *exe_abs;               /* absolute path, for /proc/self/exe */
	struct dcache *dc;
	struct symtab *syms;
	/* address space */
	struct vma *vmas;
	size_t nvmas, capvmas;
	uint64_t brk_start, brk_cur;
	uint64_t load_bias;
	uint64_t entry, phdr, phnum;  /* entry: where execution starts (ld.so's for a dynamic program) */
	uint64_t prog_entry;         /* the program's own entry (AT_ENTRY) */
	uint64_t interp_bias;        /* load bias of the interpreter (AT_BASE), 0 without one */
	char *interp_abs;            /* absolute path of the interpreter, or NULL */
	/* files: guest fd -> host fd, -1 when closed */
	int fds[GUEST_FD_MAX];
	int vm_of_parent;            /* made by clone(CLONE_VM) without CLONE_THREAD (vfork,
	                              * posix_spawn) and not exec'd since: its memory is a copy,
	                              * written back to the waiting parent when it exits */
	int cwd_fd;                  /* its working directory (host O_PATH fd): pmusim's follows
	                              * the running process, and is its own again after the run */
	/* hooks placed on special instructions, sorted by address */
	struct hooked_site *hooked;
	size_t nhooked, caphooked;
	uc_hook *wx_hooks;           /* write watches on writable+executable areas */
	size_t nwx;
	uint64_t sig_handlers[65];   /* rt_sigaction bookkeeping: handler per signal */
	uint64_t sig_flags[65], sig_restorer[65], sig_mask[65];
	uint64_t proc_pending;       /* process-directed pending signals */
	struct sig_info_rec proc_info[65];
	struct ktimer itimers[3];    /* ITIMER_REAL, _VIRTUAL, _PROF */
	struct ptimers *ptimers;     /* timer_create's (sys_timer.c), NULL before the first */
	uint64_t cpu_ns;             /* CPU time of its threads before their last switch */
	struct sim_mapping exec_maps[SIM_MAX_MAPPINGS];
	size_t nexec_maps;
	char *map_paths[SIM_MAX_MAPPINGS]; /* paths of the files mapped at run time */
	size_t nmap_paths;
};

enum { PROC_LIVE = 0, PROC_ZOMBIE, PROC_REAPED };
#define SIM_MAX_PROCS 256

struct sim {
	struct proc *p;              /* the running process */
	struct proc *procs[SIM_MAX_PROCS]; /* every process, in creation order */
	size_t nprocs;
	uint32_t next_pid;
	uint32_t run_ids;            /* ids of code runs, shared by the processes' decode caches */
	struct dcache *old_dcs[4];   /* the started program's first-image cache after its execve (the truth holds its runs) */
	size_t nold_dcs;
	struct symtab *main_syms;    /* symbols of the program pmusim started (for the truth) */
	uint64_t main_load_bias;
	struct sim_options opt;
	struct bstream *bs;
	struct sim_stacks *stacks;   /* call stacks (stacks.c), NULL when nobody asked */
	struct rng rng;
	/* memory fault seen by the invalid-access hook */
	int mem_fault_type;
	uint64_t mem_fault_addr;
	uint64_t restart_until;
	int limit_armed;
	volatile int *interrupt_flag;
	uint64_t intr_rip;           /* RIP when an interrupt ended the run */
	int fault_signo;             /* an exception hook stopped emulation with this signal */
	int sigill_unreported;       /* that SIGILL is pmusim's: an instruction CPUID does not report */
	uint64_t realtime_base_ns;   /* CLOCK_REALTIME at simulated time 0 (sim_options.clock_start) */
	int home_cwd_fd;             /* pmusim's own working directory (O_PATH), restored after the run */
	/* run state */
	int stop_reason;         /* enum sim_end + 1 when set by a hook, 0 otherwise */
	int restart;             /* emulation stopped to re-translate; resume at restart_pc */
	uint64_t restart_pc;
	struct sim_result *res;
	uint64_t unsupported_seen[8]; /* bitmap of syscall numbers already reported */
	unsigned notes_seen;
	uint64_t time_offset_ns;     /* simulated sleeps */
	uint64_t syscall_pc;         /* address of the syscall being handled */
	/* threads (sim/sched.c) */
	struct thread *threads;      /* in creation order */
	size_t nthreads, cur;        /* cur: the running thread */
	size_t nlive;                /* threads not exited */
	uint32_t next_tid;
	uint64_t wait_seq;
	uint64_t quantum;            /* instructions a thread runs before another gets the CPU */
	uint64_t slice_end;          /* instructions (or clock cycles) at which the running thread's slice ends */
	uint64_t (*clock)(void *ctx);/* cycles, for a quantum in cycles */
	void *clock_ctx;
	int cycle_slices;            /* a cycle quantum is running out and another thread waits for it */
	int block_checks;            /* the block hook has checks to make on every TB (machine_refresh_checks) */
	uint64_t block_limit;        /* the block hook's fast path runs while the count is below it:
	                              * attention_at, a poll of the interrupt flag, or 0 for checks */
	uint64_t attention_at;       /* instruction count at which hook_block calls in the scheduler */
	int attention;               /* emulation stopped for the scheduler; resume_pc says where */
	uint64_t resume_pc;
	int sigreturn;               /* the stop is an rt_sigreturn */
	int exec_pending;            /* the stop follows a successful execve: exec_req */
	struct { char *path; char **argv, **envp; } exec_req;
	uint64_t exit_seq;
	const void *cur_args;        /* struct sysargs of the system call being handled */
	uint64_t max_insns_left_at;  /* emulation 'until' address when limiting */
	void (*map_listener)(void *ctx, const struct sim_mapping *m);
	void *map_listener_ctx;
	void (*code_listener)(void *ctx, uint32_t pid, uint64_t addr, const uint8_t *bytes, size_t len);
	void *code_listener_ctx;
	struct sim_task_listener task;
	struct sigfds *sigfds;       /* signalfd descriptors (signalfd.c), NULL before the first */
	struct rep_ref *rep_ref;      /* the REP reference (rep_ref.c), NULL when nobody asked */
	/* the software REP tracer (rep_patch.c) */
	uint64_t *patch_sites;       /* REP instructions of the program, by address */
	uint8_t *patch_ecx;          /* per site: 1 when ECX counts (address-size prefix) */
	size_t npatch, patch_cur;    /* patch_cur: the one patched */
	size_t patch_want;           /* the one to patch at the pending restart */
	uint64_t patch_lo, patch_hi; /* the program's code */
	uint64_t patch_skip;         /* a trapped REP running now */
	uint8_t patch_orig;          /* its original first byte */
	int patch_armed, patch_pending, patch_hit;
	void (*patch_fn)(void *ctx, uint64_t site, uint64_t count, uint32_t tid);
	void *patch_ctx;
};

/* rep_ref.c: the REP reference (sim_rep_reference), told what it does not hook. */
struct rep_ref;
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

/* rep_patch.c */
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

/* clone flags (include/uapi/linux/sched.h) */
#define CLONE_VM_F             0x00000100ULL
#define CLONE_SIGHAND_F        0x00000800ULL
#define CLONE_VFORK_F          0x00004000ULL
#define CLONE_THREAD_F         0x00010000ULL
#define CLONE_SETTLS_F         0x00080000ULL
#define CLONE_PARENT_SETTID_F  0x00100000ULL
#define CLONE_CHILD_CLEARTID_F 0x00200000ULL
#define CLONE_CHILD_SETTID_F   0x01000000ULL

/* process.c */
struct proc *proc_alloc(struct sim *s);
/* Loads p->path as p's image into a new engine (p becomes s->p); 0 or pmusim_err. */
int proc_image_open(struct sim *s, struct proc *p, char *msg, size_t msglen);
void proc_image_close(struct sim *s, struct proc *p);
void proc_free(struct sim *s, struct proc *p);
/* Makes p the running process (engine, decode cache, image sinks). */
void proc_enter(struct sim *s, struct proc *p);
/* The running process ends with a wait4 status word (the run, for the first). */
void proc_end(struct sim *s, int wait_status);
int64_t sys_fork(struct sim *s, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid);
int64_t sys_execve(struct sim *s, uint64_t path, uint64_t argv, uint64_t envp);
/* Frees a NULL-terminated array of strings and the strings. */
void free_strings(char **v);
/* A vfork parent waiting for child goes on (the child executed a program or ended). */
void release_vfork_parent(struct sim *s, uint32_t child);
/* exec.c. After the stop requested by a successful execve: the new image; returns its entry. */
uint64_t proc_exec(struct sim *s, uint64_t pc);

/* stacks.c: the thread-stack unit's OS side and the true stacks, told about threads */
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

/* machine.c */
size_t machine_read_code(void *ctx, uint64_t addr, void *buf, size_t len);
/* Recomputes sim.block_checks and sim.block_limit after a change to what they
 * sum up (attention_at too): REP patching,
 * cycle slices, --max-insns, the stack tracker. */
void machine_refresh_checks(struct sim *s);
int machine_add_hooks(struct sim *s, struct proc *p);

/* loader.c */
int loader_load(struct sim *s, char *msg, size_t msglen);
int loader_setup_stack(struct sim *s, uint64_t *sp);

/* memory.c: guest address space with Linux semantics over uc_mem_* */
int mem_map(struct sim *s, uint64_t addr, uint64_t len, int prot);
int mem_unmap(struct sim *s, uint64_t addr, uint64_t len);
int mem_protect(struct sim *s, uint64_t addr, uint64_t len, int prot);
/* Lowest-address-first search is not Linux's; we search top-down below MMAP_TOP. */
uint64_t mem_find_free(struct sim *s, uint64_t len);
int mem_is_mapped(const struct sim *s, uint64_t addr, uint64_t len);
int mem_read(struct sim *s, uint64_t addr, void *buf, size_t len);   /* 0 or -EFAULT */
int mem_write(struct sim *s, uint64_t addr, const void *buf, size_t len);
int mem_read_str(struct sim *s, uint64_t addr, char *buf, size_t len); /* 0, -EFAULT, -ENAMETOOLONG */
const struct vma *mem_find(const struct sim *s, uint64_t addr);
/* Reserves [addr, addr + len) as PROT_NONE anonymous memory without backing it: the
 * engine maps a part only when mem_protect makes it accessible (a runtime's terabyte
 * reservation costs nothing). 0 or -errno. */
int mem_reserve(struct sim *s, uint64_t addr, uint64_t len);
/* Whether any area overlaps [addr, addr + len) (one pass over the areas, whatever len). */
int mem_overlaps(const struct sim *s, uint64_t addr, uint64_t len);
/* The highest free range of len bytes ending at or below limit (mmap's MAP_32BIT), or 0. */
uint64_t mem_find_free_below(struct sim *s, uint64_t len, uint64_t limit);

/* syscall.c */
void syscall_dispatch(struct sim *s);
void syscall_init_fds(struct sim *s);
void syscall_close_fds(struct sim *s);

/* sched.c: threads on one simulated CPU. */
int sched_init(struct sim *s);
void sched_free(struct sim *s);
static inline struct thread *cur_thread(struct sim *s) { return &s->threads[s->cur]; }
/* Frees a thread's saved register files (before its process's engine closes:
 * Unicorn ties them to the engine). */
void thread_free_contexts(struct thread *t);
/* Stops emulation so the run loop calls sched_attend; the thread goes on at pc. */
void sched_request(struct sim *s, uint64_t pc);
/* Called by the run loop after a requested stop: delivers signals, switches
 * threads, advances time over idle periods. Returns the PC to resume at (the
 * machine may have ended: s->stop_reason). */
uint64_t sched_attend(struct sim *s);
/* Recomputes attention_at from the slice end and the armed timers. */
void sched_update_attention(struct sim *s);
/* hook_block found bstream_insns() >= attention_at at a block boundary (addr). */
void sched_tick(struct sim *s, uint64_t addr);
int64_t sys_clone(struct sim *s, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid,
		  uint64_t tls);
int64_t sys_clone3(struct sim *s, uint64_t args, uint64_t size);
int64_t sys_futex(struct sim *s, const uint64_t *a);
/* exit: ends the calling thread (the process when it is the last). */
void sys_thread_exit(struct sim *s, int status);
/* Blocks the calling thread until ns (simulated time) or a signal. */
int64_t sched_sleep_until(struct sim *s, uint64_t ns);
/* The calling thread blocks in state; its system call runs again when woken. */
void sched_block_retry(struct sim *s, int state);
/* The calling thread waits until one of the n host fds in set is ready or simulated time
 * reaches deadline_ns (UINT64_MAX: no deadline); then its system call runs again, seeing
 * cur_thread(s)->io_deadline armed (and io_timed_out when the deadline passed). set is
 * copied. 0, or -ENOMEM. */
int sched_wait_fds(struct sim *s, const struct pollfd *set, int n, uint64_t deadline_ns);
/* Ends such a wait: frees the set, disarms the deadline. */
void sched_wait_fds_done(struct thread *t);
/* Threads waiting for files that became ready go on (timeout as poll(2)'s); whether any
 * thread waits for a file (sim/sched_io.c). */
void sched_poll_io(struct sim *s, int timeout);
int sched_io_waiters(const struct sim *s);
/* Wakes t to run its blocked system call again. */
void sched_retry(struct sim *s, struct thread *t);
/* Makes thread t runnable, its blocking call returning ret. */
void sched_wake(struct sim *s, struct thread *t, int64_t ret);
struct thread *thread_by_tid(struct sim *s, uint32_t tid);
/* A slot for a new thread: an exited thread's (not the running one's), or the
 * next one (*is_new: then nthreads grows); NULL when all are taken. */
struct thread *thread_slot(struct sim *s, int *is_new);

/* signal.c: POSIX signals with Linux x86-64 frames. */
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
/* The running thread faulted at pc with sig: 1 and *pc_out when the program
 * handles it (a frame is built), 0 when it ends the program. */
int signal_fault(struct sim *s, int sig, int code, uint64_t pc, uint64_t addr, uint64_t *pc_out);
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

/* sys_timer.c: clocks, interval and POSIX timers on the simulated clocks. */
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

/* signalfd.c: signalfd descriptors. */
/* After the readiness of a signalfd may have changed, before the host's poll(2) looks at
 * it: each one's host pipe holds a byte exactly when its owner has a signal of its mask
 * pending. */
void signalfd_refresh(struct sim *s);
void signalfd_free(struct sim *s);

/* cpuid.c */
void cpuid_query(uint32_t leaf, uint32_t subleaf, uint32_t out[4]);

/* machine.c: guest code at [addr, addr+len) changed or went away: forget its
 * decoded runs, per-instruction hooks and Unicorn translations. */
void code_invalidate(struct sim *s, uint64_t addr, uint64_t len);
/* machine.c: re-arms the write watch on every writable+executable area
 * (self-modifying code); call after the address space changed. */
void code_watch_refresh(struct sim *s);

/* mappings.c: the guest mapped host file hfd at [addr, addr+len) from offset off
 * with PROT_EXEC: record the mapping, add the file's functions to the symbols,
 * tell the listener. */
void sim_file_exec_mapping(struct sim *s, uint64_t addr, uint64_t len, uint64_t off, int prot, int hfd);
/* mappings.c: anonymous memory at [addr, addr+len) became executable (mmap with
 * PROT_EXEC, or mprotect adding it): record it as SIM_ANON_PATH, tell the listener. */
void sim_anon_exec_mapping(struct sim *s, uint64_t addr, uint64_t len, int prot);
/* mappings.c: 1 when the newest executable mapping of the current process that
 * covers addr is a file's (code that the profiler can read from that file). */
int sim_addr_in_file_mapping(const struct sim *s, uint64_t addr);
/* mappings.c: tells the code listener the bytes of run bi, just decoded, when it
 * lies in anonymous executable memory. */
void sim_announce_anon_code(struct sim *s, const struct block_info *bi);

/* machine.c helpers for the syscall layer */
uint64_t sim_now_ns(struct sim *s);          /* simulated time since boot */
void sim_stop(struct sim *s, enum sim_end end, int code);
void sim_warn_unsupported(struct sim *s, long nr);
enum sim_note { NOTE_SHARED_MMAP, NOTE_IOCTL, NOTE_PROCESS, NOTE_STOP_SIGNAL, NOTE_MEM_AREAS, NOTE_CWD, NOTE_COUNT };
/* Prints "pmusim: note: msg" once per run for each note id. */
void sim_note_once(struct sim *s, enum sim_note id, const char *msg);

#endif
