/* Checking call-stack snapshots against the truth (pmusim validate --stacks):
 * the samples with callchains of a recording (those of `pmusim record
 * --tstack`'s pmusim_tstack event and of `record -g`'s events; callchain:
 * PERF_CONTEXT_USER, IP, return addresses innermost first; see
 * cli/record_tstack.h, cli/record_callgraph.h) and the "stack_snapshots" of
 * the --truth-json file of the same run (the machine's own reading of each
 * thread's stack at the same moments; sim/truth.h). The i-th sample with a
 * callchain, in file order, is the i-th snapshot: a snapshot matches when
 * thread, process, IP (the chain's first address) and every return address
 * are equal. */
#ifndef PMUSIM_PROFILER_STACK_CHECK_H
#define PMUSIM_PROFILER_STACK_CHECK_H

#include <stddef.h>
#include <stdint.h>

struct stack_snap {
	uint32_t tid, pid;
	uint64_t ip;
	size_t first, n;      /* return addresses: set->rets + first */
};

struct stack_set {
	struct stack_snap *snap;
	size_t n, cap;
	uint64_t *rets;
	size_t nrets, caprets;
};

/* Read the snapshots; 0 or a negative pmusim_err with a one-line reason
 * (not perf.data, no event with callchains, a truth without stack_snapshots,
 * corrupt input). */
int stack_recording_read(const char *path, struct stack_set *out, char *msg, size_t msglen);
int stack_truth_read(const char *path, struct stack_set *out, char *msg, size_t msglen);
void stack_set_free(struct stack_set *s);

struct stack_check {
	size_t snapshots;        /* in the recording */
	size_t truth_snapshots;
	size_t mismatches;       /* snapshots that differ, plus those only one side has */
	uint64_t frames;         /* return addresses compared */
	size_t max_depth;
	char first[256];         /* the first mismatch, described; "" when none */
};

void stack_compare(const struct stack_set *truth, const struct stack_set *got, struct stack_check *out);

#endif
