/* The map back from replacement code (sim/dbr_map.h) fed the raw blocks of a
 * program running with a rewrite installed: small programs hand-assembled at
 * ORIG, their replacement code laid out by hand as a rewriter lays it out
 * (tests/unit/dbr_map_code.h), the 5-byte patch jumps written over the program,
 * and raw blocks decoded from that rewritten memory as the machine retires them
 * (each row checked against the bytes: a direct branch's next is its target).
 * What the map hands on is compared block by block with the stream the
 * ORIGINAL program retires for the same execution, written out by hand from
 * what the x86 code does (its runs decoded by a cache of their own over the
 * original bytes; outcomes, next addresses and run starts as the machine's
 * block stream reports them, sim/machine/blockstream.c: a run starts after
 * every retired terminator, a cut run's next is where it was cut). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/dbr_image.h"
#include "common/decode.h"
#include "common/err.h"
#include "sim/dbr_map.h"
#include "tests/unit/dbr_map_code.h"
#include "tests/unit/run_suite.h"

/* ---- memory, the map, and what it hands on ---- */

static uint8_t orig_mem[ORIG_SIZE];    /* the program's code (it may write it) */
static uint8_t patched_mem[ORIG_SIZE]; /* the same with the patch jumps */
static const struct layout *inst[16];
static size_t ninst;

static size_t window(const uint8_t *b, uint64_t base, size_t size, uint64_t addr, void *buf,
                     size_t len)
{
	if (addr < base || addr >= base + size)
		return 0;
	size_t n = base + size - addr < len ? (size_t)(base + size - addr) : len;
	memcpy(buf, b + (addr - base), n);
	return n;
}

/* The original bytes: what the map decodes, and the reference's runs. */
static size_t read_orig(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	return window(orig_mem, ORIG, ORIG_SIZE, addr, buf, len);
}

/* Memory as the rewritten program runs it: patched code and replacement code. */
static size_t read_rewritten(void *ctx, uint64_t addr, void *buf, size_t len)
{
	(void)ctx;
	size_t n = window(patched_mem, ORIG, ORIG_SIZE, addr, buf, len);
	for (size_t i = 0; !n && i < ninst; i++)
		n = window(inst[i]->bytes, inst[i]->base, inst[i]->len, addr, buf, len);
	return n;
}

#define MAXREC 128
static struct retired_block rec[MAXREC];
static int nrec;
static struct dbr_map *map;
static struct dcache *raw_dc, *ref_dc;
static int via_whole; /* _i of the loop tests: 1 whole blocks go in through whole() */

static void record(void *ctx, const struct retired_block *rb)
{
	(void)ctx;
	ck_assert_int_lt(nrec, MAXREC);
	rec[nrec++] = *rb;
}

static void setup(void)
{
	memcpy(orig_mem, orig_code, ORIG_SIZE);
	nrec = 0;
	ninst = 0;
	map = NULL;
	raw_dc = ref_dc = NULL;
}

static void teardown(void)
{
	dbr_map_free(map);
	dcache_free(raw_dc);
	dcache_free(ref_dc);
}

/* Installs the layouts as the machine does: each patch jump written over the
 * program (the bytes it replaces checked against the program's), each image
 * handed to the map from buffers that are then scribbled over and freed (the
 * map copies them). */
static void install(const struct layout *const *ls, size_t n)
{
	memcpy(patched_mem, orig_mem, ORIG_SIZE);
	map = dbr_map_new(read_orig, NULL);
	ck_assert_ptr_nonnull(map);
	for (size_t i = 0; i < n; i++) {
		const struct layout *l = ls[i];
		inst[ninst++] = l;
		if (l->npatch) {
			uint8_t *at = patched_mem + (l->patch.addr - ORIG);
			ck_assert_int_eq(memcmp(at, l->patch.orig, 5), 0);
			memcpy(at, l->patch.jmp, 5);
		}
		uint8_t *b = malloc(l->len);
		struct dbr_insn *m = malloc(l->ninsn * sizeof(*m));
		struct dbr_patch *p = malloc(sizeof(*p));
		ck_assert(b && m && p);
		memcpy(b, l->bytes, l->len);
		memcpy(m, l->insn, l->ninsn * sizeof(*m));
		*p = l->patch;
		struct dbr_image img = {l->base, b, l->len, m, l->ninsn, p, l->npatch};
		ck_assert_int_eq(dbr_map_add_image(map, &img), 0);
		memset(b, 0xcc, l->len);
		memset(m, 0xff, l->ninsn * sizeof(*m));
		memset(p, 0xff, sizeof(*p));
		free(b);
		free(m);
		free(p);
	}
	ck_assert_int_eq(dbr_map_add_sink(map, (struct block_sink){.retire = record}), 0);
	raw_dc = dcache_new(read_rewritten, NULL);
	ref_dc = dcache_new(read_orig, NULL);
	ck_assert(raw_dc && ref_dc);
}

static void install1(const struct layout *l)
{
	install(&l, 1);
}

/* ---- the raw stream ---- */

#define WHOLE (-1)

/* A raw block as the machine retires it in the rewritten program. */
struct raw {
	int line;
	uint64_t start;
	int n;        /* instructions retired; WHOLE: all of the run's */
	uint8_t kind; /* the run's kind, BK_NONE when its terminator did not retire */
	uint8_t taken;
	uint64_t next;
	uint8_t run_start;
	uint64_t sp;
	uint8_t rep_part;
	uint64_t rep_iters, rep_count, rep_left;
};
/* clang-format off */
#define RAW(start, n, kind, taken, next) {__LINE__, start, n, kind, taken, next, 1, 0, 0, 0, 0, 0}
/* a block that goes on with the run the one before it cut (run_start 0) */
#define RAW_ON(start, n, kind, taken, next)                                                        \
	{__LINE__, start, n, kind, taken, next, 0, 0, 0, 0, 0, 0}
#define RAW_SP(start, kind, next, sp) {__LINE__, start, WHOLE, kind, 1, next, 1, sp, 0, 0, 0, 0}
#define RAW_REP(start, n, kind, next, part, iters, count, left)                                    \
	{__LINE__, start, n, kind, 0, next, 1, 0, part, iters, count, left}
/* clang-format on */

/* What the machine's stream guarantees of a raw block, checked against the
 * rewritten bytes (so that the hand-assembled rel32s are what the rows say). */
