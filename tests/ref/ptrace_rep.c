/* ptrace_rep: the native reference for pmusim's REP figures. It runs a program on
 * the real CPU under ptrace(2) with an INT3 on every REP string instruction of the
 * program's own functions (found by GNU objdump: tests/ref/objdump_sites.c). At each
 * hit it puts the instruction's byte back and single-steps it until RIP leaves it
 * (with the trap flag set, the CPU traps after every iteration: Intel SDM vol. 3,
 * 17.3.1.4), reading the count register (RCX, or ECX for 32-bit operands: an
 * address-size prefix) before and after. It shares no code and no rule with pmusim.
 *
 * What one execution is (as pmu_model/block.h defines it, here from what the kernel
 * and the CPU do): it begins when the thread reaches the REP other than by returning
 * into it from a signal handler; requested is the count then. A signal that stops the
 * thread in the middle of the REP (a fault of one of its iterations, a timer) ends a
 * part: the iterations so far count. The signal is delivered by a single step, so
 * that the tool sees the handler's frame (RSP at its first instruction); while any
 * such frame is open the program runs under PTRACE_SYSCALL, and an rt_sigreturn from
 * that frame (its RSP - 8 at the call) whose restored RIP is the REP makes the next
 * entry there the same execution. A frame left by siglongjmp is never returned to:
 * that execution ended where the signal left it.
 *
 * Usage: ptrace_rep [-o OUT] OWN -- PROG [ARG...]
 *   OWN   the object file PROG was linked from (its defined text symbols are the own
 *         functions), or a text file of function names, one a line;
 *   PROG  a static, non-PIE program (ELF type EXEC), one thread, no child processes
 *         (refused: exit 125), run with this process's environment and address
 *         randomisation off.
 * Exit status: PROG's (128+N when signal N ended it); 125 when the tool failed.
 *
 * Output (OUT, else stdout): addresses hex with 0x, counts decimal, sorted by address.
 *   func NAME START END   an own function: [START, END)
 *   rep ADDR NEXT EXECUTIONS REQUESTED ITERATIONS BY_CONDITION   every REP of the own
 *                      functions: NEXT the instruction after it; REQUESTED saturates at
 *                      2^64 - 1; BY_CONDITION: executions that retired with the count
 *                      not 0 (repe/repne ended by their condition)
 *   signal SIG LEFT RESUMED   per signal that stopped a REP in the middle: how often,
 *                      and how often the REP went on after it (a handler returned
 *                      into it, or no handler ran)
 *   exit STATUS */
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/ref/objdump_sites.h"
#include "tests/ref/ptrace_common.h"

#define MAX_FRAMES 64
#define NSIG_MAX 65
#define SYSCALL_STOP (SIGTRAP | 0x80) /* PTRACE_O_TRACESYSGOOD */

struct rep_count {
	uint64_t executions, requested, iterations, by_condition;
};

/* An execution a signal took the thread out of, or that a handler returned into. */
struct held {
	int valid;
	size_t site; /* index in the site table */
	int sig;     /* the signal that stopped it */
};

struct frame {
	uint64_t frame; /* RSP at the handler's first instruction */
	struct held held;
};

struct tracer {
	struct site_table t;
	struct rep_count *count; /* per site */
	pid_t pid;
	int mem; /* /proc/PID/mem, open from the exec on */
	int execs;
	int status;
	struct frame frames[MAX_FRAMES];
	size_t nframes;
	struct held resume;       /* the next entry into its REP goes on with it */
	uint64_t sigreturn_frame; /* at an rt_sigreturn's entry: its frame (0: none) */
	uint64_t left[NSIG_MAX], resumed[NSIG_MAX];
};

static struct tracer *current; /* for end_program() */

/* ref_fatal's hook: ends the program, while it runs. */
static void end_program(void)
{
	if (current && current->status < 0 && current->pid > 0)
		kill(current->pid, SIGKILL);
}

static void get_regs(struct tracer *tr, struct user_regs_struct *r)
{
	if (ptrace(PTRACE_GETREGS, tr->pid, 0, r) < 0)
		ref_fatal("PTRACE_GETREGS: %s", strerror(errno));
}

static uint64_t count_of(const struct site *s, uint64_t rcx)
{
	return s->addr32 ? rcx & 0xffffffffu : rcx;
}

