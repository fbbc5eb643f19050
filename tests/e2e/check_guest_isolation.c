/* The program sees only itself and cannot reach pmusim, checked from inside the guest
 * (workloads/self_view.c): its view of itself (/proc/self maps, exe, cmdline, stat,
 * status, fd/, its descriptors, getcwd after chdir) is the view the same program has
 * natively, line for line; and pmusim's memory, descriptors and output files stay out
 * of reach, whatever the program tries (pmusim's /proc/<pid>/mem and fd/N directly and
 * through symbolic links, process_vm_readv/writev, ptrace, signals, opening and
 * removing the output temporaries). A chdir of the program moves neither pmusim's
 * relative outputs nor its own files: the recording lands where pmusim was started and
 * perf reads it. Requests for more address space than exists return at once. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* Runs argv in directory dir with stdout to out; with with_pid, the process's own pid
 * (the pmusim that exec replaces it with) is appended. The exit status. */
static int run_in(const char *dir, const char *const *argv, int with_pid, const char *out, const char *err)
{
	pid_t pid = fork();
	if (pid == 0) {
		const char *v[32];
		size_t n = 0;
		for (; argv[n]; n++)
			v[n] = argv[n];
		char me[32];
		if (with_pid) {
			snprintf(me, sizeof(me), "%d", (int)getpid());
			v[n++] = me;
		}
		v[n] = NULL;
		int o = open(out, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int e = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		char prog[4096];
		if (strchr(v[0], '/') && realpath(v[0], prog))
			v[0] = prog; /* the test's relative paths, before the chdir */
		if (o < 0 || e < 0 || chdir(dir) != 0)
			_exit(126);
		dup2(o, 1), dup2(e, 2);
		/* nothing of the test's own descriptors reaches the program */
		for (int fd = 3; fd < 1024; fd++)
			close(fd);
		execvp(v[0], (char *const *)v);
		_exit(127);
	}
	int st;
	waitpid(pid, &st, 0);
	return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

/* The value of "key=" in text, or "" (a static buffer). */
static const char *val(const char *text, const char *key)
{
	static char v[64];
	size_t k = strlen(key);
	v[0] = 0;
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL)
		if (strncmp(l, key, k) == 0 && l[k] == '=') {
			size_t n = strcspn(l + k + 1, "\n");
			snprintf(v, sizeof(v), "%.*s", (int)(n < sizeof(v) - 1 ? n : sizeof(v) - 1), l + k + 1);
			break;
		}
	return v;
}

/* The [self] section without the lines that count descriptors inherited natively. */
static char *self_section(const char *text)
{
	const char *a = strstr(text, "[self]\n"), *b = strstr(text, "[reach]\n");
	ck_assert_msg(a && b && b > a, "no sections in: %s", text);
	char *s = calloc(1, (size_t)(b - a) + 1);
	for (const char *l = a; l < b; l = strchr(l, '\n') + 1)
		if (strncmp(l, "fds_open=", 9) != 0 && strncmp(l, "fds_not_its_own=", 16) != 0)
			strncat(s, l, (size_t)(strchr(l, '\n') + 1 - l));
	return s;
}

static char dir[4096], sub[4200];

/* The workload's absolute path: the tests run it from other directories. */
static const char *prog(void)
{
	static char p[4096];
	ck_assert_ptr_nonnull(realpath(wl("self_view"), p));
	return p;
}

static void fresh_dirs(const char *name)
{
	snprintf(dir, sizeof(dir), "%s", tmp_path_kept(name));
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	ck_assert_int_eq(system(cmd), 0);
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	snprintf(sub, sizeof(sub), "%s/d", dir);
	ck_assert_int_eq(mkdir(sub, 0755), 0);
}

START_TEST(own_view_is_the_native_view)
{
	fresh_dirs("native");
	const char *out = tmp_path_kept("native.out"), *err = tmp_path_kept("native.err");
	const char *nat[] = {prog(), "d", NULL};
	ck_assert_int_eq(run_in(dir, nat, 0, out, err), 0);
	char *native = slurp(out, NULL);
	ck_assert_str_eq(val(native, "found"), "0");

	static const char *const modes[][4] = {{"run", NULL}, {"record", "-o", "rel.data", NULL},
					       {"stat", NULL}};
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		fresh_dirs("sim");
		const char *argv[16];
		size_t n = 0;
		argv[n++] = pmusim();
		for (size_t i = 0; modes[m][i]; i++)
			argv[n++] = modes[m][i];
		argv[n++] = "--";
		argv[n++] = prog();
		argv[n++] = "d";
		argv[n] = NULL;
		const char *so = tmp_path_kept("sim.out"), *se = tmp_path_kept("sim.err");
		int st = run_in(dir, argv, 0, so, se);
		char *sim = slurp(so, NULL);
		ck_assert_msg(st == 0, "%s: exit %d: %s", modes[m][0], st, slurp(se, NULL));
		char *a = self_section(native), *b = self_section(sim);
		ck_assert_msg(strcmp(a, b) == 0, "%s: native\n%s\nunder pmusim\n%s", modes[m][0], a, b);
		/* pmusim's descriptors are not the program's */
		ck_assert_str_eq(val(sim, "fds_not_its_own"), "0");
		ck_assert_str_eq(val(sim, "fds_open"), "3");
		char made[4300];
		snprintf(made, sizeof(made), "%s/made_here", sub);
		ck_assert_msg(access(made, F_OK) == 0, "%s: the relative create went elsewhere", modes[m][0]);
		free(a), free(b), free(sim);
	}
	free(native);
}
END_TEST

