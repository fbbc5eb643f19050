/* Loading programs (sim/sim.h sim_new): bad files end in a negative error and
 * one line of explanation, never a crash; a good static program runs. */
#include <check.h>
#include <elf.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "sim/sim.h"
#include "tests/unit/run_suite.h"

static char dir[64];

static const char *path_in(const char *name)
{
	static char buf[4][128];
	static int k;
	char *b = buf[k++ % 4];
	snprintf(b, 128, "%s/%s", dir, name);
	return b;
}

/* A static program built with the system compiler: exit status 7, no output. */
static const char *static_prog(void)
{
	static char prog[128];
	if (prog[0])
		return prog;
	snprintf(prog, sizeof(prog), "%s/seven", dir);
	char cmd[512];
	snprintf(cmd, sizeof(cmd), "printf 'int main(void){return 7;}' | cc -O1 -static -x c -o %s -", prog);
	ck_assert_int_eq(system(cmd), 0);
	return prog;
}

static const char *interp; /* --interp of the next try_load, or NULL */

static int try_load(const char *path, char *msg, size_t len)
{
	char *argv[] = {(char *)path, NULL};
	char *envp[] = {NULL};
	struct sim_options o = {.path = path, .argv = argv, .envp = envp, .log = stderr, .interp = interp};
	struct sim *s = NULL;
	int err = sim_new(&o, &s, msg, len);
	if (err == 0)
		sim_free(s);
	return err;
}

static void write_file(const char *path, const void *data, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	if (len)
		fwrite(data, 1, len, f);
	fclose(f);
}

static void *read_all(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	rewind(f);
	void *buf = malloc(*len);
	ck_assert_uint_eq(fread(buf, 1, *len, f), *len);
	fclose(f);
	return buf;
}

struct bad_case {
	int line;
	const char *what;
	int err;
	const char *text;
};

static const struct bad_case bad_cases[] = {
	{__LINE__, "empty", PMUSIM_ERR_ELF, "not an ELF file"},
	{__LINE__, "garbage", PMUSIM_ERR_ELF, "not an ELF file"},
	{__LINE__, "first 100 bytes", PMUSIM_ERR_ELF, "truncated"},
	{__LINE__, "first half", PMUSIM_ERR_ELF, "truncated"},
	{__LINE__, "aarch64", PMUSIM_ERR_ARCH, "not an x86-64 program"},
	{__LINE__, "32-bit class", PMUSIM_ERR_ARCH, "not a 64-bit ELF"},
	{__LINE__, "interpreter not ELF", PMUSIM_ERR_ELF, "/etc/hostname: not an ELF file"},
	{__LINE__, "missing", PMUSIM_ERR_IO, "cannot read program"},
};

START_TEST(bad_files)
{
	const struct bad_case *c = &bad_cases[_i];
	const char *p = path_in("bad");
	size_t len;
	unsigned char *good = read_all(static_prog(), &len);
	unlink(p);
	switch (_i) {
	case 0: write_file(p, "", 0); break;
	case 1: {
		unsigned char junk[4096];
		for (size_t i = 0; i < sizeof(junk); i++)
			junk[i] = (unsigned char)(i * 131 + 7);
		write_file(p, junk, sizeof(junk));
		break;
	}
	case 2: write_file(p, good, 100); break;
	case 3: write_file(p, good, len / 2); break;
	case 4: good[18] = 183; write_file(p, good, len); break; /* e_machine = EM_AARCH64 */
	case 5: good[4] = 1; write_file(p, good, len); break;    /* EI_CLASS = ELFCLASS32 */
	case 6: p = "/bin/true"; interp = "/etc/hostname"; break; /* a dynamic program */
	case 7: p = path_in("does-not-exist"); break;
	}
	free(good);
	char msg[512] = "";
	int err = try_load(p, msg, sizeof(msg));
	interp = NULL;
	ck_assert_msg(err == c->err, "line %d (%s): error %d (%s), want %d", c->line, c->what, err, msg, c->err);
	ck_assert_msg(strstr(msg, c->text), "line %d (%s): message '%s' lacks '%s'", c->line, c->what, msg, c->text);
	ck_assert_msg(!strchr(msg, '\n'), "line %d: message is not one line", c->line);
}
END_TEST

