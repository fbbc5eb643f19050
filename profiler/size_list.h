/* A growing list of size_t (block, node or edge indices), for the graph
 * algorithms of the region selector, which build many small index lists. */
#ifndef PMUSIM_PROFILER_SIZE_LIST_H
#define PMUSIM_PROFILER_SIZE_LIST_H

#include <stddef.h>

struct size_list {
	size_t *v;
	size_t n, cap;
};

/* Appends x; 0 or PMUSIM_ERR_NOMEM (the list unchanged). */
int size_list_push(struct size_list *s, size_t x);

/* qsort/bsearch order of two size_t. */
int size_list_cmp(const void *a, const void *b);

/* Sorts n values at v ascending (v may be NULL when n is 0: qsort's may not,
 * C11 7.22.5). */
void size_list_sort(size_t *v, size_t n);

#endif
