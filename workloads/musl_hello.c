/* musl_hello: built with musl-gcc -static. FACTS: prints "hello from musl sum=<n>"; exit 0. */
#include <stdio.h>
__attribute__((noinline)) static unsigned long work(unsigned n)
{
	unsigned long s = 0;
	for (unsigned i = 0; i < n; i++)   /* B1 */
		s += (i % 7 == 3) ? i * 2 : i;  /* B2 */
	return s;
}
int main(void)
{
	printf("hello from musl sum=%lu\n", work(5000));
	return 0;
}
