/* Whole-array operations that take an empty array as (NULL, 0): the C library's
 * qsort, bsearch, memcpy and memmove are declared nonnull, so passing them a NULL
 * pointer is undefined even with a count of 0 (C11 7.1.4, 7.24.1p2), and UBSan
 * stops there. An array that never grew is NULL with 0 elements all over this
 * code base (grow.h), so every sort, search and copy of n elements goes here. */
#ifndef PMUSIM_COMMON_ARRAYS_H
#define PMUSIM_COMMON_ARRAYS_H

#include <stddef.h>

/* qsort of n elements of size bytes; nothing when n is 0 (base may be NULL). */
void arrays_sort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *));
/* bsearch; NULL when n is 0 (base may be NULL). */
void *arrays_find(const void *key, const void *base, size_t n, size_t size,
		  int (*cmp)(const void *, const void *));
/* memcpy / memmove of n elements of size bytes; nothing when n is 0 (either
 * pointer may be NULL then). */
void arrays_copy(void *dst, const void *src, size_t n, size_t size);
void arrays_move(void *dst, const void *src, size_t n, size_t size);

#endif
