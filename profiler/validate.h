/* Comparing a profile with the exact truth. Overlap of two edge profiles is
 * sum over edges of min(p_e, q_e) with each profile's weights normalised to 1
 * (llvm-profdata's overlap formula; 1 - total variation distance), computed over
 * all edges, over taken edges only (fall-throughs left out) and over call edges. */
#ifndef PMUSIM_PROFILER_VALIDATE_H
#define PMUSIM_PROFILER_VALIDATE_H

#include <stddef.h>

#include "profiler/binary.h"
#include "profiler/edges.h"

/* Reads an fdata file (pmusim run --truth, perf2bolt, pmusim report) into
 * edges of bin's addresses: "1 name off" through bin's symbols (BOLT names),
 * "0 dso off" through its load bias; kinds from the code. 0, or a negative
 * pmusim_err with a reason in msg (PMUSIM_ERR_FORMAT for a line that is no
 * fdata, naming it; unknown names are counted in *unknown and skipped). */
int fdata_read_edges(const char *path, struct binary *bin, struct edges *out, size_t *unknown,
		     char *msg, size_t msglen);

struct overlap {
	double all, taken, calls;   /* 0..1 */
	double hot_max_rel_err;     /* largest |p-q|/q among truth edges with q >= 1 % */
	size_t truth_edges, profile_edges;
};

/* Compares profile p with truth q. */
void overlap_compute(struct edges *p, struct edges *q, struct overlap *r);

/* The subset an edge belongs to: 1 when it is a taken edge, 2 when a call
 * (calls are taken edges too). */
int edge_is_taken(const struct edge *e);
int edge_is_call(const struct edge *e);

#endif
