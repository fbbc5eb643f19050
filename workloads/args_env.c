/* args_env: prints argc, argv[1..], PMUSIM_TEST_VAR, and stdin's length and checksum.
 * FACTS: output depends only on arguments, that variable and stdin; exit 0. */
#include <stdio.h>
#include <stdlib.h>
int main(int argc, char **argv)
{
	printf("argc=%d\n", argc);
	for (int i = 1; i < argc; i++)
		printf("argv[%d]=%s\n", i, argv[i]);
	const char *v = getenv("PMUSIM_TEST_VAR");
	printf("var=%s\n", v ? v : "unset");
	unsigned long n = 0, sum = 0;
	int c;
	while ((c = getchar()) != EOF)
		n++, sum = sum * 31 + (unsigned)c;
	printf("stdin=%lu sum=%lu\n", n, sum);
	return 0;
}
