/* common/: seeded generator, complete-or-absent output files, ELF symbols,
 * error texts and failure messages. */
#include <check.h>
#include <errno.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/infile.h"
#include "common/json.h"
#include "common/outfile.h"
#include "common/rng.h"
#include "common/shebang.h"
#include "common/symtab.h"
#include "common/wordlist.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/tmp_dir.h"

START_TEST(rng_is_seeded)
{
	struct rng a, b, c;
	rng_init(&a, 42);
	rng_init(&b, 42);
	rng_init(&c, 43);
	int differ = 0;
	for (int i = 0; i < 100; i++) {
		uint64_t x = rng_next(&a), y = rng_next(&b), z = rng_next(&c);
		ck_assert_uint_eq(x, y);
		differ += x != z;
	}
	ck_assert_int_gt(differ, 95);
}
END_TEST

START_TEST(rng_uniform_bounds)
{
	struct rng r;
	rng_init(&r, 0);
	int seen[4] = {0};
	for (int i = 0; i < 4000; i++) {
		uint64_t v = rng_uniform(&r, 3);
		ck_assert_uint_le(v, 3);
		seen[v]++;
	}
	for (int i = 0; i < 4; i++) /* each value ~1000 times; 800 is > 6 sigma away */
		ck_assert_int_gt(seen[i], 800);
	ck_assert_uint_le(rng_uniform(&r, 0), 0);
	unsigned char buf[13] = {0};
	rng_fill(&r, buf, sizeof(buf));
	int nonzero = 0;
	for (size_t i = 0; i < sizeof(buf); i++)
		nonzero += buf[i] != 0;
	ck_assert_int_gt(nonzero, 8);
}
END_TEST

static int count_entries(const char *dir)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

START_TEST(outfile_complete_or_absent)
{
	char dir[300];
	tmp_dir_make(dir, sizeof(dir), "pmusim-outfile");
	ck_assert(dir[0]);
	char path[320];
	snprintf(path, sizeof(path), "%s/out.txt", dir);
	struct outfile o;
	ck_assert_int_eq(outfile_open(&o, path), 0);
	fputs("half", o.f);
	ck_assert_int_eq(access(path, F_OK), -1); /* nothing at the target until commit */
	outfile_abort(&o);
	ck_assert_int_eq(count_entries(dir), 0);  /* and no temporary left behind */
	ck_assert_int_eq(outfile_open(&o, path), 0);
	fputs("whole\n", o.f);
	ck_assert_int_eq(outfile_commit(&o), 0);
	FILE *f = fopen(path, "r");
	char line[16] = "";
	ck_assert_ptr_nonnull(fgets(line, sizeof(line), f));
	fclose(f);
	ck_assert_str_eq(line, "whole\n");
	ck_assert_int_eq(count_entries(dir), 1);
	unlink(path);
	rmdir(dir);
	ck_assert_int_lt(outfile_open(&o, "/nonexistent-dir/x"), 0);
}
END_TEST

static void write_and_commit(const char *path, const char *text)
{
	struct outfile o;
	ck_assert_int_eq(outfile_open(&o, path), 0);
	fputs(text, o.f);
	ck_assert_int_eq(outfile_commit(&o), 0);
}


static char *read_all(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	fclose(f);
	return buf;
}

/* The reasons a user is told: a directory is refused at open (EISDIR), a missing one
 * too (ENOENT), with nothing made. */
START_TEST(outfile_open_tells_why)
{
	char dir[300];
	tmp_dir_make(dir, sizeof(dir), "pmusim-outfile-why");
	ck_assert(dir[0]);
	struct outfile o;
	errno = 0;
	ck_assert_int_lt(outfile_open(&o, dir), 0);
	ck_assert_int_eq(errno, EISDIR);
	char path[340];
	snprintf(path, sizeof(path), "%s/missing/x", dir);
	errno = 0;
	ck_assert_int_lt(outfile_open(&o, path), 0);
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(count_entries(dir), 0);
	rmdir(dir);
}
END_TEST

/* keep_old: an existing non-empty file becomes PATH.old at the commit (replacing an
 * older .old), an empty one does not (perf record's check_backup); an abort keeps both. */
