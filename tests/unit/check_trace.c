/* Trace reconstruction (profiler/trace.h), the CBT windows and the overlap
 * arithmetic (profiler/validate.h), on hand-assembled code (encodings: Intel SDM
 * vol. 2: jne rel8 = 75 cb, jmp rel8 = eb cb, nop = 90, ud2 = 0f 0b).
 *
 * The code (the patent's figure-3 shape: bc1 T, bc2 T, bc3 NT, bc4 T, trigger):
 *   0ff0  eb 0e     jmp  1000      j0
 *   1000  75 0e     jne  1010      bc1
 *   1010  90 / 1011 75 0d  jne 1020      bc2
 *   1020  90 / 1021 75 0d  jne 1030      bc3
 *   1023  90 / 1024 75 1a  jne 1040      bc4
 *   1026  eb 18     jmp  1040      j1 (only reached when bc4 falls through)
 *   1040  90 / 1041 75 0d  jne 1050      trigger
 *   1043  90 ... (nops up to 1060)
 *   1058  0f 0b     ud2 */
#include <check.h>
#include <math.h>
#include <string.h>

#include "common/err.h"
#include "profiler/profile.h"
#include "profiler/trace.h"
#include "profiler/validate.h"
#include "tests/unit/run_suite.h"

#define BASE 0x0ff0u
static uint8_t code[0x70];
static struct binary *bin;

static void put(uint32_t addr, const char *bytes, size_t n)
{
	memcpy(code + (addr - BASE), bytes, n);
}

static void setup(void)
{
	memset(code, 0x90, sizeof(code));
	put(0x0ff0, "\xeb\x0e", 2);
	put(0x1000, "\x75\x0e", 2);
	put(0x1011, "\x75\x0d", 2);
	put(0x1021, "\x75\x0d", 2);
	put(0x1024, "\x75\x1a", 2);
	put(0x1026, "\xeb\x18", 2);
	put(0x1041, "\x75\x0d", 2);
	put(0x1058, "\x0f\x0b", 2);
	ck_assert_int_eq(binary_from_code(code, sizeof(code), BASE, &bin), 0);
}

static void teardown(void)
{
	binary_free(bin);
}

/* Newest first, as the LBR presents them. */
static struct perf_sample sample(uint64_t ip, const struct perf_branch *br, uint64_t n)
{
	return (struct perf_sample){.ip = ip, .period = 1000, .nbr = n, .br = br};
}

static struct br_outcome out[TRACE_MAX_OUT];

static const struct perf_branch fig3[] = {
	{0x1024, 0x1040, 5, 0, 1, 1}, /* bc4, newest */
	{0x1011, 0x1020, 3, 0, 1, 1}, /* bc2 */
	{0x1000, 0x1010, 2, 0, 1, 1}, /* bc1 */
	{0x0ff0, 0x1000, 1, 0, 1, 2}, /* j0, oldest */
};

/* TBT of 4 taken branches + a not-taken trigger: the full trace is j0, bc1,
 * bc2, bc3 (not taken, found by walking), bc4, trigger (not taken, appended). */
START_TEST(figure3_full_trace)
{
	struct perf_sample s = sample(0x1041, fig3, 4);
	enum trace_drop why;
	uint64_t ei, ec;
	size_t n = trace_rebuild(bin, &s, 1, out, &why, &ei, &ec);
	static const struct {
		uint64_t from, to;
		int taken, kind;
	} want[] = {
		{0x0ff0, 0x1000, 1, BK_JMP}, {0x1000, 0x1010, 1, BK_COND}, {0x1011, 0x1020, 1, BK_COND},
		{0x1021, 0x1023, 0, BK_COND}, {0x1024, 0x1040, 1, BK_COND}, {0x1041, 0x1043, 0, BK_COND},
	};
	ck_assert_int_eq(why, DROP_NONE);
	ck_assert_uint_eq(n, 6);
	for (size_t i = 0; i < n; i++) {
		ck_assert_msg(out[i].from == want[i].from && out[i].to == want[i].to &&
				      out[i].taken == want[i].taken && out[i].kind == want[i].kind,
			      "outcome %zu: %llx->%llx taken %d kind %d", i, (unsigned long long)out[i].from,
			      (unsigned long long)out[i].to, out[i].taken, out[i].kind);
	}
	/* the trace ends at the trigger's position: j0, bc1, nop bc2, nop bc3, nop bc4,
	 * nop = 9 instructions before it (the same end as without the appended
	 * trigger, instruction_window) */
	ck_assert_uint_eq(ei, 9);
	ck_assert_uint_eq(ec, 1 + 2 + 3 + 5);
	/* the CBT of size 5 keeps bc1 .. trigger */
	double w;
	size_t first = trace_window(out, n, TRIG_BRANCHES, 5, 0, ei, ec, 1000, &w);
	ck_assert_uint_eq(first, 1);
	ck_assert_double_eq_tol(w, 1000.0 / 5, 1e-12);
}
END_TEST

