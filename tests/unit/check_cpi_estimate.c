/* The CPI estimate (profiler/cpi.h, lbr_range.h, cpi_check.h) on hand-assembled
 * code and hand-made samples; every expected figure is worked out by hand in
 * the comments (encodings: Intel SDM vol. 2: nop = 90, jne rel8 = 75 cb,
 * jmp rel8 = eb cb, ret = c3).
 *
 *   1000  90           nop            the loop: a run of 3 instructions
 *   1001  90           nop
 *   1002  75 fc        jne 1000
 *   1004  eb 0a        jmp 1010
 *   1010  90           nop            the run at 1010 (4 instructions) and,
 *   1011  90           nop            entered at 1011 by the branch at 1013,
 *   1012  90           nop            the run at 1011 (3): they overlap at
 *   1013  75 fc        jne 1011       1011..1013
 *   1015  c3           ret
 *   1016  0f 0b        ud2 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "profiler/cpi.h"
#include "profiler/cpi_check.h"
#include "profiler/lbr_range.h"
#include "tests/unit/run_suite.h"

#define BASE 0x1000u
static uint8_t code[0x20];
static struct binary *bin;

static void setup(void)
{
	memset(code, 0x90, sizeof(code));
	memcpy(code + 0x02, "\x75\xfc", 2);
	memcpy(code + 0x04, "\xeb\x0a", 2);
	memcpy(code + 0x13, "\x75\xfc", 2);
	code[0x15] = 0xc3;
	memcpy(code + 0x16, "\x0f\x0b", 2);
	ck_assert_int_eq(binary_from_code(code, sizeof(code), BASE, &bin), 0);
}

static void teardown(void)
{
	binary_free(bin);
}

static int count_runs(void *ctx, const struct block_info *run, uint32_t n)
{
	int *k = ctx;
	ck_assert_uint_eq(n, run->ninsns);
	(*k)++;
	return 0;
}

START_TEST(ranges_are_walked_through_not_taken_branches)
{
	int runs = 0;
	/* the loop body: 1000, 1001, 1002 */
	ck_assert_int_eq(lbr_range_walk(bin, 0x1000, 0x1002, count_runs, &runs), 3);
	ck_assert_int_eq(runs, 1);
	/* from the loop's target through its exit (jne not taken) to the jmp: 3 + 1 */
	runs = 0;
	ck_assert_int_eq(lbr_range_walk(bin, 0x1000, 0x1004, count_runs, &runs), 4);
	ck_assert_int_eq(runs, 2);
	/* 1010 through 1013: one run of 4 */
	ck_assert_int_eq(lbr_range_walk(bin, 0x1010, 0x1013, NULL, NULL), 4);
	ck_assert_int_eq(lbr_range_walk(bin, 0x1011, 0x1013, NULL, NULL), 3);
	/* the ret after the loop falls through its jne: 1011..1013, then 1015 */
	ck_assert_int_eq(lbr_range_walk(bin, 0x1011, 0x1015, NULL, NULL), 4);
	/* contradictions */
	ck_assert_int_eq(lbr_range_walk(bin, 0x1002, 0x1000, NULL, NULL), LBR_RANGE_BACKWARDS);
	ck_assert_int_eq(lbr_range_walk(bin, 0x1000, 0x1001, NULL, NULL), LBR_RANGE_NOT_BRANCH);
	ck_assert_int_eq(lbr_range_walk(bin, 0x1000, 0x1013, NULL, NULL), LBR_RANGE_UNCOND); /* the jmp at 1004 */
	ck_assert_int_eq(lbr_range_walk(bin, 0x9000, 0x9002, NULL, NULL), LBR_RANGE_FOREIGN);
	ck_assert_str_eq(lbr_range_err_name(LBR_RANGE_UNCOND), "unconditional_inside");
}
END_TEST

static struct perf_sample lbr_sample(uint64_t period, const struct perf_branch *br, uint64_t n)
{
	return (struct perf_sample){.ip = br[0].from, .period = period, .nbr = n, .br = br};
}

