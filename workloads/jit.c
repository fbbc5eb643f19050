/* jit: self-modifying code. Writes machine code into a writable+executable
 * mapping, runs it, rewrites it (same address, different code: first without,
 * then with a REP instruction) and runs it again.
 * FACTS: prints "f1=42 f2=1234 f3=7 f4=16"; exit 0. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

typedef long (*fn)(void);

int main(void)
{
	unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	static const unsigned char c1[] = {0xb8, 42, 0, 0, 0, 0xc3};             /* mov eax,42; ret */
	static const unsigned char c2[] = {0xb8, 0xd2, 0x04, 0, 0, 0xc3};        /* mov eax,1234; ret */
	static const unsigned char c3[] = {0x31, 0xc0, 0x83, 0xc0, 0x07, 0xc3};  /* xor eax,eax; add eax,7; ret */
	/* lea rdi,[rip+0x100]; mov ecx,16; xor eax,eax; rep stosb; mov eax,16; sub eax,ecx; ret */
	static const unsigned char c4[] = {0x48, 0x8d, 0x3d, 0x00, 0x01, 0, 0, 0xb9, 16, 0, 0, 0, 0x31, 0xc0,
					   0xf3, 0xaa, 0xb8, 16, 0, 0, 0, 0x29, 0xc8, 0xc3};
	long r[4];
	const unsigned char *codes[4] = {c1, c2, c3, c4};
	size_t lens[4] = {sizeof c1, sizeof c2, sizeof c3, sizeof c4};
	for (int i = 0; i < 4; i++) {
		memcpy(m, codes[i], lens[i]);
		__builtin___clear_cache((char *)m, (char *)m + lens[i]);
		r[i] = ((fn)m)();
	}
	printf("f1=%ld f2=%ld f3=%ld f4=%ld\n", r[0], r[1], r[2], r[3]);
	return 0;
}
