/* A region selection (cli/report_regions.h) as text and as JSON: per kept region
 * its weight, blocks, loops, patch points, entries and exits (the JSON also the edges
 * between its blocks); per dropped region why. Kept regions by weight, hottest first
 * (ties by address), so the output depends only on the selection. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/report_regions.h"
#include "common/arrays.h"
#include "common/err.h"
#include "common/json.h"
#include "pmu_model/block.h"

size_t *region_sel_kept_order(const struct region_sel *s, size_t *n)
{
	size_t *o = malloc((s->norder + 1) * sizeof(size_t));
	*n = o ? s->norder : 0;
	if (o && s->norder)
		arrays_copy(o, s->order, s->norder, sizeof(size_t));
	return o;
}

uint64_t region_sel_start(const struct region_sel *s, size_t r)
{
	return s->g->block[s->rg->region[r].block[0]].start;
}

/* The address of block b's last instruction, where its out-edges leave. */
static uint64_t last_insn(const struct rcfg_block *b)
{
	return b->start + b->off[b->ninsns - 1];
}

static void text_header(FILE *f, const struct region_sel *s)
{
	const struct hot_code *h = s->hot;
	const struct rprune_options *o = &s->args->prune;
	fprintf(f, "# hot super-regions of %s\n", s->source);
	if (h->samples)
		fprintf(f,
		        "# process %u, %" PRIu64 " op samples (%" PRIu64
		        " branches unresolved), weight %.0f\n",
		        (unsigned)h->pid, h->samples, h->unresolved, h->total);
	else
		fprintf(f, "# exact counts: weight %.0f (instructions executed)\n", h->total);
	fprintf(
	    f, "# %zu instructions with weight; discovery: %zu blocks, %zu edges%s; %zu regions\n",
	    h->nip, s->g->nblock, s->g->nedge, s->g->partial ? " (partial)" : "", s->rg->nregion);
	fprintf(f, "# edge counts: %zu observed, %zu decided, %zu undecided\n", s->f->nobserved,
	        s->f->ndecided, s->f->nundecided);
	fprintf(f,
	        "# options: max-hops %u, cold-fraction %g, min-iterations %g, keep-share %g, "
	        "min-insns %" PRIu64 ", min-region-share %g\n",
	        s->args->cfg.max_hops, o->cold_fraction, o->min_iterations, o->loop_share,
	        o->min_insns, o->min_share);
	fprintf(f, "# kept %zu of %zu regions: %zu instructions, %.3f %% of the weight\n",
	        s->p->nkept_region, s->rg->nregion, s->p->nip, 100 * s->p->share);
	fprintf(f,
	        "# replacement code: %zu regions with patch points, estimated to run %.3f %% of "
	        "the instructions\n",
	        s->set->nregion, 100 * s->set->est_share);
}

static void text_blocks(FILE *f, const struct region_sel *s, const struct rgraph_region *r)
{
	for (size_t k = 0; k < r->nblock; k++) {
		size_t b = r->block[k];
		const struct rcfg_block *gb = &s->g->block[b];
		const struct rprune_block *pb = &s->p->block[b];
		char count[64] = "-";
		if (pb->counted)
			snprintf(count, sizeof(count), "%.1f%s", pb->count,
			         pb->bound ? " (bound)" : "");
		fprintf(f, "  block 0x%" PRIx64 "..0x%" PRIx64 " %3u insns  count %-18s %-8s %s\n",
		        gb->start, gb->end, gb->ninsns, count,
		        rflow_block_source_name(s->f->block[b].source),
		        rprune_block_why_name(pb->why));
	}
}