/* Chopping: the newest 3 outcomes of a branch-triggered sample. */
START_TEST(chopping_keeps_the_newest)
{
	struct perf_sample s = sample(0x1041, fig3, 4);
	enum trace_drop why;
	uint64_t ei, ec;
	size_t n = trace_rebuild(bin, &s, 1, out, &why, &ei, &ec);
	double w;
	size_t first = trace_window(out, n, TRIG_BRANCHES, 3, 0, ei, ec, 999, &w);
	ck_assert_uint_eq(n - first, 3);
	ck_assert_uint_eq(out[first].from, 0x1021);
	ck_assert_double_eq_tol(w, 333.0, 1e-12);
	/* a window larger than the trace keeps nothing */
	ck_assert_uint_eq(trace_window(out, n, TRIG_BRANCHES, 7, 0, ei, ec, 999, &w), n);
}
END_TEST

/* The trigger is appended only for branch triggers, and never when the sample
 * IP is the newest entry (a taken trigger). */
START_TEST(trigger_append_rules)
{
	struct perf_sample s = sample(0x1041, fig3, 4);
	enum trace_drop why;
	uint64_t ei, ec;
	ck_assert_uint_eq(trace_rebuild(bin, &s, 0, out, &why, &ei, &ec), 5);
	ck_assert_uint_eq(ei, 9); /* the walk still reaches the IP */
	s.ip = 0x1024;          /* taken trigger: IP = newest source */
	ck_assert_uint_eq(trace_rebuild(bin, &s, 1, out, &why, &ei, &ec), 5);
	ck_assert_uint_eq(out[4].from, 0x1024);
	ck_assert_uint_eq(out[4].taken, 1);
	s.ip = 0x1043;          /* an IP that is no branch: nothing appended */
	ck_assert_uint_eq(trace_rebuild(bin, &s, 1, out, &why, &ei, &ec), 5);
}
END_TEST

/* Taken-branch window: the newest c taken outcomes and the not-taken ones after
 * the (c+1)-th newest taken. */
START_TEST(taken_window)
{
	struct perf_sample s = sample(0x1024, fig3, 4);
	enum trace_drop why;
	uint64_t ei, ec;
	size_t n = trace_rebuild(bin, &s, 0, out, &why, &ei, &ec);
	ck_assert_uint_eq(n, 5); /* j0 bc1 bc2 bc3(NT) bc4 */
	double w;
	size_t first = trace_window(out, n, TRIG_TAKEN, 2, 0, ei, ec, 500, &w);
	ck_assert_uint_eq(first, 2); /* after bc1, the 3rd newest taken: bc2, bc3 NT, bc4 */
	ck_assert_uint_eq(out[first].from, 0x1011);
	ck_assert_double_eq_tol(w, 250.0, 1e-12);
	/* cbt larger than the entries allow is cut to taken - 1 */
	first = trace_window(out, n, TRIG_TAKEN, 32, 0, ei, ec, 300, &w);
	ck_assert_uint_eq(first, 1);
	ck_assert_double_eq_tol(w, 100.0, 1e-12);
}
END_TEST

/* Windows in units of the triggering event: every outcome after the (c+1)-th
 * newest event, the other branches between the events included; a trace with
 * fewer events is kept whole, one without the triggering event not at all. */