static void check_raw(const struct raw *r, const struct block_info *bi, uint32_t n)
{
	ck_assert_msg(n <= bi->ninsns, "raw row line %d: %u instructions of %u", r->line, n,
	              bi->ninsns);
	if (r->kind == BK_NONE) {
		ck_assert_msg(n < bi->ninsns || bi->kind == BK_NONE, "raw row line %d: not cut",
		              r->line);
		ck_assert_msg(r->next == bi->start + bi->off[n], "raw row line %d: cut, next %#llx",
		              r->line, (unsigned long long)r->next);
		return;
	}
	ck_assert_msg(n == bi->ninsns && r->kind == bi->kind, "raw row line %d: kind %s, run's %s",
	              r->line, br_kind_name(r->kind), br_kind_name(bi->kind));
	uint64_t want = r->next;
	switch (r->kind) {
	case BK_JMP:
	case BK_CALL:
		want = bi->target;
		/* fall through */
	case BK_RET:
	case BK_JMP_IND:
	case BK_CALL_IND:
		ck_assert_msg(r->taken, "raw row line %d: not taken", r->line);
		break;
	case BK_COND:
		want = r->taken ? bi->target : bi->end;
		break;
	case BK_REP:
		want = bi->end;
		/* fall through */
	default:
		ck_assert_msg(!r->taken, "raw row line %d: taken", r->line);
		break;
	}
	ck_assert_msg(r->next == want, "raw row line %d: next %#llx, the bytes say %#llx", r->line,
	              (unsigned long long)r->next, (unsigned long long)want);
}

/* Hands the map one raw block of thread tid, through whole() when the test
 * says so and the machine would (a whole run, no REP part). */
static void feed(const struct raw *r, uint32_t tid, int new_context)
{
	const struct block_info *bi = dcache_get(raw_dc, r->start, NULL);
	ck_assert_ptr_nonnull(bi);
	uint32_t n = r->n == WHOLE ? bi->ninsns : (uint32_t)r->n;
	check_raw(r, bi, n);
	struct block_sink s = dbr_map_sink(map);
	if (via_whole && n == bi->ninsns && r->kind == bi->kind && !r->rep_part) {
		unsigned flags = (r->taken ? RB_WHOLE_TAKEN : 0) |
		                 (r->run_start ? RB_WHOLE_RUN_START : 0) |
		                 (new_context ? RB_WHOLE_NEW_CONTEXT : 0);
		s.whole(s.ctx, bi, r->next, r->sp, tid, flags);
		return;
	}
	struct retired_block rb = {0};
	rb.info = bi;
	rb.next = r->next;
	rb.tid = tid;
	rb.ninsns = n;
	rb.kind = r->kind;
	rb.taken = r->taken;
	rb.run_start = r->run_start;
	rb.new_context = (uint8_t)new_context;
	rb.sp = r->sp;
	rb.rep_part = r->rep_part;
	rb.rep_iters = r->rep_iters;
	rb.rep_count = r->rep_count;
	rb.rep_left = r->rep_left;
	s.retire(s.ctx, &rb);
}

#define TID 1

static void play(const struct raw *r, size_t n)
{
	for (size_t i = 0; i < n; i++)
		feed(&r[i], TID, 0);
}

/* ---- the reference: the original program's stream, by hand ---- */

struct ref {
	int line;
	uint64_t start;
	uint16_t run; /* instructions of the original run from start */
	uint32_t n;   /* retired */
	uint8_t kind, taken;
	uint64_t next;
	uint8_t run_start;
	uint64_t sp;
	uint8_t rep_part;
	uint64_t rep_iters, rep_count, rep_left;
};
/* clang-format off */
#define REF(start, run, n, kind, taken, next)                                                      \
	{__LINE__, start, run, n, kind, taken, next, 1, 0, 0, 0, 0, 0}
#define REF_SP(start, run, kind, next, sp)                                                         \
	{__LINE__, start, run, run, kind, 1, next, 1, sp, 0, 0, 0, 0}
#define REF_REP(start, run, n, kind, next, part, iters, count, left)                               \
	{__LINE__, start, run, n, kind, 0, next, 1, 0, part, iters, count, left}
/* clang-format on */

static void check_block(const struct retired_block *g, const struct ref *r, int k)
{
	const struct block_info *o = dcache_get(ref_dc, r->start, NULL);
	ck_assert_ptr_nonnull(o);
	ck_assert_msg(o->ninsns == r->run,
	              "ref line %d: the original run at %#llx has %u instructions", r->line,
	              (unsigned long long)r->start, o->ninsns);
	const struct block_info *bi = g->info;
	ck_assert_msg(bi->start == r->start, "ref line %d (block %d): starts at %#llx, want %#llx",
	              r->line, k, (unsigned long long)bi->start, (unsigned long long)r->start);
	ck_assert_msg(bi->ninsns == o->ninsns && bi->end == o->end && bi->term == o->term &&
	                  bi->kind == o->kind && bi->target == o->target,
	              "ref line %d: the block's run is not the original's", r->line);
	ck_assert_msg(g->ninsns == r->n, "ref line %d: %u instructions, want %u", r->line,
	              g->ninsns, r->n);
	ck_assert_msg(g->kind == r->kind, "ref line %d: kind %s, want %s", r->line,
	              br_kind_name(g->kind), br_kind_name(r->kind));
	ck_assert_msg(g->taken == r->taken, "ref line %d: taken %d, want %d", r->line, g->taken,
	              r->taken);
	ck_assert_msg(g->next == r->next, "ref line %d: next %#llx, want %#llx", r->line,
	              (unsigned long long)g->next, (unsigned long long)r->next);
	ck_assert_msg(g->run_start == r->run_start, "ref line %d: run_start %d, want %d", r->line,
	              g->run_start, r->run_start);
	ck_assert_msg(g->sp == r->sp, "ref line %d: sp %#llx, want %#llx", r->line,
	              (unsigned long long)g->sp, (unsigned long long)r->sp);
	ck_assert_msg(g->rep_part == r->rep_part && g->rep_iters == r->rep_iters &&
	                  g->rep_count == r->rep_count && g->rep_left == r->rep_left,
	              "ref line %d: REP part %#x %llu/%llu left %llu, want %#x %llu/%llu left %llu",
	              r->line, g->rep_part, (unsigned long long)g->rep_iters,
	              (unsigned long long)g->rep_count, (unsigned long long)g->rep_left,
	              r->rep_part, (unsigned long long)r->rep_iters,
	              (unsigned long long)r->rep_count, (unsigned long long)r->rep_left);
}

/* The blocks of thread tid handed on, in order, against ref. */
static void expect_tid(const struct ref *ref, size_t n, uint32_t tid)
{
	size_t k = 0;
	for (int i = 0; i < nrec; i++) {
		if (rec[i].tid != tid)
			continue;
		ck_assert_msg(k < n, "tid %u: block %zu at %#llx beyond the %zu expected", tid, k,
		              (unsigned long long)rec[i].info->start, n);
		check_block(&rec[i], &ref[k], (int)k);
		k++;
	}
	ck_assert_msg(k == n, "tid %u: %zu blocks handed on, want %zu (next expected: line %d)",
	              tid, k, n, k < n ? ref[k].line : 0);
}

