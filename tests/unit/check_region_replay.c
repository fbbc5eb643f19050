/* Unit tests of profiler/region_replay (the exact replay of a block stream
 * against a region set) and of region_set's JSON reading: a hand-made set read
 * from JSON text, hand-made code runs and retired blocks, every figure worked
 * out by hand from region_replay.h's rules in the comments. */
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/json_read.h"
#include "profiler/region_replay.h"
#include "profiler/region_set.h"
#include "tests/unit/run_suite.h"

/* One region: A = 0x1000 (insns at 0x1000, 0x1002, 0x1005; ends 0x1008) and
 * B = 0x1008 (0x1008, 0x100b; ends 0x100d), linked A -> B and B -> A, a patch
 * point on A's second instruction, the loop {A, B} headed by A. */
static const char set_json[] =
    "{\"total\": 100, \"regions\": [{\"start\": \"0x1000\", \"replacement\": {"
    "\"est_insns\": 40, \"blocks\": ["
    "{\"start\": \"0x1000\", \"clone\": 0, \"kind\": \"none\", \"off\": [0, 2, 5, 8], \"succ\": "
    "[1]},"
    "{\"start\": \"0x1008\", \"clone\": 0, \"kind\": \"cond\", \"off\": [0, 3, 5], \"succ\": [0]}],"
    "\"clones\": [], \"points\": [{\"addr\": \"0x1002\", \"block\": 0, \"insn\": 1, \"len\": 5}],"
    "\"loops\": [{\"header\": 0, \"blocks\": [0, 1]}]}}]}";

static const uint16_t off_a[] = {0, 2, 5, 8}, off_b[] = {0, 3, 5}, off_c[] = {0, 4};
static const struct block_info run_a = {
    .start = 0x1000, .end = 0x1008, .id = 0, .ninsns = 3, .off = off_a};
static const struct block_info run_b = {
    .start = 0x1008, .end = 0x100d, .id = 1, .ninsns = 2, .off = off_b};
static const struct block_info run_c = {
    .start = 0x2000, .end = 0x2004, .id = 2, .ninsns = 1, .off = off_c};

static struct rset *load(const char *text, int *err, char *msg, size_t ml)
{
	struct jv *doc;
	struct rset *s = NULL;
	ck_assert_int_eq(json_parse(text, strlen(text), &doc, msg, ml), 0);
	*err = rset_from_json(doc, &s, msg, ml);
	jv_free(doc);
	return s;
}

static void retire(struct block_sink *k, const struct block_info *bi, uint32_t n, uint32_t tid)
{
	if (n == bi->ninsns && k->whole) { /* the stream's common case */
		k->whole(k->ctx, bi, 0, 0, tid, 0);
		return;
	}
	struct retired_block rb = {.info = bi, .ninsns = n, .tid = tid, .kind = BK_NONE};
	k->retire(k->ctx, &rb);
}

START_TEST(read_set)
{
	char msg[256];
	int err;
	struct rset *s = load(set_json, &err, msg, sizeof(msg));
	ck_assert_msg(err == 0, "%s", msg);
	ck_assert_uint_eq(s->nregion, 1);
	const struct rset_region *r = &s->region[0];
	ck_assert_uint_eq(r->nblock, 2);
	ck_assert_uint_eq(r->block[0].ninsns, 3);
	ck_assert_uint_eq(r->block[1].off[2], 5);
	ck_assert_uint_eq(r->point[0].addr, 0x1002);
	ck_assert(s->est_share == 0.4); /* 40 / 100 */
	rset_free(s);
}
END_TEST

/* Thread 1: A (0x1000 outside; 0x1002 the point: enter, 1 inside; 0x1005: 2),
 * B (linked: 4), A (linked from B, A heads the loop but B is in it: no loop
 * entry; 7), C (0x2000: an exit edge 0x1005 -> 0x2000, outside), A (0x1002
 * enters again: 9). Thread 2 between: A's first two instructions (enters at
 * 0x1002: 10), then C while A's third is expected: an interruption
 * 0x1002 -> 0x2000. Totals: 3 + 2 + 3 + 1 + 3 + 2 + 1 = 15 instructions,
 * 10 inside, 3 entries, A entered 4 times (3 by the point, 1 by B's link),
 * B once, the loop entered 3 times (by the point), its header run 4 times. */