static void text_loops(FILE *f, const struct region_sel *s, size_t ri)
{
	const struct rgraph_region *r = &s->rg->region[ri];
	const struct rpatch *pt = s->patch[ri];
	for (size_t i = 0; i < r->nloop; i++) {
		const struct rgraph_loop *l = &r->loop[i];
		const struct rpatch_loop *pl = &pt->loop[i];
		fprintf(f,
		        "  loop header 0x%" PRIx64
		        ": depth %u, %zu blocks, %zu entries%s, %.2f iterations per entry, %s",
		        s->g->block[l->header].start, l->depth, l->nblock, l->nentry,
		        l->irreducible ? " (irreducible)" : "", s->p->region[ri].loop_iterations[i],
		        rpatch_status_name(pl->status));
		if (pl->status == RPATCH_UNCOVERED)
			fprintf(f, " (entry 0x%" PRIx64 ": %s, dominators: %s)",
			        s->g->block[pl->entry].start, rpatch_why_name(pl->why),
			        rpatch_up_name(pl->up));
		fputc('\n', f);
	}
	for (size_t i = 0; i < pt->npoint; i++)
		if (pt->point[i].reentry)
			fprintf(f, "  patch 0x%" PRIx64 ": %u bytes, %s, re-entry (a loop entry)\n",
			        pt->point[i].addr, pt->point[i].len,
			        rpatch_store_name(pt->point[i].store));
		else
			fprintf(f, "  patch 0x%" PRIx64 ": %u bytes, %s, %zu loop entr%s\n",
			        pt->point[i].addr, pt->point[i].len,
			        rpatch_store_name(pt->point[i].store), pt->point[i].nentry,
			        pt->point[i].nentry == 1 ? "y" : "ies");
}

static int cycle_entry(const struct rgraph_region *r, size_t b)
{
	for (size_t k = 0; k < r->ncycle_entry; k++)
		if (r->cycle_entry[k] == b)
			return 1;
	return 0;
}

static void text_ends(FILE *f, const struct region_sel *s, const struct rgraph_region *r)
{
	for (size_t k = 0; k < r->nentry; k++)
		fprintf(f, "  entry 0x%" PRIx64 "%s\n", s->g->block[r->entry[k]].start,
		        cycle_entry(r, r->entry[k]) ? " (a cycle's: nothing explored enters it)"
		                                    : "");
	for (size_t k = 0; k < r->nexit; k++) {
		const struct rcfg_edge *e = &s->g->edge[r->exit[k]];
		fprintf(f, "  exit 0x%" PRIx64 " -> 0x%" PRIx64 " %s (%s)\n",
		        last_insn(&s->g->block[e->from]), e->to_addr, rcfg_edge_kind_name(e->kind),
		        rcfg_out_name(e->out));
	}
	for (size_t k = 0; k < r->nexit_block; k++) {
		const struct rcfg_block *b = &s->g->block[r->exit_block[k]];
		fprintf(f, "  exit block 0x%" PRIx64 " (%s)\n", b->start, br_kind_name(b->kind));
	}
}

/* The region's calls: each inlined (a clone) or an exit of the replacement code. */
static void text_calls(FILE *f, const struct region_sel *s, size_t ri)
{
	const struct rinline_region *ir = &s->inl->region[ri];
	for (size_t k = 0; k < ir->nsite; k++) {
		const struct rinline_site *st = &s->inl->site[ir->site[k]];
		fprintf(f, "  call 0x%" PRIx64 " -> ", st->call);
		if (st->callee)
			fprintf(f, "0x%" PRIx64, st->callee);
		else
			fputs("indirect", f);
		fprintf(f, " (depth %u, count %.1f): %s", st->depth, st->count, rinline_why_name(st->why));
		if (st->why == RINLINE_WHY_INLINED) {
			const struct rinline_clone *cl = &s->inl->clone[st->clone];
			fprintf(f, ", %zu blocks, %" PRIu64 " instructions, scale %.3f", cl->nblock,
			        cl->ninsns, cl->scale);
		} else {
			fputs(", an exit", f);
		}
		fputc('\n', f);
	}
}

