/* The thread-stack unit (pmu_model/tstack.h) fed by hand-made retired blocks:
 * push on call, pop on return, a return with no entry, entry/exit history,
 * overflow into a larger area with every entry kept, areas switching with the
 * running thread, markers and the tail-call heuristic, the control bit. */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "pmu_model/tstack.h"
#include "tests/unit/run_suite.h"

/* C1 at 0x401000: "call 0x402000" (returns to 0x401005); C2 at 0x402000: "call
 * *rax" (returns to 0x402002); R at 0x403000: "ret"; J at 0x404000: "jmp
 * 0x405000" (a tail call when 0x405000 is a function entry); X: a marked jump. */
static const uint16_t off5[] = {0, 5}, off2[] = {0, 2}, off1[] = {0, 1};
static const uint8_t cls[] = {IC_BRANCH};
static const struct block_info C1 = {0x401000, 0x401005, 0x401000, 0x402000, 0, 1, BK_CALL, 0, 0, 5, off5, cls};
static const struct block_info C2 = {0x402000, 0x402002, 0x402000, 0, 1, 1, BK_CALL_IND, 0, 0, 2, off2, cls};
static const struct block_info R = {0x403000, 0x403001, 0x403000, 0, 2, 1, BK_RET, 0, 0, 1, off1, cls};
static const struct block_info J = {0x404000, 0x404005, 0x404000, 0x405000, 3, 1, BK_JMP, 0, 0, 5, off5, cls};
static const struct block_info X = {0x406000, 0x406002, 0x406000, 0, 4, 1, BK_JMP_IND, 0, 0, 2, off2, cls};

static struct tstack_unit *mk(enum tstack_mode mode, uint64_t entries)
{
	struct tstack_config cfg = {mode, entries, 1};
	struct tstack_unit *u;
	ck_assert_int_eq(tstack_new(&cfg, (struct tstack_os){0}, &u), 0);
	return u;
}

static void feed_sp(struct tstack_unit *u, const struct block_info *bi, uint32_t tid, uint64_t next,
		    int new_context, uint64_t sp)
{
	struct retired_block rb = {.info = bi, .next = next, .tid = tid, .ninsns = bi->ninsns, .kind = bi->kind,
				   .taken = 1, .run_start = 1, .new_context = (uint8_t)new_context, .sp = sp};
	struct block_sink s = tstack_sink(u);
	s.retire(s.ctx, &rb);
}

static void feed(struct tstack_unit *u, const struct block_info *bi, uint32_t tid, uint64_t next, int new_context)
{
	feed_sp(u, bi, tid, next, new_context, 0);
}

START_TEST(calls_push_returns_pop)
{
	struct tstack_unit *u = mk(TSTACK_STACK, 16);
	feed(u, &C1, 7, 0x402000, 0);
	feed(u, &C2, 7, 0x409000, 0);
	const struct tstack_area *a = tstack_area(u, 7);
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(a->top, 2);
	ck_assert_uint_eq(a->mem[0].callee, 0x402000);
	ck_assert_uint_eq(a->mem[0].ret, 0x401005);
	ck_assert_uint_eq(a->mem[1].callee, 0x409000);
	ck_assert_uint_eq(a->mem[1].ret, 0x402002);
	ck_assert_uint_eq(a->mem[1].stamp, 2); /* pushed once both calls had retired */
	feed(u, &R, 7, 0x402002, 0);
	ck_assert_uint_eq(a->top, 1);
	feed(u, &R, 7, 0x401005, 0);
	feed(u, &R, 7, 0x400100, 0); /* a return into frames older than tracking: no-op */
	ck_assert_uint_eq(a->top, 0);
	tstack_free(u);
}
END_TEST

