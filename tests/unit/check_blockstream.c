/* Block reconstruction (sim/machine/blockstream.h) fed by hand-made translation-block
 * events, the way Unicorn reports them: exact retired blocks, branch outcomes,
 * REP iterations (also of a REP left in the middle and resumed), cut and faulting
 * blocks. */
#include <check.h>
#include <stdlib.h>

#include "sim/machine/blockstream.h"
#include "tests/unit/guest_mem.h"
#include "tests/unit/run_suite.h"

#define MAXREC 64

static struct guest_mem mem;
static struct retired_block rec[MAXREC];
static int nrec;
static uint64_t fake_rflags, fake_rcx, fake_rsp;

static uint64_t fake_reg(void *ctx, enum bs_reg r)
{
	(void)ctx;
	return r == BS_RFLAGS ? fake_rflags : r == BS_RSP ? fake_rsp : fake_rcx;
}

static void record(void *ctx, const struct retired_block *rb)
{
	(void)ctx;
	ck_assert_int_lt(nrec, MAXREC);
	rec[nrec++] = *rb;
}

static struct dcache *dc;
static struct bstream *bs;

/* Program: every test uses its own address range of one code page. */
static const uint8_t prog[][16] = {
	/* 0x1000 */ {0xb9, 0x03, 0, 0, 0, /* mov ecx,3 */ 0xff, 0xc9, /* 0x1005 dec ecx */
		      0x75, 0xfc, /* 0x1007 jnz 0x1005 */ 0x90, /* 0x1009 nop */ 0xc3 /* 0x100a ret */},
};

static void setup(void)
{
	memset(mem.bytes, 0x90, sizeof(mem.bytes));
	gm_put(&mem, 0x1000, prog[0], 11);
	/* 0x1100: xor eax,eax; je +0; nop; ret */
	gm_put(&mem, 0x1100, "\x31\xc0\x74\x00\x90\xc3", 6);
	/* 0x1200: mov ecx,5; rep stosb; nop; ret */
	gm_put(&mem, 0x1200, "\xb9\x05\x00\x00\x00\xf3\xaa\x90\xc3", 9);
	/* 0x1300: mov rcx,-1; repne scasb; ret */
	gm_put(&mem, 0x1300, "\x48\xc7\xc1\xff\xff\xff\xff\xf2\xae\xc3", 10);
	/* 0x1400: nop; nop; rdtsc; nop; nop; ret */
	gm_put(&mem, 0x1400, "\x90\x90\x0f\x31\x90\x90\xc3", 7);
	/* 0x1500: mov eax,60; syscall */
	gm_put(&mem, 0x1500, "\xb8\x3c\x00\x00\x00\x0f\x05", 7);
	/* 0x1600: addr32 rep stosb; ret */
	gm_put(&mem, 0x1600, "\x67\xf3\xaa\xc3", 4);
	/* 0x1700: jmp next; call next; ret */
	gm_put(&mem, 0x1700, "\xeb\x00\xe8\x00\x00\x00\x00\xc3", 8);
	dc = dcache_new(gm_read, &mem);
	bs = bstream_new(dc, (struct bstream_cpu){fake_reg, NULL});
	bstream_add_sink(bs, (struct block_sink){.retire = record, .ctx = NULL});
	bstream_set_tid(bs, 77);
	nrec = 0;
	fake_rflags = 0x2;
	fake_rcx = 0;
}

static void teardown(void)
{
	bstream_free(bs);
	dcache_free(dc);
}

