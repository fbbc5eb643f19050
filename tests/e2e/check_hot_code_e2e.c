/* Hot code (profiler/hot_code.h) of a real run of build/workloads/loops, against
 * figures the truth gets another way: `run --truth-insns` times every block
 * instruction by instruction and lists each instruction's retirements ("insns"),
 * which hot_code_from_truth does not read (it multiplies blocks by their
 * executions). So: total is the truth's "instructions" (e2e_util's own reader),
 * ip[] is exactly the instructions "insns" lists as retired, each with its
 * retirements; and the op samples of `record -e ibs_op/cnt_ctl=1/` sum to the
 * instructions up to the last sample (fewer than one interval short), fall on
 * instructions that retired, and their conditional branches are the truth's.
 * Environment: PMUSIM, WORKLOADS as for check_e2e. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/hot_code.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

#define PERIOD 256

struct insn {
	uint64_t addr, retired;
};

/* The "insns" entries with retirements, in file order (sorted by address). */
static struct insn *insns_of(const char *json, size_t *n)
{
	char *text = slurp(json, NULL), *p = text ? strstr(text, "\n  \"insns\": [") : NULL;
	struct insn *v = NULL;
	size_t cap = 0;
	*n = 0;
	for (p = p ? strstr(p, "\n    {\"addr\": \"") : NULL; p;
	     p = strstr(p + 1, "\n    {\"addr\": \"")) {
		unsigned long long a, r;
		const char *q = strstr(p, "\"retired\": ");
		if (!q || sscanf(p, "\n    {\"addr\": \"%llx\"", &a) != 1 ||
		    sscanf(q, "\"retired\": %llu", &r) != 1)
			break;
		if (!r)
			continue;
		if (*n == cap) {
			cap = cap ? 2 * cap : 1024;
			v = realloc(v, cap * sizeof(*v));
			ck_assert_ptr_nonnull(v);
		}
		v[(*n)++] = (struct insn){a, r};
	}
	free(text);
	return v;
}

START_TEST(loops_truth_and_ops)
{
	const char *tj = tmp_path("t.json"), *od = tmp_path("o.data");
	char *ra[] = {
	    (char *)pmusim(),    "run", "-q", "--truth-insns", "--truth-json", (char *)tj, "--",
	    (char *)wl("loops"), NULL};
	ck_assert_int_eq(run_cmd(ra, NULL, NULL, NULL), 0);
	long long ins = truth_instructions(tj);
	size_t ni;
	struct insn *in = insns_of(tj, &ni);
	ck_assert_msg(ins > 0 && ni > 0, "truth: %lld instructions, %zu insns", ins, ni);
	struct hot_code *h, *o;
	char msg[512] = "";
	ck_assert_msg(hot_code_from_truth(tj, &h, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_msg(h->total == (double)ins, "total %.0f, truth %lld", h->total, ins);
	ck_assert_msg(h->nip == ni, "%zu ips, %zu instructions retired", h->nip, ni);
	size_t bad = 0;
	for (size_t i = 0; i < ni; i++)
		bad += h->ip[i].ip != in[i].addr || h->ip[i].weight != (double)in[i].retired;
	ck_assert_msg(bad == 0, "%zu of %zu instructions differ", bad, ni);
	fprintf(stderr,
	        "loops truth: %zu instructions, total %.0f, %zu conditional branches, %zu indirect "
	        "pairs\n",
	        h->nip, h->total, h->nbranch, h->ntarget);

	char *rec[] = {(char *)pmusim(),
	               "record",
	               "-q",
	               "-e",
	               "ibs_op/cnt_ctl=1/",
	               "-c",
	               "256",
	               "-o",
	               (char *)od,
	               "--",
	               (char *)wl("loops"),
	               NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, NULL), 0);
	ck_assert_msg(hot_code_from_ops(od, 0, &o, msg, sizeof(msg)) == 0, "%s", msg);
	/* each period is an interval's instructions: the sum reaches the last sample */
	ck_assert_msg(o->total <= (double)ins && o->total > (double)(ins - PERIOD),
	              "ops %.0f, truth %lld", o->total, ins);
	size_t off = 0, foreign = 0;
	for (size_t i = 0; i < o->nip; i++)
		off += hot_code_weight(h, o->ip[i].ip) == 0;
	for (size_t i = 0, k = 0; i < o->nbranch; i++) {
		while (k < h->nbranch && h->branch[k].ip < o->branch[i].ip)
			k++;
		foreign += k == h->nbranch || h->branch[k].ip != o->branch[i].ip;
	}
	ck_assert_msg(
	    off == 0 && foreign == 0 && o->unresolved == 0,
	    "%zu sampled ips never retired, %zu sampled conditionals not the truth's, %" PRIu64
	    " unresolved",
	    off, foreign, o->unresolved);
	fprintf(stderr,
	        "loops ops: %" PRIu64
	        " samples, %zu ips, total %.0f (truth %lld), %zu conditional branches\n",
	        o->samples, o->nip, o->total, ins, o->nbranch);
	hot_code_free(o);
	hot_code_free(h);
	free(in);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("hot_code_e2e");
	TCase *tc = tcase_create("loops");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, loops_truth_and_ops);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