START_TEST(history_mode_appends_entries_and_exits)
{
	struct tstack_unit *u = mk(TSTACK_HISTORY, 16);
	feed(u, &C1, 7, 0x402000, 0);
	feed(u, &R, 7, 0x401005, 0);
	feed(u, &R, 7, 0x400100, 0);
	const struct tstack_area *a = tstack_area(u, 7);
	ck_assert_uint_eq(a->top, 3);
	ck_assert_uint_eq(a->mem[0].stamp & TSTACK_EXIT_BIT, 0);
	ck_assert_uint_eq(a->mem[1].stamp & TSTACK_EXIT_BIT, TSTACK_EXIT_BIT);
	ck_assert_uint_eq(a->mem[2].stamp & TSTACK_EXIT_BIT, TSTACK_EXIT_BIT);
	ck_assert_uint_eq(a->mem[1].callee, 0x403000);
	ck_assert_uint_eq(a->mem[1].ret, 0x401005);
	tstack_free(u);
}
END_TEST

/* 2-entry areas, 10 nested calls: three overflows (2 -> 4 -> 8 -> 16), the
 * start register moves, all 10 entries are there in order. */
START_TEST(overflow_extends_and_copies)
{
	struct tstack_unit *u = mk(TSTACK_STACK, 2);
	for (int i = 0; i < 10; i++)
		feed(u, &C1, 7, 0x500000 + (uint64_t)i, 0);
	const struct tstack_area *a = tstack_area(u, 7);
	ck_assert_uint_eq(tstack_overflows(u), 3);
	ck_assert_uint_eq(a->length, 16);
	ck_assert_uint_eq(a->top, 10);
	for (int i = 0; i < 10; i++)
		ck_assert_uint_eq(a->mem[i].callee, 0x500000 + (uint64_t)i);
	tstack_free(u);
}
END_TEST

/* Two threads: each has its own area; the current-area register follows the
 * running thread; a thread seen for the first time gets a new area. */
START_TEST(areas_follow_context_switches)
{
	struct tstack_unit *u = mk(TSTACK_STACK, 8);
	feed(u, &C1, 7, 0x402000, 0);
	feed(u, &C2, 8, 0x409000, 1);
	feed(u, &C2, 8, 0x40a000, 0);
	ck_assert_uint_eq(tstack_current(u)->tid, 8);
	feed(u, &R, 7, 0x401005, 1);
	ck_assert_uint_eq(tstack_current(u)->tid, 7);
	ck_assert_uint_eq(tstack_nareas(u), 2);
	ck_assert_uint_eq(tstack_area(u, 7)->top, 0);
	ck_assert_uint_eq(tstack_area(u, 8)->top, 2);
	ck_assert_uint_ne(tstack_area(u, 7)->start, tstack_area(u, 8)->start);
	tstack_free(u);
}
END_TEST

/* Markers: a jump marked as call pushes, one marked as return pops; a direct
 * jump to a function entry replaces the top routine (tail call). */
START_TEST(markers_and_tail_calls)
{
	struct tstack_unit *u = mk(TSTACK_STACK, 8);
	ck_assert_int_eq(tstack_add_marker(u, 0x406000, TSTACK_MARK_CALL), 0);
	ck_assert_int_eq(tstack_add_function(u, 0x405000), 0);
	feed(u, &C1, 7, 0x402000, 0);
	feed(u, &J, 7, 0x405000, 0); /* tail call from 0x402000's routine into 0x405000 */
	const struct tstack_area *a = tstack_area(u, 7);
	ck_assert_uint_eq(a->top, 1);
	ck_assert_uint_eq(a->mem[0].callee, 0x405000);
	ck_assert_uint_eq(a->mem[0].ret, 0x401005);
	feed(u, &X, 7, 0x407000, 0); /* push+ret style entry, marked */
	ck_assert_uint_eq(a->top, 2);
	ck_assert_uint_eq(a->mem[1].callee, 0x407000);
	tstack_free(u);
	u = mk(TSTACK_STACK, 8);
	ck_assert_int_eq(tstack_add_marker(u, 0x406000, TSTACK_MARK_RETURN), 0); /* longjmp-like */
	feed(u, &C1, 7, 0x402000, 0);
	feed(u, &X, 7, 0x401005, 0);
	ck_assert_uint_eq(tstack_area(u, 7)->top, 0);
	tstack_free(u);
}
END_TEST

