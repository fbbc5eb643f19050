/* The REP unit (pmu_model/rep.h) fed by hand-made retired blocks: the records
 * of each mode against counts known by construction, the instruction-
 * information buffer filling, interrupting when full and draining without
 * loss, taken-branch records with TBE, RE off, the registers the handler
 * reads, and a REP recorded in parts (left in the middle, then resumed). */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "pmu_model/rep.h"
#include "tests/unit/run_suite.h"

/* M: "mov; rep movsb" at 0x401000 (REP terminator at 0x401003); E: "repe cmpsb"
 * alone at 0x402000 (conditional form); J: a taken jump at 0x403000 -> 0x401000. */
static const uint16_t off_m[] = {0, 3, 5}, off_e[] = {0, 2}, off_j[] = {0, 2};
static const uint8_t cls_m[] = {IC_ALU, IC_STRING}, cls_e[] = {IC_STRING}, cls_j[] = {IC_BRANCH};
static const struct block_info M = {0x401000, 0x401005, 0x401003, 0, 0, 2, BK_REP, 0, 0, 2, off_m, cls_m};
static const struct block_info E = {0x402000, 0x402002, 0x402000, 0, 1, 1, BK_REP, 0, BI_REP_COND, 2, off_e, cls_e};
static const struct block_info J = {0x403000, 0x403002, 0x403000, 0x401000, 2, 1, BK_JMP, 0, 0, 2, off_j, cls_j};

#define MAXR 256
static struct rep_record got[MAXR];
static size_t ngot, nint, sizes[MAXR];
static struct rep_unit *cur;
static uint64_t rcr_seen[MAXR], ctr_seen[MAXR];

static void on_interrupt(void *ctx, const struct rep_record *r, size_t n)
{
	(void)ctx;
	ck_assert_uint_le(ngot + n, MAXR);
	rcr_seen[nint] = rep_unit_rcr(cur);
	ctr_seen[nint] = rep_unit_exec_counter(cur);
	sizes[nint++] = n;
	memcpy(got + ngot, r, n * sizeof(*r));
	ngot += n;
}

static struct rep_unit *mk(enum rep_mode mode, uint32_t control, uint32_t entries)
{
	struct rep_config cfg = {mode, control, entries};
	ngot = nint = 0;
	ck_assert_int_eq(rep_unit_new(&cfg, (struct rep_handler){on_interrupt, NULL}, &cur), 0);
	return cur;
}

/* A block of bi; for a REP run, a part of an execution that began with count in the
 * count register and now has left in it after iters more iterations. part: RB_REP_*
 * (kind BK_NONE: the REP was left, RB_REP_LEFT, and did not retire). */
static void feed_part(struct rep_unit *u, const struct block_info *bi, int kind, uint64_t count, uint64_t iters,
		      uint64_t left, int part)
{
	int left_rep = bi->kind == BK_REP && kind == BK_NONE;
	struct retired_block rb = {.info = bi, .next = bi == &J ? J.target : left_rep ? bi->term : bi->end,
				   .rep_iters = iters, .rep_count = count, .tid = 5,
				   .ninsns = bi->ninsns - (left_rep ? 1u : 0u), .kind = (uint8_t)kind,
				   .taken = kind == BK_JMP, .run_start = 1, .rep_left = left,
				   .rep_part = (uint8_t)(bi->kind == BK_REP ? RB_REP_RAN | part | (left_rep ? RB_REP_LEFT : 0) : 0)};
	struct block_sink s = rep_unit_sink(u);
	s.retire(s.ctx, &rb);
}

/* A whole execution (or the first part of one left in the middle: kind BK_NONE). */
static void feed(struct rep_unit *u, const struct block_info *bi, int kind, uint64_t count, uint64_t iters)
{
	feed_part(u, bi, kind, count, iters, count - iters, 0);
}

/* Interrupt at the last execution: requested, actual and why it ended, for
 * counts 0, 1, small and large, and a repe stopped by a planted mismatch. */
