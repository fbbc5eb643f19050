/* Weighted control-flow edges (branch source -> destination), the common result
 * of every profiling method and of the ground truth read back for validation. */
#ifndef PMUSIM_PROFILER_EDGES_H
#define PMUSIM_PROFILER_EDGES_H

#include <stddef.h>
#include <stdint.h>

struct edge {
	uint64_t from, to;
	double w;       /* estimated executions */
	uint8_t kind;   /* enum br_kind of the branch at `from` (BK_NONE: unknown) */
	uint8_t taken;  /* 0: the fall-through of a conditional branch */
};

struct edges;

struct edges *edges_new(void);
void edges_free(struct edges *e);

/* Adds w to the edge (from, to); kind and taken are kept from the first add.
 * 0 or PMUSIM_ERR_NOMEM. */
int edges_add(struct edges *e, uint64_t from, uint64_t to, int kind, int taken, double w);

/* The edges sorted by (from, to); valid until the next add or free. */
const struct edge *edges_sorted(struct edges *e, size_t *n);
/* Weight of one edge (0 when absent). */
double edges_weight(const struct edges *e, uint64_t from, uint64_t to);

#endif