START_TEST(outfile_keep_old)
{
	char dir[300];
	tmp_dir_make(dir, sizeof(dir), "pmusim-outfile-old");
	ck_assert(dir[0]);
	char path[320], old[330];
	snprintf(path, sizeof(path), "%s/perf.data", dir);
	snprintf(old, sizeof(old), "%s/perf.data.old", dir);
	struct outfile o;
	ck_assert_int_eq(outfile_open(&o, path), 0);
	o.keep_old = 1;
	ck_assert_int_eq(outfile_commit(&o), 0); /* nothing there: no .old; an empty file */
	ck_assert_int_eq(access(old, F_OK), -1);
	ck_assert_int_eq(outfile_open(&o, path), 0);
	o.keep_old = 1;
	fputs("first", o.f);
	ck_assert_int_eq(outfile_commit(&o), 0); /* the empty one is not kept */
	ck_assert_int_eq(access(old, F_OK), -1);
	ck_assert_int_eq(outfile_open(&o, path), 0);
	o.keep_old = 1;
	fputs("second", o.f);
	outfile_abort(&o);
	ck_assert_str_eq(read_all(path), "first");
	ck_assert_int_eq(access(old, F_OK), -1);
	ck_assert_int_eq(outfile_open(&o, path), 0);
	o.keep_old = 1;
	fputs("second", o.f);
	ck_assert_int_eq(outfile_commit(&o), 0);
	ck_assert_str_eq(read_all(path), "second");
	ck_assert_str_eq(read_all(old), "first");
	ck_assert_int_eq(outfile_open(&o, path), 0);
	o.keep_old = 1;
	fputs("third", o.f);
	ck_assert_int_eq(outfile_commit(&o), 0);
	ck_assert_str_eq(read_all(path), "third");
	ck_assert_str_eq(read_all(old), "second");
	unlink(path), unlink(old);
	ck_assert_int_eq(count_entries(dir), 0);
	rmdir(dir);
}
END_TEST

/* A character device is written in place: /dev/null stays the device (as root a rename
 * would have replaced it with a regular file), and no temporary is made beside it. */
START_TEST(outfile_device_stays_a_device)
{
	struct stat before, after;
	ck_assert_int_eq(stat("/dev/null", &before), 0);
	ck_assert(S_ISCHR(before.st_mode));
	int entries = count_entries("/dev");
	struct outfile o;
	ck_assert_int_eq(outfile_open(&o, "/dev/null"), 0);
	ck_assert_int_eq(count_entries("/dev"), entries);
	for (int i = 0; i < 1000; i++)
		fputs("discarded\n", o.f);
	ck_assert_int_eq(fseek(o.f, 0, SEEK_SET), 0); /* writers may seek, as perf.data's does */
	ck_assert_int_eq(outfile_commit(&o), 0);
	ck_assert_int_eq(stat("/dev/null", &after), 0);
	ck_assert(S_ISCHR(after.st_mode));
	ck_assert_uint_eq(after.st_rdev, before.st_rdev);
	ck_assert_uint_eq(after.st_ino, before.st_ino);
	ck_assert_int_eq(count_entries("/dev"), entries);
	ck_assert_int_eq(access("/dev/null.tmp", F_OK), -1);
}
END_TEST

/* A FIFO is not opened before commit (opening it blocks until a reader comes), then
 * receives the whole contents, and stays a FIFO. */
