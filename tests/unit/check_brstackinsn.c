/* Unit tests of profiler/brstackinsn: hand-made code and branch stacks, the
 * expected text written out by hand from perf 6.1's rules (builtin-script.c
 * perf_sample__fprintf_brstackinsn; the end-to-end test check_brstackinsn
 * compares with the real perf). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/brstackinsn.h"
#include "tests/unit/run_suite.h"

#define BASE 0x1000

/* 1000: inc rax; 1003: cmp rax, rcx; 1006: jne 1000; 1008: syscall;
 * 100a: jmp 1010; 100c: 4 x nop; 1010: nop; 1011: ret */
static const uint8_t code[] = {0x48, 0xff, 0xc0, 0x48, 0x39, 0xc8, 0x75, 0xf8, 0x0f,
                               0x05, 0xeb, 0x04, 0x90, 0x90, 0x90, 0x90, 0x90, 0xc3};

static struct binary *bin;

static void setup(void)
{
	ck_assert_int_eq(binary_from_code(code, sizeof(code), BASE, &bin), 0);
}

static void teardown(void)
{
	binary_free(bin);
}

static const struct sym syms[] = {{.addr = 0x1000, .size = 8, .name = "loop"},
                                  {.addr = 0x1008, .size = 10, .name = "tail"}};

static const struct sym *sym_of(void *ctx, uint64_t addr)
{
	(void)ctx;
	for (size_t i = 0; i < sizeof(syms) / sizeof(syms[0]); i++)
		if (addr >= syms[i].addr && addr < syms[i].addr + syms[i].size)
			return &syms[i];
	return NULL;
}

/* What brstackinsn_print writes for ip and the entries (newest first). */
static char *print(uint64_t ip, const struct perf_branch *br, uint64_t n, int names, int disasm)
{
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	ck_assert_ptr_nonnull(f);
	struct perf_sample s = {.ip = ip, .nbr = n, .br = br};
	struct brstackinsn_src src = {bin, names ? sym_of : NULL, NULL, disasm};
	ck_assert_int_eq(brstackinsn_print(f, &s, &src), 0);
	fclose(f);
	return text;
}

#define JNE "insn: 75 f8                   \t" /* padded to 30 columns */

/* Two turns of the loop: the oldest entry's branch alone (no IPC), then the
 * range 1000..1006, three instructions, the branch included, in 2 cycles. */
static const struct perf_branch loop2[] = {{0x1006, 0x1000, 2, 0, 1, 1},
                                           {0x1006, 0x1000, 3, 0, 1, 1}};
static const char loop2_text[] = "\n"
                                 "\t0000000000001006\t" JNE "# PRED 3 cycles [3]\n"
                                 "\t0000000000001000\tinsn: 48 ff c0 \n"
                                 "\t0000000000001003\tinsn: 48 39 c8 \n"
                                 "\t0000000000001006\t" JNE "# PRED 2 cycles [5] 1.50 IPC\n";

START_TEST(ranges_and_ipc)
{
	char *t = print(0x1006, loop2, 2, 0, 0); /* the IP at the newest branch: nothing after it */
	ck_assert_str_eq(t, loop2_text);
	free(t);
}
END_TEST

START_TEST(final_block_to_ip)
{
	char *t = print(0x1003, loop2, 2, 0, 0);
	char want[512];
	snprintf(want, sizeof(want),
	         "%s\t0000000000001000\tinsn: 48 ff c0 \n\t0000000000001003\tinsn: 48 39 c8 \n",
	         loop2_text);
	ck_assert_str_eq(t, want);
	free(t);
}
END_TEST

/* The jne at 1006 (not taken on the way to the IP) is a branch before the IP. */
START_TEST(not_reaching_sample)
{
	char *t = print(0x1010, loop2, 2, 0, 0);
	char want[512];
	snprintf(want, sizeof(want),
	         "%s\t0000000000001000\tinsn: 48 ff c0 \n\t0000000000001003\tinsn: 48 39 c8 \n"
	         "\t0000000000001006\tinsn: 75 f8 \n\t... not reaching sample ...\n",
	         loop2_text);
	ck_assert_str_eq(t, want);
	free(t);
}
END_TEST