START_TEST(last_execution_records_exact_counts)
{
	static const uint64_t counts[] = {0, 1, 7, 1000000};
	struct rep_unit *u = mk(REP_LAST, REP_F_RE, 0);
	for (int i = 0; i < 4; i++)
		feed(u, &M, BK_REP, counts[i], counts[i]);
	feed(u, &E, BK_REP, 100, 38); /* mismatch at index 37 */
	feed(u, &E, BK_REP, 16, 16);  /* no mismatch: the count ran out */
	ck_assert_uint_eq(ngot, 6);
	ck_assert_uint_eq(nint, 6);
	for (int i = 0; i < 4; i++) {
		ck_assert_uint_eq(got[i].site, 0x401003);
		ck_assert_uint_eq(got[i].requested, counts[i]);
		ck_assert_uint_eq(got[i].actual, counts[i]);
		ck_assert_int_eq(got[i].end, REP_END_COUNT);
		ck_assert_int_eq(got[i].has_actual, 1);
		ck_assert_uint_eq(got[i].tid, 5);
		ck_assert_uint_eq(rcr_seen[i], counts[i]);
		ck_assert_uint_eq(ctr_seen[i], counts[i]);
	}
	ck_assert_uint_eq(got[4].site, 0x402000);
	ck_assert_uint_eq(got[4].requested, 100);
	ck_assert_uint_eq(got[4].actual, 38);
	ck_assert_int_eq(got[4].end, REP_END_CONDITION);
	ck_assert_int_eq(got[5].end, REP_END_COUNT);
	/* instructions before the REP: 1 (mov) in the first block, then 2 per block */
	ck_assert_uint_eq(got[0].insn, 1);
	ck_assert_uint_eq(got[1].insn, 3);
	ck_assert_uint_eq(rep_unit_occurrences(u), 6);
	rep_unit_free(u);
}
END_TEST

/* Interrupt at the first execution: the requested count only. */
START_TEST(first_execution_records_requested)
{
	struct rep_unit *u = mk(REP_FIRST, REP_F_RE, 0);
	feed(u, &E, BK_REP, (uint64_t)-1 & 0xffffffffu, 12);
	ck_assert_uint_eq(ngot, 1);
	ck_assert_uint_eq(got[0].requested, 0xffffffffu);
	ck_assert_int_eq(got[0].has_actual, 0);
	rep_unit_free(u);
}
END_TEST

/* A 3-entry buffer with TBE: REP and branch records in order, an interrupt
 * each time it fills, the rest at the end; nothing lost, nothing twice. */
START_TEST(buffer_fills_interrupts_and_drains)
{
	struct rep_unit *u = mk(REP_BUFFER, REP_F_RE | REP_F_TBE, 3);
	for (int i = 0; i < 4; i++) {
		feed(u, &M, BK_REP, 10 + (uint64_t)i, 10 + (uint64_t)i);
		feed(u, &J, BK_JMP, 0, 0);
	}
	ck_assert_uint_eq(nint, 2); /* 8 records: full at 3 and 6 */
	ck_assert_uint_eq(rep_unit_buffer_fill(u), 2);
	rep_unit_flush(u);
	ck_assert_uint_eq(nint, 3);
	ck_assert_uint_eq(sizes[0], 3);
	ck_assert_uint_eq(sizes[2], 2);
	ck_assert_uint_eq(ngot, 8);
	for (int i = 0; i < 4; i++) {
		ck_assert_int_eq(got[2 * i].kind, REP_ENTRY_REP);
		ck_assert_uint_eq(got[2 * i].actual, 10 + (uint64_t)i);
		ck_assert_int_eq(got[2 * i + 1].kind, REP_ENTRY_BRANCH);
		ck_assert_uint_eq(got[2 * i + 1].site, 0x403000);
		ck_assert_uint_eq(got[2 * i + 1].to, 0x401000);
	}
	ck_assert_uint_eq(rep_unit_buffer_fill(u), 0);
	rep_unit_free(u);
}
END_TEST

/* Without TBE the buffer holds REP records only; a 1-entry buffer interrupts on
 * every REP; the in-memory variant behaves the same. */
START_TEST(buffer_without_tbe)
{
	for (int m = REP_BUFFER; m <= REP_MEMBUFFER; m++) {
		struct rep_unit *u = mk((enum rep_mode)m, REP_F_RE, 1);
		feed(u, &M, BK_REP, 4, 4);
		feed(u, &J, BK_JMP, 0, 0);
		feed(u, &E, BK_REP, 9, 3);
		ck_assert_uint_eq(nint, 2);
		ck_assert_uint_eq(ngot, 2);
		ck_assert_int_eq(got[1].end, REP_END_CONDITION);
		rep_unit_flush(u);
		ck_assert_uint_eq(nint, 2); /* nothing left */
		rep_unit_free(u);
	}
}
END_TEST

