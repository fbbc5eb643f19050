/* The machine: x86-64 Linux processes emulated on Unicorn, one engine per
 * address space, their threads on one simulated CPU. The only module
 * family that includes unicorn.h. It loads a static ELF, runs it with Linux
 * system calls, and streams retired blocks (pmu_model/block.h) to sinks.
 *
 * Determinism: guest time is simulated (instructions retired, 1 ns each, until
 * the timing model of #3 supplies cycles), CPUID is a fixed model (sim/machine/cpuid.c),
 * RDTSC/RDRAND/getrandom/AT_RANDOM come from the seed.
 *
 * Inside, two halves: sim/machine/ is the engine and the block path (machine.c's block
 * hook, the block stream, memory, the run loop), sim/linux/ the Linux personality
 * (processes, threads, signals, system calls, the loader). sim/sim_state.h holds the
 * state they share; stacks.c, rep_ref.c and the truth sit beside them. */
#ifndef PMUSIM_SIM_SIM_H
#define PMUSIM_SIM_SIM_H

#include <stdint.h>
#include <stdio.h>

#include "common/symtab.h"
#include "pmu_model/block.h"
#include "common/decode.h"

struct sim_options {
	const char *path;        /* program to run (host path) */
	char *const *argv;       /* guest argv (argv[0] as given) */
	char *const *envp;       /* guest environment */
	uint64_t seed;
	uint64_t max_insns;      /* 0: no limit */
	int strict;              /* unsupported system calls are fatal */
	const char *interp;      /* program interpreter to use instead of PT_INTERP's, or NULL */
	uint64_t quantum;        /* instructions a thread runs before the next one gets the CPU (0: 1,000,000) */
	int quantum_cycles;      /* the quantum counts cycles of the clock (sim_set_clock) instead */
	FILE *log;               /* pmusim's own messages (stderr) */
	uint64_t clock_start;    /* CLOCK_REALTIME when the program starts, in seconds since the
	                          * epoch, when clock_start_given (else SIM_CLOCK_START_DEFAULT) */
	int clock_start_given;
	int dbr;                 /* replacement code may be installed (sim_dbr_install): guest
	                          * memory is reserved for it near the program's code, and the
	                          * image sinks (the truth) see the original program's blocks */
	int empty_block_hook;    /* make bench's baseline: the block hook does nothing (no blocks
	                          * retired, no instruction count, no time slices: threads change
	                          * only when one blocks); only the engine and the system calls run */
};

/* 2050-01-01T00:00:00Z: a fixed start, the same on every run and host, and later than
 * any file a machine holds today, so that programs comparing file times with "now"
 * (make, find -newer, tar) see no file from the future. */
#define SIM_CLOCK_START_DEFAULT 2524608000ULL

enum sim_end {
	SIM_END_EXIT = 0,        /* guest called exit/exit_group: status */
	SIM_END_SIGNAL,          /* guest died of a signal: signo, fault_* */
	SIM_END_LIMIT,           /* --max-insns reached */
	SIM_END_ERROR,           /* pmusim could not go on: err, message */
	SIM_END_DEADLOCK,        /* every thread waits and nothing can wake one (Linux would hang) */
};

struct sim_result {
	enum sim_end end;
	int status;              /* exit status, for SIM_END_EXIT */
	int signo;               /* for SIM_END_SIGNAL */
	int err;                 /* pmusim_err, for SIM_END_ERROR */
	uint64_t fault_pc;       /* instruction that faulted */
	int fault;               /* SIM_END_SIGNAL: 1 when an instruction faulted (fault_pc,
	                          * which is 0 for a call through a NULL pointer), 0 for a
	                          * signal sent to the program (kill, tgkill, raise) */
	uint64_t fault_addr;     /* data address, for memory faults */
	uint64_t insns;          /* instructions retired */
	char message[1024];      /* one line, no newline */
};

struct sim;

/* Loads the program and lays out the process. On failure returns a negative
 * pmusim_err and, when msg is given, a one-line explanation. */
int sim_new(const struct sim_options *opt, struct sim **out, char *msg, size_t msglen);
void sim_free(struct sim *s);

/* Adds a consumer of the retired-block stream of every process (before sim_run). */
int sim_add_sink(struct sim *s, struct block_sink sink);
/* Adds a consumer of the blocks of the program pmusim started only: not of its
 * child processes, and not after it executes another program (the truth). */
int sim_add_image_sink(struct sim *s, struct block_sink sink);

/* Runs the guest to its end. Always fills res; returns 0, or a negative
 * pmusim_err when res->end == SIM_END_ERROR. */
