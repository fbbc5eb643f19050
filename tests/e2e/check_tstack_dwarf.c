/* The thread-stack unit against a reference that shares nothing with it:
 * perf 6.1's own DWARF unwinder (the rule and the named exceptions:
 * tests/e2e/stack_ref.h). Each case records the same deterministic run twice
 * (same program, options, seed and period, so the snapshots fall at the same
 * instructions): with the unit, whose work areas become the callchains, and
 * with --tstack-dwarf, which writes the registers and the top of the stack of
 * each snapshot as `perf record --call-graph dwarf` does (64,992 bytes where
 * 2,000 frames must fit, 16 KB elsewhere). perf script prints both: the
 * unit's callchains as recorded, the dumps as perf unwinds them by the
 * binary's .eh_frame. Every frame of every snapshot is compared, and 0
 * mismatches are allowed. Each case prints its figures: snapshots, frames
 * compared (those right after a signal frame among them), exceptions by kind.
 * Agreeing with no exception: _start's outermost frame (its CFI ends the
 * chain, cfi_undefined rip, and the unit has nothing older than _start's
 * call), 2,000-deep recursion (the dump holds it), signal frames (perf names
 * __restore_rt's "[unknown]": its address minus one is the nop glibc puts
 * before that label so that pc - 1 finds the signal FDE; the comparison is by
 * address), nested signals, handlers left by siglongjmp, a handler that moves
 * its saved RIP. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/stack_ref.h"
#include "tests/unit/run_suite.h"

/* --- the cases ------------------------------------------------------------------ */

/* pmusim record --tstack [--tstack-dwarf DUMP] OPTS -- PROG; the exit status. */
static int record(const char *data, const char *prog, const char *const *opts, const char *mark,
                  const char *dump)
{
	char *argv[40] = {(char *)pmusim(), "record", "--tstack",
	                  "--clear-env",    "-o",     (char *)data};
	int k = 6;
	if (dump) {
		argv[k++] = "--tstack-dwarf";
		argv[k++] = (char *)dump;
	}
	if (mark) {
		argv[k++] = "--tstack-mark";
		argv[k++] = (char *)mark;
	}
	for (int i = 0; opts[i]; i++)
		argv[k++] = (char *)opts[i];
	argv[k++] = "--";
	argv[k++] = (char *)prog;
	argv[k] = NULL;
	return run_cmd(argv, NULL, NULL, tmp_path("record.err"));
}

struct ref_case {
	int line;
	const char *wl;
	const char *dump; /* stack bytes per snapshot: enough for the deepest stack */
	const char *opts[10];
	const char *getpc_in;  /* --tstack-mark return:ADDR at the get-PC pop in this function */
	const char *alt_stack; /* the program's alternate signal stack (a symbol) */
	int status;            /* the program's exit status */
	long min_snapshots, min_signal_frames;
};

/* clang-format off */
static const struct ref_case cases[] = {
	/* four threads, 2,000-deep recursion, tail calls, longjmp, callbacks */
	{__LINE__, "callstacks", "64992", {"--tstack-period", "5us", "--tstack-threads", "all", 0},
	 NULL, NULL, 0, 400, 0},
	{__LINE__, "callstacks", "64992",
	 {"--tstack-period", "3us", "--quantum", "997", "--tstack-threads", "all", 0},
	 NULL, NULL, 0, 800, 0},
	{__LINE__, "callstacks", "64992", {"--tstack-period", "5us", "--tstack-mode", "history",
					   "--tstack-area", "4", "--tstack-threads", "all", 0},
	 NULL, NULL, 0, 400, 0},
	{__LINE__, "recursion", "16384", {"--tstack-period", "2us", 0}, NULL, NULL, 0, 100, 0},
	/* producers and consumers: mutexes, condition variables, a barrier, joins */
	{__LINE__, "threads", "16384", {"--tstack-period", "10us", "--tstack-threads", "all", 0},
	 NULL, NULL, 0, 1000, 0},
	/* handlers of raise/kill, SIGSEGV on an alternate stack left by siglongjmp,
	 * SIGFPE, a SIGILL handler moving the saved RIP, timers; the last
	 * snapshots before death by SIGTERM */
	{__LINE__, "signals", "16384", {"--tstack-period", "1us", 0},
	 NULL, "altstack", 128 + 15, 2000, 3},
	/* a timer's handler, nested signals, siglongjmp out of an alternate stack,
	 * a handler working after it moved the saved RIP */
	{__LINE__, "sigstacks", "16384", {"--tstack-period", "2us", 0},
	 NULL, "altstack", 0, 300, 200},
	{__LINE__, "sigstacks", "16384", {"--tstack-period", "1us", "--tstack-mode", "history", 0},
	 NULL, "altstack", 0, 600, 400},
	/* "call 1f; 1: pop" with the pop marked as a return */
	{__LINE__, "getpc", "16384", {"--tstack-period", "350ns", 0}, "locate", NULL, 0, 2000, 0},
};
/* clang-format on */

