/* IBS op payloads (profiler/ibs_op.h): hand-chosen records against register values
 * written out by hand from the documented bit positions (the kernel's amd-ibs.h
 * unions, AMD's PPR for Family 19h Model 01h) and the kernel 6.1 order of the
 * registers; refusals of records no hardware reports; decode(encode(x)) == x over
 * seeded random records; payloads of other caps (no IbsBrTarget, IbsOpData4) and
 * with bits pmusim does not model; malformed payloads refused. */
#include <check.h>
#include <stdint.h>
#include <string.h>

#include "common/err.h"
#include "profiler/ibs_op.h"
#include "tests/unit/run_suite.h"

/* Register slots after the u32 caps, in the order perf_ibs_handle_irq copies them. */
enum { CTL, RIP, DATA, DATA2, DATA3, LINAD, PHYSAD, BRTARGET, NREGS };

static uint64_t reg(const uint8_t *raw, int i)
{
	uint64_t v;
	memcpy(&v, raw + 4 + 8 * i, 8);
	return v;
}

/* clang-format off */
static const struct {
	int line;
	struct ibs_op op;
	uint64_t ctl, data, data3;
} rows[] = {
	/* A taken, mispredicted branch, cycles mode, period 100000:
	 * CTL: 100000 >> 4 = 6250 = 0x186a in 15:0, 0 in 26:20; IbsOpEn (17) 0x20000, IbsOpVal (18)
	 *      0x40000; CurCnt 5 in 58:32: 0x5_0000_0000.
	 * DATA: TagToRetCtr 12 in 31:16: 0xc0000; BrnTaken (35) 0x8_0000_0000, BrnMisp (36)
	 *      0x10_0000_0000, BrnRet (37) 0x20_0000_0000. */
	{__LINE__, {.ip = 0x4016a0, .max_cnt = 100000, .cur_cnt = 5, .tag_to_ret = 12, .branch = 1,
	            .taken = 1, .mispredicted = 1, .br_target = 0x4016c0},
	 0x000000050006186aull, 0x00000038000c0000ull, 0},
	/* A load of 8 bytes, ops mode, period 0x1234560, CurCnt at its 27-bit maximum:
	 * CTL: 0x1234560 >> 4 = 0x123456: 0x3456 in 15:0, 0x12 in 26:20 (0x1200000); CntCtl (19)
	 *      0x80000; En|Val 0x60000; CurCnt 0x7ffffff << 32.
	 * DATA: CompToRetCtr 7 in 15:0, TagToRetCtr 0xffff in 31:16, Microcode (40) 0x100_0000_0000.
	 * DATA3: LdOp (0) 1; DcLinAddrValid (17) 0x20000; OpMemWidth 8 bytes = code 4 in 25:22:
	 *      0x1000000. */
	{__LINE__, {.ip = 0x4016c4, .max_cnt = 0x1234560, .cur_cnt = 0x7ffffff, .cnt_ctl = 1,
	            .tag_to_ret = 0xffff, .comp_to_ret = 7, .microcoded = 1, .load = 1, .width = 8,
	            .addr_valid = 1, .data_addr = 0x7ffc12345678},
	 0x07ffffff012e3456ull, 0x00000100ffff0007ull, 0x1020001},
	/* A REP MOVSB: one microcoded op that loads and stores bytes, the smallest period:
	 * CTL: 16 >> 4 = 1; En|Val. DATA: Microcode (40). DATA3: LdOp (0) | StOp (1) = 3,
	 *      DcLinAddrValid 0x20000, width 1 = code 1: 0x400000. */
	{__LINE__, {.ip = 0x401500, .max_cnt = 16, .microcoded = 1, .load = 1, .store = 1,
	            .width = 1, .addr_valid = 1, .data_addr = 0x4a2000},
	 0x0000000000060001ull, 0x0000010000000000ull, 0x420003},
	/* A return: BrnRet, BrnTaken and OpReturn (34) 0x4_0000_0000; TagToRetCtr 3: 0x30000.
	 * The largest period: 0x7fffff0 >> 4 = 0x7fffff: 0xffff in 15:0, 0x7f in 26:20. */
	{__LINE__, {.ip = 0x4016dc, .max_cnt = 0x7fffff0, .tag_to_ret = 3, .branch = 1, .taken = 1,
	            .ret = 1, .br_target = 0x401520},
	 0x0000000007f6ffffull, 0x0000002c00030000ull, 0},
	/* A branch not taken, predicted: BrnRet only; its target is the next instruction. */
	{__LINE__, {.ip = 0x4016b0, .max_cnt = 4096, .branch = 1, .br_target = 0x4016b2},
	 0x0000000000060100ull, 0x0000002000000000ull, 0},
	/* Stores of 32, 16, 4 and 2 bytes without an address: StOp (1) and codes 6, 5, 3, 2 in
	 * 25:22: 0x1800000, 0x1400000, 0xc00000, 0x800000. */
	{__LINE__, {.ip = 1, .max_cnt = 32, .store = 1, .width = 32},
	 0x0000000000060002ull, 0, 0x1800002},
	{__LINE__, {.ip = 2, .max_cnt = 32, .store = 1, .width = 16},
	 0x0000000000060002ull, 0, 0x1400002},
	{__LINE__, {.ip = 3, .max_cnt = 32, .store = 1, .width = 4},
	 0x0000000000060002ull, 0, 0xc00002},
	{__LINE__, {.ip = 4, .max_cnt = 32, .load = 1, .width = 2},
	 0x0000000000060002ull, 0, 0x800001},
	/* A load whose width is unknown: LdOp alone. */
	{__LINE__, {.ip = 5, .max_cnt = 48, .load = 1, .addr_valid = 1, .data_addr = 0x10},
	 0x0000000000060003ull, 0, 0x20001},
};
/* clang-format on */

