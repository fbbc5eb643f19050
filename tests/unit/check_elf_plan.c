/* The ELF loader's plan (sim/linux/elf_plan.h) of hand-made headers: which
 * files are refused with which error, and what a good plan holds (segments in
 * file order, empty loads left out, AT_PHDR from PT_PHDR or the load holding the
 * headers, the interpreter path). Rows carry __LINE__. */
#include <check.h>
#include <elf.h>
#include <string.h>

#include "common/err.h"
#include "sim/linux/elf_plan.h"
#include "tests/unit/run_suite.h"

#define FILE_LEN 0x3000u

struct plan_case {
	int line;
	const char *what;
	Elf64_Phdr ph[3]; /* p_type 0 (PT_NULL) ends the list */
	int err;          /* 0, or the pmusim_err expected */
	const char *text; /* in the message of a refusal */
	size_t nseg;      /* of a good plan */
};

#define LOAD(va, off, fsz, msz) {PT_LOAD, PF_R | PF_X, (off), (va), (va), (fsz), (msz), 0x1000}

static const struct plan_case cases[] = {
	{__LINE__, "one load", {LOAD(0x400000, 0, 0x100, 0x100)}, 0, NULL, 1},
	{__LINE__, "empty load left out", {LOAD(0x400000, 0, 0x100, 0x100), LOAD(0x500000, 0, 0, 0)}, 0, NULL, 1},
	{__LINE__, "no load", {{PT_NOTE, 0, 0, 0, 0, 0, 0, 4}}, PMUSIM_ERR_ELF, "no loadable segments", 0},
	{__LINE__, "file part past end", {LOAD(0x400000, 0x2000, 0x2000, 0x2000)}, PMUSIM_ERR_ELF, "past end of file", 0},
	{__LINE__, "file part larger than memory", {LOAD(0x400000, 0, 0x200, 0x100)}, PMUSIM_ERR_ELF, "corrupt loadable", 0},
	{__LINE__, "memory above 2^36", {LOAD(0x400000, 0, 0x100, (1ull << 36) + 1)}, PMUSIM_ERR_ELF, "corrupt loadable", 0},
	{__LINE__, "address wraps", {LOAD(0xfffffffffffff000ull, 0, 0x100, 0x2000)}, PMUSIM_ERR_ELF, "corrupt loadable", 0},
	/* the end fits in 64 bits but its page does not: the loader maps whole pages */
	{__LINE__, "last page wraps", {LOAD(0xffffffffffffe000ull, 0, 0x100, 0x1f01)}, PMUSIM_ERR_ELF, "corrupt loadable", 0},
	{__LINE__, "address and offset disagree", {LOAD(0x400010, 0x20, 0x100, 0x100)}, PMUSIM_ERR_ELF, "corrupt loadable", 0},
	{__LINE__, "interpreter without NUL", {LOAD(0x400000, 0, 0x100, 0x100), {PT_INTERP, PF_R, 0x1000, 0, 0, 4, 4, 1}}, PMUSIM_ERR_ELF, "interpreter path", 0},
	{__LINE__, "interpreter past end", {LOAD(0x400000, 0, 0x100, 0x100), {PT_INTERP, PF_R, 0x2ff0, 0, 0, 0x20, 0x20, 1}}, PMUSIM_ERR_ELF, "interpreter path", 0},
};

/* A file of FILE_LEN bytes: the ELF header, the row's program headers at 64,
 * "/lib/ld.so" with its NUL at 0x2000 and 4 bytes without at 0x1000. */
static unsigned char *make_file(const Elf64_Phdr *ph, size_t nph)
{
	static unsigned char file[FILE_LEN];
	memset(file, 0, sizeof(file));
	Elf64_Ehdr eh = {.e_type = ET_EXEC, .e_machine = EM_X86_64, .e_version = EV_CURRENT,
			 .e_entry = 0x400080, .e_phoff = 64, .e_ehsize = sizeof(Elf64_Ehdr),
			 .e_phentsize = sizeof(Elf64_Phdr), .e_phnum = (Elf64_Half)nph};
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(file, &eh, sizeof(eh));
	if (nph)
		memcpy(file + 64, ph, nph * sizeof(*ph));
	memcpy(file + 0x1000, "abcd", 4);
	memcpy(file + 0x2000, "/lib/ld.so", 11);
	return file;
}