static void expect(int i, uint64_t start, uint32_t ninsns, int kind, int taken, uint64_t next, int run_start)
{
	ck_assert_msg(i < nrec, "only %d blocks retired, wanted block %d", nrec, i);
	const struct retired_block *r = &rec[i];
	ck_assert_msg(r->info->start == start, "block %d starts at %#lx", i, (unsigned long)r->info->start);
	ck_assert_msg(r->ninsns == ninsns, "block %d: %u instructions, want %u", i, r->ninsns, ninsns);
	ck_assert_msg(r->kind == kind, "block %d: kind %s, want %s", i, br_kind_name(r->kind), br_kind_name(kind));
	ck_assert_msg(r->taken == taken, "block %d: taken %d", i, r->taken);
	ck_assert_msg(r->next == next, "block %d: next %#lx, want %#lx", i, (unsigned long)r->next,
		      (unsigned long)next);
	ck_assert_msg(r->run_start == run_start, "block %d: run_start %d", i, r->run_start);
	ck_assert_uint_eq(r->tid, 77);
}

START_TEST(loop_and_return)
{
	ck_assert_int_eq(bstream_tb(bs, 0x1000, 9), 0);  /* mov, dec, jnz: taken */
	ck_assert_int_eq(bstream_tb(bs, 0x1005, 4), 0);  /* dec, jnz: taken */
	ck_assert_int_eq(bstream_tb(bs, 0x1005, 4), 0);  /* dec, jnz: falls through */
	ck_assert_int_eq(bstream_tb(bs, 0x1009, 2), 0);  /* nop, ret */
	bstream_finish(bs, 0x2000, 0);
	ck_assert_int_eq(nrec, 4);
	expect(0, 0x1000, 3, BK_COND, 1, 0x1005, 1);
	expect(1, 0x1005, 2, BK_COND, 1, 0x1005, 1);
	expect(2, 0x1005, 2, BK_COND, 0, 0x1009, 1);
	expect(3, 0x1009, 2, BK_RET, 1, 0x2000, 1);
	ck_assert_uint_eq(bstream_insns(bs), 9);
}
END_TEST

START_TEST(tb_cut_short)
{
	ck_assert_int_eq(bstream_tb(bs, 0x1000, 5), 0);  /* only the mov: the TB stopped early */
	ck_assert_int_eq(bstream_tb(bs, 0x1005, 4), 0);
	ck_assert_int_eq(bstream_tb(bs, 0x1009, 2), 0);
	bstream_finish(bs, 0x2000, 0);
	expect(0, 0x1000, 1, BK_NONE, 0, 0x1005, 1);
	expect(1, 0x1005, 2, BK_COND, 0, 0x1009, 0); /* continues the run: not a run start */
	expect(2, 0x1009, 2, BK_RET, 1, 0x2000, 1);
}
END_TEST

START_TEST(branch_to_own_fallthrough)
{
	fake_rflags = 0x2 | (1 << 6); /* ZF = 1: je is taken */
	bstream_tb(bs, 0x1100, 4);
	bstream_tb(bs, 0x1104, 2);
	fake_rflags = 0x2; /* ZF = 0: not taken */
	bstream_tb(bs, 0x1100, 4);
	bstream_tb(bs, 0x1104, 2);
	bstream_finish(bs, 0x3000, 0);
	expect(0, 0x1100, 2, BK_COND, 1, 0x1104, 1);
	expect(2, 0x1100, 2, BK_COND, 0, 0x1104, 1);
}
END_TEST

START_TEST(jmp_and_call_to_next_are_taken)
{
	bstream_tb(bs, 0x1700, 2);
	bstream_tb(bs, 0x1702, 5);
	bstream_tb(bs, 0x1707, 1);
	bstream_finish(bs, 0x2000, 0);
	expect(0, 0x1700, 1, BK_JMP, 1, 0x1702, 1);
	expect(1, 0x1702, 1, BK_CALL, 1, 0x1707, 1);
}
END_TEST

/* RSP after the block: calls and returns carry it once a consumer asked;
 * a conditional branch only when the machine asked for that TB (a marked
 * branch), and the TB after it not. */
