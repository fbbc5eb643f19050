/* Benchmark: store-heavy work (sieve of Eratosthenes over 2 MB, 4 rounds),
 * ~170 million instructions, about a quarter of them stores. Prints a checksum. */
#include <stdio.h>
#include <string.h>

static unsigned char sieve[2000000];

int main(void)
{
	unsigned long h = 0;
	for (int r = 0; r < 4; r++) {
		memset(sieve, 0, sizeof sieve);
		for (unsigned i = 2; i < sizeof sieve; i++)
			if (!sieve[i]) {
				h = h * 31 + i;
				for (unsigned j = i * 2; j < sizeof sieve; j += i)
					sieve[j] = 1;
			}
	}
	printf("%lu\n", h);
	return 0;
}
