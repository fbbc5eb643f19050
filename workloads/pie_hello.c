/* pie_hello: built -static-pie (ET_DYN without an interpreter: relocates itself
 * at start-up; pmusim places it at 0x555555554000 as Linux places PIE programs).
 * FACTS: prints "pie: <argv[1..]> sum=<n>" and the result of a loop over a
 * relocated function-pointer table; exit 0. */
#include <stdio.h>

__attribute__((noinline)) static int twice(int x) { return 2 * x; }
__attribute__((noinline)) static int square(int x) { return x * x; }
static int (*const table[2])(int) = {twice, square};

int main(int argc, char **argv)
{
	long sum = 0;
	for (int i = 0; i < 1000; i++)
		sum += table[i & 1](i);        /* B1: indirect call through a relocated table */
	printf("pie:");
	for (int i = 1; i < argc; i++)
		printf(" %s", argv[i]);
	printf(" sum=%ld\n", sum);
	return 0;
}