START_TEST(event_windows)
{
	/* oldest first: cond T, call, ret, cond NT, call, ind call, ret, cond T */
	const struct br_outcome o[] = {
	    {0x10, 0x20, 0, 0, BK_COND, 1},     {0x22, 0x80, 1, 0, BK_CALL, 1},
	    {0x81, 0x27, 2, 0, BK_RET, 1},      {0x2a, 0x2c, 3, 0, BK_COND, 0},
	    {0x30, 0x80, 4, 0, BK_CALL, 1},     {0x81, 0x90, 5, 0, BK_CALL_IND, 1},
	    {0x91, 0x35, 6, 0, BK_RET, 1},      {0x38, 0x10, 7, 0, BK_COND, 1},
	};
	const size_t n = sizeof(o) / sizeof(o[0]);
	double w;
	/* cond: events at 0, 3, 7 */
	ck_assert_uint_eq(trace_window(o, n, TRIG_COND, 1, 0, 0, 0, 1000, &w), 4);
	ck_assert_double_eq_tol(w, 1000.0, 1e-12);
	ck_assert_uint_eq(trace_window(o, n, TRIG_COND, 2, 0, 0, 0, 1000, &w), 1);
	ck_assert_double_eq_tol(w, 500.0, 1e-12);
	ck_assert_uint_eq(trace_window(o, n, TRIG_COND, 5, 0, 0, 0, 1000, &w), 0); /* all of it */
	ck_assert_double_eq_tol(w, 200.0, 1e-12);
	/* cond taken: events at 0 and 7 */
	ck_assert_uint_eq(trace_window(o, n, TRIG_COND_TAKEN, 1, 0, 0, 0, 1000, &w), 1);
	/* calls (direct and indirect): 1, 4, 5; returns: 2, 6; indirect: 5 */
	ck_assert_uint_eq(trace_window(o, n, TRIG_CALL, 1, 0, 0, 0, 1000, &w), 5);
	ck_assert_uint_eq(trace_window(o, n, TRIG_CALL, 2, 0, 0, 0, 1000, &w), 2);
	ck_assert_uint_eq(trace_window(o, n, TRIG_RET, 1, 0, 0, 0, 1000, &w), 3);
	ck_assert_uint_eq(trace_window(o, n, TRIG_INDIRECT, 1, 0, 0, 0, 1000, &w), 0);
	/* no triggering event in the trace: nothing kept */
	ck_assert_uint_eq(trace_window(o, 1, TRIG_RET, 1, 0, 0, 0, 1000, &w), 1);
	/* the events as perf.data names them (pmusim's Ice Lake umasks of 0xc4) */
	ck_assert_int_eq(trigger_of_event(PERF_TYPE_RAW, 0x11c4), TRIG_COND);
	ck_assert_int_eq(trigger_of_event(PERF_TYPE_RAW, 0x01c4), TRIG_COND_TAKEN);
	ck_assert_int_eq(trigger_of_event(PERF_TYPE_RAW, 0x02c4), TRIG_CALL);
	ck_assert_int_eq(trigger_of_event(PERF_TYPE_RAW, 0x08c4), TRIG_RET);
	ck_assert_int_eq(trigger_of_event(PERF_TYPE_RAW, 0x80c4), TRIG_INDIRECT);
	ck_assert_int_eq(trigger_of_event(PERF_TYPE_RAW, 0x20c4), TRIG_TAKEN);
	ck_assert_int_eq(trigger_of_event(PERF_TYPE_RAW, 0x00c4), TRIG_BRANCHES);
}
END_TEST

/* Instruction window: outcomes in the last `span` instructions before the IP. */
START_TEST(instruction_window)
{
	struct perf_sample s = sample(0x1041, fig3, 4);
	enum trace_drop why;
	uint64_t ei, ec;
	size_t n = trace_rebuild(bin, &s, 0, out, &why, &ei, &ec);
	double w;
	/* ei = 9; outcomes at insn 0 (j0), 1 (bc1), 3 (bc2), 5 (bc3), 7 (bc4) */
	ck_assert_uint_eq(ei, 9);
	ck_assert_uint_eq(out[3].insn, 5);
	ck_assert_uint_eq(out[4].insn, 7);
	size_t first = trace_window(out, n, TRIG_INSNS, 1, 5, ei, ec, 800, &w);
	ck_assert_uint_eq(first, 3); /* the last 5 instructions (5..9) hold bc3 and bc4 */
	ck_assert_double_eq_tol(w, 160.0, 1e-12);
	ck_assert_uint_eq(trace_window(out, n, TRIG_INSNS, 1, 100, ei, ec, 800, &w), n);
}
END_TEST

/* A sample whose IP is the newest entry's branch is that entry, unless the
 * recording says the instruction there retired after it (pmusim's payload:
 * the loop branch ran again and fell through); then the walk goes round to it
 * and appends it as not taken. The loop: 2000 nop; 2001 jne 2000; 2003 ud2. */