static void expect(const struct ref *ref, size_t n)
{
	expect_tid(ref, n, TID);
	ck_assert_int_eq(nrec, (int)n);
}

static void expect_counts(uint64_t added, uint64_t unknown)
{
	ck_assert_uint_eq(dbr_map_added_insns(map), added);
	ck_assert_uint_eq(dbr_map_unknown_insns(map), unknown);
}

/* ---- the scenarios ---- */

/* P1 under I1: entered through the patch jump, 4 iterations in the copy, out by
 * the added jump. */
/* clang-format off */
static const struct raw s1_raw[] = {
    RAW(0x401000, WHOLE, BK_JMP, 1, 0x300000),  /* the patch jump */
    RAW(0x300000, WHOLE, BK_COND, 1, 0x300007), /* ecx 4 -> 3 */
    RAW(0x300007, WHOLE, BK_COND, 1, 0x300007), /* 3 -> 2 */
    RAW(0x300007, WHOLE, BK_COND, 1, 0x300007), /* 2 -> 1 */
    RAW(0x300007, WHOLE, BK_COND, 0, 0x300016), /* 1 -> 0 */
    RAW(0x300016, WHOLE, BK_JMP, 1, 0x401012),  /* added: back to the original */
    RAW(0x401012, WHOLE, BK_SYSCALL, 0, 0x401019),
};
static const struct ref s1_ref[] = {
    REF(0x401000, 6, 6, BK_COND, 1, 0x401007),
    REF(0x401007, 4, 4, BK_COND, 1, 0x401007),
    REF(0x401007, 4, 4, BK_COND, 1, 0x401007),
    REF(0x401007, 4, 4, BK_COND, 0, 0x401012),
    REF(0x401012, 2, 2, BK_SYSCALL, 0, 0x401019), /* a run after a jcc that fell through */
};
/* clang-format on */

START_TEST(loop_in_identity_copy)
{
	via_whole = _i;
	install1(&l1);
	play(s1_raw, N(s1_raw));
	expect(s1_ref, N(s1_ref));
	expect_counts(2, 0);
}
END_TEST

/* P2 under I2h: ecx 3. The raw je falls through while the original jne is taken. */
/* clang-format off */
static const struct raw s2_raw[] = {
    RAW(0x401040, WHOLE, BK_JMP, 1, 0x300100),  /* the patch jump */
    RAW(0x300100, WHOLE, BK_COND, 0, 0x300110), /* mov xor cmp je: ecx 3 */
    RAW(0x300110, WHOLE, BK_JMP, 1, 0x300107),  /* add dec jmp: 3 -> 2 */
    RAW(0x300107, WHOLE, BK_COND, 0, 0x300110), /* cmp je: 2 */
    RAW(0x300110, WHOLE, BK_JMP, 1, 0x300107),  /* 2 -> 1 */
    RAW(0x300107, WHOLE, BK_COND, 0, 0x300110), /* 1 */
    RAW(0x300110, WHOLE, BK_JMP, 1, 0x300107),  /* 1 -> 0 */
    RAW(0x300107, WHOLE, BK_COND, 1, 0x401054), /* 0: je taken, to X */
    RAW(0x401054, WHOLE, BK_SYSCALL, 0, 0x40105b),
};
static const struct ref s2_ref[] = {
    REF(0x401040, 3, 3, BK_JMP, 1, 0x40104f),  /* A: its jmp retires, to T */
    REF(0x40104f, 2, 2, BK_COND, 1, 0x401049), /* T: ecx 3, jne taken */
    REF(0x401049, 4, 4, BK_COND, 1, 0x401049), /* B: one run over T: 3 -> 2 */
    REF(0x401049, 4, 4, BK_COND, 1, 0x401049), /* 2 -> 1 */
    REF(0x401049, 4, 4, BK_COND, 0, 0x401054), /* 1 -> 0 */
    REF(0x401054, 2, 2, BK_SYSCALL, 0, 0x40105b),
};
/* clang-format on */

/* The outcomes of the jne at 0x401052 in what was handed on. */
static void jne_counts(uint32_t tid, int taken, int fell)
{
	int t = 0, f = 0;
	for (int i = 0; i < nrec; i++)
		if (rec[i].tid == tid && rec[i].kind == BK_COND && rec[i].info->term == 0x401052)
			rec[i].taken ? t++ : f++;
	ck_assert_int_eq(t, taken);
	ck_assert_int_eq(f, fell);
}

START_TEST(loop_hot_layout_inverted_jcc)
{
	via_whole = _i;
	install1(&l2h);
	play(s2_raw, N(s2_raw));
	expect(s2_ref, N(s2_ref));
	jne_counts(TID, 3, 1);
	expect_counts(4, 0);
}
END_TEST

/* The same execution under I2i. */
/* clang-format off */
static const struct raw s2i_raw[] = {
    RAW(0x401040, WHOLE, BK_JMP, 1, 0x300200),
    RAW(0x300200, WHOLE, BK_JMP, 1, 0x300212),  /* mov xor jmp (widened copy) */
    RAW(0x300212, WHOLE, BK_COND, 1, 0x30020c), /* cmp jne: ecx 3 */
    RAW(0x30020c, WHOLE, BK_COND, 1, 0x30020c), /* 3 -> 2 */
    RAW(0x30020c, WHOLE, BK_COND, 1, 0x30020c), /* 2 -> 1 */
    RAW(0x30020c, WHOLE, BK_COND, 0, 0x30021b), /* 1 -> 0 */
    RAW(0x30021b, WHOLE, BK_JMP, 1, 0x401054),
    RAW(0x401054, WHOLE, BK_SYSCALL, 0, 0x40105b),
};
/* clang-format on */

START_TEST(loop_identity_layout_copied_jmp)
{
	via_whole = _i;
	install1(&l2i);
	play(s2i_raw, N(s2i_raw));
	expect(s2_ref, N(s2_ref));
	jne_counts(TID, 3, 1);
	expect_counts(2, 0);
}
END_TEST

/* P5 under I5: an added jump between the two halves of one original run. */
/* clang-format off */
static const struct raw s3_raw[] = {
    RAW(0x401100, WHOLE, BK_JMP, 1, 0x300510),
    RAW(0x300510, WHOLE, BK_JMP, 1, 0x300500), /* mov, added jmp */
    RAW(0x300500, WHOLE, BK_SYSCALL, 0, 0x30050b),
};
static const struct ref s3_ref[] = {
    REF(0x401100, 4, 4, BK_SYSCALL, 0, 0x401110),
};
/* clang-format on */

START_TEST(split_point_is_one_run)
{
	via_whole = _i;
	install1(&l5);
	play(s3_raw, N(s3_raw));
	expect(s3_ref, N(s3_ref));
	expect_counts(2, 0);
}
END_TEST

