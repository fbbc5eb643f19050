/* Reading a recording into a profile: perf.data from pmusim or real perf, or
 * the text of `perf script -F [pid,[tid,]]ip,brstack [--show-mmap-events]`
 * (profiler/script_text.h). The format is told by the first bytes: "PERFILE2"
 * is perf.data, anything else is read as text (a file, not a pipe).
 *
 * The program binary is the one named with --binary, else the executable mapping
 * (MMAP/MMAP2; in text the PERF_RECORD_MMAP2 lines) whose build id (BUILD_ID
 * feature; in text the "<id>" of the line) or name matches, else the first
 * executable mapping that is not a system library; --binary-dir looks the mapped
 * file up in another directory (recordings made elsewhere). The load bias comes
 * from that mapping; text without one gets bias 0, and text of a
 * position-independent program without its mapping is refused (every address
 * would miss the program). Samples of every process are used.
 *
 * Text names no event and no period: its samples count as taken-branch samples
 * (TRIG_TAKEN: the CBT window of the newest taken branches of each sample) with
 * period 1, so its weights are per sample, not per event; only --event 0 exists. */
#ifndef PMUSIM_PROFILER_INPUT_H
#define PMUSIM_PROFILER_INPUT_H

#include <stddef.h>

#include "profiler/profile.h"

struct input_opts {
	const char *binary;     /* path of the program, or NULL */
	const char *binary_dir; /* directory to find the mapped file in, or NULL */
	int event;              /* only samples of this event index; -1: the first event */
};

/* Builds *prof (and *bin, owned by the caller) from the recording at path.
 * 0, or a negative pmusim_err with a one-line reason in msg: PMUSIM_ERR_IO,
 * PMUSIM_ERR_FORMAT (corrupt or truncated file, text that is not perf script
 * output: the message names the line), PMUSIM_ERR_UNSUPPORTED (see
 * perfdata_open), PMUSIM_ERR_ARG (no binary found, no samples of it, no such
 * event). */
int input_profile(const char *path, const struct input_opts *io, const struct profile_opts *po,
                  struct profile **prof, struct binary **bin, char *msg, size_t msglen);

/* Calls fn for every sample of the program's processes, of every event (its
 * attributes; NULL for text), in file order, with the binary opened
 * at the first one (io->event is not used). *bin gets the binary, owned by
 * the caller. 0, input_profile's errors, or fn's negative return (which stops
 * the reading). */
typedef int (*input_sample_fn)(void *ctx, struct binary *bin, const struct perf_sample *s,
			       const struct perfdata_event *ev);
int input_each_sample(const char *path, const struct input_opts *io, input_sample_fn fn, void *ctx,
		      struct binary **bin, char *msg, size_t msglen);

#endif
