/* The machine as the rest of sim/ calls it (sim/linux/, stacks.c, rep_ref.c):
 * its hooks in a new engine, guest code read for the decoder and forgotten when it
 * changes, the end of the run, simulated time, and messages printed once. The
 * block hook and the engine's other hooks are machine.c's own; the run loop is
 * run.c (sim_run in sim/sim.h). Other parts of the machine have headers of their
 * own: memory.h, mappings.h, cpu_state.h, cpuid.h, rep_patch.h. */
#ifndef PMUSIM_SIM_MACHINE_MACHINE_H
#define PMUSIM_SIM_MACHINE_MACHINE_H

#include <stddef.h>
#include <stdint.h>
#include <unicorn/unicorn.h>

#include "common/decode.h"
#include "sim/sim.h"

struct proc;

/* A special instruction's own code hook in a process (struct proc.hooked, sorted by
 * address; machine.c adds them as their code is first decoded, process.c frees the
 * array with the process). */
struct hooked_site {
	struct dc_special sp;
	uc_hook hook;
};

/* The block, SYSCALL, CPUID, interrupt and invalid-memory hooks, and the call-stack
 * markers' (stacks_add_hooks), in p's new engine; 0 or PMUSIM_ERR_EMU. */
/* The engine's UC_HOOK_BLOCK callbacks (block_hook.c): the block stream's, and an
 * empty one (sim_options.empty_block_hook). */
void machine_block_hook(uc_engine *uc, uint64_t addr, uint32_t size, void *ud);
void machine_block_hook_empty(uc_engine *uc, uint64_t addr, uint32_t size, void *ud);
/* Hooks the special instructions of a run seen for the first time; 0 or a
 * negative pmusim_err. */
int machine_hook_specials(struct sim *s, const struct block_info *bi);
int machine_add_hooks(struct sim *s, struct proc *p);
/* The decoder's code reader (ctx: the sim): up to len bytes of the running process's
 * executable memory at addr; how many were read. */
size_t machine_read_code(void *ctx, uint64_t addr, void *buf, size_t len);
/* Recomputes sim.block_checks and sim.block_limit after a change to what they
 * sum up (attention_at too): REP patching,
 * cycle slices, --max-insns, the stack tracker. */
void machine_refresh_checks(struct sim *s);

/* Guest code at [addr, addr+len) changed or went away: forget its
 * decoded runs, per-instruction hooks and Unicorn translations. */
void code_invalidate(struct sim *s, uint64_t addr, uint64_t len);
/* Re-arms the write watch on every writable+executable area
 * (self-modifying code); call after the address space changed. */
void code_watch_refresh(struct sim *s);

uint64_t sim_now_ns(struct sim *s);          /* simulated time since boot */
/* Ends the run (the first call decides how: end and its status, signal or error)
 * and stops emulation. */
void sim_stop(struct sim *s, enum sim_end end, int code);
/* System call nr returns ENOSYS: named on the log once per run (--strict: ends the
 * run with PMUSIM_ERR_UNSUPPORTED). */
void sim_warn_unsupported(struct sim *s, long nr);
enum sim_note { NOTE_SHARED_MMAP, NOTE_IOCTL, NOTE_PROCESS, NOTE_STOP_SIGNAL, NOTE_MEM_AREAS, NOTE_MEM_SIZE, NOTE_MEM_HOLES, NOTE_COUNT };
/* Prints "pmusim: note: msg" once per run for each note id. */
void sim_note_once(struct sim *s, enum sim_note id, const char *msg);

#endif
