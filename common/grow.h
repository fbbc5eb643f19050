/* Growing arrays: the one doubling policy of the code base's append-only
 * tables (areas, snapshots, symbols...). */
#ifndef PMUSIM_COMMON_GROW_H
#define PMUSIM_COMMON_GROW_H

#include <stddef.h>

/* Room for n elements of size bytes at p, whose capacity is *cap elements:
 * returns p when it has room (never NULL for a block not yet made, even for
 * n = 0), else a larger block (the capacity doubled, at
 * least n, at least 16) with *cap updated, or NULL (p untouched and still
 * valid) when memory ran out or the size overflows. */
void *grow_array(void *p, size_t *cap, size_t n, size_t size);

#endif
