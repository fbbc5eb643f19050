/* The state of one simulation, shared by the machine (sim/machine/) and the Linux
 * personality (sim/linux/): struct sim, and a struct proc per process. They are shared
 * because both halves work on the running process: the machine's hooks reach its engine
 * and decode cache through s->p, the personality switches s->p between processes. The
 * records a process holds by value (signal information, interval timers) are defined
 * here for that reason; the rest of each half's records are behind its own headers
 * (threads: sim/linux/sched.h; memory areas: sim/machine/memory.h). Not for other
 * layers. */
#ifndef PMUSIM_SIM_SIM_STATE_H
#define PMUSIM_SIM_SIM_STATE_H

#include <stddef.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#include "common/rng.h"
#include "sim/sim.h"

#define GUEST_FD_MAX  1024
#define GUEST_PID     1000                 /* pid and main thread id of the guest */

/* What a pending signal carries into the handler's siginfo (signal_siginfo). */
struct sig_info_rec {
	int code;                /* si_code; SIG_INFO_NONE: only timers' instances pend */
	uint64_t addr;           /* faults: si_addr */
	uint32_t pid;            /* SI_USER, SI_TKILL: the sender */
	int32_t timerid, overrun;/* SI_TIMER */
	uint64_t value;          /* SI_TIMER: sigev_value */
};

/* A timer on a simulated clock (setitimer's, timer_create's; sim/linux/sys_timer.c). */
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

struct bstream;
struct hooked_site;
struct ptimers;
struct rep_ref;
struct sigfds;
struct sim_dbr;
struct sim_stacks;
struct thread;
struct vma;

/* One process: an address space (its own Unicorn engine), files, signal
 * actions and the program image. The threads are the machine's (sim->threads,
 * each pointing at its process). */
/* The start of a process's image as the kernel keeps it for /proc/<pid>/ (auxv,
 * cmdline, environ, stat's start_stack and arg/env bounds), copied by fork. */
struct proc_self_info {
	uint64_t auxv[24][2];
	size_t nauxv;
	uint64_t start_stack, arg_start, arg_end, env_start, env_end;
	char *cmdline, *environ;     /* NUL-separated strings (owned) */
	size_t cmdline_len, environ_len;
};

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
	uint64_t hole_bytes;          /* bytes Unicorn copied to punch holes into areas (memory.c) */
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
	int dbr_arena;               /* the replacement code's memory is mapped in its engine (sim/dbr.c) */
	int cwd_fd;                  /* its working directory (host O_PATH fd); pmusim's own
	                              * never changes */
	unsigned umask;              /* its file mode creation mask; pmusim's own never changes */
	struct proc_self_info self_info; /* what its /proc/self shows of its start (proc_self.c) */
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
	struct ptimers *ptimers;     /* timer_create's (linux/sys_timer.c), NULL before the first */
	uint64_t cpu_ns;             /* CPU time of its threads before their last switch */
	struct sim_mapping exec_maps[SIM_MAX_MAPPINGS];
	size_t nexec_maps;
	char *map_paths[SIM_MAX_MAPPINGS]; /* paths of the files mapped at run time */
	size_t nmap_paths;
};

enum { PROC_LIVE = 0, PROC_ZOMBIE, PROC_REAPED };
#define SIM_MAX_PROCS 256

/* One simulation: its processes and the running one, the block stream, the run state the
 * hooks and the run loop share, the threads (sim/linux/sched.c), the REP tracers. */
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
	void (*poll_fn)(void *ctx, uint64_t insns); /* sim_set_poll */
	void *poll_ctx;
	uint64_t poll_at;            /* instruction count of its next call */
	void (*write_notice)(void *ctx, int host_fd); /* sim_set_write_notice */
	void *write_notice_ctx;
	uint64_t intr_rip;           /* RIP when an interrupt ended the run */
	int fault_signo;             /* an exception hook stopped emulation with this signal */
	int sigill_unreported;       /* that SIGILL is pmusim's: an instruction CPUID does not report */
	uint64_t realtime_base_ns;   /* CLOCK_REALTIME at simulated time 0 (sim_options.clock_start) */
	struct proc_vdirs *proc_vdirs; /* listings of generated /proc directories (proc_self.c) */
	/* run state */
	int stop_reason;         /* enum sim_end + 1 when set by a hook, 0 otherwise */
	int restart;             /* emulation stopped to re-translate; resume at restart_pc */
	uint64_t restart_pc;
	struct sim_result *res;
	uint64_t unsupported_seen[8]; /* bitmap of syscall numbers already reported */
	unsigned unsupported_odd;     /* numbers past the bitmap (>= 512, negative) reported */
	unsigned notes_seen;
	uint64_t time_offset_ns;     /* simulated sleeps */
	uint64_t syscall_pc;         /* address of the syscall being handled */
	/* threads (sim/linux/sched.c) */
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
	struct { char *path, *abs; char **argv, **envp; } exec_req; /* abs: the file's real path */
	uint64_t exit_seq;
	const void *cur_args;        /* struct sysargs of the system call being handled */
	uint64_t max_insns_left_at;  /* emulation 'until' address when limiting */
	void (*map_listener)(void *ctx, const struct sim_mapping *m);
	void *map_listener_ctx;
	void (*code_listener)(void *ctx, uint32_t pid, uint64_t addr, const uint8_t *bytes, size_t len);
	void *code_listener_ctx;
	struct sim_task_listener task;
	struct sigfds *sigfds;       /* signalfd descriptors (linux/signalfd.c), NULL before the first */
	struct rep_ref *rep_ref;      /* the REP reference (rep_ref.c), NULL when nobody asked */
	struct op_watch *opw;        /* op sampling's watch (op_watch.c), NULL when nobody asked */
	struct sim_dbr *dbr;         /* replacement code (dbr.c), NULL unless sim_options.dbr */
	void (*win_fn)(void *ctx);   /* sim_set_window */
	void *win_ctx;
	uint64_t win_every, win_at;  /* its period and the instruction count of its next call */
	int win_due;                 /* the emulation stopped for it */
	/* the software REP tracer (machine/rep_patch.c) */
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

#endif
