/* Exact per-function costs (profiler/func_costs.h) fed hand-made retired
 * blocks: self and inclusive instructions, cycles, branches and branch-misses,
 * and calls, through straight calls, recursion, a tail call, a longjmp, two
 * threads, a run that falls from one function into the next, and frames still
 * open at the end. Every expected figure is added up by hand from the blocks
 * each test retires (the comments show the sums); the clock is a fake whose
 * totals the test advances before each block, as the timing model's advance
 * while it takes the block. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/symtab.h"
#include "profiler/func_costs.h"
#include "tests/unit/run_suite.h"

/* Four functions of 0x100 bytes each, back to back (a run can fall from one
 * into the next), with exact sizes so that the symbol table covers exactly
 * them. Their addresses come from this program's own symbol table, as
 * check_common reads it: a symbol table has no call to add one symbol, and
 * the costs never read the code, so none of these bytes ever runs. */
__asm__(".pushsection .text\n"
	".p2align 8\n"
	".type fct_main, @function\n"
	"fct_main: .skip 0x100, 0xcc\n"
	".size fct_main, 0x100\n"
	".type fct_f, @function\n"
	"fct_f: .skip 0x100, 0xcc\n"
	".size fct_f, 0x100\n"
	".type fct_g, @function\n"
	"fct_g: .skip 0x100, 0xcc\n"
	".size fct_g, 0x100\n"
	".type fct_h, @function\n"
	"fct_h: .skip 0x100, 0xcc\n"
	".size fct_h, 0x100\n"
	".popsection\n");

static struct symtab *st;
static uint64_t M, F, G, H; /* the four functions' first instructions */

/* The fake clock: the timing model's running totals. They do not start at 0, so
 * that costs taken as totals instead of increases show. */
static uint64_t now_cycles, now_misses;

static uint64_t clock_cycles(void *ctx)
{
	(void)ctx;
	return now_cycles;
}

static uint64_t clock_misses(void *ctx)
{
	(void)ctx;
	return now_misses;
}

static struct func_costs *fc;
static struct block_sink sink;

/* Code runs made by hand: every instruction 4 bytes long, ids dense as a
 * decode cache gives them. */
#define MAXRUN 32
#define MAXINSN 16
static struct block_info runs[MAXRUN];
static uint16_t offs[MAXRUN][MAXINSN + 1];
static const uint8_t cls[MAXINSN];
static size_t nruns;

static uint64_t sym_addr(const char *name)
{
	for (size_t i = 0; i < symtab_count(st); i++)
		if (strcmp(symtab_at(st, i)->name, name) == 0)
			return symtab_at(st, i)->addr;
	ck_abort_msg("no symbol %s in /proc/self/exe", name);
	return 0;
}

static void setup(void)
{
	ck_assert_int_eq(symtab_load("/proc/self/exe", 0, &st), 0);
	M = sym_addr("fct_main");
	F = sym_addr("fct_f");
	G = sym_addr("fct_g");
	H = sym_addr("fct_h");
	/* the split run's test needs them back to back */
	ck_assert_uint_eq(F, M + 0x100);
	ck_assert_uint_eq(G, F + 0x100);
	ck_assert_uint_eq(H, G + 0x100);
	now_cycles = 1000;
	now_misses = 50;
	nruns = 0;
	fc = func_costs_new(st, (struct fc_clock){clock_cycles, clock_misses, NULL});
	ck_assert_ptr_nonnull(fc);
	sink = func_costs_sink(fc);
}

static void teardown(void)
{
	func_costs_free(fc);
	symtab_free(st);
}

/* A run of n instructions from start, ending in kind (its terminator, the last
 * instruction; target: a direct branch's). */
static const struct block_info *run(uint64_t start, uint16_t n, uint8_t kind, uint64_t target)
{
	ck_assert_uint_lt(nruns, MAXRUN);
	ck_assert_uint_le(n, MAXINSN);
	ck_assert_uint_gt(n, 0);
	uint16_t *off = offs[nruns];
	for (uint16_t i = 0; i <= n; i++)
		off[i] = (uint16_t)(4 * i);
	struct block_info *bi = &runs[nruns];
	*bi = (struct block_info){.start = start,
				  .end = start + 4u * n,
				  .term = start + 4u * (n - 1),
				  .target = target,
				  .id = (uint32_t)nruns,
				  .ninsns = n,
				  .kind = kind,
				  .term_len = 4,
				  .off = off,
				  .cls = cls};
	nruns++;
	return bi;
}