START_TEST(pmusim_is_out_of_reach)
{
	fresh_dirs("reach");
	const char *argv[] = {pmusim(), "record", "-o", "rel.data", "--", prog(), "d", NULL};
	const char *so = tmp_path_kept("reach.out"), *se = tmp_path_kept("reach.err");
	int st = run_in(dir, argv, 1, so, se);
	char *out = slurp(so, NULL), *err = slurp(se, NULL);
	ck_assert_msg(st == 0, "exit %d: %s", st, err);
	ck_assert_str_eq(val(out, "found"), "1");
	static const char *const refused[] = {"its_mem_rw", "its_mem_r", "its_fd_through_symlink",
					      "its_mem_through_symlink", "process_vm_readv", "process_vm_writev",
					      "ptrace_attach", "kill_0"};
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		const char *v = val(out, refused[i]);
		ck_assert_msg(*v && strcmp(v, "ALLOWED") != 0, "%s: %s\n%s", refused[i], v, out);
	}
	/* /proc/<pmusim's pid>/fd/N are the program's own three */
	ck_assert_str_eq(val(out, "its_fds_opened"), "3");
	/* the recording being written was there, and stayed untouched */
	ck_assert_str_eq(val(out, "output_tmps_seen"), "1");
	ck_assert_str_eq(val(out, "output_tmps_written"), "0");
	ck_assert_str_eq(val(out, "output_tmps_removed"), "0");
	ck_assert_str_eq(val(out, "umask_applies"), "1");
	/* after the program's chdir, the relative -o still lands where pmusim started */
	char data[4300];
	snprintf(data, sizeof(data), "%s/rel.data", dir);
	const char *script[] = {"perf", "script", "-i", data, NULL};
	const char *po = tmp_path_kept("script.out"), *pe = tmp_path_kept("script.err");
	ck_assert_msg(run_in(dir, script, 0, po, pe) == 0, "perf script: %s", slurp(pe, NULL));
	/* the program's umask 0777 is not pmusim's: the recording has the usual mode */
	struct stat dst;
	mode_t um = umask(0);
	umask(um);
	ck_assert_int_eq(stat(data, &dst), 0);
	ck_assert_int_eq(dst.st_mode & 0777, 0666 & ~um);
	char *text = slurp(po, NULL);
	ck_assert_msg(text && strstr(text, "self_view"), "perf script shows no sample of self_view");
	free(text), free(out), free(err);
}
END_TEST

/* Requests for more memory than exists, and holes punched one by one: answered at once
 * (CPU time of the whole run, so that a loaded machine does not fail it; before the
 * bounds, the holes alone ran 5 minutes and the brk of +64 TiB did not end). */
START_TEST(huge_address_space_requests_return_at_once)
{
	const char *out = tmp_path_kept("mem.out"), *err = tmp_path_kept("mem.err");
	char mem[4096];
	ck_assert_ptr_nonnull(realpath(wl("mem_abuse"), mem));
	const char *argv[] = {pmusim(), "run", "--", mem, NULL};
	pid_t pid = fork();
	if (pid == 0) {
		freopen(out, "w", stdout);
		freopen(err, "w", stderr);
		execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	struct rusage ru;
	ck_assert_int_eq(wait4(pid, &st, 0, &ru), pid);
	double cpu = (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6 + (double)ru.ru_stime.tv_sec +
		     ru.ru_stime.tv_usec / 1e6;
	char *o = slurp(out, NULL), *e = slurp(err, NULL);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "status %d: %s", st, e);
	/* about 1 s alone, 2.2 s beside make test's other suites; the sanitized build's
	 * interceptors make the area copies of the hole punching dearer still */
	double bound = e2e_sanitized() ? 8.0 : 3.0;
	ck_assert_msg(cpu < bound, "%.2f s of CPU time (bound %.0f s)", cpu, bound);
	static const char *const want[][2] = {
	    {"brk_16TiB", "refused"}, {"brk_64TiB", "refused"}, {"mmap_16TiB_readable", "ENOMEM"},
	    {"mmap_64TiB_reserved", "done"}, {"mprotect_64TiB", "ENOMEM"}, {"munmap_64TiB", "done"},
	    {"mmap_64MiB", "done"}, {"munmap_holes_until", "ENOMEM"}};
	for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++)
		ck_assert_msg(strcmp(val(o, want[i][0]), want[i][1]) == 0, "%s=%s, want %s", want[i][0],
			      val(o, want[i][0]), want[i][1]);
	free(o), free(e);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("guest_isolation");
	TCase *tc = tcase_create("guest_isolation");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, own_view_is_the_native_view);
	tcase_add_test(tc, pmusim_is_out_of_reach);
	tcase_add_test(tc, huge_address_space_requests_return_at_once);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
