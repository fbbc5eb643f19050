/* Output files that are complete or absent.
 *
 * A regular file (or a new name) is written under a temporary name in the target's
 * directory and renamed over it only when complete; a symbolic link to a regular file
 * keeps the link and replaces the file it names.
 *
 * Anything else that exists at the path (a character device such as /dev/null or a
 * terminal, a FIFO, a socket, or /dev/stdout and the other /proc/PID/fd links) is never
 * renamed over or removed: the contents go to an anonymous temporary file first (so
 * writers may seek) and are written into the target, in place, by outfile_commit. A FIFO
 * is opened only then, so pmusim does not wait for its reader before the program ran.
 * /dev/stdout, /dev/stderr, /dev/fd/N and /proc/self/fd/N are written to pmusim's own
 * open descriptor, after whatever the program wrote there, as a shell would. */
#ifndef PMUSIM_COMMON_OUTFILE_H
#define PMUSIM_COMMON_OUTFILE_H

#include <stdio.h>

struct outfile {
	FILE *f;
	char *path; /* where the contents go (a link's target for a link to a regular file) */
	char *tmp;  /* the temporary renamed into place; NULL when written in place */
	int in_place;
	int fd; /* in place: the open descriptor a name such as /dev/stdout stands for, or -1 */
	int keep_old; /* set by the caller: an existing non-empty file at path becomes path.old at
	               * the commit (as perf record keeps perf.data.old) */
};

/* Opens the temporary for writing; 0 or a negative pmusim_err (errno tells why: for
 * PMUSIM_ERR_IO always set, e.g. EISDIR for a directory, ENOENT for a missing one).
 * "-" is stdout, written directly. */
int outfile_open(struct outfile *o, const char *path);
/* Flushes and closes, then renames into place or copies into the target; on any error
 * removes the temporary. */
int outfile_commit(struct outfile *o);
/* Closes and removes the temporary (nothing reaches path). */
void outfile_abort(struct outfile *o);
/* The name shown in messages about the file being written (the temporary or the path). */
const char *outfile_name(const struct outfile *o);
/* Whether the file with this device and inode number is one of the temporaries open
 * outfiles are writing (the simulated program must not reach them). */
int outfile_owns(unsigned long long dev, unsigned long long ino);

#endif