/* The control bit: off, nothing happens; tracking may start mid-run. */
START_TEST(control_bit)
{
	struct tstack_config cfg = {TSTACK_STACK, 4, 0};
	struct tstack_unit *u;
	ck_assert_int_eq(tstack_new(&cfg, (struct tstack_os){0}, &u), 0);
	feed(u, &C1, 7, 0x402000, 0);
	ck_assert_ptr_null(tstack_area(u, 7));
	tstack_enable(u, 1);
	feed(u, &R, 7, 0x401005, 0); /* returns from a call made before tracking */
	feed(u, &C1, 7, 0x402000, 0);
	ck_assert_uint_eq(tstack_area(u, 7)->top, 1);
	tstack_free(u);
	cfg.area_entries = 0;
	ck_assert_int_eq(tstack_new(&cfg, (struct tstack_os){0}, &u), PMUSIM_ERR_ARG);
}
END_TEST

/* With the stack pointer known: recursion through one call site is told apart
 * by the slots; a ret to an older frame's return address pops the frames above
 * it (an unwinder's ret); an indirect jump that leaves RSP where it is (switch
 * table, PLT) changes nothing, one that raises it above slots (longjmp) pops
 * those frames. */
START_TEST(stack_pointer_matching)
{
	struct tstack_unit *u = mk(TSTACK_STACK, 8);
	feed_sp(u, &C1, 7, 0x402000, 0, 0x7000);  /* main -> f, slot 0x7000 */
	feed_sp(u, &C2, 7, 0x402000, 0, 0x6f00);  /* f -> f (ret 0x402002), slot 0x6f00 */
	feed_sp(u, &C2, 7, 0x402000, 0, 0x6e00);  /* f -> f again, slot 0x6e00 */
	feed_sp(u, &C2, 7, 0x402000, 0, 0x6d00);
	const struct tstack_area *a = tstack_area(u, 7);
	ck_assert_uint_eq(a->top, 4);
	ck_assert_uint_eq(a->mem[3].sp, 0x6d00);
	feed_sp(u, &R, 7, 0x402002, 0, 0x6d08);   /* the innermost returns */
	ck_assert_uint_eq(a->top, 3);
	feed_sp(u, &X, 7, 0x402100, 0, 0x6df0);   /* jump table: RSP below the top slot */
	ck_assert_uint_eq(a->top, 3);
	feed_sp(u, &R, 7, 0x402002, 0, 0x6f08);   /* a ret to the frame at 0x6f00: two go */
	ck_assert_uint_eq(a->top, 1);
	feed_sp(u, &C2, 7, 0x402000, 0, 0x6f00);
	feed_sp(u, &C2, 7, 0x402000, 0, 0x6e00);
	feed_sp(u, &X, 7, 0x401005, 0, 0x7008);   /* longjmp back into main: all gone */
	ck_assert_uint_eq(a->top, 0);
	feed_sp(u, &R, 7, 0x401005, 0, 0x7010);   /* unmatched */
	ck_assert_uint_eq(a->top, 0);
	tstack_free(u);
}
END_TEST

struct fake_os {
	int allocs, grows, releases;
	uint64_t next;
};

static int fake_alloc(void *ctx, struct tstack_area *a, uint64_t length)
{
	struct fake_os *os = ctx;
	os->allocs++;
	a->mem = calloc(length, sizeof(*a->mem));
	a->start = os->next;
	a->length = length;
	os->next += length * TSTACK_ENTRY_SIZE;
	return a->mem ? 0 : PMUSIM_ERR_NOMEM;
}

static int fake_grow(void *ctx, struct tstack_area *a, uint64_t nl)
{
	struct fake_os *os = ctx;
	os->grows++;
	struct tstack_entry *m = calloc(nl, sizeof(*m));
	memcpy(m, a->mem, a->top * sizeof(*m));
	free(a->mem);
	a->mem = m;
	a->start = os->next;
	a->length = nl;
	os->next += nl * TSTACK_ENTRY_SIZE;
	return 0;
}

static void fake_release(void *ctx, struct tstack_area *a)
{
	struct fake_os *os = ctx;
	os->releases++;
	free(a->mem);
}

