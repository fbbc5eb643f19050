/* Signals a program handles itself: raise/kill/tgkill to handlers with
 * siginfo, a SIGSEGV handler that siglongjmps out, a divide by zero caught as
 * SIGFPE, a handler that repairs the faulting context, an interval timer
 * interrupting a computation, sigaltstack, masks and sigsuspend. Prints the same
 * lines natively and under pmusim. */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <ucontext.h>
#include <unistd.h>

static volatile sig_atomic_t got_usr1, got_usr2, ticks, code_seen;
static sigjmp_buf escape;
static volatile int zero;
static char altstack[64 * 1024];
static volatile int on_alt;

static void on_usr(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	if (sig == SIGUSR1)
		got_usr1++;
	else
		got_usr2++;
	code_seen = si->si_code;
	double d = 1.5; /* handlers may use SSE registers */
	for (int i = 0; i < 10; i++)
		d = d * 1.25 + (double)i;
	if (d < 0)
		write(1, "?", 1);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)uc;
	char local;
	on_alt = &local >= altstack && &local < altstack + sizeof(altstack);
	printf("caught signal %d at address %p code %d\n", sig, si->si_addr, si->si_code);
	siglongjmp(escape, 1);
}

static void on_fpe(int sig, siginfo_t *si, void *uc)
{
	(void)si, (void)uc;
	printf("caught SIGFPE %d code %d\n", sig, si->si_code);
	siglongjmp(escape, 2);
}

/* SIGILL: skip the 2-byte ud2 and go on after it */
static void on_ill(int sig, siginfo_t *si, void *ucp)
{
	ucontext_t *uc = ucp;
	(void)si;
	printf("caught SIGILL %d, skipping the instruction\n", sig);
	uc->uc_mcontext.gregs[REG_RIP] += 2;
}

static void on_alarm(int sig)
{
	(void)sig;
	ticks++;
}

static void install(int sig, void (*fn)(int, siginfo_t *, void *), int flags)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = fn;
	sa.sa_flags = SA_SIGINFO | flags;
	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
}

int main(void)
{
	setvbuf(stdout, NULL, _IONBF, 0);
	install(SIGUSR1, on_usr, 0);
	install(SIGUSR2, on_usr, SA_RESTART);
	raise(SIGUSR1);
	kill(getpid(), SIGUSR2);
	printf("usr1 %d usr2 %d last code %d\n", got_usr1, got_usr2, code_seen);

	/* blocked signals wait until unblocked */
	sigset_t set, old;
	sigemptyset(&set);
	sigaddset(&set, SIGUSR1);
	sigprocmask(SIG_BLOCK, &set, &old);
	raise(SIGUSR1);
	sigset_t pend;
	sigpending(&pend);
	printf("pending while blocked: %d, delivered: %d\n", sigismember(&pend, SIGUSR1), got_usr1);
	sigprocmask(SIG_SETMASK, &old, NULL);
	printf("after unblock: delivered %d\n", got_usr1);

	/* a fault handled on an alternate stack, left with siglongjmp */
	stack_t ss = {.ss_sp = altstack, .ss_size = sizeof(altstack), .ss_flags = 0};
	sigaltstack(&ss, NULL);
	install(SIGSEGV, on_segv, SA_ONSTACK);
	if (sigsetjmp(escape, 1) == 0) {
		volatile int *bad = (int *)(uintptr_t)0x10;
		*bad = 1;
		printf("not reached\n");
	}
	printf("back from SIGSEGV, handler ran on the alternate stack: %d\n", on_alt);
	install(SIGFPE, on_fpe, 0);
	if (sigsetjmp(escape, 1) == 0)
		printf("%d\n", 7 / zero);
	printf("back from SIGFPE\n");
	install(SIGILL, on_ill, 0);
	__asm__ volatile("ud2");
	printf("after ud2\n");

	/* an interval timer interrupting a loop */
	signal(SIGALRM, on_alarm);
	struct itimerval it = {{0, 2000}, {0, 2000}};
	setitimer(ITIMER_REAL, &it, NULL);
	volatile unsigned long x = 0;
	while (ticks < 5)
		x++;
	it = (struct itimerval){{0, 0}, {0, 0}};
	setitimer(ITIMER_REAL, &it, NULL);
	printf("timer ticks: %d\n", ticks);

	/* wait for a signal with sigsuspend */
	sigprocmask(SIG_BLOCK, &set, &old);
	alarm(1);
	sigset_t wait;
	sigemptyset(&wait);
	ticks = 0;
	sigsuspend(&wait);
	printf("sigsuspend returned after SIGALRM: %d\n", ticks);
	alarm(1);
	pause();
	printf("pause returned after SIGALRM: %d\n", ticks);
	signal(SIGTERM, SIG_DFL);
	raise(SIGTERM);
	printf("not reached\n");
	return 0;
}
