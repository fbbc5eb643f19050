/* Hot code made sample by sample (profiler/hot_code.h hot_build_*): a live
 * rewriter's window of op samples, merged as the perf.data source merges them. */
#include <stdlib.h>

#include "common/err.h"
#include "profiler/hot_code.h"
#include "profiler/hot_code_internal.h"

struct hot_build {
	struct hot_acc acc;
};

int hot_build_new(struct hot_build **out)
{
	struct hot_build *b = calloc(1, sizeof(*b));
	if (!b || hot_acc_init(&b->acc) < 0) {
		free(b);
		return PMUSIM_ERR_NOMEM;
	}
	*out = b;
	return 0;
}

int hot_build_sample(struct hot_build *b, uint64_t ip, double w, int cond, int taken, uint64_t target)
{
	b->acc.h->samples++;
	int err = hot_acc_ip(&b->acc, ip, w);
	if (!err && cond)
		err = hot_acc_branch(&b->acc, ip, taken ? w : 0, taken ? 0 : w);
	if (!err && !cond && target)
		err = hot_acc_target(&b->acc, ip, target, w);
	return err;
}

uint64_t hot_build_samples(const struct hot_build *b)
{
	return b->acc.h->samples;
}

struct hot_code *hot_build_finish(struct hot_build *b)
{
	struct hot_code *h = hot_acc_finish(&b->acc);
	free(b);
	return h;
}

void hot_build_free(struct hot_build *b)
{
	if (b)
		hot_code_free(hot_build_finish(b));
}
