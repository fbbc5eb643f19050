/* Indirect calls through retpolines (built with gcc -mindirect-branch=thunk):
 * each `call *%rax` becomes `call __x86_indirect_thunk_rax`, whose own
 * `call` pushes a return address that its `ret` then overwrites with the
 * target — a call that never returns and a ret that is a jump. A thread-stack
 * unit sees a stale frame unless the thunk's ret is marked as a return
 * (`--tstack-mark return:__x86_indirect_thunk_rax+0x10`). Prints one line. */
#include <stdio.h>

typedef long (*fn)(long);

__attribute__((noinline)) static long leaf(long x)
{
	long s = 0;
	for (long i = 0; i < x; i++)
		s += i * x;
	return s;
}

__attribute__((noinline)) static long twice(long x)
{
	return leaf(x + 1) + leaf(x);
}

static fn const table[2] = {leaf, twice};

__attribute__((noinline)) long dispatch(long i, long x);
__attribute__((noinline)) long dispatch(long i, long x)
{
	return table[i & 1](x) + 1;
}

int main(void)
{
	long s = 0;
	for (long i = 0; i < 20000; i++)
		s += dispatch(i, 200 + (i & 7));
	printf("retpoline: %ld\n", s);
	return 0;
}
