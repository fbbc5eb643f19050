/* pmusim record --rep MODE: the REP unit (pmu_model/rep.h) runs beside the PMU
 * and every REP record its handler reads becomes a sample of an event of its
 * own, "pmusim_rep", in the same perf.data: IP = the REP instruction, TID,
 * TIME, PERIOD 1 and a PERF_SAMPLE_RAW payload (little-endian, 32 bytes):
 *   +0  u64 site        address of the REP instruction
 *   +8  u64 requested   count register at its first execution
 *   +16 u64 actual      iterations done (0 when the mode cannot know: first)
 *   +24 u32 end         0 count exhausted, 1 condition met, 2 left in the middle
 *                       (a fault or signal took the thread to a handler, or the
 *                       run stopped), 3 not known (mode first, patch), 4 a single
 *                       step (SSE): requested = the count before this iteration,
 *                       actual = its index in the execution; 5 no REP: a sample
 *                       that only carries taken-branch records (--rep-tbe);
 *                       plus REP_RAW_RESUMED (0x10) when the record continues an
 *                       execution that an earlier record (end 2) of the same
 *                       thread and site began: requested is that execution's, not
 *                       counted again, and actual the iterations since it went on
 *   +28 u32 mode        0 first, 1 last, 2 buffer, 3 membuffer, 4 counter, 5 patch
 * With --rep-tbe the buffer's taken-branch records before a REP record are
 * that sample's branch stack (newest first), at most REP_MAX_BRANCHES: when more
 * come before the next REP record, and after the last one, they go out in samples
 * of their own (end 5; IP = the newest branch's target), so every taken branch the
 * unit recorded is in the file once. */
#ifndef PMUSIM_CLI_RECORD_REP_H
#define PMUSIM_CLI_RECORD_REP_H

#include <stdint.h>

#include "pmu_model/rep.h"
#include "profiler/perfdata.h"

#define REP_RAW_SIZE 32
#define REP_EVENT_NAME "pmusim_rep"
/* 2048 entries of 24 bytes and the sample's other fields stay within a record's
 * u16 size (perf.data-file-format: perf_event_header.size). */
#define REP_MAX_BRANCHES 2048
#define REP_RAW_RESUMED 0x10u
#define REP_RAW_BRANCHES 5u

struct rep_recording {
	struct rep_unit *unit;
	int mode;                    /* enum rep_mode */
	struct perfdata_writer *w;   /* set once the file is open */
	uint64_t id;                 /* sample id of the REP event */
	uint64_t (*now_ns)(void *ctx);
	uint32_t (*pid_of)(void *ctx, uint32_t tid);
	void *ctx;
	int err;
	struct perf_branch br[REP_MAX_BRANCHES]; /* branch records waiting for their REP */
	uint32_t br_tid;                         /* the thread of the newest one */
	size_t nbr;
	uint64_t written;
};

/* Creates the unit for mode (enum rep_mode) with entries buffer entries, TBE and
 * SSE (REP_PATCH: no unit; call rep_recording_patched for each trap). */
int rep_recording_init(struct rep_recording *rr, int mode, uint32_t entries, int tbe, int sse);
/* The software tracer's handler (sim_rep_patch): the count register at a REP. */
void rep_recording_patched(void *rr, uint64_t site, uint64_t count, uint32_t tid);
/* The run ended: the unit's buffer is drained (rep_unit_flush) and the branch records
 * no REP record took go out in a sample of their own. */
void rep_recording_finish(struct rep_recording *rr);
void rep_recording_free(struct rep_recording *rr);

#endif
