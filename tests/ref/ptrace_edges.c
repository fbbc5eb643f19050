/* ptrace_edges: the native reference for pmusim's branch truth. It runs a program
 * on the real CPU under ptrace(2) with an INT3 on every branch instruction of the
 * program's own functions (found by GNU objdump: tests/ref/objdump_sites.c); at each
 * hit it puts the instruction's byte back, single-steps that one instruction and
 * reads where the CPU went. It shares no code and no decoding rule with pmusim.
 *
 * Usage: ptrace_edges [-o OUT] OWN -- PROG [ARG...]
 *   OWN   the object file PROG was linked from (its defined text symbols are the own
 *         functions), or a text file of function names, one a line;
 *   PROG  a static, non-PIE program (ELF type EXEC: the addresses objdump prints are
 *         where its code runs), run with this process's environment and address
 *         randomisation off.
 * Exit status: PROG's (128+N when signal N ended it); 125 when the tool failed.
 *
 * Output (OUT, else stdout): addresses hex with 0x, counts decimal, sorted by address.
 *   func NAME START END                    an own function: [START, END)
 *   site ADDR KIND NEXT TARGET EXECUTIONS  every branch in them, executed or not; KIND
 *                                          cond|jmp|jmp_ind|call|call_ind|ret, NEXT the
 *                                          next instruction, TARGET the direct
 *                                          destination or -
 *   edge FROM TO COUNT                     each (branch, where the CPU went next)
 *   cond ADDR TAKEN NOT_TAKEN              each executed conditional branch
 *   exit STATUS
 * A conditional branch is taken when the CPU went to its target and not taken when it
 * went to NEXT. One whose target is NEXT goes to the same address either way (its edge
 * line counts both); its split is decided by the CPU too: a copy of the branch with a
 * distinct target runs here on the flags and RCX the program had (cond_eval).
 *
 * Threads (clone sharing the address space) are followed: while one thread steps over
 * a branch with its INT3 removed, every other thread is held with PTRACE_INTERRUPT,
 * so that none runs the uninstrumented instruction. fork, vfork and a second execve
 * are refused (exit 125): the new address space is not the instrumented one. Signals
 * are passed on to the program; one that arrives while a branch is stepped is
 * delivered right after that instruction.
 *
 * Cost: two ptrace stops per executed branch (the INT3, the single-step trap), about
 * 50 us in a KVM guest, where the debug exception's DR6/DR7 accesses leave the guest.
 * The tracer and the program share one CPU: a stop then wakes the tracer without a
 * cross-CPU interrupt (measured in such a guest: workloads/loops 1.1, switch 1.7,
 * callstacks 2.2, recursion 3 times faster). */
#include <errno.h>
#include <inttypes.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/ref/edge_report.h"
#include "tests/ref/objdump_sites.h"
#include "tests/ref/ptrace_common.h"

#define MAX_THREADS 256

/* RUNNING: resumed, nothing of it waited for. HELD: stopped by our interrupt, to be
 * resumed after the step. DEFERRED: stopped for a reason of its own (status), handled
 * by the main loop before it waits for anything else. */
enum thread_state { TH_FREE, TH_RUNNING, TH_HELD, TH_DEFERRED };

struct thread {
	pid_t tid;
	enum thread_state state;
	int status;
};

struct tracer {
	struct site_table t;
	struct edge_map edges;
	pid_t pid;
	int mem; /* /proc/PID/mem, open from the exec on */
	int execs;
	int status; /* the program's exit status, -1 while it runs */
	struct thread th[MAX_THREADS];
	size_t alive;
};

static struct tracer *current; /* for end_program() */

/* ref_fatal's hook: ends the program, while it is the program's. */
static void end_program(void)
{
	if (current && current->alive) /* while a thread is unreaped, the pid is the program's */
		kill(current->pid, SIGKILL);
}

static struct thread *thread_find(struct tracer *tr, pid_t tid)
{
	for (size_t i = 0; i < MAX_THREADS; i++)
		if (tr->th[i].state != TH_FREE && tr->th[i].tid == tid)
			return &tr->th[i];
	return NULL;
}

static struct thread *thread_add(struct tracer *tr, pid_t tid)
{
	struct thread *th = thread_find(tr, tid);
	if (th)
		return th;
	for (size_t i = 0; i < MAX_THREADS; i++)
		if (tr->th[i].state == TH_FREE) {
			tr->th[i] = (struct thread){tid, TH_RUNNING, 0};
			tr->alive++;
			return &tr->th[i];
		}
	ref_fatal("more than %d threads", MAX_THREADS);
	return NULL;
}

static void thread_gone(struct tracer *tr, struct thread *th, int st)
{
	if (th->tid == tr->pid)
		tr->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
	th->state = TH_FREE;
	tr->alive--;
}

