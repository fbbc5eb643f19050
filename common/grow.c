/* Growing arrays (see grow.h). */
#include "common/grow.h"

#include <stdint.h>
#include <stdlib.h>

void *grow_array(void *p, size_t *cap, size_t n, size_t size)
{
	if (n <= *cap && p)
		return p;
	size_t nc = *cap > SIZE_MAX / 2 ? n : *cap * 2;
	if (nc < n)
		nc = n;
	if (nc < 16)
		nc = 16;
	if (size && nc > SIZE_MAX / size)
		return NULL;
	void *np = realloc(p, nc * size);
	if (np)
		*cap = nc;
	return np;
}