/* The OS's part: areas at thread creation (fork: a copy of the parent's
 * entries, grown as needed), emptied at execve, freed at exit; an area the
 * OS placed keeps its address until it overflows. */
START_TEST(os_notifications)
{
	struct fake_os os = {0, 0, 0, 0x10000};
	struct tstack_config cfg = {TSTACK_STACK, 2, 1};
	struct tstack_unit *u;
	ck_assert_int_eq(tstack_new(&cfg, (struct tstack_os){fake_alloc, fake_grow, fake_release, &os}, &u), 0);
	for (int i = 0; i < 3; i++)
		feed(u, &C1, 7, 0x500000 + (uint64_t)i, 0);
	ck_assert_int_eq(os.allocs, 1);
	ck_assert_int_eq(os.grows, 1);
	ck_assert_uint_eq(tstack_area(u, 7)->start, 0x10000 + 2 * TSTACK_ENTRY_SIZE);
	ck_assert_int_eq(tstack_thread_created(u, 9, 7), 0); /* fork */
	const struct tstack_area *c = tstack_area(u, 9);
	ck_assert_uint_eq(c->top, 3);
	ck_assert_uint_eq(c->mem[2].callee, 0x500002);
	ck_assert_int_eq(tstack_thread_created(u, 10, 0), 0); /* a new thread: empty */
	ck_assert_uint_eq(tstack_area(u, 10)->top, 0);
	tstack_thread_reset(u, 9); /* execve */
	ck_assert_uint_eq(tstack_area(u, 9)->top, 0);
	tstack_thread_exited(u, 7);
	ck_assert_ptr_null(tstack_area(u, 7));
	ck_assert_uint_eq(tstack_nareas(u), 2);
	ck_assert_int_eq(os.releases, 1);
	feed(u, &C1, 10, 0x402000, 1);
	ck_assert_uint_eq(tstack_current(u)->tid, 10);
	tstack_free(u);
	ck_assert_int_eq(os.releases, 3);
}
END_TEST

/* History mode with the stack pointer: a tracer replaying the records gets
 * the stack the stack mode keeps, longjmp and tail calls included. */
START_TEST(history_replays_to_the_stack)
{
	struct tstack_unit *h = mk(TSTACK_HISTORY, 4), *k = mk(TSTACK_STACK, 4);
	ck_assert_int_eq(tstack_add_function(h, 0x405000), 0);
	ck_assert_int_eq(tstack_add_function(k, 0x405000), 0);
	struct { const struct block_info *bi; uint64_t next, sp; } ev[] = {
		{&C1, 0x402000, 0x7000}, {&C2, 0x402000, 0x6f00}, {&C2, 0x402000, 0x6e00},
		{&R, 0x402002, 0x6e08}, {&C2, 0x402000, 0x6e00}, {&C2, 0x402000, 0x6d00},
		{&X, 0x402002, 0x6f00}, /* longjmp into the frame at 0x6f00's callee */
		{&J, 0x405000, 0},      /* a tail call */
		{&C2, 0x409000, 0x6e00},
	};
	for (size_t i = 0; i < sizeof(ev) / sizeof(ev[0]); i++) {
		feed_sp(h, ev[i].bi, 7, ev[i].next, 0, ev[i].sp);
		feed_sp(k, ev[i].bi, 7, ev[i].next, 0, ev[i].sp);
	}
	const struct tstack_area *ha = tstack_area(h, 7), *ka = tstack_area(k, 7);
	struct tstack_area st = {0};
	ck_assert_int_eq(tstack_replay(&st, ha->mem, ha->top), 0);
	ck_assert_uint_eq(ka->top, 3);
	ck_assert_uint_eq(st.top, ka->top);
	for (uint64_t i = 0; i < st.top; i++) {
		ck_assert_uint_eq(st.mem[i].callee, ka->mem[i].callee);
		ck_assert_uint_eq(st.mem[i].ret, ka->mem[i].ret);
		ck_assert_uint_eq(st.mem[i].sp, ka->mem[i].sp);
	}
	ck_assert_uint_eq(ka->mem[1].callee, 0x405000); /* the tail call replaced f */
	free(st.mem);
	tstack_free(h);
	tstack_free(k);
}
END_TEST

