/* Address-space reservations as language runtimes make them: a terabyte of PROT_NONE
 * reserved at once (GHC, Go, the JVM), pieces of it made accessible and used, an access
 * to the rest faulting with SEGV_ACCERR, and MAP_32BIT mappings below 2 GiB (JITs that
 * want rel32 reach). Facts a test relies on: the output is the same natively and under
 * pmusim. */
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

static sigjmp_buf env;
static volatile int fault_code;

static void on_segv(int sig, siginfo_t *si, void *uc)
{
	(void)sig, (void)uc;
	fault_code = si->si_code;
	siglongjmp(env, 1);
}

int main(void)
{
	size_t tib = 1ULL << 40, piece = 1 << 20;
	char *r = mmap(NULL, tib, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	printf("1 TiB reserved: %s\n", r == MAP_FAILED ? "failed" : "yes");
	if (r == MAP_FAILED)
		return 1;
	/* commit a piece in the middle by mprotect, another by MAP_FIXED */
	char *a = r + (tib / 2), *b = r + tib - 2 * piece;
	printf("mprotect: %d\n", mprotect(a, piece, PROT_READ | PROT_WRITE));
	printf("map fixed: %s\n",
	       mmap(b, piece, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED, -1, 0) == b ? "yes" : "no");
	int fresh_zero = a[100] == 0 && a[piece - 1] == 0;
	memset(a, 7, piece);
	memset(b, 9, piece);
	long sum = 0;
	for (size_t i = 0; i < piece; i += 4096)
		sum += a[i] + b[i];
	printf("committed pieces read back: %ld, fresh memory zero: %s\n", sum, fresh_zero ? "yes" : "no");
	struct sigaction sa = {0};
	sa.sa_sigaction = on_segv;
	sa.sa_flags = SA_SIGINFO;
	sigaction(SIGSEGV, &sa, NULL);
	if (sigsetjmp(env, 1) == 0) {
		volatile char c = r[12345];
		(void)c;
		printf("reserved memory read: no fault\n");
	} else {
		printf("reserved memory read: SIGSEGV, %s\n", fault_code == SEGV_ACCERR ? "SEGV_ACCERR" : fault_code == SEGV_MAPERR ? "SEGV_MAPERR" : "another code");
	}
	printf("munmap: %d\n", munmap(r, tib));

	void *low = mmap(NULL, 3 * piece, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	printf("MAP_32BIT below 2 GiB: %s\n",
	       low != MAP_FAILED && (uintptr_t)low + 3 * piece <= 0x80000000u ? "yes" : "no");
	return 0;
}
