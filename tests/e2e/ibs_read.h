/* Reading the op samples of a one-event ibs_op recording with pmusim's own
 * reader (profiler/perfdata.h, ibs_op_decode), for the e2e suites that set
 * them beside other references (check_ibs, check_ibs_perf). Failures are
 * libcheck assertions. */
#ifndef PMUSIM_TESTS_E2E_IBS_READ_H
#define PMUSIM_TESTS_E2E_IBS_READ_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/ibs_op.h"

struct op {
	uint64_t ip, addr, period; /* the sample's fields */
	struct ibs_op f;           /* its payload */
};

/* Every sample of the recording at path, which must hold one ibs_op event
 * (with cnt_ctl equal to cnt_ctl, unless it is -1); malloc'ed, *n of them. */
struct op *ibs_read_ops(const char *path, int cnt_ctl, size_t *n);

#endif