/* The whole of run bi retires on thread tid and goes on at next; the timing
 * model took cycles and mispredicted misses branches for it. */
static void retire(uint32_t tid, const struct block_info *bi, uint64_t next, uint64_t cycles, uint64_t misses)
{
	now_cycles += cycles;
	now_misses += misses;
	struct retired_block rb = {.info = bi,
				   .next = next,
				   .tid = tid,
				   .ninsns = bi->ninsns,
				   .kind = bi->kind,
				   .taken = next != bi->end,
				   .run_start = 1};
	sink.retire(sink.ctx, &rb);
}

/* ---- what came out ---- */

#define COST(i, c, b, m) ((struct fc_cost){{(i), (c), (b), (m)}})

/* The kinds checked: the four a baseline records (pmusim stat --json), the
 * first of enum fc_kind; further kinds (callgrind's) are not these tests'. */
#define NKIND 4
static const char *const kind_name[NKIND] = {"instructions", "cycles", "branches", "branch-misses"};

static const struct fc_func *list;
static size_t nlist;

static const char *fname(uint64_t addr)
{
	return addr == M ? "main" : addr == F ? "f" : addr == G ? "g" : addr == H ? "h" : addr ? "?" : "[none]";
}

/* Ends the run and takes the list: exactly nfuncs functions ran. */
static void finish(size_t nfuncs)
{
	func_costs_finish(fc);
	ck_assert_int_eq(func_costs_error(fc), 0);
	list = func_costs_list(fc, &nlist);
	ck_assert_uint_eq(nlist, nfuncs);
	for (size_t i = 1; i < nlist; i++)
		ck_assert_uint_lt(list[i - 1].addr, list[i].addr);
}

static const struct fc_func *func_at(uint64_t addr)
{
	for (size_t i = 0; i < nlist; i++)
		if (list[i].addr == addr)
			return &list[i];
	ck_abort_msg("function %s (%#llx) is not in the list", fname(addr), (unsigned long long)addr);
	return NULL;
}

/* The function at addr has these calls, self and inclusive costs (line: the
 * test's, for the message). */
static void expect_at(int line, uint64_t addr, uint64_t calls, struct fc_cost self, struct fc_cost incl)
{
	const struct fc_func *f = func_at(addr);
	ck_assert_msg(f->calls == calls, "line %d: %s calls %llu, expected %llu", line, fname(addr),
		      (unsigned long long)f->calls, (unsigned long long)calls);
	for (int k = 0; k < NKIND; k++) {
		ck_assert_msg(f->self.v[k] == self.v[k], "line %d: %s self %s %llu, expected %llu", line, fname(addr),
			      kind_name[k], (unsigned long long)f->self.v[k], (unsigned long long)self.v[k]);
		ck_assert_msg(f->incl.v[k] == incl.v[k], "line %d: %s inclusive %s %llu, expected %llu", line,
			      fname(addr), kind_name[k], (unsigned long long)f->incl.v[k],
			      (unsigned long long)incl.v[k]);
	}
}
#define EXPECT(addr, calls, self, incl) expect_at(__LINE__, (addr), (calls), (self), (incl))

/* Self over every function adds up to everything every thread retired. */
static void expect_self_sums_to(struct fc_cost total)
{
	for (int k = 0; k < NKIND; k++) {
		uint64_t sum = 0;
		for (size_t i = 0; i < nlist; i++)
			sum += list[i].self.v[k];
		ck_assert_msg(sum == total.v[k], "self %s adds up to %llu, expected %llu", kind_name[k],
			      (unsigned long long)sum, (unsigned long long)total.v[k]);
	}
}

/* ---- the tests ---- */

/* main calls f twice, f calls g each time; every block on thread 1.
 *   block                                   main          f             g
 *   1 main M    3 insns call f   10c 1m    3,10,1,1
 *   2 f    F    2 insns call g   20c               2,20,1,0
 *   3 g    G    4 insns ret F+8  30c 2m                          4,30,1,2
 *   4 f    F+8  1 insn  ret M+12  5c               1, 5,1,0
 *   5 main M+12 2 insns call f    7c   2, 7,1,0
 *   6 = 2, 7 = 3, 8 = 4
 *   9 main M+20 2 insns syscall   3c   2, 3,0,0 (a syscall is no branch)
 * self: main 7,20,2,1; f 2*(3,25,2,0) = 6,50,4,0; g 2*(4,30,1,2) = 8,60,2,4;
 * all: 21,130,8,5. Inclusive: g its own; f blocks 2..4 twice = 2*(7,55,3,2);
 * main everything. The call instruction itself is the caller's, before the
 * callee's frame begins. */
