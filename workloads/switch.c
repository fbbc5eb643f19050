/* switch: a dense 10-case switch that gcc -O2 compiles to a jump table
 * (indirect jmp in classify). FACTS: prints the count of each case; exit 0.
 * An optional argument N runs N calls of classify instead of 50,000 (one
 * indirect jump each). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((noinline)) static int classify(unsigned v)
{
	switch (v % 10) {       /* B1: indirect jump through the table */
	case 0: return v * 7 + 1;
	case 1: return v ^ 0x55;
	case 2: return v + 13;
	case 3: return (int)(v >> 2) - 9;
	case 4: return v * v;
	case 5: return v | 0x100;
	case 6: return v - 77;
	case 7: return v * 3 + 2;
	case 8: return v & 0xf0f;
	default: return (int)v;
	}
}

int main(int argc, char **argv)
{
	long counts[4] = {0};
	unsigned x = 12345;
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 50000;
	for (long i = 0; i < n; i++) {
		x = x * 1103515245u + 12345u;
		counts[classify(x >> 8) & 3]++;
	}
	printf("%ld %ld %ld %ld\n", counts[0], counts[1], counts[2], counts[3]);
	return 0;
}
