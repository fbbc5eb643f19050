/* Touches one address given on the command line (hex) after printing a line:
 * the thread-stack unit's work areas must look like unmapped memory to the
 * program (SIGSEGV there, as natively). */
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv)
{
	if (argc < 2)
		return 2;
	volatile long *p = (volatile long *)(unsigned long)strtoull(argv[1], NULL, 16);
	printf("reading %p\n", (void *)p);
	fflush(stdout);
	return (int)(*p & 1);
}
