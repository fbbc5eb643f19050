/* A CPI estimate (profiler/cpi.h) against the exact program cycles and
 * instructions of pmusim's truth JSON (run/record --truth-json): per function
 * ("functions": addr, instructions, cycles), per block ("blocks": start,
 * instructions per execution, executions, cycles) or per instruction ("insns",
 * with --truth-insns: addr, retired, cycles). */
#ifndef PMUSIM_PROFILER_CPI_CHECK_H
#define PMUSIM_PROFILER_CPI_CHECK_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/cpi.h"

/* One unit of the truth. */
struct cpi_truth_unit {
	uint64_t addr;       /* function address or block start */
	char name[160];      /* function name, or the block's "sym+0xOFF" */
	double insns, cycles;
};

/* Reads the units of kind by and the
 * program's total cycles. 0, or a negative pmusim_err with a reason in msg
 * (PMUSIM_ERR_FORMAT: not a truth JSON, or one without cycles). */
int cpi_truth_read(const char *path, enum cpi_unit by, struct cpi_truth_unit **units, size_t *n,
		   double *total_cycles, char *msg, size_t msglen);

/* One unit compared. */
struct cpi_check_row {
	const struct cpi_truth_unit *t;
	double share;           /* of the program's cycles */
	double true_cpi, est_cpi, rel_err; /* rel_err = |est - true| / true */
	double est_rel_err;     /* what the estimate's sample counts allow (cpi_row_rel_err) */
};

struct cpi_check {
	size_t units;           /* in the truth */
	size_t checked;         /* with at least min_share of the cycles */
	double max_rel_err;     /* over the checked units (0 without any) */
	double mean_rel_err;    /* their cycle-weighted mean */
	size_t worst;           /* index in rows of the largest error */
	struct cpi_check_row *rows; /* the checked units, hottest first (malloc'd) */
};

/* Compares every unit with at least min_share of total_cycles. A unit the
 * estimate gives no instructions has relative error 1. 0 or PMUSIM_ERR_NOMEM. */
int cpi_check(struct cpi *c, struct binary *bin, enum cpi_unit by, const struct cpi_truth_unit *u, size_t n,
	      double total_cycles, double min_share, struct cpi_check *out);
void cpi_check_free(struct cpi_check *k);

#endif
