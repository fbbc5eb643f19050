/* Processes (see sim/linux/process.h): each has its own Unicorn engine (address
 * space), files and signal actions; all their threads share the one simulated
 * CPU of sched.c.
 *
 * fork copies the address space page for page into a new engine (so does vfork
 * and clone without CLONE_VM; the vfork parent waits until the child executes
 * a program or exits, as on Linux). execve replaces the running process's image
 * (its engine is closed after emulation stopped, as it cannot be closed from a
 * hook; sim/linux/exec.c). wait4 reaps zombies; a process's end closes its files (a pipe's reader
 * then sees end of file), makes it a zombie and sends SIGCHLD to its parent.
 * When the program pmusim started ends, the run ends. */
#include "sim/linux/process.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/elf_bias.h"
#include "common/err.h"
#include "sim/linux/linux.h"
#include "sim/linux/loader.h"
#include "sim/linux/sched.h"
#include "sim/linux/signal.h"
#include "sim/linux/sys_timer.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/cpu_state.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/machine/rep_patch.h"
#include "sim/dbr.h"
#include "sim/sim_state.h"
#include "sim/stacks.h"

struct proc *proc_alloc(struct sim *s)
{
	if (s->nprocs == SIM_MAX_PROCS)
		return NULL;
	struct proc *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	for (int i = 0; i < GUEST_FD_MAX; i++)
		p->fds[i] = -1;
	p->cwd_fd = -1;
	p->pid = s->nprocs == 0 ? GUEST_PID : s->next_tid++;
	s->procs[s->nprocs++] = p;
	return p;
}

/* Makes p the running process for the machine's helpers (memory, stream). */
void proc_enter(struct sim *s, struct proc *p)
{
	s->p = p;
	bstream_set_dcache(s->bs, p->dc);
	bstream_set_image(s->bs, p->pid == GUEST_PID && p->image == 0);
}

int proc_image_open(struct sim *s, struct proc *p, char *msg, size_t msglen)
{
	char abs[PATH_MAX];
	s->p = p;
	/* an execve resolved its path from the guest's working directory (exec.c) */
	if (!p->image) {
		free(p->exe_abs);
		p->exe_abs = strdup(realpath(p->path, abs) ? abs : p->path);
	}
	if (!p->exe_abs)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "out of memory");
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &p->uc) != UC_ERR_OK || cpu_state_init(p->uc) != UC_ERR_OK)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_EMU, "cannot create the Unicorn engine");
	p->dc = dcache_new(machine_read_code, s);
	if (!p->dc)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "out of memory");
	dcache_share_ids(p->dc, &s->run_ids);
	if (s->bs)
		proc_enter(s, p);
	int err = loader_load(s, msg, msglen);
	if (err < 0)
		return err;
	uint64_t sp;
	if (loader_setup_stack(s, &sp) < 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "cannot lay out the initial stack");
	if (symtab_load(p->exe_abs, p->load_bias, &p->syms) < 0)
		p->syms = symtab_new_empty();
	if (!p->syms)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "out of memory");
	if (p->interp_abs)
		symtab_add_file(p->syms, p->interp_abs, p->interp_bias);
	uc_reg_write(p->uc, UC_X86_REG_RSP, &sp);
	uc_reg_write(p->uc, UC_X86_REG_RIP, &p->entry);
	if (machine_add_hooks(s, p) < 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_EMU, "cannot install emulator hooks");
	return 0;
}

void proc_image_close(struct sim *s, struct proc *p)
{
	if (p->dc) {
		/* the truth keeps runs of the started program's first image until the
		 * end; nothing keeps another image's */
		if (p->pid == GUEST_PID && p->image == 0 && s->nold_dcs < sizeof(s->old_dcs) / sizeof(s->old_dcs[0]))
			s->old_dcs[s->nold_dcs++] = p->dc;
		else
			dcache_free(p->dc);
		p->dc = NULL;
	}
	if (p->syms != s->main_syms)
		symtab_free(p->syms);
	p->syms = NULL;
	if (p->uc)
		uc_close(p->uc);
	p->uc = NULL;
	free(p->vmas);
	p->vmas = NULL;
	p->nvmas = p->capvmas = 0;
	free(p->hooked);
	p->hooked = NULL;
	p->nhooked = p->caphooked = 0;
	free(p->wx_hooks);
	p->wx_hooks = NULL;
	p->nwx = 0;
	free(p->interp_abs);
	p->interp_abs = NULL;
	for (size_t i = 0; i < p->nmap_paths; i++)
		free(p->map_paths[i]);
	p->nmap_paths = p->nexec_maps = 0;
	p->brk_start = p->brk_cur = p->load_bias = p->interp_bias = 0;
}

