/* recursion: fib(22) and mutual recursion is_even/is_odd.
 * FACTS: prints "fib=17711 even=1 odd=0"; exit 0. fib is called 57313 times. */
#include <stdio.h>

__attribute__((noinline)) static int fib(int n)
{
	if (n < 2)               /* B1 */
		return n;
	return fib(n - 1) + fib(n - 2);
}

__attribute__((noinline)) static int is_odd(int n);
__attribute__((noinline)) static int is_even(int n)
{
	return n == 0 ? 1 : is_odd(n - 1);
}
__attribute__((noinline)) static int is_odd(int n)
{
	return n == 0 ? 0 : is_even(n - 1);
}

int main(void)
{
	volatile int n = 22, m = 300;
	printf("fib=%d even=%d odd=%d\n", fib(n), is_even(m), is_odd(m));
	return 0;
}
