/* The map back from replacement code: a block sink that takes the retired blocks
 * of a program running with a rewriter's replacement code installed (the
 * machine's own stream: code runs of the replacement, patch jumps in the
 * original code) and hands its own sinks the blocks the original program
 * retires, run for run, as if nothing had been rewritten: the runs of the
 * original bytes, each branch's outcome, the next address, calls, returns,
 * REP parts. The ground truth and the exact replay of regions read that stream,
 * so a rewritten run's truth is the original program's.
 *
 * How. Every instruction a raw block retires stands for one original
 * instruction or for none (common/dbr_image.h, enum dbr_what: a copy, an
 * inverted jcc, the push of an inlined call and the lea of its return stand for
 * the original; jumps the rewriter added, the high half of an inlined call's
 * push and a patch point's own jump stand for none). The original instructions
 * are strung into the original program's code runs (common/decode.h, decoded from
 * the original bytes through the read function given, which must undo the
 * patches), one pending run per thread; a run is handed on once its terminator
 * retired and the next original instruction is known (a branch's outcome is
 * where the program went next, not the raw branch's: a laid-out fall-through
 * can be an original taken branch), at once for a terminator that is no branch.
 * A run also ends where the original stream does not go on with its next
 * instruction (a signal, a fault, an interruption), cut as the machine's own
 * stream cuts it. A raw block that starts a run with no taken branch before it
 * (program start, signal delivery and return, a thread getting the CPU) starts
 * an original run too.
 *
 * What the stream gives up: the raw stream's context switches fall where the
 * rewritten code's blocks end, so several threads interleave differently than in
 * a run without rewriting (each thread's own stream is exact); rb->sp is passed
 * on when the original terminator is the raw block's own, and for the push or
 * pop that stands for a call or return when noted (dbr_map_note_sp). A branch
 * run is handed on as soon as its outcome is known: by the end of the raw block
 * that holds its terminator, unless that block ends at neither the terminator
 * nor an added jump after it. */
#ifndef PMUSIM_SIM_DBR_MAP_H
#define PMUSIM_SIM_DBR_MAP_H

#include <stddef.h>
#include <stdint.h>

#include "common/dbr_image.h"
#include "common/decode.h"
#include "pmu_model/block.h"

#define DBR_MAP_MAX_SINKS 8

struct dbr_map;

/* A map whose original runs are decoded from read (the original bytes). NULL when
 * out of memory. */
struct dbr_map *dbr_map_new(dcache_read_fn read, void *ctx);
void dbr_map_free(struct dbr_map *m);

/* A consumer of the original stream; 0 or PMUSIM_ERR_ARG when there are too many. */
int dbr_map_add_sink(struct dbr_map *m, struct block_sink sink);
/* The sink the machine's blocks go into. */
struct block_sink dbr_map_sink(struct dbr_map *m);

/* Replacement code installed at img->base: its map and its patch points are
 * copied (the image may go). Images never overlap. 0 or PMUSIM_ERR_NOMEM. */
int dbr_map_add_image(struct dbr_map *m, const struct dbr_image *img);

/* The original code at [addr, addr + len) changed (the program wrote it). */
void dbr_map_invalidate(struct dbr_map *m, uint64_t addr, uint64_t len);

/* The push of a call, the pop of a clone's return or the start of an indirect
 * jump's compare chain (common/dbr_image.h dbr_insn_notes_sp) at raw address
 * addr is about to run with RSP rsp (a code hook's reading): the original call,
 * return or jump it stands for is handed on with RSP after it (rb->sp) when the
 * raw block holding it retires next. Notes not taken by then are dropped; without one, rb->sp is 0
 * (not known) there. Other addresses are ignored. */
void dbr_map_note_sp(struct dbr_map *m, uint64_t addr, uint64_t rsp);

/* The end of the run (or of the program pmusim started): every pending run is
 * handed on, a branch's next address taken from the last raw block. */
void dbr_map_finish(struct dbr_map *m);

/* The original address the replacement's raw address addr stands for: itself
 * outside replacement code; inside, the original instruction of the first
 * emitted instruction from addr on that stands for one, following added jumps.
 * 0 when none can be found. */
uint64_t dbr_map_resolve(const struct dbr_map *m, uint64_t addr);

/* What raw address ip stands for: ip outside replacement code; inside, the
 * original instruction of its map entry (*inverted 1 for DBR_INVERTED), 0 for an
 * added instruction or an address no entry names. */
uint64_t dbr_map_original(const struct dbr_map *m, uint64_t ip, int *inverted);

/* RSP at raw address ip minus the program's RSP there (<= 0: dbr_insn.sp_off), 0
 * outside replacement code. */
int64_t dbr_map_sp_off(const struct dbr_map *m, uint64_t ip);

/* The original instruction a sample at raw address ip is charged to: ip outside
 * replacement code; inside, its map entry's orig, whatever it is (an added jump's
 * is the instruction it follows). */
uint64_t dbr_map_charge(const struct dbr_map *m, uint64_t ip);

/* A taken branch the rewritten run recorded (an LBR entry from -> to) as the
 * program's: 1 with *ofrom, *oto and the original's *kind (enum br_kind) when it
 * is a taken transfer of the program's (a copied branch, an added jump that
 * carries its instruction's transfer: common/dbr_image.h); 0 when it is none (a
 * patch jump, an added jump, an inverted jcc taken: the program fell through). */
int dbr_map_branch(struct dbr_map *m, uint64_t from, uint64_t to, uint64_t *ofrom, uint64_t *oto, int *kind);

/* Where the program goes after the replacement instruction at ip: the first
 * original instruction reached from the next one through added jumps (the return
 * point after the lea that stands for a clone's return); 0 when unknown. */
uint64_t dbr_map_after(const struct dbr_map *m, uint64_t ip);

/* The original instruction at ip as the original bytes have it: *kind its enum
 * br_kind (BK_NONE: no branch), and its static target (0: none, or indirect). */
uint64_t dbr_map_static_target(struct dbr_map *m, uint64_t ip, int *kind);

/* Raw instructions that stood for no original instruction (added jumps, patch
 * jumps, high halves), and raw instructions in replacement code that no map entry
 * names (0 unless something is wrong). */
uint64_t dbr_map_added_insns(const struct dbr_map *m);
/* What the rewritten run retired: instructions at replacement addresses (the
 * added ones among them), patch jumps, and replacement instructions no map entry
 * names; and the program's direct jumps that ran without an instruction of their
 * own (a layout made them fall-throughs). */
struct dbr_counts {
	uint64_t inside, added_inside, patch_jumps, unknown, left_out;
};
void dbr_map_counts(const struct dbr_map *m, struct dbr_counts *c);
uint64_t dbr_map_unknown_insns(const struct dbr_map *m);

#endif