int sim_run(struct sim *s, struct sim_result *res);

/* The software REP tracer (seed: opcode patching): patches the program's REP
 * string instructions one at a time, in address order, with a trap; fn gets
 * the site, the count register and the thread each time the patched one is
 * reached. Returns the number of REP sites found (before sim_run), or a
 * negative pmusim_err. */
int sim_rep_patch(struct sim *s, void (*fn)(void *ctx, uint64_t site, uint64_t count, uint32_t tid),
		  void *ctx);

/* The REP reference for the truth: every execution of a REP string instruction by
 * the program pmusim started (not its children, not after an execve) is added to t
 * (truth_rep_add), from the count register as hooks of its own read it — at the
 * REP when a thread enters it, at the instruction after it, when a signal handler
 * is entered or returns — not from the retired blocks the REP unit reads. What one
 * execution is: pmu_model/block.h. Before sim_run; 0 or a negative pmusim_err. */
struct truth;
int sim_rep_reference(struct sim *s, struct truth *t);

/* Op sampling's memory facts (sim/op_watch.h): the machine watches the
 * instructions on which pmu's op sampler can tag next (pmu_op_next_min,
 * pmu_op_may_tag; pmu must be fed by this machine's blocks) and notes what
 * each accessed. Before sim_run; 0 or PMUSIM_ERR_NOMEM. */
struct pmu;
struct pmu_op_mem;
int sim_watch_ops(struct sim *s, const struct pmu *pmu);
/* What instruction number insn (1-based among all retired) at ip accessed,
 * as noted; all 0 when it was not watched (pmu_sample_sink.op_memory). */
void sim_op_memory(struct sim *s, uint64_t insn, uint64_t ip, struct pmu_op_mem *m);

/* The cycle count of a timing model fed by this machine's blocks, for a
 * quantum in cycles (options.quantum_cycles). */
void sim_set_clock(struct sim *s, uint64_t (*cycles)(void *ctx), void *ctx);

/* fn(ctx) is called about every `every` instructions retired (0: never), at a block
 * boundary and outside the engine: it may install and unpatch replacement code
 * (sim_dbr_*), which then takes effect at the next block. */
void sim_set_window(struct sim *s, uint64_t every, void (*fn)(void *ctx), void *ctx);

/* Emulation stops once *flag becomes non-zero: a host signal handler stores the
 * signal's number there, and the run ends as if by that signal (SIM_END_SIGNAL).
 * Checked at every block and whenever a host wait of the guest's returns. */
void sim_set_interrupt_flag(struct sim *s, volatile int *flag);

/* fn(ctx, instructions retired so far) is called about every 16M instructions (at a
 * block boundary; never more often): for a progress display, which must not change
 * what the run does. NULL turns it off. */
void sim_set_poll(struct sim *s, void (*fn)(void *ctx, uint64_t insns), void *ctx);
/* fn(ctx, host_fd) is called before the program writes to one of pmusim's descriptors
 * (write, writev), e.g. to take a progress line off a terminal first. NULL: off. */
void sim_set_write_notice(struct sim *s, void (*fn)(void *ctx, int host_fd), void *ctx);

/* The decode cache (block_info for every id seen) and the program's symbols. */
struct dcache *sim_dcache(struct sim *s);
const struct symtab *sim_symtab(const struct sim *s);
/* Load bias of the program (0 for ET_EXEC). */
uint64_t sim_load_bias(const struct sim *s);

/* An executable mapping of the guest (for perf.data MMAP2 records): a file, or
 * anonymous memory made executable (code written at run time, e.g. by a JIT
 * compiler), whose path is SIM_ANON_PATH and pgoff its address, as Linux reports
 * anonymous memory to perf (vm_pgoff of a private anonymous area is its page
 * number; the kernel's perf_event_mmap names it "//anon"). */
struct sim_mapping {
	uint64_t addr, len;  /* page-aligned guest range */
	uint64_t pgoff;      /* file offset of addr (anonymous memory: addr) */
	int prot;            /* PROT_* */
	const char *path;    /* absolute host path of the file, or SIM_ANON_PATH */
	uint32_t pid;        /* process that mapped it */
};
#define SIM_MAX_MAPPINGS 256
#define SIM_ANON_PATH "//anon"

/* 1 when m is anonymous memory (m->path is SIM_ANON_PATH). */
int sim_mapping_is_anon(const struct sim_mapping *m);