static void json_calls(FILE *f, const struct region_sel *s, size_t ri)
{
	const struct rinline_region *ir = &s->inl->region[ri];
	fputs(", \"calls\": [", f);
	for (size_t k = 0; k < ir->nsite; k++) {
		const struct rinline_site *st = &s->inl->site[ir->site[k]];
		fprintf(f,
		        "%s\n    {\"call\": \"0x%" PRIx64 "\", \"callee\": \"0x%" PRIx64
		        "\", \"depth\": %u, \"count\": %.6g, \"why\": \"%s\"",
		        k ? "," : "", st->call, st->callee, st->depth, st->count,
		        rinline_why_name(st->why));
		if (st->why == RINLINE_WHY_INLINED)
			fprintf(f, ", \"blocks\": %zu, \"insns\": %" PRIu64 ", \"scale\": %.6g",
			        s->inl->clone[st->clone].nblock, s->inl->clone[st->clone].ninsns,
			        s->inl->clone[st->clone].scale);
		fputs("}", f);
	}
	fputs("]", f);
}

int region_sel_write_text(FILE *f, const struct region_sel *s)
{
	size_t n = s->norder;
	const size_t *o = s->order;
	text_header(f, s);
	for (size_t i = 0; i < n; i++) {
		size_t ri = o[i];
		const struct rgraph_region *r = &s->rg->region[ri];
		const struct rprune_region *p = &s->p->region[ri];
		fprintf(f,
		        "\nregion 0x%" PRIx64 " (kept: %s): %.3f %% of the weight, %" PRIu64
		        " instructions in %zu of %zu blocks, hottest count %.1f\n",
		        region_sel_start(s, ri), rprune_region_why_name(p->why), 100 * p->share,
		        p->ninsns, p->nkept, r->nblock, p->hottest);
		text_blocks(f, s, r);
		text_loops(f, s, ri);
		text_calls(f, s, ri);
		text_ends(f, s, r);
	}
	size_t dropped = s->rg->nregion - s->p->nkept_region;
	if (dropped)
		fprintf(f, "\n# dropped %zu regions\n", dropped);
	for (size_t ri = 0; ri < s->rg->nregion; ri++) {
		const struct rprune_region *p = &s->p->region[ri];
		if (!p->kept)
			fprintf(f,
			        "dropped 0x%" PRIx64 ": %s, %" PRIu64
			        " instructions in %zu blocks, %.3f %% of the weight\n",
			        region_sel_start(s, ri), rprune_region_why_name(p->why), p->ninsns,
			        s->rg->region[ri].nblock, 100 * p->share);
	}
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}

/* A number JSON can hold: infinite iterations (no entry left, region_prune.h) are null. */
static void json_num(FILE *f, double v)
{
	if (isfinite(v))
		fprintf(f, "%.6g", v);
	else
		fputs("null", f);
}

static void json_blocks(FILE *f, const struct region_sel *s, const struct rgraph_region *r)
{
	fputs(", \"blocks\": [", f);
	for (size_t k = 0; k < r->nblock; k++) {
		size_t b = r->block[k];
		const struct rcfg_block *gb = &s->g->block[b];
		const struct rprune_block *pb = &s->p->block[b];
		fprintf(f,
		        "%s\n    {\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64
		        "\", \"insns\": %u, \"count\": ",
		        k ? "," : "", gb->start, gb->end, gb->ninsns);
		if (pb->counted)
			json_num(f, pb->count);
		else
			fputs("null", f);
		fprintf(f, ", \"bound\": %s, \"source\": \"%s\", \"kept\": %s, \"why\": \"%s\"}",
		        pb->bound ? "true" : "false",
		        rflow_block_source_name(s->f->block[b].source), pb->kept ? "true" : "false",
		        rprune_block_why_name(pb->why));
	}
	fputs("]", f);
}

/* The edges between the region's blocks (a region holds every in-graph edge of its
 * blocks), by source block and edge order: block starts, kind, count when region_flow
 * has one. */