START_TEST(outfile_fifo_gets_everything_at_commit)
{
	char dir[300], fifo[320], got[320];
	tmp_dir_make(dir, sizeof(dir), "pmusim-outfile-fifo");
	ck_assert(dir[0]);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(got, sizeof(got), "%s/got", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	struct outfile o;
	alarm(20); /* a blocking open here would hang the test: fail it instead */
	ck_assert_int_eq(outfile_open(&o, fifo), 0);
	fputs("first ", o.f);
	fputs("second\n", o.f);
	pid_t reader = fork();
	if (reader == 0) {
		char cmd[700];
		snprintf(cmd, sizeof(cmd), "cat %s > %s", fifo, got);
		_exit(system(cmd) == 0 ? 0 : 1);
	}
	ck_assert_int_eq(outfile_commit(&o), 0);
	int st;
	ck_assert_int_eq(waitpid(reader, &st, 0), reader);
	ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
	alarm(0);
	ck_assert_str_eq(read_all(got), "first second\n");
	struct stat sb;
	ck_assert_int_eq(lstat(fifo, &sb), 0);
	ck_assert(S_ISFIFO(sb.st_mode));
	ck_assert_int_eq(count_entries(dir), 2); /* fifo and got: no temporary */
	tmp_dir_remove(dir);
}
END_TEST

/* A reader that goes away makes commit fail; pmusim is not killed by SIGPIPE. */
START_TEST(outfile_fifo_reader_gone_is_an_error)
{
	int p[2];
	ck_assert_int_eq(pipe(p), 0);
	close(p[0]);
	char path[64];
	snprintf(path, sizeof(path), "/proc/self/fd/%d", p[1]);
	struct outfile o;
	ck_assert_int_eq(outfile_open(&o, path), 0);
	fputs("nobody reads this\n", o.f);
	ck_assert_int_eq(outfile_commit(&o), PMUSIM_ERR_IO);
	close(p[1]);
}
END_TEST

/* /dev/stdout names whatever standard output is open on; with standard output
 * redirected to a file, that file gets the contents, and /dev stays as it was. */
START_TEST(outfile_dev_stdout_is_written_in_place)
{
	char dir[300], file[320];
	tmp_dir_make(dir, sizeof(dir), "pmusim-outfile-stdout");
	ck_assert(dir[0]);
	snprintf(file, sizeof(file), "%s/redirected", dir);
	pid_t child = fork();
	if (child == 0) {
		int fd = open(file, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || dup2(fd, 1) < 0)
			_exit(2);
		struct outfile o;
		if (outfile_open(&o, "/dev/stdout") != 0)
			_exit(3);
		fputs("through /dev/stdout\n", o.f);
		_exit(outfile_commit(&o) == 0 ? 0 : 4);
	}
	int st;
	ck_assert_int_eq(waitpid(child, &st, 0), child);
	ck_assert_int_eq(WEXITSTATUS(st), 0);
	ck_assert_str_eq(read_all(file), "through /dev/stdout\n");
	struct stat sb;
	ck_assert_int_eq(lstat("/dev/stdout", &sb), 0);
	ck_assert(S_ISLNK(sb.st_mode));
	ck_assert_int_eq(count_entries(dir), 1);
	tmp_dir_remove(dir);
}
END_TEST

/* A link to a regular file stays a link; the file it names gets the new contents. */
START_TEST(outfile_link_to_a_file_keeps_the_link)
{
	char dir[300], file[320], link[320];
	tmp_dir_make(dir, sizeof(dir), "pmusim-outfile-link");
	ck_assert(dir[0]);
	snprintf(file, sizeof(file), "%s/real", dir);
	snprintf(link, sizeof(link), "%s/link", dir);
	write_and_commit(file, "old\n");
	ck_assert_int_eq(symlink("real", link), 0);
	write_and_commit(link, "new\n");
	struct stat sb;
	ck_assert_int_eq(lstat(link, &sb), 0);
	ck_assert(S_ISLNK(sb.st_mode));
	ck_assert_str_eq(read_all(file), "new\n");
	ck_assert_int_eq(count_entries(dir), 2);
	tmp_dir_remove(dir);
}
END_TEST

/* "#!" lines as the kernel splits them (fs/binfmt_script.c). */
START_TEST(shebang_lines)
{
	static const struct {
		int line;
		const char *text;
		int want;
		const char *interp, *arg;
	} rows[] = {
		{__LINE__, "#!/bin/sh\necho\n", 1, "/bin/sh", ""},
		{__LINE__, "#! /usr/bin/env  python3 -u \nx", 1, "/usr/bin/env", "python3 -u"},
		{__LINE__, "#!/bin/sh -e\t\n", 1, "/bin/sh", "-e"},
		{__LINE__, "\177ELF\2\1\1", 0, "", ""},
		{__LINE__, "#", 0, "", ""},
		{__LINE__, "#!/bin/sh", -1, "", ""},   /* no end of line in what was read */
		{__LINE__, "#!   \n", -1, "", ""},     /* no interpreter */
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		char buf[64], interp[32], arg[32];
		size_t n = strlen(rows[i].text);
		memcpy(buf, rows[i].text, n + 1);
		int r = shebang_parse(buf, n, interp, sizeof(interp), arg, sizeof(arg));
		ck_assert_msg(r == rows[i].want, "line %d: %d", rows[i].line, r);
		if (r == 1)
			ck_assert_msg(strcmp(interp, rows[i].interp) == 0 && strcmp(arg, rows[i].arg) == 0,
			              "line %d: '%s' '%s'", rows[i].line, interp, arg);
	}
	char buf[64] = "#!/bin/a-very-long-interpreter-name\n", interp[8], arg[8];
	ck_assert_int_eq(shebang_parse(buf, strlen(buf), interp, sizeof(interp), arg, sizeof(arg)), -1);
}
END_TEST

__attribute__((noinline)) int check_common_marker(int x);
__attribute__((noinline)) int check_common_marker(int x)
{
	return x * 3 + 1;
}

START_TEST(symbols_of_this_test)
{
	/* the test binary is a PIE: find its load bias from a known function */
	struct symtab *st;
	ck_assert_int_eq(symtab_load("/proc/self/exe", 0, &st), 0);
	const struct sym *found = NULL;
	for (size_t i = 0; i < symtab_count(st); i++)
		if (strcmp(symtab_at(st, i)->name, "check_common_marker") == 0)
			found = symtab_at(st, i);
	ck_assert_ptr_nonnull(found);
	ck_assert_uint_gt(found->size, 0);
	uint64_t bias = (uint64_t)(uintptr_t)check_common_marker - found->addr;
	symtab_free(st);
	ck_assert_int_eq(symtab_load("/proc/self/exe", bias, &st), 0);
	const struct sym *s = symtab_lookup(st, (uint64_t)(uintptr_t)check_common_marker + 3);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "check_common_marker");
	ck_assert_ptr_null(symtab_lookup(st, 16));
	char name[64];
	symtab_bolt_name(s, name, sizeof(name));
	ck_assert_str_eq(name, "check_common_marker"); /* global: no /N */
	symtab_free(st);
	ck_assert_int_eq(symtab_load("/nonexistent", 0, &st), PMUSIM_ERR_IO);
	ck_assert_int_eq(symtab_load("/etc/passwd", 0, &st), PMUSIM_ERR_ELF);
}
END_TEST