/* Waits for the program's next stop; 0 when it ended (status recorded). */
static int wait_stop(struct tracer *tr, int *st)
{
	for (;;) {
		if (waitpid(tr->pid, st, __WALL) < 0) {
			if (errno == EINTR)
				continue;
			ref_fatal("waitpid: %s", strerror(errno));
		}
		if (WIFEXITED(*st) || WIFSIGNALED(*st)) {
			tr->status = WIFEXITED(*st) ? WEXITSTATUS(*st) : 128 + WTERMSIG(*st);
			return 0;
		}
		if (WIFSTOPPED(*st))
			return 1;
	}
}

static void request(struct tracer *tr, enum __ptrace_request req, int sig)
{
	if (ptrace(req, tr->pid, 0, (void *)(long)sig) < 0)
		ref_fatal("ptrace %d: %s", (int)req, strerror(errno));
}

/* Runs on: under PTRACE_SYSCALL while a frame could be returned to. */
static void go_on(struct tracer *tr, int sig)
{
	request(tr, tr->nframes ? PTRACE_SYSCALL : PTRACE_CONT, sig);
}

static void on_exec(struct tracer *tr)
{
	if (tr->execs++)
		ref_fatal("the program executed another program: refused");
	tr->mem = ref_instrument(tr->pid, &tr->t);
}

static void push_frame(struct tracer *tr, uint64_t frame, struct held h)
{
	if (tr->nframes == MAX_FRAMES) { /* nested this deep: forget the oldest */
		memmove(tr->frames, tr->frames + 1, (MAX_FRAMES - 1) * sizeof(*tr->frames));
		tr->nframes--;
	}
	tr->frames[tr->nframes++] = (struct frame){frame, h};
}

static int on_signal(struct tracer *tr, int sig);

/* Delivers sig, stopped at a REP (its INT3 in place) with h held, by a single step:
 * at a handler's first instruction its frame is pushed and 0 returned (the kernel
 * reports that stop before it looks at another signal); when the signal entered no
 * handler, the step ran the INT3 and 1 is returned (the thread is stopped on it, h
 * still to go on with), or another pending signal stopped it first: that one is
 * handled here (2: the thread runs on); -1 when the program ended. */
static int deliver_at_rep(struct tracer *tr, int sig, uint64_t rep_addr, struct held h)
{
	request(tr, PTRACE_SINGLESTEP, sig);
	int st;
	struct user_regs_struct r;
	for (;;) {
		if (!wait_stop(tr, &st))
			return -1;
		if (WSTOPSIG(st) == SIGTRAP && !(st >> 16))
			break;
		if (st >> 16) { /* an event (a group stop): not ours */
			request(tr, PTRACE_SINGLESTEP, 0);
			continue;
		}
		get_regs(tr, &r);
		if (r.rip != rep_addr)
			ref_fatal("signal %d at %#llx while delivering signal %d at %#" PRIx64,
			          WSTOPSIG(st), r.rip, sig, rep_addr);
		tr->resume = h; /* sig entered no handler; the next one may */
		return on_signal(tr, WSTOPSIG(st)) ? 2 : -1;
	}
	get_regs(tr, &r);
	if (r.rip == rep_addr + 1) { /* no handler: the INT3 ran */
		tr->resume = h;
		return 1;
	}
	push_frame(tr, r.rsp, h);
	return 0;
}

/* The thread stopped on the INT3 of site i (RIP after it): one part of an execution,
 * stepped to its end. Returns 0 when the program ended. */
