/* A program that works a little, then waits as its argument says, forever unless the
 * world outside answers: "spin" (a loop that never ends), "read" (standard input),
 * "poll" (standard input), "fifo PATH [GO]" (opening a FIFO nobody writes to, once the
 * file GO exists: a signal just before a blocking call). For tests of
 * how a run ends when pmusim is signalled while the program waits in a host call.
 * Without an argument it only works and ends: the suites that run every workload
 * without arguments must see it end. */
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	volatile unsigned long x = 0;
	for (unsigned long i = 0; i < 3000000; i++) /* some samples before the wait */
		x += i;
	if (argc < 2)
		return 0;
	const char *how = argv[1];
	char b[8];
	if (strcmp(how, "read") == 0)
		return read(0, b, sizeof(b)) < 0;
	if (strcmp(how, "poll") == 0) {
		struct pollfd p = {0, POLLIN, 0};
		return poll(&p, 1, -1) < 0;
	}
	if (strcmp(how, "fifo") == 0 && argc > 2) {
		while (argc > 3 && access(argv[3], F_OK) != 0)
			; /* until the test has signalled pmusim */
		return open(argv[2], O_RDONLY) < 0;
	}
	for (;;)
		x++;
}
