/* The block stream's state and its fast path, inlined into the engine's block
 * hook (sim/machine/machine.c): a TB entry that only counts costs a few loads and
 * stores, without a call. Everything else goes through
 * sim/machine/blockstream.h. */
#ifndef PMUSIM_SIM_MACHINE_BLOCKSTREAM_FAST_H
#define PMUSIM_SIM_MACHINE_BLOCKSTREAM_FAST_H

#include "sim/machine/blockstream.h"

enum bstream_deliver {
	BS_DELIVER_NONE,          /* nobody: a retirement is a count */
	BS_DELIVER_ONE,           /* one consumer, with whole(), wanting no RSP: called directly */
	BS_DELIVER_COUNT,         /* the same, with counts the stream keeps (block_counts) */
	BS_DELIVER_ONE_COUNT,     /* two: one called directly (one), one that keeps counts
	                           * with the stream (counted), e.g. a clock and the truth */
	BS_DELIVER_ALL,           /* any other: bstream_retire_plain */
};

struct bstream {
	/* the fast path's fields first: one cache line */
	uint64_t insns;
	const struct block_info *cur; /* the pending TB's run */
	uint64_t tb_end;          /* address just past the pending TB's last instruction */
	int plain;                /* the pending TB ran whole, is no REP, and its outcome
	                           * shows in where control went next (bstream_tb_fast) */
	int deliver;              /* who takes blocks now (sinks, and image sinks while the
	                           * image flag is on): enum bstream_deliver */
	struct block_sink one;    /* the consumer, for BS_DELIVER_ONE, _COUNT and _ONE_COUNT */
	struct block_sink active[2 * BSTREAM_MAX_SINKS]; /* who takes blocks now, in order */
	int nactive;
	uint32_t tid;
	int new_context;          /* the next block emitted starts a new context */
	/* run starts (retired_block.run_start) are kept only while delivering */
	int cur_run_start;
	int next_run_start;       /* the block being retired ended with a transfer */
	int have_cur;
	const struct block_info *const *front; /* dc's front table (dcache_front) */
	struct dcache *dc;
	struct bstream_cpu cpu;
	struct block_sink sinks[BSTREAM_MAX_SINKS];
	int nsinks;
	struct block_sink image_sinks[BSTREAM_MAX_SINKS];
	int nimage_sinks;
	int image_on;
	int image_first;          /* image sinks take each block before the others */
	int want_sp;
	int sp_once;              /* the pending TB's terminator wants RSP too */
	/* REP in progress: the execution at rep_addr that began with rep_requested in the
	 * count register; its part in progress began with rep_part_count */
	int in_rep, rep_resumed;
	uint64_t rep_addr, rep_requested, rep_part_count;
	struct bstream_rep_held held; /* left in the middle, or given back to go on with */
	/* last: the other fields keep their places (the fast path's cache lines) */
	struct block_sink counted; /* the consumer whose counts the stream keeps (_COUNT: one) */
};

/* Read in place of a count the table does not hold yet (always 0). */
extern uint64_t bstream_no_count;

/* The kinds of branch that are always taken (bits 1 << kind). */
#define BSTREAM_UNCOND_KINDS \
	(1u << BK_JMP | 1u << BK_JMP_IND | 1u << BK_CALL | 1u << BK_CALL_IND | 1u << BK_RET)

/* The run at addr when the decode cache's front table has it, else NULL. */
static inline const struct block_info *bstream_front_hit(const struct bstream *bs, uint64_t addr)
{
	return dcache_front_hit(bs->front, addr);
}

/* Hands the plain TB prev, retired, to the consumers; control went on at next. */
void bstream_retire_plain(struct bstream *bs, const struct block_info *prev, uint64_t next);

/* Whether bstream_tb_fast may take a TB at bi->start, size bytes long: it runs
 * its whole run, is no REP and no Jcc to its own fall-through, and the pending
 * TB is plain. Otherwise bstream_tb_run must. */
static inline int bstream_tb_fast_ok(const struct bstream *bs, const struct block_info *bi, uint32_t size)
{
	return bs->plain && bi->start + size == bi->end && bi->kind != BK_REP && !(bi->flags & BI_COND_EQ_FT);
}

/* bstream_tb_run for a TB that bstream_tb_fast_ok accepts. The consumer's call
 * comes last, so that the compiler makes it a jump. */
static inline void bstream_tb_fast(struct bstream *bs, const struct block_info *bi)
{
	const struct block_info *prev = bs->cur;
	uint64_t next = bi->start;
	bs->insns += prev->ninsns;
	bs->cur = bi;
	bs->tb_end = bi->end;
	if (bs->deliver == BS_DELIVER_NONE)
		return;
	if (bs->deliver == BS_DELIVER_ALL) {
		bstream_retire_plain(bs, prev, next);
		return;
	}
	/* branch-free where the guest's data decides: a conditional branch is taken
	 * when control went to its target (no other kind has a target equal to its
	 * next address unless it is taken), the other branches always are */
	unsigned kind = prev->kind, run_start = kind != BK_NONE;
	unsigned flags = (next == prev->target) | (BSTREAM_UNCOND_KINDS >> kind & 1) |
			 (bs->cur_run_start ? RB_WHOLE_RUN_START : 0);
	if (bs->cur_run_start != (int)run_start) /* the two are equal between TBs */
		bs->cur_run_start = bs->next_run_start = (int)run_start;
	if (bs->new_context) {
		flags |= RB_WHOLE_NEW_CONTEXT;
		bs->new_context = 0;
		if (bs->deliver == BS_DELIVER_ONE_COUNT)
			bs->counted.whole(bs->counted.ctx, prev, next, 0, bs->tid, flags);
	} else if (bs->deliver != BS_DELIVER_ONE) {
		const struct block_counts *bc = bs->counted.counts;
		uint32_t id = prev->id;
		int in = id < bc->cap;
		uint64_t *slot = in ? &bc->n[(size_t)id * 4 + flags] : &bstream_no_count;
		if (__builtin_expect(in & (bc->kinds >> kind & 1) & (*slot != 0), 1)) {
			(*slot)++;
			if (bs->deliver == BS_DELIVER_COUNT)
				return;
		} else if (bs->deliver == BS_DELIVER_ONE_COUNT) {
			bs->counted.whole(bs->counted.ctx, prev, next, 0, bs->tid, flags);
		}
	}
	bs->one.whole(bs->one.ctx, prev, next, 0, bs->tid, flags);
}

#endif
