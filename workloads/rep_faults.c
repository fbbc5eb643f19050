/* REP string instructions at their edges, for the REP references (the native
 * ptrace one, tests/ref/ptrace_rep.c, and pmusim's register reference). Each REP
 * has a function of its own, so a site is one function's REP. Counts are elements
 * (bytes, words, dwords, qwords), not bytes. ROUNDS rounds of:
 * - widths: rep movsb/movsw/movsl/movsq and rep stosb/stosw/stosl/stosq with counts
 *   0, 1, 7 and 100: per site and round 4 executions, requested 108, iterations 108,
 *   none ended by its condition;
 * - conditions: repe cmpsw over 32 words with a mismatch at word 5 (6 iterations,
 *   ended by the condition), repne scasl for the zero dword at index 9 of 16 (10
 *   iterations, ended by the condition), repe cmpsb over 16 equal bytes (16
 *   iterations, count exhausted);
 * - address size: addr32 rep movsb with RCX = 2^32 + 20 (ECX counts: requested 20,
 *   20 iterations); addr32 repne scasb from RCX = -1 over a 5-byte string (requested
 *   2^32 - 1, 6 iterations, ended by the condition);
 * - left by siglongjmp: one rep movsb site copies 300 bytes into a buffer whose 101st
 *   byte is on a PROT_NONE page (the fault comes after 100 iterations; the SIGSEGV
 *   handler siglongjmps out), then 50 and 7 bytes elsewhere: per round 3 executions,
 *   requested 357, iterations 157;
 * - fixed and resumed: another rep movsb site copies 300 bytes the same way, but the
 *   handler makes the page writable and returns, so the REP goes on where it stopped
 *   (RCX = 200) and ends; then 20 bytes: per round 2 executions, requested 320,
 *   iterations 320 (a REP a handler returns into is the same execution);
 * - timer: an interval timer sends SIGALRM every 2 ms of real time (of simulated
 *   time under pmusim) while rep stosb of 512 bytes and repe cmpsb over 512 equal
 *   bytes run 10 times each; the handler only counts. Per round: stosb 10 executions,
 *   requested and iterations 5120; cmpsb the same, none ended by the condition —
 *   wherever the signals land.
 * Prints a checksum of the data the REPs wrote and compared; the same natively and
 * under pmusim (it does not depend on where a signal landed). */
#define _GNU_SOURCE
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/time.h>
#include <unistd.h>

#define ROUNDS 3
#define PAGE 4096

static unsigned char src[1024], dst[1024], big_a[512], big_b[512];
static uint16_t words_a[32], words_b[32];
static uint32_t dwords[16];
static char five[8] = "abcde";
static unsigned char *guarded; /* two pages: the second is PROT_NONE while a REP runs into it */
static sigjmp_buf escape;
static volatile sig_atomic_t resume_mode, faults, alarms;

#define MOVS(name, insn)                                                                   \
	static __attribute__((noipa)) void name(void *d, const void *s, uint64_t n)   \
	{                                                                                  \
		__asm__ volatile(insn : "+D"(d), "+S"(s), "+c"(n) : : "memory");           \
	}
#define STOS(name, insn)                                                                   \
	static __attribute__((noipa)) void name(void *d, uint64_t v, uint64_t n)      \
	{                                                                                  \
		__asm__ volatile(insn : "+D"(d), "+c"(n) : "a"(v) : "memory");             \
	}
MOVS(movsb, "rep movsb")
MOVS(movsw, "rep movsw")
MOVS(movsl, "rep movsl")
MOVS(movsq, "rep movsq")
STOS(stosb, "rep stosb")
STOS(stosw, "rep stosw")
STOS(stosl, "rep stosl")
STOS(stosq, "rep stosq")
MOVS(copy_left, "rep movsb")
MOVS(copy_resumed, "rep movsb")
MOVS(copy_addr32, "addr32 rep movsb")
STOS(fill_timed, "rep stosb")

/* iterations done by repe cmpsw over n words */
static __attribute__((noipa)) uint64_t cmp_words(const void *x, const void *y, uint64_t n)
{
	uint64_t left = n;
	__asm__ volatile("repe cmpsw" : "+S"(x), "+D"(y), "+c"(left) : : "memory", "cc");
	return n - left;
}

static __attribute__((noipa)) uint64_t cmp_bytes(const void *x, const void *y, uint64_t n)
{
	uint64_t left = n;
	__asm__ volatile("repe cmpsb" : "+S"(x), "+D"(y), "+c"(left) : : "memory", "cc");
	return n - left;
}

static __attribute__((noipa)) uint64_t cmp_timed(const void *x, const void *y, uint64_t n)
{
	uint64_t left = n;
	__asm__ volatile("repe cmpsb" : "+S"(x), "+D"(y), "+c"(left) : : "memory", "cc");
	return n - left;
}