/* Records the case both ways and compares; *out gets the counts. */
static void run_case(const struct ref_case *c, int marked, struct tally *out)
{
	const char *prog = wl(c->wl);
	char hw[512], dw[512], mark[64] = "";
	snprintf(hw, sizeof(hw), "%s", tmp_path("unit.data"));
	snprintf(dw, sizeof(dw), "%s", tmp_path("dwarf.data"));
	struct facts fa;
	facts_read(prog, c->alt_stack, &fa);
	uint64_t lo, hi;
	if (c->getpc_in) {
		ck_assert_msg(symbol_range(prog, c->getpc_in, &lo, &hi), "line %d: no %s", c->line,
		              c->getpc_in);
		for (size_t k = 0; k < fa.ngetpc; k++)
			if (fa.getpc[k] >= lo && fa.getpc[k] < hi)
				snprintf(mark, sizeof(mark), "return:%#" PRIx64, fa.getpc[k]);
		ck_assert_msg(mark[0], "line %d: no get-PC call in %s", c->line, c->getpc_in);
	}
	const char *m = marked && mark[0] ? mark : NULL;
	ck_assert_msg(record(hw, prog, c->opts, m, NULL) == c->status, "line %d: record failed",
	              c->line);
	ck_assert_msg(record(dw, prog, c->opts, m, c->dump) == c->status,
	              "line %d: record --tstack-dwarf failed", c->line);
	struct snaps a, b;
	perf_snaps(hw, 0, &a);
	perf_snaps(dw, 1, &b);
	compare(&a, &b, &fa, out);
	snaps_free(&a);
	snaps_free(&b);
	facts_free(&fa);
}

static void print_tally(const struct ref_case *c, const struct tally *t, const char *what)
{
	printf("check_tstack_dwarf: line %d, %s%s: %ld snapshots, %ld frames compared (%ld after "
	       "signal frames), "
	       "%ld mismatches; exceptions:",
	       c->line, c->wl, what, t->snapshots, t->frames, t->signal_frames, t->mismatches);
	for (int k = 0; k < EXC_COUNT; k++)
		printf(" %s %ld (%ld frames)", exc_name[k], t->exc[k], t->exc_frames[k]);
	printf("\n");
}

START_TEST(unit_equals_perf_dwarf_unwinding)
{
	const struct ref_case *c = &cases[_i];
	struct tally t;
	run_case(c, 1, &t);
	print_tally(c, &t, "");
	ck_assert_msg(t.mismatches == 0, "line %d (%s): %ld of %ld snapshots differ; first: %s",
	              c->line, c->wl, t.mismatches, t.snapshots, t.first);
	ck_assert_msg(t.snapshots >= c->min_snapshots, "line %d: %ld snapshots", c->line,
	              t.snapshots);
	ck_assert_msg(t.signal_frames >= c->min_signal_frames,
	              "line %d: %ld frames after signal frames", c->line, t.signal_frames);
}
END_TEST

/* The comparison can fail: without its marker the get-PC call's frame stays
 * under every later call, and perf's unwinding says otherwise. */
START_TEST(unmarked_getpc_differs)
{
	const struct ref_case *c = &cases[sizeof(cases) / sizeof(cases[0]) - 1];
	ck_assert(c->getpc_in);
	struct tally t;
	run_case(c, 0, &t);
	print_tally(c, &t, " without its marker");
	ck_assert_msg(t.mismatches * 2 > t.snapshots, "%ld of %ld snapshots differ", t.mismatches,
	              t.snapshots);
}
END_TEST

/* One hand-made snapshot (perf's addresses are the real ones: delta 0). */
static struct tally one(const struct facts *fa, const uint64_t *u, size_t nu, const uint64_t *d,
                        size_t nd, int last_unknown, uint64_t sp)
{
	char unknown[8] = {0};
	unknown[nd - 1] = (char)last_unknown;
	struct pair p = {u, d, unknown, nu, nd, d[0], sp, 0};
	struct tally t;
	memset(&t, 0, sizeof(t));
	compare_one(&p, fa, &t, 0, 1);
	return t;
}

/* An FDE of fa: the first with signal == sig. */
static const struct fde *an_fde(const struct facts *fa, int sig)
{
	for (size_t i = 0; i < fa->nfde; i++)
		if (fa->fde[i].signal == sig && fa->fde[i].hi - fa->fde[i].lo > 4)
			return &fa->fde[i];
	ck_abort_msg("no %s FDE", sig ? "signal" : "plain");
	return NULL;
}

/* The comparison's rules and exceptions on hand-made snapshots over the
 * programs' own facts: each exception is taken only where its conditions
 * hold, and anything else is a mismatch. */
