/* Two CI baselines compared (pmusim diff): per event and per function, the
 * change from the base to the new run, functions matched by name (another build
 * of the program moves every address), thresholds on events.
 *
 * Inputs: pmusim stat --json documents (cli/stat_baseline.h); for the events
 * alone, what perf stat -j (and pmusim stat -j) prints, one JSON object per line
 * with "event" and "counter-value"; or perf.data recordings (pmusim's or perf
 * record's), as perf diff compares them: per event its total period, and per
 * function (perf report's symbol column, profiler/overhead.h) the period of its
 * samples of each of the first BL_KINDS events, as self costs named after the
 * events (no inclusive costs). Corrupt or foreign input is refused with one
 * line, never a crash.
 * No Unicorn, no I/O beyond reading the two files. */
#ifndef PMUSIM_PROFILER_BASELINE_DIFF_H
#define PMUSIM_PROFILER_BASELINE_DIFF_H

#include <stddef.h>
#include <stdint.h>

#define BL_KINDS 4 /* instructions, cycles, branches, branch-misses */
extern const char *const bl_kind_name[BL_KINDS];

struct bl_event {
	char *name;
	uint64_t count;
};

struct bl_func {
	char *name;
	uint64_t calls;
	uint64_t self[BL_KINDS], incl[BL_KINDS];
};

struct baseline {
	int has_functions;      /* a stat --json document or a recording (else perf stat -j lines) */
	int recording;          /* a perf.data file: the kinds are its events, no inclusive costs */
	const char *kind[BL_KINDS]; /* what self[k] and incl[k] count (bl_kind_name, or a recording's events) */
	size_t nkinds;
	char *program, *build_id, *options, *pmusim;
	int exit_status;
	struct bl_event *ev;
	size_t nev;
	struct bl_func *fn;     /* sorted by name */
	size_t nfn;
};

/* Reads path; 0, or a negative pmusim_err with one line in msg (it does not name
 * the file: the caller does). */
int baseline_read(const char *path, struct baseline *b, char *msg, size_t msglen);
void baseline_free(struct baseline *b);

/* One compared quantity. */
struct bl_delta {
	uint64_t base, cur;
};

static inline int64_t bl_change(const struct bl_delta *d)
{
	return (int64_t)(d->cur - d->base);
}

/* The change in per cent of the base: 0 for 0 -> 0, +inf-like (1e300) for 0 -> n. */
double bl_percent(const struct bl_delta *d);

enum bl_status { BL_SAME, BL_CHANGED, BL_ADDED, BL_REMOVED };

struct bl_event_diff {
	const char *name;
	struct bl_delta d;
	int in_base, in_new;
};

struct bl_func_diff {
	const char *name;
	enum bl_status status;
	struct bl_delta calls, self[BL_KINDS], incl[BL_KINDS];
};

struct bl_threshold {
	const char *event;
	double pct;             /* allowed increase, per cent */
	/* results */
	int found;              /* the event is in both */
	double got;             /* its change in per cent */
	int regressed;
};

struct bl_diff {
	const char *const *kind; /* the kinds compared, nkinds of them (the baselines' own) */
	size_t nkinds;
	int inclusive;           /* inclusive costs are compared */
	struct bl_event_diff *ev;
	size_t nev;
	struct bl_func_diff *fn; /* by impact: |self change| of sort_kind, then the other kinds, then name */
	size_t nfn;
	int sort_kind;
	int regressed;           /* a threshold was passed */
};

/* Compares base with cur; thresholds (may be NULL, n 0) get their results. The
 * diff points into both baselines' names. 0, PMUSIM_ERR_NOMEM, or
 * PMUSIM_ERR_ARG when their function costs are of different kinds (a baseline
 * and a recording, or recordings of other events). */
int baseline_diff(const struct baseline *base, const struct baseline *cur, const char *sort,
		  struct bl_threshold *th, size_t nth, struct bl_diff *out);
void bl_diff_free(struct bl_diff *d);

/* The kind index of a name ("cycles") among a baseline document's kinds, or -1. */
int bl_kind_of(const char *name);
/* sort: the kind the functions are ordered by (NULL: cycles when the files have
 * it, else their first); PMUSIM_ERR_ARG when the files have no such kind. */

#endif