START_TEST(lbr_instruction_frequency)
{
	struct cpi_opts o = {0};
	struct cpi *c = cpi_new(&o);
	ck_assert_ptr_nonnull(c);
	/* three entries of the loop's back edge: 2 ranges of 3 instructions, each
	 * +period/(3-1) = 5 per instruction */
	struct perf_branch br[3] = {{0x1002, 0x1000, 4, 0, 1, 0}, {0x1002, 0x1000, 4, 0, 1, 0}, {0x1002, 0x1000, 4, 0, 1, 0}};
	struct perf_sample s = lbr_sample(10, br, 3);
	ck_assert_int_eq(cpi_add_lbr(c, bin, &s), 0);
	struct cpi_row r;
	cpi_insn(c, 0x1001, &r);
	ck_assert_double_eq_tol(r.insns, 10.0, 1e-9);
	cpi_block(c, bin, 0x1000, &r);
	ck_assert_double_eq_tol(r.insns, 30.0, 1e-9); /* 10 executions of 3 instructions */
	ck_assert_uint_eq(r.end, 0x1004);
	ck_assert_uint_eq(r.n_insn, 1); /* one sample */
	/* cycles: a sample of period 60 at 1001 whose branch stack places it in the loop's run */
	struct perf_branch cb[1] = {{0x1002, 0x1000, 0, 0, 1, 0}};
	struct perf_sample cs = {.ip = 0x1001, .period = 60, .nbr = 1, .br = cb};
	ck_assert_int_eq(cpi_add_cycles(c, bin, &cs), 0);
	cpi_block(c, bin, 0x1000, &r);
	ck_assert_double_eq_tol(r.cycles, 60.0, 1e-9);
	ck_assert_double_eq_tol(cpi_row_cpi(&r), 2.0, 1e-9);
	ck_assert_double_eq_tol(cpi_row_ipc(&r), 0.5, 1e-9);
	/* sqrt(1/1 + 1/1) */
	ck_assert_double_eq_tol(cpi_row_rel_err(&r), sqrt(2.0), 1e-9);
	/* the LBR-cycles method: each range's cycles (the newer entry's, 4) over its
	 * 3 instructions with the range's weight 5: 2 ranges x 4 x 5 = 40 */
	cpi_free(c);
	o.cycles_from = CPI_CYCLES_LBR;
	c = cpi_new(&o);
	ck_assert_int_eq(cpi_add_lbr(c, bin, &s), 0);
	cpi_block(c, bin, 0x1000, &r);
	ck_assert_double_eq_tol(r.cycles, 40.0, 1e-9);
	cpi_insn(c, 0x1002, &r);
	ck_assert_double_eq_tol(r.cycles, 40.0 / 3, 1e-9);
	cpi_free(c);
}
END_TEST

/* Runs 1010 (4 instructions) and 1011 (3) overlap at 1011..1013. */
START_TEST(overlapping_runs_share_by_executions_or_by_placement)
{
	struct cpi_opts o = {0};
	struct cpi *c = cpi_new(&o);
	/* the run at 1010 once and the run at 1011 three times (weight 1 each):
	 * entries newest first: 1013->1011 (x3), the jmp 1004->1010 oldest */
	struct perf_branch br[5] = {{0x1013, 0x1011, 0, 0, 1, 0},
				    {0x1013, 0x1011, 0, 0, 1, 0},
				    {0x1013, 0x1011, 0, 0, 1, 0},
				    {0x1013, 0x1011, 0, 0, 1, 0},
				    {0x1004, 0x1010, 0, 0, 1, 0}};
	struct perf_sample s = lbr_sample(4, br, 5); /* weight 4/(5-1) = 1 */
	ck_assert_int_eq(cpi_add_lbr(c, bin, &s), 0);
	struct cpi_row a, b;
	cpi_block(c, bin, 0x1010, &a);
	cpi_block(c, bin, 0x1011, &b);
	ck_assert_double_eq_tol(a.insns, 4.0, 1e-9);
	ck_assert_double_eq_tol(b.insns, 9.0, 1e-9);
	/* a cycles sample of 40 at 1012 without a branch stack: 1012 lies in both
	 * runs, executed 1 and 3 times: 10 and 30 */
	struct perf_sample cs = {.ip = 0x1012, .period = 40};
	ck_assert_int_eq(cpi_add_cycles(c, bin, &cs), 0);
	cpi_block(c, bin, 0x1010, &a);
	cpi_block(c, bin, 0x1011, &b);
	ck_assert_double_eq_tol(a.cycles, 10.0, 1e-9);
	ck_assert_double_eq_tol(b.cycles, 30.0, 1e-9);
	/* one of 20 at 1013 whose newest entry is the jmp to 1010: all in run 1010 */
	struct perf_branch jb[1] = {{0x1004, 0x1010, 0, 0, 1, 0}};
	struct perf_sample ps = {.ip = 0x1013, .period = 20, .nbr = 1, .br = jb};
	ck_assert_int_eq(cpi_add_cycles(c, bin, &ps), 0);
	cpi_block(c, bin, 0x1010, &a);
	cpi_block(c, bin, 0x1011, &b);
	ck_assert_double_eq_tol(a.cycles, 30.0, 1e-9);
	ck_assert_double_eq_tol(b.cycles, 30.0, 1e-9);
	/* the IP is the newest entry's own branch (not after it): the run before it */
	struct perf_branch lb[2] = {{0x1013, 0x1011, 0, 0, 1, 0}, {0x1013, 0x1011, 0, 0, 1, 0}};
	struct perf_sample ls = {.ip = 0x1013, .period = 6, .nbr = 2, .br = lb};
	ck_assert_int_eq(cpi_add_cycles(c, bin, &ls), 0);
	cpi_block(c, bin, 0x1011, &b);
	ck_assert_double_eq_tol(b.cycles, 36.0, 1e-9);
	ck_assert_uint_eq(cpi_stats(c)->cycles_placed, 2);
	cpi_free(c);
}
END_TEST