START_TEST(straight_calls_charge_self_inclusive_and_calls)
{
	const struct block_info *a1 = run(M, 3, BK_CALL, F), *a2 = run(M + 12, 2, BK_CALL, F);
	const struct block_info *a3 = run(M + 20, 2, BK_SYSCALL, 0);
	const struct block_info *b1 = run(F, 2, BK_CALL, G), *b2 = run(F + 8, 1, BK_RET, 0);
	const struct block_info *c1 = run(G, 4, BK_RET, 0);
	retire(1, a1, F, 10, 1);
	retire(1, b1, G, 20, 0);
	retire(1, c1, F + 8, 30, 2);
	retire(1, b2, M + 12, 5, 0);
	retire(1, a2, F, 7, 0);
	retire(1, b1, G, 20, 0);
	retire(1, c1, F + 8, 30, 2);
	retire(1, b2, M + 20, 5, 0);
	retire(1, a3, M + 28, 3, 0);
	finish(3);
	EXPECT(M, 0, COST(7, 20, 2, 1), COST(21, 130, 8, 5));
	EXPECT(F, 2, COST(6, 50, 4, 0), COST(14, 110, 6, 4));
	EXPECT(G, 2, COST(8, 60, 2, 4), COST(8, 60, 2, 4));
	expect_self_sums_to(COST(21, 130, 8, 5));
}
END_TEST

/* A call to g's middle (G+0x40, as through a pointer to a local label) opens a
 * frame of g but is no call of g: the truth counts calls to a function's first
 * instruction only. A later call to G is.
 *   1 main M    2 insns call G+0x40  4c   main 2,4,1,0
 *   2 g    G+40 1 insn  ret M+8      6c   g    1,6,1,0
 *   3 main M+8  1 insn  call G       8c   main 1,8,1,0
 *   4 g    G    2 insns ret M+12    10c 1m g    2,10,1,1
 *   5 main M+12 1 insn  syscall      1c   main 1,1,0,0
 * main self 4,13,2,0; g self = inclusive 3,16,2,1; all 7,29,4,1. */
START_TEST(a_call_into_a_function_middle_is_no_call)
{
	const struct block_info *a1 = run(M, 2, BK_CALL, G + 0x40), *a2 = run(M + 8, 1, BK_CALL, G);
	const struct block_info *a3 = run(M + 12, 1, BK_SYSCALL, 0);
	const struct block_info *mid = run(G + 0x40, 1, BK_RET, 0), *top = run(G, 2, BK_RET, 0);
	retire(1, a1, G + 0x40, 4, 0);
	retire(1, mid, M + 8, 6, 0);
	retire(1, a2, G, 8, 0);
	retire(1, top, M + 12, 10, 1);
	retire(1, a3, M + 16, 1, 0);
	finish(2);
	EXPECT(M, 0, COST(4, 13, 2, 0), COST(7, 29, 4, 1));
	EXPECT(G, 1, COST(3, 16, 2, 1), COST(3, 16, 2, 1));
	expect_self_sums_to(COST(7, 29, 4, 1));
}
END_TEST

/* f calls itself twice (three frames of f open at once):
 *   f:  F    2 insns jcc  (not taken: F+8; taken: F+20, the base case)
 *       F+8  1 insn  call F
 *       F+12 2 insns ret           (after the recursive call)
 *       F+20 1 insn  ret           (base case)
 *   1 main M  2 insns call F  1c        main 2,1,1,0
 *   2 f jcc not taken         3c        f 2,3,1,0
 *   3 f call F                4c        f 1,4,1,0
 *   4 = 2, 5 = 3
 *   6 f jcc taken to F+20     5c 1m     f 2,5,1,1
 *   7 f F+20 ret F+12         6c        f 1,6,1,0
 *   8 f F+12 ret F+12         7c        f 2,7,1,0
 *   9 f F+12 ret M+8          7c        f 2,7,1,0
 *  10 main M+8 1 insn syscall 2c        main 1,2,0,0
 * f self: insns 2+1+2+1+2+1+2+2 = 13, cycles 3+4+3+4+5+6+7+7 = 39, 8
 * branches, 1 miss. Its inclusive is the time f was on the stack, blocks 2..9,
 * counted once: the same 13,39,8,1 (not three times as much). main self 3,3,1,0,
 * inclusive all 16,42,9,1. f's calls: 3 (main's and its own two). */
