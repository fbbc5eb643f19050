/* The block stream's state and its fast path, inlined into the engine's block
 * hook (sim/machine.c): a TB entry that only counts costs a few loads and
 * stores, without a call. Everything else goes through sim/blockstream.h. */
#ifndef PMUSIM_SIM_BLOCKSTREAM_FAST_H
#define PMUSIM_SIM_BLOCKSTREAM_FAST_H

#include "sim/blockstream.h"

struct bstream {
	/* the fast path's fields first: one cache line */
	uint64_t insns;
	const struct block_info *cur; /* the pending TB's run */
	uint64_t tb_end;          /* address just past the pending TB's last instruction */
	int count_only;           /* the pending TB ran whole, is no REP, wants no register,
	                           * and no consumer takes blocks: its retirement is a count */
	int have_cur;
	const struct block_info *const *front; /* dc's front table (dcache_front) */
	struct dcache *dc;
	struct bstream_cpu cpu;
	struct block_sink sinks[BSTREAM_MAX_SINKS];
	int nsinks;
	struct block_sink image_sinks[BSTREAM_MAX_SINKS];
	int nimage_sinks;
	int image_on;
	int want_sp;
	int sp_once;              /* the pending TB's terminator wants RSP too */
	int new_context;          /* the next block emitted starts a new context */
	uint32_t tid;
	/* run starts (retired_block.run_start) are kept only while a consumer takes blocks */
	int cur_run_start;
	int next_run_start;       /* the block being retired ended with a transfer */
	/* REP in progress: the execution at rep_addr that began with rep_requested in the
	 * count register; its part in progress began with rep_part_count */
	int in_rep, rep_resumed;
	uint64_t rep_addr, rep_requested, rep_part_count;
	struct bstream_rep_held held; /* left in the middle, or given back to go on with */
};

/* The run at addr when the decode cache's front table has it, else NULL. */
static inline const struct block_info *bstream_front_hit(const struct bstream *bs, uint64_t addr)
{
	return dcache_front_hit(bs->front, addr);
}

/* bstream_tb_run for a TB that runs its whole run (bi->start + size == bi->end),
 * is no REP, and follows a pending TB whose retirement is a count; returns 0
 * (nothing done) when bstream_tb_run must handle it. */
static inline int bstream_tb_count(struct bstream *bs, const struct block_info *bi, uint32_t size)
{
	if (!bs->count_only || bi->start + size != bi->end || bi->kind == BK_REP)
		return 0;
	bs->insns += bs->cur->ninsns;
	bs->cur = bi;
	bs->tb_end = bi->end;
	return 1;
}

#endif