/* P6 under I6: the jmp made a fall-through; the run begins in the original code. */
/* clang-format off */
static const struct raw s4_raw[] = {
    RAW(0x401120, WHOLE, BK_JMP, 1, 0x300600), /* xor, the patch jump */
    RAW(0x300600, WHOLE, BK_SYSCALL, 0, 0x300610),
};
static const struct ref s4_ref[] = {
    REF(0x401120, 3, 3, BK_JMP, 1, 0x401130),
    REF(0x401130, 3, 3, BK_SYSCALL, 0, 0x40113b),
};
/* clang-format on */

START_TEST(jmp_left_out_still_retires)
{
	via_whole = _i;
	install1(&l6);
	play(s4_raw, N(s4_raw));
	expect(s4_ref, N(s4_ref));
	expect_counts(1, 0);
}
END_TEST

/* P3 under I3: push/mov/jmp into the callee's copy, lea/jmp back. No raw
 * block ends in the call or the return, so no RSP goes with them
 * (sim/dbr_map.h). */
/* clang-format off */
static const struct raw s5_raw[] = {
    RAW(0x401080, WHOLE, BK_JMP, 1, 0x300300),
    RAW(0x300300, WHOLE, BK_JMP, 1, 0x300327), /* mov push mov jmp */
    RAW(0x300327, WHOLE, BK_JMP, 1, 0x300317), /* add lea jmp */
    RAW(0x300317, WHOLE, BK_SYSCALL, 0, 0x300322),
};
static const struct ref s5_ref[] = {
    REF(0x401080, 2, 2, BK_CALL, 1, 0x4010a0),
    REF(0x4010a0, 2, 2, BK_RET, 1, 0x40108a),
    REF(0x40108a, 3, 3, BK_SYSCALL, 0, 0x401095),
};
/* clang-format on */

START_TEST(inlined_call_and_return)
{
	via_whole = _i;
	install1(&l3);
	play(s5_raw, N(s5_raw));
	expect(s5_ref, N(s5_ref));
	expect_counts(4, 0);
}
END_TEST

/* The same with RSP noted before the push and the pop ran (a code hook's
 * reading): the call carries the push's slot, the return RSP after the pop; a
 * note of an address that is neither is ignored, and a note the block that
 * retires next does not take is dropped with it. */
START_TEST(noted_rsp_rides_on_inlined_call_and_return)
{
	via_whole = _i;
	install1(&l3);
	feed(&s5_raw[0], TID, 0);
	dbr_map_note_sp(map, 0x300327, 0x1234); /* the clone's add: ignored */
	dbr_map_note_sp(map, 0x30032a, 0x5550); /* the pop, which this block does not run */
	dbr_map_note_sp(map, 0x300305, 0x8000); /* the push */
	feed(&s5_raw[1], TID, 0);
	dbr_map_note_sp(map, 0x30032a, 0x7ff8);
	feed(&s5_raw[2], TID, 0);
	feed(&s5_raw[3], TID, 0);
	/* clang-format off */
	static const struct ref want[] = {
	    REF_SP(0x401080, 2, BK_CALL, 0x4010a0, 0x7ff8),
	    REF_SP(0x4010a0, 2, BK_RET, 0x40108a, 0x8000),
	    REF(0x40108a, 3, 3, BK_SYSCALL, 0, 0x401095),
	};
	/* clang-format on */
	expect(want, N(want));
	/* the second run: no note left from the first, RSP not known */
	dbr_map_note_sp(map, 0x300305, 0x6000);
	feed(&s5_raw[0], TID, 0);
	feed(&s5_raw[1], TID, 0);
	feed(&s5_raw[2], TID, 0);
	ck_assert_int_eq(nrec, 5);
	ck_assert_uint_eq(rec[3].sp, 0);
	ck_assert_uint_eq(rec[4].sp, 0);
}
END_TEST

/* P3 under I3: a signal after the inlined call's block, another after the
 * return's: the call went to the callee, the return to its return point,
 * whatever ran next. */
/* clang-format off */
static const struct raw s5b_raw[] = {
    RAW(0x401080, WHOLE, BK_JMP, 1, 0x300300),
    RAW(0x300300, WHOLE, BK_JMP, 1, 0x300327), /* mov push mov jmp, then the signal */
    RAW_SP(0x401180, BK_RET, 0x401190, 0x7e08),
    RAW(0x401190, WHOLE, BK_SYSCALL, 0, 0x300327),
    RAW(0x300327, WHOLE, BK_JMP, 1, 0x300317), /* add lea jmp, then the signal */
    RAW_SP(0x401180, BK_RET, 0x401190, 0x7e08),
    RAW(0x401190, WHOLE, BK_SYSCALL, 0, 0x300317),
    RAW(0x300317, WHOLE, BK_SYSCALL, 0, 0x300322),
};
static const struct ref s5b_ref[] = {
    REF(0x401080, 2, 2, BK_CALL, 1, 0x4010a0),
    REF_SP(0x401180, 2, BK_RET, 0x401190, 0x7e08),
    REF(0x401190, 2, 2, BK_SYSCALL, 0, 0x4010a0),
    REF(0x4010a0, 2, 2, BK_RET, 1, 0x40108a),
    REF_SP(0x401180, 2, BK_RET, 0x401190, 0x7e08),
    REF(0x401190, 2, 2, BK_SYSCALL, 0, 0x40108a),
    REF(0x40108a, 3, 3, BK_SYSCALL, 0, 0x401095),
};
/* clang-format on */

START_TEST(signal_after_inlined_call)
{
	via_whole = _i;
	install1(&l3);
	play(s5b_raw, N(s5b_raw));
	expect(s5b_ref, N(s5b_ref));
	expect_counts(4, 0);
}
END_TEST

/* P4 under I4: the call runs in the original code; RSP after it goes with it. */
/* clang-format off */
static const struct raw s6_raw[] = {
    RAW(0x4010c0, WHOLE, BK_JMP, 1, 0x300400),
    RAW(0x300400, WHOLE, BK_JMP, 1, 0x4010c6), /* add, jmp back */
    RAW_SP(0x4010c6, BK_CALL, 0x4010e0, 0x7ff8),
    RAW_SP(0x4010e0, BK_RET, 0x4010cb, 0x8000),
    RAW(0x4010cb, WHOLE, BK_SYSCALL, 0, 0x4010d2),
};
static const struct ref s6_ref[] = {
    REF_SP(0x4010c0, 2, BK_CALL, 0x4010e0, 0x7ff8),
    REF_SP(0x4010e0, 2, BK_RET, 0x4010cb, 0x8000),
    REF(0x4010cb, 2, 2, BK_SYSCALL, 0, 0x4010d2),
};
/* clang-format on */

START_TEST(call_not_inlined)
{
	via_whole = _i;
	install1(&l4);
	play(s6_raw, N(s6_raw));
	expect(s6_ref, N(s6_ref));
	expect_counts(2, 0);
}
END_TEST

