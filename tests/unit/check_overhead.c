/* The overhead table's pieces: --sort lists (table-driven, rows carry their
 * line), and PLT entry names checked against binutils' objdump, which names
 * each .plt entry "<name@plt>" from the same relocations by its own code
 * ("*ABS*+0x...@plt" for an IRELATIVE one, which perf names "@plt"). */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/overhead.h"
#include "profiler/plt_names.h"
#include "tests/unit/run_suite.h"

static const struct {
	int line;
	const char *list;
	int ok;
	size_t n;
	enum ovh_key k0, k1;
} sort_rows[] = {
    {__LINE__, "comm,dso,sym", 1, 3, OVH_COMM, OVH_DSO},
    {__LINE__, "symbol", 1, 1, OVH_SYM, OVH_SYM},
    {__LINE__, "pid,sym", 1, 2, OVH_PID, OVH_SYM},
    {__LINE__, "dso,cpu", 0, 0, OVH_COMM, OVH_COMM},
    {__LINE__, "", 0, 0, OVH_COMM, OVH_COMM},
    {__LINE__, "sym,", 1, 1, OVH_SYM, OVH_SYM},
    {__LINE__, "Sym", 0, 0, OVH_COMM, OVH_COMM},
};

START_TEST(sort_lists)
{
	struct overhead_opts o = {0};
	char msg[200] = "";
	int r = overhead_parse_sort(&o, sort_rows[_i].list, msg, sizeof(msg));
	ck_assert_msg((r == 0) == sort_rows[_i].ok, "row at line %d: %d %s", sort_rows[_i].line, r,
	              msg);
	if (!sort_rows[_i].ok) {
		ck_assert_msg(msg[0], "row at line %d: no reason", sort_rows[_i].line);
		return;
	}
	ck_assert_msg(o.nkeys == sort_rows[_i].n && o.keys[0] == sort_rows[_i].k0 &&
	                  (o.nkeys < 2 || o.keys[1] == sort_rows[_i].k1),
	              "row at line %d", sort_rows[_i].line);
}
END_TEST

/* Files whose .rela.plt lists the GOT slots in order, where relocation order
 * (perf 6.1's) and the slot each entry jumps through (objdump's) agree. libc's
 * does not (IRELATIVE relocations come first): there perf 6.1 names entries by
 * relocation order, pmusim follows perf, and check_report_cli compares with
 * perf itself. */
static const char *const plt_files[] = {"/bin/ls", "/usr/bin/sort"};

/* The file offset minus the address of the .plt section, from objdump -h. */
static long long plt_delta(const char *path)
{
	char cmd[300], line[512];
	snprintf(cmd, sizeof(cmd), "objdump -h '%s'", path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	long long d = -1;
	while (fgets(line, sizeof(line), p)) {
		char name[64];
		unsigned long long size, vma, lma, off;
		if (sscanf(line, " %*d %63s %llx %llx %llx %llx", name, &size, &vma, &lma, &off) ==
		        5 &&
		    strcmp(name, ".plt") == 0)
			d = (long long)(off - vma);
	}
	pclose(p);
	return d;
}

START_TEST(plt_names_equal_objdumps)
{
	const char *path = plt_files[_i];
	long long delta = plt_delta(path);
	ck_assert_msg(delta != -1, "%s has no .plt", path);
	struct plt_names *pn = plt_names_read(path);
	ck_assert_ptr_nonnull(pn);
	char cmd[300], line[1024];
	snprintf(cmd, sizeof(cmd), "objdump -d -j .plt '%s'", path);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	int entries = 0;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long addr;
		char name[512];
		size_t len;
		/* the header is labelled "<first@plt-0x10>": entries end in "@plt" */
		if (sscanf(line, "%llx <%511[^>]>:", &addr, name) != 2 ||
		    (len = strlen(name)) < 4 || strcmp(name + len - 4, "@plt") != 0)
			continue;
		if (strncmp(name, "*ABS*", 5) == 0)
			snprintf(name, sizeof(name), "@plt");
		uint64_t off = (uint64_t)((long long)addr + delta);
		const char *got = plt_names_lookup(pn, off), *last = plt_names_lookup(pn, off + 15);
		ck_assert_msg(got && strcmp(got, name) == 0, "%s +0x%llx: objdump %s, pmusim %s",
		              path, addr, name, got ? got : "(none)");
		ck_assert_msg(last == got, "%s: the entry at 0x%llx is 16 bytes", path, addr);
		entries++;
	}
	pclose(p);
	ck_assert_int_gt(entries, 40);
	/* the .plt header (16 bytes before the first entry) is no entry */
	ck_assert_ptr_null(plt_names_lookup(pn, 0));
	plt_names_free(pn);
}
END_TEST

static Suite *overhead_suite(void)
{
	Suite *s = suite_create("overhead");
	TCase *tc = tcase_create("overhead");
	tcase_add_loop_test(tc, sort_lists, 0, (int)(sizeof(sort_rows) / sizeof(sort_rows[0])));
	tcase_add_loop_test(tc, plt_names_equal_objdumps, 0,
	                    (int)(sizeof(plt_files) / sizeof(plt_files[0])));
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(overhead_suite());
}
