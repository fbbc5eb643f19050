/* Decode cache (common/decode.h): terminators, classes, specials and caching,
 * on hand-assembled x86-64 bytes whose meaning comes from the Intel SDM. */
#include <check.h>
#include <stdlib.h>

#include "common/decode.h"
#include "tests/unit/guest_mem.h"
#include "tests/unit/run_suite.h"

static struct guest_mem mem;

static struct dcache *fresh(const void *code, size_t len)
{
	memset(mem.bytes, 0x90, sizeof(mem.bytes)); /* nops everywhere else */
	gm_put(&mem, GM_BASE, code, len);
	return dcache_new(gm_read, &mem);
}

/* One terminator per row: bytes placed after two nops at GM_BASE. */
struct term_case {
	int line;
	const char *what;
	uint8_t code[16];
	size_t len;
	int kind, cond, flags;
	uint64_t target; /* 0: none */
};

#define T(...) {__LINE__, __VA_ARGS__}
static const struct term_case term_cases[] = {
	T("je +5", {0x74, 0x05}, 2, BK_COND, CC_E, 0, GM_BASE + 2 + 2 + 5),
	T("jne -2 (to itself)", {0x75, 0xfe}, 2, BK_COND, CC_NE, 0, GM_BASE + 2),
	T("je +0", {0x74, 0x00}, 2, BK_COND, CC_E, BI_COND_EQ_FT, GM_BASE + 4),
	T("jg rel32", {0x0f, 0x8f, 0x10, 0, 0, 0}, 6, BK_COND, CC_G, 0, GM_BASE + 2 + 6 + 0x10),
	T("loop $", {0xe2, 0xfe}, 2, BK_COND, CC_LOOP, 0, GM_BASE + 2),
	T("jrcxz +0", {0xe3, 0x00}, 2, BK_COND, CC_JRCXZ, BI_COND_EQ_FT, GM_BASE + 4),
	T("jmp rel8", {0xeb, 0x10}, 2, BK_JMP, 0, 0, GM_BASE + 4 + 0x10),
	T("jmp rel32 to next", {0xe9, 0, 0, 0, 0}, 5, BK_JMP, 0, 0, GM_BASE + 7),
	T("jmp rax", {0xff, 0xe0}, 2, BK_JMP_IND, 0, 0, 0),
	T("jmp [rip]", {0xff, 0x25, 0, 0, 0, 0}, 6, BK_JMP_IND, 0, 0, 0),
	T("call next", {0xe8, 0, 0, 0, 0}, 5, BK_CALL, 0, 0, GM_BASE + 7),
	T("call rax", {0xff, 0xd0}, 2, BK_CALL_IND, 0, 0, 0),
	T("ret", {0xc3}, 1, BK_RET, 0, 0, 0),
	T("rep ret", {0xf3, 0xc3}, 2, BK_RET, 0, 0, 0),
	T("syscall", {0x0f, 0x05}, 2, BK_SYSCALL, 0, 0, 0),
	T("rep stosb", {0xf3, 0xaa}, 2, BK_REP, 0, 0, 0),
	T("rep movsq", {0xf3, 0x48, 0xa5}, 3, BK_REP, 0, 0, 0),
	T("repe cmpsb", {0xf3, 0xa6}, 2, BK_REP, 0, BI_REP_COND, 0),
	T("repne scasb", {0xf2, 0xae}, 2, BK_REP, 0, BI_REP_COND, 0),
	T("addr32 rep stosb", {0x67, 0xf3, 0xaa}, 3, BK_REP, 0, BI_REP_ECX, 0),
	T("int3", {0xcc}, 1, BK_TRAP, 0, 0, 0),
	T("ud2", {0x0f, 0x0b}, 2, BK_TRAP, 0, 0, 0),
	T("hlt", {0xf4}, 1, BK_TRAP, 0, 0, 0),
	T("invalid 0x06", {0x06}, 1, BK_TRAP, 0, 0, 0),
};

