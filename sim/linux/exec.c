/* execve (see sim/linux/process.h): the program named by the guest (an x86-64 ELF,
 * or a "#!" script run by its interpreter) replaces the running process's
 * image. The call checks everything it can before the point of no return and
 * then asks the run loop to stop: the old Unicorn engine can only be closed once
 * emulation stopped (proc_exec). Close-on-exec files are closed, caught
 * signals return to their default action, other threads end (Linux's
 * de_thread), a vfork parent goes on. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/shebang.h"
#include "sim/linux/guest_path.h"
#include "sim/linux/linux.h"
#include "sim/linux/process.h"
#include "sim/linux/sched.h"
#include "sim/linux/sys_timer.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"
#include "sim/stacks.h"

#define MAX_EXEC_STRINGS 4096
#define MAX_EXEC_BYTES (2u << 20)

static char **read_strings(struct sim *s, uint64_t addr, size_t *bytes, int64_t *err)
{
	size_t n = 0;
	char **v = calloc(MAX_EXEC_STRINGS + 1, sizeof(char *));
	*err = -ENOMEM;
	if (!v)
		return NULL;
	char buf[PATH_MAX * 4];
	for (; addr; n++) {
		uint64_t ptr;
		if (n == MAX_EXEC_STRINGS) {
			*err = -E2BIG;
			goto fail;
		}
		if (mem_read(s, addr + 8 * n, &ptr, 8) < 0) {
			*err = -EFAULT;
			goto fail;
		}
		if (!ptr)
			break;
		int r = mem_read_str(s, ptr, buf, sizeof(buf));
		if (r < 0) {
			*err = r == -ENAMETOOLONG ? -E2BIG : r;
			goto fail;
		}
		*bytes += strlen(buf) + 1;
		if (*bytes > MAX_EXEC_BYTES) {
			*err = -E2BIG;
			goto fail;
		}
		if (!(v[n] = strdup(buf)))
			goto fail;
	}
	*err = 0;
	return v;
fail:
	free_strings(v);
	return NULL;
}

/* 0 when path is an x86-64 ELF executable this machine can load; else -errno.
 * A "#!" script gives its interpreter and optional argument instead (*interp). */
static int64_t check_program(const char *path, char *interp, size_t ilen, char *arg, size_t alen)
{
	struct stat st;
	if (stat(path, &st) < 0)
		return -errno;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
		return -EACCES;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	unsigned char h[256];
	ssize_t n = read(fd, h, sizeof(h) - 1);
	close(fd);
	int script = shebang_parse((char *)h, n > 0 ? (size_t)n : 0, interp, ilen, arg, alen);
	if (script)
		return script > 0 ? 1 : -ENOEXEC;
	if (n < 20 || memcmp(h, "\177ELF", 4) != 0 || h[4] != 2 /* ELFCLASS64 */ || h[18] != 62 /* EM_X86_64 */)
		return -ENOEXEC;
	return 0;
}

/* A host name for what the guest named: absolute, or below the host path of the
 * directory it is relative to (the guest's working directory is not pmusim's). */