START_TEST(stack_pointer_after_blocks)
{
	bstream_want_sp(bs);
	fake_rsp = 0x7000;
	bstream_tb(bs, 0x1000, 9);
	bstream_sp_after_block(bs);
	fake_rsp = 0x7010;
	bstream_tb(bs, 0x1005, 4); /* the first TB retires: RSP now */
	fake_rsp = 0x7020;
	bstream_tb(bs, 0x1005, 4);
	fake_rsp = 0x7030;
	bstream_tb(bs, 0x1009, 2);
	fake_rsp = 0x7040;
	bstream_finish(bs, 0x2000, 0);
	ck_assert_int_eq(nrec, 4);
	ck_assert_uint_eq(rec[0].sp, 0x7010);
	ck_assert_uint_eq(rec[1].sp, 0);
	ck_assert_uint_eq(rec[2].sp, 0);
	ck_assert_uint_eq(rec[3].sp, 0x7040); /* the ret */
	/* asked for a TB that is cut before its terminator: the next one does not inherit it */
	nrec = 0;
	bstream_tb(bs, 0x1000, 5);
	bstream_sp_after_block(bs);
	bstream_tb(bs, 0x1005, 4);
	bstream_tb(bs, 0x1009, 2);
	ck_assert_int_eq(nrec, 2);
	ck_assert_uint_eq(rec[0].sp, 0);
	ck_assert_uint_eq(rec[1].sp, 0);
}
END_TEST

START_TEST(rep_iterations)
{
	bstream_tb(bs, 0x1200, 7);          /* mov ecx,5; rep stosb (first iteration) */
	bstream_rep(bs, 0x1205, 5);
	for (uint64_t c = 4; c >= 1; c--) { /* Unicorn re-enters a TB at the REP per iteration */
		ck_assert_int_eq(bstream_tb(bs, 0x1205, 2), 0);
		bstream_rep(bs, 0x1205, c);
	}
	fake_rcx = 0;
	bstream_tb(bs, 0x1207, 2);
	bstream_finish(bs, 0x2000, 0);
	ck_assert_int_eq(nrec, 2);
	expect(0, 0x1200, 2, BK_REP, 0, 0x1207, 1);
	ck_assert_uint_eq(rec[0].rep_iters, 5);
	ck_assert_uint_eq(rec[0].rep_count, 5);
	ck_assert_uint_eq(bstream_insns(bs), 4); /* a REP instruction retires once */
}
END_TEST

START_TEST(repne_stops_early)
{
	bstream_tb(bs, 0x1300, 9);
	bstream_rep(bs, 0x1307, UINT64_MAX);
	fake_rcx = UINT64_MAX - 41;
	bstream_tb(bs, 0x1309, 1);
	bstream_finish(bs, 0x2000, 0);
	expect(0, 0x1300, 2, BK_REP, 0, 0x1309, 1);
	ck_assert_uint_eq(rec[0].rep_iters, 41);
	ck_assert_uint_eq(rec[0].rep_count, UINT64_MAX); /* requested: RCX = -1, a strlen-style scan */
}
END_TEST

START_TEST(rep_with_ecx_counts_32_bits)
{
	bstream_tb(bs, 0x1600, 3);
	bstream_rep(bs, 0x1600, 0xffffffff00000010ULL);
	fake_rcx = 0xffffffff00000000ULL;
	bstream_tb(bs, 0x1603, 1);
	bstream_finish(bs, 0x2000, 0);
	ck_assert_uint_eq(rec[0].rep_iters, 16);
	ck_assert_uint_eq(rec[0].rep_count, 16); /* ECX only */
}
END_TEST

START_TEST(rep_with_zero_count)
{
	bstream_tb(bs, 0x1200, 7);
	bstream_rep(bs, 0x1205, 0);
	fake_rcx = 0;
	bstream_tb(bs, 0x1207, 2);
	bstream_finish(bs, 0x2000, 0);
	expect(0, 0x1200, 2, BK_REP, 0, 0x1207, 1);
	ck_assert_uint_eq(rec[0].rep_iters, 0);
}
END_TEST

