/* indirect: calls through a table of function pointers (indirect calls) and a
 * tail call (step -> finish becomes a jmp at -O2).
 * FACTS: prints "total=<n>"; exit 0. Each of op_add/op_sub/op_mul/op_xor is
 * called 2500 times through the table. */
#include <stdio.h>

typedef long (*op_fn)(long, long);
__attribute__((noinline)) static long op_add(long a, long b) { return a + b; }
__attribute__((noinline)) static long op_sub(long a, long b) { return a - b; }
__attribute__((noinline)) static long op_mul(long a, long b) { return a * b; }
__attribute__((noinline)) static long op_xor(long a, long b) { return a ^ b; }

__attribute__((noinline)) static long finish(long v) { return v * 2 + 1; }
__attribute__((noinline)) static long step(long v) { return finish(v + 1); } /* B2: tail call */

static op_fn ops[4] = {op_add, op_sub, op_mul, op_xor};

int main(void)
{
	long t = 1;
	for (int i = 0; i < 10000; i++)
		t = ops[i & 3](t, i) & 0xffffff;   /* B1: indirect call */
	for (int i = 0; i < 1000; i++)
		t = step(t) & 0xffff;
	printf("total=%ld\n", t);
	return 0;
}
