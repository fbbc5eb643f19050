/* Pictures of a profile against the truth: a self-contained SVG log-log scatter
 * plot, one dot per truth edge, x = exact executions, y = the profile's weight
 * of the same edge scaled to the truth's total (the normalisation the overlap
 * of profiler/validate.h uses), with the y = x diagonal. Plain C, no
 * dependencies; the same edges give the same bytes. */
#ifndef PMUSIM_PROFILER_SVG_H
#define PMUSIM_PROFILER_SVG_H

#include <stdio.h>

#include "profiler/edges.h"

/* Writes the plot of the truth edges `in` accepts (every edge for NULL; e.g.
 * edge_is_call of profiler/validate.h) to f. Both profiles are scaled over that
 * subset. Edges the profile lacks are drawn on a separate "0" row below the
 * axis; profile edges outside the truth are counted in the subtitle. title is
 * UTF-8 text, one line per '\n' (at most 4), the first one in bold; it is
 * XML-escaped here. Dots are coloured by edge kind: conditional taken,
 * fall-through, call, other transfer (jump, indirect, return). Neither edge
 * set is modified beyond sorting (edges_sorted). 0, PMUSIM_ERR_NOMEM, or
 * PMUSIM_ERR_IO when writing failed. */
int svg_scatter(FILE *f, const char *title, struct edges *profile, struct edges *truth,
                int (*in)(const struct edge *));

/* Writes the first n bytes of s (fewer when s ends before) as XML character
 * data: '&', '<', '>' and '"' as entities (also used by profiler/flame.h). */
void svg_put_escaped(FILE *f, const char *s, size_t n);

#endif