/* RE clear: the unit does nothing; bad configurations are refused. */
START_TEST(disabled_and_bad_configs)
{
	struct rep_unit *u = mk(REP_LAST, 0, 0);
	feed(u, &M, BK_REP, 3, 3);
	ck_assert_uint_eq(ngot, 0);
	ck_assert_uint_eq(rep_unit_occurrences(u), 0);
	rep_unit_free(u);
	struct rep_config bad = {REP_BUFFER, REP_F_RE, 0};
	ck_assert_int_eq(rep_unit_new(&bad, (struct rep_handler){0}, &u), PMUSIM_ERR_ARG);
	bad.mode = (enum rep_mode)99;
	ck_assert_int_eq(rep_unit_new(&bad, (struct rep_handler){0}, &u), PMUSIM_ERR_ARG);
	ck_assert_int_eq(rep_mode_parse("last"), REP_LAST);
	ck_assert_int_eq(rep_mode_parse("membuffer"), REP_MEMBUFFER);
	ck_assert_int_eq(rep_mode_parse("patch2"), -1);
}
END_TEST

/* The counter method: one interrupt per REP completion, the handler reading
 * RCR and the REP-execution counter; a REP cut by the end of the run. */
START_TEST(counter_mode_and_interrupted)
{
	struct rep_unit *u = mk(REP_COUNTER, REP_F_RE, 0);
	feed(u, &M, BK_REP, 50, 50);
	feed(u, &M, BK_NONE, 50, 20); /* the run stopped inside it */
	ck_assert_uint_eq(nint, 2);
	ck_assert_uint_eq(rcr_seen[0], 50);
	ck_assert_uint_eq(ctr_seen[0], 50);
	ck_assert_uint_eq(ctr_seen[1], 20);
	ck_assert_int_eq(got[1].end, REP_END_INTERRUPTED);
	rep_unit_free(u);
}
END_TEST

/* SSE: the handler is called after every iteration, with the count register
 * before it, then (mode last) the REP record; in mode first the REP record
 * comes first. */
START_TEST(single_step_follows_every_iteration)
{
	struct rep_unit *u = mk(REP_LAST, REP_F_RE | REP_F_SSE, 0);
	feed(u, &E, BK_REP, 9, 3); /* stopped by its condition after 3 */
	ck_assert_uint_eq(ngot, 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_int_eq(got[i].kind, REP_ENTRY_STEP);
		ck_assert_uint_eq(got[i].requested, 9 - (uint64_t)i);
		ck_assert_uint_eq(got[i].actual, (uint64_t)i);
	}
	ck_assert_int_eq(got[3].kind, REP_ENTRY_REP);
	ck_assert_uint_eq(got[3].actual, 3);
	rep_unit_free(u);
	u = mk(REP_FIRST, REP_F_RE | REP_F_SSE, 0);
	feed(u, &M, BK_REP, 2, 2);
	ck_assert_uint_eq(ngot, 3);
	ck_assert_int_eq(got[0].kind, REP_ENTRY_REP);
	ck_assert_int_eq(got[1].kind, REP_ENTRY_STEP);
	rep_unit_free(u);
}
END_TEST

/* The in-memory buffer: entries land in memory at next-entry in the documented
 * layout; an entry that would not fit interrupts and next-entry goes back to 0. */
START_TEST(memory_buffer_layout_and_registers)
{
	struct rep_unit *u = mk(REP_MEMBUFFER, REP_F_RE, 2);
	uint64_t bp, size, next;
	feed(u, &E, BK_REP, 9, 3);
	const uint8_t *m = rep_unit_memory(u, &bp, &size, &next);
	ck_assert_uint_eq(bp, REP_MEM_BASE);
	ck_assert_uint_eq(size, 2 * REP_MEM_ENTRY);
	ck_assert_uint_eq(next, REP_MEM_ENTRY);
	uint64_t site, requested, actual;
	memcpy(&site, m + 8, 8);
	memcpy(&requested, m + 24, 8);
	memcpy(&actual, m + 32, 8);
	ck_assert_int_eq(m[0], REP_ENTRY_REP);
	ck_assert_int_eq(m[1], REP_END_CONDITION);
	ck_assert_uint_eq(site, 0x402000);
	ck_assert_uint_eq(requested, 9);
	ck_assert_uint_eq(actual, 3);
	ck_assert_uint_eq(nint, 0);
	feed(u, &M, BK_REP, 4, 4); /* fills it */
	ck_assert_uint_eq(nint, 1);
	ck_assert_uint_eq(ngot, 2);
	ck_assert_uint_eq(got[0].requested, 9);
	ck_assert_uint_eq(got[1].site, 0x401003);
	rep_unit_memory(u, &bp, &size, &next);
	ck_assert_uint_eq(next, 0);
	rep_unit_free(u);
}
END_TEST