/* Cycles 0 (unknown): no cycles, total or IPC; MISPRED. */
START_TEST(no_cycles_mispred)
{
	static const struct perf_branch br[] = {{0x1006, 0x1000, 0, 1, 0, 1},
	                                        {0x1006, 0x1000, 3, 0, 1, 1}};
	char *t = print(0x1006, br, 2, 0, 0);
	ck_assert_str_eq(t, "\n"
	                    "\t0000000000001006\t" JNE "# PRED 3 cycles [3]\n"
	                    "\t0000000000001000\tinsn: 48 ff c0 \n"
	                    "\t0000000000001003\tinsn: 48 39 c8 \n"
	                    "\t0000000000001006\t" JNE "# MISPRED\n");
	free(t);
}
END_TEST

/* perf divides in single precision: 3 / 40 is 0.075000003 as a float, printed
 * 0.08 (as a double, 0.07499999999999999722: 0.07). */
START_TEST(ipc_in_float)
{
	static const struct perf_branch br[] = {{0x1006, 0x1000, 40, 0, 1, 1},
	                                        {0x1006, 0x1000, 3, 0, 1, 1}};
	char *t = print(0x1006, br, 2, 0, 0);
	ck_assert_ptr_nonnull(strstr(t, "# PRED 40 cycles [43] 0.08 IPC\n"));
	free(t);
	char s[16];
	snprintf(s, sizeof(s), "%.2f", (double)brstackinsn_ipc(3, 40));
	ck_assert_str_eq(s, "0.08");
	snprintf(s, sizeof(s), "%.2f", (double)brstackinsn_ipc(7, 8)); /* 0.875 exactly: to even */
	ck_assert_str_eq(s, "0.88");
}
END_TEST

/* A range perf cannot read prints nothing and its cycles stay out of the
 * total: 1008 -> 1006 runs backwards. An oldest branch outside the code
 * prints nothing either. */
START_TEST(unreadable_ranges)
{
	static const struct perf_branch br[] = {{0x1006, 0x1000, 5, 0, 1, 1},
	                                        {0x1006, 0x1008, 2, 0, 1, 1},
	                                        {0x1006, 0x1000, 3, 0, 1, 1}};
	char *t = print(0x1006, br, 3, 0, 0);
	ck_assert_str_eq(t, "\n"
	                    "\t0000000000001006\t" JNE "# PRED 3 cycles [3]\n"
	                    "\t0000000000001000\tinsn: 48 ff c0 \n"
	                    "\t0000000000001003\tinsn: 48 39 c8 \n"
	                    "\t0000000000001006\t" JNE "# PRED 2 cycles [5] 1.50 IPC\n");
	free(t);
	static const struct perf_branch far[] = {{0x1006, 0x1000, 2, 0, 1, 1},
	                                         {0x9000, 0x1000, 3, 0, 1, 1}};
	t = print(0x1006, far, 2, 0, 0);
	ck_assert_str_eq(t, "\n"
	                    "\t0000000000001000\tinsn: 48 ff c0 \n"
	                    "\t0000000000001003\tinsn: 48 39 c8 \n"
	                    "\t0000000000001006\t" JNE "# PRED 2 cycles [2] 1.50 IPC\n");
	free(t);
}
END_TEST

/* perf's grab_bb reads no block whose end lies more than 16,369 bytes (MAXBB
 * 16384 - MAXINSN 15) past its start: of two ranges through 16,369 nops, the
 * one ending 16,369 bytes on prints (16,370 instructions), the one ending
 * 16,371 bytes on does not. */