/* P4 under I4b: the patch jump is the raw block's second instruction; the call
 * done in the replacement, to the original callee. */
/* clang-format off */
static const struct raw s6b_raw[] = {
    RAW(0x4010c0, WHOLE, BK_JMP, 1, 0x300900), /* add, the patch jump */
    RAW(0x300900, WHOLE, BK_JMP, 1, 0x4010e0), /* push mov jmp */
    RAW_SP(0x4010e0, BK_RET, 0x4010cb, 0x8000),
    RAW(0x4010cb, WHOLE, BK_SYSCALL, 0, 0x4010d2),
};
static const struct ref s6b_ref[] = {
    REF(0x4010c0, 2, 2, BK_CALL, 1, 0x4010e0),
    REF_SP(0x4010e0, 2, BK_RET, 0x4010cb, 0x8000),
    REF(0x4010cb, 2, 2, BK_SYSCALL, 0, 0x4010d2),
};
/* clang-format on */

START_TEST(call_at_patch_point)
{
	via_whole = _i;
	install1(&l4b);
	play(s6b_raw, N(s6b_raw));
	expect(s6b_ref, N(s6b_ref));
	expect_counts(3, 0);
}
END_TEST

/* P8 under I9: the loop's trampoline, both ways. */
/* clang-format off */
static const struct raw s8l_raw[] = {
    RAW(0x4011a0, WHOLE, BK_JMP, 1, 0x300a00),
    RAW(0x300a00, WHOLE, BK_COND, 1, 0x300a0f), /* mov inc loop: ecx 3 -> 2 */
    RAW(0x300a0f, WHOLE, BK_JMP, 1, 0x300a05),
    RAW(0x300a05, WHOLE, BK_COND, 1, 0x300a0f), /* 2 -> 1 */
    RAW(0x300a0f, WHOLE, BK_JMP, 1, 0x300a05),
    RAW(0x300a05, WHOLE, BK_COND, 0, 0x300a0a), /* 1 -> 0 */
    RAW(0x300a0a, WHOLE, BK_JMP, 1, 0x4011aa),
    RAW(0x4011aa, WHOLE, BK_SYSCALL, 0, 0x4011b1),
};
static const struct ref s8l_ref[] = {
    REF(0x4011a0, 3, 3, BK_COND, 1, 0x4011a5),
    REF(0x4011a5, 2, 2, BK_COND, 1, 0x4011a5),
    REF(0x4011a5, 2, 2, BK_COND, 0, 0x4011aa),
    REF(0x4011aa, 2, 2, BK_SYSCALL, 0, 0x4011b1),
};
/* clang-format on */

START_TEST(loop_instruction_trampoline)
{
	via_whole = _i;
	install1(&l9);
	play(s8l_raw, N(s8l_raw));
	expect(s8l_ref, N(s8l_ref));
	expect_counts(4, 0);
}
END_TEST

/* P9 under I10: "je $+2" taken (ZF = 1) goes where it would have fallen. */
/* clang-format off */
static const struct raw s9e_raw[] = {
    RAW(0x4011c0, WHOLE, BK_JMP, 1, 0x300b00),
    RAW(0x300b00, WHOLE, BK_COND, 1, 0x4011c9),
    RAW(0x4011c9, WHOLE, BK_SYSCALL, 0, 0x4011d0),
};
static const struct ref s9e_ref[] = {
    REF(0x4011c0, 3, 3, BK_COND, 1, 0x4011c9),
    REF(0x4011c9, 2, 2, BK_SYSCALL, 0, 0x4011d0),
};
/* clang-format on */

START_TEST(jcc_to_its_own_fall_through)
{
	via_whole = _i;
	install1(&l10);
	play(s9e_raw, N(s9e_raw));
	expect(s9e_ref, N(s9e_ref));
	expect_counts(1, 0);
}
END_TEST

/* P1 under I1: a signal after the copy's third instruction; the handler, its
 * restorer's rt_sigreturn back into the middle of the copy (the syscall's next
 * is where the program goes on, not its fall-through). */
/* clang-format off */
static const struct raw s7_raw[] = {
    RAW(0x401000, WHOLE, BK_JMP, 1, 0x300000),
    RAW(0x300000, 3, BK_NONE, 0, 0x30000b),     /* mov xor add: the signal */
    RAW_SP(0x401180, BK_RET, 0x401190, 0x7e08), /* the handler: no branch led there */
    RAW(0x401190, WHOLE, BK_SYSCALL, 0, 0x30000b),
    RAW(0x30000b, WHOLE, BK_COND, 1, 0x300007), /* dec cmp jne: 4 -> 3 */
    RAW(0x300007, WHOLE, BK_COND, 1, 0x300007), /* 3 -> 2 */
    RAW(0x300007, WHOLE, BK_COND, 1, 0x300007), /* 2 -> 1 */
    RAW(0x300007, WHOLE, BK_COND, 0, 0x300016), /* 1 -> 0 */
    RAW(0x300016, WHOLE, BK_JMP, 1, 0x401012),
    RAW(0x401012, WHOLE, BK_SYSCALL, 0, 0x401019),
};
static const struct ref s7_ref[] = {
    REF(0x401000, 6, 3, BK_NONE, 0, 0x40100b),
    REF_SP(0x401180, 2, BK_RET, 0x401190, 0x7e08),
    REF(0x401190, 2, 2, BK_SYSCALL, 0, 0x40100b),
    REF(0x40100b, 3, 3, BK_COND, 1, 0x401007),
    REF(0x401007, 4, 4, BK_COND, 1, 0x401007),
    REF(0x401007, 4, 4, BK_COND, 1, 0x401007),
    REF(0x401007, 4, 4, BK_COND, 0, 0x401012),
    REF(0x401012, 2, 2, BK_SYSCALL, 0, 0x401019),
};
/* clang-format on */

START_TEST(signal_in_the_copy)
{
	via_whole = _i;
	install1(&l1);
	play(s7_raw, N(s7_raw));
	expect(s7_ref, N(s7_ref));
	expect_counts(2, 0);
}
END_TEST

/* P2 under I2h: the signal comes after B's added jump (a taken branch before
 * the handler): the original run B is cut after add and dec; the program
 * resumes at T's copy. */