START_TEST(ip_at_the_newest_entrys_branch)
{
	static const uint8_t loop[] = {0x90, 0x75, 0xfd, 0x0f, 0x0b};
	struct binary *lb;
	ck_assert_int_eq(binary_from_code(loop, sizeof(loop), 0x2000, &lb), 0);
	static const struct perf_branch br[] = {{0x2001, 0x2000, 2, 0, 1, 1}, {0x2001, 0x2000, 2, 0, 1, 1}};
	struct perf_sample s = sample(0x2001, br, 2);
	enum trace_drop why;
	uint64_t ei, ec;
	ck_assert_uint_eq(trace_rebuild(lb, &s, TRACE_APPEND_TRIGGER, out, &why, &ei, &ec), 2);
	ck_assert_uint_eq(trace_rebuild(lb, &s, TRACE_APPEND_TRIGGER | TRACE_IP_AFTER_NEWEST, out, &why, &ei, &ec), 3);
	ck_assert_uint_eq(out[2].from, 0x2001);
	ck_assert_uint_eq(out[2].to, 0x2003);
	ck_assert_uint_eq(out[2].taken, 0);
	binary_free(lb);
}
END_TEST

/* Cycle window: outcomes whose cycle (that of the taken branch at or after
 * them) lies in [x - span, x), x the overflow's cycle. Figure 3's cycles: j0 1,
 * bc1 3, bc2 6, bc3 and bc4 11 (bc3 falls through before bc4), the appended
 * trigger after bc4 (never in the window: it retires after the overflow). */
START_TEST(cycle_window)
{
	struct perf_sample s = sample(0x1041, fig3, 4);
	enum trace_drop why;
	uint64_t ei, ec;
	size_t n = trace_rebuild(bin, &s, TRACE_APPEND_TRIGGER, out, &why, &ei, &ec), end;
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(ec, 11);
	ck_assert_uint_eq(out[2].cycle, 6);
	ck_assert_uint_eq(out[3].cycle, 11);
	ck_assert_uint_eq(trace_newest_taken(out, n), 4);
	double w;
	int cut;
	size_t first = trace_cycle_window(out, n, 13, 7, 700, &end, &w, &cut);
	ck_assert_uint_eq(first, 2); /* cycles 6..12: bc2, bc3, bc4 */
	ck_assert_uint_eq(end, 5);
	ck_assert_double_eq_tol(w, 100.0, 1e-12);
	ck_assert_int_eq(cut, 0);
	first = trace_cycle_window(out, n, 11, 7, 700, &end, &w, &cut); /* overflow as bc4 retires */
	ck_assert_uint_eq(first, 2); /* cycles 4..10: bc2 only */
	ck_assert_uint_eq(end, 3);
	first = trace_cycle_window(out, n, 13, 12, 700, &end, &w, &cut); /* reaches back to j0 */
	ck_assert_int_eq(cut, 1);
	ck_assert_uint_eq(first, 0);
}
END_TEST

/* The cycle window counts every branch the same: on a made-up timeline (taken
 * branches 1 to 7 cycles apart, with not-taken ones between them), every cycle
 * from one to the last is tried as the overflow; the trace of each is what an
 * 8-entry LBR holds then (its oldest taken entry first, the branches retired by
 * cycle x: a branch that retires in the overflow's own cycle may be in it). A
 * window of `span` cycles must hold every branch execution for exactly `span`
 * of the overflow cycles, whatever the gaps around it. The same enumeration
 * with the window anchored at the newest entry (the old rule) does not. */
enum { TL_TAKEN = 400, TL_DEPTH = 8 };
static struct br_outcome timeline[3 * TL_TAKEN];
static size_t tl_n;

static void make_timeline(void)
{
	uint64_t t = 0, r = 12345;
	tl_n = 0;
	for (int i = 0; i < TL_TAKEN; i++) {
		r = r * 6364136223846793005ull + 1442695040888963407ull;
		t += 1 + (r >> 33) % 7;
		for (unsigned k = 0; k <= (r >> 40) % 3; k++, tl_n++) /* not taken ones retire with the taken one after them */
			timeline[tl_n] = (struct br_outcome){.from = tl_n, .cycle = t, .taken = k == (r >> 40) % 3};
	}
}