START_TEST(terminators)
{
	const struct term_case *c = &term_cases[_i];
	uint8_t code[18] = {0x90, 0x90};
	memcpy(code + 2, c->code, c->len);
	struct dcache *dc = fresh(code, c->len + 2);
	int is_new = 0;
	const struct block_info *bi = dcache_get(dc, GM_BASE, &is_new);
	ck_assert_ptr_nonnull(bi);
	ck_assert_msg(is_new == 1, "line %d", c->line);
	ck_assert_msg(bi->kind == c->kind, "line %d (%s): kind %s, want %s", c->line, c->what,
		      br_kind_name(bi->kind), br_kind_name(c->kind));
	ck_assert_msg(bi->ninsns == 3, "line %d (%s): %u instructions", c->line, c->what, bi->ninsns);
	ck_assert_msg(bi->term == GM_BASE + 2, "line %d (%s)", c->line, c->what);
	ck_assert_msg(bi->end == GM_BASE + 2 + c->len, "line %d (%s): end %#lx", c->line, c->what,
		      (unsigned long)bi->end);
	ck_assert_msg(bi->off[0] == 0 && bi->off[1] == 1 && bi->off[2] == 2 && bi->off[3] == 2 + c->len,
		      "line %d (%s): offsets", c->line, c->what);
	if (c->kind == BK_COND)
		ck_assert_msg(bi->cond == c->cond, "line %d (%s): cond %d", c->line, c->what, bi->cond);
	ck_assert_msg((bi->flags & (BI_COND_EQ_FT | BI_REP_COND | BI_REP_ECX)) == c->flags,
		      "line %d (%s): flags %#x", c->line, c->what, bi->flags);
	if (c->target)
		ck_assert_msg(bi->target == c->target, "line %d (%s): target %#lx", c->line, c->what,
			      (unsigned long)bi->target);
	dcache_free(dc);
}
END_TEST

START_TEST(pause_is_not_a_terminator)
{
	static const uint8_t code[] = {0xf3, 0x90, 0x48, 0x89, 0xd8, 0xc3}; /* pause; mov rax,rbx; ret */
	struct dcache *dc = fresh(code, sizeof(code));
	const struct block_info *bi = dcache_get(dc, GM_BASE, NULL);
	ck_assert_int_eq(bi->kind, BK_RET);
	ck_assert_int_eq(bi->ninsns, 3);
	dcache_free(dc);
}
END_TEST

START_TEST(classes)
{
	static const uint8_t code[] = {
		0x48, 0x89, 0xd8,       /* mov rax, rbx     ALU */
		0x48, 0x8b, 0x03,       /* mov rax, [rbx]   LOAD */
		0x48, 0x89, 0x03,       /* mov [rbx], rax   STORE */
		0x53,                   /* push rbx         STORE */
		0x48, 0xf7, 0xf1,       /* div rcx          DIV */
		0x48, 0x0f, 0xaf, 0xc1, /* imul rax, rcx    MUL */
		0x66, 0x0f, 0xef, 0xc0, /* pxor xmm0, xmm0  SIMD */
		0x90,                   /* nop              NOP */
		0x48, 0x8d, 0x04, 0x18, /* lea rax,[rax+rbx] ALU */
		0xc3,                   /* ret              BRANCH */
	};
	static const uint8_t want[] = {IC_ALU, IC_LOAD, IC_STORE, IC_STORE, IC_DIV, IC_MUL,
				       IC_SIMD, IC_NOP, IC_ALU, IC_BRANCH};
	struct dcache *dc = fresh(code, sizeof(code));
	const struct block_info *bi = dcache_get(dc, GM_BASE, NULL);
	ck_assert_int_eq(bi->ninsns, sizeof(want));
	for (size_t i = 0; i < sizeof(want); i++)
		ck_assert_msg(bi->cls[i] == want[i], "instruction %zu: class %d, want %d", i, bi->cls[i], want[i]);
	dcache_free(dc);
}
END_TEST

START_TEST(specials)
{
	static const uint8_t code[] = {
		0x0f, 0x31,             /* 0 rdtsc */
		0x48, 0x0f, 0xc7, 0xf0, /* 2 rdrand rax */
		0xec,                   /* 6 in al, dx */
		0xf3, 0xaa,             /* 7 rep stosb */
	};
	struct dcache *dc = fresh(code, sizeof(code));
	const struct block_info *bi = dcache_get(dc, GM_BASE, NULL);
	size_t n;
	const struct dc_special *sp = dcache_specials(bi, &n);
	ck_assert_int_eq(bi->kind, BK_REP);
	ck_assert_uint_eq(n, 4);
	ck_assert_int_eq(sp[0].kind, DS_RDTSC);
	ck_assert_uint_eq(sp[0].addr, GM_BASE);
	ck_assert_int_eq(sp[1].kind, DS_RDRAND);
	ck_assert_uint_eq(sp[1].len, 4);
	ck_assert_uint_eq(sp[1].size, 8);
	ck_assert_int_eq(sp[2].kind, DS_PRIV);
	ck_assert_uint_eq(sp[2].addr, GM_BASE + 6);
	ck_assert_int_eq(sp[3].kind, DS_REP);
	ck_assert_uint_eq(sp[3].addr, GM_BASE + 7);
	dcache_free(dc);
}
END_TEST