START_TEST(ip_baseline_and_adjust)
{
	struct cpi_opts o = {.insns_from = CPI_INSNS_IP, .cycles_adjust = -20};
	struct cpi *c = cpi_new(&o);
	struct perf_sample i1 = {.ip = 0x1000, .period = 100}, i2 = {.ip = 0x1001, .period = 100};
	struct perf_sample c1 = {.ip = 0x1001, .period = 320};
	ck_assert_int_eq(cpi_add_insn_ip(c, &i1), 0);
	ck_assert_int_eq(cpi_add_insn_ip(c, &i2), 0);
	ck_assert_int_eq(cpi_add_cycles(c, bin, &c1), 0);
	struct cpi_row r;
	/* the sums over the run's addresses: 200 instructions, 320 - 20 cycles */
	cpi_block(c, bin, 0x1000, &r);
	ck_assert_double_eq_tol(r.insns, 200.0, 1e-9);
	ck_assert_double_eq_tol(r.cycles, 300.0, 1e-9);
	ck_assert_double_eq_tol(cpi_row_cpi(&r), 1.5, 1e-9);
	struct cpi_row *rows;
	size_t n;
	ck_assert_int_eq(cpi_rows(c, bin, CPI_BY_INSN, &rows, &n), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_uint_eq(rows[0].start, 0x1001); /* the hotter first */
	free(rows);
	cpi_free(c);
}
END_TEST

START_TEST(truth_is_read_and_compared)
{
	char path[] = "/tmp/pmusim-cpi-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	FILE *f = fdopen(fd, "w");
	fputs("{\n  \"program\": \"x\",\n  \"instructions\": 13,\n  \"cycles\": 100,\n"
	      "  \"functions\": [\n"
	      "    {\"name\": \"loop\", \"addr\": \"0x1000\", \"instructions\": 30, \"calls\": 1, \"cycles\": 66}\n"
	      "  ],\n  \"blocks\": [\n"
	      "    {\"start\": \"0x1000\", \"start_sym\": \"loop+0x0\", \"instructions\": 3, \"end_kind\": \"cond\", "
	      "\"executions\": 10, \"cycles\": 66},\n"
	      "    {\"start\": \"0x1010\", \"start_sym\": \"loop+0x10\", \"instructions\": 4, \"end_kind\": \"cond\", "
	      "\"executions\": 1, \"cycles\": 0}\n"
	      "  ]\n}\n", f);
	fclose(f);
	struct cpi_truth_unit *u;
	size_t n;
	double total;
	char msg[256];
	ck_assert_int_eq(cpi_truth_read(path, CPI_BY_BLOCK, &u, &n, &total, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(n, 2);
	ck_assert_double_eq(total, 100);
	ck_assert_double_eq(u[0].insns, 30); /* 10 executions of 3 */
	ck_assert_str_eq(u[0].name, "loop+0x0");
	/* the estimate of lbr_instruction_frequency: 30 instructions, 60 cycles:
	 * CPI 2 against the truth's 2.2 (66/30): 1/11 off */
	struct cpi_opts o = {0};
	struct cpi *c = cpi_new(&o);
	struct perf_branch br[3] = {{0x1002, 0x1000, 0, 0, 1, 0}, {0x1002, 0x1000, 0, 0, 1, 0}, {0x1002, 0x1000, 0, 0, 1, 0}};
	struct perf_sample s = lbr_sample(10, br, 3);
	struct perf_branch cb[1] = {{0x1002, 0x1000, 0, 0, 1, 0}};
	struct perf_sample cs = {.ip = 0x1001, .period = 60, .nbr = 1, .br = cb};
	ck_assert_int_eq(cpi_add_lbr(c, bin, &s), 0);
	ck_assert_int_eq(cpi_add_cycles(c, bin, &cs), 0);
	struct cpi_check k;
	ck_assert_int_eq(cpi_check(c, bin, CPI_BY_BLOCK, u, n, total, 0.01, &k), 0);
	ck_assert_uint_eq(k.checked, 1); /* the block with 0 cycles is below the share */
	ck_assert_double_eq_tol(k.rows[0].true_cpi, 2.2, 1e-9);
	ck_assert_double_eq_tol(k.max_rel_err, 1.0 / 11, 1e-9);
	ck_assert_double_eq_tol(k.mean_rel_err, 1.0 / 11, 1e-9);
	cpi_check_free(&k);
	cpi_free(c);
	free(u);
	/* a JSON without cycles is refused */
	f = fopen(path, "w");
	fputs("{\n  \"program\": \"x\",\n  \"functions\": [\n  ]\n}\n", f);
	fclose(f);
	ck_assert_int_eq(cpi_truth_read(path, CPI_BY_FUNCTION, &u, &n, &total, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_ptr_nonnull(strstr(msg, "no program cycles"));
	unlink(path);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("cpi_estimate");
	TCase *tc = tcase_create("cpi");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ranges_are_walked_through_not_taken_branches);
	tcase_add_test(tc, lbr_instruction_frequency);
	tcase_add_test(tc, overlapping_runs_share_by_executions_or_by_placement);
	tcase_add_test(tc, ip_baseline_and_adjust);
	tcase_add_test(tc, truth_is_read_and_compared);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