/* The executable mappings of the program pmusim started, so far, in order: the
 * PF_X segments of the program and its interpreter, then files the program
 * mapped with PROT_EXEC (shared libraries). Their functions are in sim_symtab.
 * Mappings of other processes and images reach the listener only. */
size_t sim_exec_mappings(const struct sim *s, const struct sim_mapping **out);
/* fn is called for every executable file mapping made while the program runs
 * (before any of its code executes), e.g. to write a perf.data MMAP2 record. */
void sim_set_mapping_listener(struct sim *s, void (*fn)(void *ctx, const struct sim_mapping *m),
			      void *ctx);
/* fn is called with the bytes of every code run first decoded in anonymous
 * executable memory, before it executes, and again after that code changed:
 * the profiler has no file to read such code from (perf.data TEXT_POKE
 * records carry it). addr is the run's start, len its length in bytes. */
void sim_set_code_listener(struct sim *s,
			   void (*fn)(void *ctx, uint32_t pid, uint64_t addr, const uint8_t *bytes, size_t len),
			   void *ctx);
/* Told about tasks as they come and go, before the new one runs (perf.data
 * FORK, COMM and EXIT records, as `perf record` writes with inheritance). */
struct sim_task_listener {
	/* a thread (pid == ppid) or a process (fork) was created */
	void (*fork)(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid);
	/* process pid replaced its program (execve); comm: the new name */
	void (*exec)(void *ctx, uint32_t pid, uint32_t tid, const char *comm);
	/* a process ended (its last thread tid) */
	void (*exit)(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid);
	void *ctx;
};
void sim_set_task_listener(struct sim *s, const struct sim_task_listener *l);

/* --- Call stacks (sim/stacks.c) ---
 * The OS side of the thread-stack unit (pmu_model/tstack.h): sim_tstack_new
 * creates the unit fed by every process's blocks and keeps its work areas in
 * guest memory reserved for them (from 0x7e0000000000 up, mapped without
 * access rights: the program cannot see or touch them, and mmap never gives
 * them out). Every thread gets an area when it is created (a forked child
 * starts with a copy of its parent's entries, as fork copies memory), an
 * execve empties it, and it is freed when the thread ends. The unit belongs
 * to the machine. 0 or a negative pmusim_err. */
struct tstack_config;
struct tstack_unit;
int sim_tstack_new(struct sim *s, const struct tstack_config *cfg, struct tstack_unit **out);
/* A marker of the unit (tstack_add_marker) at addr, whatever instruction is
 * there: the machine hooks it in every process, gives a marked branch's block
 * its RSP, and tells the unit when any other marked instruction retired, with
 * RSP after it (tstack_mark_retired). After sim_tstack_new; 0 or a negative
 * pmusim_err. kind: an enum tstack_marker. */
int sim_tstack_mark(struct sim *s, uint64_t addr, int kind);
/* The true call stacks, the machine's self-check (validate --stacks; the
 * reference is perf's DWARF unwinder): each call's return-address slot is
 * remembered, and a frame is in the stack while its slot is at or above the
 * thread's stack pointer and still holds the return address. A signal
 * delivery adds the frame's restorer slot and its saved RIP (whatever the
 * handler leaves there); rt_sigreturn drops what was made since that frame.
 * sim_true_stack gives the return addresses of thread tid's frames,
 * innermost first (at most max). Both: 0 or a negative pmusim_err. */
int sim_track_true_stacks(struct sim *s);
/* From now on the true stacks hold only the calls made after this moment
 * (tracking started with calls in progress: the unit never saw the older ones). */
void sim_true_stacks_start(struct sim *s);
int sim_true_stack(struct sim *s, uint32_t tid, uint64_t *rets, size_t max, size_t *n);
/* The threads alive now, in creation order; pc: where a thread that is not
 * running goes on. */
struct sim_thread_info {
	uint32_t tid, pid;
	int running;
	uint64_t pc;
};
size_t sim_threads(struct sim *s, struct sim_thread_info *out, size_t max);
/* Registers of thread tid in perf_regs.h's x86 order (AX BX CX DX SI DI BP SP
 * IP FLAGS CS SS DS ES FS GS R8..R15), for a stack dump perf unwinds. */
int sim_thread_user_regs(struct sim *s, uint32_t tid, uint64_t regs[24]);
/* Reads guest memory of thread tid's process (a tracer copying a work area). */
int sim_read_memory(struct sim *s, uint32_t tid, uint64_t addr, void *buf, size_t len);

