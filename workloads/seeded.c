/* seeded: prints what the machine decides rather than the program: getrandom
 * bytes, the AT_RANDOM bytes, the CPUID vendor and signature, and the rdtsc
 * difference across a fixed loop. FACTS: natively the first two and the last
 * change from run to run; under pmusim they depend only on --seed (the random
 * bytes) and on the instruction count (rdtsc: pmusim's TSC counts retired
 * instructions), and CPUID reports "GenuineIntel 0x00050654" on every host. */
#include <cpuid.h>
#include <stdio.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/random.h>
#include <x86intrin.h>

int main(void)
{
	unsigned char r[8];
	getrandom(r, sizeof r, 0);
	const unsigned char *at = (const unsigned char *)getauxval(AT_RANDOM);
	unsigned a, b, c, d;
	char vendor[13] = {0};
	__cpuid(0, a, b, c, d);
	memcpy(vendor, &b, 4), memcpy(vendor + 4, &d, 4), memcpy(vendor + 8, &c, 4);
	__cpuid(1, a, b, c, d);
	unsigned long long t0 = __rdtsc();
	volatile unsigned sink = 0;
	for (unsigned i = 0; i < 1000; i++)
		sink += i;
	unsigned long long t1 = __rdtsc();
	printf("getrandom=");
	for (int i = 0; i < 8; i++)
		printf("%02x", r[i]);
	printf(" at_random=");
	for (int i = 0; i < 8; i++)
		printf("%02x", at[i]);
	printf(" cpuid=%s 0x%08x rdtsc_delta=%llu\n", vendor, a, t1 - t0);
	return 0;
}