/* Loads and runs the program p (no arguments, no environment); the caller frees it. */
static struct sim *run_program(const char *p, FILE *log, struct sim_result *res)
{
	char *argv[] = {(char *)p, NULL};
	char *envp[] = {NULL};
	struct sim_options o = {.path = p, .argv = argv, .envp = envp, .log = log};
	struct sim *s;
	char msg[256] = "";
	ck_assert_msg(sim_new(&o, &s, msg, sizeof(msg)) == 0, "%s: %s", p, msg);
	ck_assert_int_eq(sim_run(s, res), 0);
	return s;
}

START_TEST(good_program_runs)
{
	struct sim_result res;
	struct sim *s = run_program(static_prog(), stderr, &res);
	ck_assert_int_eq(res.end, SIM_END_EXIT);
	ck_assert_int_eq(res.status, 7);
	ck_assert_uint_gt(res.insns, 1000); /* glibc start-up runs */
	ck_assert_uint_eq(sim_load_bias(s), 0);
	ck_assert_uint_gt(symtab_count(sim_symtab(s)), 100);
	sim_free(s);
}
END_TEST

/* A static glibc program whose PT_TLS asks for an absurd alignment: glibc's TLS
 * setup asks brk, then mmap, for a block of that size. The run must end as the
 * native one does ("Fatal glibc error: Cannot allocate TLS block", status 127)
 * and quickly: the address-space search for so large a block once took minutes. */
static const uint64_t tls_aligns[] = {1ull << 44, 1ull << 48};

START_TEST(tls_huge_align)
{
	size_t len;
	unsigned char *elf = read_all(static_prog(), &len);
	Elf64_Ehdr eh;
	memcpy(&eh, elf, sizeof(eh));
	int patched = 0;
	for (size_t i = 0; i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		memcpy(&ph, elf + eh.e_phoff + i * sizeof(ph), sizeof(ph));
		if (ph.p_type != PT_TLS)
			continue;
		ph.p_align = tls_aligns[_i];
		memcpy(elf + eh.e_phoff + i * sizeof(ph), &ph, sizeof(ph));
		patched = 1;
	}
	ck_assert_msg(patched, "the static program has no PT_TLS");
	const char *p = path_in("tls_align");
	write_file(p, elf, len);
	free(elf);
	ck_assert_int_eq(chmod(p, 0755), 0);

	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		int null = open("/dev/null", O_WRONLY);
		dup2(null, 2);
		execl(p, p, (char *)NULL);
		_exit(126);
	}
	int ws;
	ck_assert_int_eq(waitpid(pid, &ws, 0), pid);
	ck_assert_msg(WIFEXITED(ws), "the native run died of a signal");

	FILE *log = fopen("/dev/null", "w");
	struct sim_result res;
	struct sim *s = run_program(p, log, &res);
	ck_assert_int_eq(res.end, SIM_END_EXIT);
	ck_assert_int_eq(res.status, WEXITSTATUS(ws));
	sim_free(s);
	fclose(log);
}
END_TEST

static void make_dir(void)
{
	snprintf(dir, sizeof(dir), "/tmp/pmusim-loader-XXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(dir));
}

static void remove_dir(void)
{
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	ck_assert_int_eq(system(cmd), 0);
}

int main(void)
{
	Suite *s = suite_create("loader");
	TCase *tc = tcase_create("loader");
	tcase_add_checked_fixture(tc, make_dir, remove_dir);
	tcase_set_timeout(tc, 30);
	tcase_add_loop_test(tc, bad_files, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, good_program_runs);
	tcase_add_loop_test(tc, tls_huge_align, 0, (int)(sizeof(tls_aligns) / sizeof(tls_aligns[0])));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
