/* A region selection (cli/report_regions.h) as a Graphviz DOT digraph (the DOT
 * language: graphviz.org/doc/info/lang.html; HTML-like labels: .../shapes.html#html),
 * for `report --regions --format dot` and the SVGs of --svg.
 *
 * The drawing. One cluster subgraph per kept region, hottest first (ties by address),
 * labelled with its start, its share of the weight and why it is kept; dropped regions
 * are not drawn. In each, in the order of the region's blocks (by address):
 *   - a node per block, named by its start ("0x401000"), a box whose label gives
 *     start..end, its instructions and its count (with "bound" for a lower bound, "-"
 *     for none) and why it is kept or cut; kept blocks solid, cut ones dashed and grey;
 *   - a loop header has a doubled border (peripheries=2) and a line per loop it heads:
 *     depth, iterations per entry, patch status;
 *   - a block holding patch points has a red border and a red line per point:
 *     "patch 0xADDR (LEN bytes, atomic|int3)", LEN the instruction's length;
 *   - an edge per in-graph edge between its blocks, labelled with its kind (fall, taken,
 *     indirect, call_ret) and its count when region_flow has one; dashed and grey when
 *     it touches a cut block;
 *   - one node "exit 0xSTART" (START the region's), small, and an edge to it from the
 *     source block of each edge that leaves the graph, labelled with its kind, target
 *     address and why it leaves, and from each exit block no such edge leaves (a return,
 *     a trap, an indirect jump without a known target, an infinite loop's sink),
 *     labelled with its terminator's kind ("sink" for the sink).
 * So a region draws its blocks + 1 nodes and its in-graph edges + exit edges + exit
 * blocks without a leaving edge as edges: what the JSON lists (check_regions counts
 * both). The bytes depend only on the selection: every list is walked in its sorted
 * order and every number printed with a fixed format. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "cli/report_regions.h"
#include "common/err.h"
#include "pmu_model/block.h"

/* s inside a DOT quoted string: '"' and '\\' escaped, control characters as spaces. */
static void dot_put_str(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fputc('\\', f);
		fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
	}
}

/* A count as the text report prints it. */
static void count_text(char *buf, size_t len, double v)
{
	if (isfinite(v))
		snprintf(buf, len, "%.1f", v);
	else
		snprintf(buf, len, "inf");
}

/* The HTML-like label's lines for the loops block b heads, and whether there are any. */
static int loop_lines(FILE *f, const struct region_sel *s, size_t ri, size_t b)
{
	const struct rgraph_region *r = &s->rg->region[ri];
	int any = 0;
	for (size_t i = 0; i < r->nloop; i++) {
		const struct rgraph_loop *l = &r->loop[i];
		if (l->header != b)
			continue;
		char it[32];
		count_text(it, sizeof(it), s->p->region[ri].loop_iterations[i]);
		fprintf(f,
		        "loop header, depth %u%s: %s iterations per entry, %s<br align=\"left\"/>",
		        l->depth, l->irreducible ? " (irreducible)" : "", it,
		        rpatch_status_name(s->patch[ri]->loop[i].status));
		any = 1;
	}
	return any;
}

static void block_node(FILE *f, const struct region_sel *s, size_t ri, size_t b)
{
	const struct rcfg_block *gb = &s->g->block[b];
	const struct rprune_block *pb = &s->p->block[b];
	const struct rpatch *pt = s->patch[ri];
	char count[80] = "no count";
	if (pb->counted) {
		char c[32];
		count_text(c, sizeof(c), pb->count);
		snprintf(count, sizeof(count), "count %s%s, %s", c, pb->bound ? " (bound)" : "",
		         rflow_block_source_name(s->f->block[b].source));
	}
	fprintf(f,
	        "    \"0x%" PRIx64 "\" [label=<0x%" PRIx64 "..0x%" PRIx64
	        "<br align=\"left\"/>%u insns, %s<br align=\"left\"/>%s: %s<br align=\"left\"/>",
	        gb->start, gb->start, gb->end, gb->ninsns, count, pb->kept ? "kept" : "cut",
	        rprune_block_why_name(pb->why));
	int header = loop_lines(f, s, ri, b), patched = 0;
	for (size_t i = 0; i < pt->npoint; i++)
		if (pt->point[i].block == b) {
			fprintf(f,
			        "<font color=\"red\">patch 0x%" PRIx64
			        " (%u bytes, %s)</font><br align=\"left\"/>",
			        pt->point[i].addr, pt->point[i].len,
			        rpatch_store_name(pt->point[i].store));
			patched = 1;
		}
	fputs(">", f);
	if (!pb->kept)
		fputs(", style=dashed, color=gray50, fontcolor=gray40", f);
	if (header)
		fputs(", peripheries=2", f);
	if (patched)
		fputs(", color=red, penwidth=2", f);
	fputs("];\n", f);
}

/* An edge's label: its kind and its count when region_flow has one. */
static void edge_label(FILE *f, const struct region_sel *s, size_t e)
{
	const struct rflow_edge *fe = &s->f->edge[e];
	fputs(rcfg_edge_kind_name(s->g->edge[e].kind), f);
	if (fe->source != RFLOW_UNDECIDED) {
		char c[32];
		count_text(c, sizeof(c), fe->count);
		fprintf(f, " %s", c);
	}
}

