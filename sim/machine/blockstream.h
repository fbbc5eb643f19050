/* Block reconstruction: turns the emulator's translation-block entries into the
 * exact retired-block stream (pmu_model/block.h).
 *
 * Unicorn reports "a translation block starting at A, S bytes long, is about to
 * run". TBs are not code runs: a TB may stop early (size limit, page boundary,
 * instructions that end QEMU blocks), a REP instruction re-enters a TB at its own
 * address for every iteration, and a branch may land mid-run. This module knows
 * no Unicorn: the machine feeds it events and a way to read two registers, so it
 * can be tested with hand-made event sequences.
 *
 * Contract: call bstream_tb() for every TB that starts executing, in order;
 * bstream_rep() from a hook at a REP instruction each time it executes;
 * bstream_cut() when the machine moved the PC out of the middle of the current
 * TB after the instruction before `resume` retired (e.g. an emulated rdtsc);
 * bstream_finish() once emulation stopped, with the final PC and whether the
 * instruction at that PC faulted (did not retire); stopped at a REP in progress,
 * that REP was left in the middle (held until bstream_rep_take). */
#ifndef PMUSIM_SIM_MACHINE_BLOCKSTREAM_H
#define PMUSIM_SIM_MACHINE_BLOCKSTREAM_H

#include <stdint.h>

#include "pmu_model/block.h"
#include "common/decode.h"

enum bs_reg { BS_RFLAGS, BS_RCX, BS_RSP };

struct bstream_cpu {
	uint64_t (*read_reg)(void *ctx, enum bs_reg reg);
	void *ctx;
};

#define BSTREAM_MAX_SINKS 8

struct bstream;

struct bstream *bstream_new(struct dcache *dc, struct bstream_cpu cpu);
void bstream_free(struct bstream *bs);

/* Retired calls, returns and indirect jumps carry RSP after them (rb->sp). */
void bstream_want_sp(struct bstream *bs);
/* The TB now executing carries RSP after it when its run's terminator
 * retires, whatever its kind (a marked branch). */
void bstream_sp_after_block(struct bstream *bs);

/* Adds a consumer; returns 0 or PMUSIM_ERR_ARG when there are too many. */
int bstream_add_sink(struct bstream *bs, struct block_sink sink);
/* Adds a consumer that sees only the blocks retired while the image flag is on
 * (the machine turns it on for the program it started, off for other processes). */
int bstream_add_image_sink(struct bstream *bs, struct block_sink sink);
void bstream_set_image(struct bstream *bs, int on);
/* Image sinks take each block before the other consumers from now on (the
 * rewriter's map, so that the program's stream is up to date when the PMU,
 * a consumer, samples at the block's end). */
void bstream_image_first(struct bstream *bs);
/* The decode cache of the address space running from now on (bstream_tb). */
void bstream_set_dcache(struct bstream *bs, struct dcache *dc);

/* Thread id stamped on retired blocks from now on. */
void bstream_set_tid(struct bstream *bs, uint32_t tid);

/* Whether the next block starts a run (entered by a transfer). A context
 * switch saves it for the outgoing thread (after bstream_finish) and restores
 * the incoming thread's; signal delivery sets it (the handler is entered). */
int bstream_next_run_start(const struct bstream *bs);
void bstream_set_next_run_start(struct bstream *bs, int v);
/* The next block retired starts a new context (retired_block.new_context). */
void bstream_new_context(struct bstream *bs);

/* A TB starting at addr, size bytes long, begins executing. Returns 0, or a
 * negative pmusim_err when the TB contradicts the decoded code (internal error). */
int bstream_tb(struct bstream *bs, uint64_t addr, uint32_t size);

/* Same as bstream_tb for a run the caller already looked up (bi->start == addr). */
int bstream_tb_run(struct bstream *bs, const struct block_info *bi, uint32_t size);

/* Instructions the pending TB will retire if the next TB starts at next. */
uint64_t bstream_pending_insns(const struct bstream *bs, uint64_t next);

/* 1 when a TB at addr is a further iteration of the REP in progress. */
int bstream_is_rep_continuation(const struct bstream *bs, uint64_t addr);

/* The REP instruction at addr is about to execute (one call per iteration
 * attempt); rcx is the count register before it. */
void bstream_rep(struct bstream *bs, uint64_t addr, uint64_t rcx);

/* A REP execution left in the middle (pmu_model/block.h, RB_REP_LEFT) that the
 * thread may go on with: its REP and requested count. */
struct bstream_rep_held {
	uint64_t site, requested;
	int valid;
};
/* Takes the execution that the last bstream_finish left in the middle of the REP at
 * pc (valid 0 when there is none, or it was at another address): a signal's handler
 * frame keeps it (entries into that REP in the handler start executions of their
 * own), and so does a thread that loses the CPU. */
struct bstream_rep_held bstream_rep_take(struct bstream *bs, uint64_t pc);
/* The running thread goes on at h's REP (a handler returned into it, the thread got
 * the CPU back): its next entry there continues that execution (RB_REP_RESUMED).
 * Dropped when the thread's next block starts elsewhere. */
void bstream_rep_give(struct bstream *bs, struct bstream_rep_held h);
/* 1 when the running thread's next entry into the REP at addr continues an execution. */
int bstream_rep_resuming(const struct bstream *bs, uint64_t addr);

/* The current TB was left early: instructions before `resume` retired. */
void bstream_cut(struct bstream *bs, uint64_t resume);

/* Emulation stopped with the PC at rip. faulted: the instruction at rip (inside
 * the current TB) did not retire. Flushes the pending block. */
void bstream_finish(struct bstream *bs, uint64_t rip, int faulted);

/* Instructions retired so far (blocks already handed to the sinks). */
uint64_t bstream_insns(const struct bstream *bs);

/* Instructions retired so far plus those of the current TB up to and including
 * addr's predecessor — i.e. the count at the moment the instruction at addr is
 * about to execute, when addr lies in the current TB. */
uint64_t bstream_insns_before(const struct bstream *bs, uint64_t addr);

/* Evaluates an x86 condition (enum br_cond) on RFLAGS and RCX as they are after
 * the branch executed (LOOP forms see the decremented count). */
int bstream_cond_taken(int cond, uint64_t rflags, uint64_t rcx);



/* The run of the TB now executing and the end of that TB; 0 when none. */
int bstream_current(const struct bstream *bs, const struct block_info **bi, uint64_t *tb_end);
#endif
