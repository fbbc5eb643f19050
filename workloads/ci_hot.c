/* The CI example's program (docs/ci.md), built twice: as it is, and with
 * -DSLOWER, whose hot loop does one more multiply per element (by a 1 the
 * compiler cannot see, so the output is the same). fill and unchanged_work run
 * first and are the same code in both builds. */
#include <stdio.h>

#define N 4096
#define ROUNDS 40

static volatile unsigned long one = 1;

__attribute__((noinline)) static void fill(unsigned *v, int n)
{
	unsigned x = 12345;
	for (int i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		v[i] = x >> 8;
	}
}

__attribute__((noinline)) static unsigned long unchanged_work(const unsigned *v, int n)
{
	unsigned long odd = 0;
	for (int i = 0; i < n; i++)
		odd += v[i] & 1;
	return odd;
}

__attribute__((noinline)) static unsigned long checksum(const unsigned *v, int n)
{
	unsigned long s = 0, m = one;
	for (int i = 0; i < n; i++) {
		s += (unsigned long)v[i] * 2654435761u;
#ifdef SLOWER
		s *= m;
#endif
	}
	(void)m;
	return s;
}

int main(void)
{
	static unsigned v[N];
	fill(v, N);
	unsigned long t = unchanged_work(v, N);
	for (int r = 0; r < ROUNDS; r++)
		t += checksum(v, N);
	printf("%lu\n", t);
	return 0;
}