/* times[i]: how many overflow cycles put timeline outcome i in the window. */
static void enumerate_windows(uint64_t span, int anchor_at_newest, uint32_t *times)
{
	memset(times, 0, tl_n * sizeof(*times));
	for (int64_t x = 1; x <= (int64_t)timeline[tl_n - 1].cycle; x++) {
		size_t hi = 0; /* outcomes retired by cycle x */
		while (hi < tl_n && (int64_t)timeline[hi].cycle <= x)
			hi++;
		size_t lo = hi, taken = 0;
		while (lo > 0 && taken < TL_DEPTH)
			taken += timeline[--lo].taken;
		if (taken < TL_DEPTH)
			continue;
		size_t end, first;
		double w;
		int cut;
		int64_t at = anchor_at_newest ? (int64_t)timeline[hi - 1].cycle + 1 : x;
		first = trace_cycle_window(timeline + lo, hi - lo, at, span, 1, &end, &w, &cut);
		ck_assert_int_eq(cut, 0);
		for (size_t i = first; i < end; i++)
			times[lo + i]++;
	}
}

START_TEST(cycle_window_counts_every_branch_alike)
{
	static uint32_t times[3 * TL_TAKEN];
	make_timeline();
	const uint64_t span = TL_DEPTH - 2; /* 7 gaps of at least 1 cycle reach back */
	enumerate_windows(span, 0, times);
	size_t checked = 0;
	for (size_t i = 0; i < tl_n; i++) {
		if (timeline[i].cycle < 60 || timeline[i].cycle + span > timeline[tl_n - 1].cycle)
			continue; /* the ends of the timeline: windows before the LBR fills or after it */
		ck_assert_msg(times[i] == span, "outcome %zu (cycle %llu): in %u windows, not %llu", i,
			      (unsigned long long)timeline[i].cycle, times[i], (unsigned long long)span);
		checked++;
	}
	ck_assert_uint_gt(checked, 3 * TL_TAKEN / 2);
	enumerate_windows(span, 1, times);
	size_t off = 0;
	for (size_t i = 0; i < tl_n; i++)
		off += timeline[i].cycle >= 60 && timeline[i].cycle + span <= timeline[tl_n - 1].cycle &&
		       times[i] != span;
	ck_assert_uint_gt(off, checked / 4);
}
END_TEST

/* The instruction window is the IP and the span - 1 instructions before it
 * whatever the instruction at the IP: a plain one, a conditional branch appended
 * as not taken, or the newest entry itself. A window one position short for
 * samples at branches would count an edge in span - 1 of the span windows that
 * should hold it whenever a branch follows it span - 1 instructions later. */
START_TEST(instruction_window_ends_at_the_ip)
{
	enum trace_drop why;
	uint64_t ei, ec;
	double w;
	struct perf_sample s = sample(0x1041, fig3, 4);
	size_t n = trace_rebuild(bin, &s, TRACE_APPEND_TRIGGER, out, &why, &ei, &ec);
	ck_assert_uint_eq(n, 6);
	ck_assert_uint_eq(out[5].insn, 9); /* the appended trigger */
	ck_assert_uint_eq(ei, 9);
	/* span 3: positions 7..9, bc4 and the trigger */
	ck_assert_uint_eq(trace_window(out, n, TRIG_INSNS, 1, 3, ei, ec, 600, &w), 4);
	/* the IP is bc4, the newest entry (position 7): span 3 is 5..7, bc3 and bc4 */
	static const struct perf_branch at_bc4[] = {
		{0x1024, 0x1040, 5, 0, 1, 1}, {0x1011, 0x1020, 3, 0, 1, 1}, {0x1000, 0x1010, 2, 0, 1, 1},
		{0x0ff0, 0x1000, 1, 0, 1, 2},
	};
	s = sample(0x1024, at_bc4, 4);
	n = trace_rebuild(bin, &s, TRACE_APPEND_TRIGGER, out, &why, &ei, &ec);
	ck_assert_uint_eq(n, 5);
	ck_assert_uint_eq(ei, 7);
	ck_assert_uint_eq(trace_window(out, n, TRIG_INSNS, 1, 3, ei, ec, 600, &w), 3);
	ck_assert_double_eq_tol(w, 200.0, 1e-12);
	/* the IP is the nop after bc4 (position 8): span 3 is 6..8, bc4 only */
	s = sample(0x1040, at_bc4, 4);
	n = trace_rebuild(bin, &s, TRACE_APPEND_TRIGGER, out, &why, &ei, &ec);
	ck_assert_uint_eq(ei, 8);
	ck_assert_uint_eq(trace_window(out, n, TRIG_INSNS, 1, 3, ei, ec, 600, &w), 4);
}
END_TEST

