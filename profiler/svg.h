/* Pictures of a profile against the truth: a self-contained SVG log-log scatter
 * plot, one dot per truth edge, x = exact executions, y = the profile's weight
 * of the same edge scaled to the truth's total (the normalisation the overlap
 * of profiler/validate.h uses), with the y = x diagonal. Plain C, no
 * dependencies; the same edges give the same bytes. */
#ifndef PMUSIM_PROFILER_SVG_H
#define PMUSIM_PROFILER_SVG_H

#include <stdio.h>

#include "common/symtab.h"
#include "profiler/edges.h"

/* Writes the plot of the truth edges `in` accepts (every edge for NULL; e.g.
 * edge_is_call of profiler/validate.h) to f. Both profiles are scaled over that
 * subset. Edges the profile lacks are drawn on a separate "0" row below the
 * axis; profile edges outside the truth are counted in the subtitle. title is
 * UTF-8 text, one line per '\n' (at most 4), the first one in bold; it is
 * XML-escaped here. Dots are coloured by edge kind: conditional taken,
 * fall-through, call, other transfer (jump, indirect, return). Each dot has a
 * <title> (the viewer's tooltip) naming the edge "from -> to" with the
 * functions of syms ("sym+0xoff", "sym" at its entry; "0xaddr" outside them
 * or for syms NULL), its kind, the exact count and the scaled profile weight.
 * Neither edge set is modified beyond sorting (edges_sorted). 0,
 * PMUSIM_ERR_NOMEM, or PMUSIM_ERR_IO when writing failed. */
int svg_scatter(FILE *f, const char *title, struct edges *profile, struct edges *truth,
                int (*in)(const struct edge *), const struct symtab *syms);

/* Writes the first n bytes of s (fewer when s ends before) as XML character
 * data: '&', '<', '>' and '"' as entities (also used by profiler/flame.h). */
void svg_put_escaped(FILE *f, const char *s, size_t n);

/* Parts shared with the other plots (profiler/svg_zplot.h). */

/* Opens the document: the XML declaration, an <svg> of width x height user units
 * (sans-serif) and its white background. The caller closes it with "</svg>\n". */
void svg_begin(FILE *f, double width, double height);

/* The decades [*lo, *hi] of a log axis that holds the values mn..mx (> 0; mx <= 0:
 * no values, the decade of 1), at least one decade wide. */
void svg_decades(double mn, double mx, int *lo, int *hi);
/* Lines of a title (at most 4). */
int svg_title_lines(const char *title);
/* Writes the title centred in width, one <text> per line, the first in bold
 * (26 + 20 + 17 per further line high); returns the y below it. */
double svg_title(FILE *f, double width, const char *title);
/* The colour of an edge's dot by its kind (enum br_kind) and whether it is a
 * fall-through (taken 0): conditional taken, fall-through, call, other. */
const char *svg_edge_color(int kind, int taken);
/* The legend of those colours from x on the baseline y (a dot and a label each,
 * 11-pixel text inside the caller's group); returns the x after it. */
double svg_edge_legend(FILE *f, double x, double y);

#endif
