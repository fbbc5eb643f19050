/* End-to-end tests of the program cycles in the truth JSON, on every workload in
 * $WORKLOADS (every executable file but the .o, as tests/same_output.sh takes them):
 * - `run --truth-json` (its own clock) gives the cycles `pmusim stat -e cycles` counts
 *   in another run (no interrupts there), 0 difference: the truth's "cycles" plus the
 *   cycles of other programs (child processes), which are 0 exactly when the truth's
 *   instructions are stat's;
 * - blocks' cycles + cycles_outside_blocks = functions' cycles + cycles_outside_symbols
 *   = cycles;
 * - `record -e instructions -c N --refill A` leaves the refill out of the truth's
 *   cycles (the same as without interrupts) and charges it exactly: real perf script
 *   reads sample k's time A * (k - 1) cycles later than with --refill 0 (A even:
 *   the model's 2000 MHz clock gives whole nanoseconds).
 * Environment: PMUSIM, WORKLOADS as for check_e2e. */
#include <check.h>
#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

#define MAX_WL 128
static char wl_names[MAX_WL][256];
static int nwl;

static int cmp_name(const void *a, const void *b)
{
	return strcmp(a, b);
}

/* The workloads, sorted (before the tests fork: they inherit the list). */
static void list_workloads(void)
{
	const char *dir = wl(".");
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)) && nwl < MAX_WL) {
		size_t n = strlen(e->d_name);
		struct stat st;
		char path[2400];
		snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
		if (e->d_name[0] == '.' || (n > 2 && strcmp(e->d_name + n - 2, ".o") == 0) ||
		    stat(path, &st) != 0 || !S_ISREG(st.st_mode) || !(st.st_mode & 0111) || n >= 256)
			continue;
		memcpy(wl_names[nwl++], e->d_name, n + 1);
	}
	closedir(d);
	qsort(wl_names, (size_t)nwl, sizeof(wl_names[0]), cmp_name);
}

/* The cycles of a truth JSON, read line by line as truth_write.c lays them out. */
struct cycles {
	long long total, outside_blocks, other, outside_symbols, instructions;
	unsigned long long blocks, functions; /* sums of the entries' "cycles" */
	int nblocks, nfunctions;
};

static long long field_after(const char *line, const char *key)
{
	const char *p = strstr(line, key);
	return p ? strtoll(p + strlen(key), NULL, 10) : -1;
}

static int read_cycles(const char *json, struct cycles *c)
{
	char *text = slurp(json, NULL);
	if (!text)
		return -1;
	memset(c, 0, sizeof(*c));
	c->total = c->outside_blocks = c->other = c->outside_symbols = c->instructions = -1;
	for (char *l = text; l && *l;) {
		char *nl = strchr(l, '\n');
		if (nl)
			*nl = 0;
		if (strncmp(l, "  \"cycles\": ", 12) == 0)
			c->total = strtoll(l + 12, NULL, 10);
		else if (strncmp(l, "  \"cycles_outside_blocks\": ", 27) == 0)
			c->outside_blocks = strtoll(l + 27, NULL, 10);
		else if (strncmp(l, "  \"cycles_other_programs\": ", 27) == 0)
			c->other = strtoll(l + 27, NULL, 10);
		else if (strncmp(l, "  \"cycles_outside_symbols\": ", 28) == 0)
			c->outside_symbols = strtoll(l + 28, NULL, 10);
		else if (strncmp(l, "  \"instructions\": ", 18) == 0 && c->instructions < 0)
			c->instructions = strtoll(l + 18, NULL, 10);
		else if (strncmp(l, "    {\"name\": ", 13) == 0 && field_after(l, "\"cycles\": ") >= 0)
			c->functions += (unsigned long long)field_after(l, "\"cycles\": "), c->nfunctions++;
		else if (strncmp(l, "    {\"start\": ", 14) == 0 && field_after(l, "\"cycles\": ") >= 0)
			c->blocks += (unsigned long long)field_after(l, "\"cycles\": "), c->nblocks++;
		l = nl ? nl + 1 : NULL;
	}
	free(text);
	return c->total >= 0 && c->outside_blocks >= 0 && c->other >= 0 && c->outside_symbols >= 0 ? 0 : -1;
}

/* A count of `pmusim stat -x ,` output ("N,,event,..."). */
static long long stat_count(const char *path, const char *event)
{
	char *text = slurp(path, NULL), key[64];
	long long v = -1;
	snprintf(key, sizeof(key), ",,%s,", event);
	for (char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(strchr(l, ',') ? strchr(l, ',') : l, key, strlen(key)) == 0)
			v = strtoll(l, NULL, 10);
	free(text);
	return v;
}

