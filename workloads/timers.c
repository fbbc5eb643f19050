/* POSIX timers and signalfd as programs use them: a periodic SIGEV_SIGNAL timer counted
 * by its handler, glibc's SIGEV_THREAD (a helper thread in sigwaitinfo starts the
 * callback), SIGEV_NONE read with timer_gettime, SIGEV_THREAD_ID, TIMER_ABSTIME, a CPU-time
 * timer interrupting a busy loop, overruns while the signal is blocked, two timers on one
 * real-time signal, timers not inherited by fork, sigwaitinfo/sigtimedwait, and signalfd:
 * reads, SFD_NONBLOCK, a new mask, poll, select and epoll readiness, a blocking read,
 * a timer's signal through it; error answers. Facts a test relies on: every line is the
 * same natively and under pmusim (no times are printed, only checks that hold for any
 * scheduling), and the exit status is 0. */
#define _GNU_SOURCE
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/select.h>
#include <sys/signalfd.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define MS 1000000L

static volatile sig_atomic_t ticks, bad_ticks, cpu_fired, thread_value, thread_calls;

static void on_tick(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	if (si->si_code == SI_TIMER && si->si_value.sival_int == 77)
		ticks++;
	else
		bad_ticks++;
}

static void on_cpu(int sig)
{
	(void)sig;
	cpu_fired = 1;
}

static void on_thread(union sigval v)
{
	thread_value = v.sival_int;
	thread_calls++;
}

static const char *err(int r)
{
	return r == 0 ? "ok" : strerrorname_np(errno);
}

static struct itimerspec its(long value_ns, long interval_ns)
{
	struct itimerspec t = {{interval_ns / 1000000000L, interval_ns % 1000000000L},
			       {value_ns / 1000000000L, value_ns % 1000000000L}};
	return t;
}

static timer_t make(clockid_t clk, int notify, int signo, int value)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = notify;
	ev.sigev_signo = signo;
	ev.sigev_value.sival_int = value;
	timer_t t;
	if (timer_create(clk, &ev, &t) != 0)
		printf("timer_create: %s\n", strerrorname_np(errno));
	return t;
}

static void sleep_ns(long ns)
{
	struct timespec ts = {ns / 1000000000L, ns % 1000000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

static void block(int sig, int how)
{
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, sig);
	sigprocmask(how, &m, NULL);
}

static void periodic(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_tick;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGUSR1, &sa, NULL);
	block(SIGUSR1, SIG_BLOCK);
	timer_t t = make(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR1, 77);
	struct itimerspec v = its(1 * MS, 1 * MS), cur;
	timer_settime(t, 0, &v, NULL);
	sigset_t open;
	sigprocmask(SIG_BLOCK, NULL, &open);
	sigdelset(&open, SIGUSR1);
	while (ticks < 5)
		sigsuspend(&open);
	timer_gettime(t, &cur);
	printf("timer periodic: %d ticks %s, interval %ld ns\n", ticks >= 5 ? 5 : ticks, bad_ticks ? "BAD" : "ok",
	       cur.it_interval.tv_nsec);
	printf("timer_delete: %s\n", err(timer_delete(t)));
	printf("timer_delete again: %s\n", err(timer_delete(t)));
	block(SIGUSR1, SIG_UNBLOCK);
	signal(SIGUSR1, SIG_DFL);
}

static void sigev_thread(void)
{
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD;
	ev.sigev_notify_function = on_thread;
	ev.sigev_value.sival_int = 42;
	timer_t t;
	int r = timer_create(CLOCK_MONOTONIC, &ev, &t);
	struct itimerspec v = its(2 * MS, 0);
	timer_settime(t, 0, &v, NULL);
	for (int i = 0; i < 5000 && !thread_calls; i++)
		sleep_ns(1 * MS);
	printf("sigev_thread: create %s, callback ran with value %d\n", err(r), thread_value);
	v = its(1 * MS, 1 * MS);
	timer_settime(t, 0, &v, NULL);
	for (int i = 0; i < 5000 && thread_calls < 4; i++)
		sleep_ns(1 * MS);
	timer_delete(t);
	printf("sigev_thread: periodic callbacks %s\n", thread_calls >= 4 ? ">= 4" : "missing");
}