/* --- A dynamic binary rewriter's replacement code (sim/dbr.c) ---
 * With sim_options.dbr, sim_new reserves guest memory for replacement code
 * within reach of a 5-byte jump from the program's own code (below its lowest
 * segment; mapped execute-only and in no area the program sees: its loads and
 * stores there fault, mmap never gives it out). Code is placed there in the order
 * installed: sim_dbr_next is where the next image must start (its bytes made for
 * that address), sim_dbr_room how many bytes are left. sim_dbr_install copies
 * img's bytes there and writes its patch jumps over the program's code (in the
 * program pmusim started; a forked child runs the original code), after checking
 * that the bytes there are the image's orig; the map (sim/dbr_map.h) learns the
 * image, so that the image sinks see the original program's blocks.
 * sim_dbr_unpatch puts the original bytes back (the code stays: a thread may be
 * inside it, or a signal frame return to it). Both: 0, PMUSIM_ERR_ARG (not
 * enabled, not at sim_dbr_next, too big, a patch over bytes that are not its
 * orig), PMUSIM_ERR_NOMEM. They may be called before sim_run or from the window
 * callback (sim_set_window: outside the engine; the patch takes effect at the next
 * block), never from a block sink (the engine would be running the code). */
struct dbr_image;
uint64_t sim_dbr_next(const struct sim *s);
uint64_t sim_dbr_room(const struct sim *s);
int sim_dbr_install(struct sim *s, const struct dbr_image *img);
int sim_dbr_unpatch(struct sim *s, const struct dbr_image *img);
/* 1 while the code running is the rewritten program's (the process pmusim started,
 * before any execve): the sim_dbr_* queries below map its addresses only, and
 * answer as for unrewritten code otherwise. */
int sim_dbr_program_running(const struct sim *s);
/* 1 while replacement code can still be installed: the program has not executed
 * another program. */
int sim_dbr_usable(const struct sim *s);
/* The program's instruction that address ip of a rewritten run stands for: ip
 * itself outside replacement code; inside, the original instruction its map names
 * (*inverted 1 for a jcc whose condition was inverted), or 0 for an instruction
 * added by the rewriter. */
uint64_t sim_dbr_original(const struct sim *s, uint64_t ip, int *inverted);
/* The program's instruction a sample at ip of a rewritten run is charged to: ip
 * outside replacement code; inside, the original its map names (for an added
 * jump, the original instruction it follows: the end of its block). */
uint64_t sim_dbr_sample_ip(const struct sim *s, uint64_t ip);
/* Where a branch of a rewritten run that went to ip went in the program: ip
 * outside replacement code; inside, the first original instruction reached from
 * it through added jumps (0 when a compare chain's is not known statically). */
uint64_t sim_dbr_resolve(const struct sim *s, uint64_t ip);
/* Where a thread of a rewritten run that stands at ip stands in the program: the
 * first original instruction reached from ip (the stack there is the program's:
 * replacement code pushes the original return addresses), or inside an indirect
 * jump's compare chain, the jump. */
uint64_t sim_dbr_where(const struct sim *s, uint64_t ip);
/* RSP at ip minus the program's RSP there: below 0 inside an indirect jump's
 * compare chain, 0 everywhere else (and in a run not rewritten). */
int64_t sim_dbr_sp_off(const struct sim *s, uint64_t ip);
/* A taken branch the rewritten run recorded (an LBR entry from -> to) as the
 * program's (sim/dbr_map.h dbr_map_branch): 1 with the original's from, to and
 * kind (enum br_kind), 0 when it is no taken transfer of the program's. */
int sim_dbr_branch(const struct sim *s, uint64_t from, uint64_t to, uint64_t *ofrom, uint64_t *oto, int *kind);
/* Where the program goes after the replacement instruction at ip (the first
 * original instruction reached from the next one; 0 when unknown). */
uint64_t sim_dbr_after(const struct sim *s, uint64_t ip);
/* The program's instruction at ip as its original bytes have it: *kind its enum
 * br_kind (0, BK_NONE: no branch) and its static target (0: none or indirect). */
uint64_t sim_dbr_static_target(const struct sim *s, uint64_t ip, int *kind);
struct dbr_counts;
/* What the rewritten run retired (sim/dbr_map.h struct dbr_counts: instructions in
 * replacement code, of those added jumps, patch jumps, unknown); all 0 without
 * sim_options.dbr. */
void sim_dbr_counts(const struct sim *s, struct dbr_counts *c);

/* Absolute path of the program, its process id and main thread id. */
const char *sim_exe_path(const struct sim *s);
uint32_t sim_pid(const struct sim *s);

#endif
