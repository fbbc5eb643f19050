/* abort: prints a line and calls abort(). FACTS: prints "aborting"; SIGABRT (134). */
#include <stdio.h>
#include <stdlib.h>
int main(void)
{
	puts("aborting");
	fflush(stdout);
	abort();
}