/* A frame a "call" marker pushed has no return address: the ret that leaves
 * RSP above its slot returns through it (push+ret into a routine). */
START_TEST(marker_frames_end_at_their_slot)
{
	struct tstack_unit *u = mk(TSTACK_STACK, 8);
	ck_assert_int_eq(tstack_add_marker(u, 0x406000, TSTACK_MARK_CALL), 0);
	feed_sp(u, &C1, 7, 0x402000, 0, 0x7000);
	feed_sp(u, &X, 7, 0x408000, 0, 0x6f00);     /* push+ret into 0x408000 */
	const struct tstack_area *a = tstack_area(u, 7);
	ck_assert_uint_eq(a->top, 2);
	ck_assert_uint_eq(a->mem[1].ret, 0);
	feed_sp(u, &R, 7, 0x402123, 0, 0x6e08);     /* a ret below its slot: nothing */
	ck_assert_uint_eq(a->top, 2);
	feed_sp(u, &R, 7, 0x402123, 0, 0x6f08);     /* the routine returns */
	ck_assert_uint_eq(a->top, 1);
	ck_assert_uint_eq(a->mem[0].ret, 0x401005);
	tstack_free(u);
}
END_TEST

/* The return addresses of a stack, innermost first, as a callchain lists them. */
static size_t chain(const struct tstack_area *a, uint64_t *out, size_t max)
{
	size_t n = 0;
	for (uint64_t i = a->top; i > 0 && n < max; i--)
		if (a->mem[i - 1].ret)
			out[n++] = a->mem[i - 1].ret;
	return n;
}

/* Addresses of a handmade signal: the interrupted code at 0x402100 (slot of
 * its caller's return address 0x7000), the frame at 0x6000 with its saved RIP
 * at 0x60b0, the handler at 0x408000 and the restorer at 0x409000. */
static const struct tstack_signal SIG = {7, 0x402100, 0x60b0, 0x408000, 0x409000, 0x6000};

/* A delivery pushes the interrupted frame and the handler's; the handler's
 * calls go on top; its ret to the restorer pops its own entry only; the
 * sigreturn pops the interrupted frame; the caller's frame stays. */
START_TEST(signal_frames)
{
	struct tstack_unit *u = mk(TSTACK_STACK, 8);
	feed_sp(u, &C1, 7, 0x402000, 0, 0x7000);
	tstack_signal_enter(u, &SIG);
	feed_sp(u, &C2, 7, 0x403000, 0, 0x5f00); /* the handler calls */
	const struct tstack_area *a = tstack_area(u, 7);
	uint64_t c[8];
	ck_assert_uint_eq(chain(a, c, 8), 4);
	ck_assert_uint_eq(c[0], 0x402002);  /* in the handler's callee */
	ck_assert_uint_eq(c[1], 0x409000);  /* the handler returns to the restorer */
	ck_assert_uint_eq(c[2], 0x402100);  /* the interrupted instruction */
	ck_assert_uint_eq(c[3], 0x401005);  /* the interrupted function's caller */
	ck_assert_uint_eq(a->mem[1].callee, 0x409000);
	ck_assert_uint_eq(a->mem[1].sp, 0x60b0);
	ck_assert_uint_eq(a->mem[1].stamp & TSTACK_SIGNAL_BIT, TSTACK_SIGNAL_BIT);
	ck_assert_uint_eq(a->mem[2].callee, 0x408000);
	ck_assert_uint_eq(a->mem[2].sp, 0x6000);
	ck_assert_uint_eq(a->mem[2].stamp & TSTACK_SIGNAL_BIT, 0);
	feed_sp(u, &R, 7, 0x402002, 0, 0x5f08);
	feed_sp(u, &R, 7, 0x409000, 0, 0x6008);  /* the handler's ret */
	ck_assert_uint_eq(a->top, 2);
	tstack_signal_return(u, 7, 0x402100, 0x6f80);
	ck_assert_uint_eq(a->top, 1);
	ck_assert_uint_eq(a->mem[0].ret, 0x401005);
	tstack_free(u);
}
END_TEST