static void json_edges(FILE *f, const struct region_sel *s, const struct rgraph_region *r)
{
	fputs(", \"edges\": [", f);
	int first = 1;
	for (size_t k = 0; k < r->nblock; k++) {
		const struct rcfg_block *gb = &s->g->block[r->block[k]];
		for (size_t e = gb->first_edge; e < gb->first_edge + gb->nedge; e++) {
			const struct rcfg_edge *ge = &s->g->edge[e];
			const struct rflow_edge *fe = &s->f->edge[e];
			if (ge->out != RCFG_IN)
				continue;
			fprintf(f,
			        "%s\n    {\"from\": \"0x%" PRIx64 "\", \"to\": \"0x%" PRIx64
			        "\", \"kind\": \"%s\", \"count\": ",
			        first ? "" : ",", gb->start, s->g->block[ge->to].start,
			        rcfg_edge_kind_name(ge->kind));
			if (fe->source != RFLOW_UNDECIDED)
				json_num(f, fe->count);
			else
				fputs("null", f);
			fprintf(f, ", \"source\": \"%s\"}", rflow_edge_source_name(fe->source));
			first = 0;
		}
	}
	fputs("]", f);
}

static void json_loops(FILE *f, const struct region_sel *s, size_t ri)
{
	const struct rgraph_region *r = &s->rg->region[ri];
	const struct rpatch *pt = s->patch[ri];
	fputs(", \"loops\": [", f);
	for (size_t i = 0; i < r->nloop; i++) {
		const struct rgraph_loop *l = &r->loop[i];
		const struct rpatch_loop *pl = &pt->loop[i];
		fprintf(f,
		        "%s\n    {\"header\": \"0x%" PRIx64
		        "\", \"depth\": %u, \"blocks\": %zu, \"entries\": %zu, "
		        "\"irreducible\": %s, \"iterations\": ",
		        i ? "," : "", s->g->block[l->header].start, l->depth, l->nblock, l->nentry,
		        l->irreducible ? "true" : "false");
		json_num(f, s->p->region[ri].loop_iterations[i]);
		fprintf(f, ", \"patch\": \"%s\"", rpatch_status_name(pl->status));
		if (pl->status == RPATCH_UNCOVERED)
			fprintf(f,
			        ", \"uncovered_entry\": \"0x%" PRIx64
			        "\", \"why\": \"%s\", \"dominators\": \"%s\"",
			        s->g->block[pl->entry].start, rpatch_why_name(pl->why),
			        rpatch_up_name(pl->up));
		fputs("}", f);
	}
	fputs("], \"patch_points\": [", f);
	for (size_t i = 0; i < pt->npoint; i++)
		fprintf(f,
		        "%s\n    {\"addr\": \"0x%" PRIx64
		        "\", \"len\": %u, \"store\": \"%s\", \"entries\": %zu, \"reentry\": %s}",
		        i ? "," : "", pt->point[i].addr, pt->point[i].len,
		        rpatch_store_name(pt->point[i].store), pt->point[i].nentry,
		        pt->point[i].reentry ? "true" : "false");
	fputs("]", f);
}

static void json_ends(FILE *f, const struct region_sel *s, const struct rgraph_region *r)
{
	fputs(", \"entries\": [", f);
	for (size_t k = 0; k < r->nentry; k++)
		fprintf(f, "%s\"0x%" PRIx64 "\"", k ? ", " : "", s->g->block[r->entry[k]].start);
	fputs("], \"exits\": [", f);
	for (size_t k = 0; k < r->nexit; k++) {
		const struct rcfg_edge *e = &s->g->edge[r->exit[k]];
		fprintf(f,
		        "%s\n    {\"from\": \"0x%" PRIx64 "\", \"to\": \"0x%" PRIx64
		        "\", \"kind\": \"%s\", \"out\": \"%s\"}",
		        k ? "," : "", last_insn(&s->g->block[e->from]), e->to_addr,
		        rcfg_edge_kind_name(e->kind), rcfg_out_name(e->out));
	}
	fputs("], \"exit_blocks\": [", f);
	for (size_t k = 0; k < r->nexit_block; k++) {
		const struct rcfg_block *b = &s->g->block[r->exit_block[k]];
		fprintf(f, "%s{\"start\": \"0x%" PRIx64 "\", \"kind\": \"%s\"}", k ? ", " : "",
		        b->start, br_kind_name(b->kind));
	}
	fputs("]", f);
}

