/* The weighted Jaccard index of two instruction selections
 * (profiler/region_compare.h) on exact weights made here: each row's
 * figures are sums worked out by hand in its comment. */
#include <check.h>
#include <stdint.h>

#include "common/err.h"
#include "profiler/region_compare.h"
#include "tests/unit/run_suite.h"

/* Six instructions executed: 0x10 x100, 0x14 x100, 0x18 x50, 0x20 x10,
 * 0x28 x30, 0x30 x10; total 300. 0x40 never ran. */
static struct hot_ip ips[] = {{0x10, 100}, {0x14, 100}, {0x18, 50},
                              {0x20, 10},  {0x28, 30},  {0x30, 10}};
static const struct hot_code exact = {.ip = ips, .nip = 6, .total = 300};

#define MAXN 8
static const struct {
	int line;
	uint64_t a[MAXN];
	size_t na;
	uint64_t b[MAXN];
	size_t nb;
	double both, either, in_a, in_b, jaccard;
} rows[] = {
    /* the same: 250 of 250 */
    {__LINE__, {0x10, 0x14, 0x18}, 3, {0x10, 0x14, 0x18}, 3, 250, 250, 250, 250, 1.0},
    /* b adds a cold-never instruction (0x40): still equal */
    {__LINE__, {0x10, 0x14}, 2, {0x10, 0x14, 0x40}, 3, 200, 200, 200, 200, 1.0},
    /* b misses 0x18 (50) and adds 0x20 (10): both 200, either 260 */
    {__LINE__, {0x10, 0x14, 0x18}, 3, {0x10, 0x14, 0x20}, 3, 200, 260, 250, 210, 200.0 / 260},
    /* disjoint: 0 of 110 + 80 = 190 */
    {__LINE__, {0x10, 0x30}, 2, {0x18, 0x28}, 2, 0, 190, 110, 80, 0.0},
    /* one empty: 0 of 100 */
    {__LINE__, {0x14}, 1, {0}, 0, 0, 100, 100, 0, 0.0},
    /* both empty: nothing to differ in */
    {__LINE__, {0}, 0, {0}, 0, 0, 0, 0, 0, 1.0},
    /* interleaved: a = 0x10 0x18 0x28, b = 0x14 0x18 0x30 0x40: both 50,
     * either 100+100+50+30+10 = 290 */
    {__LINE__, {0x10, 0x18, 0x28}, 3, {0x14, 0x18, 0x30, 0x40}, 4, 50, 290, 180, 160, 50.0 / 290},
};

START_TEST(overlaps_by_hand)
{
	struct region_cover a = {rows[_i].a, rows[_i].na}, b = {rows[_i].b, rows[_i].nb};
	struct region_overlap o;
	ck_assert_int_eq(region_overlap_of(&a, &b, &exact, &o), 0);
	ck_assert_msg(o.both == rows[_i].both && o.either == rows[_i].either &&
	                  o.in_a == rows[_i].in_a && o.in_b == rows[_i].in_b,
	              "row at line %d: both %g either %g a %g b %g", rows[_i].line, o.both,
	              o.either, o.in_a, o.in_b);
	ck_assert_double_eq_tol(o.jaccard, rows[_i].jaccard, 1e-12);
	ck_assert_double_eq_tol(o.share_a, rows[_i].in_a / 300, 1e-12);
	ck_assert_double_eq_tol(o.share_b, rows[_i].in_b / 300, 1e-12);
	/* symmetric in a and b */
	struct region_overlap r;
	ck_assert_int_eq(region_overlap_of(&b, &a, &exact, &r), 0);
	ck_assert(r.both == o.both && r.either == o.either && r.in_a == o.in_b);
}
END_TEST

START_TEST(unsorted_covers_are_refused)
{
	static const uint64_t down[] = {0x14, 0x10}, twice[] = {0x10, 0x10}, ok[] = {0x10};
	struct region_cover d = {down, 2}, t = {twice, 2}, k = {ok, 1};
	struct region_overlap o;
	ck_assert_int_eq(region_overlap_of(&d, &k, &exact, &o), PMUSIM_ERR_ARG);
	ck_assert_int_eq(region_overlap_of(&k, &t, &exact, &o), PMUSIM_ERR_ARG);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("region_compare");
	TCase *tc = tcase_create("core");
	tcase_add_loop_test(tc, overlaps_by_hand, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, unsorted_covers_are_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
