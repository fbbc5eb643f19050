/* "call 1f; 1: pop %reg": code reading its own address (i386 PIC thunks
 * inlined, position-independent hand-written code, some JITs). The call
 * pushes a return address that no ret uses: the pop takes it off again. A
 * thread-stack unit that sees only calls and returns keeps a stale frame under
 * every call made after it, until the function returns; marking the pop as a
 * return (`pmusim record --tstack-mark return:ADDR`) pops it. locate() reads
 * its address that way and then calls deeper(), which calls spin(), twice
 * (one time in ten the second call goes through nocfi_deeper(), hand-written
 * assembly without CFI): stack snapshots fall inside all of them. The C functions keep their frame
 * pointers, so their CFI (CFA = rbp + 16 in the body) stays right across the
 * push and pop.
 * FACTS: prints "getpc: 200 of 200 right, N" (N the same on every run, natively
 * too) and exits 0. */
#include <stdio.h>

#define NOINLINE __attribute__((noinline, noclone))

static volatile unsigned long sink;

NOINLINE static unsigned long spin(unsigned long n)
{
	unsigned long x = n;
	for (unsigned long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = x;
	return x >> 60;
}

NOINLINE unsigned long deeper(unsigned long n);
NOINLINE unsigned long deeper(unsigned long n)
{
	unsigned long r = spin(n);
	sink += r;
	return r + 1;
}

/* Hand-written assembly without .cfi directives and without a frame
 * pointer of its own: calls deeper(n) with the stack aligned. No FDE covers
 * it, so a DWARF unwinder cannot get past its frame. */
unsigned long nocfi_deeper(unsigned long n);
__asm__(".text\n"
        ".globl nocfi_deeper\n"
        ".type nocfi_deeper, @function\n"
        "nocfi_deeper:\n"
        "	sub $8, %rsp\n"
        "	call deeper\n"
        "	add $8, %rsp\n"
        "	ret\n"
        ".size nocfi_deeper, .-nocfi_deeper\n");

/* 1 when the address the call pushed is the pop's own address */
NOINLINE static int locate(unsigned long n, unsigned long *acc, int via_asm)
{
	unsigned long pc, want;
	__asm__ volatile("call 1f\n"
	                 "1: pop %0\n"
	                 "lea 1b(%%rip), %1\n"
	                 : "=r"(pc), "=r"(want));
	*acc += deeper(n);
	*acc += via_asm ? nocfi_deeper(n / 2) : deeper(n / 2);
	return pc == want;
}

int main(void)
{
	unsigned long acc = 0;
	int right = 0;
	for (int i = 0; i < 200; i++)
		right += locate(2000 + (unsigned long)(i % 7) * 100, &acc, i % 10 == 0);
	printf("getpc: %d of 200 right, %lu\n", right, acc);
	return 0;
}
