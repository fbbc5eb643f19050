/* What the end-to-end suites of `report --regions` share (check_regions,
 * check_regions_dot): recording the op samples and the truth of one run, running
 * pmusim, and checking a refusal. Failures are libcheck assertions. */
#ifndef PMUSIM_TESTS_E2E_REGIONS_RUN_H
#define PMUSIM_TESTS_E2E_REGIONS_RUN_H

/* A path in the test's temporary directory that stays valid longer than tmp_path's:
 * the last REGIONS_PATHS results (tmp_path's last 8). */
#define REGIONS_PATHS 32
char *regions_path(const char *name);

/* Records op samples (`record -e ibs_op/cnt_ctl=1/ -c 256 --pmu-seed seed`) and the
 * truth (--truth-json) of one run of the program at prog with arg (NULL: none). */
void regions_record(const char *prog, const char *arg, const char *seed, const char *data,
                    const char *truth);

/* Runs pmusim with args (NULL-terminated, at most 12), its PATH set to path unless
 * path is NULL, stdout into out and stderr into err (NULL: /dev/null); the exit status. */
int regions_pm(const char *path, char *const args[], const char *out, const char *err);

/* pmusim with args (PATH as for regions_pm) refuses: one line on stderr, nothing on
 * stdout, exit 2. The line is printed after why, for the log. */
void regions_refused(const char *path, char *const args[], const char *why);

#endif