static void json_header(FILE *f, const struct region_sel *s)
{
	const struct hot_code *h = s->hot;
	const struct rprune_options *o = &s->args->prune;
	fputs("{\"source\": ", f);
	json_put_str(f, s->source);
	fprintf(f, ", \"pid\": %u, \"program\": ", (unsigned)h->pid);
	json_put_str(f, h->program ? h->program : "");
	fprintf(
	    f,
	    ", \"samples\": %" PRIu64 ", \"unresolved\": %" PRIu64
	    ", \"total\": %.17g, \"hot_insns\": %zu, "
	    "\"blocks\": %zu, \"edges\": %zu, \"partial\": %s, \"edges_observed\": %zu, "
	    "\"edges_decided\": %zu, "
	    "\"edges_undecided\": %zu,\n \"options\": {\"max_hops\": %u, \"cold_fraction\": %g, "
	    "\"min_iterations\": %g, \"keep_share\": %g, \"min_insns\": %" PRIu64
	    ", \"min_region_share\": %g},\n"
	    " \"kept_regions\": %zu, \"kept_insns\": %zu, \"kept_weight\": %.6g, \"kept_share\": "
	    "%.6f, \"replacement_regions\": %zu, \"replacement_insns\": %.17g, "
	    "\"replacement_share\": %.6f",
	    h->samples, h->unresolved, h->total, h->nip, s->g->nblock, s->g->nedge,
	    s->g->partial ? "true" : "false", s->f->nobserved, s->f->ndecided, s->f->nundecided,
	    s->args->cfg.max_hops, o->cold_fraction, o->min_iterations, o->loop_share, o->min_insns,
	    o->min_share, s->p->nkept_region, s->p->nip, s->p->weight, s->p->share,
	    s->set->nregion, s->set->est_insns, s->set->est_share);
}

int region_sel_write_json(FILE *f, const struct region_sel *s)
{
	size_t n = s->norder;
	const size_t *o = s->order;
	json_header(f, s);
	fputs(",\n \"regions\": [", f);
	for (size_t i = 0; i < n; i++) {
		size_t ri = o[i];
		const struct rgraph_region *r = &s->rg->region[ri];
		const struct rprune_region *p = &s->p->region[ri];
		fprintf(f,
		        "%s\n  {\"start\": \"0x%" PRIx64
		        "\", \"why\": \"%s\", \"share\": %.6f, \"weight\": %.6g, "
		        "\"insns\": %" PRIu64 ", \"kept_blocks\": %zu, \"hottest\": %.6g",
		        i ? "," : "", region_sel_start(s, ri), rprune_region_why_name(p->why),
		        p->share, p->weight, p->ninsns, p->nkept, p->hottest);
		json_blocks(f, s, r);
		json_edges(f, s, r);
		json_loops(f, s, ri);
		json_calls(f, s, ri);
		json_ends(f, s, r);
		if (s->set_of[ri] != SIZE_MAX) {
			fputs(",\n   \"replacement\": ", f);
			rset_write_region_json(f, &s->set->region[s->set_of[ri]]);
		}
		fputs("}", f);
	}
	fputs("],\n \"dropped\": [", f);
	size_t k = 0;
	for (size_t ri = 0; ri < s->rg->nregion; ri++) {
		const struct rprune_region *p = &s->p->region[ri];
		if (!p->kept)
			fprintf(f,
			        "%s\n  {\"start\": \"0x%" PRIx64
			        "\", \"why\": \"%s\", \"insns\": %" PRIu64
			        ", \"blocks\": %zu, \"share\": %.6f}",
			        k++ ? "," : "", region_sel_start(s, ri),
			        rprune_region_why_name(p->why), p->ninsns, s->rg->region[ri].nblock,
			        p->share);
	}
	fputs("]}\n", f);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
