/* Hand-made struct rcfg graphs for the tests of the region stages: a table
 * of edges between numbered blocks becomes the graph rcfg_discover would give
 * (block i at 0x1000 + 0x10 * i, one one-byte instruction, weight i + 1). */
#ifndef PMUSIM_TESTS_UNIT_RCFG_FIXTURE_H
#define PMUSIM_TESTS_UNIT_RCFG_FIXTURE_H

#include <check.h>
#include <stdlib.h>

#include "profiler/region_cfg.h"
#include "profiler/region_graph.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* An edge of a hand-made graph; out != RCFG_IN leaves (to unused). */
struct tedge {
	int from, to, kind, out;
};

struct tgraph {
	int nblock;
	const int *flags; /* per block */
	const struct tedge *e;
	size_t ne; /* sorted by from */
};

/* A struct rcfg as rcfg_discover would give it, from the table: blocks of
 * one one-byte instruction each, edges in table order. */
static inline struct rcfg *make_rcfg(const struct tgraph *t)
{
	struct rcfg *g = calloc(1, sizeof(*g));
	ck_assert_ptr_nonnull(g);
	g->nblock = (size_t)t->nblock;
	g->block = calloc(g->nblock + 1, sizeof(*g->block));
	g->nedge = t->ne;
	g->edge = calloc(t->ne + 1, sizeof(*g->edge));
	ck_assert(g->block && g->edge);
	for (int i = 0; i < t->nblock; i++) {
		struct rcfg_block *b = &g->block[i];
		b->start = 0x1000 + 0x10 * (uint64_t)i;
		b->end = b->start + 1;
		b->ninsns = 1;
		b->off = calloc(2, sizeof(*b->off));
		ck_assert_ptr_nonnull(b->off);
		b->off[1] = 1;
		b->flags = (uint8_t)t->flags[i];
		b->weight = i + 1;
		b->first_edge = t->ne;
	}
	for (size_t k = 0; k < t->ne; k++) {
		const struct tedge *x = &t->e[k];
		ck_assert(k == 0 || t->e[k - 1].from <= x->from);
		struct rcfg_block *b = &g->block[x->from];
		if (b->nedge == 0)
			b->first_edge = k;
		b->nedge++;
		struct rcfg_edge *e = &g->edge[k];
		e->from = (size_t)x->from;
		e->kind = (uint8_t)x->kind;
		e->out = (uint8_t)x->out;
		e->to = x->out == RCFG_IN ? (size_t)x->to : RCFG_NO_BLOCK;
		e->to_addr = x->out == RCFG_IN ? g->block[x->to].start : 0x9000;
		g->weight += b->weight;
	}
	return g;
}

static inline struct rgraph *build(const struct rcfg *g)
{
	struct rgraph *rg = NULL;
	char msg[256] = "";
	int err = rgraph_build(g, &rg, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rgraph_build: %d %s", err, msg);
	ck_assert_ptr_nonnull(rg);
	return rg;
}

#endif
