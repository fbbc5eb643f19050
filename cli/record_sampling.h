/* pmusim record's rules for what is sampled, where perf has rules too: the
 * branch filter (-j, and -b which is -j any), and the advice given when a
 * recording came out too short to be a profile. */
#ifndef PMUSIM_CLI_RECORD_SAMPLING_H
#define PMUSIM_CLI_RECORD_SAMPLING_H

#include <stdint.h>

#include "cli/eventlist.h"
#include "pmu_model/pmu.h"

/* One -j spec: *filter gets its LBR_F_* bits. A filter whose privilege words
 * leave out u (k, hv: kernel or hypervisor only) is refused, since the model
 * runs user code only and would record empty branch stacks; a second -j that
 * disagrees with the first (*given, NULL before any) is refused. 0, or -1 with
 * one line naming cmd and the part refused printed. */
int record_branch_filter(const char *cmd, const char *spec, uint32_t *filter, const char **given);

/* -b given: perf's rule is that -b is -j any, so a -j (j_spec, NULL if none)
 * with another filter is refused. 0, or -1 with one line printed. */
int record_branch_any(const char *cmd, const char *j_spec, uint32_t filter);

/* Below this many samples a recording gets a warning. */
#define RECORD_FEW_SAMPLES 100

/* When nsamples < RECORD_FEW_SAMPLES, one line on stderr naming the -c for
 * each event (from its exact count), or the -F (freq not 0: from the simulated
 * time), that would have given about 1000 samples. */
void record_warn_few_samples(const struct eventlist *el, uint64_t freq, const struct pmu *pmu, uint64_t nsamples);

#endif