START_TEST(replay_by_hand)
{
	char msg[256];
	int err;
	struct rset *s = load(set_json, &err, msg, sizeof(msg));
	struct rreplay *rp;
	ck_assert_int_eq(rreplay_new(s, &rp), 0);
	struct block_sink k = rreplay_sink(rp);
	retire(&k, &run_a, 3, 1);
	retire(&k, &run_a, 2, 2);
	retire(&k, &run_b, 2, 1);
	retire(&k, &run_a, 3, 1);
	retire(&k, &run_c, 1, 2);
	retire(&k, &run_c, 1, 1);
	retire(&k, &run_a, 3, 1);
	ck_assert_int_eq(rreplay_finish(rp), 0);
	const struct rreplay_region *o = rreplay_region(rp, 0);
	ck_assert_uint_eq(rreplay_total(rp), 15);
	ck_assert_uint_eq(rreplay_inside(rp), 10);
	ck_assert_uint_eq(o->insns, 10);
	ck_assert_uint_eq(o->entries, 3);
	ck_assert_uint_eq(o->point_entries[0], 3);
	ck_assert_uint_eq(o->block_execs[0], 4);
	ck_assert_uint_eq(o->block_execs[1], 1);
	ck_assert_uint_eq(o->loop_entries[0], 3);
	ck_assert_uint_eq(o->header_execs[0], 4);
	ck_assert_uint_eq(o->nexit, 2);
	ck_assert_uint_eq(o->exits, 2);
	/* sorted by (from, to): the interruption at 0x1002 first */
	ck_assert_uint_eq(o->exit[0].from, 0x1002);
	ck_assert_uint_eq(o->exit[0].to, 0x2000);
	ck_assert_int_eq(o->exit[0].kind, RREPLAY_EXIT_INTERRUPT);
	ck_assert_uint_eq(o->exit[1].from, 0x1005);
	ck_assert_int_eq(o->exit[1].kind, RREPLAY_EXIT_EDGE);
	ck_assert_uint_eq(o->exit[1].count, 1);
	rreplay_free(rp);
	rset_free(s);
}
END_TEST

/* A run whose id a later, different run reuses (the decode cache dropped the
 * first): the point look-up is redone for the new start. */
START_TEST(run_id_reused)
{
	char msg[256];
	int err;
	struct rset *s = load(set_json, &err, msg, sizeof(msg));
	struct rreplay *rp;
	ck_assert_int_eq(rreplay_new(s, &rp), 0);
	struct block_sink k = rreplay_sink(rp);
	struct block_info c_as_0 = run_c;
	c_as_0.id = 0;
	retire(&k, &c_as_0, 1, 1); /* id 0 known as a run without point */
	retire(&k, &run_a, 3, 1);  /* id 0 again, now A: enters at 0x1002 */
	ck_assert_int_eq(rreplay_finish(rp), 0);
	ck_assert_uint_eq(rreplay_inside(rp), 2);
	rreplay_free(rp);
	rset_free(s);
}
END_TEST

/* Malformed sets: each refused with the member named. */
START_TEST(bad_sets)
{
	static const struct {
		const char *from, *to, *says;
	} rows[] = {
	    {"\"succ\": [1]", "\"succ\": [2]", "links in range"},
	    {"[0, 2, 5, 8]", "[0, 5, 2, 8]", "ascending offsets"},
	    {"\"insn\": 1", "\"insn\": 2", "a point is not an instruction"},
	    {"\"header\": 0", "\"header\": 7", "a loop's header"},
	    {"\"total\": 100", "\"totals\": 100", "no \"total\""},
	    {"\"kind\": \"cond\"", "\"kind\": \"jump\"", "kind"},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char text[2048], msg[256];
		const char *at = strstr(set_json, rows[i].from);
		ck_assert_ptr_nonnull(at);
		snprintf(text, sizeof(text), "%.*s%s%s", (int)(at - set_json), set_json, rows[i].to,
		         at + strlen(rows[i].from));
		int err;
		struct rset *s = load(text, &err, msg, sizeof(msg));
		ck_assert_msg(err == PMUSIM_ERR_FORMAT && !s, "row %zu accepted", i);
		ck_assert_msg(strstr(msg, rows[i].says), "row %zu: %s", i, msg);
	}
}
END_TEST