static void sigev_none(void)
{
	timer_t t = make(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	struct itimerspec v = its(500 * MS, 0), cur, old;
	timer_settime(t, 0, &v, NULL);
	timer_gettime(t, &cur);
	long left = cur.it_value.tv_sec * 1000000000L + cur.it_value.tv_nsec;
	printf("sigev_none: armed, %s\n", left > 0 && left <= 500 * MS ? "0 < left <= 500 ms" : "wrong");
	v = its(2 * MS, 0);
	timer_settime(t, 0, &v, &old);
	long oleft = old.it_value.tv_sec * 1000000000L + old.it_value.tv_nsec;
	printf("timer_settime old value: %s\n", oleft > 0 && oleft <= left ? "the time left" : "wrong");
	sleep_ns(5 * MS);
	timer_gettime(t, &cur);
	printf("sigev_none: expired, left %ld.%09ld\n", (long)cur.it_value.tv_sec, cur.it_value.tv_nsec);
	v = its(1 * MS, 3 * MS);
	timer_settime(t, 0, &v, NULL);
	sleep_ns(10 * MS);
	timer_gettime(t, &cur);
	left = cur.it_value.tv_nsec;
	printf("sigev_none periodic: interval %ld ns, %s\n", cur.it_interval.tv_nsec,
	       cur.it_value.tv_sec == 0 && left > 0 && left <= 3 * MS ? "next expiry within it" : "wrong");
	printf("sigev_none: overrun %d\n", timer_getoverrun(t));
	timer_delete(t);
}

static void cpu_timer(void)
{
	signal(SIGPROF, on_cpu);
	struct timespec a, b;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
	sleep_ns(50 * MS);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
	long used = (b.tv_sec - a.tv_sec) * 1000000000L + (b.tv_nsec - a.tv_nsec);
	printf("cpu clock: a 50 ms sleep uses %s\n", used < 10 * MS ? "less than 10 ms" : "too much");
	timer_t t = make(CLOCK_PROCESS_CPUTIME_ID, SIGEV_SIGNAL, SIGPROF, 0);
	struct itimerspec v = its(2 * MS, 0);
	timer_settime(t, 0, &v, NULL);
	sleep_ns(20 * MS); /* no CPU time passes: it does not fire */
	int early = cpu_fired;
	volatile uint64_t spin = 0;
	while (!cpu_fired && spin < 4000000000ULL)
		spin++;
	printf("cpu timer: %s during a sleep, %s\n", early ? "fired" : "silent",
	       cpu_fired ? "fired during a busy loop" : "never fired");
	timer_delete(t);
	struct timespec th, pr;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &th);
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &pr);
	printf("thread cpu <= process cpu: %s\n",
	       th.tv_sec < pr.tv_sec || (th.tv_sec == pr.tv_sec && th.tv_nsec <= pr.tv_nsec) ? "yes" : "no");
	timer_t tt = make(CLOCK_THREAD_CPUTIME_ID, SIGEV_NONE, 0, 0);
	printf("thread cpu timer: %s\n", timer_delete(tt) == 0 ? "created" : "missing");
}

