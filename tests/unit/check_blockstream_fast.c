/* The block stream's fast path (sim/machine/blockstream_fast.h), as the engine's block
 * hook takes it, against bstream_tb for the same translation-block entries:
 * the consumers must see the same blocks, whether they take retired_blocks,
 * whole() calls, or let the stream keep their counts (block_counts). */
#include <check.h>
#include <stdlib.h>

#include "sim/machine/blockstream_fast.h"
#include "tests/unit/guest_mem.h"
#include "tests/unit/run_suite.h"

#define MAXREC 256

static struct guest_mem mem;
static struct dcache *dc;
static struct bstream *bs;
static struct retired_block rec[MAXREC];
static int nrec, nwhole, ncount; /* ncount: calls of the counting consumer */
static uint64_t fake_rsp = 0x7ff0;

static uint64_t fake_reg(void *ctx, enum bs_reg r)
{
	(void)ctx;
	return r == BS_RSP ? fake_rsp : 0;
}

static void record(void *ctx, const struct retired_block *rb)
{
	(void)ctx;
	ck_assert_int_lt(nrec, MAXREC);
	rec[nrec++] = *rb;
}

static void record_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
			 unsigned flags)
{
	struct retired_block rb;
	nwhole++;
	retired_block_whole(&rb, bi, next, sp, tid, flags);
	record(ctx, &rb);
}

/* A consumer that keeps counts the way the truth does: the stream bumps them
 * itself; whole() sees the first of each and the kinds not in the table. */
static uint64_t table[64 * 4];
static int first_seen[64 * 4];
static struct block_counts counts = {table, 64, 1u << BK_COND | 1u << BK_JMP | 1u << BK_NONE};

static void count_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
			unsigned flags)
{
	(void)ctx, (void)next, (void)sp, (void)tid;
	nwhole++, ncount++;
	table[bi->id * 4 + (flags & 3)]++;
	first_seen[bi->id * 4 + (flags & 3)] = 1;
}

static void count_retire(void *ctx, const struct retired_block *rb)
{
	if (rb->ninsns != rb->info->ninsns || rb->kind != rb->info->kind) {
		nwhole++, ncount++; /* cut short: not a count of the table */
		return;
	}
	count_whole(ctx, rb->info, rb->next, rb->sp, rb->tid, rb->taken | (unsigned)rb->run_start << 1);
}

/* TB entries: an address and a size, or a new context (size 0). */
struct tb {
	uint64_t addr;
	uint32_t size;
};

/* 0x1000: mov ecx,3; dec ecx; jnz -4; nop; ret   (loop)
 * 0x1700: jmp +0; call +0; ret                    (taken to the next instruction) */
static const struct tb seq[] = {
	{0x1000, 9}, {0x1005, 4}, {0x1005, 4}, {0x1009, 2},
	{0x1000, 9}, {0x1005, 4}, {0x1005, 4}, {0x1009, 2},
	{0x1700, 2}, {0x1702, 5}, {0x1707, 1},
	{0x1000, 9}, {0x1005, 4}, {0, 0}, {0x1005, 4}, {0x1009, 2},
	{0x1000, 5}, {0x1005, 4}, {0x1009, 2}, /* a TB cut after the mov */
	{0x1700, 2}, {0x1702, 5}, {0x1707, 1},
	{0x1000, 9}, {0x1005, 4}, {0x1005, 4}, {0x1009, 2},
};

static void setup(void)
{
	memset(mem.bytes, 0x90, sizeof(mem.bytes));
	gm_put(&mem, 0x1000, "\xb9\x03\x00\x00\x00\xff\xc9\x75\xfc\x90\xc3", 11);
	gm_put(&mem, 0x1700, "\xeb\x00\xe8\x00\x00\x00\x00\xc3", 8);
	dc = dcache_new(gm_read, &mem);
	bs = bstream_new(dc, (struct bstream_cpu){fake_reg, NULL});
	bstream_set_tid(bs, 5);
	nrec = nwhole = 0;
	memset(table, 0, sizeof(table));
	memset(first_seen, 0, sizeof(first_seen));
}

static void teardown(void)
{
	bstream_free(bs);
	dcache_free(dc);
}

/* Feeds seq as the block hook does: the fast path when it may, else bstream_tb. */
static void feed(int fast)
{
	int nfast = 0;
	for (size_t i = 0; i < sizeof(seq) / sizeof(seq[0]); i++) {
		if (!seq[i].size) {
			bstream_new_context(bs);
			continue;
		}
		const struct block_info *bi = bstream_front_hit(bs, seq[i].addr);
		if (fast && bi && bstream_tb_fast_ok(bs, bi, seq[i].size)) {
			bstream_tb_fast(bs, bi);
			nfast++;
			continue;
		}
		ck_assert_int_eq(bstream_tb(bs, seq[i].addr, seq[i].size), 0);
	}
	bstream_finish(bs, 0x2000, 0);
	if (fast)
		ck_assert_msg(nfast > 10, "the fast path took only %d TBs", nfast);
}

static int same_block(const struct retired_block *a, const struct retired_block *b)
{
	return a->info == b->info && a->next == b->next && a->tid == b->tid && a->ninsns == b->ninsns &&
	       a->kind == b->kind && a->taken == b->taken && a->run_start == b->run_start &&
	       a->new_context == b->new_context && a->sp == b->sp && a->rep_part == b->rep_part;
}

