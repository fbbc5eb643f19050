/* Private state of the machine, shared by the sim/ modules that implement it
 * (machine, loader, memory, system calls, CPUID). Not for other layers. */
#ifndef PMUSIM_SIM_SIM_INTERNAL_H
#define PMUSIM_SIM_SIM_INTERNAL_H

#include <stdint.h>
#include <unicorn/unicorn.h>

#include "common/rng.h"
#include "sim/blockstream.h"
#include "sim/sim.h"

#define GUEST_PAGE 4096ULL
#define PAGE_DOWN(x) ((x) & ~(GUEST_PAGE - 1))
#define PAGE_UP(x) (((x) + GUEST_PAGE - 1) & ~(GUEST_PAGE - 1))

/* Layout of the guest address space (fixed, so runs are reproducible). */
#define STACK_TOP     0x7ffffffff000ULL
#define STACK_SIZE    (8ULL << 20)
#define MMAP_TOP      0x7ffff7fff000ULL   /* mmap areas grow down from here */
#define PIE_BASE      0x555555554000ULL   /* where ET_DYN programs are placed */
#define GUEST_FD_MAX  1024
#define GUEST_PID     1000                 /* pid and main thread id of the guest */

struct vma {
	uint64_t start, end;
	int prot;                /* PROT_* of the guest */
};

struct hooked_site {
	struct dc_special sp;
	uc_hook hook;
};

struct sim {
	uc_engine *uc;
	struct sim_options opt;
	char *exe_abs;           /* absolute path, for /proc/self/exe */
	struct dcache *dc;
	struct bstream *bs;
	struct symtab *syms;
	struct rng rng;
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
	/* hooks placed on special instructions, sorted by address */
	struct hooked_site *hooked;
	size_t nhooked, caphooked;
	/* memory fault seen by the invalid-access hook */
	int mem_fault_type;
	uint64_t mem_fault_addr;
	uint64_t restart_until;
	int limit_armed;
	uc_hook *wx_hooks;           /* write watches on writable+executable areas */
	size_t nwx;
	volatile int *interrupt_flag;
	uint64_t intr_rip;           /* RIP when an interrupt ended the run */
	/* run state */
	int stop_reason;         /* enum sim_end + 1 when set by a hook, 0 otherwise */
	int restart;             /* emulation stopped to re-translate; resume at restart_pc */
	uint64_t restart_pc;
	struct sim_result *res;
	uint64_t unsupported_seen[8]; /* bitmap of syscall numbers already reported */
	unsigned notes_seen;
	uint64_t sig_handlers[65];   /* rt_sigaction bookkeeping: handler per signal */
	uint64_t sig_flags[65], sig_restorer[65], sig_mask[65];
	uint64_t sigmask;
	uint64_t time_offset_ns;     /* simulated sleeps */
	uint64_t syscall_pc;         /* address of the syscall being handled */
	uint64_t tid_address;
	uint64_t pid;
	int pending_signal;
	uint64_t max_insns_left_at;  /* emulation 'until' address when limiting */
	struct sim_mapping exec_maps[SIM_MAX_MAPPINGS];
	size_t nexec_maps;
	char *map_paths[SIM_MAX_MAPPINGS]; /* paths of the files mapped at run time */
	size_t nmap_paths;
	void (*map_listener)(void *ctx, const struct sim_mapping *m);
	void *map_listener_ctx;
};

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

/* syscall.c */
void syscall_dispatch(struct sim *s);
void syscall_init_fds(struct sim *s);
void syscall_close_fds(struct sim *s);

/* cpuid.c */
void cpuid_query(uint32_t leaf, uint32_t subleaf, uint32_t out[4]);

/* machine.c: guest code at [addr, addr+len) changed or went away: forget its
 * decoded runs, per-instruction hooks and Unicorn translations. */
void code_invalidate(struct sim *s, uint64_t addr, uint64_t len);
/* machine.c: re-arms the write watch on every writable+executable area
 * (self-modifying code); call after the address space changed. */
void code_watch_refresh(struct sim *s);

/* machine.c: the guest mapped host file hfd at [addr, addr+len) from offset off
 * with PROT_EXEC: record the mapping, add the file's functions to the symbols,
 * tell the listener. */
void sim_file_exec_mapping(struct sim *s, uint64_t addr, uint64_t len, uint64_t off, int prot, int hfd);

/* machine.c helpers for the syscall layer */
uint64_t sim_now_ns(struct sim *s);          /* simulated time since boot */
void sim_stop(struct sim *s, enum sim_end end, int code);
void sim_warn_unsupported(struct sim *s, long nr);
enum sim_note { NOTE_SHARED_MMAP, NOTE_SIGNAL_HANDLER, NOTE_IOCTL, NOTE_FUTEX, NOTE_COUNT };
/* Prints "pmusim: note: msg" once per run for each note id. */
void sim_note_once(struct sim *s, enum sim_note id, const char *msg);

#endif