/* clang-format off */
static const struct raw s7b_raw[] = {
    RAW(0x401040, WHOLE, BK_JMP, 1, 0x300100),
    RAW(0x300100, WHOLE, BK_COND, 0, 0x300110), /* ecx 3 */
    RAW(0x300110, WHOLE, BK_JMP, 1, 0x300107),  /* 3 -> 2, then the signal */
    RAW_SP(0x401180, BK_RET, 0x401190, 0x7e08),
    RAW(0x401190, WHOLE, BK_SYSCALL, 0, 0x300107),
    RAW(0x300107, WHOLE, BK_COND, 0, 0x300110), /* 2 */
    RAW(0x300110, WHOLE, BK_JMP, 1, 0x300107),  /* 2 -> 1 */
    RAW(0x300107, WHOLE, BK_COND, 0, 0x300110), /* 1 */
    RAW(0x300110, WHOLE, BK_JMP, 1, 0x300107),  /* 1 -> 0 */
    RAW(0x300107, WHOLE, BK_COND, 1, 0x401054), /* 0 */
    RAW(0x401054, WHOLE, BK_SYSCALL, 0, 0x40105b),
};
static const struct ref s7b_ref[] = {
    REF(0x401040, 3, 3, BK_JMP, 1, 0x40104f),
    REF(0x40104f, 2, 2, BK_COND, 1, 0x401049),
    REF(0x401049, 4, 2, BK_NONE, 0, 0x40104f), /* add dec, then the signal */
    REF_SP(0x401180, 2, BK_RET, 0x401190, 0x7e08),
    REF(0x401190, 2, 2, BK_SYSCALL, 0, 0x40104f),
    REF(0x40104f, 2, 2, BK_COND, 1, 0x401049), /* resumed at T: 2 */
    REF(0x401049, 4, 4, BK_COND, 1, 0x401049), /* 2 -> 1 */
    REF(0x401049, 4, 4, BK_COND, 0, 0x401054), /* 1 -> 0 */
    REF(0x401054, 2, 2, BK_SYSCALL, 0, 0x40105b),
};
/* clang-format on */

START_TEST(signal_after_an_added_jump)
{
	via_whole = _i;
	install1(&l2h);
	play(s7b_raw, N(s7b_raw));
	expect(s7b_ref, N(s7b_ref));
	jne_counts(TID, 3, 1);
}
END_TEST

/* P1 under I1: the emulator cuts a raw block and goes on with the rest of its
 * run (run_start 0): nothing happened to the original run. */
/* clang-format off */
static const struct raw s7c_raw[] = {
    RAW(0x401000, WHOLE, BK_JMP, 1, 0x300000),
    RAW(0x300000, 2, BK_NONE, 0, 0x300007),
    RAW_ON(0x300007, WHOLE, BK_COND, 0, 0x300016), /* as if ecx were 1 */
    RAW(0x300016, WHOLE, BK_JMP, 1, 0x401012),
    RAW(0x401012, WHOLE, BK_SYSCALL, 0, 0x401019),
};
static const struct ref s7c_ref[] = {
    REF(0x401000, 6, 6, BK_COND, 0, 0x401012),
    REF(0x401012, 2, 2, BK_SYSCALL, 0, 0x401019),
};
/* clang-format on */

START_TEST(raw_cut_that_goes_on)
{
	via_whole = _i;
	install1(&l1);
	play(s7c_raw, N(s7c_raw));
	expect(s7c_ref, N(s7c_ref));
}
END_TEST

/* Threads run P2 under I2h, switched at every raw block (each thread's first
 * block after a switch starts a new context); each thread's stream is the
 * one-thread stream. _i & 2: each thread starts two blocks after the one
 * before it; _i & 4: 12 threads, not 2. */
START_TEST(threads_interleaved)
{
	via_whole = _i & 1;
	install1(&l2h);
	size_t late = _i & 2 ? 2 : 0, nt = _i & 4 ? 12 : 2, n = N(s2_raw);
	for (size_t k = 0; k < n + late * nt; k++)
		for (size_t t = 0; t < nt; t++)
			if (k >= late * t && k - late * t < n)
				feed(&s2_raw[k - late * t], 10 + (uint32_t)t, 1);
	for (size_t t = 0; t < nt; t++) {
		expect_tid(s2_ref, N(s2_ref), 10 + (uint32_t)t);
		jne_counts(10 + (uint32_t)t, 3, 1);
	}
	ck_assert_int_eq(nrec, (int)(nt * N(s2_ref)));
	expect_counts(4 * nt, 0);
}
END_TEST

/* P7 under I7: a REP that runs its whole count. */
/* clang-format off */
static const struct raw s9_raw[] = {
    RAW(0x401140, WHOLE, BK_JMP, 1, 0x300700),
    RAW_REP(0x300700, WHOLE, BK_REP, 0x300707, RB_REP_RAN, 8, 8, 0),
    RAW(0x300707, WHOLE, BK_JMP, 1, 0x401147),
    RAW(0x401147, WHOLE, BK_SYSCALL, 0, 0x401151),
};
static const struct ref s9_ref[] = {
    REF_REP(0x401140, 2, 2, BK_REP, 0x401147, RB_REP_RAN, 8, 8, 0),
    REF(0x401147, 3, 3, BK_SYSCALL, 0, 0x401151), /* a run after the REP */
};
/* clang-format on */

START_TEST(rep_part_whole)
{
	via_whole = _i;
	install1(&l7);
	play(s9_raw, N(s9_raw));
	expect(s9_ref, N(s9_ref));
	expect_counts(2, 0);
}
END_TEST

/* P7 under I7: a signal in the 4th iteration; resumed; a signal again before
 * the resumed part's first iteration ends (a part with no instruction); resumed
 * to the end. */
#define RAN RB_REP_RAN
#define RESUMED RB_REP_RESUMED
#define LEFT RB_REP_LEFT
/* clang-format off */
static const struct raw s9b_raw[] = {
    RAW(0x401140, WHOLE, BK_JMP, 1, 0x300700),
    RAW_REP(0x300700, 1, BK_NONE, 0x300705, RAN | LEFT, 3, 8, 5),
    RAW_SP(0x401180, BK_RET, 0x401190, 0x7e08),
    RAW(0x401190, WHOLE, BK_SYSCALL, 0, 0x300705),
    RAW_REP(0x300705, 0, BK_NONE, 0x300705, RAN | RESUMED | LEFT, 2, 8, 3),
    RAW_SP(0x401180, BK_RET, 0x401190, 0x7e08),
    RAW(0x401190, WHOLE, BK_SYSCALL, 0, 0x300705),
    RAW_REP(0x300705, WHOLE, BK_REP, 0x300707, RAN | RESUMED, 3, 8, 0),
    RAW(0x300707, WHOLE, BK_JMP, 1, 0x401147),
    RAW(0x401147, WHOLE, BK_SYSCALL, 0, 0x401151),
};
static const struct ref s9b_ref[] = {
    REF_REP(0x401140, 2, 1, BK_NONE, 0x401145, RAN | LEFT, 3, 8, 5),
    REF_SP(0x401180, 2, BK_RET, 0x401190, 0x7e08),
    REF(0x401190, 2, 2, BK_SYSCALL, 0, 0x401145),
    REF_REP(0x401145, 1, 0, BK_NONE, 0x401145, RAN | RESUMED | LEFT, 2, 8, 3),
    REF_SP(0x401180, 2, BK_RET, 0x401190, 0x7e08),
    REF(0x401190, 2, 2, BK_SYSCALL, 0, 0x401145),
    REF_REP(0x401145, 1, 1, BK_REP, 0x401147, RAN | RESUMED, 3, 8, 0),
    REF(0x401147, 3, 3, BK_SYSCALL, 0, 0x401151),
};
/* clang-format on */

