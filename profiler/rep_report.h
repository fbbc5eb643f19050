/* The REP report: per REP site of a `pmusim record --rep` recording, from the
 * samples of its pmusim_rep event (payload: cli/record_rep.h) — where it is
 * (symbol+offset in the program or library its MMAP2 record maps, found in the
 * file's symbols), the instruction with its prefix (decoded from the file),
 * executions, requested and actual totals, min/mean/max actual, and how many
 * executions a repe/repne condition ended. An execution recorded in parts (a
 * handler returned into its REP: pmu_model/rep.h) is one execution, its actual
 * count the sum of its parts; samples that only carry branch records are no REP. */
#ifndef PMUSIM_PROFILER_REP_REPORT_H
#define PMUSIM_PROFILER_REP_REPORT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

struct rep_row {
	uint64_t site;
	char symbol[160];      /* "sym+0xoff", or the file's name and offset, or "?" */
	char insn[48];         /* "repne scasb", or "?" when the file is not here */
	uint64_t executions;
	uint64_t requested;    /* summed, saturating at 2^64 - 1 */
	uint64_t actual, min, max;
	uint64_t by_condition;
	uint64_t steps;        /* single-step records (--rep-sse): one per iteration traced */
	int has_actual;        /* 0 for modes first and patch */
};

/* Reads path; rows sorted by site (caller frees). 0, or a negative pmusim_err
 * with a one-line reason (not perf.data, no pmusim_rep event, corrupt). */
int rep_report_read(const char *path, struct rep_row **rows, size_t *n, int *mode, char *msg,
		    size_t msglen);
/* The "rep" sites of a --truth-json file (pmusim run/record), as rows with
 * has_actual set (symbol and instruction from the file's *_sym). 0 or a
 * negative pmusim_err with a one-line reason. */
int rep_truth_read(const char *path, struct rep_row **rows, size_t *n, char *msg, size_t msglen);
/* Sites of the truth missing from the recording, or whose executions,
 * requested, and (when the recording knows them) actual and ended-by-condition
 * counts differ, plus recorded sites the truth does not have. */
size_t rep_mismatches(const struct rep_row *truth, size_t nt, const struct rep_row *got, size_t ng);
/* text: a table; json: {"mode":..., "sites": [rows with site, symbol,
 * instruction, executions, requested, actual, min, mean, max, ended_by_condition]}
 * (actual, min, mean, max null in mode first). */
int rep_report_write(FILE *f, const struct rep_row *rows, size_t n, int mode, int json);

#endif
