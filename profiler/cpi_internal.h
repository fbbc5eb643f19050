/* The CPI estimate's state, shared by its two halves (internal to profiler/):
 * cpi.c (the samples added) and cpi_units.c (the estimate of a function, block
 * or instruction, and the rows of a report). */
#ifndef PMUSIM_PROFILER_CPI_INTERNAL_H
#define PMUSIM_PROFILER_CPI_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "common/symtab.h"
#include "profiler/cpi.h"
#include "profiler/keytab.h"

/* What the samples say of one instruction address. */
struct addr_stat {
	uint64_t addr;
	double insns;      /* estimated executions from the LBR ranges (S1) */
	double ip_insns;   /* from the instructions event's IPs */
	double cycles;     /* cycles of the cycles event's samples at it */
	double free_cycles; /* of those, the ones no branch stack placed in a run */
	double lbr_cycles; /* cycles from the LBR entries' cycle fields */
	double esum;       /* executions of the LBR runs that contain it */
	uint64_t n_insn;   /* LBR samples whose ranges hold it (not ranges: the ranges
	                    * of one sample are not independent) */
	uint64_t last;     /* the last of them (cpi_stats.lbr_samples' count then) */
	uint64_t n_ip, n_cyc, n_free, n_lbr_cyc;
};

/* What the LBR ranges say of one code run. */
struct run_stat {
	const struct block_info *run;
	double execs, lbr_cycles;
	double cycles;     /* cycles samples placed in it by their branch stacks */
	uint64_t visits, n_lbr_cyc, n_cyc;
	uint64_t samples, last; /* LBR samples that walked it, the last of them */
};

/* The LBR samples whose ranges passed through a function. */
struct fn_stat {
	uint64_t samples, last;
};

struct cpi {
	struct cpi_opts o;
	struct cpi_stats st;
	struct keytab *addr_ix, *run_ix, *fn_ix;
	struct fn_stat *f;
	size_t nf, fcap;
	const struct symtab *syms; /* of the LBR samples' binary */
	struct addr_stat *a;
	size_t na, acap;
	struct run_stat *r;
	size_t nr, rcap;
	uint32_t *sorted; /* address indices by address (valid when !dirty) */
	int dirty;        /* esum and sorted need computing */
	/* the runs of the range being walked */
	const struct block_info **walk;
	size_t nwalk, wcap;
};

/* The figures of an address or of the run starting there; NULL when none. */
const struct addr_stat *cpi_addr_find(const struct cpi *c, uint64_t addr);
const struct run_stat *cpi_run_find(const struct cpi *c, uint64_t start);

#endif
