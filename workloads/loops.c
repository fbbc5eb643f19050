/* loops: nested counted loops and a data-dependent branch.
 * FACTS: prints "checksum=<n>" (deterministic); exit status 0. With the argument
 * --linger it sleeps 3 s before exiting (so BOLT's instrumentation runtime, which
 * dumps static programs' profiles periodically, writes a complete profile).
 *   run_loops is called 20 times, mix 200000 times.
 *   B1 (outer loop back-edge in run_loops): taken 99 times, not taken once per call.
 *   B2 (inner loop back-edge): 100 iterations per outer iteration.
 *   B3 (parity test in mix): depends on data, same on every run. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

__attribute__((noinline)) static unsigned mix(unsigned x)
{
	if (x & 1)              /* B3 */
		return x * 3 + 1;
	return x >> 1;
}

__attribute__((noinline)) static unsigned long run_loops(unsigned k)
{
	unsigned long sum = 0;
	for (unsigned i = 0; i < 100; i++)          /* B1 */
		for (unsigned j = 0; j < 100; j++)  /* B2 */
			sum += mix(i * 100 + j + k);
	return sum;
}

int main(int argc, char **argv)
{
	unsigned long s = 0;
	for (int k = 0; k < 20; k++)
		s += run_loops((unsigned)k);
	printf("checksum=%lu\n", s);
	fflush(stdout);
	if (argc > 1 && strcmp(argv[1], "--linger") == 0)
		sleep(3);
	return 0;
}