/* Calls not inlined (region_replay.h: the replacement leaves just before the
 * call, which runs in the original code; region_set.h). Region 0, own code
 * unless said:
 *   b0 0x3000: 0x3000 (point 0), 0x3002, 0x3005 a call, no link;
 *   b1 0x3010: a jmp (point 1), linked to b2;
 *   b2 0x3020: a call alone, no link;
 *   b3 0x3030: 0x3030, 0x3033 an indirect call that is point 2, no link;
 *   b4 0x3040: 0x3040 (point 3), 0x3042 a call, no link;
 *   b5 0x3050: 0x3050 (point 4), 0x3053 a call inlined: linked to b6;
 *   b6 0x5000 (clone 1, the callee of 0x3053): a ret, no link.
 * Region 1: b0 0x3040, the same code as region 0's b4, its point 0 on the
 * call 0x3042. Every callee not inlined is 0x4000 (two instructions). */
static const char call_json[] =
    "{\"total\": 100, \"regions\": [{\"start\": \"0x3000\", \"replacement\": {"
    "\"est_insns\": 0, \"blocks\": ["
    "{\"start\": \"0x3000\", \"clone\": 0, \"kind\": \"call\", \"off\": [0, 2, 5, 10], "
    "\"succ\": []},"
    "{\"start\": \"0x3010\", \"clone\": 0, \"kind\": \"jmp\", \"off\": [0, 5], \"succ\": [2]},"
    "{\"start\": \"0x3020\", \"clone\": 0, \"kind\": \"call\", \"off\": [0, 5], \"succ\": []},"
    "{\"start\": \"0x3030\", \"clone\": 0, \"kind\": \"call_ind\", \"off\": [0, 3, 9], "
    "\"succ\": []},"
    "{\"start\": \"0x3040\", \"clone\": 0, \"kind\": \"call\", \"off\": [0, 2, 7], \"succ\": []},"
    "{\"start\": \"0x3050\", \"clone\": 0, \"kind\": \"call\", \"off\": [0, 3, 8], \"succ\": [6]},"
    "{\"start\": \"0x5000\", \"clone\": 1, \"kind\": \"ret\", \"off\": [0, 1], \"succ\": []}],"
    "\"clones\": [{\"call\": \"0x3053\", \"ret\": \"0x3058\", \"callee\": \"0x5000\", "
    "\"parent\": 0, \"entry\": 6, \"scale\": 1}],"
    "\"points\": [{\"addr\": \"0x3000\", \"block\": 0, \"insn\": 0, \"len\": 5},"
    "{\"addr\": \"0x3010\", \"block\": 1, \"insn\": 0, \"len\": 5},"
    "{\"addr\": \"0x3033\", \"block\": 3, \"insn\": 1, \"len\": 6},"
    "{\"addr\": \"0x3040\", \"block\": 4, \"insn\": 0, \"len\": 5},"
    "{\"addr\": \"0x3050\", \"block\": 5, \"insn\": 0, \"len\": 5}],"
    "\"loops\": []}},"
    "{\"start\": \"0x3040\", \"replacement\": {\"est_insns\": 0, \"blocks\": ["
    "{\"start\": \"0x3040\", \"clone\": 0, \"kind\": \"call\", \"off\": [0, 2, 7], \"succ\": []}],"
    "\"clones\": [], \"points\": [{\"addr\": \"0x3042\", \"block\": 0, \"insn\": 1, \"len\": 5}],"
    "\"loops\": []}}]}";

static const uint16_t off_b0[] = {0, 2, 5, 10}, off_b1[] = {0, 5}, off_b3[] = {0, 3, 9},
                      off_b4[] = {0, 2, 7}, off_b5[] = {0, 3, 8}, off_one[] = {0, 1},
                      off_callee[] = {0, 1, 2};
static const struct block_info run_b0 = {
    .start = 0x3000, .end = 0x300a, .id = 10, .ninsns = 3, .kind = BK_CALL, .off = off_b0};
static const struct block_info run_b1 = {
    .start = 0x3010, .end = 0x3015, .id = 11, .ninsns = 1, .kind = BK_JMP, .off = off_b1};
static const struct block_info run_b2 = {
    .start = 0x3020, .end = 0x3025, .id = 12, .ninsns = 1, .kind = BK_CALL, .off = off_b1};
static const struct block_info run_b3 = {
    .start = 0x3030, .end = 0x3039, .id = 13, .ninsns = 2, .kind = BK_CALL_IND, .off = off_b3};
