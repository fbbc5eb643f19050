/* Test helper: temporary directories made with mkdtemp and removed with
 * everything in them (nftw, depth first). */
#ifndef PMUSIM_TESTS_UNIT_TMP_DIR_H
#define PMUSIM_TESTS_UNIT_TMP_DIR_H

#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

static int tmp_dir_remove_entry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb, (void)flag, (void)ftw;
	remove(path);
	return 0;
}

/* Makes $TMPDIR/name.XXXXXX (TMPDIR default /tmp) into buf; buf[0] = 0 on failure. */
static inline void tmp_dir_make(char *buf, size_t len, const char *name)
{
	const char *t = getenv("TMPDIR");
	snprintf(buf, len, "%s/%s.XXXXXX", t ? t : "/tmp", name);
	if (!mkdtemp(buf))
		buf[0] = 0;
}

/* Removes dir and everything below it (nothing when dir is ""). */
static inline void tmp_dir_remove(const char *dir)
{
	if (dir[0])
		nftw(dir, tmp_dir_remove_entry, 8, FTW_DEPTH | FTW_PHYS);
}

#endif
