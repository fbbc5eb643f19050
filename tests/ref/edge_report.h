/* What ptrace_edges saw: each (branch, where the CPU went next) counted, and the
 * report written from those counts and the site table. The report's format is in
 * tests/ref/ptrace_edges.c's opening comment. */
#ifndef PMUSIM_TESTS_REF_EDGE_REPORT_H
#define PMUSIM_TESTS_REF_EDGE_REPORT_H

#include <stddef.h>
#include <stdint.h>

#include "tests/ref/objdump_sites.h"

struct edge {
	uint64_t from, to, count;
};

/* Open addressing on (from, to); from == 0 marks a free slot (no code at address 0).
 * Zero-initialised is empty. */
struct edge_map {
	struct edge *e;
	size_t n, cap;
};

/* Counts one more (from, to). Returns 0, or -1 when out of memory. */
int edge_add(struct edge_map *m, uint64_t from, uint64_t to);

void edge_map_free(struct edge_map *m);

/* Writes the report of t's sites and m's edges, the program's exit status last, to
 * out (written as OUT.tmp and renamed, so that a reader never sees half a report), or
 * to stdout when out is NULL. Returns 0, or -1 with errno set. */
int report_write(const char *out, const struct site_table *t, const struct edge_map *m, int status);

#endif
