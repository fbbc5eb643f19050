/* jit_loop: code written at run time, as a JIT compiler writes it (W^X: the
 * memory is written while PROT_READ|PROT_WRITE, then made PROT_READ|PROT_EXEC
 * with mprotect). The generated function f(n, cb) sums n + (n-1) + ... + 1 in a
 * loop and returns cb(sum); main calls it CALLS times with n = N.
 *
 *   +0  53          push rbx
 *   +1  48 89 f3    mov rbx, rsi
 *   +4  31 c0       xor eax, eax
 *   +6  48 01 f8    add rax, rdi        <- loop
 *   +9  48 ff cf    dec rdi
 *   +12 75 f8       jnz +6
 *   +14 48 89 c7    mov rdi, rax
 *   +17 ff d3       call rbx
 *   +19 5b          pop rbx
 *   +20 c3          ret
 *
 * FACTS: prints "jit_loop: 200 calls, result 100200" (each call returns
 * 500500 + 1; 200 * 500501 mod 1000000); exit 0. Per run: the jnz at +12 is taken
 * CALLS * (N - 1) = 199800 times and not taken CALLS = 200 times; the call at
 * +17 reaches cb CALLS times. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#define N 1000
#define CALLS 200

typedef long (*jit_fn)(long n, long (*cb)(long));

static long calls_seen;

static long cb(long x)
{
	calls_seen++;
	return x + 1;
}

int main(void)
{
	static const unsigned char code[] = {0x53, 0x48, 0x89, 0xf3, 0x31, 0xc0, 0x48, 0x01, 0xf8, 0x48, 0xff,
					     0xcf, 0x75, 0xf8, 0x48, 0x89, 0xc7, 0xff, 0xd3, 0x5b, 0xc3};
	unsigned char *m = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (m == MAP_FAILED)
		return 1;
	memcpy(m, code, sizeof(code));
	if (mprotect(m, 4096, PROT_READ | PROT_EXEC) != 0)
		return 1;
	jit_fn f = (jit_fn)(void *)m;
	long total = 0;
	for (int i = 0; i < CALLS; i++)
		total = (total + f(N, cb)) % 1000000;
	printf("jit_loop: %ld calls, result %ld\n", calls_seen, total);
	return 0;
}
