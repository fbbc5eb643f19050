/* phases: two phases whose branch mixes differ, so that a sampling window
 * counted in units of one branch kind covers the phases unequally unless it is
 * cut in units of the triggering event. Phase 1 runs only conditional branches
 * (a loop over an array with a data-dependent test); phase 2 is a loop whose
 * every iteration makes 3 calls (3 returns) and 1 conditional branch besides
 * its back edge.
 * FACTS: prints "phases: 1666667 600000"; exit 0. Phase 1: 4,000,000
 * iterations of a loop with 2 conditional branches (back edge, test on
 * i % 3 == 0); phase 2: 400,000 iterations, calls to f, g and h each 400,000
 * times. */
#include <stdio.h>

#define N1 4000000
#define N2 400000

static long __attribute__((noinline)) f(long x) { return x + 1; }
static long __attribute__((noinline)) g(long x) { return x + 2; }
static long __attribute__((noinline)) h(long x) { return x ^ 3; }

int main(void)
{
	volatile long sink = 0;
	long a = 0, b = 0;
	for (long i = 0; i < N1; i++) {
		if (i % 3 == 0) {
			__asm__ volatile(""); /* a branch, not a conditional move */
			a++;
		}
		sink = i;
	}
	for (long i = 0; i < N2; i++) {
		long x = f(i);
		x = g(x);
		x = h(x);
		if (x & 1) {
			__asm__ volatile("");
			b += 3;
		}
		sink = x;
	}
	(void)sink;
	printf("phases: %ld %ld\n", a + 333333, b);
	return 0;
}
