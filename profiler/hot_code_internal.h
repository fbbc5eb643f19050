/* What the two sources of hot code (hot_code.c: op samples; hot_code_truth.c: a
 * truth JSON) share: an accumulator of unsorted weights, merged by address once
 * at the end. Internal to profiler/hot_code*.c. */
#ifndef PMUSIM_PROFILER_HOT_CODE_INTERNAL_H
#define PMUSIM_PROFILER_HOT_CODE_INTERNAL_H

#include <stddef.h>

#include "profiler/hot_code.h"

struct hot_acc {
	struct hot_code *h; /* its arrays grow unsorted, with repeats */
	size_t capip, capbranch, captarget;
};

/* A new accumulator over an empty hot_code; 0 or PMUSIM_ERR_NOMEM. */
int hot_acc_init(struct hot_acc *a);
/* Each: 0 or PMUSIM_ERR_NOMEM. */
int hot_acc_ip(struct hot_acc *a, uint64_t ip, double w);
int hot_acc_branch(struct hot_acc *a, uint64_t ip, double taken, double fall);
int hot_acc_target(struct hot_acc *a, uint64_t from, uint64_t to, double w);
/* Sorts and merges the arrays, sums total, and hands the record over. */
struct hot_code *hot_acc_finish(struct hot_acc *a);

#endif