/* A second signal while the first handler runs stacks a second pair; each
 * sigreturn pops its own; a siglongjmp out of both handlers (an indirect
 * jump raising RSP above their frames) pops everything they made. */
START_TEST(nested_signals_and_siglongjmp)
{
	struct tstack_unit *u = mk(TSTACK_STACK, 4);
	feed_sp(u, &C1, 7, 0x402000, 0, 0x7000);
	tstack_signal_enter(u, &SIG);
	feed_sp(u, &C2, 7, 0x403000, 0, 0x5f00);
	struct tstack_signal inner = {7, 0x403010, 0x5db0, 0x408800, 0x409000, 0x5d00};
	tstack_signal_enter(u, &inner);
	const struct tstack_area *a = tstack_area(u, 7);
	uint64_t c[8];
	ck_assert_uint_eq(chain(a, c, 8), 6);
	ck_assert_uint_eq(c[0], 0x409000);
	ck_assert_uint_eq(c[1], 0x403010);
	ck_assert_uint_eq(c[2], 0x402002);
	ck_assert_uint_eq(tstack_overflows(u), 1);
	tstack_signal_return(u, 7, 0x403010, 0x5f00); /* the inner handler returned */
	ck_assert_uint_eq(a->top, 4);
	tstack_signal_enter(u, &inner);
	feed_sp(u, &X, 7, 0x402050, 0, 0x6ff0);      /* siglongjmp into the interrupted function */
	ck_assert_uint_eq(a->top, 1);
	tstack_signal_return(u, 7, 0x402100, 0x7008); /* a sigreturn with no signal frame left */
	ck_assert_uint_eq(a->top, 0);                 /* pops by RSP: the slot at 0x7000 is below */
	tstack_free(u);
}
END_TEST

/* History mode records the deliveries and sigreturns; replayed, they give
 * what the stack mode keeps. With the control bit off nothing is recorded. */
START_TEST(signal_history_replays)
{
	struct tstack_unit *h = mk(TSTACK_HISTORY, 4), *k = mk(TSTACK_STACK, 4);
	struct tstack_unit *both[2] = {h, k};
	for (int i = 0; i < 2; i++) {
		feed_sp(both[i], &C1, 7, 0x402000, 0, 0x7000);
		tstack_signal_enter(both[i], &SIG);
		feed_sp(both[i], &C2, 7, 0x403000, 0, 0x5f00);
		tstack_signal_enter(both[i], &(struct tstack_signal){7, 0x403010, 0x5db0, 0x408800, 0x409000, 0x5d00});
		tstack_signal_return(both[i], 7, 0x403010, 0x5f00);
	}
	const struct tstack_area *ha = tstack_area(h, 7), *ka = tstack_area(k, 7);
	struct tstack_area st = {0};
	ck_assert_int_eq(tstack_replay(&st, ha->mem, ha->top), 0);
	ck_assert_uint_eq(ka->top, 4);
	ck_assert_uint_eq(st.top, ka->top);
	for (uint64_t i = 0; i < st.top; i++) {
		ck_assert_uint_eq(st.mem[i].ret, ka->mem[i].ret);
		ck_assert_uint_eq(st.mem[i].sp, ka->mem[i].sp);
		ck_assert_uint_eq(st.mem[i].stamp & TSTACK_SIGNAL_BIT, ka->mem[i].stamp & TSTACK_SIGNAL_BIT);
	}
	free(st.mem);
	tstack_free(h);
	tstack_free(k);
	struct tstack_config off = {TSTACK_STACK, 4, 0};
	ck_assert_int_eq(tstack_new(&off, (struct tstack_os){0}, &k), 0);
	tstack_signal_enter(k, &SIG);
	tstack_signal_return(k, 7, 0x402100, 0x7000);
	ck_assert_ptr_null(tstack_area(k, 7));
	tstack_free(k);
}
END_TEST