START_TEST(encode_hand_written_registers)
{
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		const struct ibs_op *op = &rows[i].op;
		uint8_t raw[IBS_OP_RAW_SIZE + 8];
		memset(raw, 0xee, sizeof(raw));
		ck_assert_msg(ibs_op_encode(op, raw, sizeof(raw)) == 68, "row line %d: size",
		              rows[i].line);
		uint32_t caps;
		memcpy(&caps, raw, 4);
		ck_assert_msg(caps == 0x3ff, "row line %d: caps %#x", rows[i].line, caps);
		uint64_t want[NREGS] = {rows[i].ctl,   op->ip, rows[i].data, 0, rows[i].data3,
		                        op->data_addr, 0,      op->br_target};
		for (int r = 0; r < NREGS; r++)
			ck_assert_msg(reg(raw, r) == want[r],
			              "row line %d: register %d is %#llx, want %#llx", rows[i].line,
			              r, (unsigned long long)reg(raw, r),
			              (unsigned long long)want[r]);
		ck_assert_msg(raw[68] == 0xee, "row line %d: wrote past the payload", rows[i].line);
		struct ibs_op back;
		ck_assert_int_eq(ibs_op_decode(raw, 68, &back), 0);
		ck_assert_msg(memcmp(&back, op, sizeof(back)) == 0, "row line %d: decode differs",
		              rows[i].line);
	}
}
END_TEST

/* Records no hardware reports, and a buffer too small: encode writes nothing. */
START_TEST(encode_refuses_impossible_records)
{
	static const struct {
		int line;
		struct ibs_op op;
	} bad[] = {
	    {__LINE__, {.max_cnt = 0}},
	    {__LINE__, {.max_cnt = 8}},
	    {__LINE__, {.max_cnt = 24}},
	    {__LINE__, {.max_cnt = 1u << 27}},
	    {__LINE__, {.max_cnt = 16, .cur_cnt = 1u << 27}},
	    {__LINE__, {.max_cnt = 16, .tag_to_ret = 0x10000}},
	    {__LINE__, {.max_cnt = 16, .comp_to_ret = 0x10000}},
	    {__LINE__, {.max_cnt = 16, .cnt_ctl = 2}},
	    {__LINE__, {.max_cnt = 16, .branch = 2}},
	    {__LINE__, {.max_cnt = 16, .load = 2}},
	    {__LINE__, {.max_cnt = 16, .microcoded = 2}},
	    {__LINE__, {.max_cnt = 16, .taken = 1}},
	    {__LINE__, {.max_cnt = 16, .mispredicted = 1}},
	    {__LINE__, {.max_cnt = 16, .ret = 1}},
	    {__LINE__, {.max_cnt = 16, .br_target = 0x401000}},
	    {__LINE__, {.max_cnt = 16, .load = 1, .width = 3}},
	    {__LINE__, {.max_cnt = 16, .load = 1, .width = 64}},
	    {__LINE__, {.max_cnt = 16, .width = 8}},
	    {__LINE__, {.max_cnt = 16, .addr_valid = 1, .data_addr = 0x10}},
	    {__LINE__, {.max_cnt = 16, .load = 1, .data_addr = 0x10}},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint8_t raw[80];
		memset(raw, 0xee, sizeof(raw));
		ck_assert_msg(ibs_op_encode(&bad[i].op, raw, sizeof(raw)) == 0,
		              "row line %d encoded", bad[i].line);
		ck_assert_msg(raw[0] == 0xee, "row line %d: wrote on refusal", bad[i].line);
	}
	uint8_t raw[80];
	ck_assert_uint_eq(ibs_op_encode(&rows[0].op, raw, 67), 0);
}
END_TEST

