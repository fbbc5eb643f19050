/* The one-line progress display of run, stat and record on a terminal: simulated
 * instructions, MIPS, samples and bytes written, refreshed every second or so of wall
 * time on stderr and erased at the end. Off when stderr is not a terminal or with -q.
 * It only reads counts: the run and its outputs are the same with or without it. */
#ifndef PMUSIM_CLI_PROGRESS_H
#define PMUSIM_CLI_PROGRESS_H

#include <stdint.h>
#include <time.h>

struct sim;

struct progress {
	const char *cmd;                /* "pmusim record" */
	uint64_t (*samples)(void *ctx); /* NULL: no samples to tell */
	uint64_t (*bytes)(void *ctx);   /* NULL: no file being written */
	void *ctx;
	struct timespec start, last;
	int shown; /* a line is on the terminal */
};

/* Starts the display on s when stderr is a terminal and quiet is 0 (fill cmd, samples,
 * bytes and ctx before). */
void progress_start(struct progress *pr, struct sim *s, int quiet);
/* Erases the line, if one is shown (before pmusim prints its own end of run). */
void progress_end(struct progress *pr, struct sim *s);

#endif