START_TEST(exceptions_need_their_conditions)
{
	struct facts sg, cs, gp;
	facts_read(wl("sigstacks"), "altstack", &sg);
	facts_read(wl("callstacks"), NULL, &cs);
	facts_read(wl("getpc"), NULL, &gp);
	uint64_t code = an_fde(&sg, 0)->lo + 1,
	         rt = an_fde(&sg, 1)->lo + 1; /* a return address; the restorer */
	uint64_t ip = code + 2, gap = sg.fde[0].lo - 1, alt = sg.alt_lo + 64, iip = code + 1;
	ck_assert_ptr_null(fde_of(&sg, gap));
	/* a signal frame: perf prints the restorer minus one, then the interrupted IP as it is */
	const uint64_t u1[] = {ip, code, rt, iip, code},
	               d1[] = {ip, code - 1, rt - 1, iip, code - 1};
	struct tally t = one(&sg, u1, 5, d1, 5, 0, 0);
	ck_assert(t.mismatches == 0 && t.frames == 4 && t.signal_frames == 1);
	const uint64_t d1b[] = {ip, code - 1, rt - 1, iip - 1, code - 1};
	ck_assert_int_eq(one(&sg, u1, 5, d1b, 5, 0, 0).mismatches, 1);
	/* perf stops in code without CFI, or guesses past it; not where CFI covers the code */
	const uint64_t u2[] = {gap, code}, d2[] = {gap}, u2b[] = {ip, code}, d2b[] = {ip};
	ck_assert_int_eq(one(&sg, u2, 2, d2, 1, 0, 0).exc[EXC_NO_CFI], 1);
	ck_assert_int_eq(one(&sg, u2b, 2, d2b, 1, 0, 0).mismatches, 1);
	const uint64_t u2c[] = {ip, gap + 1, code, code + 1}, d2c[] = {ip, gap, code};
	t = one(&sg, u2c, 4, d2c, 3, 0, 0);
	ck_assert(t.exc[EXC_NO_CFI] == 1 && t.exc_frames[EXC_NO_CFI] == 2 && t.frames == 1);
	const uint64_t u2d[] = {ip, code, code, code + 1}, d2d[] = {ip, code - 1, code};
	ck_assert_int_eq(one(&sg, u2d, 4, d2d, 3, 0, 0).mismatches, 1);
	/* perf stops at the interrupted IP of a handler on the alternate stack; not
	 * on the thread's stack, nor anywhere but after a signal frame */
	const uint64_t u3[] = {ip, code, rt, iip, code};
	ck_assert_int_eq(one(&sg, u3, 5, d1, 4, 0, alt).exc[EXC_ALT_STACK], 1);
	ck_assert_int_eq(one(&sg, u3, 5, d1, 4, 0, alt).exc_frames[EXC_ALT_STACK], 1);
	ck_assert_int_eq(one(&sg, u3, 5, d1, 4, 0, sg.alt_hi).mismatches, 1);
	ck_assert_int_eq(one(&sg, u3, 5, d1, 2, 0, alt).mismatches, 1);
	/* a thread that has not run yet, after clone3's syscall, where no FDE covers
	 * the code: perf's guessed frame (no code) is part of the exception */
	uint64_t lo, hi, nocfi = 0;
	ck_assert(symbol_range(wl("callstacks"), "__clone3", &lo, &hi));
	for (uint64_t a = lo + 1; a < hi && !nocfi; a++)
		nocfi = fde_of(&cs, a) ? 0 : a;
	ck_assert_uint_ne(nocfi, 0);
	const uint64_t u4[] = {nocfi}, d4[] = {nocfi, 0x4c42ef}, u4b[] = {lo},
	               d4b[] = {lo, 0x4c42ef};
	t = one(&cs, u4, 1, d4, 2, 1, 0);
	ck_assert(t.exc[EXC_NO_CFI] == 1 && t.exc_frames[EXC_NO_CFI] == 0);
	ck_assert_int_eq(one(&cs, u4b, 1, d4b, 2, 1, 0).mismatches, 1);
	/* between a get-PC call and its pop; nowhere else */
	ck_assert_uint_ge(gp.ngetpc, 1);
	uint64_t site = gp.getpc[0], gcode = an_fde(&gp, 0)->lo + 1;
	const uint64_t u5[] = {site, site, gcode}, d5[] = {site, gcode - 1};
	t = one(&gp, u5, 3, d5, 2, 0, 0);
	ck_assert(t.exc[EXC_GETPC_CALL] == 1 && t.frames == 1);
	const uint64_t u5b[] = {site + 1, site + 1, gcode}, d5b[] = {site + 1, gcode - 1};
	ck_assert_int_eq(one(&gp, u5b, 3, d5b, 2, 0, 0).mismatches, 1);
	const uint64_t u5c[] = {site, site, gcode + 1};
	ck_assert_int_eq(one(&gp, u5c, 3, d5, 2, 0, 0).mismatches, 1);
	facts_free(&sg);
	facts_free(&cs);
	facts_free(&gp);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("tstack_dwarf");
	TCase *tc = tcase_create("tstack_dwarf");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, unit_equals_perf_dwarf_unwinding, 0,
	                    (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, unmarked_getpc_differs);
	tcase_add_test(tc, exceptions_need_their_conditions);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