/* A mapped file with no symbol table at all (a data-only object, stripped, as
 * a stripped static busybox is) adds nothing, to an empty table and to a full
 * one; under UBSan this is also the copy and sort of an empty, NULL array. */
START_TEST(symbols_of_a_file_without_functions)
{
	char dir[256], obj[300], cmd[700];
	tmp_dir_make(dir, sizeof(dir), "symtab");
	ck_assert(dir[0]);
	snprintf(obj, sizeof(obj), "%s/data.o", dir);
	snprintf(cmd, sizeof(cmd), "echo 'int data_only = 1;' | cc -x c -c -o %s - && strip --strip-all %s", obj, obj);
	ck_assert_int_eq(system(cmd), 0);
	struct symtab *st = symtab_new_empty();
	ck_assert_ptr_nonnull(st);
	ck_assert_int_eq(symtab_add_file(st, obj, 0x10000), 0);
	ck_assert_uint_eq(symtab_count(st), 0);
	ck_assert_ptr_null(symtab_lookup(st, 0x10000));
	ck_assert_int_eq(symtab_add_file(st, "/proc/self/exe", 0), 0);
	size_t n = symtab_count(st);
	ck_assert_uint_gt(n, 0);
	ck_assert_int_eq(symtab_add_file(st, obj, 0x10000), 0);
	ck_assert_uint_eq(symtab_count(st), n);
	symtab_free(st);
	tmp_dir_remove(dir);
}
END_TEST

