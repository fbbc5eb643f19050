/* Growing index lists (size_list.h), on common/grow.h's doubling policy. */
#include "profiler/size_list.h"

#include <stdlib.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"

int size_list_push(struct size_list *s, size_t x)
{
	size_t *v = grow_array(s->v, &s->cap, s->n + 1, sizeof(*v));
	if (!v)
		return PMUSIM_ERR_NOMEM;
	s->v = v;
	s->v[s->n++] = x;
	return 0;
}

int size_list_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return (x > y) - (x < y);
}

void size_list_sort(size_t *v, size_t n)
{
	if (n > 1)
		arrays_sort(v, n, sizeof(*v), size_list_cmp);
}
