/* pmusim record's op sampling (-e ibs_op//, AMD IBS op style): the options,
 * the PMU's op sampler configuration, and an op sample as the ibs_op event's
 * perf.data sample (profiler/ibs_op.h, docs/ibs.md). */
#ifndef PMUSIM_CLI_RECORD_IBS_H
#define PMUSIM_CLI_RECORD_IBS_H

#include <stdint.h>

#include "pmu_model/pmu.h"
#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"

/* Period of ibs_op// without -c or period=: perf record's default is a
 * frequency, which the op sampler does not take; 100000 is a multiple of 16. */
#define IBS_DEFAULT_PERIOD 100000

struct ibs_options {
	int on;
	int cnt_ctl;            /* 1: count instructions (ops); 0: cycles */
	uint64_t period;
	int fixed;              /* --ibs-fixed: no random low bits */
	uint64_t win_on_ns, win_every_ns; /* --ibs-window ON/EVERY; every 0: always on */
};

/* --ibs-window ON/EVERY (times as --tstack-period takes them: 1ms/10ms): 0, or
 * -1 with one line printed. */
int ibs_parse_window(const char *cmd, const char *arg, struct ibs_options *o);
/* The checks perf's kernel makes and the model's: 0, or -1 with one line. */
int ibs_check(const char *cmd, const struct ibs_options *o);
/* The PMU's op sampler for o at a clock of mhz. */
struct pmu_op_config ibs_pmu_config(const struct ibs_options *o, uint32_t mhz);
/* The sample of op sample s (ip, addr, period, raw; the caller adds id, pid,
 * tid, time): raw must hold IBS_OP_RAW_SIZE bytes. 0, or PMUSIM_ERR_ARG when
 * the payload cannot say it (never: the model's fields fit). */
int ibs_perf_sample(const struct ibs_options *o, const struct pmu_op_sample *s, struct perf_sample *ps,
		    uint8_t *raw);

#endif