START_TEST(rep_part_left_and_resumed)
{
	via_whole = _i;
	install1(&l7);
	play(s9b_raw, N(s9b_raw));
	expect(s9b_ref, N(s9b_ref));
	expect_counts(2, 0);
}
END_TEST

/* P7 under I7b: the REP left in its first raw part, a raw block of no
 * instruction that cuts the original run after its mov. */
/* clang-format off */
static const struct raw s9c_raw[] = {
    RAW(0x401140, WHOLE, BK_JMP, 1, 0x300c07),
    RAW(0x300c07, WHOLE, BK_JMP, 1, 0x300c00), /* mov, added jmp */
    RAW_REP(0x300c00, 0, BK_NONE, 0x300c00, RAN | LEFT, 3, 8, 5),
    RAW_SP(0x401180, BK_RET, 0x401190, 0x7e08),
    RAW(0x401190, WHOLE, BK_SYSCALL, 0, 0x300c00),
    RAW_REP(0x300c00, WHOLE, BK_REP, 0x300c02, RAN | RESUMED, 5, 8, 0),
    RAW(0x300c02, WHOLE, BK_JMP, 1, 0x401147),
    RAW(0x401147, WHOLE, BK_SYSCALL, 0, 0x401151),
};
static const struct ref s9c_ref[] = {
    REF_REP(0x401140, 2, 1, BK_NONE, 0x401145, RAN | LEFT, 3, 8, 5),
    REF_SP(0x401180, 2, BK_RET, 0x401190, 0x7e08),
    REF(0x401190, 2, 2, BK_SYSCALL, 0, 0x401145),
    REF_REP(0x401145, 1, 1, BK_REP, 0x401147, RAN | RESUMED, 5, 8, 0),
    REF(0x401147, 3, 3, BK_SYSCALL, 0, 0x401151),
};
/* clang-format on */

START_TEST(rep_left_after_an_added_jump)
{
	via_whole = _i;
	install1(&l7b);
	play(s9c_raw, N(s9c_raw));
	expect(s9c_ref, N(s9c_ref));
	expect_counts(3, 0);
}
END_TEST

/* dbr_map_finish: what is pending goes on, with the next address the last raw
 * block gave (through added jumps); a second finish hands on nothing. A branch
 * whose raw block ended at it, or at added jumps after it, is not pending: it
 * went on when that block retired. */
START_TEST(finish_hands_on_pending_runs)
{
	via_whole = _i;
	/* a return in the original code: handed on with its own raw block */
	install1(&l4);
	play(s6_raw, 4);
	expect(s6_ref, 2);
	dbr_map_finish(map);
	ck_assert_int_eq(nrec, 2);
	teardown();
	setup();
	/* an inlined call, added jumps after it: to the callee, not to the return
	 * address, as its raw block retires */
	install1(&l3);
	play(s5_raw, 2);
	expect(s5_ref, 1);
	dbr_map_finish(map);
	ck_assert_int_eq(nrec, 1);
	teardown();
	setup();
	/* the copy's jne fell through to the added jump: next through it, at once */
	install1(&l1);
	play(s1_raw, 5);
	expect(s1_ref, 4);
	dbr_map_finish(map);
	ck_assert_int_eq(nrec, 4);
	teardown();
	setup();
	/* the inverted je taken, and a cut run of a second thread */
	install1(&l2h);
	play(s2_raw, 8);
	/* clang-format off */
	static const struct raw cut[] = {
	    RAW(0x401040, WHOLE, BK_JMP, 1, 0x300100),
	    RAW(0x300100, WHOLE, BK_COND, 0, 0x300110),
	    RAW(0x300110, 1, BK_NONE, 0, 0x300114), /* add, then the program stopped */
	};
	/* clang-format on */
	for (size_t k = 0; k < N(cut); k++)
		feed(&cut[k], 2, k == 0);
	ck_assert_int_eq(nrec, 5 + 2); /* the inverted je went on with its raw block */
	dbr_map_finish(map);
	expect_tid(s2_ref, 5, TID);
	/* clang-format off */
	static const struct ref cut_ref[] = {
	    REF(0x401040, 3, 3, BK_JMP, 1, 0x40104f),
	    REF(0x40104f, 2, 2, BK_COND, 1, 0x401049),
	    REF(0x401049, 4, 1, BK_NONE, 0, 0x40104d),
	};
	/* clang-format on */
	expect_tid(cut_ref, N(cut_ref), 2);
	ck_assert_int_eq(nrec, 8);
}
END_TEST

/* dbr_map_resolve over every layout, installed out of address order. */
/* clang-format off */
static const struct {
	int line;
	uint64_t addr, want;
} resolve_rows[] = {
    {__LINE__, 0x401000, 0x401000}, /* outside: itself */
    {__LINE__, 0x2fffff, 0x2fffff},
    {__LINE__, 0x300000, 0x401000}, /* copies */
    {__LINE__, 0x300010, 0x401010},
    {__LINE__, 0x300016, 0x401012}, /* added jump back to the original */
    {__LINE__, 0x300001, 0},        /* inside an instruction */
    {__LINE__, 0x30001b, 0},        /* no entry */
    {__LINE__, 0x300022, 0x300022}, /* just past I1: outside */
    {__LINE__, 0x30010a, 0x401052}, /* inverted */
    {__LINE__, 0x300116, 0x40104f}, /* added jump to a copy */
    {__LINE__, 0x300305, 0x401085}, /* the push of the call */
    {__LINE__, 0x30030a, 0x4010a0}, /* its high half, then the jump: the callee */
    {__LINE__, 0x300312, 0x4010a0},
    {__LINE__, 0x300322, 0x401095}, /* after the syscall: its fall-through */
    {__LINE__, 0x30032a, 0x4010a3}, /* the lea of the return */
    {__LINE__, 0x30032f, 0x40108a}, /* to the return point's copy */
    {__LINE__, 0x300406, 0x4010c6}, /* back to the call */
    {__LINE__, 0x300515, 0x401105}, /* across the split point */
    {__LINE__, 0x300510, 0x401100},
    {__LINE__, 0x300707, 0x401147},
    {__LINE__, 0x300800, 0},        /* a jump to itself */
    {__LINE__, 0x300a0a, 0x4011aa}, /* the trampoline's sides */
    {__LINE__, 0x300a0f, 0x4011a5},
    {__LINE__, 0x300b0d, 0x4011c9},
};
/* clang-format on */

