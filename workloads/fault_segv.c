/* fault_segv: prints a line, then writes to address 16.
 * FACTS: prints "before fault"; dies of SIGSEGV (status 139). */
#include <stdio.h>
int main(void)
{
	puts("before fault");
	fflush(stdout);
	volatile int *p = (int *)16;
	*p = 1;
	return 0;
}
