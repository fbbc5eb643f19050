/* REP string instructions whose behaviour is known by construction (the
 * tests derive every count below from this file):
 * - copy_n: rep movsb with counts 0, 1, 7, 4096, then fill_q: rep stosq of n/8
 *   qwords and fill_b: rep stosb of n bytes, each once per round;
 * - cmp_planted: repe cmpsb over 64 bytes with a mismatch planted at index k
 *   (k = 0, 10, 63) and one equal pair: it stops after k+1 iterations, or runs
 *   all 64 when equal (count exhausted);
 * - scan_len: repne scasb for the NUL of strings of lengths 0, 5, 100 with
 *   RCX = -1 (strlen-style): iterations = length + 1, requested = 2^64 - 1.
 * ROUNDS rounds of all of it, or as many as the first argument says. Prints a
 * checksum so the work is not optimised away; the same natively and under pmusim. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROUNDS 50

static unsigned char src[8192], dst[8192], a[64], b[64];
static char strs[3][128];

static __attribute__((noinline)) void copy_n(void *d, const void *s, uint64_t n)
{
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
}

static __attribute__((noinline)) void fill_q(void *d, uint64_t v, uint64_t nq)
{
	__asm__ volatile("rep stosq" : "+D"(d), "+c"(nq) : "a"(v) : "memory");
}

static __attribute__((noinline)) void fill_b(void *d, int v, uint64_t n)
{
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(n) : "a"(v) : "memory");
}

/* iterations done by repe cmpsb over n bytes */
static __attribute__((noinline)) uint64_t cmp_planted(const void *x, const void *y, uint64_t n)
{
	uint64_t left = n;
	__asm__ volatile("repe cmpsb" : "+S"(x), "+D"(y), "+c"(left) : : "memory", "cc");
	return n - left;
}

/* iterations done by repne scasb looking for NUL from RCX = -1 */
static __attribute__((noinline)) uint64_t scan_len(const char *s)
{
	uint64_t c = UINT64_MAX;
	__asm__ volatile("repne scasb" : "+D"(s), "+c"(c) : "a"(0) : "memory", "cc");
	return UINT64_MAX - c;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : ROUNDS;
	static const uint64_t counts[] = {0, 1, 7, 4096};
	static const int planted[] = {0, 10, 63, -1};
	static const int lens[] = {0, 5, 100};
	uint64_t sum = 0;
	for (int i = 0; i < (int)sizeof(src); i++)
		src[i] = (unsigned char)(i * 31 + 7);
	for (int k = 0; k < 3; k++) {
		memset(strs[k], 'x', (size_t)lens[k]);
		strs[k][lens[k]] = 0;
	}
	for (int r = 0; r < rounds; r++) {
		for (int i = 0; i < 4; i++) {
			copy_n(dst, src + r, counts[i]);
			fill_q(dst + 4096, (uint64_t)r, counts[i] / 8);
			fill_b(dst + 4096, r, counts[i]);
			sum += dst[counts[i] ? counts[i] - 1 : 0];
		}
		for (int i = 0; i < 4; i++) {
			memset(a, 1, sizeof(a));
			memset(b, 1, sizeof(b));
			if (planted[i] >= 0)
				b[planted[i]] = 2;
			sum += cmp_planted(a, b, sizeof(a));
		}
		for (int k = 0; k < 3; k++)
			sum += scan_len(strs[k]);
	}
	printf("rep checksum %llu\n", (unsigned long long)sum);
	return 0;
}