START_TEST(truth_cycles_are_stat_cycles)
{
	const char *name = wl_names[e2e_row(_i)], *prog = wl(name);
	const char *tj = tmp_path("run.json"), *so = tmp_path("stat.txt");
	char *ra[] = {(char *)pmusim(), "run", "-q", "--truth-json", (char *)tj, "--", (char *)prog, NULL};
	char *sa[] = {(char *)pmusim(), "stat", "-q", "-x", ",", "-e", "instructions,cycles", "-o", (char *)so,
		      "--", (char *)prog, NULL};
	int rs = run_cmd(ra, NULL, NULL, NULL), ss = run_cmd(sa, NULL, NULL, NULL);
	/* the program's status (probe_areas without an argument exits 2 itself) */
	ck_assert_msg(rs == ss, "%s: run exits %d, stat %d", name, rs, ss);
	struct cycles c;
	ck_assert_msg(read_cycles(tj, &c) == 0, "%s: no cycles in the truth", name);
	long long cyc = stat_count(so, "cycles"), ins = stat_count(so, "instructions");
	ck_assert_msg(cyc > 0 && ins > 0, "%s: no stat counts", name);
	ck_assert_msg(c.total + c.other == cyc, "%s: truth %lld + other programs %lld, stat %lld (difference %lld)",
		      name, c.total, c.other, cyc, cyc - c.total - c.other);
	/* other programs' cycles exactly when stat counted instructions the truth did not */
	ck_assert_msg((c.other == 0) == (c.instructions == ins), "%s: other programs %lld cycles, instructions %lld/%lld",
		      name, c.other, c.instructions, ins);
	ck_assert_msg(c.total > 0 && c.nblocks > 0, "%s: empty", name); /* asm_*: no function symbols */
	ck_assert_msg(c.blocks + (unsigned long long)c.outside_blocks == (unsigned long long)c.total,
		      "%s: blocks %llu + outside %lld != %lld", name, c.blocks, c.outside_blocks, c.total);
	ck_assert_msg(c.functions + (unsigned long long)c.outside_symbols == (unsigned long long)c.total,
		      "%s: functions %llu + outside %lld != %lld", name, c.functions, c.outside_symbols, c.total);
}
END_TEST

/* Sample times in ns, as `perf script -F time --ns` prints them; count in *n. */
static uint64_t *sample_times(const char *data, size_t *n)
{
	const char *out = tmp_path("times.txt");
	char *a[] = {"perf", "script", "-i", (char *)data, "-F", "time", "--ns", NULL};
	*n = 0;
	if (run_cmd(a, NULL, out, NULL) != 0)
		return NULL;
	char *text = slurp(out, NULL);
	size_t cap = 1024;
	uint64_t *t = malloc(cap * sizeof(*t));
	for (char *l = text; t && l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		unsigned long long s, ns;
		if (sscanf(l, " %llu.%llu:", &s, &ns) != 2)
			continue;
		if (*n == cap && !(t = realloc(t, (cap *= 2) * sizeof(*t))))
			break;
		t[(*n)++] = s * 1000000000ULL + ns;
	}
	free(text);
	return t;
}

#define REFILL 50   /* cycles: even, so that 2000 MHz gives whole nanoseconds */
#define PERIOD "10007"

