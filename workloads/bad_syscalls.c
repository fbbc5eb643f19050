/* bad_syscalls: makes 20 system calls with numbers no kernel has (600..619)
 * and 5 with negative numbers (-1..-5), then prints how many failed with ENOSYS.
 * FACTS: prints "ENOSYS 25" (Linux answers every one with ENOSYS); exit 0. */
#include <errno.h>
#include <stdio.h>
#include <unistd.h>
#include <sys/syscall.h>
int main(void)
{
	int n = 0;
	for (long nr = 600; nr < 620; nr++)
		n += syscall(nr) == -1 && errno == ENOSYS;
	for (long nr = -1; nr >= -5; nr--)
		n += syscall(nr) == -1 && errno == ENOSYS;
	printf("ENOSYS %d\n", n);
	return 0;
}