void free_strings(char **v)
{
	if (!v)
		return;
	for (size_t i = 0; v[i]; i++)
		free(v[i]);
	free(v);
}

static void close_files(struct proc *p)
{
	for (int i = 0; i < GUEST_FD_MAX; i++)
		if (p->fds[i] >= 0) {
			close(p->fds[i]);
			p->fds[i] = -1;
		}
}

void proc_free(struct sim *s, struct proc *p)
{
	if (!p)
		return;
	proc_image_close(s, p);
	close_files(p);
	timers_free(p);
	if (p->cwd_fd >= 0)
		close(p->cwd_fd);
	free(p->exe_abs);
	free(p->self_info.cmdline);
	free(p->self_info.environ);
	free_strings(p->argv);
	free_strings(p->envp);
	if (p->image)
		free(p->path);
	free(p);
}

/* --- fork ------------------------------------------------------------------- */

static const int copied_regs[] = {
	UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RSI,
	UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP, UC_X86_REG_R8, UC_X86_REG_R9,
	UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,
	UC_X86_REG_R15, UC_X86_REG_RFLAGS, UC_X86_REG_FS_BASE, UC_X86_REG_GS_BASE,
	UC_X86_REG_MXCSR, UC_X86_REG_FPCW, UC_X86_REG_FPSW, UC_X86_REG_FPTAG,
	UC_X86_REG_XMM0, UC_X86_REG_XMM1, UC_X86_REG_XMM2, UC_X86_REG_XMM3, UC_X86_REG_XMM4,
	UC_X86_REG_XMM5, UC_X86_REG_XMM6, UC_X86_REG_XMM7, UC_X86_REG_XMM8, UC_X86_REG_XMM9,
	UC_X86_REG_XMM10, UC_X86_REG_XMM11, UC_X86_REG_XMM12, UC_X86_REG_XMM13, UC_X86_REG_XMM14,
	UC_X86_REG_XMM15, UC_X86_REG_ST0, UC_X86_REG_ST1, UC_X86_REG_ST2, UC_X86_REG_ST3,
	UC_X86_REG_ST4, UC_X86_REG_ST5, UC_X86_REG_ST6, UC_X86_REG_ST7,
};

static int copy_memory(struct proc *from, struct proc *to)
{
	static unsigned char buf[1 << 20];
	to->vmas = malloc(from->nvmas * sizeof(*to->vmas) + 1);
	if (!to->vmas)
		return -ENOMEM;
	to->capvmas = from->nvmas;
	for (size_t i = 0; i < from->nvmas; i++) {
		const struct vma *v = &from->vmas[i];
		to->vmas[to->nvmas++] = *v;
		if (v->unbacked) /* a reservation: nothing to copy */
			continue;
		if (uc_mem_map(to->uc, v->start, v->end - v->start, (uint32_t)v->prot) != UC_ERR_OK)
			return -ENOMEM;
		for (uint64_t a = v->start; a < v->end; a += sizeof(buf)) {
			size_t n = v->end - a < sizeof(buf) ? (size_t)(v->end - a) : sizeof(buf);
			if (uc_mem_read(from->uc, a, buf, n) != UC_ERR_OK || uc_mem_write(to->uc, a, buf, n) != UC_ERR_OK)
				return -ENOMEM;
		}
	}
	return 0;
}

