/* A flame graph of a stack profile (profiler/stackprof.h) as a self-contained
 * SVG drawn by pmusim, after Brendan Gregg's flamegraph.pl: one box per call
 * path prefix, the outermost frame ("all", then main...) at the bottom and
 * callees stacked above their callers, each box as wide as the samples whose
 * stack starts with that prefix, siblings sorted by name (left to right,
 * strcmp), a box narrower than 0.1% of the samples left out with everything
 * above it. Each box is one <g> holding a <title> ("name (N samples, P%)",
 * the tooltip), a <rect> coloured from a hash of the name (the same name has
 * the same colour everywhere; flamegraph.pl's "hot" palette) and a <text>
 * with the name cut to fit (empty when fewer than three characters fit).
 * Names are XML-escaped. In a browser, a click on a box zooms to it and
 * "Search" highlights functions by regular expression (profiler/flame_script.h:
 * an embedded script and three <text> controls, ids "reset", "search" and
 * "matched"). Fixed two-decimal coordinates: the same profile gives the same
 * bytes. */
#ifndef PMUSIM_PROFILER_FLAME_H
#define PMUSIM_PROFILER_FLAME_H

#include <stddef.h>
#include <stdio.h>

#include "profiler/stackprof.h"

#define FLAME_MIN_PER_MILLE 1 /* boxes under 1/1000 of the samples are left out */

/* Writes the flame graph of sp to f under title (one line of UTF-8 text; NULL
 * for none). *boxes (when boxes is not NULL) receives the number of boxes
 * drawn, "all" included. 0, PMUSIM_ERR_NOMEM, or PMUSIM_ERR_IO when writing
 * failed. */
int flame_svg(FILE *f, const struct stackprof *sp, const char *title, size_t *boxes);

#endif