static const struct {
	int line;
	struct perf_branch br[2];
	uint64_t ip;
	enum trace_drop why;
} bad_rows[] = {
	/* walking from bc3's fall-through (1023) to 1041 meets j1 at 1026 */
	{__LINE__, {{0x1041, 0x1050, 1, 0, 1, 1}, {0x1021, 0x1023, 1, 0, 1, 1}}, 0x1050, DROP_UNCOND_IN_RANGE},
	/* a range that runs backwards */
	{__LINE__, {{0x1000, 0x1010, 1, 0, 1, 1}, {0x1024, 0x1040, 1, 0, 1, 1}}, 0x1010, DROP_BACKWARDS},
	/* a source that is no branch */
	{__LINE__, {{0x1010, 0x1020, 1, 0, 1, 1}, {0x0ff0, 0x1000, 1, 0, 1, 2}}, 0x1020, DROP_NOT_A_BRANCH},
	/* a source in the middle of an instruction */
	{__LINE__, {{0x1012, 0x1020, 1, 0, 1, 1}, {0x0ff0, 0x1000, 1, 0, 1, 2}}, 0x1020, DROP_NOT_A_BRANCH},
	/* the walk runs into ud2 */
	{__LINE__, {{0x0ff0, 0x1000, 1, 0, 1, 2}, {0x1041, 0x1050, 1, 0, 1, 1}}, 0x1000, DROP_BACKWARDS},
	{__LINE__, {{0x1041, 0x105a, 1, 0, 1, 1}, {0x1041, 0x1050, 1, 0, 1, 1}}, 0x105a, DROP_BACKWARDS},
};

START_TEST(contradictions_drop_the_sample)
{
	struct perf_sample s = sample(bad_rows[_i].ip, bad_rows[_i].br, 2);
	enum trace_drop why;
	uint64_t ei, ec;
	size_t n = trace_rebuild(bin, &s, 1, out, &why, &ei, &ec);
	ck_assert_msg(n == 0 && why == bad_rows[_i].why, "row at line %d: %zu outcomes, reason %s",
		      bad_rows[_i].line, n, trace_drop_name(why));
}
END_TEST

/* ud2 between two entries: off the text. */
START_TEST(trap_in_range)
{
	static const struct perf_branch br[] = {{0x105a, 0x1000, 1, 0, 1, 2}, {0x1041, 0x1050, 1, 0, 1, 1}};
	struct perf_sample s = sample(0x1000, br, 2);
	enum trace_drop why;
	uint64_t ei, ec;
	ck_assert_uint_eq(trace_rebuild(bin, &s, 0, out, &why, &ei, &ec), 0);
	ck_assert_int_eq(why, DROP_OFF_TEXT);
}
END_TEST

/* Skylake may record the newest branch twice: with TRACE_DEDUP_NEWEST it counts
 * once. Without it, a repeated entry is a real second execution (a loop whose
 * back edge is its only taken branch): 0ff0 jmp 1000, twice in a row. */
START_TEST(duplicate_newest_entry)
{
	static const struct perf_branch br[] = {
		{0x1024, 0x1040, 5, 0, 1, 1}, {0x1024, 0x1040, 5, 0, 1, 1}, {0x1011, 0x1020, 3, 0, 1, 1}};
	struct perf_sample s = sample(0x1024, br, 3);
	enum trace_drop why;
	uint64_t ei, ec;
	size_t n = trace_rebuild(bin, &s, TRACE_DEDUP_NEWEST, out, &why, &ei, &ec);
	ck_assert_uint_eq(n, 3); /* bc2, bc3 NT, bc4 */
	ck_assert_uint_eq(out[2].from, 0x1024);
	ck_assert_uint_eq(trace_rebuild(bin, &s, 0, out, &why, &ei, &ec), 0);
	ck_assert_int_eq(why, DROP_BACKWARDS); /* 1040 -> 1024 cannot be walked */
	static const struct perf_branch loop[] = {{0x1058, 0x1050, 1, 0, 1, 2}, {0x1058, 0x1050, 1, 0, 1, 2}};
	static uint8_t back[0x10];
	memset(back, 0x90, sizeof(back));
	memcpy(back + 8, "\xeb\xf6", 2); /* 1058: jmp 1050 */
	struct binary *lb;
	ck_assert_int_eq(binary_from_code(back, sizeof(back), 0x1050, &lb), 0);
	s = sample(0x1058, loop, 2);
	ck_assert_uint_eq(trace_rebuild(lb, &s, 0, out, &why, &ei, &ec), 2);
	binary_free(lb);
}
END_TEST

