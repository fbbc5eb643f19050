/* Output files that are complete or absent: written under a temporary name in
 * the same directory and renamed over the target only when complete. */
#ifndef PMUSIM_COMMON_OUTFILE_H
#define PMUSIM_COMMON_OUTFILE_H

#include <stdio.h>

struct outfile {
	FILE *f;
	char *path;
	char *tmp;
};

/* Opens path.tmp.XXXXXX for writing; 0 or a negative pmusim_err. "-" is stdout. */
int outfile_open(struct outfile *o, const char *path);
/* Flushes, closes and renames into place; on any error removes the temporary. */
int outfile_commit(struct outfile *o);
/* Closes and removes the temporary (nothing reaches path). */
void outfile_abort(struct outfile *o);

#endif