/* The blocks fed through bstream_tb only, to compare with. */
static int reference(struct retired_block *out, int want_sp)
{
	struct bstream *b = bstream_new(dc, (struct bstream_cpu){fake_reg, NULL});
	struct bstream *keep = bs;
	bs = b;
	bstream_set_tid(bs, 5);
	if (want_sp)
		bstream_want_sp(bs);
	bstream_add_sink(bs, (struct block_sink){.retire = record, .ctx = NULL});
	nrec = 0;
	feed(0);
	int n = nrec;
	memcpy(out, rec, sizeof(rec[0]) * (size_t)n);
	bstream_free(b);
	bs = keep;
	nrec = 0;
	return n;
}

static uint64_t insns_of(const struct retired_block *r, int n)
{
	uint64_t k = 0;
	for (int i = 0; i < n; i++)
		k += r[i].ninsns;
	return k;
}

static void compare(const struct retired_block *want, int n)
{
	ck_assert_int_eq(nrec, n);
	for (int i = 0; i < n; i++)
		ck_assert_msg(same_block(&want[i], &rec[i]), "block %d (at %#lx) differs", i,
			      (unsigned long)want[i].info->start);
}

START_TEST(fast_path_gives_the_same_blocks)
{
	/* _i: 0 retire() only, 1 whole(), 2 whole() with RSP wanted, 3 two consumers */
	static struct retired_block want[MAXREC];
	int n = reference(want, _i == 2);
	if (_i == 2)
		bstream_want_sp(bs);
	if (_i == 0)
		bstream_add_sink(bs, (struct block_sink){.retire = record, .ctx = NULL});
	else
		bstream_add_sink(bs, (struct block_sink){.retire = record, .ctx = NULL, .whole = record_whole});
	if (_i == 3)
		bstream_add_sink(bs, (struct block_sink){.retire = count_retire, .whole = count_whole});
	feed(1);
	compare(want, n);
	ck_assert_uint_eq(bstream_insns(bs), insns_of(want, n));
	if (_i)
		ck_assert_int_gt(nwhole, 10);
}
END_TEST

START_TEST(counts_kept_by_the_stream)
{
	static struct retired_block want[MAXREC];
	int n = reference(want, 0);
	/* _i 1: beside a consumer called directly (a clock), which sees every block */
	if (_i)
		bstream_add_sink(bs, (struct block_sink){.retire = record, .ctx = NULL, .whole = record_whole});
	bstream_add_image_sink(bs, (struct block_sink){.retire = count_retire, .whole = count_whole,
						       .counts = &counts});
	ncount = 0;
	feed(1);
	if (_i)
		compare(want, n);
	uint64_t hist[64 * 4] = {0};
	int calls = 0, seen[64 * 4] = {0};
	for (int i = 0; i < n; i++) {
		const struct retired_block *r = &want[i];
		int f = r->taken | r->run_start << 1;
		if (r->ninsns != r->info->ninsns) {
			calls++;
			continue;
		}
		hist[r->info->id * 4 + f]++;
		/* whole() or retire() sees the first of each count, every block of a
		 * kind outside the table, and every block starting a new context */
		if (!seen[r->info->id * 4 + f] || !(counts.kinds >> r->kind & 1) || r->new_context)
			calls++;
		seen[r->info->id * 4 + f] = 1;
	}
	for (int i = 0; i < 64 * 4; i++)
		ck_assert_msg(table[i] == hist[i], "count %d: %lu, want %lu", i, (unsigned long)table[i],
			      (unsigned long)hist[i]);
	for (int i = 0; i < 64 * 4; i++)
		ck_assert_msg(!table[i] || first_seen[i], "the consumer never saw count %d", i);
	ck_assert_int_le(ncount, calls);
	ck_assert_int_lt(ncount, n); /* the stream kept some itself */
	ck_assert_uint_eq(bstream_insns(bs), insns_of(want, n));
}
END_TEST

/* Who takes a block first: a consumer, then the image sinks; with
 * bstream_image_first the image sinks first (the rewriter's map before the
 * PMU), on the fast path and with RSP wanted alike. */
static int order_log[4 * MAXREC], norder;
static void order_note(void *ctx, const struct retired_block *rb)
{
	(void)rb;
	ck_assert_int_lt(norder, 4 * MAXREC);
	order_log[norder++] = ctx ? 2 : 1;
}

START_TEST(image_sinks_first_when_asked)
{
	static int image_tag;
	int first = _i & 1 ? 2 : 1;
	if (_i & 2)
		bstream_want_sp(bs);
	bstream_add_sink(bs, (struct block_sink){.retire = order_note, .ctx = NULL});
	bstream_add_image_sink(bs, (struct block_sink){.retire = order_note, .ctx = &image_tag});
	if (_i & 1)
		bstream_image_first(bs);
	norder = 0;
	feed(1);
	ck_assert_int_gt(norder, 20);
	ck_assert_int_eq(norder % 2, 0);
	for (int k = 0; k < norder; k += 2)
		ck_assert_msg(order_log[k] == first && order_log[k + 1] == 3 - first, "block %d", k / 2);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("blockstream_fast");
	TCase *tc = tcase_create("fast path");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, fast_path_gives_the_same_blocks, 0, 4);
	tcase_add_loop_test(tc, counts_kept_by_the_stream, 0, 2);
	tcase_add_loop_test(tc, image_sinks_first_when_asked, 0, 4);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