/* Entries leaving the binary are kept as taken outcomes; their ranges are not walked. */
START_TEST(foreign_entries)
{
	static const struct perf_branch br[] = {
		{0x1024, 0x1040, 5, 0, 1, 1}, {0x7f0000001000ULL, 0x1020, 3, 0, 1, 6}, {0x1000, 0x7f0000000000ULL, 1, 0, 1, 4}};
	struct perf_sample s = sample(0x1024, br, 3);
	enum trace_drop why;
	uint64_t ei, ec;
	size_t n = trace_rebuild(bin, &s, 0, out, &why, &ei, &ec);
	ck_assert_uint_eq(n, 4); /* call out, return in, bc3 NT, bc4 */
	ck_assert_uint_eq(out[0].from, 0x1000);
	ck_assert_uint_eq(out[1].kind, BK_NONE);
	ck_assert_uint_eq(out[2].from, 0x1021);
	ck_assert_uint_eq(out[2].taken, 0);
}
END_TEST

/* Overlap arithmetic on hand-made edge sets. */
static struct edges *mk_edges(const double *w, int n)
{
	struct edges *e = edges_new();
	for (int i = 0; i < n; i++)
		if (w[i] > 0)
			edges_add(e, 0x1000 + (uint64_t)i, 0x2000, i == 3 ? BK_CALL : BK_COND, i != 2, w[i]);
	return e;
}

START_TEST(overlap_arithmetic)
{
	/* edges 0, 1 taken cond, 2 a fall-through, 3 a call */
	static const double q[] = {50, 30, 20, 0}, p_same[] = {5, 3, 2, 0}, p_half[] = {50, 0, 0, 50},
			    p_none[] = {0, 0, 0, 10};
	struct edges *tq = mk_edges(q, 4), *a = mk_edges(p_same, 4), *b = mk_edges(p_half, 4),
		     *c = mk_edges(p_none, 4);
	struct overlap o;
	overlap_compute(a, tq, &o);
	ck_assert_double_eq_tol(o.all, 1.0, 1e-12);
	ck_assert_double_eq_tol(o.hot_max_rel_err, 0.0, 1e-12);
	overlap_compute(b, tq, &o);
	ck_assert_double_eq_tol(o.all, 0.5, 1e-12);           /* min(.5,.5) + 0 + 0 */
	ck_assert_double_eq_tol(o.taken, 0.5, 1e-12); /* taken: p {e0 .5, e3 .5}, q {e0 .625, e1 .375} */
	ck_assert_double_eq_tol(o.hot_max_rel_err, 1.0, 1e-12); /* edge 1 missing */
	ck_assert_double_eq_tol(o.calls, 0.0, 1e-12);          /* truth has no calls, profile has */
	overlap_compute(c, tq, &o);
	ck_assert_double_eq_tol(o.all, 0.0, 1e-12);
	edges_free(tq), edges_free(a), edges_free(b), edges_free(c);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("trace");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, figure3_full_trace);
	tcase_add_test(tc, chopping_keeps_the_newest);
	tcase_add_test(tc, trigger_append_rules);
	tcase_add_test(tc, taken_window);
	tcase_add_test(tc, event_windows);
	tcase_add_test(tc, instruction_window);
	tcase_add_test(tc, cycle_window);
	tcase_add_test(tc, ip_at_the_newest_entrys_branch);
	tcase_add_test(tc, cycle_window_counts_every_branch_alike);
	tcase_add_test(tc, instruction_window_ends_at_the_ip);
	tcase_add_loop_test(tc, contradictions_drop_the_sample, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	tcase_add_test(tc, trap_in_range);
	tcase_add_test(tc, duplicate_newest_entry);
	tcase_add_test(tc, foreign_entries);
	tcase_add_test(tc, overlap_arithmetic);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