static int cmp_int(const void *a, const void *b)
{
	int x = *(const int *)a, y = *(const int *)b;
	return (x > y) - (x < y);
}

/* Empty arrays, NULL or not, are sorted, searched and copied as nothing. */
START_TEST(arrays_empty_and_full)
{
	int key = 3, v[4] = {4, 3, 1, 2}, d[4] = {0};
	arrays_sort(NULL, 0, sizeof(int), cmp_int);
	ck_assert_ptr_null(arrays_find(&key, NULL, 0, sizeof(int), cmp_int));
	arrays_copy(NULL, NULL, 0, sizeof(int));
	arrays_move(NULL, NULL, 0, sizeof(int));
	arrays_sort(v, 4, sizeof(int), cmp_int);
	ck_assert_int_eq(v[0], 1);
	ck_assert_int_eq(v[3], 4);
	ck_assert_ptr_eq(arrays_find(&key, v, 4, sizeof(int), cmp_int), &v[2]);
	arrays_copy(d, v, 3, sizeof(int));
	ck_assert_int_eq(d[2], 3);
	ck_assert_int_eq(d[3], 0);
	arrays_move(v + 1, v, 3, sizeof(int));
	ck_assert_int_eq(v[1], 1);
	ck_assert_int_eq(v[3], 3);
}
END_TEST

/* grow_array: room kept, doubling, at least what is asked, contents moved,
 * overflowing sizes refused with the old block intact. */
START_TEST(arrays_grow)
{
	size_t cap = 0;
	int *a = grow_array(NULL, &cap, 0, sizeof(int)); /* nothing yet: a block all the same */
	ck_assert_ptr_nonnull(a);
	free(a);
	cap = 0;
	a = grow_array(NULL, &cap, 1, sizeof(int));
	ck_assert_ptr_nonnull(a);
	ck_assert_uint_eq(cap, 16);
	for (int i = 0; i < 16; i++)
		a[i] = i * 3;
	ck_assert_ptr_eq(grow_array(a, &cap, 16, sizeof(int)), a); /* room: the same block */
	a = grow_array(a, &cap, 17, sizeof(int));
	ck_assert_uint_eq(cap, 32);
	a = grow_array(a, &cap, 100, sizeof(int));
	ck_assert_uint_eq(cap, 100);
	for (int i = 0; i < 16; i++)
		ck_assert_int_eq(a[i], i * 3);
	size_t c2 = cap;
	ck_assert_ptr_null(grow_array(a, &c2, SIZE_MAX / 2, 8));
	ck_assert_uint_eq(c2, cap);
	ck_assert_int_eq(a[15], 45);
	free(a);
}
END_TEST

/* A stripped library (Debian's libc.so.6) gets its functions from its detached
 * debugging symbols (libc6-dbg, found by build id, as perf and gdb look them
 * up): a static function that .dynsym lacks is there, at the address readelf
 * gives for it in the debug file. */
START_TEST(stripped_library_symbols_from_debug_file)
{
	const char *lib = "/lib/x86_64-linux-gnu/libc.so.6";
	FILE *p = popen("f=$(readelf -n /lib/x86_64-linux-gnu/libc.so.6 2>/dev/null | awk '/Build ID/ {print $3}'); "
			"readelf -sW /usr/lib/debug/.build-id/$(echo $f | cut -c1-2)/$(echo $f | cut -c3-).debug 2>/dev/null | "
			"awk '$8 == \"__libc_start_call_main\" {print $2}'", "r");
	ck_assert_ptr_nonnull(p);
	char hex[64] = "";
	ck_assert_msg(fgets(hex, sizeof(hex), p) != NULL, "no debug file for libc.so.6 (libc6-dbg, make deps)");
	pclose(p);
	uint64_t want = strtoull(hex, NULL, 16);
	ck_assert_uint_gt(want, 0);
	struct symtab *st;
	ck_assert_int_eq(symtab_load(lib, 0x10000, &st), 0);
	const struct sym *s = symtab_lookup(st, want + 0x10000);
	ck_assert_ptr_nonnull(s);
	ck_assert_str_eq(s->name, "__libc_start_call_main");
	ck_assert_uint_eq(s->addr, want + 0x10000);
	symtab_free(st);
}
END_TEST

