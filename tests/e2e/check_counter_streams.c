/* Each sampled event draws its --delta from a stream of its own (pmu.h): a
 * one-run recording of cycles and taken branches gives, event by event,
 * exactly the samples (IP, time, period, LBR) of the two one-event recordings
 * with the same seed, when the PMI is precise (--skid 0) and costs nothing
 * (--refill 0), with the counter reloaded at the overflow or at the
 * interrupt. With a refill the other event's interrupts add cycles, and the
 * samples move: the comparison can fail. The samples are read by perf script
 * (--ns: the time to the nanosecond), not by pmusim. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

#define CYC "cycles/period=1009/"
#define BR "br_inst_retired.near_taken/period=997/"

/* perf script's lines of the samples of event ev (its name and ':' as perf
 * prints it), each with runs of blanks made one (the columns are padded to
 * the file's longest event name), joined; *n: how many. */
static char *lines_of(const char *text, const char *ev, size_t *n)
{
	char key[128];
	snprintf(key, sizeof(key), " %s:", ev);
	size_t len = strlen(text);
	char *out = malloc(len + 1), *o = out;
	ck_assert_ptr_nonnull(out);
	*n = 0;
	for (const char *l = text; *l;) {
		const char *e = strchr(l, '\n');
		e = e ? e : l + strlen(l);
		if (memmem(l, (size_t)(e - l), key, strlen(key))) {
			for (const char *c = l; c < e; c++)
				if (c[0] != ' ' || (c + 1 < e && c[1] != ' '))
					*o++ = *c;
			*o++ = '\n';
			(*n)++;
		}
		l = *e ? e + 1 : e;
	}
	*o = 0;
	return out;
}

/* Records prog with the events evs and the row's reload and refill, and
 * returns perf script's text. */
static char *record(const char *prog, const char *evs, const char *reload, const char *refill)
{
	const char *data = tmp_path("streams.data");
	char *rec[] = {(char *)pmusim(), "record", "-q", "-e", (char *)evs, "--delta", "255", "-b", "--skid", "0",
	               "--refill", (char *)refill, "--reload", (char *)reload, "--seed", "7", "-o", (char *)data, "--",
	               (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, tmp_path("streams.err")), 0);
	char *script[] = {"perf", "script", "-i", (char *)data, "--ns", "-F", "event,ip,time,period,brstack", NULL};
	int st;
	char *text = run_capture(script, &st);
	ck_assert_msg(st == 0 && text, "perf script: exit %d", st);
	return text;
}

static const struct {
	int line;
	const char *wl, *reload, *refill;
	int same;
} rows[] = {
	{__LINE__, "loops", "overflow", "0", 1},
	{__LINE__, "loops", "interrupt", "0", 1},
	{__LINE__, "asm_resonance", "overflow", "0", 1},
	{__LINE__, "asm_resonance", "interrupt", "0", 1},
	{__LINE__, "loops", "overflow", "20", 0},
	{__LINE__, "asm_resonance", "interrupt", "20", 0},
};

START_TEST(one_run_samples_each_event_as_alone)
{
	const char *prog = wl(rows[_i].wl);
	char *both = record(prog, CYC "," BR, rows[_i].reload, rows[_i].refill);
	char *cyc = record(prog, CYC, rows[_i].reload, rows[_i].refill);
	char *br = record(prog, BR, rows[_i].reload, rows[_i].refill);
	size_t n1, n2, n3, n4;
	char *c1 = lines_of(both, CYC, &n1), *c2 = lines_of(cyc, CYC, &n2);
	char *b1 = lines_of(both, BR, &n3), *b2 = lines_of(br, BR, &n4);
	int same_c = strcmp(c1, c2) == 0, same_b = strcmp(b1, b2) == 0;
	printf("check_counter_streams: row at line %d (%s, --reload %s, --refill %s): cycles %zu and %zu samples "
	       "(%s), taken branches %zu and %zu (%s)\n", rows[_i].line, rows[_i].wl, rows[_i].reload,
	       rows[_i].refill, n1, n2, same_c ? "the same" : "differ", n3, n4, same_b ? "the same" : "differ");
	ck_assert_uint_ge(n2, 500);
	ck_assert_uint_ge(n4, 500);
	if (rows[_i].same) {
		ck_assert_msg(same_c && same_b, "row at line %d: the one-run samples differ from the one-event runs",
			      rows[_i].line);
	} else {
		ck_assert_msg(!same_c && !same_b, "row at line %d: the refill moved nothing", rows[_i].line);
	}
	free(both), free(cyc), free(br), free(c1), free(c2), free(b1), free(b2);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("counter_streams");
	TCase *tc = tcase_create("counter_streams");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, one_run_samples_each_event_as_alone, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