START_TEST(refill_left_out_and_charged_exactly)
{
	const char *name = wl_names[e2e_row(_i)], *prog = wl(name);
	const char *tj = tmp_path("run.json");
	char *ra[] = {(char *)pmusim(), "run", "-q", "--truth-json", (char *)tj, "--", (char *)prog, NULL};
	int rs = run_cmd(ra, NULL, NULL, NULL);
	struct cycles base;
	ck_assert_msg(read_cycles(tj, &base) == 0, "%s: run exits %d, no cycles in the truth", name, rs);
	uint64_t *t[2];
	size_t n[2];
	for (int i = 0; i < 2; i++) {
		char data[64], json[64];
		snprintf(data, sizeof(data), "p%d.data", i);
		snprintf(json, sizeof(json), "r%d.json", i);
		char pd[512], js[512];
		snprintf(pd, sizeof(pd), "%s", tmp_path(data));
		snprintf(js, sizeof(js), "%s", tmp_path(json));
		char *a[] = {(char *)pmusim(), "record", "-q", "-e", "instructions", "-c", PERIOD, "--refill",
			     i ? "50" : "0", "-o", pd, "--truth-json", js, "--", (char *)prog, NULL};
		int st = run_cmd(a, NULL, NULL, NULL);
		ck_assert_msg(st == rs, "%s: record exits %d, run %d", name, st, rs);
		struct cycles c;
		ck_assert_msg(read_cycles(js, &c) == 0, "%s: no cycles in record's truth", name);
		ck_assert_msg(c.total == base.total && c.other == base.other,
			      "%s --refill %d: truth cycles %lld (other %lld), without interrupts %lld (other %lld)",
			      name, i ? REFILL : 0, c.total, c.other, base.total, base.other);
		ck_assert_msg(c.blocks + (unsigned long long)c.outside_blocks == (unsigned long long)c.total,
			      "%s: blocks do not add up", name);
		t[i] = sample_times(pd, &n[i]);
		ck_assert_msg(t[i], "%s: perf script failed", name);
	}
	ck_assert_msg(n[0] == n[1], "%s: %zu samples with --refill 0, %zu with %d", name, n[0], n[1], REFILL);
	for (size_t k = 0; k < n[0]; k++)
		ck_assert_msg(t[1][k] - t[0][k] == (uint64_t)REFILL / 2 * k,
			      "%s: sample %zu at %" PRIu64 " ns, without refill %" PRIu64 " ns (want +%d)", name, k + 1,
			      t[1][k], t[0][k], REFILL / 2 * (int)k);
	free(t[0]);
	free(t[1]);
}
END_TEST

/* --truth-insns: every instruction's retirements and cycles ("insns"), from the
 * same timing code instruction by instruction. Its other sections are the same
 * bytes as without it (the replay counts as the whole-block path does); the
 * instructions' cycles add up to the truth's cycles and their retirements to
 * its instructions. */
START_TEST(insn_figures_add_up)
{
	const char *name = wl_names[e2e_row(_i)], *prog = wl(name);
	char a[512], b[512];
	snprintf(a, sizeof(a), "%s", tmp_path("plain.json"));
	snprintf(b, sizeof(b), "%s", tmp_path("insns.json"));
	char *ra[] = {(char *)pmusim(), "run", "-q", "--truth-json", a, "--", (char *)prog, NULL};
	char *rb[] = {(char *)pmusim(), "run", "-q", "--truth-json", b, "--truth-insns", "--", (char *)prog, NULL};
	int sa = run_cmd(ra, NULL, NULL, NULL), sb = run_cmd(rb, NULL, NULL, NULL);
	ck_assert_int_eq(sa, sb);
	char *ta = slurp(a, NULL), *tb = slurp(b, NULL);
	ck_assert(ta && tb);
	char *ins = strstr(tb, ",\n  \"insns\": [");
	ck_assert_msg(ins, "%s: no insns", name);
	char *end = strstr(ins, "\n  ]");
	ck_assert_ptr_nonnull(end);
	unsigned long long cycles = 0, retired = 0;
	size_t n = 0;
	for (const char *p = strstr(ins, "{\"addr\""); p && p < end; p = strstr(p + 1, "{\"addr\"")) {
		retired += (unsigned long long)field_after(p, "\"retired\": ");
		cycles += (unsigned long long)field_after(p, "\"cycles\": ");
		n++;
	}
	memmove(ins, end + 4, strlen(end + 4) + 1); /* the rest, without the section */
	ck_assert_msg(strcmp(ta, tb) == 0, "%s: --truth-insns changed the rest of the truth", name);
	struct cycles c;
	ck_assert_int_eq(read_cycles(a, &c), 0);
	ck_assert_msg(cycles == (unsigned long long)c.total, "%s: instructions' cycles %llu, truth %lld", name, cycles,
		      c.total);
	ck_assert_msg(retired == (unsigned long long)c.instructions, "%s: retirements %llu, instructions %lld", name,
		      retired, c.instructions);
	ck_assert_uint_gt(n, 0);
	free(ta);
	free(tb);
}
END_TEST

int main(void)
{
	e2e_init();
	list_workloads();
	Suite *s = suite_create("cycles_truth");
	TCase *tc = tcase_create("stat");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, truth_cycles_are_stat_cycles, 0, e2e_rows(nwl));
	/* ASan: a quarter of the programs (every 4th), the code paths */
	tcase_add_loop_test(tc, refill_left_out_and_charged_exactly, 0, e2e_rows(nwl));
	tcase_add_loop_test(tc, insn_figures_add_up, 0, e2e_rows(nwl));
	suite_add_tcase(s, tc);
	if (nwl < 10)
		fprintf(stderr, "check_cycles_truth: only %d workloads in %s (make workloads)\n", nwl, wl("."));
	return nwl < 10 ? EXIT_FAILURE : run_suite(s);
}