START_TEST(recursion_counts_the_outermost_frame_once)
{
	const struct block_info *a1 = run(M, 2, BK_CALL, F), *a2 = run(M + 8, 1, BK_SYSCALL, 0);
	const struct block_info *jcc = run(F, 2, BK_COND, F + 20), *call = run(F + 8, 1, BK_CALL, F);
	const struct block_info *after = run(F + 12, 2, BK_RET, 0), *base = run(F + 20, 1, BK_RET, 0);
	retire(1, a1, F, 1, 0);
	retire(1, jcc, F + 8, 3, 0);
	retire(1, call, F, 4, 0);
	retire(1, jcc, F + 8, 3, 0);
	retire(1, call, F, 4, 0);
	retire(1, jcc, F + 20, 5, 1);
	retire(1, base, F + 12, 6, 0);
	retire(1, after, F + 12, 7, 0);
	retire(1, after, M + 8, 7, 0);
	retire(1, a2, M + 12, 2, 0);
	finish(2);
	EXPECT(M, 0, COST(3, 3, 1, 0), COST(16, 42, 9, 1));
	EXPECT(F, 3, COST(13, 39, 8, 1), COST(13, 39, 8, 1));
	expect_self_sums_to(COST(16, 42, 9, 1));
}
END_TEST

/* main calls f; f jumps inside itself, then jumps to g's first instruction (a
 * tail call); g returns straight to main.
 *   1 main M     2 insns call F       10c     main 2,10,1,0
 *   2 f    F     1 insn  jmp F+16      2c     f 1,2,1,0   (inside f: f's frame stays)
 *   3 f    F+16  3 insns jmp G        20c 1m  f 3,20,1,1
 *   4 g    G     2 insns ret M+8      30c     g 2,30,1,0
 *   5 main M+8   1 insn  syscall       5c     main 1,5,0,0
 * g takes f's frame: f's closes when g begins (inclusive = f's blocks 2..3,
 * 4,22,2,1), g's runs to the return (2,30,1,0), which pops it (main's costs
 * after it are not g's). A jump is no call: g's calls 0. All 9,67,4,1. */
START_TEST(a_tail_call_replaces_the_frame)
{
	const struct block_info *a1 = run(M, 2, BK_CALL, F), *a2 = run(M + 8, 1, BK_SYSCALL, 0);
	const struct block_info *inside = run(F, 1, BK_JMP, F + 16), *tail = run(F + 16, 3, BK_JMP, G);
	const struct block_info *g1 = run(G, 2, BK_RET, 0);
	retire(1, a1, F, 10, 0);
	retire(1, inside, F + 16, 2, 0);
	retire(1, tail, G, 20, 1);
	retire(1, g1, M + 8, 30, 0);
	retire(1, a2, M + 12, 5, 0);
	finish(3);
	EXPECT(M, 0, COST(3, 15, 1, 0), COST(9, 67, 4, 1));
	EXPECT(F, 1, COST(4, 22, 2, 1), COST(4, 22, 2, 1));
	EXPECT(G, 0, COST(2, 30, 1, 0), COST(2, 30, 1, 0));
	expect_self_sums_to(COST(9, 67, 4, 1));
}
END_TEST

/* A return to a frame deeper than the newest (longjmp) pops every frame above
 * it. main calls f (return address M+8); f calls main's middle M+0x40 (a second,
 * inner frame of main: no call of main); that calls g; g returns to M+8, the
 * return address of the OUTER frame of f. f's frame must close there: had only
 * g's frame gone, the newest frame would be main's inner one, the run at M+8 in
 * main would pop nothing, and f would stay open (inclusive too large) to the end.
 *   1 main M      2 insns call F        1c     main 2,1,1,0
 *   2 f    F      2 insns call M+0x40   2c     f    2,2,1,0
 *   3 main M+0x40 2 insns call G        3c     main 2,3,1,0
 *   4 g    G      3 insns ret M+8       4c 1m  g    3,4,1,1
 *   5 main M+8    2 insns syscall       5c     main 2,5,0,0
 * f inclusive: blocks 2..4 = 7,9,3,1; g 3,4,1,1; main all 11,15,4,1 (its inner
 * frame is not its outermost: counted once). main self 6,9,2,0. */