static void resume(struct thread *th, int sig)
{
	/* ESRCH: killed meanwhile (another thread's exit_group); its end is reported */
	if (ptrace(PTRACE_CONT, th->tid, 0, (void *)(long)sig) < 0 && errno != ESRCH)
		ref_fatal("PTRACE_CONT %d: %s", th->tid, strerror(errno));
	th->state = TH_RUNNING;
}

/* 0, or -1 when the thread is gone: SIGKILL (another thread's exit_group) ends a
 * stopped thread too, and its end is reported to the main loop. */
static int get_regs(pid_t tid, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, tid, 0, r) == 0)
		return 0;
	if (errno != ESRCH)
		ref_fatal("PTRACE_GETREGS %d: %s", tid, strerror(errno));
	return -1;
}

/* The program's image is the one objdump read: an INT3 on every site. */
static void on_exec(struct tracer *tr)
{
	if (tr->execs++)
		ref_fatal("the program executed another program: refused (its image is not "
		          "instrumented)");
	tr->mem = ref_instrument(tr->pid, &tr->t);
}

/* Whether the conditional branch s jumps, with these flags and RCX, decided by the CPU:
 * its opcode, given a target distinct from its fall-through, runs in a stub
 *   mov %rsi,%rcx; push %rdi; popfq; Jcc +3; xor %eax,%eax; ret; mov $1,%eax; ret
 * The bytes are the program's (a hint, BND or address-size prefix kept; Jcc rel32
 * becomes Jcc rel8, the same condition). */
static int cond_eval(struct tracer *tr, const struct site *s, uint64_t flags, uint64_t rcx)
{
	uint8_t b[8] = {0}; /* up to 4 prefixes, 2 opcode bytes */
	if (pread(tr->mem, b, sizeof(b), (off_t)s->addr) < 2)
		ref_fatal("cannot read the branch at %#" PRIx64, s->addr);
	b[0] = s->orig;
	uint8_t code[32] = {0x48, 0x89, 0xf1, 0x57, 0x9d};
	size_t n = 5, i = 0;
	while (i < 4 && (b[i] == 0x2e || b[i] == 0x3e || b[i] == 0xf2 || b[i] == 0x67))
		code[n++] = b[i++];
	if (b[i] >= 0x70 && b[i] <= 0x7f)
		code[n++] = b[i];
	else if (b[i] == 0x0f && b[i + 1] >= 0x80 && b[i + 1] <= 0x8f)
		code[n++] = (uint8_t)(0x70 + (b[i + 1] & 0x0f));
	else if (b[i] >= 0xe0 && b[i] <= 0xe3)
		code[n++] = b[i];
	else
		ref_fatal("conditional branch at %#" PRIx64 ": opcode %#x is not Jcc/LOOP/JrCXZ",
		          s->addr, b[i]);
	static const uint8_t tail[] = {0x03, 0x31, 0xc0, 0xc3, 0xb8, 0x01, 0x00, 0x00, 0x00, 0xc3};
	memcpy(code + n, tail, sizeof(tail));
	void *page = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (page == MAP_FAILED)
		ref_fatal("mmap: %s", strerror(errno));
	memcpy(page, code, n + sizeof(tail));
	if (mprotect(page, 4096, PROT_READ | PROT_EXEC) < 0)
		ref_fatal("mprotect: %s", strerror(errno));
	/* the status flags only (CF PF AF ZF SF OF): DF clear as the ABI wants */
	int (*run)(uint64_t, uint64_t) = (int (*)(uint64_t, uint64_t))page;
	int taken = run((flags & 0x8d5) | 0x202, rcx);
	munmap(page, 4096);
	return taken;
}

/* Counts one execution of s that went to `to`; checks it against objdump's listing. */
static void count(struct tracer *tr, struct site *s, uint64_t to, int eval)
{
	s->executions++;
	if (edge_add(&tr->edges, s->addr, to) < 0)
		ref_fatal("out of memory");
	if (s->kind == SITE_JMP || s->kind == SITE_CALL) {
		if (to != s->target)
			ref_fatal("%s at %#" PRIx64 " went to %#" PRIx64 ", objdump says %#" PRIx64,
			          site_kind_name(s->kind), s->addr, to, s->target);
		return;
	}
	if (s->kind != SITE_COND)
		return;
	if (to != s->target && to != s->next)
		ref_fatal("conditional branch at %#" PRIx64 " went to %#" PRIx64
		          ", neither %#" PRIx64 " nor %#" PRIx64,
		          s->addr, to, s->target, s->next);
	int taken = eval >= 0 ? eval : to == s->target;
	if (taken)
		s->taken++;
	else
		s->not_taken++;
}

