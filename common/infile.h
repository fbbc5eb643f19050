/* Input files: every file pmusim reads on its own behalf (the program and its
 * interpreter, recordings, truths, baselines, the binaries a recording's MMAP2
 * records name) is opened here, never with a bare open or fopen. Only a regular
 * file is read: opening a FIFO for reading waits for a writer that may never
 * come, and a device such as /dev/zero never ends. The guest's own opens are
 * the guest's business (sim/linux) and do not come here. */
#ifndef PMUSIM_COMMON_INFILE_H
#define PMUSIM_COMMON_INFILE_H

#include <stdio.h>

/* A descriptor of path for reading (blocking, close-on-exec) when it is a
 * regular file, opened without waiting (O_NONBLOCK, cleared once fstat has seen
 * a regular file). Else -1 with *why, when why is given, a static text for the
 * message: "not a regular file", or the system's ("No such file or directory").
 * errno is the open's or fstat's, or EINVAL for a file of another type. */
int infile_open(const char *path, const char **why);

/* The same, but a pipe or FIFO is read too (a document from a shell's process
 * substitution, /dev/stdin in a pipeline): a FIFO without a writer then reads
 * as empty instead of blocking. Anything else: -1, "not a regular file or pipe". */
int infile_open_or_pipe(const char *path, const char **why);

/* The same as a stdio stream (mode "r"); NULL with *why. */
FILE *infile_fopen(const char *path, const char **why);

#endif