START_TEST(a_longjmp_return_pops_every_frame_above_its_target)
{
	const struct block_info *a1 = run(M, 2, BK_CALL, F), *a2 = run(M + 8, 2, BK_SYSCALL, 0);
	const struct block_info *inner = run(M + 0x40, 2, BK_CALL, G);
	const struct block_info *f1 = run(F, 2, BK_CALL, M + 0x40), *g1 = run(G, 3, BK_RET, 0);
	retire(1, a1, F, 1, 0);
	retire(1, f1, M + 0x40, 2, 0);
	retire(1, inner, G, 3, 0);
	retire(1, g1, M + 8, 4, 1);
	retire(1, a2, M + 16, 5, 0);
	finish(3);
	EXPECT(M, 0, COST(6, 9, 2, 0), COST(11, 15, 4, 1));
	EXPECT(F, 1, COST(2, 2, 1, 0), COST(7, 9, 3, 1));
	EXPECT(G, 1, COST(3, 4, 1, 1), COST(3, 4, 1, 1));
	expect_self_sums_to(COST(11, 15, 4, 1));
}
END_TEST

/* A jump back into a function below on the stack (a longjmp by jump) pops
 * down to it; a run in a function reached by no call (a signal handler) opens
 * a frame of it, which the next run in main below closes.
 *   1 main M      2 insns call F        1c     main 2,1,1,0
 *   2 f    F      2 insns call G        2c     f    2,2,1,0
 *   3 g    G      3 insns jmp* M+0x20   3c 1m  g    3,3,1,1
 *   4 main M+0x20 1 insn  syscall       4c     main 1,4,0,0
 *   5 h    H      2 insns ret M+0x24    5c     h    2,5,1,0   (nobody called h)
 *   6 main M+0x24 1 insn  syscall       6c     main 1,6,0,0
 * g inclusive 3,3,1,1; f 5,5,2,1 (blocks 2..3); h 2,5,1,0; main self
 * 4,11,1,0, inclusive all 11,21,4,1. Calls: f 1, g 1, h 0. */
START_TEST(a_jump_down_the_stack_pops_and_a_handler_pushes)
{
	const struct block_info *a1 = run(M, 2, BK_CALL, F), *f1 = run(F, 2, BK_CALL, G);
	const struct block_info *g1 = run(G, 3, BK_JMP_IND, 0), *a2 = run(M + 0x20, 1, BK_SYSCALL, 0);
	const struct block_info *h1 = run(H, 2, BK_RET, 0), *a3 = run(M + 0x24, 1, BK_SYSCALL, 0);
	retire(1, a1, F, 1, 0);
	retire(1, f1, G, 2, 0);
	retire(1, g1, M + 0x20, 3, 1);
	retire(1, a2, M + 0x24, 4, 0);
	retire(1, h1, M + 0x24, 5, 0);
	retire(1, a3, M + 0x28, 6, 0);
	finish(4);
	EXPECT(M, 0, COST(4, 11, 1, 0), COST(11, 21, 4, 1));
	EXPECT(F, 1, COST(2, 2, 1, 0), COST(5, 5, 2, 1));
	EXPECT(G, 1, COST(3, 3, 1, 1), COST(3, 3, 1, 1));
	EXPECT(H, 0, COST(2, 5, 1, 0), COST(2, 5, 1, 0));
	expect_self_sums_to(COST(11, 21, 4, 1));
}
END_TEST

/* Thread 1 runs main, which calls f; thread 2 runs g, which calls f too, while
 * thread 1 is still in f: the blocks alternate.
 *   1 t1 main M    2 insns call F     1c     main 2,1,1,0
 *   2 t2 g    G    3 insns call F    10c     g    3,10,1,0
 *   3 t1 f    F    2 insns ret M+8    2c     f    2,2,1,0
 *   4 t2 f    F    2 insns ret G+12  20c 2m  f    2,20,1,2
 *   5 t1 main M+8  1 insn  syscall    3c     main 1,3,0,0
 *   6 t2 g    G+12 1 insn  syscall   30c     g    1,30,0,0
 * Thread 1's total 5,6,2,0; thread 2's 6,60,2,2. Each thread's f frame is its
 * outermost on its own stack: both count, each with its own thread's costs only
 * (2,2,1,0 + 2,20,1,2 = 4,22,2,2), though thread 2's call came between
 * thread 1's call and return. main's inclusive is thread 1's total, g's thread
 * 2's: another thread's blocks are in neither. */