static int on_hit(struct tracer *tr, size_t i, struct user_regs_struct *r)
{
	struct site *s = &tr->t.sites[i];
	struct rep_count *k = &tr->count[i];
	for (;;) {
		r->rip = s->addr;
		if (ptrace(PTRACE_SETREGS, tr->pid, 0, r) < 0)
			ref_fatal("PTRACE_SETREGS: %s", strerror(errno));
		uint64_t before = count_of(s, r->rcx);
		if (tr->resume.valid && tr->resume.site == i) {
			tr->resumed[tr->resume.sig]++;
		} else {
			k->executions++;
			k->requested = k->requested + before < k->requested ? UINT64_MAX
			                                                    : k->requested + before;
		}
		tr->resume.valid = 0;
		ref_poke(tr->mem, s->addr, s->orig);
		int st, sig = 0;
		for (;;) {
			request(tr, PTRACE_SINGLESTEP, 0);
			if (!wait_stop(tr, &st))
				return 0;
			if (st >> 16)
				continue; /* an event (a group stop) */
			get_regs(tr, r);
			sig = WSTOPSIG(st);
			if (sig == SIGTRAP && r->rip == s->addr)
				continue; /* one iteration */
			break;
		}
		uint64_t after = count_of(s, r->rcx);
		k->iterations += before - after;
		ref_poke(tr->mem, s->addr, REF_INT3);
		if (sig == SIGTRAP && r->rip != s->addr) { /* retired */
			if (r->rip != s->next)
				ref_fatal("the REP at %#" PRIx64 " went on at %#llx, not %#" PRIx64,
				          s->addr, r->rip, s->next);
			k->by_condition += after != 0;
			go_on(tr, 0);
			return 1;
		}
		if (r->rip != s->addr)
			ref_fatal("signal %d with RIP %#llx while stepping the REP at %#" PRIx64,
			          sig, r->rip, s->addr);
		/* a signal stopped it in the middle */
		tr->left[sig]++;
		int rc = deliver_at_rep(tr, sig, s->addr, (struct held){1, i, sig});
		if (rc < 0)
			return 0;
		if (rc == 2)
			return 1;
		if (rc == 0) {
			go_on(tr, 0);
			return 1;
		}
		get_regs(tr, r); /* on the INT3 again: the same execution goes on */
	}
}

/* A signal for the thread, stopped outside a REP's steps. At a REP (before its INT3
 * ran) the handler's frame matters: it may hold the execution a sigreturn gave back. */
static int on_signal(struct tracer *tr, int sig)
{
	struct user_regs_struct r;
	get_regs(tr, &r);
	struct site *s = sites_find(&tr->t, r.rip);
	if (!s) {
		go_on(tr, sig);
		return 1;
	}
	size_t i = (size_t)(s - tr->t.sites);
	struct held h =
	    tr->resume.valid && tr->resume.site == i ? tr->resume : (struct held){0, 0, 0};
	tr->resume.valid = 0;
	int rc = deliver_at_rep(tr, sig, s->addr, h);
	if (rc < 0)
		return 0;
	if (rc == 2)
		return 1;
	if (rc == 0) {
		go_on(tr, 0);
		return 1;
	}
	get_regs(tr, &r);
	return on_hit(tr, i, &r);
}

/* A system-call stop: an rt_sigreturn into a REP from a frame that holds it. */
static void on_syscall(struct tracer *tr)
{
	struct __ptrace_syscall_info info;
	if (ptrace(PTRACE_GET_SYSCALL_INFO, tr->pid, (void *)sizeof(info), &info) < 0)
		ref_fatal("PTRACE_GET_SYSCALL_INFO: %s", strerror(errno));
	struct user_regs_struct r;
	if (info.op == PTRACE_SYSCALL_INFO_ENTRY) {
		tr->sigreturn_frame =
		    info.entry.nr == SYS_rt_sigreturn ? info.stack_pointer - 8 : 0;
	} else if (info.op == PTRACE_SYSCALL_INFO_EXIT && tr->sigreturn_frame) {
		get_regs(tr, &r);
		size_t k = tr->nframes;
		while (k > 0 && tr->frames[k - 1].frame != tr->sigreturn_frame)
			k--;
		if (k > 0) {
			const struct held *h = &tr->frames[k - 1].held;
			if (h->valid && tr->t.sites[h->site].addr == r.rip)
				tr->resume = *h;
			tr->nframes = k - 1; /* the frames above it were left by siglongjmp */
		}
		tr->sigreturn_frame = 0;
	}
	go_on(tr, 0);
}

