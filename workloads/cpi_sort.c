/* cpi_sort: sorts pseudo-random arrays three ways — an insertion sort of short
 * runs, a merge of them, and libc's qsort with a comparison function — so that
 * loads, stores, data-dependent branches and calls mix with very different
 * CPIs per function. FACTS: prints "sorted=<n> check=<x>" (deterministic: a
 * fixed LCG, no system randomness); exit 0. An optional argument N sorts N
 * arrays of 4096 ints (default 8). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LEN 4096
#define RUN 16

static unsigned lcg(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return *s >> 8;
}

__attribute__((noinline)) static void insertion_runs(int *a, int n)
{
	for (int base = 0; base < n; base += RUN)
		for (int i = base + 1; i < base + RUN && i < n; i++) {
			int v = a[i], j = i - 1;
			while (j >= base && a[j] > v) {
				a[j + 1] = a[j];
				j--;
			}
			a[j + 1] = v;
		}
}

__attribute__((noinline)) static void merge(const int *src, int *dst, int lo, int mid, int hi)
{
	int i = lo, j = mid, k = lo;
	while (i < mid && j < hi)
		dst[k++] = src[i] <= src[j] ? src[i++] : src[j++];
	while (i < mid)
		dst[k++] = src[i++];
	while (j < hi)
		dst[k++] = src[j++];
}

__attribute__((noinline)) static void merge_sort(int *a, int *tmp, int n)
{
	insertion_runs(a, n);
	for (int w = RUN; w < n; w *= 2) {
		for (int lo = 0; lo < n; lo += 2 * w) {
			int mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
			merge(a, tmp, lo, mid, hi);
		}
		memcpy(a, tmp, (size_t)n * sizeof(*a));
	}
}

static int cmp_int(const void *x, const void *y)
{
	int a = *(const int *)x, b = *(const int *)y;
	return (a > b) - (a < b);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 8;
	static int a[LEN], b[LEN], tmp[LEN];
	unsigned seed = 12345, check = 0;
	long sorted = 0;
	for (long r = 0; r < rounds; r++) {
		for (int i = 0; i < LEN; i++)
			a[i] = b[i] = (int)(lcg(&seed) % 100000);
		merge_sort(a, tmp, LEN);
		qsort(b, LEN, sizeof(int), cmp_int);
		for (int i = 0; i < LEN; i++)
			check = check * 31 + (unsigned)(a[i] == b[i] ? a[i] : -1);
		sorted += 2;
	}
	printf("sorted=%ld check=%u\n", sorted, check);
	return 0;
}
