/* One-event ibs_op recordings read back (ibs_read.h). */
#include "tests/e2e/ibs_read.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/perfdata.h"

struct op *ibs_read_ops(const char *path, int cnt_ctl, size_t *n)
{
	struct perfdata *pd;
	char msg[256];
	ck_assert_msg(perfdata_open(path, &pd, msg, sizeof(msg)) == 0, "%s: %s", path, msg);
	ck_assert_uint_eq(perfdata_nevents(pd), 1);
	const struct perfdata_event *ev = perfdata_event(pd, 0);
	ck_assert_msg(ev->type == IBS_OP_PMU_TYPE && ev->pmu && strcmp(ev->pmu, "ibs_op") == 0,
	              "%s: event type %u", path, ev->type);
	if (cnt_ctl >= 0)
		ck_assert_uint_eq(!!(ev->config & IBS_OP_CONFIG_CNT_CTL), cnt_ctl);
	size_t cap = 4096;
	struct op *v = malloc(cap * sizeof(*v));
	ck_assert_ptr_nonnull(v);
	*n = 0;
	struct perf_record r;
	int rc;
	while ((rc = perfdata_next(pd, &r, msg, sizeof(msg))) == 1) {
		if (r.type != PERF_RECORD_SAMPLE)
			continue;
		if (*n == cap)
			ck_assert_ptr_nonnull(v = realloc(v, (cap *= 2) * sizeof(*v)));
		struct op *o = &v[(*n)++];
		const struct perf_sample *s = &r.u.sample;
		o->ip = s->ip, o->addr = s->addr, o->period = s->period;
		ck_assert_msg(ibs_op_decode(s->raw, s->raw_size, &o->f) == 0,
		              "%s: sample %zu: no IBS op payload", path, *n);
	}
	ck_assert_msg(rc == 0, "%s: %s", path, msg);
	perfdata_close(pd);
	return v;
}
