/* dbr_phases: two phases, each a hot loop in a function of its own called over
 * and over, for a live rewriter that must install the first phase's region,
 * unpatch it when the program moves on, and install the second's. Each function
 * is entered 3,000 times from main, so its entry (where a patch can go) is
 * sampled like its loop.
 * FACTS: prints "dbr_phases: 2997000000 <b>" where <b> is what phase_b's
 * arithmetic gives (the same natively and under pmusim); exit 0. Phase 1: 3,000
 * calls of phase_a, each a loop of 1,000 iterations with one data-dependent
 * branch (B1) besides its back edge; phase 2: 3,000 calls of phase_b, each a
 * loop of 1,000 iterations with one data-dependent branch (B2). No other code
 * runs between the phases. */
#include <stdio.h>

#define N 1000
#define CALLS 3000

static long v[N];

static long __attribute__((noipa)) phase_a(const long *a, long n)
{
	long s = 0;
	for (long i = 0; i < n; i++) {
		if (a[i] % 3 == 0) { /* B1: a third of the values */
			__asm__ volatile(""); /* a branch, not a conditional move */
			s += a[i];
		} else {
			s += a[i] / 2;
		}
	}
	return s;
}

static unsigned long __attribute__((noipa)) phase_b(unsigned long x, long n)
{
	for (long i = 0; i < n; i++) {
		x = x * 6364136223846793005ul + 1442695040888963407ul;
		if ((x >> 60) & 1) { /* B2: on the generator's bits */
			__asm__ volatile("");
			x ^= (unsigned long)i;
		}
	}
	return x;
}

int main(void)
{
	for (long i = 0; i < N; i++)
		v[i] = i;
	long a = 0;
	for (int k = 0; k < CALLS; k++)
		a += phase_a(v, N - k % 2);
	unsigned long b = 1;
	for (int k = 0; k < CALLS; k++)
		b = phase_b(b, N);
	printf("dbr_phases: %ld %lu\n", a, b);
	return 0;
}