START_TEST(threads_keep_separate_stacks_and_totals)
{
	const struct block_info *a1 = run(M, 2, BK_CALL, F), *a2 = run(M + 8, 1, BK_SYSCALL, 0);
	const struct block_info *g1 = run(G, 3, BK_CALL, F), *g2 = run(G + 12, 1, BK_SYSCALL, 0);
	const struct block_info *f1 = run(F, 2, BK_RET, 0);
	retire(1, a1, F, 1, 0);
	retire(2, g1, F, 10, 0);
	retire(1, f1, M + 8, 2, 0);
	retire(2, f1, G + 12, 20, 2);
	retire(1, a2, M + 12, 3, 0);
	retire(2, g2, G + 16, 30, 0);
	finish(3);
	EXPECT(M, 0, COST(3, 4, 1, 0), COST(5, 6, 2, 0));
	EXPECT(F, 2, COST(4, 22, 2, 2), COST(4, 22, 2, 2));
	EXPECT(G, 0, COST(4, 40, 1, 0), COST(6, 60, 2, 2));
	expect_self_sums_to(COST(11, 66, 4, 2));
}
END_TEST

/* A run from M+0xf0 of 6 instructions: 4 in main (M+0xf0..M+0xfc), then 2 in f
 * (F, F+4, the terminator a jcc not taken), as code without a return falls into
 * the next function. Then f's run F+8, 2 instructions, a syscall.
 *   1 M+0xf0 6 insns jcc     12c 1m   main 4 insns; f 2 insns, 12c, 1 branch, 1 miss
 *   2 F+8    2 insns syscall  3c      f 2,3,0,0
 * Self: main 4,0,0,0 (the cycles go with the terminator); f 4,15,1,1. All
 * 8,15,1,1. main is the thread's first function: inclusive all. */
START_TEST(a_run_falling_into_the_next_function_is_split)
{
	const struct block_info *fall = run(M + 0xf0, 6, BK_COND, M + 0x10);
	const struct block_info *f2 = run(F + 8, 2, BK_SYSCALL, 0);
	retire(1, fall, F + 8, 12, 1);
	retire(1, f2, F + 16, 3, 0);
	finish(2);
	const struct fc_func *m = func_at(M), *f = func_at(F);
	ck_assert_uint_eq(m->self.v[FC_INSNS], 4);
	ck_assert_uint_eq(m->self.v[FC_CYCLES], 0);
	ck_assert_uint_eq(m->self.v[FC_BRANCHES], 0);
	ck_assert_uint_eq(m->self.v[FC_MISSES], 0);
	ck_assert_uint_eq(f->self.v[FC_INSNS], 4);
	ck_assert_uint_eq(f->self.v[FC_CYCLES], 15);
	ck_assert_uint_eq(f->self.v[FC_BRANCHES], 1);
	ck_assert_uint_eq(f->self.v[FC_MISSES], 1);
	ck_assert_uint_eq(m->calls + f->calls, 0);
	for (int k = 0; k < NKIND; k++)
		ck_assert_uint_eq(m->incl.v[k], COST(8, 15, 1, 1).v[k]);
	expect_self_sums_to(COST(8, 15, 1, 1));
}
END_TEST

/* The same split run: f's frame, opened where the run falls into f, must hold
 * f's own 2 instructions of that run (inclusive >= self, as the header says):
 * f inclusive 4,15,1,1. */
START_TEST(a_split_run_keeps_inclusive_at_least_self)
{
	const struct block_info *fall = run(M + 0xf0, 6, BK_COND, M + 0x10);
	const struct block_info *f2 = run(F + 8, 2, BK_SYSCALL, 0);
	retire(1, fall, F + 8, 12, 1);
	retire(1, f2, F + 16, 3, 0);
	finish(2);
	EXPECT(M, 0, COST(4, 0, 0, 0), COST(8, 15, 1, 1));
	EXPECT(F, 0, COST(4, 15, 1, 1), COST(4, 15, 1, 1));
}
END_TEST

/* The thread stops deep in g (the run cut: no terminator retired, no branch):
 * func_costs_finish closes g's, f's and main's frames at the end.
 *   1 main M     2 insns call F     5c     main 2,5,1,0
 *   2 f    F     3 insns call G     7c 1m  f    3,7,1,1
 *   3 g    G     4 insns jcc G+16  11c     g    4,11,1,0
 *   4 g    G+16  2 of 3 insns, cut 13c     g    2,13,0,0
 * g inclusive 6,24,1,0; f 9,31,2,1; main all 11,36,3,1. */
