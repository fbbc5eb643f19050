/* Helpers for end-to-end tests: running commands with redirected streams,
 * reading files, parsing callgrind output and pmusim's truth JSON. */
#ifndef PMUSIM_TESTS_E2E_UTIL_H
#define PMUSIM_TESTS_E2E_UTIL_H

#include <stddef.h>
#include <stdint.h>

/* First thing in every end-to-end test's main: reads the configuration ($PMUSIM,
 * $WORKLOADS, $PMUSIM_SHARED), makes the test process's temporary directory (removed
 * when that process exits, whatever its tests left there), and replaces the
 * environment with a fixed one (PATH, LC_ALL=C, HOME and TMPDIR the temporary
 * directory) that every command the test runs, natively or under pmusim, inherits. */
void e2e_init(void);

/* The workloads' directory ($WORKLOADS as the test started, default build/workloads). */
const char *workloads_dir(void);

/* The pmusim under test: $PMUSIM, default build/release/pmusim. */
const char *pmusim(void);
/* Path of a built workload: $WORKLOADS/name (default build/workloads); the
 * last 8 results stay valid. */
const char *wl(const char *name);

/* Runs argv (NULL-terminated) with stdin from in (NULL: /dev/null), stdout and
 * stderr to the given files (NULL: /dev/null). Returns the exit status, or
 * 128+N when killed by signal N, or -1 when it could not run. */
int run_cmd(char *const argv[], const char *in, const char *out, const char *err);

/* Whole file as a NUL-terminated string (caller frees); NULL if unreadable. */
char *slurp(const char *path, size_t *len);

/* One conditional or unconditional jump site: taken count per target, and how
 * often the site executed (conditional only). */
struct jump_rec {
	uint64_t from, to;
	uint64_t count;     /* taken to `to` */
	uint64_t executed;  /* for conditional jumps: executions of the site; 0 otherwise */
	uint64_t fallthrough; /* pmusim records: the next instruction */
	int cond;
};

/* Execution count of the instruction at addr in a callgrind.out (its Ir cost
 * summed over every context), 0 if absent. */
uint64_t callgrind_executions(const char *path, uint64_t addr);

/* Parses a callgrind.out written with --dump-instr=yes --collect-jumps=yes:
 * every jump=/jcnd= record (callgrind format spec, "Jump information"). */
int callgrind_jumps(const char *path, struct jump_rec **out, size_t *n);

/* Parses pmusim's --truth-json: conditional and direct-jump sites from
 * "branches" (cond: count = taken, executed = taken + not_taken) and indirect
 * jumps from "transfers". */
int truth_jumps(const char *path, struct jump_rec **out, size_t *n);

/* One record of a truth JSON's "branches" (cond, jmp: from = addr, to = target, taken,
 * not_taken, fallthrough) or "transfers" (call, call_ind, jmp_ind, ret: from, to,
 * taken = count). */
struct truth_rec {
	char kind[16];
	uint64_t from, to, fallthrough, taken, not_taken;
};

/* Every record of both sections, in file order (caller frees *out). */
int truth_records(const char *path, struct truth_rec **out, size_t *n);

/* The top-level "instructions" count of a truth JSON, or -1. */
long long truth_instructions(const char *path);

/* 1 when pmusim is the ASan build (E2E_SANITIZED=1, make e2e-asan): the suites whose
 * figures need millions of samples on many programs then run one program of their
 * list, so that ASan sees every code path; the figures are the release run's (make
 * e2e), which runs them all. The outputs are the same in both builds. */
int e2e_sanitized(void);

/* A loop test over a list of n rows: n rows in the release run, every 4th row
 * ((n + 3) / 4 of them) under ASan; e2e_row maps the loop's index to the row. */
int e2e_rows(int n);
int e2e_row(int i);

/* The shared/ folder beside the repository: $PMUSIM_SHARED, default ../shared. */
const char *shared_dir(void);

/* A path in the test process's temporary directory (the last 8 results stay valid). */
const char *tmp_path(const char *name);
/* The same, valid until the process exits: at most 64 per process (each test of a
 * suite runs in a process of its own). */
const char *tmp_path_kept(const char *name);

/* A native reference tool's path into buf (size bytes): $ENV when set and not empty,
 * else the file NAME (under 32 bytes) beside this test binary (both in build/MODE/tests).
 * Call it before e2e_init, which gives the process a fixed environment. */
void ref_tool_path(char *buf, size_t size, const char *env, const char *name);

#endif

#ifndef PMUSIM_TESTS_E2E_FDATA
#define PMUSIM_TESTS_E2E_FDATA
/* One line of BOLT fdata: "1 from_fn from_off 1 to_fn to_off mispreds count";
 * function names lose BOLT's "/N" suffix for local symbols. */
struct fdata_edge {
	char from_fn[128], to_fn[128];
	uint64_t from_off, to_off, count;
};

/* Symbolised lines of an fdata file (lines with "0 dso off" ends are skipped). */
int fdata_read(const char *path, struct fdata_edge **out, size_t *n);
#endif

#ifndef PMUSIM_TESTS_E2E_TOTALS
#define PMUSIM_TESTS_E2E_TOTALS
/* Totals of a truth JSON, in the PMU's event terms (pmu_model/events.h). */
struct truth_totals {
	uint64_t instructions, branches, taken, cond, cond_taken, calls, returns, indirect, rep_iters;
};
int truth_totals(const char *json, struct truth_totals *t);

/* Every taken control transfer (from, to) of a truth JSON, sorted, for lookups
 * with truth_has_edge. */
struct truth_edge_set {
	uint64_t (*e)[2];
	size_t n;
};
int truth_edge_set(const char *json, struct truth_edge_set *s);
int truth_has_edge(const struct truth_edge_set *s, uint64_t from, uint64_t to);

/* Runs argv with stdout to a file and returns the file's text (caller frees),
 * the exit status in *status. */
char *run_capture(char *const argv[], int *status);
#endif

#ifndef PMUSIM_TESTS_E2E_REP
#define PMUSIM_TESTS_E2E_REP
/* One REP site: of a truth JSON's "rep" array (actual = its iterations, has_actual
 * 1), or of `pmusim report --rep --format json` ("sites"; has_actual 0 when the mode
 * does not know actual and ended_by_condition). */
struct rep_site {
	uint64_t addr, executions, requested, actual, cond, steps;
	int has_actual;
};
/* The sites in file order (caller frees *out): 0, or -1 when the file is unreadable,
 * a line is malformed or there is no such array. */
int rep_sites_of_truth(const char *json, struct rep_site **out, size_t *n);
int rep_sites_of_report(const char *text, struct rep_site **out, size_t *n);
#endif