/* One stop of the program; 0 when it ended. */
static int handle(struct tracer *tr, int st)
{
	if (st >> 16) {
		int ev = st >> 16;
		if (ev == PTRACE_EVENT_EXEC)
			on_exec(tr);
		else if (ev == PTRACE_EVENT_CLONE || ev == PTRACE_EVENT_FORK ||
		         ev == PTRACE_EVENT_VFORK)
			ref_fatal(
			    "the program starts a thread or process: refused (one thread only)");
		go_on(tr, 0);
		return 1;
	}
	int sig = WSTOPSIG(st);
	if (sig == SYSCALL_STOP) {
		on_syscall(tr);
		return 1;
	}
	if (sig == SIGTRAP && tr->mem >= 0) {
		struct user_regs_struct r;
		get_regs(tr, &r);
		struct site *s = sites_find(&tr->t, r.rip - 1);
		if (s)
			return on_hit(tr, (size_t)(s - tr->t.sites), &r);
	}
	if (tr->mem >= 0)
		return on_signal(tr, sig);
	go_on(tr, sig);
	return 1;
}

/* Forks the program, attached before its execve: the exec is its first stop. */
static void spawn(struct tracer *tr, char *const argv[])
{
	long opts = PTRACE_O_TRACEEXEC | PTRACE_O_TRACECLONE | PTRACE_O_TRACEFORK |
	            PTRACE_O_TRACEVFORK | PTRACE_O_TRACESYSGOOD | PTRACE_O_EXITKILL;
	ref_spawn(argv, opts, 0, &tr->pid);
}

static int report(const struct tracer *tr, FILE *f)
{
	for (size_t i = 0; i < tr->t.nfuncs; i++)
		fprintf(f, "func %s %#" PRIx64 " %#" PRIx64 "\n", tr->t.funcs[i].name,
		        tr->t.funcs[i].start, tr->t.funcs[i].end);
	for (size_t i = 0; i < tr->t.nsites; i++) {
		const struct site *s = &tr->t.sites[i];
		const struct rep_count *k = &tr->count[i];
		fprintf(f,
		        "rep %#" PRIx64 " %#" PRIx64 " %" PRIu64 " %" PRIu64 " %" PRIu64 " %" PRIu64
		        "\n",
		        s->addr, s->next, k->executions, k->requested, k->iterations,
		        k->by_condition);
	}
	for (int sig = 1; sig < NSIG_MAX; sig++)
		if (tr->left[sig])
			fprintf(f, "signal %d %" PRIu64 " %" PRIu64 "\n", sig, tr->left[sig],
			        tr->resumed[sig]);
	fprintf(f, "exit %d\n", tr->status);
	return ferror(f) ? -1 : 0;
}

/* To out (written as OUT.tmp and renamed: a reader never sees half a report), or stdout. */
static void write_report(const struct tracer *tr, const char *out)
{
	if (!out) {
		if (report(tr, stdout) < 0 || fflush(stdout) != 0)
			ref_fatal("standard output: %s", strerror(errno));
		return;
	}
	char tmp[4096];
	snprintf(tmp, sizeof(tmp), "%s.tmp", out);
	FILE *f = fopen(tmp, "w");
	if (!f || report(tr, f) < 0 || fclose(f) != 0 || rename(tmp, out) < 0)
		ref_fatal("%s: %s", out, strerror(errno));
}

int main(int argc, char **argv)
{
	ref_fatal_init("ptrace_rep", end_program);
	const char *out, *own;
	char **prog;
	if (ref_args(argc, argv, &out, &own, &prog) < 0) {
		fprintf(stderr, "usage: ptrace_rep [-o OUT] OWN.o|NAMES -- PROG [ARG...]\n");
		return REF_TOOL_FAILED;
	}
	static struct tracer tr = {.mem = -1, .status = -1};
	current = &tr;
	char err[512];
	if (sites_load_rep(&tr.t, prog[0], own, err, sizeof(err)) < 0)
		ref_fatal("%s", err);
	tr.count = calloc(tr.t.nsites + 1, sizeof(*tr.count));
	if (!tr.count)
		ref_fatal("out of memory");
	spawn(&tr, prog);
	int st;
	while (wait_stop(&tr, &st) && handle(&tr, st))
		;
	if (tr.status < 0) /* ended while stepping: wait_stop recorded it */
		ref_fatal("the program's end was not seen");
	if (!tr.execs)
		ref_fatal("the program did not start (exit status %d)", tr.status);
	write_report(&tr, out);
	sites_free(&tr.t);
	free(tr.count);
	if (tr.mem >= 0)
		close(tr.mem);
	return tr.status;
}
