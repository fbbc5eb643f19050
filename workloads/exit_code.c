/* exit_code: FACTS: prints "bye"; exit status 42. */
#include <stdio.h>
int main(void)
{
	puts("bye");
	return 42;
}
