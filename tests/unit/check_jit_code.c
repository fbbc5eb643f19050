/* Code that exists in no file (written at run time, e.g. by a JIT compiler), as
 * the profiler sees it: the sparse code store (profiler/code_pages.h), a binary
 * that decodes such code once a recording carried it (binary_add_code), the
 * perf.data TEXT_POKE record that carries it, the fdata names of libraries and
 * "//anon" memory (common/fdata.h) and their way back to addresses, and a
 * recording whose branch records run through such code (profiler/input.h).
 * The code is hand-assembled (encodings: Intel SDM vol. 2). */
#include <check.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/fdata.h"
#include "profiler/binary.h"
#include "profiler/code_pages.h"
#include "profiler/input.h"
#include "profiler/perfdata.h"
#include "profiler/validate.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/self_map.h"
#include "tests/unit/tmp_dir.h"

#define JIT 0x7f0000001ff8ULL /* the loop below crosses a page boundary */
#define PID 4242

/* +0 xor eax,eax; +2 add rax,rdi; +5 test rdi,rdi; +8 js +15; +10 dec rdi;
 * +13 jnz +2; +15 ret */
static const uint8_t loop[] = {0x31, 0xc0, 0x48, 0x01, 0xf8, 0x48, 0x85, 0xff, 0x78,
			       0x05, 0x48, 0xff, 0xcf, 0x75, 0xf3, 0xc3};

START_TEST(pages_keep_what_is_known)
{
	struct code_pages *c = code_pages_new();
	uint8_t buf[32];
	ck_assert_ptr_nonnull(c);
	ck_assert_uint_eq(code_pages_read(c, JIT, buf, sizeof(buf)), 0);
	ck_assert_int_eq(code_pages_put(c, JIT, loop, sizeof(loop)), 0);
	ck_assert_uint_eq(code_pages_read(c, JIT, buf, sizeof(buf)), sizeof(loop)); /* stops at unknown */
	ck_assert_mem_eq(buf, loop, sizeof(loop));
	ck_assert_int_eq(code_pages_known(c, JIT + 8), 1); /* on the next page */
	ck_assert_int_eq(code_pages_known(c, JIT + sizeof(loop)), 0);
	ck_assert_int_eq(code_pages_known(c, JIT - 1), 0);
	/* the same bytes again change nothing; another byte does */
	ck_assert_int_eq(code_pages_put(c, JIT + 2, loop + 2, 3), 0);
	uint8_t ret = 0xc3;
	ck_assert_int_eq(code_pages_put(c, JIT + 2, &ret, 1), 1);
	ck_assert_uint_eq(code_pages_read(c, JIT + 2, buf, 1), 1);
	ck_assert_uint_eq(buf[0], 0xc3);
	/* bytes after a gap are known, the gap is not */
	ck_assert_int_eq(code_pages_put(c, JIT + 20, loop, 2), 0);
	ck_assert_uint_eq(code_pages_read(c, JIT, buf, sizeof(buf)), sizeof(loop));
	ck_assert_uint_eq(code_pages_read(c, JIT + 20, buf, sizeof(buf)), 2);
	code_pages_free(c);
}
END_TEST

START_TEST(binary_decodes_added_code)
{
	static const uint8_t file_code[] = {0xc3}; /* ret */
	struct binary *b;
	ck_assert_int_eq(binary_from_code(file_code, sizeof(file_code), 0x401000, &b), 0);
	ck_assert_ptr_null(binary_run(b, JIT + 2));
	ck_assert_int_eq(binary_has_code(b, JIT + 2), 0);
	ck_assert_int_eq(binary_add_code(b, JIT, loop, sizeof(loop)), 0);
	const struct block_info *r = binary_run(b, JIT + 2);
	ck_assert_ptr_nonnull(r);
	ck_assert_int_eq(r->kind, BK_COND);
	ck_assert_uint_eq(r->term, JIT + 8);
	ck_assert_uint_eq(r->target, JIT + 15);
	ck_assert_uint_eq(r->ninsns, 3);
	/* rewritten code (same address, other bytes) is decoded anew */
	static const uint8_t nop2[] = {0x66, 0x90};
	ck_assert_int_eq(binary_add_code(b, JIT + 8, nop2, sizeof(nop2)), 0);
	r = binary_run(b, JIT + 2);
	ck_assert_int_eq(r->kind, BK_COND);
	ck_assert_uint_eq(r->term, JIT + 13);
	ck_assert_uint_eq(r->target, JIT + 2);
	ck_assert_uint_eq(r->ninsns, 5);
	binary_free(b);
}
END_TEST

