/* Benchmark: branchy integer work with few stores (Collatz lengths and an
 * FNV-style hash), ~300 million instructions. Prints a checksum.
 * hot_compute N: the lengths of 1..N-1 instead of 1..399999, for make bench's
 * peak-RSS check on long runs (N = 1250000: ~1 G instructions, 11000000: ~10 G). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static unsigned collatz_len(unsigned long n)
{
	unsigned len = 0;
	while (n != 1) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		len++;
	}
	return len;
}

int main(int argc, char **argv)
{
	unsigned long end = argc > 1 ? strtoul(argv[1], NULL, 10) : 400000;
	unsigned long h = 1469598103934665603UL;
	for (unsigned long i = 1; i < end; i++)
		h = (h ^ collatz_len(i)) * 1099511628211UL;
	printf("%lu\n", h);
	return 0;
}
