/* The code each process of a recording runs, as a struct binary: the files the
 * process maps executable (profiler/symbolize.h follows its MMAP, FORK and
 * COMM_EXEC records), opened where its mappings place them, for walking the
 * code between branch records of its samples. Processes that map the same
 * files share one binary. Code in no file (anonymous memory, TEXT_POKE) is not
 * included: perf script cannot read it either. */
#ifndef PMUSIM_PROFILER_PROC_CODE_H
#define PMUSIM_PROFILER_PROC_CODE_H

#include <stdint.h>

#include "profiler/binary.h"
#include "profiler/symbolize.h"

struct proc_code;

/* An empty set over z's processes (z stays the caller's and must outlive it);
 * NULL when out of memory. */
struct proc_code *proc_code_new(struct symbolizer *z);
void proc_code_free(struct proc_code *pc);

/* The code of process pid as its mappings stand now (opened at the first call
 * and again after they change); NULL when none of its files can be read here
 * or memory runs out. Valid until proc_code_free. */
struct binary *proc_code_of(struct proc_code *pc, uint32_t pid);

#endif