/* xorshift64*: the test's own seeded generator. */
static uint64_t rnd(uint64_t *s)
{
	*s ^= *s >> 12;
	*s ^= *s << 25;
	*s ^= *s >> 27;
	return *s * 0x2545f4914f6cdd1dull;
}

START_TEST(decode_inverts_encode_on_random_records)
{
	static const uint8_t widths[] = {0, 1, 2, 4, 8, 16, 32};
	uint64_t seed = 0x1b5eed;
	size_t branches = 0, loads = 0, stores = 0;
	for (int i = 0; i < 100000; i++) {
		struct ibs_op x;
		memset(&x, 0, sizeof(x)); /* padding too: the records are compared whole */
		x.ip = rnd(&seed);
		x.max_cnt = (rnd(&seed) % 0x7fffff + 1) * 16;
		x.cur_cnt = rnd(&seed) & 0x7ffffff;
		x.cnt_ctl = rnd(&seed) & 1;
		x.tag_to_ret = rnd(&seed) & 0xffff;
		x.comp_to_ret = rnd(&seed) & 0xffff;
		x.microcoded = rnd(&seed) & 1;
		if ((x.branch = rnd(&seed) & 1)) {
			x.taken = rnd(&seed) & 1;
			x.mispredicted = rnd(&seed) & 1;
			x.ret = rnd(&seed) & 1;
			x.br_target = rnd(&seed);
			branches++;
		}
		x.load = rnd(&seed) & 1;
		x.store = rnd(&seed) & 1;
		if (x.load || x.store) {
			x.width = widths[rnd(&seed) % 7];
			if ((x.addr_valid = rnd(&seed) & 1))
				x.data_addr = rnd(&seed);
		}
		loads += x.load, stores += x.store;
		uint8_t raw[IBS_OP_RAW_SIZE];
		struct ibs_op y;
		ck_assert_msg(ibs_op_encode(&x, raw, sizeof(raw)) == IBS_OP_RAW_SIZE,
		              "record %d refused", i);
		ck_assert_int_eq(ibs_op_decode(raw, sizeof(raw), &y), 0);
		ck_assert_msg(memcmp(&x, &y, sizeof(x)) == 0, "record %d: decode(encode(x)) != x",
		              i);
	}
	ck_assert(branches > 40000 && loads > 40000 && stores > 40000);
}
END_TEST

/* A payload as a kernel writes it: caps, then n registers. */
static size_t payload(uint8_t *raw, uint32_t caps, const uint64_t *regs, size_t n)
{
	memcpy(raw, &caps, 4);
	memcpy(raw + 4, regs, 8 * n);
	return 4 + 8 * n;
}

START_TEST(decode_other_caps_and_unmodelled_bits)
{
	uint8_t raw[128];
	struct ibs_op op;
	/* caps without IBS_CAPS_BRNTRGT (0x3df): seven registers, 60 bytes; a taken branch
	 * then has no target. */
	uint64_t seven[7] = {0x60100, 0x401000, 0x2800000000ull, 0, 0, 0, 0};
	ck_assert_int_eq(ibs_op_decode(raw, payload(raw, 0x3df, seven, 7), &op), 0);
	ck_assert(op.ip == 0x401000 && op.max_cnt == 4096 && op.branch && op.taken &&
	          !op.mispredicted);
	ck_assert_uint_eq(op.br_target, 0);
	/* caps with IbsOpData4 (0x7ff): nine registers, 76 bytes; IbsOpData4 is ignored. Bits a
	 * real part sets that pmusim does not model: RipInvalid (38), BrnFuse (39) in IbsOpData;
	 * DataSrc 3 (DRAM) and RmtNode in IbsOpData2; DcL1TlbMiss (2), DcMiss (7), DcPhyAddrValid
	 * (18), L2Miss (20) and DcMissLat 200 in IbsOpData3; a physical address. The branch facts
	 * of an op that is no branch (BrnTaken without BrnRet) and an address without
	 * DcLinAddrValid stay 0. */
	uint64_t nine[9] = {0x0000000100060010ull,
	                    0x4016a0,
	                    0x000000c800050000ull,
	                    0x13,
	                    0x000000c800140085ull,
	                    0x7ffd0000,
	                    0x12345000,
	                    0x401000,
	                    0xabc};
	ck_assert_int_eq(ibs_op_decode(raw, payload(raw, 0x7ff, nine, 9), &op), 0);
	struct ibs_op want;
	memset(&want, 0, sizeof(want));
	want.ip = 0x4016a0, want.max_cnt = 256, want.cur_cnt = 1, want.tag_to_ret = 5;
	want.load = 1, want.width = 0;
	ck_assert_msg(
	    memcmp(&op, &want, sizeof(op)) == 0,
	    "decoded ip %#llx max %llu cur %llu t2r %u ld %u st %u w %u valid %u br %u tk %u",
	    (unsigned long long)op.ip, (unsigned long long)op.max_cnt,
	    (unsigned long long)op.cur_cnt, op.tag_to_ret, op.load, op.store, op.width,
	    op.addr_valid, op.branch, op.taken);
	/* OpMemWidth 7 and 8 (64 and 128 bytes) of later parts decode. */
	uint64_t wide[8] = {0x60001, 1, 0, 0, (7ull << 22) | 1, 0, 0, 0};
	ck_assert_int_eq(ibs_op_decode(raw, payload(raw, 0x3ff, wide, 8), &op), 0);
	ck_assert_uint_eq(op.width, 64);
	wide[4] = (8ull << 22) | 2;
	ck_assert_int_eq(ibs_op_decode(raw, payload(raw, 0x3ff, wide, 8), &op), 0);
	ck_assert_uint_eq(op.width, 128);
}
END_TEST

