/* What building a region set (region_set.c) shares with its estimate
 * (region_set_estimate.c): the region being built, its copied blocks, and the
 * look-ups both use. Not an interface outside these two files. */
#ifndef PMUSIM_PROFILER_REGION_SET_INTERNAL_H
#define PMUSIM_PROFILER_REGION_SET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/region_set.h"

/* A copied block while a region is built: its graph block and clone. */
struct piece {
	size_t g;       /* index in g->block[] */
	uint32_t clone; /* 0 own, k: the region's k-th clone */
	double count;
	int counted; /* count is a count or a bound (else unknown: no cap, even shares) */
};

struct build {
	const struct rcfg *g;
	const struct rgraph_region *reg;
	const struct rflow *f;
	const struct rprune *p;
	const struct rpatch *pt;
	const struct rinline *inl;
	size_t ri;
	struct piece *pc;
	size_t npc, cappc;
	size_t *clone_of; /* inl clone index -> the region's clone number (0: not this region's) */
	size_t *clone_ix; /* region clone number k -> inl clone index (k - 1) */
	uint32_t nclone;
	uint8_t *own;   /* per g block: copied as own code */
	uint8_t *inreg; /* per g block: in the region */
	uint8_t *inloop;
	size_t *pred_at, *pred; /* in-edges of block b: pred[pred_at[b] .. pred_at[b + 1]] */
	double *inlined;        /* per g block: the share of its executions run by clones */
	double *site_p;         /* per inl clone: p of its call's block (the last pass's) */
};

/* A block's count (the selection's count or bound; 0 when it has none). */
double rsb_own_count(const struct build *c, size_t b);
/* The index of piece (g block b, clone k), or RSET_NONE. */
uint32_t rsb_piece_of(const struct build *c, size_t b, uint32_t k);
/* The inlined clone (region number) of the call ending g block b in clone k, 0 when none. */
uint32_t rsb_inlined_at(const struct build *c, size_t b, uint32_t k);
/* 1 + the instruction of the piece's patch point, 0 when it holds none. */
uint32_t rsb_point_insn(const struct build *c, const struct piece *pc);
/* The share of block b's executions along its out-edge e (region_set.h). */
double rsb_edge_frac(const struct build *c, size_t b, size_t e);
/* p per piece: the fraction of its executions (up to its point, if it holds
 * one) that run inside (region_set.h's estimate). 0 or PMUSIM_ERR_NOMEM. */
int rsb_estimate(const struct build *c, double *p);

#endif
