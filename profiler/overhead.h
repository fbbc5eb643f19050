/* The overhead table of a recording, as `perf report --stdio` prints it: the
 * samples of one event grouped by sort keys (comm, pid, dso, sym), each group's
 * share of the event's total period. Names as perf gives them (perf 6.1
 * util/sort.c): the thread's command name, "TID:comm" for pid, the mapped
 * file's base name or "[unknown]", "[.] symbol" with perf's choice among
 * aliases (common/symtab.h symtab_perf_alias).
 *
 * One difference, on purpose: perf lists every address of code without symbols
 * (a stripped program) on its own line; here they are one group per dso
 * ("[.] [unsymbolised: N addresses, hottest ls+0x1265e]", the offset in the
 * file as perf prints it), so their weight is not spread over lines too small
 * to notice. */
#ifndef PMUSIM_PROFILER_OVERHEAD_H
#define PMUSIM_PROFILER_OVERHEAD_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

enum ovh_key { OVH_COMM, OVH_PID, OVH_DSO, OVH_SYM, OVH_NKEYS };

#define OVH_MAX_KEYS 8

struct overhead_opts {
	int event; /* event index; -1: the first */
	enum ovh_key keys[OVH_MAX_KEYS];
	size_t nkeys;      /* 0: comm,dso,sym (perf's default) */
	const char *comms; /* comma list: only samples of these commands; NULL: all */
};

/* Parses a --sort list ("comm,dso,sym"; "symbol" is sym, as in perf) into o.
 * 0, or PMUSIM_ERR_ARG with the unknown key named in msg. */
int overhead_parse_sort(struct overhead_opts *o, const char *list, char *msg, size_t msglen);

struct overhead;

/* Reads the samples of o->event from the perf.data at path. 0, or a negative
 * pmusim_err with a one-line reason in msg (perfdata_open's, PMUSIM_ERR_ARG:
 * no such event). A recording without samples is read (overhead_samples 0). */
int overhead_read(const char *path, const struct overhead_opts *o, struct overhead **out, char *msg,
                  size_t msglen);
void overhead_free(struct overhead *ov);

/* Samples counted (after the --comm filter) and their total period. */
uint64_t overhead_samples(const struct overhead *ov);
/* Samples of the event before the --comm filter. */
uint64_t overhead_all_samples(const struct overhead *ov);
/* The event's name as recorded (NULL when the file names none) and the program:
 * the first executable mapping that is not a shared library (NULL: none). */
const char *overhead_event(const struct overhead *ov);
const char *overhead_program(const struct overhead *ov);

/* The event's total period (the table's "Event count"). */
uint64_t overhead_total_period(const struct overhead *ov);
/* The groups, in the table's order: group i's column k (the sort keys' order),
 * its period and samples. */
size_t overhead_nrows(const struct overhead *ov);
const char *overhead_row(const struct overhead *ov, size_t i, size_t k, uint64_t *period, uint64_t *samples);
/* The table: a header of '#' lines (event, program, samples, event count), then
 * one line per group, largest share first (ties in key order). 0 or
 * PMUSIM_ERR_IO. */
int overhead_write_text(FILE *f, const struct overhead *ov);

#endif
