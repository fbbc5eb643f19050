/* The machine's side of a dynamic binary rewriter (sim/dbr.c): guest memory
 * reserved for replacement code, the patch points written over the program's
 * code and taken back, and the map that gives the ground truth the original
 * program's blocks (sim/dbr_map.h). Internal to sim/: the public calls are in
 * sim/sim.h (sim_dbr_*). */
#ifndef PMUSIM_SIM_DBR_H
#define PMUSIM_SIM_DBR_H

#include <stddef.h>
#include <stdint.h>

#include "pmu_model/block.h"

struct sim;
struct proc;

/* sim_new with sim_options.dbr: the arena below the program's code and the map
 * as an image sink; 0 or a negative pmusim_err with a one-line reason. */
int dbr_setup(struct sim *s, char *msg, size_t msglen);
/* sim_add_image_sink when the map is there: the sink gets the original blocks. */
int dbr_add_image_sink(struct sim *s, struct block_sink sink);
/* The thread-stack unit reads the map's stream: the map's image sinks take each
 * block before the machine's other consumers, and RSP is noted at every push of
 * a call, pop of a return and start of a compare chain in replacement code (a
 * code hook at each, now and as images come: dbr_insn_notes_sp), so the calls,
 * returns and indirect jumps they stand for carry rb->sp. */
int dbr_track_sp(struct sim *s);
/* Reads replacement code at addr (the running process is the program's): how
 * many bytes, 0 when addr is not in replacement code. */
size_t dbr_read_code(struct sim *s, uint64_t addr, void *buf, size_t len);
/* 1 when [addr, addr + len) overlaps replacement code's memory in the running
 * process (mmap's hints and fixed placements then look elsewhere or fail). */
int dbr_arena_overlaps(const struct sim *s, uint64_t addr, uint64_t len);
/* The fork of the program: the child runs it unpatched, with the replacement code
 * mapped (shared: it only grows) for a thread that forked from it. */
void dbr_restore_in(struct sim *s, struct proc *child);
/* The program's code at [addr, addr + len) changed: the map decodes it again. */
void dbr_code_changed(struct sim *s, uint64_t addr, uint64_t len);
/* The run ended: the map hands on what it holds. */
void dbr_run_end(struct sim *s);
void dbr_free(struct sim *s);

#endif