static void overrun(void)
{
	int sig = SIGRTMIN + 1;
	block(sig, SIG_BLOCK);
	timer_t t = make(CLOCK_MONOTONIC, SIGEV_SIGNAL, sig, 5);
	struct itimerspec v = its(1 * MS, 1 * MS);
	timer_settime(t, 0, &v, NULL);
	sleep_ns(30 * MS);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, sig);
	siginfo_t si;
	int got = sigwaitinfo(&m, &si);
	int ov = timer_getoverrun(t);
	printf("overrun: sigwaitinfo %s, code %s, value %d, %s, si_overrun %s\n", got == sig ? "ok" : "wrong",
	       si.si_code == SI_TIMER ? "SI_TIMER" : "other", si.si_value.sival_int, ov >= 10 ? ">= 10" : "too few",
	       si.si_overrun == ov ? "= timer_getoverrun" : "differs");
	timer_delete(t);
	struct timespec zero = {0, 1 * MS};
	while (sigtimedwait(&m, &si, &zero) == sig) /* a signal queued before the delete (Linux < 6.13) */
		;
	printf("sigtimedwait, nothing pending: %s\n", sigtimedwait(&m, &si, &zero) < 0 ? strerrorname_np(errno) : "got one");
	/* two timers on one real-time signal: both are queued, in expiry order */
	timer_t a = make(CLOCK_MONOTONIC, SIGEV_SIGNAL, sig, 1), b = make(CLOCK_MONOTONIC, SIGEV_SIGNAL, sig, 2);
	v = its(4 * MS, 0);
	timer_settime(b, 0, &v, NULL);
	v = its(1 * MS, 0);
	timer_settime(a, 0, &v, NULL);
	sleep_ns(20 * MS);
	int first = sigwaitinfo(&m, &si) == sig ? si.si_value.sival_int : -1;
	int second = sigtimedwait(&m, &si, &zero) == sig ? si.si_value.sival_int : -1;
	printf("two timers, one signal: %d then %d\n", first, second);
	timer_delete(a), timer_delete(b);
	/* an absolute time: one ahead on CLOCK_MONOTONIC, one behind on CLOCK_REALTIME */
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	a = make(CLOCK_MONOTONIC, SIGEV_SIGNAL, sig, 3);
	v = its(0, 0);
	v.it_value = now;
	v.it_value.tv_nsec += 3 * MS;
	if (v.it_value.tv_nsec >= 1000000000L)
		v.it_value.tv_sec++, v.it_value.tv_nsec -= 1000000000L;
	timer_settime(a, TIMER_ABSTIME, &v, NULL);
	struct timespec second_ = {1, 0};
	got = sigtimedwait(&m, &si, &second_);
	printf("TIMER_ABSTIME monotonic: %s value %d\n", got == sig ? "fired" : "missing", si.si_value.sival_int);
	b = make(CLOCK_REALTIME, SIGEV_SIGNAL, sig, 4);
	clock_gettime(CLOCK_REALTIME, &now);
	v.it_value = now;
	v.it_value.tv_sec -= 1; /* in the past: at once */
	timer_settime(b, TIMER_ABSTIME, &v, NULL);
	got = sigtimedwait(&m, &si, &second_);
	printf("TIMER_ABSTIME realtime in the past: %s value %d\n", got == sig ? "fired" : "missing", si.si_value.sival_int);
	timer_delete(a), timer_delete(b);
	block(sig, SIG_UNBLOCK);
}

static void thread_id(void)
{
	int sig = SIGRTMIN + 2;
	block(sig, SIG_BLOCK);
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_THREAD_ID;
	ev.sigev_signo = sig;
	ev.sigev_value.sival_int = 9;
	ev._sigev_un._tid = gettid();
	timer_t t;
	int r = timer_create(CLOCK_MONOTONIC, &ev, &t);
	struct itimerspec v = its(1 * MS, 0);
	timer_settime(t, 0, &v, NULL);
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, sig);
	siginfo_t si;
	int got = sigwaitinfo(&m, &si);
	printf("SIGEV_THREAD_ID: create %s, %s value %d\n", err(r), got == sig ? "got" : "missing", si.si_value.sival_int);
	timer_delete(t);
	ev._sigev_un._tid = 999999;
	printf("SIGEV_THREAD_ID to no thread: %s\n", err(timer_create(CLOCK_MONOTONIC, &ev, &t)));
	block(sig, SIG_UNBLOCK);
}

