/* Comparing two selections of hot code (the regions chosen from op samples and
 * the ideal regions chosen from the exact counts) by what they cover, weighted
 * by the exact executions of every instruction: the weighted Jaccard index
 *   J = sum over instructions in both of w / sum over instructions in either of w,
 * where w is an instruction's exact weight (a truth's hot_code). 1 means the
 * two cover the same executed instructions; an instruction that never ran adds
 * nothing, so selections that differ only in cold code are equal. Also the
 * share of all executed instructions each selection covers: the fraction of
 * execution the replacement code would capture. */
#ifndef PMUSIM_PROFILER_REGION_COMPARE_H
#define PMUSIM_PROFILER_REGION_COMPARE_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/hot_code.h"

/* A selection: the start addresses of the instructions it covers, sorted
 * ascending, each once. */
struct region_cover {
	const uint64_t *ip;
	size_t n;
};

struct region_overlap {
	double both;      /* exact weight of the instructions in a and in b */
	double either;    /* of those in a or in b */
	double in_a;      /* of those in a */
	double in_b;      /* of those in b */
	double total;     /* exact->total: every instruction executed */
	double jaccard;   /* both / either; 1 when either is 0 (two empty selections) */
	double share_a;   /* in_a / total (0 when total is 0) */
	double share_b;   /* in_b / total */
};

/* The overlap of a and b weighted by exact (hot_code_from_truth). 0, or
 * PMUSIM_ERR_ARG when a cover is not sorted ascending without repeats. */
int region_overlap_of(const struct region_cover *a, const struct region_cover *b,
		      const struct hot_code *exact, struct region_overlap *out);

#endif