static size_t count_phdrs(const Elf64_Phdr *ph, size_t max)
{
	size_t n = 0;
	while (n < max && ph[n].p_type != PT_NULL)
		n++;
	return n;
}

START_TEST(plan_rows)
{
	const struct plan_case *c = &cases[_i];
	size_t nph = count_phdrs(c->ph, 3);
	unsigned char *file = make_file(c->ph, nph);
	static struct elf_plan p;
	char msg[256] = "";
	int err = elf_plan_read(file, FILE_LEN, "prog", &p, msg, sizeof(msg));
	ck_assert_msg(err == c->err, "line %d (%s): error %d (%s), want %d", c->line, c->what, err, msg,
		      c->err);
	if (err) {
		ck_assert_msg(strstr(msg, c->text) && strstr(msg, "prog: ") == msg,
			      "line %d (%s): message '%s' lacks '%s'", c->line, c->what, msg, c->text);
		return;
	}
	ck_assert_msg(p.nseg == c->nseg, "line %d (%s): %zu segments", c->line, c->what, p.nseg);
	ck_assert_uint_eq(p.phnum, nph);
	ck_assert_uint_eq(p.entry, 0x400080);
}
END_TEST

START_TEST(good_plan)
{
	Elf64_Phdr ph[] = {
		{PT_INTERP, PF_R, 0x2000, 0x402000, 0x402000, 11, 11, 1},
		LOAD(0x400000, 0, 0x1000, 0x1000),
		{PT_LOAD, PF_R | PF_W, 0x2000, 0x402000, 0x402000, 0x100, 0x5000, 0x1000},
	};
	unsigned char *file = make_file(ph, 3);
	((Elf64_Ehdr *)file)->e_type = ET_DYN;
	static struct elf_plan p;
	char msg[256] = "";
	ck_assert_int_eq(elf_plan_read(file, FILE_LEN, "prog", &p, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(p.type, ET_DYN);
	ck_assert_str_eq(p.interp, "/lib/ld.so");
	ck_assert_uint_eq(p.nseg, 2);
	ck_assert_uint_eq(p.seg[1].vaddr, 0x402000);
	ck_assert_uint_eq(p.seg[1].memsz, 0x5000);
	ck_assert_uint_eq(p.seg[1].flags, PF_R | PF_W);
	ck_assert_uint_eq(p.lo, 0x400000);
	ck_assert_uint_eq(p.hi, 0x407000);
	/* no PT_PHDR: the headers at file offset 64 lie in the first load */
	ck_assert_int_eq(p.has_phdr, 1);
	ck_assert_uint_eq(p.phdr, 0x400040);
}
END_TEST

START_TEST(pt_phdr_wins)
{
	Elf64_Phdr ph[] = {
		LOAD(0x400000, 0, 0x1000, 0x1000),
		{PT_PHDR, PF_R, 64, 0x600040, 0x600040, 3 * sizeof(Elf64_Phdr), 3 * sizeof(Elf64_Phdr), 8},
	};
	unsigned char *file = make_file(ph, 2);
	static struct elf_plan p;
	char msg[256] = "";
	ck_assert_int_eq(elf_plan_read(file, FILE_LEN, "prog", &p, msg, sizeof(msg)), 0);
	ck_assert_int_eq(p.has_phdr, 1);
	ck_assert_uint_eq(p.phdr, 0x600040);
}
END_TEST

START_TEST(not_elf)
{
	static struct elf_plan p;
	char msg[256] = "";
	ck_assert_int_eq(elf_plan_read((const unsigned char *)"#!/bin/sh\n", 10, "s", &p, msg, sizeof(msg)),
			 PMUSIM_ERR_ELF);
	ck_assert_str_eq(msg, "s: not an ELF file");
	unsigned char *file = make_file(NULL, 0);
	((Elf64_Ehdr *)file)->e_machine = EM_AARCH64;
	ck_assert_int_eq(elf_plan_read(file, FILE_LEN, "s", &p, msg, sizeof(msg)), PMUSIM_ERR_ARCH);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("elf_plan");
	TCase *tc = tcase_create("elf_plan");
	tcase_add_loop_test(tc, plan_rows, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, good_plan);
	tcase_add_test(tc, pt_phdr_wins);
	tcase_add_test(tc, not_elf);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
