/* Call stacks a thread-stack unit must get right (issue #7): deep recursion
 * that overflows small work areas, mutual recursion, tail calls (gcc -O2
 * makes them jumps), longjmp out of nested calls, callbacks through function
 * pointers, and three threads with different stacks switching under the
 * scheduler. Prints the same line on every run. */
#include <pthread.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>

#define NOINLINE __attribute__((noinline))
#define THREADS 3
#define ROUNDS 6

static volatile long sink;

NOINLINE static long spin(long n)
{
	unsigned long x = (unsigned long)n;
	for (long i = 0; i < n; i++)
		x = x * 6364136223846793005UL + 1442695040888963407UL;
	sink = (long)x;
	return (long)(x >> 56);
}

/* deep recursion: not a tail call (the result is used after the call) */
NOINLINE static long deep(int n)
{
	if (n == 0)
		return spin(3000);
	long r = deep(n - 1);
	sink += r;
	return r + 1;
}

/* mutual recursion */
NOINLINE static long odd(int n);
NOINLINE static long even(int n)
{
	if (n == 0)
		return spin(800);
	long r = odd(n - 1);
	return r + 1;
}

NOINLINE static long odd(int n)
{
	if (n == 0)
		return spin(900);
	long r = even(n - 1);
	return r + 2;
}

/* tail calls: tail1 jumps to tail2, tail2 jumps to leaf */
NOINLINE long tail_leaf(long x);
NOINLINE long tail_leaf(long x)
{
	return spin(600 + (x & 7));
}

NOINLINE long tail2(long x);
NOINLINE long tail2(long x)
{
	sink += x;
	return tail_leaf(x * 3);
}

NOINLINE long tail1(long x);
NOINLINE long tail1(long x)
{
	sink ^= x;
	return tail2(x + 1);
}

/* longjmp out of nested calls (one jmp_buf per thread) */
static __thread jmp_buf jb;

NOINLINE static void thrower(int depth)
{
	if (depth == 0) {
		spin(700);
		longjmp(jb, 1);
	}
	thrower(depth - 1);
	sink++;
}

NOINLINE static long catcher(int depth)
{
	if (setjmp(jb) == 0) {
		thrower(depth);
		return -1;
	}
	return spin(300);
}

/* callbacks through function pointers */
typedef long (*visit_fn)(long);

NOINLINE static long visit_spin(long v)
{
	return spin(200 + (v & 15));
}

NOINLINE static long visit_deep(long v)
{
	return deep(4 + (int)(v & 3)) + v;
}

NOINLINE static long walk(visit_fn const *fns, int n, long seed)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += fns[i % 2](seed + i);
	return s;
}

NOINLINE static long one_round(long id, int r)
{
	static visit_fn const fns[2] = {visit_spin, visit_deep};
	long s = deep(40 + (int)id * 25);
	s += even(12 + (int)id);
	s += tail1(r + id);
	s += catcher(4 + (int)id);
	s += walk(fns, 8, r);
	return s;
}

static void *worker(void *arg)
{
	long id = (long)arg, s = 0;
	for (int r = 0; r < ROUNDS; r++)
		s += one_round(id, r);
	return (void *)s;
}

int main(void)
{
	pthread_t t[THREADS];
	long total = deep(2000); /* far deeper than a small work area */
	for (long i = 0; i < THREADS; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)(i + 1)) != 0)
			return 1;
	total += (long)worker((void *)0);
	for (int i = 0; i < THREADS; i++) {
		void *r;
		pthread_join(t[i], &r);
		total += (long)r;
	}
	printf("callstacks: %ld\n", total);
	return 0;
}
