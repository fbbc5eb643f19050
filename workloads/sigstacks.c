/* Call stacks through signal handlers, for the thread-stack unit and perf's
 * DWARF unwinder: an interval timer interrupts interrupted_fn, and its handler
 * calls handler_work -> inner, which runs long enough for stack snapshots to
 * fall inside; a SIGUSR1 handler raises SIGUSR2 from two calls deep (a nested
 * delivery: two signal frames on the stack); a SIGSEGV handler on an alternate
 * stack calls two deep and leaves by siglongjmp; a SIGUSR2 handler on the
 * alternate stack returns normally; a SIGILL handler moves the saved RIP past
 * the ud2 that raised it and then works (the interrupted frame's return
 * address is then the instruction after the ud2). Built with CFI (gcc's
 * .eh_frame) and frame pointers; every function below is its own frame
 * (noinline, no tail calls).
 * FACTS: prints "sigstacks: ticks 6 nested 3 escapes 3 alt 3 skipped 3" and
 * exits 0. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

#define NOINLINE __attribute__((noinline))
#define ROUNDS 3

static volatile sig_atomic_t ticks, nested, escapes, alt_runs, skipped;
static volatile unsigned long sink;
static sigjmp_buf escape;
static char altstack[64 * 1024];

NOINLINE static unsigned long spin(unsigned long n)
{
	unsigned long x = n;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	return x >> 60;
}

/* the innermost frame of every handler's work */
NOINLINE static unsigned long inner(unsigned long n)
{
	unsigned long r = spin(n);
	sink += r;
	return r + 1;
}

NOINLINE static unsigned long handler_work(unsigned long n)
{
	unsigned long r = inner(n);
	sink += r;
	return r + 1;
}

/* SIGALRM: the interval timer's */
static void handler(int sig)
{
	(void)sig;
	ticks++;
	sink += handler_work(20000);
}

/* the timer interrupts this loop; it waits for `want` ticks */
NOINLINE static unsigned long interrupted_fn(int want)
{
	unsigned long x = 1;
	while (ticks < want)
		x = x * 3 + sink;
	sink = x;
	return x & 1;
}

/* SIGUSR2 (on the alternate stack when the action says so) */
static void on_usr2(int sig)
{
	char local;
	(void)sig;
	if (&local >= altstack && &local < altstack + sizeof(altstack))
		alt_runs++;
	nested++;
	sink += handler_work(15000);
}

NOINLINE static void raise_usr2(void)
{
	kill(getpid(), SIGUSR2); /* delivered on the way back from the system call */
	sink++;
}

NOINLINE static void usr1_work(void)
{
	sink += inner(5000);
	raise_usr2();
	sink++;
}

/* SIGUSR1: a second signal arrives while this handler runs */
static void on_usr1(int sig)
{
	(void)sig;
	usr1_work();
	sink++;
}

NOINLINE static void seg_deeper(void)
{
	sink += inner(15000);
	siglongjmp(escape, 1);
}

/* SIGSEGV on the alternate stack, left by siglongjmp from two calls deep */
static void on_segv(int sig)
{
	(void)sig;
	seg_deeper();
}

NOINLINE static void fault_here(volatile int *p)
{
	*p = 1;
	sink++;
}

/* SIGILL: go on after the 2-byte ud2, then work */
static void on_ill(int sig, siginfo_t *si, void *ucp)
{
	ucontext_t *uc = ucp;
	(void)sig, (void)si;
	uc->uc_mcontext.gregs[REG_RIP] += 2;
	skipped++;
	sink += handler_work(15000);
}

NOINLINE static void trap_here(void)
{
	__asm__ volatile("ud2");
	sink++;
}

static void install(int sig, void (*fn)(int), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = fn;
	sa.sa_flags = flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

int main(void)
{
	install(SIGALRM, handler, SA_RESTART);
	struct itimerval it = {{0, 300}, {0, 300}};
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 1; i <= 2 * ROUNDS; i++)
		sink += interrupted_fn(i);
	it = (struct itimerval){{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);

	install(SIGUSR1, on_usr1, 0);
	install(SIGUSR2, on_usr2, 0);
	for (int i = 0; i < ROUNDS; i++)
		kill(getpid(), SIGUSR1);

	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0};
	sigaltstack(&ss, NULL);
	install(SIGSEGV, on_segv, SA_ONSTACK | SA_NODEFER);
	for (int i = 0; i < ROUNDS; i++)
		if (sigsetjmp(escape, 1) == 0)
			fault_here((volatile int *)(uintptr_t)0x10);
		else
			escapes++;
	install(SIGUSR2, on_usr2, SA_ONSTACK);
	for (int i = 0; i < ROUNDS; i++)
		kill(getpid(), SIGUSR2);
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_ill;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGILL, &sa, NULL);
	for (int i = 0; i < ROUNDS; i++)
		trap_here();
	printf("sigstacks: ticks %d nested %d escapes %d alt %d skipped %d\n", ticks,
	       nested - alt_runs, escapes, alt_runs, skipped);
	return 0;
}