START_TEST(fdata_names_libraries_and_anon)
{
	const struct fdata_region reg[] = {
	    {0x7f0000100000, 0x7f0000200000, 0x7f0000000000, "libc.so.6"},
	    {JIT & ~0xfffULL, (JIT & ~0xfffULL) + 0x2000, 0, "//anon"},
	};
	struct symtab *st = symtab_new_empty();
	ck_assert_ptr_nonnull(st);
	struct fdata_namer nm = {st, "prog", 0x555555554000, reg, 2};
	char buf[128];
	fdata_loc_text(&nm, 0x7f0000126010, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0 libc.so.6 126010");
	fdata_loc_text(&nm, JIT + 8, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0 //anon 7f0000002000");
	fdata_loc_text(&nm, 0x555555555100, buf, sizeof(buf));
	ck_assert_str_eq(buf, "0 prog 1100");
	uint64_t a = 0;
	ck_assert_int_eq(fdata_region_resolve(reg, 2, "libc.so.6", 0x126010, &a), 1);
	ck_assert_uint_eq(a, 0x7f0000126010);
	ck_assert_int_eq(fdata_region_resolve(reg, 2, "//anon", JIT + 8, &a), 1);
	ck_assert_uint_eq(a, JIT + 8);
	ck_assert_int_eq(fdata_region_resolve(reg, 2, "libm.so.6", 0x10, &a), 0);
	symtab_free(st);
}
END_TEST

static char dir[PATH_MAX];

static void make_dir(void)
{
	tmp_dir_make(dir, sizeof(dir), "check_jit_code");
	ck_assert_msg(dir[0], "no temporary directory");
}

static void remove_dir(void)
{
	tmp_dir_remove(dir);
}

/* A library's PLT-like address (no symbol covers it) and "//anon" code read
 * back from fdata lines to the addresses they name. */
START_TEST(fdata_lines_come_back_to_addresses)
{
	static const char libc[] = "/usr/lib/x86_64-linux-gnu/libc.so.6";
	static const uint8_t file_code[] = {0xc3};
	struct binary *b;
	char msg[256], path[PATH_MAX + 64];
	ck_assert_int_eq(binary_from_code(file_code, sizeof(file_code), 0x401000, &b), 0);
	ck_assert_msg(binary_add_file(b, libc, 0x7f0000000000, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(binary_add_anon(b, JIT & ~0xfffULL, 0x2000), 0);
	ck_assert_int_eq(binary_add_code(b, JIT, loop, sizeof(loop)), 0);
	snprintf(path, sizeof(path), "%s/t.fdata", dir);
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fprintf(f, "0 //anon %llx 0 //anon %llx 0 999\n", (unsigned long long)(JIT + 13),
		(unsigned long long)(JIT + 2));
	fprintf(f, "0 //anon %llx 0 //anon %llx 0 1\n", (unsigned long long)(JIT + 13),
		(unsigned long long)(JIT + 15));
	fprintf(f, "0 libc.so.6 26010 0 libc.so.6 26016 0 7\n");
	fclose(f);
	struct edges *e = edges_new();
	size_t unknown = 99;
	ck_assert_msg(fdata_read_edges(path, b, e, &unknown, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_uint_eq(unknown, 0);
	ck_assert(edges_weight(e, JIT + 13, JIT + 2) == 999);
	ck_assert(edges_weight(e, JIT + 13, JIT + 15) == 1);
	ck_assert(edges_weight(e, 0x7f0000026010, 0x7f0000026016) == 7);
	size_t n;
	const struct edge *s = edges_sorted(e, &n);
	for (size_t i = 0; i < n; i++)
		if (s[i].from == JIT + 13) { /* kinds come from the code */
			ck_assert_int_eq(s[i].kind, BK_COND);
			ck_assert_int_eq(s[i].taken, s[i].to == JIT + 2);
		}
	edges_free(e);
	binary_free(b);
}
END_TEST

/* ---- a recording through "//anon" code ---- */

static struct self_map me; /* this program, as loaded */

/* 50 samples of br_inst_retired.near_taken, each with 16 back edges of the loop;
 * the loop's code in a TEXT_POKE when poke is set. */
static void write_recording(const char *path, int poke)
{
	const struct perfdata_event ev = {"br_inst_retired.near_taken:u",
					  PERF_TYPE_RAW,
					  0x20c4,
					  101,
					  PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
					      PERF_SAMPLE_BRANCH_STACK,
					  PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY,
					  1,
					  3,
					  0,
					  0,
					  0,
					  NULL};
	struct perfdata_writer *w;
	char msg[256];
	ck_assert_msg(perfdata_writer_open(&w, path, &ev, 1, NULL, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(perfdata_write_comm(w, PID, PID, "check_jit_code", 1), 0);
	ck_assert_int_eq(perfdata_write_mmap2(w, PID, PID, me.addr, me.len, me.pgoff, 5, 2, me.path, 2), 0);
	ck_assert_int_eq(perfdata_write_mmap2(w, PID, PID, JIT & ~0xfffULL, 0x2000, JIT & ~0xfffULL, 5, 2,
					      "//anon", 3), 0);
	if (poke)
		ck_assert_int_eq(perfdata_write_text_poke(w, PID, PID, JIT, loop, sizeof(loop), 4), 0);
	struct perf_branch br[16];
	for (int i = 0; i < 16; i++)
		br[i] = (struct perf_branch){JIT + 13, JIT + 2, 3, 0, 1, PERF_BR_COND};
	for (int i = 0; i < 50; i++) {
		struct perf_sample s = {.ip = JIT + 5, .time = 10 + (uint64_t)i, .period = 101, .pid = PID,
					.tid = PID, .misc = PERF_RECORD_MISC_USER, .nbr = 16, .br = br};
		ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(perfdata_writer_close(w), 0);
}

START_TEST(text_poke_round_trip)
{
	char path[PATH_MAX + 64], msg[256];
	snprintf(path, sizeof(path), "%s/poke.data", dir);
	self_map_find(&me);
	write_recording(path, 1);
	struct perfdata *pd;
	ck_assert_msg(perfdata_open(path, &pd, msg, sizeof(msg)) == 0, "%s", msg);
	struct perf_record r;
	int pokes = 0, anon = 0;
	while (perfdata_next(pd, &r, msg, sizeof(msg)) == 1) {
		if (r.type == PERF_RECORD_MMAP2 && strcmp(r.u.mmap.filename, "//anon") == 0) {
			anon++;
			ck_assert_uint_eq(r.u.mmap.pgoff, JIT & ~0xfffULL);
		}
		if (r.type != PERF_RECORD_TEXT_POKE)
			continue;
		pokes++;
		ck_assert_uint_eq(r.misc & 7, PERF_RECORD_MISC_USER);
		ck_assert_uint_eq(r.u.poke.pid, PID);
		ck_assert_uint_eq(r.u.poke.addr, JIT);
		ck_assert_uint_eq(r.u.poke.len, sizeof(loop));
		ck_assert_mem_eq(r.u.poke.bytes, loop, sizeof(loop));
		ck_assert_uint_eq(r.time, 4);
	}
	ck_assert_int_eq(anon, 1);
	ck_assert_int_eq(pokes, 1);
	perfdata_close(pd);
}
END_TEST

static const struct edge *edge_of(struct edges *e, uint64_t from, uint64_t to)
{
	size_t n;
	const struct edge *s = edges_sorted(e, &n);
	for (size_t i = 0; i < n; i++)
		if (s[i].from == from && s[i].to == to)
			return &s[i];
	return NULL;
}

/* Only when the recording carries the loop's code does the profile know the
 * back edge's kind and find the never-taken js between the branch records. */
START_TEST(profile_walks_poked_code)
{
	char path[PATH_MAX + 64], msg[256];
	self_map_find(&me);
	for (int poke = 0; poke < 2; poke++) {
		snprintf(path, sizeof(path), "%s/p%d.data", dir, poke);
		write_recording(path, poke);
		struct input_opts io = {NULL, NULL, -1};
		struct profile_opts po = {0};
		struct profile *prof;
		struct binary *bin;
		ck_assert_msg(input_profile(path, &io, &po, &prof, &bin, msg, sizeof(msg)) == 0, "%s", msg);
		struct edges *e = profile_edges(prof);
		const struct edge *back = edge_of(e, JIT + 13, JIT + 2), *js = edge_of(e, JIT + 8, JIT + 10);
		ck_assert_ptr_nonnull(back);
		ck_assert_int_eq(back->kind, poke ? BK_COND : BK_NONE);
		if (poke) {
			ck_assert_ptr_nonnull(js);
			ck_assert_int_eq(js->taken, 0);
			ck_assert(js->w > 0);
		} else {
			ck_assert_ptr_null(js);
		}
		const struct fdata_region *reg;
		size_t n = binary_regions(bin, &reg);
		ck_assert_uint_eq(n, 1);
		ck_assert_str_eq(reg[0].name, "//anon");
		profile_free(prof);
		binary_free(bin);
	}
}
END_TEST

int main(void)
{
	Suite *s = suite_create("jit_code");
	TCase *tc = tcase_create("core");
	tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
	tcase_add_test(tc, pages_keep_what_is_known);
	tcase_add_test(tc, binary_decodes_added_code);
	tcase_add_test(tc, fdata_names_libraries_and_anon);
	tcase_add_test(tc, fdata_lines_come_back_to_addresses);
	tcase_add_test(tc, text_poke_round_trip);
	tcase_add_test(tc, profile_walks_poked_code);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