START_TEST(caching_and_invalidation)
{
	static const uint8_t code[] = {0x90, 0x90, 0x90, 0xc3};
	struct dcache *dc = fresh(code, sizeof(code));
	int is_new;
	const struct block_info *a = dcache_get(dc, GM_BASE, &is_new);
	ck_assert_int_eq(is_new, 1);
	ck_assert_ptr_eq(dcache_get(dc, GM_BASE, &is_new), a);
	ck_assert_int_eq(is_new, 0);
	/* a jump into the middle is a run of its own, sharing the terminator */
	const struct block_info *mid = dcache_get(dc, GM_BASE + 2, &is_new);
	ck_assert_int_eq(is_new, 1);
	ck_assert_ptr_ne(mid, a);
	ck_assert_int_eq(mid->ninsns, 2);
	ck_assert_uint_eq(mid->term, a->term);
	ck_assert_int_eq(block_insn_index(a, GM_BASE + 2), 2);
	ck_assert_int_eq(block_insn_index(a, GM_BASE + 4), 4);
	ck_assert_int_eq(block_insn_index(a, GM_BASE + 5), -1);
	/* code changes: both runs overlap the write */
	uint32_t old_id = a->id;
	mem.bytes[1] = 0xc3;
	ck_assert_uint_eq(dcache_invalidate(dc, GM_BASE + 1, 1), 1);
	ck_assert_uint_eq(dcache_invalidate(dc, GM_BASE + 3, 1), 1);
	const struct block_info *b = dcache_get(dc, GM_BASE, &is_new);
	ck_assert_int_eq(is_new, 1);
	ck_assert_int_eq(b->ninsns, 2); /* nop; ret */
	ck_assert_uint_ne(b->id, old_id);
	ck_assert_ptr_eq(dcache_by_id(dc, old_id), a); /* the old run stays readable */
	ck_assert_int_eq(a->ninsns, 4);
	ck_assert_uint_eq(dcache_id_count(dc), 3);
	ck_assert_uint_eq(dcache_invalidate(dc, GM_BASE + 0x800, 16), 0);
	dcache_free(dc);
}
END_TEST

START_TEST(unreadable_bytes_trap)
{
	struct dcache *dc = fresh("\x90", 1);
	const struct block_info *bi = dcache_get(dc, GM_BASE + GM_SIZE - 1, NULL);
	ck_assert_int_eq(bi->kind, BK_TRAP); /* nop, then nothing readable */
	ck_assert_int_eq(bi->ninsns, 2);
	bi = dcache_get(dc, 0x90000, NULL);
	ck_assert_int_eq(bi->kind, BK_TRAP);
	ck_assert_int_eq(bi->ninsns, 1);
	dcache_free(dc);
}
END_TEST

START_TEST(long_runs_stop_at_the_limit)
{
	struct dcache *dc = fresh("", 0); /* all nops */
	const struct block_info *bi = dcache_get(dc, GM_BASE, NULL);
	ck_assert_int_eq(bi->ninsns, DECODE_MAX_INSNS);
	ck_assert_int_eq(bi->kind, BK_NONE);
	ck_assert_uint_eq(bi->end, GM_BASE + DECODE_MAX_INSNS);
	dcache_free(dc);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("decode");
	TCase *tc = tcase_create("decode");
	tcase_add_loop_test(tc, terminators, 0, (int)(sizeof(term_cases) / sizeof(term_cases[0])));
	tcase_add_test(tc, pause_is_not_a_terminator);
	tcase_add_test(tc, classes);
	tcase_add_test(tc, specials);
	tcase_add_test(tc, caching_and_invalidation);
	tcase_add_test(tc, unreadable_bytes_trap);
	tcase_add_test(tc, long_runs_stop_at_the_limit);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