/* The child's copy of everything but its threads. */
static int64_t clone_process(struct sim *s, struct proc *parent, struct proc *c)
{
	c->ppid = parent->pid;
	c->pgid = parent->pgid, c->sid = parent->sid;
	c->cwd_fd = parent->cwd_fd >= 0 ? fcntl(parent->cwd_fd, F_DUPFD_CLOEXEC, 0) : -1;
	c->umask = parent->umask;
	memcpy(c->uid, parent->uid, sizeof(c->uid));
	memcpy(c->gid, parent->gid, sizeof(c->gid));
	c->image = parent->image;
	c->path = parent->image ? strdup(parent->path) : parent->path;
	c->exe_abs = strdup(parent->exe_abs);
	c->self_info = parent->self_info;
	c->self_info.cmdline = malloc(parent->self_info.cmdline_len + 1);
	c->self_info.environ = malloc(parent->self_info.environ_len + 1);
	if (!c->self_info.cmdline || !c->self_info.environ)
		return -ENOMEM;
	memcpy(c->self_info.cmdline, parent->self_info.cmdline, parent->self_info.cmdline_len);
	memcpy(c->self_info.environ, parent->self_info.environ, parent->self_info.environ_len);
	c->interp_abs = parent->interp_abs ? strdup(parent->interp_abs) : NULL;
	if (!c->path || !c->exe_abs || (parent->interp_abs && !c->interp_abs))
		return -ENOMEM;
	if (uc_open(UC_ARCH_X86, UC_MODE_64, &c->uc) != UC_ERR_OK || cpu_state_init(c->uc) != UC_ERR_OK)
		return -ENOMEM;
	c->dc = dcache_new(machine_read_code, s);
	if (!c->dc)
		return -ENOMEM;
	dcache_share_ids(c->dc, &s->run_ids);
	if (copy_memory(parent, c) < 0)
		return -ENOMEM;
	rep_patch_restore_in(s, c); /* the child runs the program unpatched */
	dbr_restore_in(s, c);
	c->brk_start = parent->brk_start;
	c->brk_cur = parent->brk_cur;
	c->load_bias = parent->load_bias;
	c->entry = parent->entry, c->phdr = parent->phdr, c->phnum = parent->phnum;
	c->prog_entry = parent->prog_entry;
	c->interp_bias = parent->interp_bias;
	/* the same open files; the host descriptor's FD_CLOEXEC is the guest's */
	for (int i = 0; i < GUEST_FD_MAX; i++) {
		int h = parent->fds[i];
		if (h < 0)
			continue;
		int fl = fcntl(h, F_GETFD);
		c->fds[i] = fcntl(h, (fl >= 0 && (fl & FD_CLOEXEC)) ? F_DUPFD_CLOEXEC : F_DUPFD, 0);
	}
	memcpy(c->sig_handlers, parent->sig_handlers, sizeof(c->sig_handlers));
	memcpy(c->sig_flags, parent->sig_flags, sizeof(c->sig_flags));
	memcpy(c->sig_restorer, parent->sig_restorer, sizeof(c->sig_restorer));
	memcpy(c->sig_mask, parent->sig_mask, sizeof(c->sig_mask));
	/* the same files at the same places: symbols and mappings */
	if (symtab_load(c->exe_abs, c->load_bias, &c->syms) < 0)
		c->syms = symtab_new_empty();
	if (!c->syms)
		return -ENOMEM;
	if (c->interp_abs)
		symtab_add_file(c->syms, c->interp_abs, c->interp_bias);
	for (size_t i = 0; i < parent->nmap_paths; i++)
		if (!(c->map_paths[c->nmap_paths++] = strdup(parent->map_paths[i])))
			return -ENOMEM;
	for (size_t i = 0; i < parent->nexec_maps; i++) {
		struct sim_mapping m = parent->exec_maps[i];
		for (size_t k = 0; k < parent->nmap_paths; k++)
			if (m.path == parent->map_paths[k]) {
				m.path = c->map_paths[k];
				symtab_add_file(c->syms, m.path, elf_mapping_bias(m.path, m.addr, m.pgoff));
			}
		if (m.path == parent->exe_abs)
			m.path = c->exe_abs;
		else if (parent->interp_abs && m.path == parent->interp_abs)
			m.path = c->interp_abs;
		m.pid = c->pid;
		c->exec_maps[c->nexec_maps++] = m;
	}
	if (machine_add_hooks(s, c) < 0)
		return -ENOMEM;
	return 0;
}