/* Single-steps th over s (its INT3 removed): 1 when the instruction retired (*to where
 * it went), 0 when it raised a signal itself (*sig), -1 when the thread ended. A signal
 * that arrives before the instruction runs is kept in *sig and delivered after it. */
static int single_step(struct tracer *tr, struct thread *th, const struct site *s, uint64_t *to,
                       int *sig)
{
	*sig = 0;
	for (;;) {
		if (ptrace(PTRACE_SINGLESTEP, th->tid, 0, 0) < 0) {
			if (errno == ESRCH)
				return -1; /* killed: its end is reported to the main loop */
			ref_fatal("PTRACE_SINGLESTEP %d: %s", th->tid, strerror(errno));
		}
		int st;
		if (waitpid(th->tid, &st, __WALL) < 0)
			ref_fatal("waitpid %d: %s", th->tid, strerror(errno));
		if (WIFEXITED(st) || WIFSIGNALED(st)) {
			thread_gone(tr, th, st);
			return -1;
		}
		if (st >> 16 == PTRACE_EVENT_STOP)
			continue; /* an interrupt of an earlier hold, still pending */
		if (st >> 16)
			ref_fatal("event %d while stepping at %#" PRIx64, st >> 16, s->addr);
		struct user_regs_struct r;
		if (get_regs(th->tid, &r) < 0)
			return -1;
		int got = WSTOPSIG(st);
		siginfo_t si = {0};
		/* a branch to itself retires with RIP unchanged: the trap's code tells */
		if (got == SIGTRAP && r.rip == s->addr)
			ptrace(PTRACE_GETSIGINFO, th->tid, 0, &si);
		if (got == SIGTRAP && (r.rip != s->addr || si.si_code == TRAP_TRACE)) {
			*to = r.rip;
			return 1;
		}
		if (r.rip != s->addr)
			ref_fatal("signal %d with RIP %#llx while stepping at %#" PRIx64, got,
			          r.rip, s->addr);
		if (got == *sig)
			return 0; /* raised again by the instruction: its own fault */
		if (*sig)
			ref_fatal("signals %d and %d before the branch at %#" PRIx64, *sig, got,
			          s->addr);
		*sig = got; /* arrived before the instruction ran; dropped for now */
	}
}

/* Whether the program's first thread has ended ('Z' in /proc/PID/stat): the kernel
 * reports its end only once every other thread is reaped, so a wait for it now would
 * never return. */
static int leader_ended(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 1;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* after the command name, which may hold ')' */
	return !p || p[1] != ' ' || p[2] == 'Z' || p[2] == 'X';
}

/* Waits for th's stop after PTRACE_INTERRUPT: 1 with its status, 0 when it is the
 * first thread and has ended (it is reaped by the main loop, last). */
static int wait_stop(struct tracer *tr, struct thread *th, int *st)
{
	for (;;) {
		int leader = th->tid == tr->pid;
		pid_t r = waitpid(th->tid, st, __WALL | (leader ? WNOHANG : 0));
		if (r == th->tid)
			return 1;
		if (r < 0)
			ref_fatal("waitpid %d: %s", th->tid, strerror(errno));
		if (leader_ended(tr->pid))
			return 0;
		sched_yield(); /* the CPU to the interrupted thread, which shares it */
	}
}

/* Stops every other running thread: a stop that is its own is kept for the main loop. */
static void hold_others(struct tracer *tr, const struct thread *self)
{
	for (size_t i = 0; i < MAX_THREADS; i++) {
		struct thread *th = &tr->th[i];
		if (th == self || th->state != TH_RUNNING)
			continue;
		if (ptrace(PTRACE_INTERRUPT, th->tid, 0, 0) < 0) {
			if (errno == ESRCH)
				continue; /* exiting: reported to the main loop */
			ref_fatal("PTRACE_INTERRUPT %d: %s", th->tid, strerror(errno));
		}
		int st;
		if (!wait_stop(tr, th, &st))
			continue;
		if (WIFSTOPPED(st) && st >> 16 == PTRACE_EVENT_STOP) {
			th->state = TH_HELD;
		} else {
			th->state = TH_DEFERRED;
			th->status = st;
		}
	}
}

static void release_others(struct tracer *tr)
{
	for (size_t i = 0; i < MAX_THREADS; i++)
		if (tr->th[i].state == TH_HELD)
			resume(&tr->th[i], 0);
}

