/* Block order for replacement code (profiler/dbr_code.h's DBR_HOT_PATHS): the
 * greedy chains of Pettis and Hansen ("Profile guided code positioning",
 * PLDI 1990, section 4.1): links taken hottest first, a link joining two
 * chains when its source is the tail of one and its target the head of
 * another, so that each chain is a path of fall-throughs; the chains are then
 * laid out hottest first. Plain data in, an order out: no code, no region. */
#ifndef PMUSIM_PROFILER_DBR_LAYOUT_H
#define PMUSIM_PROFILER_DBR_LAYOUT_H

#include <stddef.h>
#include <stdint.h>

/* A link the layout may turn into a fall-through: from's code can end by
 * running into to's when to is laid out right after it. */
struct dbr_link {
	uint32_t from, to; /* block indices, < n */
	double weight;     /* how often it is taken */
};

/* Fills order[0 .. n) with the blocks 0 .. n-1 laid out along the chains of
 * link[0 .. nlink) (sorted in place: weight descending, then from, then to,
 * so that ties give one order). A chain's heat is the highest heat[] of its
 * blocks; chains go hottest first, ties by their first block's index. A link
 * from a block to itself joins nothing. 0, or PMUSIM_ERR_NOMEM. */
int dbr_layout_chains(uint32_t n, const double *heat, struct dbr_link *link, size_t nlink,
                      uint32_t *order);

#endif
