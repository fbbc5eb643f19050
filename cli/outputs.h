/* The output files of one command, all opened (their temporaries created) before the
 * command does its work, so that a path that cannot be written fails at once, before a
 * program runs, and two outputs cannot silently land on one file. Each stays complete or
 * absent (common/outfile.h): committed one by one when written, the rest removed by
 * outputs_fini. */
#ifndef PMUSIM_CLI_OUTPUTS_H
#define PMUSIM_CLI_OUTPUTS_H

#include <stddef.h>

#include "common/outfile.h"

#define OUTPUTS_MAX 8

struct output {
	const char *opt;  /* the option that named it ("-o", "--truth"), for messages */
	const char *path; /* as given */
	char *same;       /* the file it ends up as (a regular or new file), NULL for others */
	struct outfile f;
	int open;    /* not yet committed, aborted or handed over */
	int renamed; /* written to a temporary and renamed (else written in place) */
};

struct outputs {
	const char *cmd; /* "pmusim record", for messages */
	struct output o[OUTPUTS_MAX];
	size_t n;
};

void outputs_init(struct outputs *s, const char *cmd);
/* Opens path's temporary for option opt. The outfile (valid until committed, aborted
 * or outputs_fini), or NULL with one line printed on stderr: "CMD: cannot create PATH:
 * strerror", or "CMD: OPT and OPT2 both name PATH" when an earlier output of s would end
 * up as the same file. A character device (/dev/null), a FIFO or "-" may be shared. */
struct outfile *outputs_open(struct outputs *s, const char *opt, const char *path);
/* Commits f (renamed into place or copied into its target); 0 or -1 with one line
 * printed ("CMD: cannot write PATH: strerror"). */
int outputs_commit(struct outputs *s, struct outfile *f);
/* f now belongs to someone else (a writer that commits it itself). */
void outputs_hand_over(struct outputs *s, struct outfile *f);
/* Removes every temporary not yet committed or handed over. */
void outputs_fini(struct outputs *s);

#endif