/* JSON strings: quotes, backslashes and control characters escaped, UTF-8 kept. */
START_TEST(json_strings)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	json_put_str(f, "a\"b\\c\n\001d\303\251");
	json_put_str(f, "");
	fclose(f);
	ck_assert_str_eq(buf, "\"a\\\"b\\\\c\\u000a\\u0001d\xc3\xa9\"\"\"");
	free(buf);
}
END_TEST

START_TEST(error_texts)
{
	const int codes[] = {PMUSIM_OK, PMUSIM_ERR_NOMEM, PMUSIM_ERR_IO, PMUSIM_ERR_ELF, PMUSIM_ERR_ARCH,
			     PMUSIM_ERR_DYNAMIC, PMUSIM_ERR_UNSUPPORTED, PMUSIM_ERR_ARG, PMUSIM_ERR_EMU,
			     PMUSIM_ERR_DECODE, PMUSIM_ERR_INTERNAL, PMUSIM_ERR_FORMAT};
	size_t n = sizeof(codes) / sizeof(codes[0]);
	for (size_t i = 0; i < n; i++) {
		ck_assert_uint_gt(strlen(pmusim_strerror(codes[i])), 3);
		for (size_t j = 0; j < i; j++)
			ck_assert_str_ne(pmusim_strerror(codes[i]), pmusim_strerror(codes[j]));
	}
	ck_assert_str_eq(pmusim_strerror(-999), "unknown error");
}
END_TEST

/* The message is written only where there is room, cut to fit, and the code comes back. */
START_TEST(failure_messages)
{
	char msg[8];
	memset(msg, 'x', sizeof(msg));
	ck_assert_int_eq(pmusim_fail(NULL, 64, PMUSIM_ERR_IO, "%s", "ignored"), PMUSIM_ERR_IO);
	ck_assert_int_eq(pmusim_fail(msg, 0, PMUSIM_ERR_ARG, "%s", "ignored"), PMUSIM_ERR_ARG);
	ck_assert_int_eq(msg[0], 'x');
	ck_assert_int_eq(pmusim_fail(msg, sizeof(msg), PMUSIM_ERR_ELF, "%s: %d", "a", 7),
			 PMUSIM_ERR_ELF);
	ck_assert_str_eq(msg, "a: 7");
	ck_assert_int_eq(pmusim_fail(msg, sizeof(msg), 0, "%s", "longer than eight"), 0);
	ck_assert_str_eq(msg, "longer ");
}
END_TEST

/* A message is one line whatever the names in it hold: control characters
 * escaped, an escape that does not fit left out whole. */
START_TEST(failure_messages_are_one_line)
{
	char msg[64];
	ck_assert_int_eq(pmusim_fail(msg, sizeof(msg), PMUSIM_ERR_ELF, "%s: not an ELF file", "/a\nb\tc\033d\\e\r"),
			 PMUSIM_ERR_ELF);
	ck_assert_str_eq(msg, "/a\\nb\\tc\\x1bd\\e\\r: not an ELF file");
	char small[8];
	pmusim_fail(small, sizeof(small), 0, "%s", "abcde\nf");
	ck_assert_str_eq(small, "abcde\\n");
	pmusim_fail(small, sizeof(small), 0, "%s", "abcdef\n");
	ck_assert_str_eq(small, "abcdef");
	char res[32] = "SIGSEGV at 0x0 in /x\n/y";
	pmusim_one_line(res, sizeof(res));
	ck_assert_str_eq(res, "SIGSEGV at 0x0 in /x\\n/y");
	pmusim_one_line(res, sizeof(res)); /* nothing left to escape */
	ck_assert_str_eq(res, "SIGSEGV at 0x0 in /x\\n/y");
}
END_TEST

/* Input files: a regular file opens (blocking again), anything else is refused
 * at once with a reason: a FIFO without a writer, a device, a directory. */