/* iterations done by repne scasl looking for a zero dword in n */
static __attribute__((noipa)) uint64_t scan_dwords(const uint32_t *p, uint64_t n)
{
	uint64_t left = n;
	__asm__ volatile("repne scasl" : "+D"(p), "+c"(left) : "a"(0) : "memory", "cc");
	return n - left;
}

/* addr32 repne scasb from RCX = -1: ECX counts down from 2^32 - 1 */
static __attribute__((noipa)) uint64_t scan_addr32(const char *s)
{
	uint64_t c = UINT64_MAX;
	__asm__ volatile("addr32 repne scasb" : "+D"(s), "+c"(c) : "a"(0) : "memory", "cc");
	return 0xffffffffu - (c & 0xffffffffu);
}

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)si, (void)uc;
	faults++;
	if (!resume_mode)
		siglongjmp(escape, 1);
	mprotect(guarded + PAGE, PAGE, PROT_READ | PROT_WRITE); /* returns into the REP */
}

static void on_alarm(int sig)
{
	(void)sig;
	alarms++;
}

static uint64_t sum_of(const void *p, size_t n)
{
	uint64_t s = 0;
	for (size_t i = 0; i < n; i++)
		s = s * 31 + ((const unsigned char *)p)[i];
	return s;
}

static uint64_t widths(int r)
{
	static const uint64_t counts[] = {0, 1, 7, 100};
	uint64_t s = 0;
	for (int i = 0; i < 4; i++) {
		uint64_t n = counts[i];
		movsb(dst, src + r, n);
		movsw(dst, src + r, n);
		movsl(dst, src + r, n);
		movsq(dst, src + r, n);
		s += sum_of(dst, sizeof(dst));
		stosb(dst, (uint64_t)r + 1, n);
		stosw(dst, 0x0101u * (uint64_t)(r + 2), n);
		stosl(dst, 0x01010101u * (uint64_t)(r + 3), n);
		stosq(dst, 0x0101010101010101ull * (uint64_t)(r + 4), n);
		s += sum_of(dst, sizeof(dst));
	}
	return s;
}

static uint64_t conditions(void)
{
	memset(words_a, 7, sizeof(words_a));
	memset(words_b, 7, sizeof(words_b));
	words_b[5] = 9;
	for (int i = 0; i < 16; i++)
		dwords[i] = i == 9 ? 0 : (uint32_t)i + 1;
	return cmp_words(words_a, words_b, 32) * 100 + scan_dwords(dwords, 16) * 10 +
	       cmp_bytes(src, src, 16);
}

static uint64_t addr32(int r)
{
	uint64_t n = (1ull << 32) + 20;
	copy_addr32(dst, src + r, n);
	return sum_of(dst, 20) + scan_addr32(five);
}

/* A copy that faults after 100 bytes: left by siglongjmp, or resumed. */
static uint64_t faulting(int resume)
{
	unsigned char *d = guarded + PAGE - 100;
	mprotect(guarded + PAGE, PAGE, PROT_NONE);
	resume_mode = resume;
	if (resume) {
		copy_resumed(d, src, 300);
		copy_resumed(dst, src, 20);
	} else {
		if (sigsetjmp(escape, 1) == 0)
			copy_left(d, src, 300);
		copy_left(dst, src + 1, 50);
		copy_left(dst, src + 2, 7);
	}
	mprotect(guarded + PAGE, PAGE, PROT_READ | PROT_WRITE);
	return sum_of(d, 300) + sum_of(dst, 50);
}

static uint64_t timed(void)
{
	struct itimerval it = {{0, 2000}, {0, 2000}}, off = {{0, 0}, {0, 0}};
	uint64_t s = 0;
	memset(big_b, 3, sizeof(big_b));
	setitimer(ITIMER_REAL, &it, NULL);
	for (int i = 0; i < 10; i++) {
		fill_timed(big_a, 3, sizeof(big_a));
		s += cmp_timed(big_a, big_b, sizeof(big_a));
	}
	setitimer(ITIMER_REAL, &off, NULL);
	return s;
}

int main(void)
{
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	signal(SIGALRM, on_alarm);
	guarded = mmap(NULL, 2 * PAGE, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (guarded == MAP_FAILED)
		return 1;
	for (int i = 0; i < (int)sizeof(src); i++)
		src[i] = (unsigned char)(i * 13 + 5);
	uint64_t sum = 0;
	for (int r = 0; r < ROUNDS; r++) {
		sum += widths(r);
		sum += conditions();
		sum += addr32(r);
		sum += faulting(0);
		sum += faulting(1);
		sum += timed();
	}
	printf("rep_faults checksum %llu, %d faults\n", (unsigned long long)sum, (int)faults);
	return 0;
}