/* A REP that faults in its third iteration (a page it writes is not writable): the
 * block of the mov before it carries the part done (2 of 5 iterations, RB_REP_LEFT);
 * the handler's frame takes the execution (bstream_rep_take), the handler enters the
 * same REP (an execution of its own), then rt_sigreturn gives the first one back
 * (bstream_rep_give) and its next entry goes on with it: the rest (3) as a resumed
 * part with the first part's requested count. */
START_TEST(rep_left_and_resumed)
{
	bstream_tb(bs, 0x1200, 7);
	bstream_rep(bs, 0x1205, 5);
	bstream_tb(bs, 0x1205, 2);
	bstream_rep(bs, 0x1205, 4);
	bstream_tb(bs, 0x1205, 2);
	bstream_rep(bs, 0x1205, 3);
	fake_rcx = 3;
	bstream_finish(bs, 0x1205, 1); /* the fault */
	ck_assert_int_eq(nrec, 1);
	expect(0, 0x1200, 1, BK_NONE, 0, 0x1205, 1);
	ck_assert_int_eq(rec[0].rep_part, RB_REP_RAN | RB_REP_LEFT);
	ck_assert_uint_eq(rec[0].rep_iters, 2);
	ck_assert_uint_eq(rec[0].rep_count, 5);
	ck_assert_uint_eq(rec[0].rep_left, 3);
	ck_assert_uint_eq(bstream_insns(bs), 1); /* the REP did not retire */
	struct bstream_rep_held frame = bstream_rep_take(bs, 0x1205);
	ck_assert_int_eq(frame.valid, 1);
	ck_assert_uint_eq(frame.requested, 5);
	/* the handler runs the same REP: count 1, an execution of its own */
	bstream_set_next_run_start(bs, 1);
	bstream_tb(bs, 0x1205, 2);
	bstream_rep(bs, 0x1205, 1);
	fake_rcx = 0;
	bstream_tb(bs, 0x1207, 2);
	bstream_finish(bs, 0x3000, 0);
	ck_assert_int_eq(nrec, 3);
	ck_assert_int_eq(rec[1].rep_part, RB_REP_RAN);
	ck_assert_uint_eq(rec[1].rep_count, 1);
	/* rt_sigreturn back into the first one */
	fake_rcx = 3;
	bstream_rep_give(bs, frame);
	ck_assert_int_eq(bstream_rep_resuming(bs, 0x1205), 1);
	bstream_tb(bs, 0x1205, 2);
	bstream_rep(bs, 0x1205, 3);
	ck_assert_int_eq(bstream_rep_resuming(bs, 0x1205), 0);
	fake_rcx = 0;
	bstream_tb(bs, 0x1207, 2);
	bstream_finish(bs, 0x2000, 0);
	ck_assert_int_eq(nrec, 5);
	expect(3, 0x1205, 1, BK_REP, 0, 0x1207, 1);
	ck_assert_int_eq(rec[3].rep_part, RB_REP_RAN | RB_REP_RESUMED);
	ck_assert_uint_eq(rec[3].rep_count, 5);
	ck_assert_uint_eq(rec[3].rep_iters, 3);
	ck_assert_uint_eq(rec[3].rep_left, 0);
}
END_TEST

/* Left by siglongjmp: the execution is never given back, so the next entry is a new
 * execution with its own count; an execution held for another address, or dropped
 * because the thread went on elsewhere, is no continuation either. A REP that is the
 * first instruction of its run and faults at once still reports its part (a block of
 * no instruction). */