START_TEST(decode_refuses_malformed_payloads)
{
	uint8_t raw[128];
	char why[128];
	struct ibs_op op;
	uint64_t good[9] = {0x60001, 0x401000, 0, 0, 0, 0, 0, 0, 0};
	static const struct {
		int line;
		uint32_t caps;
		size_t nregs, cut; /* registers written, bytes cut off the end */
		int reg;           /* register to change (-1 none) */
		uint64_t value;
		const char *why; /* part of ibs_op_problem's phrase */
	} bad[] = {
	    {__LINE__, 0x3ff, 8, 1, -1, 0, "found 67"},
	    {__LINE__, 0x3ff, 8, 8, -1, 0, "found 60"},
	    {__LINE__, 0x3ff, 7, 60, -1, 0, "fewer than"},
	    {__LINE__, 0x3ff, 9, 0, -1, 0, "found 76"},
	    {__LINE__, 0x7ff, 8, 0, -1, 0, "9 = 76 bytes, found 68"},
	    {__LINE__, 0x3fe, 8, 0, -1, 0, "IBS_CAPS_AVAIL"},
	    {__LINE__, 0, 8, 0, -1, 0, "IBS_CAPS_AVAIL"},
	    {__LINE__, 0x3ff, 8, 0, 0, 0x40001, "IbsOpEn"},  /* IbsOpEn clear */
	    {__LINE__, 0x3ff, 8, 0, 0, 0x20001, "IbsOpVal"}, /* IbsOpVal clear */
	    {__LINE__, 0x3ff, 8, 0, 4, 9ull << 22, "IbsOpMemWidth 9"},
	    {__LINE__, 0x3ff, 8, 0, 4, 15ull << 22, "IbsOpMemWidth 15"},
	};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		uint64_t r[9];
		memcpy(r, good, sizeof(r));
		if (bad[i].reg >= 0)
			r[bad[i].reg] = bad[i].value;
		size_t n = payload(raw, bad[i].caps, r, bad[i].nregs) - bad[i].cut;
		memset(&op, 0x5a, sizeof(op));
		ck_assert_msg(ibs_op_decode(raw, n, &op) == PMUSIM_ERR_FORMAT,
		              "row line %d decoded", bad[i].line);
		const char *p = ibs_op_problem(raw, n, why, sizeof(why));
		ck_assert_msg(p && strstr(p, bad[i].why), "row line %d: problem \"%s\"",
		              bad[i].line, p ? p : "(none)");
	}
	ck_assert_int_eq(ibs_op_decode(NULL, 0, &op), PMUSIM_ERR_FORMAT);
	ck_assert_ptr_null(ibs_op_problem(raw, payload(raw, 0x3ff, good, 8), why, sizeof(why)));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("ibs_op");
	TCase *tc = tcase_create("core");
	tcase_add_test(tc, encode_hand_written_registers);
	tcase_add_test(tc, encode_refuses_impossible_records);
	tcase_add_test(tc, decode_inverts_encode_on_random_records);
	tcase_add_test(tc, decode_other_caps_and_unmodelled_bits);
	tcase_add_test(tc, decode_refuses_malformed_payloads);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