static void errors(void)
{
	timer_t t;
	struct sigevent ev;
	memset(&ev, 0, sizeof(ev));
	ev.sigev_notify = SIGEV_SIGNAL;
	ev.sigev_signo = SIGUSR1;
	printf("timer_create bad clock: %s\n", err(timer_create(12345, &ev, &t)));
	printf("timer_create CLOCK_MONOTONIC_RAW: %s\n", err(timer_create(CLOCK_MONOTONIC_RAW, &ev, &t)));
	ev.sigev_signo = 0;
	printf("timer_create signal 0: %s\n", err(timer_create(CLOCK_MONOTONIC, &ev, &t)));
	ev.sigev_signo = SIGUSR1;
	ev.sigev_notify = 99;
	printf("timer_create notify 99: %s\n", err(timer_create(CLOCK_MONOTONIC, &ev, &t)));
	/* the kernel's timer ids are ints: ask it directly about one that does not exist */
	struct itimerspec v = its(1 * MS, 0), cur;
	printf("timer_settime bad id: %s\n", err((int)syscall(SYS_timer_settime, 4242, 0, &v, NULL)));
	printf("timer_gettime bad id: %s\n", err((int)syscall(SYS_timer_gettime, 4242, &cur)));
	printf("timer_getoverrun bad id: %s\n", err((int)syscall(SYS_timer_getoverrun, 4242) < 0 ? -1 : 0));
	printf("timer_delete bad id: %s\n", err((int)syscall(SYS_timer_delete, 4242)));
	ev.sigev_notify = SIGEV_NONE;
	timer_create(CLOCK_MONOTONIC, &ev, &t);
	v.it_value.tv_nsec = 1000000000L;
	printf("timer_settime nsec 1e9: %s\n", err(timer_settime(t, 0, &v, NULL)));
	printf("timer_settime no value: %s\n", err((int)syscall(SYS_timer_settime, 0, 0, NULL, NULL) < 0 ? -1 : 0));
	timer_delete(t);
	struct timespec ts;
	printf("clock_gettime bad clock: %s\n", err(clock_gettime(12345, &ts)));
}

static void not_inherited(void)
{
	timer_t t = make(CLOCK_MONOTONIC, SIGEV_NONE, 0, 0);
	struct itimerspec v = its(1000 * MS, 0), cur;
	timer_settime(t, 0, &v, NULL);
	fflush(stdout);
	pid_t pid = fork();
	if (pid == 0)
		_exit(timer_gettime(t, &cur) == 0 ? 1 : errno == EINVAL ? 0 : 2);
	int st = 0;
	waitpid(pid, &st, 0);
	printf("fork: the child %s the timer\n", WEXITSTATUS(st) == 0 ? "has not got" : "has got");
	timer_delete(t);
}

static void read_one(int fd, const char *what)
{
	struct signalfd_siginfo ssi;
	ssize_t n = read(fd, &ssi, sizeof(ssi));
	if (n != sizeof(ssi)) {
		printf("%s: read %s\n", what, n < 0 ? strerrorname_np(errno) : "short");
		return;
	}
	printf("%s: signo %u code %d", what, ssi.ssi_signo, ssi.ssi_code);
	if (ssi.ssi_code == SI_TIMER)
		printf(" value %d ptr %s", ssi.ssi_int, ssi.ssi_ptr == (uint64_t)(uint32_t)ssi.ssi_int ? "ok" : "wrong");
	else
		printf(" pid %s", ssi.ssi_pid == (uint32_t)getpid() ? "ours" : "other");
	printf("\n");
}

