/* Progress display (see cli/progress.h). */
#include "cli/progress.h"

#include <stdio.h>
#include <unistd.h>

#include "sim/sim.h"

static double seconds_between(const struct timespec *a, const struct timespec *b)
{
	return (double)(b->tv_sec - a->tv_sec) + (double)(b->tv_nsec - a->tv_nsec) / 1e9;
}

static void on_poll(void *ctx, uint64_t insns)
{
	struct progress *pr = ctx;
	struct timespec now;
	clock_gettime(CLOCK_MONOTONIC, &now);
	if (seconds_between(&pr->last, &now) < 1.0)
		return;
	pr->last = now;
	double t = seconds_between(&pr->start, &now);
	char line[200];
	int n = snprintf(line, sizeof(line), "\r\033[K[ %s: %.1f M instructions, %.0f MIPS",
	                 pr->cmd, (double)insns / 1e6, t > 0 ? (double)insns / 1e6 / t : 0.0);
	if (pr->samples && n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %llu samples",
		              (unsigned long long)pr->samples(pr->ctx));
	if (pr->bytes && n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, ", %.1f MB written",
		              (double)pr->bytes(pr->ctx) / (1024.0 * 1024.0));
	if (n > 0 && (size_t)n < sizeof(line))
		n += snprintf(line + n, sizeof(line) - (size_t)n, " ]");
	if (n > 0 && (size_t)n < sizeof(line) && write(2, line, (size_t)n) == n)
		pr->shown = 1;
}

/* The program is about to write to a terminal: the line goes first (the next refresh
 * draws it again), so that the program's text does not start after it. */
static void on_write(void *ctx, int host_fd)
{
	struct progress *pr = ctx;
	if (pr->shown && isatty(host_fd) && write(2, "\r\033[K", 4) == 4)
		pr->shown = 0;
}

void progress_start(struct progress *pr, struct sim *s, int quiet)
{
	pr->shown = 0;
	if (quiet || !isatty(2))
		return;
	clock_gettime(CLOCK_MONOTONIC, &pr->start);
	pr->last = pr->start;
	sim_set_poll(s, on_poll, pr);
	sim_set_write_notice(s, on_write, pr);
}

void progress_end(struct progress *pr, struct sim *s)
{
	sim_set_poll(s, NULL, NULL);
	sim_set_write_notice(s, NULL, NULL);
	if (pr->shown && write(2, "\r\033[K", 4) != 4)
		return;
	pr->shown = 0;
}