int64_t sys_fork(struct sim *s, uint64_t flags, uint64_t stack, uint64_t ptid, uint64_t ctid)
{
	struct proc *parent = s->p;
	int is_new;
	struct thread *t = thread_slot(s, &is_new);
	if (!t)
		return -EAGAIN;
	struct thread *pt = cur_thread(s); /* thread_slot never hands out the running thread's slot */
	struct proc *c = proc_alloc(s);
	if (!c)
		return -EAGAIN;
	int64_t err = clone_process(s, parent, c);
	memset(t, 0, sizeof(*t));
	if (err == 0 && uc_context_alloc(c->uc, &t->regs) != UC_ERR_OK)
		err = -ENOMEM;
	if (err < 0) {
		s->procs[--s->nprocs] = NULL;
		proc_free(s, c);
		s->p = parent;
		return err;
	}
	/* the child goes on after the call with the parent's registers, returning 0 */
	uint64_t v[16] = {0}, next = s->syscall_pc + 2, zero = 0;
	for (size_t i = 0; i < sizeof(copied_regs) / sizeof(copied_regs[0]); i++) {
		memset(v, 0, sizeof(v));
		uc_reg_read(parent->uc, copied_regs[i], v);
		uc_reg_write(c->uc, copied_regs[i], v);
	}
	uc_reg_write(c->uc, UC_X86_REG_RAX, &zero);
	uc_reg_write(c->uc, UC_X86_REG_RIP, &next);
	uc_reg_write(c->uc, UC_X86_REG_RCX, &next);
	if (stack)
		uc_reg_write(c->uc, UC_X86_REG_RSP, &stack);
	uc_context_save(c->uc, t->regs);
	t->proc = c;
	t->tid = c->pid;
	t->state = TS_RUNNABLE;
	t->resume_pc = next;
	t->run_start = 1;
	t->wake_ns = UINT64_MAX;
	t->sigmask = pt->sigmask;
	t->ss_sp = pt->ss_sp, t->ss_size = pt->ss_size;
	uint32_t tid = t->tid;
	if (flags & CLONE_CHILD_SETTID_F) { /* in the child's memory */
		s->p = c;
		mem_write(s, ctid, &tid, 4);
		s->p = parent;
	}
	if ((flags & CLONE_PARENT_SETTID_F) && mem_write(s, ptid, &tid, 4) < 0)
		return -EFAULT;
	t->clear_child_tid = (flags & CLONE_CHILD_CLEARTID_F) ? ctid : 0;
	c->nlive = 1;
	s->nthreads += is_new;
	s->nlive++;
	stacks_thread_created(s, t->tid, pt->tid); /* the child is in its parent's calls */
	if (s->task.fork)
		s->task.fork(s->task.ctx, c->pid, parent->pid, c->pid, pt->tid);
	for (size_t i = 0; i < c->nexec_maps; i++)
		if (s->map_listener)
			s->map_listener(s->map_listener_ctx, &c->exec_maps[i]);
	c->vm_of_parent = (flags & CLONE_VM_F) != 0;
	if (flags & CLONE_VFORK_F) { /* the parent waits for the child's exec or exit */
		pt->vfork_child = c->pid;
		pt->state = TS_VFORK;
		sched_request(s, s->syscall_pc + 2);
	}
	sched_update_attention(s);
	return c->pid;
}

/* --- exit and wait ------------------------------------------------------------- */

static struct proc *proc_by_pid(struct sim *s, uint32_t pid)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i]->pid == pid)
			return s->procs[i];
	return NULL;
}

/* A CLONE_VM child that ends without executing a program leaves its writes in the
 * memory it shared with its parent (posix_spawn's child reports a failed exec there;
 * Linux shares the pages, pmusim gave the child a copy): the child's writable memory
 * goes back to the parent wherever the parent has memory too. */
static void write_back_shared_memory(struct sim *s, struct proc *child)
{
	static unsigned char buf[1 << 16];
	struct proc *parent = proc_by_pid(s, child->ppid);
	if (!parent || parent->state != PROC_LIVE || !parent->uc || !child->uc)
		return;
	for (size_t i = 0; i < child->nvmas; i++) {
		const struct vma *v = &child->vmas[i];
		if (v->unbacked || !(v->prot & UC_PROT_WRITE))
			continue;
		for (uint64_t a = v->start; a < v->end; a += sizeof(buf)) {
			size_t n = v->end - a < sizeof(buf) ? (size_t)(v->end - a) : sizeof(buf);
			if (uc_mem_read(child->uc, a, buf, n) == UC_ERR_OK)
				uc_mem_write(parent->uc, a, buf, n); /* fails where the parent has none */
		}
	}
}