/* A REP left in the middle by a fault whose handler returns into it: the first part
 * (INTERRUPTED, 100 of 300) and the continuation (resumed, RCR still 300, the 200
 * iterations since it went on) are one execution; a REP the handler runs in between
 * is one of its own. In mode first only the first part interrupts. */
START_TEST(resumed_part_is_the_same_execution)
{
	struct rep_unit *u = mk(REP_LAST, REP_F_RE, 0);
	feed(u, &M, BK_NONE, 300, 100);                          /* the fault */
	feed(u, &E, BK_REP, 16, 16);                             /* in the handler */
	feed_part(u, &M, BK_REP, 300, 200, 0, RB_REP_RESUMED);   /* rt_sigreturn into it */
	ck_assert_uint_eq(ngot, 3);
	ck_assert_int_eq(got[0].end, REP_END_INTERRUPTED);
	ck_assert_uint_eq(got[0].actual, 100);
	ck_assert_int_eq(got[0].resumed, 0);
	ck_assert_uint_eq(got[0].insn, 1); /* the mov before it retired, the REP did not */
	ck_assert_int_eq(got[2].resumed, 1);
	ck_assert_int_eq(got[2].end, REP_END_COUNT);
	ck_assert_uint_eq(got[2].requested, 300);
	ck_assert_uint_eq(got[2].actual, 200);
	ck_assert_uint_eq(rcr_seen[2], 300);
	ck_assert_uint_eq(ctr_seen[2], 200);
	ck_assert_uint_eq(rep_unit_occurrences(u), 2);
	rep_unit_free(u);
	u = mk(REP_FIRST, REP_F_RE, 0);
	feed(u, &M, BK_NONE, 300, 100);
	feed_part(u, &M, BK_REP, 300, 200, 0, RB_REP_RESUMED);
	ck_assert_uint_eq(ngot, 1);
	ck_assert_uint_eq(got[0].requested, 300);
	rep_unit_free(u);
	/* single steps of the continuation: the count before each iteration, its index in
	 * the execution */
	u = mk(REP_LAST, REP_F_RE | REP_F_SSE, 0);
	feed_part(u, &M, BK_REP, 300, 3, 0, RB_REP_RESUMED);
	ck_assert_uint_eq(ngot, 4);
	for (int i = 0; i < 3; i++) {
		ck_assert_uint_eq(got[i].requested, 3 - (uint64_t)i);
		ck_assert_uint_eq(got[i].actual, 297 + (uint64_t)i);
	}
	rep_unit_free(u);
	/* the in-memory entry carries the flag in its fourth byte */
	u = mk(REP_MEMBUFFER, REP_F_RE, 4);
	feed_part(u, &M, BK_REP, 300, 200, 0, RB_REP_RESUMED);
	uint64_t bp, size, next;
	const uint8_t *m = rep_unit_memory(u, &bp, &size, &next);
	ck_assert_int_eq(m[3], 1);
	rep_unit_free(u);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("rep");
	TCase *tc = tcase_create("rep");
	tcase_add_test(tc, last_execution_records_exact_counts);
	tcase_add_test(tc, first_execution_records_requested);
	tcase_add_test(tc, buffer_fills_interrupts_and_drains);
	tcase_add_test(tc, buffer_without_tbe);
	tcase_add_test(tc, disabled_and_bad_configs);
	tcase_add_test(tc, counter_mode_and_interrupted);
	tcase_add_test(tc, single_step_follows_every_iteration);
	tcase_add_test(tc, memory_buffer_layout_and_registers);
	tcase_add_test(tc, resumed_part_is_the_same_execution);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