static const struct block_info run_b4 = {
    .start = 0x3040, .end = 0x3047, .id = 14, .ninsns = 2, .kind = BK_CALL, .off = off_b4};
static const struct block_info run_b5 = {
    .start = 0x3050, .end = 0x3058, .id = 15, .ninsns = 2, .kind = BK_CALL, .off = off_b5};
static const struct block_info run_clone = {
    .start = 0x5000, .end = 0x5001, .id = 16, .ninsns = 1, .kind = BK_RET, .off = off_one};
static const struct block_info run_ret_point = {
    .start = 0x3058, .end = 0x3059, .id = 17, .ninsns = 1, .kind = BK_RET, .off = off_one};
static const struct block_info run_callee = {
    .start = 0x4000, .end = 0x4002, .id = 18, .ninsns = 2, .kind = BK_RET, .off = off_callee};

/* A whole run retired by a thread. */
struct step {
	const struct block_info *run;
	uint32_t tid;
};

/* call_json replayed over steps, finished. */
static struct rreplay *replay_calls(struct rset **s, const struct step *st, size_t n)
{
	char msg[256];
	int err;
	struct rreplay *rp;
	*s = load(call_json, &err, msg, sizeof(msg));
	ck_assert_msg(err == 0, "%s", msg);
	ck_assert_int_eq(rreplay_new(*s, &rp), 0);
	struct block_sink k = rreplay_sink(rp);
	for (size_t i = 0; i < n; i++)
		retire(&k, st[i].run, st[i].run->ninsns, st[i].tid);
	ck_assert_int_eq(rreplay_finish(rp), 0);
	return rp;
}

static void check_exit(const struct rreplay_region *o, size_t k, uint64_t from, uint64_t to, int br,
                       uint64_t count)
{
	ck_assert_uint_lt(k, o->nexit);
	ck_assert_uint_eq(o->exit[k].from, from);
	ck_assert_uint_eq(o->exit[k].to, to);
	ck_assert_int_eq(o->exit[k].kind, RREPLAY_EXIT_EDGE);
	ck_assert_int_eq(o->exit[k].br, br);
	ck_assert_uint_eq(o->exit[k].count, count);
}

/* b0 twice by thread 1, each time entered at point 0 and followed by the
 * callee, thread 2 running 0x2000 between b0 and the callee the first time:
 * 0x3000 and 0x3002 inside, the call 0x3005 not, the callee not; the exit
 * edge (0x3005, 0x4000) twice (thread 2's 0x2000 is not thread 1's next
 * instruction). 2 x (3 + 2) + 1 = 11 instructions, 2 x 2 = 4 inside. */
START_TEST(call_after_point)
{
	const struct step st[] = {
	    {&run_b0, 1}, {&run_c, 2}, {&run_callee, 1}, {&run_b0, 1}, {&run_callee, 1},
	};
	struct rset *s;
	struct rreplay *rp = replay_calls(&s, st, sizeof(st) / sizeof(st[0]));
	const struct rreplay_region *o = rreplay_region(rp, 0);
	ck_assert_uint_eq(rreplay_total(rp), 11);
	ck_assert_uint_eq(rreplay_inside(rp), 4);
	ck_assert_uint_eq(o->insns, 4);
	ck_assert_uint_eq(o->entries, 2);
	ck_assert_uint_eq(o->point_entries[0], 2);
	ck_assert_uint_eq(o->block_execs[0], 2);
	ck_assert_uint_eq(o->nexit, 1);
	ck_assert_uint_eq(o->exits, 2);
	check_exit(o, 0, 0x3005, 0x4000, BK_CALL, 2);
	ck_assert_uint_eq(rreplay_region(rp, 1)->insns, 0);
	rreplay_free(rp);
	rset_free(s);
}
END_TEST

/* b1 (entered at point 1), b2 by b1's link, the callee: b2 is entered
 * inside (one execution) but its only instruction, the call, runs outside;
 * the exit edge (0x3020, 0x4000). 1 + 1 + 2 = 4 instructions, 1 inside. */
