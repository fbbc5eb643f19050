/* Ground truth (sim/truth.h) fed by hand-made retired blocks: counts, merged
 * terminators, indirect targets, REP figures (added, not counted from blocks),
 * partial blocks, fdata text. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/truth.h"
#include "tests/unit/run_suite.h"

/* Two runs sharing one conditional branch at 0x40100a (run A from 0x401000,
 * run B from 0x401008), an indirect jump run, a call, a ret and a REP run. */
static const uint16_t off_a[] = {0, 4, 8, 10, 12}, off_b[] = {0, 2, 4};
static const uint16_t off_j[] = {0, 2}, off_c[] = {0, 5}, off_r[] = {0, 1}, off_rep[] = {0, 5, 7};
static const uint8_t cls[8];
static struct block_info A = {0x401000, 0x40100c, 0x40100a, 0x401000, 0, 4, BK_COND, CC_E, 0, 2, off_a, cls};
static struct block_info B = {0x401008, 0x40100c, 0x40100a, 0x401000, 1, 2, BK_COND, CC_E, 0, 2, off_b, cls};
static struct block_info J = {0x402000, 0x402002, 0x402000, 0, 2, 1, BK_JMP_IND, 0, 0, 2, off_j, cls};
static struct block_info C = {0x403000, 0x403005, 0x403000, 0x404000, 3, 1, BK_CALL, 0, 0, 5, off_c, cls};
static struct block_info R = {0x404000, 0x404001, 0x404000, 0, 4, 1, BK_RET, 0, 0, 1, off_r, cls};
static struct block_info P = {0x405000, 0x405007, 0x405005, 0, 5, 2, BK_REP, 0, 0, 2, off_rep, cls};

static void feed(struct truth *t, const struct block_info *bi, uint32_t n, int kind, int taken,
		 uint64_t next, uint64_t iters, int run_start)
{
	/* a REP runs its whole count here */
	struct retired_block rb = {bi, next, iters, 1, n, (uint8_t)kind, (uint8_t)taken, (uint8_t)run_start, 0, iters, 0,
				   0, kind == BK_REP ? RB_REP_RAN : 0};
	struct block_sink s = truth_sink(t);
	s.retire(s.ctx, &rb);
}

static struct truth *sample(void)
{
	struct truth *t = truth_new();
	feed(t, &A, 4, BK_COND, 1, 0x401000, 0, 1);   /* A taken ×3 */
	feed(t, &A, 4, BK_COND, 1, 0x401000, 0, 1);
	feed(t, &A, 4, BK_COND, 1, 0x401000, 0, 1);
	feed(t, &A, 4, BK_COND, 0, 0x40100c, 0, 1);   /* A falls through ×1 */
	feed(t, &B, 2, BK_COND, 0, 0x40100c, 0, 1);   /* B (same branch) falls through ×2 */
	feed(t, &B, 2, BK_COND, 0, 0x40100c, 0, 1);
	feed(t, &J, 1, BK_JMP_IND, 1, 0x401000, 0, 1); /* two targets */
	feed(t, &J, 1, BK_JMP_IND, 1, 0x401008, 0, 1);
	feed(t, &J, 1, BK_JMP_IND, 1, 0x401008, 0, 1);
	feed(t, &C, 1, BK_CALL, 1, 0x404000, 0, 1);
	feed(t, &R, 1, BK_RET, 1, 0x403005, 0, 1);
	feed(t, &P, 2, BK_REP, 0, 0x405007, 300, 1);
	feed(t, &P, 2, BK_REP, 0, 0x405007, 0, 1);
	feed(t, &A, 2, BK_NONE, 0, 0x401008, 0, 1);   /* cut after 2 instructions */
	return t;
}

START_TEST(branch_counts_merge_runs)
{
	struct truth *t = sample();
	const struct truth_branch *br;
	size_t n;
	ck_assert_int_eq(truth_branches(t, &br, &n), 0);
	ck_assert_uint_eq(n, 1);
	ck_assert_uint_eq(br[0].addr, 0x40100a);
	ck_assert_uint_eq(br[0].taken, 3);
	ck_assert_uint_eq(br[0].not_taken, 3);
	ck_assert_uint_eq(br[0].fallthrough, 0x40100c);
	/* 4*4 + 2*2 + 3 + 1 + 1 + 2*2 + 2 */
	ck_assert_uint_eq(truth_insns(t), 31);
	truth_free(t);
}
END_TEST