START_TEST(infile_regular_only)
{
	char dir[256], fifo[300], file[300];
	const char *why = "unset";
	tmp_dir_make(dir, sizeof(dir), "infile");
	ck_assert(dir[0]);
	snprintf(fifo, sizeof(fifo), "%s/fifo", dir);
	snprintf(file, sizeof(file), "%s/file", dir);
	ck_assert_int_eq(mkfifo(fifo, 0600), 0);
	FILE *w = fopen(file, "w");
	ck_assert_ptr_nonnull(w);
	fputs("text\n", w);
	fclose(w);

	int fd = infile_open(file, &why);
	ck_assert_int_ge(fd, 0);
	ck_assert_int_eq(fcntl(fd, F_GETFL) & O_NONBLOCK, 0);
	ck_assert_int_ne(fcntl(fd, F_GETFD) & FD_CLOEXEC, 0);
	close(fd);
	FILE *f = infile_fopen(file, &why);
	ck_assert_ptr_nonnull(f);
	char line[16];
	ck_assert_str_eq(fgets(line, sizeof(line), f), "text\n");
	fclose(f);

	const char *refused[] = {fifo, "/dev/zero", "/dev/null", dir};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		why = "unset";
		errno = 0;
		ck_assert_int_eq(infile_open(refused[i], &why), -1);
		ck_assert_str_eq(why, "not a regular file");
		ck_assert_int_eq(errno, EINVAL);
		why = "unset";
		ck_assert_ptr_null(infile_fopen(refused[i], &why));
		ck_assert_str_eq(why, "not a regular file");
	}
	snprintf(file, sizeof(file), "%s/missing", dir);
	ck_assert_int_eq(infile_open(file, &why), -1);
	ck_assert_str_eq(why, "No such file or directory");
	ck_assert_int_eq(errno, ENOENT);
	ck_assert_int_eq(infile_open(file, NULL), -1);
	tmp_dir_remove(dir);
}
END_TEST

/* Separated word lists: whole items only, any separator, empty items. */
START_TEST(word_lists)
{
	ck_assert_int_eq(word_listed("ls,sh", ',', "sh"), 1);
	ck_assert_int_eq(word_listed("ls,sh", ',', "ls"), 1);
	ck_assert_int_eq(word_listed("ls,sh", ',', "l"), 0);
	ck_assert_int_eq(word_listed("ls,sh", ',', "ls,sh"), 0);
	ck_assert_int_eq(word_listed("-a --all-cpus", ' ', "--all-cpus"), 1);
	ck_assert_int_eq(word_listed("-a --all-cpus", ' ', "--all"), 0);
	ck_assert_int_eq(word_listed("-a --all-cpus", ',', "-a"), 0);
	ck_assert_int_eq(word_listed("a,,b", ',', ""), 1);
	ck_assert_int_eq(word_listed("", ',', ""), 0);
	ck_assert_int_eq(word_listed("a,", ',', "a"), 1);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("common");
	TCase *tc = tcase_create("common");
	tcase_add_test(tc, rng_is_seeded);
	tcase_add_test(tc, arrays_grow);
	tcase_add_test(tc, arrays_empty_and_full);
	tcase_add_test(tc, symbols_of_a_file_without_functions);
	tcase_add_test(tc, json_strings);
	tcase_add_test(tc, stripped_library_symbols_from_debug_file);
	tcase_add_test(tc, rng_uniform_bounds);
	tcase_add_test(tc, outfile_complete_or_absent);
	tcase_add_test(tc, outfile_open_tells_why);
	tcase_add_test(tc, outfile_keep_old);
	tcase_add_test(tc, outfile_device_stays_a_device);
	tcase_add_test(tc, outfile_fifo_gets_everything_at_commit);
	tcase_add_test(tc, outfile_fifo_reader_gone_is_an_error);
	tcase_add_test(tc, outfile_dev_stdout_is_written_in_place);
	tcase_add_test(tc, outfile_link_to_a_file_keeps_the_link);
	tcase_add_test(tc, shebang_lines);
	tcase_add_test(tc, symbols_of_this_test);
	tcase_add_test(tc, error_texts);
	tcase_add_test(tc, failure_messages);
	tcase_add_test(tc, failure_messages_are_one_line);
	tcase_add_test(tc, word_lists);
	tcase_add_test(tc, infile_regular_only);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
