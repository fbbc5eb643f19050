/* The picture of a uniformity test (profiler/uniformity.h): one dot per tested
 * edge, x = its exact count on a log scale, y = its z = (mean estimate - exact)
 * / standard error on an asinh scale (linear within +-1, logarithmic beyond, so
 * z of 1 and of 1,000 share one plot), with the line z = 0 and dashed lines at
 * the Bonferroni limit +-crit. An unbiased method's dots scatter around 0 inside
 * the limits at every weight. Self-contained SVG 1.1 with fixed two-decimal
 * coordinates: the same points give the same bytes. */
#ifndef PMUSIM_PROFILER_SVG_ZPLOT_H
#define PMUSIM_PROFILER_SVG_ZPLOT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct zplot_point {
	double exact; /* > 0 */
	double z;     /* may be +-INFINITY: drawn on rows beyond the axis */
	uint8_t kind; /* enum br_kind, for the colour (profiler/svg.h) */
	uint8_t taken;
	uint8_t biased; /* ringed in red */
};

/* Writes the plot; title as svg_scatter's (at most 4 lines, the first bold,
 * XML-escaped here). 0, or PMUSIM_ERR_IO when writing failed. */
int svg_zplot(FILE *f, const char *title, const struct zplot_point *p, size_t n, double crit);

#endif
