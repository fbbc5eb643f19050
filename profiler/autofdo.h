/* AutoFDO's text input ("--profiler text" of create_llvm_prof / create_gcov):
 * address ranges executed, sampled addresses and taken branches, with counts. */
#ifndef PMUSIM_PROFILER_AUTOFDO_H
#define PMUSIM_PROFILER_AUTOFDO_H

#include <stddef.h>
#include <stdio.h>

#include "profiler/binary.h"
#include "profiler/edges.h"

/* Writes the profile e[0..n) of bin: a range from each edge's destination to
 * the next branch, and every taken edge, with addresses as file offsets in
 * bin's file (what AutoFDO's own perf.data reader produces); addresses outside
 * bin's executable segments are left out. 0 or a negative pmusim_err. */
int autofdo_write(FILE *f, struct binary *bin, const struct edge *e, size_t n);

#endif
