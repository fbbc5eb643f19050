/* What a process sees of itself through /proc/self and its descriptors, and what it
 * can reach of the program that runs it. Prints "name=value" lines.
 *
 * Usage: self_view DIR [PID]
 *   Section "self": the same lines natively and under any emulator that gives the
 *   program its own view (exe, maps, cmdline, stat, status, fd/, descriptors, getcwd
 *   after chdir DIR, a file made there by a relative name).
 *   Section "reach": process PID (without one: another process whose command line
 *   names pmusim and self_view), and what
 *   the program could do to it: open its mem, maps, fd/N (directly and through a
 *   symbolic link), read it with process_vm_readv, ptrace it, signal 0 to it; and every
 *   file named *.tmp.* in the starting directory (pmusim's outputs being written),
 *   opened for writing and removed; its umask (0777 at the end) applies to its files.
 *   Natively nothing names pmusim: "found=0". */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

static ssize_t slurp(const char *path, char *buf, size_t len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	size_t n = 0;
	ssize_t r;
	while (n + 1 < len && (r = read(fd, buf + n, len - 1 - n)) > 0)
		n += (size_t)r;
	close(fd);
	buf[n] = 0;
	return (ssize_t)n;
}

static char big[1 << 20];

/* Lines of maps that name a file other than the program (bracketed names are the
 * kernel's: [stack], [heap], [vdso]...). */
static void maps(const char *exe)
{
	if (slurp("/proc/self/maps", big, sizeof(big)) < 0) {
		printf("maps=unreadable\n");
		return;
	}
	unsigned long main_at = (unsigned long)(uintptr_t)&maps;
	int has_code = 0, foreign = 0, stack = 0;
	for (char *l = strtok(big, "\n"); l; l = strtok(NULL, "\n")) {
		unsigned long lo, hi;
		char perms[8];
		int name_at = 0;
		if (sscanf(l, "%lx-%lx %7s %*s %*s %*s %n", &lo, &hi, perms, &name_at) < 3)
			continue;
		const char *name = name_at ? l + name_at : "";
		if (lo <= main_at && main_at < hi && perms[2] == 'x' && strcmp(name, exe) == 0)
			has_code = 1;
		if (strcmp(name, "[stack]") == 0 && lo <= (unsigned long)(uintptr_t)&lo && (uintptr_t)&lo < hi)
			stack = 1;
		if (*name && *name != '[' && strcmp(name, exe) != 0)
			foreign++;
	}
	printf("maps_code_is_exe=%d\nmaps_stack_holds_locals=%d\nmaps_other_files=%d\n", has_code, stack, foreign);
}

static int open_fds(int *set, int max)
{
	int n = 0;
	for (int i = 0; i < max; i++)
		set[i] = fcntl(i, F_GETFD) >= 0, n += set[i];
	return n;
}

