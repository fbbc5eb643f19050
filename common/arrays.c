/* Sorting, searching and copying arrays that may be empty and NULL (arrays.h). */
#include "common/arrays.h"

#include <stdlib.h>
#include <string.h>

void arrays_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n)
		qsort(base, n, size, cmp);
}

void *arrays_find(const void *key, const void *base, size_t n, size_t size,
		  int (*cmp)(const void *, const void *))
{
	return n ? bsearch(key, base, n, size, cmp) : NULL;
}

void arrays_copy(void *dst, const void *src, size_t n, size_t size)
{
	if (n)
		memcpy(dst, src, n * size);
}

void arrays_move(void *dst, const void *src, size_t n, size_t size)
{
	if (n)
		memmove(dst, src, n * size);
}