START_TEST(call_alone_by_link)
{
	const struct step st[] = {{&run_b1, 1}, {&run_b2, 1}, {&run_callee, 1}};
	struct rset *s;
	struct rreplay *rp = replay_calls(&s, st, sizeof(st) / sizeof(st[0]));
	const struct rreplay_region *o = rreplay_region(rp, 0);
	ck_assert_uint_eq(rreplay_total(rp), 4);
	ck_assert_uint_eq(rreplay_inside(rp), 1);
	ck_assert_uint_eq(o->insns, 1);
	ck_assert_uint_eq(o->entries, 1);
	ck_assert_uint_eq(o->point_entries[1], 1);
	ck_assert_uint_eq(o->block_execs[1], 1);
	ck_assert_uint_eq(o->block_execs[2], 1);
	ck_assert_uint_eq(o->nexit, 1);
	ck_assert_uint_eq(o->exits, 1);
	check_exit(o, 0, 0x3020, 0x4000, BK_CALL, 1);
	rreplay_free(rp);
	rset_free(s);
}
END_TEST

/* b3, whose indirect call 0x3033 is point 2, then the callee: 0x3030 runs
 * outside, the call enters and is done inside (the replacement pushes the
 * return address and jumps), the exit edge (0x3033, 0x4000). 2 + 2 = 4
 * instructions, 1 inside. */
START_TEST(call_is_point)
{
	const struct step st[] = {{&run_b3, 1}, {&run_callee, 1}};
	struct rset *s;
	struct rreplay *rp = replay_calls(&s, st, sizeof(st) / sizeof(st[0]));
	const struct rreplay_region *o = rreplay_region(rp, 0);
	ck_assert_uint_eq(rreplay_total(rp), 4);
	ck_assert_uint_eq(rreplay_inside(rp), 1);
	ck_assert_uint_eq(o->insns, 1);
	ck_assert_uint_eq(o->entries, 1);
	ck_assert_uint_eq(o->point_entries[2], 1);
	ck_assert_uint_eq(o->block_execs[3], 1);
	ck_assert_uint_eq(o->nexit, 1);
	ck_assert_uint_eq(o->exits, 1);
	check_exit(o, 0, 0x3033, 0x4000, BK_CALL_IND, 1);
	rreplay_free(rp);
	rset_free(s);
}
END_TEST

/* b4 (entered at region 0's point 3), then the callee: region 0 leaves before
 * its call 0x3042, which is region 1's point 0: the call enters region 1 and
 * is done inside there. Each region exits by (0x3042, 0x4000) once. 2 + 2 =
 * 4 instructions, 2 inside: 0x3040 in region 0, 0x3042 in region 1. */
START_TEST(call_is_other_point)
{
	const struct step st[] = {{&run_b4, 1}, {&run_callee, 1}};
	struct rset *s;
	struct rreplay *rp = replay_calls(&s, st, sizeof(st) / sizeof(st[0]));
	const struct rreplay_region *a = rreplay_region(rp, 0), *b = rreplay_region(rp, 1);
	ck_assert_uint_eq(rreplay_total(rp), 4);
	ck_assert_uint_eq(rreplay_inside(rp), 2);
	ck_assert_uint_eq(a->insns, 1);
	ck_assert_uint_eq(a->entries, 1);
	ck_assert_uint_eq(a->point_entries[3], 1);
	ck_assert_uint_eq(a->block_execs[4], 1);
	ck_assert_uint_eq(a->nexit, 1);
	ck_assert_uint_eq(a->exits, 1);
	check_exit(a, 0, 0x3042, 0x4000, BK_CALL, 1);
	ck_assert_uint_eq(b->insns, 1);
	ck_assert_uint_eq(b->entries, 1);
	ck_assert_uint_eq(b->point_entries[0], 1);
	ck_assert_uint_eq(b->block_execs[0], 1);
	ck_assert_uint_eq(b->nexit, 1);
	ck_assert_uint_eq(b->exits, 1);
	check_exit(b, 0, 0x3042, 0x4000, BK_CALL, 1);
	rreplay_free(rp);
	rset_free(s);
}
END_TEST

/* b5 (entered at point 4), its inlined call's clone b6 (0x5000), then the
 * return point 0x3058: the call 0x3053 links to the clone and stays inside,
 * as does the clone's ret; the exit is the ret's edge (0x5000, 0x3058), not
 * the call's. 2 + 1 + 1 = 4 instructions, 3 inside. */