START_TEST(rep_left_for_good)
{
	bstream_tb(bs, 0x1600, 3); /* addr32 rep stosb: ECX */
	bstream_rep(bs, 0x1600, 0x100000000ULL + 9);
	fake_rcx = 0x100000000ULL + 9;
	bstream_finish(bs, 0x1600, 1); /* faults in its first iteration */
	ck_assert_int_eq(nrec, 1);
	ck_assert_uint_eq(rec[0].ninsns, 0);
	ck_assert_int_eq(rec[0].rep_part, RB_REP_RAN | RB_REP_LEFT);
	ck_assert_uint_eq(rec[0].rep_iters, 0);
	ck_assert_uint_eq(rec[0].rep_count, 9);
	struct bstream_rep_held h = bstream_rep_take(bs, 0x1601);
	ck_assert_int_eq(h.valid, 0); /* not where the thread stopped: dropped */
	bstream_set_next_run_start(bs, 1);
	bstream_tb(bs, 0x1600, 3);
	bstream_rep(bs, 0x1600, 4);
	fake_rcx = 0;
	bstream_tb(bs, 0x1603, 1);
	bstream_finish(bs, 0x2000, 0);
	ck_assert_int_eq(rec[1].rep_part, RB_REP_RAN);
	ck_assert_uint_eq(rec[1].rep_count, 4);
	ck_assert_uint_eq(rec[1].rep_iters, 4);
	/* given back, but the thread goes on at another address first */
	bstream_rep_give(bs, (struct bstream_rep_held){0x1600, 9, 1});
	bstream_tb(bs, 0x1000, 9);
	ck_assert_int_eq(bstream_rep_resuming(bs, 0x1600), 0);
	bstream_finish(bs, 0x1005, 0);
}
END_TEST

/* Stopped at a REP in progress without a fault (Ctrl-C at a further iteration): it
 * did not retire either. */
START_TEST(rep_stopped_in_the_middle)
{
	bstream_tb(bs, 0x1200, 7);
	bstream_rep(bs, 0x1205, 5);
	bstream_tb(bs, 0x1205, 2);
	bstream_rep(bs, 0x1205, 4);
	fake_rcx = 4;
	bstream_finish(bs, 0x1205, 0);
	ck_assert_int_eq(nrec, 1);
	expect(0, 0x1200, 1, BK_NONE, 0, 0x1205, 1);
	ck_assert_int_eq(rec[0].rep_part, RB_REP_RAN | RB_REP_LEFT);
	ck_assert_uint_eq(rec[0].rep_iters, 1);
}
END_TEST

START_TEST(cut_after_emulated_instruction)
{
	bstream_tb(bs, 0x1400, 7);
	ck_assert_uint_eq(bstream_insns_before(bs, 0x1402), 2);
	bstream_cut(bs, 0x1404); /* rdtsc emulated, execution resumes after it */
	bstream_tb(bs, 0x1404, 3);
	bstream_finish(bs, 0x2000, 0);
	expect(0, 0x1400, 3, BK_NONE, 0, 0x1404, 1);
	expect(1, 0x1404, 3, BK_RET, 1, 0x2000, 0);
}
END_TEST

START_TEST(fault_mid_block)
{
	bstream_tb(bs, 0x1000, 9);
	bstream_finish(bs, 0x1005, 1); /* dec faulted: only the mov retired */
	ck_assert_int_eq(nrec, 1);
	expect(0, 0x1000, 1, BK_NONE, 0, 0x1005, 1);
	ck_assert_uint_eq(bstream_insns(bs), 1);
}
END_TEST

START_TEST(fault_on_first_instruction)
{
	bstream_tb(bs, 0x1000, 9);
	bstream_finish(bs, 0x1000, 1);
	ck_assert_int_eq(nrec, 0);
	ck_assert_uint_eq(bstream_insns(bs), 0);
}
END_TEST

START_TEST(exit_syscall_retires)
{
	bstream_tb(bs, 0x1500, 7);
	bstream_finish(bs, 0x1507, 0);
	expect(0, 0x1500, 2, BK_SYSCALL, 0, 0x1507, 1);
}
END_TEST

START_TEST(emulator_past_terminator_is_an_error)
{
	ck_assert_int_lt(bstream_tb(bs, 0x1009, 8), 0); /* a TB cannot run past a ret */
}
END_TEST

/* x86 conditions from the SDM (vol. 2, Jcc): flags CF=0 PF=2 ZF=6 SF=7 OF=11. */
struct cond_case {
	int line, cond;
	uint64_t flags, rcx;
	int taken;
};