START_TEST(resolve_follows_added_jumps)
{
	static const struct layout *const all[] = {&l7, &l1,  &l10, &l3, &l8,
	                                           &l5, &l2h, &l9,  &l6, &l4};
	install(all, N(all));
	for (size_t k = 0; k < N(resolve_rows); k++) {
		uint64_t got = dbr_map_resolve(map, resolve_rows[k].addr);
		ck_assert_msg(got == resolve_rows[k].want, "line %d: %#llx resolves to %#llx",
		              resolve_rows[k].line, (unsigned long long)resolve_rows[k].addr,
		              (unsigned long long)got);
	}
}
END_TEST

/* Raw instructions no entry names are counted and stand for nothing. */
START_TEST(unknown_instructions)
{
	via_whole = _i;
	install1(&l1);
	/* clang-format off */
	static const struct raw r[] = {
	    RAW(0x30001b, WHOLE, BK_JMP, 1, 0x401012), /* nop nop jmp, unmapped */
	    RAW(0x401012, WHOLE, BK_SYSCALL, 0, 0x401019),
	};
	/* clang-format on */
	play(r, N(r));
	static const struct ref want[] = {REF(0x401012, 2, 2, BK_SYSCALL, 0, 0x401019)};
	expect(want, N(want));
	expect_counts(0, 3);
}
END_TEST

/* The program writes its code: the map decodes it again. A second thread
 * then runs the new code at 0x401130 in the original. */
START_TEST(invalidate_decodes_again)
{
	via_whole = _i;
	install1(&l6);
	play(s4_raw, N(s4_raw));
	expect(s4_ref, N(s4_ref));
	static const uint8_t nops[4] = {0x90, 0x90, 0x90, 0x90}; /* add rax, 3 -> 4 nops */
	memcpy(orig_mem + 0x130, nops, 4);
	memcpy(patched_mem + 0x130, nops, 4);
	dcache_invalidate(raw_dc, 0x401130, 4);
	dcache_invalidate(ref_dc, 0x401130, 4);
	dbr_map_invalidate(map, 0x401130, 4);
	static const struct raw r[] = {RAW(0x401130, WHOLE, BK_SYSCALL, 0, 0x40113b)};
	feed(&r[0], 2, 1);
	static const struct ref want[] = {REF(0x401130, 6, 6, BK_SYSCALL, 0, 0x40113b)};
	expect_tid(want, 1, 2);
}
END_TEST

static int sink_count[DBR_MAP_MAX_SINKS + 1];
static void count_block(void *ctx, const struct retired_block *rb)
{
	(void)rb;
	(*(int *)ctx)++;
}

START_TEST(sinks_up_to_the_limit)
{
	install1(&l1); /* its first sink: record */
	for (int i = 1; i < DBR_MAP_MAX_SINKS; i++)
		ck_assert_int_eq(dbr_map_add_sink(map, (struct block_sink){.retire = count_block,
		                                                           .ctx = &sink_count[i]}),
		                 0);
	ck_assert_int_eq(dbr_map_add_sink(map, (struct block_sink){.retire = count_block,
	                                                           .ctx = &sink_count[0]}),
	                 PMUSIM_ERR_ARG);
	play(s1_raw, N(s1_raw));
	expect(s1_ref, N(s1_ref));
	ck_assert_int_eq(sink_count[0], 0);
	for (int i = 1; i < DBR_MAP_MAX_SINKS; i++)
		ck_assert_int_eq(sink_count[i], (int)N(s1_ref));
}
END_TEST

/* The hand-made maps: entries in order, back to back over the bytes, each one
 * instruction of its length as the decoder reads the rewritten memory. */
START_TEST(layouts_decode_as_mapped)
{
	static const struct layout *const all[] = {&l1, &l2h, &l2i, &l3, &l4, &l4b, &l5,
	                                           &l6, &l7,  &l7b, &l8, &l9, &l10};
	for (size_t k = 0; k < N(all); k++) {
		const struct layout *l = all[k];
		ninst = 0;
		inst[ninst++] = l;
		memcpy(patched_mem, orig_mem, ORIG_SIZE);
		struct dcache *dc = dcache_new(read_rewritten, NULL);
		uint32_t off = 0;
		for (size_t i = 0; i < l->ninsn; i++) {
			const struct dbr_insn *e = &l->insn[i];
			ck_assert_msg(e->off == off, "layout %zu entry %zu at %#x", k, i, e->off);
			const struct block_info *bi = dcache_get(dc, l->base + off, NULL);
			ck_assert(bi && bi->kind != BK_TRAP);
			ck_assert_msg(bi->off[1] == e->len, "layout %zu entry %zu: %u bytes", k, i,
			              bi->off[1]);
			off += e->len;
		}
		ck_assert(off <= l->len);
		dcache_free(dc);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("dbr_map");
	TCase *tc = tcase_create("dbr_map");
	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_loop_test(tc, loop_in_identity_copy, 0, 2);
	tcase_add_loop_test(tc, loop_hot_layout_inverted_jcc, 0, 2);
	tcase_add_loop_test(tc, loop_identity_layout_copied_jmp, 0, 2);
	tcase_add_loop_test(tc, split_point_is_one_run, 0, 2);
	tcase_add_loop_test(tc, jmp_left_out_still_retires, 0, 2);
	tcase_add_loop_test(tc, inlined_call_and_return, 0, 2);
	tcase_add_loop_test(tc, noted_rsp_rides_on_inlined_call_and_return, 0, 2);
	tcase_add_loop_test(tc, signal_after_inlined_call, 0, 2);
	tcase_add_loop_test(tc, call_not_inlined, 0, 2);
	tcase_add_loop_test(tc, call_at_patch_point, 0, 2);
	tcase_add_loop_test(tc, loop_instruction_trampoline, 0, 2);
	tcase_add_loop_test(tc, jcc_to_its_own_fall_through, 0, 2);
	tcase_add_loop_test(tc, signal_in_the_copy, 0, 2);
	tcase_add_loop_test(tc, signal_after_an_added_jump, 0, 2);
	tcase_add_loop_test(tc, raw_cut_that_goes_on, 0, 2);
	tcase_add_loop_test(tc, threads_interleaved, 0, 8);
	tcase_add_loop_test(tc, rep_part_whole, 0, 2);
	tcase_add_loop_test(tc, rep_part_left_and_resumed, 0, 2);
	tcase_add_loop_test(tc, rep_left_after_an_added_jump, 0, 2);
	tcase_add_loop_test(tc, finish_hands_on_pending_runs, 0, 2);
	tcase_add_test(tc, resolve_follows_added_jumps);
	tcase_add_loop_test(tc, unknown_instructions, 0, 2);
	tcase_add_loop_test(tc, invalidate_decodes_again, 0, 2);
	tcase_add_test(tc, sinks_up_to_the_limit);
	tcase_add_test(tc, layouts_decode_as_mapped);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