START_TEST(call_inlined_inside)
{
	const struct step st[] = {{&run_b5, 1}, {&run_clone, 1}, {&run_ret_point, 1}};
	struct rset *s;
	struct rreplay *rp = replay_calls(&s, st, sizeof(st) / sizeof(st[0]));
	const struct rreplay_region *o = rreplay_region(rp, 0);
	ck_assert_uint_eq(rreplay_total(rp), 4);
	ck_assert_uint_eq(rreplay_inside(rp), 3);
	ck_assert_uint_eq(o->insns, 3);
	ck_assert_uint_eq(o->entries, 1);
	ck_assert_uint_eq(o->point_entries[4], 1);
	ck_assert_uint_eq(o->block_execs[5], 1);
	ck_assert_uint_eq(o->block_execs[6], 1);
	ck_assert_uint_eq(o->nexit, 1);
	ck_assert_uint_eq(o->exits, 1);
	check_exit(o, 0, 0x5000, 0x3058, BK_RET, 1);
	rreplay_free(rp);
	rset_free(s);
}
END_TEST

/* A call that is a patch point of its own region, reached inside through a
 * link: the replacement does it itself (dbr_code.h), so control stays inside
 * until the callee; no second entry through the point. Region: b0 0x3010 a jmp
 * (point 0) linked to b1 0x3020, a call alone that is point 1. 1 + 1 + 2 = 4
 * instructions, 2 inside; one entry; b1 run once; the exit (0x3020, 0x4000). */
static const char own_point_json[] =
    "{\"total\": 100, \"regions\": [{\"start\": \"0x3010\", \"replacement\": {"
    "\"est_insns\": 0, \"blocks\": ["
    "{\"start\": \"0x3010\", \"clone\": 0, \"kind\": \"jmp\", \"off\": [0, 5], \"succ\": [1]},"
    "{\"start\": \"0x3020\", \"clone\": 0, \"kind\": \"call\", \"off\": [0, 5], \"succ\": []}],"
    "\"clones\": [],"
    "\"points\": [{\"addr\": \"0x3010\", \"block\": 0, \"insn\": 0, \"len\": 5},"
    "{\"addr\": \"0x3020\", \"block\": 1, \"insn\": 0, \"len\": 5}],"
    "\"loops\": []}}]}";

START_TEST(call_is_own_point)
{
	char msg[256];
	int err;
	struct rreplay *rp;
	struct rset *s = load(own_point_json, &err, msg, sizeof(msg));
	ck_assert_msg(err == 0, "%s", msg);
	ck_assert_int_eq(rreplay_new(s, &rp), 0);
	struct block_sink k = rreplay_sink(rp);
	retire(&k, &run_b1, 1, 1);
	retire(&k, &run_b2, 1, 1);
	retire(&k, &run_callee, 2, 1);
	ck_assert_int_eq(rreplay_finish(rp), 0);
	const struct rreplay_region *o = rreplay_region(rp, 0);
	ck_assert_uint_eq(rreplay_total(rp), 4);
	ck_assert_uint_eq(rreplay_inside(rp), 2);
	ck_assert_uint_eq(o->insns, 2);
	ck_assert_uint_eq(o->entries, 1);
	ck_assert_uint_eq(o->point_entries[0], 1);
	ck_assert_uint_eq(o->point_entries[1], 0);
	ck_assert_uint_eq(o->block_execs[0], 1);
	ck_assert_uint_eq(o->block_execs[1], 1);
	ck_assert_uint_eq(o->nexit, 1);
	ck_assert_uint_eq(o->exits, 1);
	check_exit(o, 0, 0x3020, 0x4000, BK_CALL, 1);
	rreplay_free(rp);
	rset_free(s);
}
END_TEST

/* The estimate (region_set.h) of a hand-made selection with a call not
 * inlined, through rset_build: one region of three blocks, all kept and
 * counted, no loop, no inlining.
 *   g0 0x1000 (0x1000, jcc 0x1002), count 10: falls to g1 (4), jumps to g2 (6);
 *   g1 0x1004 (0x1004, 0x1007, call 0x100a), count 4: call-return to g2 (4);
 *   g2 0x100f (ret), count 10.
 * A point on g0's first instruction: p(g0) = 1; p(g1) = 4 x 1 / 4 = 1 (its
 * only in-edge from g0); p(g2) = 6 x 1 / (6 + 4) = 0.6 (the call-return edge
 * of a call not inlined is not a link). g1 has no link (no inlined call).
 * est_insns = g0 1 x 10 x 2 + g1 1 x 4 x (3 - 1, the call outside) + g2
 * 0.6 x 10 x 1 = 20 + 8 + 6 = 34. With a second point on g1's call (insn
 * 2): p(g1) still 1 for its first two instructions, and the call is done
 * inside on each of its 4 executions: g1 4 x 2 + 4 x 1 = 12, 38 in all. */