#define CF (1u << 0)
#define PF (1u << 2)
#define ZF (1u << 6)
#define SF (1u << 7)
#define OF (1u << 11)
static const struct cond_case cond_cases[] = {
	{__LINE__, CC_O, OF, 0, 1}, {__LINE__, CC_O, 0, 0, 0}, {__LINE__, CC_NO, 0, 0, 1},
	{__LINE__, CC_B, CF, 0, 1}, {__LINE__, CC_AE, CF, 0, 0}, {__LINE__, CC_E, ZF, 0, 1},
	{__LINE__, CC_NE, ZF, 0, 0}, {__LINE__, CC_BE, ZF, 0, 1}, {__LINE__, CC_BE, 0, 0, 0},
	{__LINE__, CC_A, 0, 0, 1}, {__LINE__, CC_A, CF, 0, 0}, {__LINE__, CC_S, SF, 0, 1},
	{__LINE__, CC_NS, SF, 0, 0}, {__LINE__, CC_P, PF, 0, 1}, {__LINE__, CC_NP, PF, 0, 0},
	{__LINE__, CC_L, SF, 0, 1}, {__LINE__, CC_L, SF | OF, 0, 0}, {__LINE__, CC_GE, SF | OF, 0, 1},
	{__LINE__, CC_LE, ZF, 0, 1}, {__LINE__, CC_LE, OF, 0, 1}, {__LINE__, CC_LE, 0, 0, 0},
	{__LINE__, CC_G, 0, 0, 1}, {__LINE__, CC_G, SF, 0, 0}, {__LINE__, CC_G, ZF, 0, 0},
	{__LINE__, CC_LOOP, 0, 1, 1}, {__LINE__, CC_LOOP, 0, 0, 0}, {__LINE__, CC_LOOPE, ZF, 3, 1},
	{__LINE__, CC_LOOPE, 0, 3, 0}, {__LINE__, CC_LOOPNE, 0, 3, 1}, {__LINE__, CC_LOOPNE, ZF, 3, 0},
	{__LINE__, CC_JRCXZ, 0, 0, 1}, {__LINE__, CC_JRCXZ, 0, 1ULL << 40, 0},
	{__LINE__, CC_JECXZ, 0, 1ULL << 40, 1}, {__LINE__, CC_JCXZ, 0, 0x10000, 1},
	{__LINE__, CC_JCXZ, 0, 0x10001, 0},
};

START_TEST(conditions)
{
	const struct cond_case *c = &cond_cases[_i];
	ck_assert_msg(bstream_cond_taken(c->cond, c->flags, c->rcx) == c->taken, "line %d", c->line);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("blockstream");
	TCase *tc = tcase_create("reconstruction");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, loop_and_return);
	tcase_add_test(tc, tb_cut_short);
	tcase_add_test(tc, branch_to_own_fallthrough);
	tcase_add_test(tc, jmp_and_call_to_next_are_taken);
	tcase_add_test(tc, stack_pointer_after_blocks);
	tcase_add_test(tc, rep_iterations);
	tcase_add_test(tc, repne_stops_early);
	tcase_add_test(tc, rep_with_ecx_counts_32_bits);
	tcase_add_test(tc, rep_with_zero_count);
	tcase_add_test(tc, rep_left_and_resumed);
	tcase_add_test(tc, rep_left_for_good);
	tcase_add_test(tc, rep_stopped_in_the_middle);
	tcase_add_test(tc, cut_after_emulated_instruction);
	tcase_add_test(tc, fault_mid_block);
	tcase_add_test(tc, fault_on_first_instruction);
	tcase_add_test(tc, exit_syscall_retires);
	tcase_add_test(tc, emulator_past_terminator_is_an_error);
	suite_add_tcase(s, tc);
	tc = tcase_create("conditions");
	tcase_add_loop_test(tc, conditions, 0, (int)(sizeof(cond_cases) / sizeof(cond_cases[0])));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
