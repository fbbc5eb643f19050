/* Reading a recording into a profile: perf.data from pmusim or real perf. The
 * program binary is the one named with --binary, else the executable mapping
 * (MMAP/MMAP2) whose build id (BUILD_ID feature) or name matches, else the
 * first executable mapping that is not a system library; --binary-dir looks
 * the mapped file up in another directory (recordings made elsewhere). The
 * load bias comes from that mapping. Samples of every process are used. */
#ifndef PMUSIM_PROFILER_INPUT_H
#define PMUSIM_PROFILER_INPUT_H

#include <stddef.h>

#include "profiler/profile.h"

struct input_opts {
	const char *binary;      /* path of the program, or NULL */
	const char *binary_dir;  /* directory to find the mapped file in, or NULL */
	int event;               /* only samples of this event index; -1: the first event */
};

/* Builds *prof (and *bin, owned by the caller) from the recording at path.
 * 0, or a negative pmusim_err with a one-line reason in msg: PMUSIM_ERR_IO,
 * PMUSIM_ERR_FORMAT (corrupt file), PMUSIM_ERR_ARG (no binary found). */
int input_profile(const char *path, const struct input_opts *io, const struct profile_opts *po,
		  struct profile **prof, struct binary **bin, char *msg, size_t msglen);

#endif
