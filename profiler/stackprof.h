/* The stack profile of a recording (`pmusim report --stacks`): per function
 * inclusive and exclusive sample counts and weights, and per call path the
 * samples that ended in it, from samples whose PERF_SAMPLE_CALLCHAIN holds a
 * call stack — pmusim's thread-stack snapshots (event "pmusim_tstack") or real
 * `perf record -g` samples of any event.
 *
 * Callchain layout (include/uapi/linux/perf_event.h, perf 6.1): entries
 * innermost first; values >= PERF_CONTEXT_MAX (-4095) are context markers
 * (PERF_CONTEXT_KERNEL, PERF_CONTEXT_USER, ...) that say whose addresses
 * follow. Only user addresses are used: those after PERF_CONTEXT_USER, or all
 * of them when the chain has no marker. The first user address is where the
 * thread was (named by the function containing it), each later one a return
 * address r of a call in progress, named by the function containing r - 1 —
 * the call instruction — so that a call ending a function (to a noreturn
 * callee) names its caller, not the next function. perf's DWARF unwinder does
 * the same (tools/perf/util/unwind-libdw.c: pc - 1 for frames that are not
 * activations); perf script of frame-pointer chains looks the raw return
 * address up, which differs only for such calls. Names come from
 * profiler/symbolize.h with perf's
 * choice among aliases (symtab_perf_alias); an address in a mapped file
 * without a symbol is "file+0xOFF" (the file's base name and the address's
 * offset in it), one outside every mapping "[unknown]".
 *
 * Samples used: those of the event named "pmusim_tstack" when the file has
 * one, else those of event opts.event when given, else every sample; a sample
 * without user addresses (empty chain, kernel only) is skipped and counted.
 * Weight = the sample's period (PERF_SAMPLE_PERIOD, else the event's fixed
 * period): nanoseconds between snapshots for pmusim_tstack.
 *
 * Aggregates: a function's inclusive ("total") count is the samples whose
 * stack holds it at least once (recursion counts once), its exclusive ("self")
 * count the samples whose innermost frame it is; the same for weights. A call
 * path is the list of frame names outermost first (main first), with the
 * thread's command name (COMM records; a FORK inherits its parent's) as an
 * extra outermost frame when opts.comm is set, as stackcollapse-perf.pl does;
 * that frame is no function and not in the function table.
 *
 * Everything is sorted as documented below, so the same file gives the same
 * output bytes. */
#ifndef PMUSIM_PROFILER_STACKPROF_H
#define PMUSIM_PROFILER_STACKPROF_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define STACKPROF_EVENT "pmusim_tstack" /* the event of pmusim record --tstack */

struct stackprof_opts {
	int event; /* only this event's samples (index in the file); -1: see above */
	int comm;  /* 1: the thread's command name as the outermost frame */
};

struct stackprof_func {
	const char *name;
	uint64_t total, self; /* samples */
	uint64_t total_weight, self_weight;
};

struct stackprof_path {
	const char *const *frames; /* names, outermost first */
	size_t depth;
	uint64_t samples, weight;
};

struct stackprof_summary {
	uint64_t samples; /* used */
	uint64_t skipped; /* of the chosen event(s), without user addresses */
	uint64_t weight;
	size_t threads;    /* distinct tids of the samples used */
	const char *event; /* the event used, NULL when several */
};

struct stackprof;

/* Reads the perf.data file at path. 0, or a negative pmusim_err with a one-line
 * reason in msg: PMUSIM_ERR_IO / PMUSIM_ERR_FORMAT / PMUSIM_ERR_UNSUPPORTED as
 * perfdata_open and perfdata_next give them, PMUSIM_ERR_ARG when no event
 * records callchains or no sample has a user callchain ("... no callchains")
 * or opts->event does not exist, PMUSIM_ERR_NOMEM. */
int stackprof_read(const char *path, const struct stackprof_opts *opts, struct stackprof **out,
                   char *msg, size_t msglen);
void stackprof_free(struct stackprof *sp);

const struct stackprof_summary *stackprof_summary(const struct stackprof *sp);
/* Functions by total weight, then total samples, self weight, name (all
 * descending but the name). Valid until stackprof_free. */
const struct stackprof_func *stackprof_functions(const struct stackprof *sp, size_t *n);
/* Call paths by weight, then samples (descending), then frame by frame by
 * name (strcmp; a prefix first). Valid until stackprof_free. */
const struct stackprof_path *stackprof_paths(const struct stackprof *sp, size_t *n);

/* Outputs (profiler/stackprof_out.c); each returns 0, PMUSIM_ERR_NOMEM or
 * PMUSIM_ERR_IO when writing to f failed.
 *
 * text: "# N samples, T threads, total weight W (event E)" (plus a line with the
 * samples skipped, when any), the function table (total %, self %, of the total
 * weight; total and self samples; name) in stackprof_functions order, then
 * the 20 heaviest call paths (share of the weight, samples, "a;b;c").
 *
 * json: one object:
 *   {"samples": N, "threads": T, "weight": W, "skipped": S,
 *    "functions": [{"name": "main", "total": n, "self": n, "total_weight": w,
 *                   "self_weight": w}, ...],
 *    "paths": [{"stack": ["main", "f", "g"], "samples": n, "weight": w}, ...]}
 * in the orders above; names JSON-escaped.
 *
 * folded: Brendan Gregg's folded stacks as flamegraph.pl, speedscope and
 * inferno read them: one line per call path "outer;...;inner COUNT" with
 * COUNT = samples, lines sorted by the stack text (strcmp); a ';' inside a
 * name becomes ':' and a line break a space. */
/* The samples used, in the file's order (pmusim writes them in time order): the
 * thread, the time (PERF_SAMPLE_TIME, ns; 0 without), the weight, and the call
 * path as a path number for stackprof_path_frames. */
struct stackprof_sample {
	uint32_t tid;
	uint64_t time, weight;
	size_t path;
};
const struct stackprof_sample *stackprof_samples(const struct stackprof *sp, size_t *n);
/* Path number path's frames as name numbers, outermost first. */
const uint32_t *stackprof_path_frames(const struct stackprof *sp, size_t path, size_t *depth);
/* The names (frames) by number. */
size_t stackprof_names(const struct stackprof *sp);
const char *stackprof_name(const struct stackprof *sp, size_t i);

/* speedscope's file format (www.speedscope.app/file-format-schema.json, as
 * speedscope 1.25 imports it): the frame names shared, one "evented" profile
 * per thread ("thread TID", in order of thread id) on the samples' own
 * timestamps in nanoseconds (simulated time for pmusim's snapshots): each
 * sample's stack held for its weight up to its time, frames it shares with the
 * stack before staying open (O and C events), the stack closed where no
 * sample covers the time; startValue and endValue the first sample's time
 * less its weight and the last sample's time; name is the profile's title. */
int stackprof_write_speedscope(FILE *f, const struct stackprof *sp, const char *name);

int stackprof_write_text(FILE *f, const struct stackprof *sp);
int stackprof_write_json(FILE *f, const struct stackprof *sp);
int stackprof_write_folded(FILE *f, const struct stackprof *sp);

#endif