static void sigfd(void)
{
	sigset_t m;
	sigemptyset(&m);
	sigaddset(&m, SIGUSR1);
	sigprocmask(SIG_BLOCK, &m, NULL);
	int fd = signalfd(-1, &m, SFD_CLOEXEC);
	raise(SIGUSR1);
	read_one(fd, "signalfd raise");
	kill(getpid(), SIGUSR1);
	read_one(fd, "signalfd kill");
	int nb = signalfd(-1, &m, SFD_NONBLOCK);
	char buf[sizeof(struct signalfd_siginfo)];
	printf("signalfd nonblocking read, nothing pending: %s\n", err((int)read(nb, buf, sizeof(buf))));
	printf("signalfd read into 16 bytes: %s\n", err((int)read(nb, buf, 16)));
	printf("signalfd write: %s\n", err((int)write(nb, buf, sizeof(buf)) < 0 ? -1 : 0));
	/* a new mask for the existing descriptor: SIGUSR2 too */
	sigaddset(&m, SIGUSR2);
	sigprocmask(SIG_BLOCK, &m, NULL);
	printf("signalfd new mask: %s\n", signalfd(nb, &m, 0) == nb ? "same fd" : "wrong");
	/* poll: readable once a timer's signal arrives */
	timer_t t = make(CLOCK_MONOTONIC, SIGEV_SIGNAL, SIGUSR2, 31);
	struct itimerspec v = its(3 * MS, 0);
	struct pollfd pf = {nb, POLLIN, 0};
	printf("poll before the timer: %d\n", poll(&pf, 1, 0));
	timer_settime(t, 0, &v, NULL);
	int r = poll(&pf, 1, 5000);
	printf("poll: %d, revents %s\n", r, pf.revents == POLLIN ? "POLLIN" : "other");
	read_one(nb, "signalfd timer");
	printf("poll after the read: %d\n", poll(&pf, 1, 0));
	/* select, then a blocking read that waits for the timer */
	v = its(2 * MS, 0);
	timer_settime(t, 0, &v, NULL);
	fd_set rs;
	FD_ZERO(&rs);
	FD_SET(nb, &rs);
	struct timeval tv = {5, 0};
	printf("select: %d, %s\n", select(nb + 1, &rs, NULL, NULL, &tv), FD_ISSET(nb, &rs) ? "readable" : "not readable");
	read_one(nb, "signalfd after select");
	v = its(2 * MS, 0);
	timer_settime(t, 0, &v, NULL);
	signalfd(fd, &m, 0); /* fd blocks: SIGUSR2 now too */
	read_one(fd, "signalfd blocking read");
	/* epoll */
	int ep = epoll_create1(EPOLL_CLOEXEC);
	struct epoll_event e = {EPOLLIN, {.u32 = 7}}, out[2];
	epoll_ctl(ep, EPOLL_CTL_ADD, nb, &e);
	printf("epoll before: %d\n", epoll_wait(ep, out, 2, 0));
	kill(getpid(), SIGUSR2);
	r = epoll_wait(ep, out, 2, 1000);
	printf("epoll after kill: %d, data %u\n", r, r > 0 ? out[0].data.u32 : 0);
	read_one(nb, "signalfd after epoll");
	/* two pending at once: one read takes both */
	struct signalfd_siginfo two[3];
	raise(SIGUSR2), raise(SIGUSR1);
	ssize_t n = read(nb, two, sizeof(two));
	printf("signalfd two pending: %zd bytes, signo %u then %u\n", n, two[0].ssi_signo, two[1].ssi_signo);
	int p[2];
	pipe(p);
	printf("signalfd on a pipe: %s\n", err(signalfd(p[0], &m, 0)));
	printf("signalfd on a closed fd: %s\n", err(signalfd(900, &m, 0)));
	printf("signalfd4 bad flags: %s\n", err((int)syscall(SYS_signalfd4, -1, &m, 8, 1) < 0 ? -1 : 0));
	printf("signalfd bad size: %s\n", err((int)syscall(SYS_signalfd4, -1, &m, 4, 0) < 0 ? -1 : 0));
	timer_delete(t);
	close(ep), close(nb), close(fd), close(p[0]), close(p[1]);
	sigprocmask(SIG_UNBLOCK, &m, NULL);
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	periodic();
	sigev_thread();
	sigev_none();
	cpu_timer();
	overrun();
	thread_id();
	errors();
	not_inherited();
	sigfd();
	return 0;
}
