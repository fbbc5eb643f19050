/* null_call: prints a line, then calls through a NULL function pointer.
 * FACTS: prints "before call"; the call jumps to address 0, which is not
 * mapped: it dies of SIGSEGV (status 139), a fault at 0x0, not a signal it sent. */
#include <stdio.h>
int main(void)
{
	puts("before call");
	fflush(stdout);
	void (*volatile fn)(void) = NULL;
	fn();
	return 0;
}