static void descriptors(void)
{
	static int set[1024];
	int n = open_fds(set, 1024);
	DIR *d = opendir("/proc/self/fd");
	int listed = 0, agree = d != NULL;
	int self_fd = d ? dirfd(d) : -1;
	struct dirent *e;
	while (d && (e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		int fd = atoi(e->d_name);
		if (fd == self_fd)
			continue;
		listed++;
		if (fd < 0 || fd >= 1024 || !set[fd])
			agree = 0;
	}
	if (d)
		closedir(d);
	printf("fds_open=%d\nfd_listing_agrees=%d\n", n, agree && listed == n);
	/* the descriptors it did not open: only 0, 1 and 2 */
	int extra = 0;
	for (int i = 3; i < 1024; i++)
		extra += set[i];
	printf("fds_not_its_own=%d\n", extra);
}

static void identity(char **argv, int argc)
{
	char buf[4096];
	ssize_t n = slurp("/proc/self/cmdline", buf, sizeof(buf));
	size_t want = 0;
	for (int i = 0; i < argc; i++)
		want += strlen(argv[i]) + 1;
	printf("cmdline_is_argv=%d\n", n == (ssize_t)want && memcmp(buf, argv[0], want) == 0);
	int pid = -1;
	char comm[64] = "";
	if (slurp("/proc/self/stat", buf, sizeof(buf)) > 0)
		sscanf(buf, "%d (%63[^)])", &pid, comm);
	const char *base = strrchr(argv[0], '/');
	printf("stat_pid_is_getpid=%d\nstat_comm_is_name=%d\n", pid == getpid(),
	       strncmp(comm, base ? base + 1 : argv[0], 15) == 0);
	int spid = -1, sppid = -1;
	if (slurp("/proc/self/status", buf, sizeof(buf)) > 0) {
		char *p = strstr(buf, "\nPid:");
		if (p)
			spid = atoi(p + 5);
		p = strstr(buf, "\nPPid:");
		if (p)
			sppid = atoi(p + 6);
	}
	printf("status_pid_is_getpid=%d\nstatus_ppid_is_getppid=%d\n", spid == getpid(), sppid == getppid());
	char link[64];
	snprintf(link, sizeof(link), "/proc/%d", getpid());
	ssize_t k = readlink("/proc/self", buf, sizeof(buf) - 1);
	buf[k > 0 ? k : 0] = 0;
	printf("proc_self_is_getpid=%d\n", atoi(buf) == getpid());
	struct stat a, b;
	printf("proc_pid_is_self=%d\n", stat(link, &a) == 0 && stat("/proc/self/", &b) == 0 &&
						a.st_ino == b.st_ino);
	/* its memory through /proc/self/mem: the bytes of a local, or a refusal */
	volatile unsigned long secret = 0x5eedf00dcafe1234UL;
	int fd = open("/proc/self/mem", O_RDONLY);
	unsigned long got = 0;
	int mem = fd < 0 ? 2 : pread(fd, &got, 8, (off_t)(uintptr_t)&secret) == 8 && got == secret ? 1 : 0;
	if (fd >= 0)
		close(fd);
	printf("mem_own_bytes_or_refused=%d\n", mem != 0);
	/* and through process_vm_readv/writev on its own pid */
	unsigned long copy = 0, back = 0x1122334455667788UL;
	struct iovec l = {&copy, 8}, r = {(void *)&secret, 8};
	long rn = syscall(SYS_process_vm_readv, getpid(), &l, 1, &r, 1, 0);
	int read_ok = rn == 8 && copy == secret;
	struct iovec l2 = {&back, 8}, r2 = {&copy, 8};
	long m = syscall(SYS_process_vm_writev, getpid(), &l2, 1, &r2, 1, 0);
	printf("vm_readv_own=%d\nvm_writev_own=%d\n", read_ok,
	       m == 8 && copy == back);
}

static void cwd(const char *dir, const char *exe)
{
	char buf[PATH_MAX], want[PATH_MAX];
	if (!realpath(dir, want) || chdir(dir) != 0) {
		printf("chdir=failed\n");
		return;
	}
	printf("getcwd_is_dir=%d\n", getcwd(buf, sizeof(buf)) && strcmp(buf, want) == 0);
	ssize_t n = readlink("/proc/self/cwd", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("proc_cwd_is_dir=%d\n", strcmp(buf, want) == 0);
	FILE *f = fopen("made_here", "w");
	printf("relative_create=%d\n", f && fputs("x\n", f) >= 0 && fclose(f) == 0);
	n = readlink("/proc/self/exe", buf, sizeof(buf) - 1);
	buf[n > 0 ? n : 0] = 0;
	printf("exe_is_program=%d\n", strcmp(buf, exe) == 0);
}

static const char *err_name(int ok, int e)
{
	return ok ? "ALLOWED" : e == EACCES ? "EACCES" : e == EPERM ? "EPERM" : e == ESRCH ? "ESRCH" : e == ENOENT ? "ENOENT"
	       : e == ELOOP ? "ELOOP" : e == ENOSYS ? "ENOSYS" : "refused";
}

static void try_open(const char *what, const char *path, int flags)
{
	int fd = open(path, flags);
	int e = errno;
	printf("%s=%s\n", what, err_name(fd >= 0, e));
	if (fd >= 0)
		close(fd);
}

/* Another process whose command line names pmusim: its pid, or 0. */
static int find_pmusim(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	int found = 0;
	char path[300], buf[4096];
	while (d && (e = readdir(d))) {
		int pid = atoi(e->d_name);
		if (pid <= 0 || pid == getpid())
			continue;
		snprintf(path, sizeof(path), "/proc/%d/cmdline", pid);
		ssize_t n = slurp(path, buf, sizeof(buf));
		for (ssize_t i = 0; i < n; i++)
			if (!buf[i])
				buf[i] = ' ';
		if (n > 0 && strstr(buf, "pmusim") && strstr(buf, "self_view")) {
			found = pid;
			break;
		}
	}
	if (d)
		closedir(d);
	return found;
}

static void reach(const char *start_dir, int pid)
{
	if (!pid)
		pid = find_pmusim();
	printf("found=%d\n", pid != 0);
	if (pid) {
		char p[300];
		snprintf(p, sizeof(p), "/proc/%d/mem", pid);
		try_open("its_mem_rw", p, O_RDWR);
		try_open("its_mem_r", p, O_RDONLY);
		snprintf(p, sizeof(p), "/proc/%d/maps", pid);
		try_open("its_maps", p, O_RDONLY);
		int fds_opened = 0;
		for (int i = 0; i < 64; i++) {
			snprintf(p, sizeof(p), "/proc/%d/fd/%d", pid, i);
			int fd = open(p, O_RDONLY);
			if (fd >= 0)
				fds_opened++, close(fd);
		}
		printf("its_fds_opened=%d\n", fds_opened);
		snprintf(p, sizeof(p), "/proc/%d/fd/3", pid);
		unlink("link_to_its_fd");
		int linked = symlink(p, "link_to_its_fd") == 0;
		try_open("its_fd_through_symlink", "link_to_its_fd", O_WRONLY);
		if (linked)
			unlink("link_to_its_fd");
		snprintf(p, sizeof(p), "/proc/%d", pid);
		unlink("link_to_its_dir");
		linked = symlink(p, "link_to_its_dir") == 0;
		try_open("its_mem_through_symlink", "link_to_its_dir/mem", O_RDWR);
		if (linked)
			unlink("link_to_its_dir");
		char buf[8];
		struct iovec l = {buf, 8}, r = {(void *)0x400000, 8};
		long rv = syscall(SYS_process_vm_readv, pid, &l, 1, &r, 1, 0);
		printf("process_vm_readv=%s\n", err_name(rv >= 0, errno));
		rv = syscall(SYS_process_vm_writev, pid, &l, 1, &r, 1, 0);
		printf("process_vm_writev=%s\n", err_name(rv >= 0, errno));
		rv = ptrace(PTRACE_ATTACH, pid, 0, 0);
		printf("ptrace_attach=%s\n", err_name(rv >= 0, errno));
		rv = kill(pid, 0);
		printf("kill_0=%s\n", err_name(rv >= 0, errno));
	}
	/* the outputs pmusim is writing next to where it started */
	DIR *d = opendir(start_dir);
	struct dirent *e;
	int tmps = 0, written = 0, removed = 0;
	char p[PATH_MAX + 300];
	while (d && (e = readdir(d))) {
		if (!strstr(e->d_name, ".tmp."))
			continue;
		tmps++;
		snprintf(p, sizeof(p), "%s/%s", start_dir, e->d_name);
		int fd = open(p, O_WRONLY);
		if (fd >= 0)
			written += write(fd, "clobbered", 9) == 9, close(fd);
		removed += unlink(p) == 0;
	}
	if (d)
		closedir(d);
	printf("output_tmps_seen=%d\noutput_tmps_written=%d\noutput_tmps_removed=%d\n", tmps > 0, written, removed);
	/* its umask is its own: the file it makes has none of the bits, whatever the
	 * outputs of the program running it get */
	umask(0777);
	unlink("after_umask");
	int fd = open("after_umask", O_CREAT | O_WRONLY, 0666);
	struct stat st;
	printf("umask_applies=%d\n", fd >= 0 && fstat(fd, &st) == 0 && (st.st_mode & 0777) == 0);
	if (fd >= 0)
		close(fd);
	unlink("after_umask");
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: self_view DIR\n");
		return 2;
	}
	char exe[PATH_MAX], start[PATH_MAX];
	if (!realpath(argv[0], exe) || !getcwd(start, sizeof(start)))
		return 1;
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("[self]\n");
	maps(exe);
	descriptors();
	identity(argv, argc);
	cwd(argv[1], exe);
	printf("[reach]\n");
	reach(start, argc > 2 ? atoi(argv[2]) : 0);
	return 0;
}
