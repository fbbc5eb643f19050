/* Benchmark: branchy integer work with few stores (Collatz lengths and an
 * FNV-style hash), ~300 million instructions. Prints a checksum. */
#include <stdio.h>

__attribute__((noinline)) static unsigned collatz_len(unsigned long n)
{
	unsigned len = 0;
	while (n != 1) {
		n = (n & 1) ? 3 * n + 1 : n / 2;
		len++;
	}
	return len;
}

int main(void)
{
	unsigned long h = 1469598103934665603UL;
	for (unsigned long i = 1; i < 400000; i++)
		h = (h ^ collatz_len(i)) * 1099511628211UL;
	printf("%lu\n", h);
	return 0;
}
