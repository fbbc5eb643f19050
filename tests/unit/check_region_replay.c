/* Unit tests of profiler/region_replay (the exact replay of a block stream
 * against a region set) and of region_set's JSON reading: a hand-made set read
 * from JSON text, hand-made code runs and retired blocks, every figure worked
 * out by hand from region_replay.h's rules in the comments. */
#include <check.h>
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

int main(void)
{
	Suite *s = suite_create("region_replay");
	TCase *tc = tcase_create("replay");
	tcase_add_test(tc, read_set);
	tcase_add_test(tc, replay_by_hand);
	tcase_add_test(tc, run_id_reused);
	tcase_add_test(tc, bad_sets);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
