/* dbr_map_branch (sim/dbr_map.h): a branch record of a rewritten run as the
 * program's taken transfer, or none. A hand-made image over hand-assembled
 * original code; every expected figure written here from the x86 code. */
#include <check.h>
#include <string.h>

#include "common/dbr_image.h"
#include "pmu_model/block.h"
#include "sim/dbr_map.h"
#include "tests/unit/run_suite.h"

#define ORG 0x401000u
#define REP 0x300000u

/* clang-format off */
static const uint8_t orig[0x60] = {
    0x75, 0x1e,                         /* 401000 jne 0x401020 */
    [0x10] = 0xe8, 0x2b, 0x00, 0x00, 0x00, /* 401010 call 0x401040 */
    [0x15] = 0xc3,                      /* 401015 ret */
    [0x20] = 0x74, 0x1e,                /* 401020 je 0x401040 */
    [0x22] = 0x90,                      /* 401022 nop */
    [0x40] = 0xc3,                      /* 401040 ret */
};
/* clang-format on */

/* the replacement's map (bytes are not read by dbr_map_branch but for added
 * jumps followed by resolve: E9 rel32 below) */
static uint8_t repl[0x40];
static const struct dbr_insn map[] = {
    {0x00, 6, DBR_COPY, ORG + 0x00, 0, 0},      /* jne copy, taken to 0x300020's copy */
    {0x06, 5, DBR_JUMP, ORG + 0x00, 0, 0},      /* its fall side: jmp 0x401002 */
    {0x0b, 5, DBR_CALL_PUSH, ORG + 0x10, 0, 0}, /* push imm32 of the call at 401010 */
    {0x10, 8, DBR_CALL_HIGH, ORG + 0x10, 0, 0}, /* mov [rsp+4] */
    {0x18, 5, DBR_JUMP, ORG + 0x10, 1, 0},      /* jmp 0x401040: the call's own transfer */
    {0x20, 6, DBR_INVERTED, ORG + 0x20, 0, 0},  /* je inverted: taken = fell through */
    {0x26, 1, DBR_COPY, ORG + 0x22, 0, 0},      /* nop */
};
static const struct dbr_patch patch = {ORG + 0x10, REP + 0x0b, {0xe9}, {0xe8, 0x2b, 0, 0, 0}};

static size_t read_orig(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	if (addr < ORG || addr >= ORG + sizeof(orig))
		return 0;
	size_t n = ORG + sizeof(orig) - addr < len ? (size_t)(ORG + sizeof(orig) - addr) : len;
	memcpy(buf, orig + (addr - ORG), n);
	return n;
}

static void jmp_at(uint32_t off, uint64_t to)
{
	int32_t rel = (int32_t)(to - (REP + off + 5));
	repl[off] = 0xe9;
	memcpy(repl + off + 1, &rel, 4);
}

static struct dbr_map *setup(void)
{
	jmp_at(0x06, ORG + 0x02);
	jmp_at(0x18, ORG + 0x40);
	struct dbr_map *m = dbr_map_new(read_orig, NULL);
	ck_assert_ptr_nonnull(m);
	struct dbr_image img = {REP, repl, sizeof(repl), map, sizeof(map) / sizeof(map[0]), &patch, 1};
	ck_assert_int_eq(dbr_map_add_image(m, &img), 0);
	return m;
}

static const struct row {
	int line;
	uint64_t from, to;
	int keep;
	uint64_t ofrom, oto;
	int kind;
} rows[] = {
    /* the jne's copy taken to the copy of 401020 (the je's, inverted: it stands for the je) */
    {__LINE__, REP + 0x00, REP + 0x20, 1, ORG + 0x00, ORG + 0x20, BK_COND},
    /* its fall side's added jump: the program fell through */
    {__LINE__, REP + 0x06, ORG + 0x02, 0, 0, 0, 0},
    /* the jump that carries the call: the call, to its callee */
    {__LINE__, REP + 0x18, ORG + 0x40, 1, ORG + 0x10, ORG + 0x40, BK_CALL},
    /* the inverted je taken: the program's je fell through */
    {__LINE__, REP + 0x20, REP + 0x26, 0, 0, 0, 0},
    /* the patch jump at the call */
    {__LINE__, ORG + 0x10, REP + 0x0b, 0, 0, 0, 0},
    /* a branch of the original code: itself */
    {__LINE__, ORG + 0x15, ORG + 0x22, 1, ORG + 0x15, ORG + 0x22, BK_RET},
    /* an original branch into replacement code other than through a patch: to where it stands */
    {__LINE__, ORG + 0x40, REP + 0x26, 1, ORG + 0x40, ORG + 0x22, BK_RET},
};

START_TEST(branch_rows)
{
	const struct row *r = &rows[_i];
	struct dbr_map *m = setup();
	uint64_t f = 0, t = 0;
	int kind = -1;
	int keep = dbr_map_branch(m, r->from, r->to, &f, &t, &kind);
	ck_assert_msg(keep == r->keep, "row line %d: keep %d", r->line, keep);
	if (r->keep)
		ck_assert_msg(f == r->ofrom && t == r->oto && kind == r->kind,
			      "row line %d: %#llx -> %#llx kind %d", r->line, (unsigned long long)f,
			      (unsigned long long)t, kind);
	dbr_map_free(m);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dbr_branch");
	TCase *tc = tcase_create("rows");
	tcase_add_loop_test(tc, branch_rows, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