/* A vfork parent goes on once its child executed a program or ended. */
void release_vfork_parent(struct sim *s, uint32_t child)
{
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = &s->threads[i];
		if (t->state == TS_VFORK && t->vfork_child == child) {
			t->vfork_child = 0;
			sched_wake(s, t, (int64_t)child);
		}
	}
}

void proc_end(struct sim *s, int wait_status)
{
	struct proc *p = s->p;
	if (p->pid == GUEST_PID) {
		if (WIFSIGNALED(wait_status)) {
			sim_stop(s, SIM_END_SIGNAL, WTERMSIG(wait_status));
		} else {
			sim_stop(s, SIM_END_EXIT, WEXITSTATUS(wait_status));
		}
		return;
	}
	uint32_t last_tid = cur_thread(s)->tid;
	for (size_t i = 0; i < s->nthreads; i++) {
		struct thread *t = &s->threads[i];
		if (t->proc == p && t->state != TS_EXITED) {
			t->state = TS_EXITED;
			stacks_thread_exited(s, t->tid);
			s->nlive--;
		}
		if (t->proc == p)
			thread_free_contexts(t); /* the engine closes once emulation stopped */
	}
	p->nlive = 0;
	if (p->vm_of_parent)
		write_back_shared_memory(s, p);
	p->state = PROC_ZOMBIE;
	p->wait_status = wait_status;
	p->exit_seq = ++s->exit_seq;
	close_files(p);
	if (s->task.exit)
		s->task.exit(s->task.ctx, p->pid, p->ppid, last_tid, last_tid);
	release_vfork_parent(s, p->pid);
	struct proc *parent = proc_by_pid(s, p->ppid);
	if (parent && parent->state == PROC_LIVE) {
		/* wake its waits; SIGCHLD (ignored unless it has a handler) */
		for (size_t i = 0; i < s->nthreads; i++) {
			struct thread *t = &s->threads[i];
			if (t->proc == parent && t->state == TS_CHILD_WAIT)
				sched_retry(s, t);
		}
		struct proc *self = s->p;
		s->p = parent;
		signal_send(s, NULL, SIGCHLD, WIFSIGNALED(wait_status) ? 2 /* CLD_KILLED */ : 1 /* CLD_EXITED */, 0);
		s->p = self;
	}
	sched_request(s, s->syscall_pc + 2);
}

/* A reaped process is gone: its slot and memory are free again. */
static void proc_reap(struct sim *s, struct proc *p)
{
	for (size_t i = 0; i < s->nthreads; i++)
		if (s->threads[i].proc == p)
			s->threads[i].proc = NULL; /* exited threads only */
	size_t k = 0;
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i] != p)
			s->procs[k++] = s->procs[i];
	s->nprocs = k;
	proc_free(s, p);
}

int64_t sys_wait4(struct sim *s, const struct sysargs *x)
{
	int64_t want = (int32_t)x->a[0];
	uint64_t statusp = x->a[1], options = x->a[2], rusage = x->a[3];
	struct proc *found = NULL;
	int children = 0;
	for (size_t i = 0; i < s->nprocs; i++) {
		struct proc *c = s->procs[i];
		/* wait4(2): pid > 0 that child, -1 any, 0 any in the caller's group, < -1 the group -pid */
		int match = want > 0 ? c->pid == (uint64_t)want : want == -1 ? 1
			  : c->pgid == (want == 0 ? s->p->pgid : (uint32_t)-want);
		if (c->ppid != s->p->pid || c->state == PROC_REAPED || !match)
			continue;
		children++;
		if (c->state == PROC_ZOMBIE && (!found || c->exit_seq < found->exit_seq))
			found = c;
	}
	if (!children)
		return -ECHILD;
	if (!found) {
		if (options & 1 /* WNOHANG */)
			return 0;
		sched_block_retry(s, TS_CHILD_WAIT);
		return 0;
	}
	int st = found->wait_status;
	if (statusp && mem_write(s, statusp, &st, 4) < 0)
		return -EFAULT;
	if (rusage) {
		uint64_t ru[18] = {0};
		if (mem_write(s, rusage, ru, sizeof(ru)) < 0)
			return -EFAULT;
	}
	uint32_t pid = found->pid;
	proc_reap(s, found);
	return pid;
}