static int is_sink(const struct rgraph_region *r, size_t b)
{
	for (size_t k = 0; k < r->nsink; k++)
		if (r->sink[k] == b)
			return 1;
	return 0;
}

/* Whether an out-edge of block b leaves the graph. */
static int leaves(const struct rcfg *g, size_t b)
{
	const struct rcfg_block *gb = &g->block[b];
	for (size_t e = gb->first_edge; e < gb->first_edge + gb->nedge; e++)
		if (g->edge[e].out != RCFG_IN)
			return 1;
	return 0;
}

static void region_edges(FILE *f, const struct region_sel *s, size_t ri, const char *exit)
{
	const struct rgraph_region *r = &s->rg->region[ri];
	for (size_t k = 0; k < r->nblock; k++) {
		const struct rcfg_block *gb = &s->g->block[r->block[k]];
		for (size_t e = gb->first_edge; e < gb->first_edge + gb->nedge; e++) {
			const struct rcfg_edge *ge = &s->g->edge[e];
			if (ge->out != RCFG_IN)
				continue;
			fprintf(f, "    \"0x%" PRIx64 "\" -> \"0x%" PRIx64 "\" [label=\"",
			        gb->start, s->g->block[ge->to].start);
			edge_label(f, s, e);
			fputs("\"", f);
			if (!s->p->block[ge->from].kept || !s->p->block[ge->to].kept)
				fputs(", style=dashed, color=gray50, fontcolor=gray40", f);
			fputs("];\n", f);
		}
	}
	for (size_t k = 0; k < r->nexit; k++) {
		const struct rcfg_edge *ge = &s->g->edge[r->exit[k]];
		fprintf(f, "    \"0x%" PRIx64 "\" -> \"%s\" [label=\"", s->g->block[ge->from].start,
		        exit);
		edge_label(f, s, r->exit[k]);
		fprintf(f, " to 0x%" PRIx64 " (%s)\", color=gray30];\n", ge->to_addr,
		        rcfg_out_name(ge->out));
	}
	for (size_t k = 0; k < r->nexit_block; k++) {
		size_t b = r->exit_block[k];
		if (leaves(s->g, b))
			continue; /* drawn above with its target */
		fprintf(f, "    \"0x%" PRIx64 "\" -> \"%s\" [label=\"%s\", color=gray30];\n",
		        s->g->block[b].start, exit,
		        is_sink(r, b) ? "sink" : br_kind_name(s->g->block[b].kind));
	}
}

/* Region ri's nodes and edges, each line indented for a cluster. */
static void region_body(FILE *f, const struct region_sel *s, size_t ri)
{
	const struct rgraph_region *r = &s->rg->region[ri];
	const struct rprune_region *p = &s->p->region[ri];
	uint64_t start = region_sel_start(s, ri);
	fprintf(f,
	        "    label=\"region 0x%" PRIx64 " (kept: %s): %.3f %% of the weight, %" PRIu64
	        " instructions in %zu of %zu blocks\";\n",
	        start, rprune_region_why_name(p->why), 100 * p->share, p->ninsns, p->nkept,
	        r->nblock);
	for (size_t k = 0; k < r->nblock; k++)
		block_node(f, s, ri, r->block[k]);
	char exit[40];
	snprintf(exit, sizeof(exit), "exit 0x%" PRIx64, start);
	fprintf(f,
	        "    \"%s\" [label=\"exit\", shape=box, style=rounded, fontsize=8, width=0.3, "
	        "height=0.2];\n",
	        exit);
	region_edges(f, s, ri, exit);
}

/* The digraph's opening: its name, its label (what, then the selection's source and
 * figures) and the defaults. */
static void graph_head(FILE *f, const struct region_sel *s, const char *name, const char *what)
{
	fprintf(f, "digraph \"%s\" {\n  label=\"%s of ", name, what);
	dot_put_str(f, s->source);
	fprintf(f, ": kept %zu of %zu regions, %.3f %% of the weight\";\n", s->p->nkept_region,
	        s->rg->nregion, 100 * s->p->share);
	fputs("  graph [fontname=\"monospace\", fontsize=11, labelloc=t, labeljust=l];\n"
	      "  node [shape=box, fontname=\"monospace\", fontsize=10];\n"
	      "  edge [fontname=\"monospace\", fontsize=9];\n",
	      f);
}

int region_sel_write_dot(FILE *f, const struct region_sel *s)
{
	size_t n, *o = region_sel_kept_order(s, &n);
	if (!o)
		return PMUSIM_ERR_NOMEM;
	graph_head(f, s, "regions", "hot super-regions");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "  subgraph \"cluster_0x%" PRIx64 "\" {\n", region_sel_start(s, o[i]));
		region_body(f, s, o[i]);
		fputs("  }\n", f);
	}
	fputs("}\n", f);
	free(o);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}

int region_sel_write_dot_region(FILE *f, const struct region_sel *s, size_t ri)
{
	if (ri >= s->rg->nregion || !s->p->region[ri].kept)
		return PMUSIM_ERR_ARG;
	char name[40];
	snprintf(name, sizeof(name), "region 0x%" PRIx64, region_sel_start(s, ri));
	graph_head(f, s, name, name);
	fprintf(f, "  subgraph \"cluster_0x%" PRIx64 "\" {\n", region_sel_start(s, ri));
	region_body(f, s, ri);
	fputs("  }\n}\n", f);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