/* th stopped on the INT3 of s. */
static void on_hit(struct tracer *tr, struct thread *th, struct site *s, struct user_regs_struct *r)
{
	hold_others(tr, th);
	int eval = -1;
	if (s->kind == SITE_COND && s->target == s->next)
		eval = cond_eval(tr, s, r->eflags, r->rcx);
	r->rip = s->addr;
	if (ptrace(PTRACE_SETREGS, th->tid, 0, r) < 0) {
		if (errno != ESRCH)
			ref_fatal("PTRACE_SETREGS %d: %s", th->tid, strerror(errno));
		release_others(tr); /* killed while stopped: the branch never ran */
		return;
	}
	ref_poke(tr->mem, s->addr, s->orig);
	uint64_t to = 0;
	int sig, rc = single_step(tr, th, s, &to, &sig);
	ref_poke(tr->mem, s->addr, REF_INT3);
	if (rc == 1)
		count(tr, s, to, eval);
	if (rc >= 0)
		resume(th, sig);
	release_others(tr);
}

static void on_event(struct tracer *tr, struct thread *th, int ev)
{
	switch (ev) {
	case PTRACE_EVENT_EXEC:
		on_exec(tr);
		break;
	case PTRACE_EVENT_CLONE:
		/* Nothing to do: the new thread is known from its first stop (a seized
		 * thread stops before its first instruction, so it needs no holding until
		 * then). Adding it here could add a thread that has already stopped, run,
		 * ended and been reaped: its first stop may come before this event. */
		break;
	case PTRACE_EVENT_FORK:
	case PTRACE_EVENT_VFORK:
		ref_fatal("the program starts a process: refused (only its own address space is "
		          "instrumented)");
		break;
	default: /* PTRACE_EVENT_STOP: a new thread, a group-stop, a late interrupt */
		break;
	}
	resume(th, 0);
}

static void handle(struct tracer *tr, pid_t tid, int st)
{
	struct thread *th = thread_add(tr, tid); /* a new thread: its first stop */
	if (WIFEXITED(st) || WIFSIGNALED(st)) {
		thread_gone(tr, th, st);
		return;
	}
	if (!WIFSTOPPED(st))
		return;
	if (st >> 16) {
		on_event(tr, th, st >> 16);
		return;
	}
	int sig = WSTOPSIG(st);
	if (sig == SIGTRAP && tr->mem >= 0) {
		struct user_regs_struct r;
		if (get_regs(tid, &r) < 0)
			return;
		struct site *s = sites_find(&tr->t, r.rip - 1);
		if (s) {
			on_hit(tr, th, s, &r);
			return;
		}
	}
	resume(th, sig);
}

static struct thread *first_deferred(struct tracer *tr)
{
	for (size_t i = 0; i < MAX_THREADS; i++)
		if (tr->th[i].state == TH_DEFERRED)
			return &tr->th[i];
	return NULL;
}

static void trace(struct tracer *tr)
{
	while (tr->alive) {
		struct thread *d = first_deferred(tr);
		pid_t tid;
		int st;
		if (d) {
			tid = d->tid;
			st = d->status;
			d->state = TH_RUNNING; /* stopped still: handle() resumes it */
		} else if ((tid = waitpid(-1, &st, __WALL)) < 0) {
			if (errno == EINTR)
				continue;
			ref_fatal("waitpid: %s", strerror(errno));
		}
		handle(tr, tid, st);
	}
	if (!tr->execs)
		ref_fatal("the program did not start (exit status %d)", tr->status);
}

/* Forks the program, attached before its execve: the exec is its first stop. The tracer
 * and its program share the CPU the tracer runs on (see the header). */
static void spawn(struct tracer *tr, char *const argv[])
{
	long opts = PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
	            PTRACE_O_TRACEVFORK | PTRACE_O_EXITKILL;
	ref_spawn(argv, opts, 1, &tr->pid);
	thread_add(tr, tr->pid);
}

static void usage(void)
{
	fprintf(stderr, "usage: ptrace_edges [-o OUT] OWN.o|NAMES -- PROG [ARG...]\n");
	exit(REF_TOOL_FAILED);
}

int main(int argc, char **argv)
{
	ref_fatal_init("ptrace_edges", end_program);
	const char *out, *own;
	char **prog;
	if (ref_args(argc, argv, &out, &own, &prog) < 0)
		usage();
	static struct tracer tr = {.mem = -1, .status = -1};
	current = &tr;
	char err[512];
	if (sites_load(&tr.t, prog[0], own, err, sizeof(err)) < 0)
		ref_fatal("%s", err);
	spawn(&tr, prog);
	trace(&tr);
	if (report_write(out, &tr.t, &tr.edges, tr.status) < 0)
		ref_fatal("%s: %s", out ? out : "standard output", strerror(errno));
	sites_free(&tr.t);
	edge_map_free(&tr.edges);
	if (tr.mem >= 0)
		close(tr.mem);
	return tr.status;
}