/* "call 1f; 1: pop %reg": the call pushes a frame nothing returns through;
 * marked as a return, the pop (not a branch: the machine reports it with RSP
 * after it) pops it, so the next call is the only frame under the caller's.
 * Unmarked instructions change nothing; a call marker on a non-branch pushes a
 * frame without return address; a marked call is what the marker says. */
START_TEST(markers_on_any_instruction)
{
	static const struct block_info GETPC = {0x410000, 0x410005, 0x410000, 0x410005, 5, 1, BK_CALL, 0, 0, 5,
						off5, cls};
	for (int mode = 0; mode < 2; mode++) {
		struct tstack_unit *u = mk(mode ? TSTACK_HISTORY : TSTACK_STACK, 8);
		ck_assert_int_eq(tstack_add_marker(u, 0x410005, TSTACK_MARK_RETURN), 0);
		ck_assert_int_eq(tstack_marker_at(u, 0x410005), TSTACK_MARK_RETURN);
		ck_assert_int_eq(tstack_marker_at(u, 0x410006), -1);
		feed_sp(u, &C1, 7, 0x402000, 0, 0x7000);
		feed_sp(u, &GETPC, 7, 0x410005, 0, 0x6f00);
		tstack_mark_retired(u, 7, 0x410006, 0x410007, 0x6f08); /* not a marker: nothing */
		tstack_mark_retired(u, 7, 0x410005, 0x410007, 0x6f08); /* the pop */
		feed_sp(u, &C2, 7, 0x403000, 0, 0x6f00);
		struct tstack_area st = {0};
		const struct tstack_area *a = tstack_area(u, 7);
		if (mode) {
			ck_assert_int_eq(tstack_replay(&st, a->mem, a->top), 0);
			a = &st;
		}
		uint64_t c[8];
		ck_assert_uint_eq(chain(a, c, 8), 2);
		ck_assert_uint_eq(c[0], 0x402002);
		ck_assert_uint_eq(c[1], 0x401005);
		free(st.mem);
		tstack_free(u);
	}
	struct tstack_unit *u = mk(TSTACK_STACK, 8);
	ck_assert_int_eq(tstack_add_marker(u, 0x411000, TSTACK_MARK_CALL), 0);
	ck_assert_int_eq(tstack_add_marker(u, 0x401000, TSTACK_MARK_RETURN), 0);
	tstack_mark_retired(u, 7, 0x411000, 0x411004, 0x6e00);
	const struct tstack_area *a = tstack_area(u, 7);
	ck_assert_uint_eq(a->top, 1);
	ck_assert_uint_eq(a->mem[0].callee, 0x411004);
	ck_assert_uint_eq(a->mem[0].ret, 0);
	ck_assert_uint_eq(a->mem[0].sp, 0x6e00);
	feed_sp(u, &C1, 7, 0x402000, 0, 0x6df0); /* C1's call, marked as a return: no push */
	ck_assert_uint_eq(a->top, 1);
	feed_sp(u, &C1, 7, 0x402000, 0, 0x6e08); /* RSP above the marker frame's slot: popped */
	ck_assert_uint_eq(a->top, 0);
	tstack_free(u);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("tstack");
	TCase *tc = tcase_create("tstack");
	tcase_add_test(tc, calls_push_returns_pop);
	tcase_add_test(tc, history_mode_appends_entries_and_exits);
	tcase_add_test(tc, overflow_extends_and_copies);
	tcase_add_test(tc, areas_follow_context_switches);
	tcase_add_test(tc, markers_and_tail_calls);
	tcase_add_test(tc, control_bit);
	tcase_add_test(tc, stack_pointer_matching);
	tcase_add_test(tc, os_notifications);
	tcase_add_test(tc, history_replays_to_the_stack);
	tcase_add_test(tc, marker_frames_end_at_their_slot);
	tcase_add_test(tc, signal_frames);
	tcase_add_test(tc, nested_signals_and_siglongjmp);
	tcase_add_test(tc, signal_history_replays);
	tcase_add_test(tc, markers_on_any_instruction);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
