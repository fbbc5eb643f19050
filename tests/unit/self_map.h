/* Test helper: the executable mapping of the running test program, from
 * /proc/self/maps, for recordings that map the test program itself. */
#ifndef PMUSIM_TESTS_UNIT_SELF_MAP_H
#define PMUSIM_TESTS_UNIT_SELF_MAP_H

#include <check.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct self_map {
	char path[PATH_MAX];
	uint64_t addr, len, pgoff;
};

/* Fills *m with this program's r-xp mapping; fails the test when there is none. */
static inline void self_map_find(struct self_map *m)
{
	ck_assert_ptr_nonnull(realpath("/proc/self/exe", m->path));
	FILE *f = fopen("/proc/self/maps", "r");
	char line[PATH_MAX + 128], path[PATH_MAX + 1], perm[8];
	unsigned long long a, e, off;
	m->len = 0;
	while (f && fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4096s", &a, &e, perm, &off, path) == 5 &&
		    strcmp(perm, "r-xp") == 0 && strcmp(path, m->path) == 0) {
			m->addr = a, m->len = e - a, m->pgoff = off;
			break;
		}
	if (f)
		fclose(f);
	ck_assert_msg(m->len, "no r-xp mapping of %s", m->path);
}

#endif