START_TEST(finish_closes_the_frames_still_open)
{
	const struct block_info *a1 = run(M, 2, BK_CALL, F), *f1 = run(F, 3, BK_CALL, G);
	const struct block_info *g1 = run(G, 4, BK_COND, G + 16), *g2 = run(G + 16, 3, BK_RET, 0);
	retire(1, a1, F, 5, 0);
	retire(1, f1, G, 7, 1);
	retire(1, g1, G + 16, 11, 0);
	now_cycles += 13;
	struct retired_block cut = {.info = g2, .next = G + 24, .tid = 1, .ninsns = 2, .kind = BK_NONE};
	sink.retire(sink.ctx, &cut);
	finish(3);
	EXPECT(M, 0, COST(2, 5, 1, 0), COST(11, 36, 3, 1));
	EXPECT(F, 1, COST(3, 7, 1, 1), COST(9, 31, 2, 1));
	EXPECT(G, 1, COST(6, 24, 1, 0), COST(6, 24, 1, 0));
	expect_self_sums_to(COST(11, 36, 3, 1));
}
END_TEST

/* Code no symbol covers (address 16, as check_common finds none there) is the
 * function of address 0, listed first.
 *   1 [none] 0x10  2 insns call M   3c    [none] 2,3,1,0
 *   2 main   M     1 insn  ret 0x18 4c    main   1,4,1,0
 *   3 [none] 0x18  1 insn  syscall  5c    [none] 1,5,0,0 */
START_TEST(code_outside_every_symbol_is_address_0_listed_first)
{
	ck_assert_ptr_null(symtab_lookup(st, 0x10));
	const struct block_info *o1 = run(0x10, 2, BK_CALL, M), *o2 = run(0x18, 1, BK_SYSCALL, 0);
	const struct block_info *m1 = run(M, 1, BK_RET, 0);
	retire(1, o1, M, 3, 0);
	retire(1, m1, 0x18, 4, 0);
	retire(1, o2, 0x1c, 5, 0);
	finish(2);
	ck_assert_uint_eq(list[0].addr, 0);
	EXPECT(0, 0, COST(3, 8, 1, 0), COST(4, 12, 2, 0));
	EXPECT(M, 1, COST(1, 4, 1, 0), COST(1, 4, 1, 0));
}
END_TEST

/* A clock without functions reads 0: instructions and branches still count,
 * cycles and misses stay 0. */
START_TEST(a_clock_without_functions_counts_no_cycles)
{
	func_costs_free(fc);
	fc = func_costs_new(st, (struct fc_clock){NULL, NULL, NULL});
	ck_assert_ptr_nonnull(fc);
	sink = func_costs_sink(fc);
	const struct block_info *a1 = run(M, 2, BK_CALL, F), *f1 = run(F, 3, BK_RET, 0);
	retire(1, a1, F, 10, 1);
	retire(1, f1, M + 8, 10, 1);
	finish(2);
	EXPECT(M, 0, COST(2, 0, 1, 0), COST(5, 0, 2, 0));
	EXPECT(F, 1, COST(3, 0, 1, 0), COST(3, 0, 1, 0));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("func_costs");
	TCase *tc = tcase_create("func_costs");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, straight_calls_charge_self_inclusive_and_calls);
	tcase_add_test(tc, a_call_into_a_function_middle_is_no_call);
	tcase_add_test(tc, recursion_counts_the_outermost_frame_once);
	tcase_add_test(tc, a_tail_call_replaces_the_frame);
	tcase_add_test(tc, a_longjmp_return_pops_every_frame_above_its_target);
	tcase_add_test(tc, a_jump_down_the_stack_pops_and_a_handler_pushes);
	tcase_add_test(tc, threads_keep_separate_stacks_and_totals);
	tcase_add_test(tc, a_run_falling_into_the_next_function_is_split);
	tcase_add_test(tc, a_split_run_keeps_inclusive_at_least_self);
	tcase_add_test(tc, finish_closes_the_frames_still_open);
	tcase_add_test(tc, code_outside_every_symbol_is_address_0_listed_first);
	tcase_add_test(tc, a_clock_without_functions_counts_no_cycles);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