static uint16_t est_off0[] = {0, 2, 4}, est_off1[] = {0, 3, 6, 11}, est_off2[] = {0, 1};

START_TEST(estimate_call_outside)
{
	static const struct {
		int line;
		size_t npoint;
		double est;
	} rows[] = {
	    {__LINE__, 1, 34},
	    {__LINE__, 2, 38},
	};
	struct rcfg_block gb[3] = {
	    {.start = 0x1000,
	     .end = 0x1004,
	     .target = 0x100f,
	     .off = est_off0,
	     .ninsns = 2,
	     .kind = BK_COND,
	     .first_edge = 0,
	     .nedge = 2},
	    {.start = 0x1004,
	     .end = 0x100f,
	     .target = 0x4000,
	     .callee = 0x4000,
	     .off = est_off1,
	     .ninsns = 3,
	     .kind = BK_CALL,
	     .first_edge = 2,
	     .nedge = 1},
	    {.start = 0x100f,
	     .end = 0x1010,
	     .off = est_off2,
	     .ninsns = 1,
	     .kind = BK_RET,
	     .first_edge = 3,
	     .nedge = 0},
	};
	struct rcfg_edge ge[3] = {
	    {.from = 0, .to = 1, .to_addr = 0x1004, .kind = RCFG_FALL},
	    {.from = 0, .to = 2, .to_addr = 0x100f, .kind = RCFG_TAKEN},
	    {.from = 1, .to = 2, .to_addr = 0x100f, .kind = RCFG_CALL_RETURN},
	};
	struct rcfg g = {.block = gb, .nblock = 3, .edge = ge, .nedge = 3};
	struct rflow_edge fe[3] = {{4, RFLOW_DECIDED}, {6, RFLOW_DECIDED}, {4, RFLOW_DECIDED}};
	struct rflow f = {.edge = fe, .nedge = 3};
	struct rprune_block pb[3] = {
	    {.kept = 1, .counted = 1, .count = 10},
	    {.kept = 1, .counted = 1, .count = 4},
	    {.kept = 1, .counted = 1, .count = 10},
	};
	struct rprune pr = {.block = pb, .nblock = 3};
	size_t blocks[3] = {0, 1, 2};
	struct rgraph_region reg = {.block = blocks, .nblock = 3};
	struct rgraph rg = {.region = &reg, .nregion = 1};
	struct rpatch_point pts[2] = {
	    {.block = 0, .insn = 0, .addr = 0x1000, .len = 5},
	    {.block = 1, .insn = 2, .addr = 0x100a, .len = 5},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct rpatch pt = {.point = pts, .npoint = rows[i].npoint};
		struct rpatch *patch[1] = {&pt};
		size_t order[1] = {0};
		struct rset *s = NULL;
		char msg[256] = "";
		int err =
		    rset_build(&g, &rg, &f, &pr, patch, NULL, order, 1, 100, &s, msg, sizeof(msg));
		ck_assert_msg(err == 0, "line %d: %s", rows[i].line, msg);
		ck_assert_uint_eq(s->nregion, 1);
		const struct rset_region *r = &s->region[0];
		ck_assert_uint_eq(r->nblock, 3);
		ck_assert_int_eq(r->block[1].kind, BK_CALL);
		ck_assert_uint_eq(r->block[1].nsucc, 0);
		ck_assert_msg(fabs(r->est_insns - rows[i].est) < 1e-9, "line %d: est_insns %g",
		              rows[i].line, r->est_insns);
		ck_assert_msg(fabs(s->est_share - rows[i].est / 100) < 1e-12,
		              "line %d: est_share %g", rows[i].line, s->est_share);
		rset_free(s);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_replay");
	TCase *tc = tcase_create("replay");
	tcase_add_test(tc, read_set);
	tcase_add_test(tc, replay_by_hand);
	tcase_add_test(tc, run_id_reused);
	tcase_add_test(tc, bad_sets);
	tcase_add_test(tc, call_after_point);
	tcase_add_test(tc, call_alone_by_link);
	tcase_add_test(tc, call_is_point);
	tcase_add_test(tc, call_is_other_point);
	tcase_add_test(tc, call_inlined_inside);
	tcase_add_test(tc, call_is_own_point);
	tcase_add_test(tc, estimate_call_outside);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