START_TEST(transfers_per_target)
{
	struct truth *t = sample();
	const struct truth_edge *e;
	size_t n;
	ck_assert_int_eq(truth_edges(t, &e, &n), 0);
	ck_assert_uint_eq(n, 4);
	ck_assert_uint_eq(e[0].from, 0x402000);
	ck_assert_uint_eq(e[0].to, 0x401000);
	ck_assert_uint_eq(e[0].count, 1);
	ck_assert_uint_eq(e[1].to, 0x401008);
	ck_assert_uint_eq(e[1].count, 2);
	ck_assert_int_eq(e[2].kind, BK_CALL);
	ck_assert_uint_eq(e[2].to, 0x404000);
	ck_assert_int_eq(e[3].kind, BK_RET);
	ck_assert_uint_eq(e[3].to, 0x403005);
	truth_free(t);
}
END_TEST

/* REP figures are what the REP reference adds (truth_rep_add), sorted by site and
 * summed, requested saturating; the REP parts of the blocks add nothing to them, and a
 * block that retired no instruction (a REP left before anything retired) nothing at all. */
START_TEST(rep_sites)
{
	struct truth *t = sample();
	struct truth_rep *r;
	size_t n;
	ck_assert_int_eq(truth_rep_sites(t, &r, &n), 0);
	ck_assert_uint_eq(n, 0);
	free(r);
	struct retired_block rb = {&P, 0x405005, 100, 1, 0, BK_NONE, 0, 1, 0, 300, 0, 200, RB_REP_RAN | RB_REP_LEFT};
	struct block_sink s = truth_sink(t);
	s.retire(s.ctx, &rb);
	ck_assert_uint_eq(truth_insns(t), 31);
	ck_assert_int_eq(truth_rep_add(t, 0x405005, 1, 300, 0, 0), 0);
	ck_assert_int_eq(truth_rep_add(t, 0x405005, 0, 0, 100, 0), 0);
	ck_assert_int_eq(truth_rep_add(t, 0x401000, 1, UINT64_MAX, 7, 1), 0);
	ck_assert_int_eq(truth_rep_add(t, 0x405005, 1, 500, 200, 1), 0);
	ck_assert_int_eq(truth_rep_add(t, 0x401000, 1, 5, 5, 0), 0);
	ck_assert_int_eq(truth_rep_sites(t, &r, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(r[0].addr, 0x401000);
	ck_assert_uint_eq(r[0].executions, 2);
	ck_assert_uint_eq(r[0].requested, UINT64_MAX);
	ck_assert_uint_eq(r[0].iterations, 12);
	ck_assert_uint_eq(r[0].by_condition, 1);
	ck_assert_uint_eq(r[1].addr, 0x405005);
	ck_assert_uint_eq(r[1].executions, 2);
	ck_assert_uint_eq(r[1].iterations, 300);
	ck_assert_uint_eq(r[1].requested, 800);
	ck_assert_uint_eq(r[1].by_condition, 1);
	free(r);
	truth_free(t);
}
END_TEST

START_TEST(fdata_text)
{
	struct truth *t = sample();
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct symtab *st = symtab_new_empty();
	struct fdata_namer nm = {st, "prog", 0x400000, NULL, 0};
	ck_assert_int_eq(truth_write_fdata(t, f, &nm), 0);
	fclose(f);
	ck_assert_str_eq(buf,
			 "0 prog 100a 0 prog 1000 0 3\n"
			 "0 prog 100a 0 prog 100c 0 3\n"
			 "0 prog 2000 0 prog 1000 0 1\n"
			 "0 prog 2000 0 prog 1008 0 2\n"
			 "0 prog 3000 0 prog 4000 0 1\n"
			 "0 prog 4000 0 prog 3005 0 1\n");
	free(buf);
	symtab_free(st);
	truth_free(t);
}
END_TEST

START_TEST(function_instructions_include_partial_blocks)
{
	struct truth *t = sample();
	struct symtab *st = symtab_new_empty();
	uint64_t *insns, *calls, unknown;
	ck_assert_int_eq(truth_function_counts(t, st, &insns, &calls, &unknown), 0);
	ck_assert_uint_eq(unknown, truth_insns(t)); /* no symbols: everything is outside */
	free(insns), free(calls);
	symtab_free(st);
	truth_free(t);
}
END_TEST

START_TEST(run_entries)
{
	struct truth *t = sample();
	const struct block_info **bi;
	uint64_t *execs;
	size_t n;
	ck_assert_int_eq(truth_runs(t, &bi, &execs, &n), 0);
	ck_assert_uint_eq(n, 6);
	ck_assert_ptr_eq(bi[0], &A);
	ck_assert_uint_eq(execs[0], 5); /* four full runs and one cut, all entered by a branch */
	ck_assert_ptr_eq(bi[1], &B);
	ck_assert_uint_eq(execs[1], 2);
	free(bi), free(execs);
	truth_free(t);
}
END_TEST

static char *json_of(struct truth *t)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	struct symtab *st = symtab_new_empty();
	ck_assert_int_eq(truth_write_json(t, f, st, "/nonexistent/prog", 0), 0);
	fclose(f);
	symtab_free(st);
	return buf;
}

/* Program cycles by run id (as a PMU gives them): the truth's runs are its own,
 * ids it never saw another program's; D, reached only by falling through, is in
 * no block entry. Ids 0..6 (A, B, J, C, R, P, D) hold 10..70, ids 7 and 8 80 and 90. */
START_TEST(cycles_by_run)
{
	static const uint16_t off_d[] = {0, 1};
	static struct block_info D = {0x406000, 0x406001, 0x406000, 0, 6, 1, BK_NONE, 0, 0, 1, off_d, cls};
	struct truth *t = sample();
	feed(t, &D, 1, BK_NONE, 0, 0x406001, 0, 0);
	char *j = json_of(t);
	ck_assert_ptr_null(strstr(j, "cycles")); /* none given: none written */
	free(j);
	static const uint64_t cyc[] = {10, 20, 30, 40, 50, 60, 70, 80, 90};
	truth_set_run_cycles(t, cyc, 9);
	uint64_t own, unlisted, other, *fn, unknown;
	truth_cycle_totals(t, &own, &unlisted, &other);
	ck_assert_uint_eq(own, 280);
	ck_assert_uint_eq(unlisted, 70);
	ck_assert_uint_eq(other, 170);
	struct symtab *st = symtab_new_empty();
	ck_assert_int_eq(truth_function_cycles(t, st, &fn, &unknown), 0);
	ck_assert_uint_eq(unknown, 280); /* no symbols */
	free(fn);
	symtab_free(st);
	j = json_of(t);
	ck_assert_ptr_nonnull(strstr(j, "  \"cycles\": 280,\n  \"cycles_outside_blocks\": 70,\n"
					"  \"cycles_other_programs\": 170,\n"));
	ck_assert_ptr_nonnull(strstr(j, "  \"cycles_outside_symbols\": 280,\n"));
	ck_assert_ptr_nonnull(strstr(j, "\"start\": \"0x401000\", \"start_sym\": null, \"instructions\": 4, "
					"\"end_kind\": \"cond\", \"executions\": 5, \"cycles\": 10}"));
	ck_assert_ptr_null(strstr(j, "0x406000"));
	free(j);
	truth_free(t);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("truth");
	TCase *tc = tcase_create("truth");
	tcase_add_test(tc, branch_counts_merge_runs);
	tcase_add_test(tc, transfers_per_target);
	tcase_add_test(tc, rep_sites);
	tcase_add_test(tc, fdata_text);
	tcase_add_test(tc, function_instructions_include_partial_blocks);
	tcase_add_test(tc, run_entries);
	tcase_add_test(tc, cycles_by_run);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