static int host_name(const struct gpath *gp, char *out, size_t len)
{
	int n = gp->path[0] == '/' || gp->dirfd == AT_FDCWD
			? snprintf(out, len, "%s", gp->path)
			: snprintf(out, len, "/proc/self/fd/%d/%s", gp->dirfd, gp->path);
	return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int64_t sys_execve(struct sim *s, uint64_t pathp, uint64_t argvp, uint64_t envpp)
{
	char path[PATH_MAX], host[PATH_MAX], interp[PATH_MAX], iarg[PATH_MAX];
	struct gpath gp;
	int r = gpath_host(s, (uint64_t)AT_FDCWD, pathp, &gp);
	if (r < 0 || (r = host_name(&gp, host, sizeof(host))) < 0)
		return r;
	/* AT_EXECFN and comm: the name as given; /proc/self/exe is the guest program, not
	 * pmusim (busybox re-executes itself) */
	if (gp.dirfd == AT_FDCWD && strcmp(gp.path, s->p->exe_abs) == 0)
		snprintf(path, sizeof(path), "%s", s->p->exe_abs);
	else if ((r = mem_read_str(s, pathp, path, sizeof(path))) < 0)
		return r;
	size_t bytes = 0;
	int64_t err;
	char **argv = read_strings(s, argvp, &bytes, &err);
	if (!argv)
		return err;
	char **envp = read_strings(s, envpp, &bytes, &err);
	if (!envp) {
		free_strings(argv);
		return err;
	}
	char *prog = strdup(path);
	err = prog ? check_program(host, interp, sizeof(interp), iarg, sizeof(iarg)) : -ENOMEM;
	if (err == 1) { /* a script: its interpreter runs with the script's path */
		int64_t e2 = check_program(interp, path, sizeof(path), path, sizeof(path));
		snprintf(host, sizeof(host), "%s", interp);
		size_t n = 0;
		while (argv[n])
			n++;
		char **nv = calloc(n + 4, sizeof(char *));
		if (e2 != 0 || !nv) {
			free(nv);
			err = e2 < 0 ? e2 : -ENOEXEC;
		} else {
			size_t k = 0;
			nv[k++] = strdup(interp);
			if (iarg[0])
				nv[k++] = strdup(iarg);
			nv[k++] = prog;
			for (size_t i = 1; i < n; i++)
				nv[k++] = argv[i];
			free(argv[0]);
			free(argv);
			argv = nv;
			prog = strdup(interp);
			err = prog ? 0 : -ENOMEM;
		}
	}
	char abs[PATH_MAX];
	char *exe = err < 0 ? NULL : strdup(realpath(host, abs) ? abs : host);
	if (err >= 0 && !exe)
		err = -ENOMEM;
	if (err < 0) {
		free(prog);
		free(exe);
		free_strings(argv);
		free_strings(envp);
		return err;
	}
	s->exec_req.abs = exe;
	s->exec_req.path = prog;
	s->exec_req.argv = argv;
	s->exec_req.envp = envp;
	sched_request(s, s->syscall_pc + 2); /* the point of no return comes after the stop */
	s->exec_pending = 1;
	return 0;
}

/* Replaces the running process's image with the requested program; returns
 * the new PC. Emulation is stopped (the old engine can be closed). */
uint64_t proc_exec(struct sim *s, uint64_t pc)
{
	struct proc *p = s->p;
	struct thread *t = cur_thread(s);
	s->exec_pending = 0;
	p->vm_of_parent = 0; /* its own memory from now on */
	bstream_finish(s->bs, pc, 0);
	for (size_t i = 0; i < s->nthreads; i++) { /* other threads end (de_thread) */
		struct thread *o = &s->threads[i];
		if (o != t && o->proc == p && o->state != TS_EXITED) {
			o->state = TS_EXITED;
			stacks_thread_exited(s, o->tid);
			s->nlive--;
			p->nlive--;
		}
		if (o->proc == p)
			thread_free_contexts(o); /* before the engine closes */
	}
	proc_image_close(s, p);
	if (p->image)
		free(p->path);
	free_strings(p->argv);
	free_strings(p->envp);
	p->path = s->exec_req.path;
	free(p->exe_abs);
	p->exe_abs = s->exec_req.abs;
	p->argv = s->exec_req.argv;
	p->envp = s->exec_req.envp;
	memset(&s->exec_req, 0, sizeof(s->exec_req));
	p->image++;
	/* files marked close-on-exec go; caught signals return to their default */
	for (int i = 0; i < GUEST_FD_MAX; i++)
		if (p->fds[i] >= 0 && (fcntl(p->fds[i], F_GETFD) & FD_CLOEXEC)) {
			close(p->fds[i]);
			p->fds[i] = -1;
		}
	timers_exec(s, p); /* POSIX timers go; interval timers stay */
	for (int i = 1; i < 65; i++) {
		if (p->sig_handlers[i] != (uint64_t)(uintptr_t)SIG_IGN)
			p->sig_handlers[i] = (uint64_t)(uintptr_t)SIG_DFL;
		p->sig_flags[i] = p->sig_restorer[i] = p->sig_mask[i] = 0;
	}
	t->ss_sp = t->ss_size = 0;
	t->clear_child_tid = 0;
	char msg[256];
	if (proc_image_open(s, p, msg, sizeof(msg)) < 0) {
		/* past the point of no return: the process dies (Linux: SIGSEGV) */
		fprintf(s->opt.log, "pmusim: execve of %s in process %u failed: %s\n", p->path, p->pid, msg);
		proc_end(s, SIGSEGV);
		return pc;
	}
	uc_context_alloc(p->uc, &t->regs);
	stacks_exec(s, p, t->tid);
	proc_enter(s, p);
	bstream_set_next_run_start(s->bs, 1);
	bstream_new_context(s->bs);
	if (s->task.exec) {
		const char *b = strrchr(p->path, '/');
		char comm[16];
		snprintf(comm, sizeof(comm), "%s", b ? b + 1 : p->path);
		s->task.exec(s->task.ctx, p->pid, t->tid, comm);
	}
	for (size_t i = 0; i < p->nexec_maps; i++) {
		p->exec_maps[i].pid = p->pid;
		if (s->map_listener)
			s->map_listener(s->map_listener_ctx, &p->exec_maps[i]);
	}
	release_vfork_parent(s, p->pid);
	return p->entry;
}
