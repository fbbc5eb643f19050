/* strings: REP string instructions with known counts (inline asm).
 * FACTS: prints "copy=ok fill=ok cmp=17 len=40 zero=ok"; exit 0.
 *   rep movsb: 300 iterations; rep stosq: 64 iterations; repe cmpsb: stops after
 *   18 iterations (first difference at index 17); repne scasb with RCX=-1 over a
 *   40-char string: 41 iterations; rep stosb with RCX=0: 0 iterations. */
#include <stdio.h>
#include <string.h>

static char src[300], dst[300], text[64];
static unsigned long big[64];

int main(void)
{
	for (int i = 0; i < 300; i++)
		src[i] = (char)(i * 7);
	void *d = dst, *s = src;
	unsigned long c = 300;
	__asm__ volatile("rep movsb" : "+D"(d), "+S"(s), "+c"(c) : : "memory");
	d = big, c = 64;
	__asm__ volatile("rep stosq" : "+D"(d), "+c"(c) : "a"(0x0101010101010101UL) : "memory");
	char a[32] = "abcdefghijklmnopqXstuvwxyz", b[32] = "abcdefghijklmnopqrstuvwxyz";
	const void *pa = a, *pb = b;
	c = 26;
	__asm__ volatile("repe cmpsb" : "+S"(pa), "+D"(pb), "+c"(c) : : "memory", "cc");
	long cmp_at = (const char *)pa - a - 1;
	memset(text, 0, sizeof text);
	for (int i = 0; i < 40; i++)
		text[i] = 'a' + i % 26;
	const void *p = text;
	c = (unsigned long)-1;
	__asm__ volatile("repne scasb" : "+D"(p), "+c"(c) : "a"(0) : "memory", "cc");
	long len = (long)(~c - 1);
	d = dst, c = 0;
	__asm__ volatile("rep stosb" : "+D"(d), "+c"(c) : "a"(0) : "memory");
	printf("copy=%s fill=%s cmp=%ld len=%ld zero=%s\n", memcmp(dst, src, 300) ? "bad" : "ok",
	       big[63] == 0x0101010101010101UL ? "ok" : "bad", cmp_at, len, d == dst ? "ok" : "bad");
	return 0;
}
