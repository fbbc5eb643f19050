/* report --stacks --format speedscope, opened by speedscope's own importer:
 * the speedscope app of its npm package (1.25.0) in Debian's chromium, the
 * file given to the app's Browse button (tests/e2e/speedscope_import.mjs),
 * must show the recording's threads as profiles; a truncated file must not
 * import (the harness can fail). The file's own shape: one evented profile per
 * thread, its open and close events balanced and in time order. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

static char modules[4096];


/* node speedscope_import.mjs MODULES FILE: its exit status, its output in *out */
static int import(const char *file, char **out)
{
	const char *log = tmp_path_kept("import.out");
	char *argv[] = {"node", "tests/e2e/speedscope_import.mjs", modules, (char *)file, NULL};
	int st = run_cmd(argv, NULL, log, log);
	*out = slurp(log, NULL);
	return st;
}

START_TEST(speedscope_imports_every_thread)
{
	const char *data = tmp_path_kept("cs.data"), *ss = tmp_path_kept("cs.speedscope.json");
	char *rec[] = {(char *)pmusim(), "record", "-q", "--tstack", "--tstack-period", "20us", "--tstack-threads",
		       "all", "-o", (char *)data, "--", (char *)wl("callstacks"), NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, NULL, NULL), 0);
	char *rep[] = {(char *)pmusim(), "report", "--stacks", "-i", (char *)data, "--format", "speedscope", "-o",
		       (char *)ss, NULL};
	ck_assert_int_eq(run_cmd(rep, NULL, NULL, NULL), 0);
	/* the shape: a profile per thread, events balanced and in time order */
	struct jv *d = NULL;
	char msg[200];
	ck_assert_msg(json_parse_file(ss, &d, msg, sizeof(msg)) == 0, "%s", msg);
	const struct jv *profiles = jv_get(d, "profiles");
	ck_assert_uint_eq(profiles->n, 4);
	for (size_t p = 0; p < profiles->n; p++) {
		const struct jv *ev = jv_get(&profiles->item[p], "events");
		ck_assert_str_eq(jv_get(&profiles->item[p], "type")->text, "evented");
		long depth = 0;
		double last = 0, at;
		for (size_t i = 0; i < ev->n; i++) {
			ck_assert(jv_num(jv_get(&ev->item[i], "at"), &at) == 0 && at >= last);
			last = at;
			depth += jv_get(&ev->item[i], "type")->text[0] == 'O' ? 1 : -1;
			ck_assert_int_ge(depth, 0);
		}
		ck_assert_int_eq(depth, 0);
		ck_assert_uint_gt(ev->n, 10);
	}
	jv_free(d);
	char *out;
	int st = import(ss, &out);
	ck_assert_msg(st == 0 && out && strstr(out, "title: cs.data - speedscope") && strstr(out, "(1/4)"),
		      "speedscope: exit %d: %s", st, out ? out : "");
	printf("check_speedscope: %s", out);
	free(out);
	/* the harness can fail: half a file does not import */
	size_t len;
	char *whole = slurp(ss, &len);
	const char *half = tmp_path_kept("half.json");
	FILE *f = fopen(half, "w");
	ck_assert_ptr_nonnull(f);
	fwrite(whole, 1, len / 2, f);
	fclose(f);
	free(whole);
	st = import(half, &out);
	ck_assert_msg(st == 1 && out && strstr(out, "Unrecognized format"), "half a file: exit %d: %s", st, out ? out : "");
	free(out);
}
END_TEST

int main(void)
{
	/* before e2e_init replaces the environment: where make put the npm packages */
	const char *m = getenv("SPEEDSCOPE_MODULES");
	if (!realpath(m && *m ? m : "build/npm/node_modules", modules)) {
		fprintf(stderr, "check_speedscope: no npm packages (make build/npm/...: see the Makefile's SPEEDSCOPE)\n");
		return 1;
	}
	e2e_init();
	Suite *s = suite_create("speedscope");
	TCase *tc = tcase_create("speedscope");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, speedscope_imports_every_thread);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
