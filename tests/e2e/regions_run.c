/* Recording and running pmusim for the region suites (regions_run.h). */
#include "tests/e2e/regions_run.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"

char *regions_path(const char *name)
{
	/* a ring, not malloc: nothing for the leak checker of a sanitized test to report */
	static char ring[REGIONS_PATHS][600];
	static unsigned slot;
	char *p = ring[slot++ % REGIONS_PATHS];
	int n = snprintf(p, sizeof(ring[0]), "%s", tmp_path(name));
	ck_assert_msg(n >= 0 && (size_t)n < sizeof(ring[0]), "path too long: %s", name);
	return p;
}

void regions_record(const char *prog, const char *arg, const char *seed, const char *data,
                    const char *truth)
{
	char *argv[] = {(char *)pmusim(),
	                "record",
	                "-q",
	                "-e",
	                "ibs_op/cnt_ctl=1/",
	                "-c",
	                "256",
	                "--pmu-seed",
	                (char *)seed,
	                "--truth-json",
	                (char *)truth,
	                "-o",
	                (char *)data,
	                "--",
	                (char *)prog,
	                (char *)arg,
	                NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, NULL, NULL), 0);
}

int regions_pm(const char *path, char *const args[], const char *out, const char *err)
{
	char *argv[16], env[4200];
	size_t n = 0;
	if (path) { /* env(1) sets it: the test's own environment stays as e2e_init made it */
		snprintf(env, sizeof(env), "PATH=%s", path);
		argv[n++] = "env";
		argv[n++] = env;
	}
	argv[n++] = (char *)pmusim();
	for (size_t i = 0; args[i]; i++) {
		ck_assert_msg(n < 15, "too many arguments");
		argv[n++] = args[i];
	}
	argv[n] = NULL;
	return run_cmd(argv, NULL, out, err);
}

void regions_refused(const char *path, char *const args[], const char *why)
{
	const char *o = tmp_path("bad.out"), *e = tmp_path("bad.err");
	int st = regions_pm(path, args, o, e);
	size_t lo;
	char *out = slurp(o, &lo), *err = slurp(e, NULL);
	size_t lines = 0;
	for (const char *p = err; p && *p; p++)
		lines += *p == '\n';
	ck_assert_msg(st == 2 && lo == 0 && lines == 1, "%s: exit %d, %zu bytes out, stderr:\n%s",
	              why, st, lo, err ? err : "");
	fprintf(stderr, "%s: %s", why, err);
	free(out);
	free(err);
}