START_TEST(byte_limit)
{
	static uint8_t nops[16400];
	memset(nops, 0x90, sizeof(nops));
	memcpy(nops + 16369, "\x75\xfe\x75\xfe", 4); /* jne; jne */
	struct binary *big;
	ck_assert_int_eq(binary_from_code(nops, sizeof(nops), BASE, &big), 0);
	static const struct perf_branch br[] = {{0x1000 + 16371, 0x1000, 9, 0, 1, 1},
	                                        {0x1000 + 16369, 0x1000, 1000, 0, 1, 1},
	                                        {0x1000 + 16369, 0x1000, 3, 0, 1, 1}};
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);
	struct perf_sample s = {.ip = 0x1000 + 16371, .nbr = 3, .br = br};
	struct brstackinsn_src src = {big, NULL, NULL, 0};
	ck_assert_int_eq(brstackinsn_print(f, &s, &src), 0);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(text, "\t0000000000004ff1\tinsn: 75 fe                   \t# "
	                                   "PRED 1000 cycles [1003] 16.37 IPC\n"));
	ck_assert_ptr_null(strstr(text, "[1012]"));
	ck_assert_ptr_null(strstr(text, "0000000000004ff3"));
	free(text);
	binary_free(big);
}
END_TEST

/* A range with a jump inside (the LBR lost an entry) is not walked; its cycles
 * count in the total as perf counts them. */
START_TEST(refused_range)
{
	static const struct perf_branch br[] = {{0x1011, 0x2000, 4, 0, 1, 6},
	                                        {0x1006, 0x1008, 1, 0, 1, 1}};
	char *t = print(0x1011, br, 2, 0, 0);
	ck_assert_str_eq(
	    t, "\n"
	       "\t0000000000001006\t" JNE "# PRED 1 cycles [1]\n"
	       "\t# pmusim: range 0x1008-0x1011 not walked (unconditional_inside) 4 cycles [5]\n");
	free(t);
}
END_TEST

/* Names where the function changes, with "+offset" past its start; a range
 * through a conditional branch not taken and a system call. The final block
 * names its start only, and its last instruction, a ret at the IP, is no
 * missing branch. */
START_TEST(names_and_long_range)
{
	static const struct perf_branch br[] = {{0x100a, 0x1010, 4, 0, 1, 2},
	                                        {0x1011, 0x1000, 2, 0, 1, 6}};
	char *t = print(0x1011, br, 2, 1, 0);
	ck_assert_str_eq(
	    t, "\n"
	       "\ttail+9:\n"
	       "\t0000000000001011\tinsn: c3                      \t# PRED 2 cycles [2]\n"
	       "\tloop:\n"
	       "\t0000000000001000\tinsn: 48 ff c0 \n"
	       "\t0000000000001003\tinsn: 48 39 c8 \n"
	       "\t0000000000001006\tinsn: 75 f8 \n"
	       "\ttail:\n"
	       "\t0000000000001008\tinsn: 0f 05 \n"
	       "\t000000000000100a\tinsn: eb 04                   \t# PRED 4 cycles [6] 1.25 IPC\n"
	       "\t0000000000001010\tinsn: 90 \n"
	       "\t0000000000001011\tinsn: c3 \n");
	free(t);
}
END_TEST

/* Capstone's text in place of the bytes. */
START_TEST(disasm_text)
{
	char *t = print(0x1006, loop2, 2, 0, 1);
	ck_assert_ptr_nonnull(strstr(t, "\t0000000000001000\tinc rax\n"));
	ck_assert_ptr_nonnull(strstr(
	    t,
	    "\t0000000000001006\tjne 0x1000                    \t# PRED 2 cycles [5] 1.50 IPC\n"));
	free(t);
}
END_TEST

/* No entries: nothing at all (not even the newline). */
START_TEST(empty_stack)
{
	char *t = print(0x1006, NULL, 0, 0, 0);
	ck_assert_str_eq(t, "");
	free(t);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("brstackinsn");
	TCase *tc = tcase_create("core");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, ranges_and_ipc);
	tcase_add_test(tc, final_block_to_ip);
	tcase_add_test(tc, not_reaching_sample);
	tcase_add_test(tc, no_cycles_mispred);
	tcase_add_test(tc, ipc_in_float);
	tcase_add_test(tc, unreadable_ranges);
	tcase_add_test(tc, byte_limit);
	tcase_add_test(tc, refused_range);
	tcase_add_test(tc, names_and_long_range);
	tcase_add_test(tc, disasm_text);
	tcase_add_test(tc, empty_stack);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(suite());
}
