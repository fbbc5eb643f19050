/* The largest changes of a baseline diff as a picture (pmusim diff --svg): one
 * horizontal bar per function, its self cost's change in the diff's sort kind,
 * growth red to the right, savings green to the left, the value and the
 * function's name beside it. Self-contained SVG; the same diff gives the same
 * bytes. */
#ifndef PMUSIM_PROFILER_BASELINE_SVG_H
#define PMUSIM_PROFILER_BASELINE_SVG_H

#include <stddef.h>
#include <stdio.h>

#include "profiler/baseline_diff.h"

/* The top functions of d (at most top, those that changed) with the two files'
 * names in the title. 0 or PMUSIM_ERR_IO. */
int baseline_svg(FILE *f, const struct bl_diff *d, const char *base, const char *cur, size_t top);

#endif
