/* pmusim record's op sampling (see record_ibs.h). */
#include "cli/record_ibs.h"

#include <stdio.h>
#include <string.h>

#include "cli/record_tstack.h"
#include "common/err.h"

int ibs_parse_window(const char *cmd, const char *arg, struct ibs_options *o)
{
	char on[64];
	const char *slash = strchr(arg, '/');
	if (!slash || (size_t)(slash - arg) >= sizeof(on))
		return fprintf(stderr, "%s: --ibs-window needs ON/EVERY, e.g. 1ms/10ms, not '%s'\n", cmd, arg), -1;
	snprintf(on, sizeof(on), "%.*s", (int)(slash - arg), arg);
	if (tstack_parse_period("--ibs-window", on, &o->win_on_ns) < 0 ||
	    tstack_parse_period("--ibs-window", slash + 1, &o->win_every_ns) < 0)
		return -1;
	if (!o->win_on_ns || o->win_on_ns > o->win_every_ns)
		return fprintf(stderr, "%s: --ibs-window %s: on for more than 0 and at most EVERY\n", cmd, arg), -1;
	return 0;
}

int ibs_check(const char *cmd, const struct ibs_options *o)
{
	if (o->period % 16)
		return fprintf(stderr, "%s: ibs_op's period %llu is not a multiple of 16 (IbsOpMaxCnt counts in "
				       "16s; Linux refuses it with EINVAL)\n", cmd, (unsigned long long)o->period), -1;
	if (o->period < 16 || o->period > IBS_OP_MAX_CNT_LIMIT)
		return fprintf(stderr, "%s: ibs_op's period %llu is outside 16..%llu\n", cmd,
			       (unsigned long long)o->period, (unsigned long long)IBS_OP_MAX_CNT_LIMIT), -1;
	if (!o->fixed && o->period < 128)
		return fprintf(stderr, "%s: ibs_op's period %llu is below 128, the random low bits' range "
				       "(give --ibs-fixed for a fixed period)\n", cmd, (unsigned long long)o->period), -1;
	return 0;
}

struct pmu_op_config ibs_pmu_config(const struct ibs_options *o, uint32_t mhz)
{
	return (struct pmu_op_config){
		.period = o->on ? o->period : 0, .count_ops = o->cnt_ctl, .no_random = o->fixed,
		.window_on = o->win_on_ns * mhz / 1000, .window_every = o->win_every_ns * mhz / 1000,
	};
}

int ibs_perf_sample(const struct ibs_options *o, const struct pmu_op_sample *s, struct perf_sample *ps,
		    uint8_t *raw)
{
	int mem = s->mem.load || s->mem.store;
	struct ibs_op op = {
		.ip = s->ip, .max_cnt = o->period, .cnt_ctl = (uint8_t)o->cnt_ctl,
		.tag_to_ret = s->tag_to_ret > IBS_OP_RET_CTR_LIMIT ? IBS_OP_RET_CTR_LIMIT : (uint32_t)s->tag_to_ret,
		.branch = s->branch, .taken = s->taken, .mispredicted = s->mispredicted, .ret = s->ret,
		.microcoded = s->microcoded, .br_target = s->branch ? s->target : 0,
		.load = s->mem.load, .store = s->mem.store,
		.width = mem ? s->mem.width : 0, .addr_valid = mem && s->mem.addr_valid,
		.data_addr = mem && s->mem.addr_valid ? s->mem.addr : 0,
	};
	if (op.width != 1 && op.width != 2 && op.width != 4 && op.width != 8 && op.width != 16 && op.width != 32)
		op.width = 0; /* e.g. fxsave's 512 bytes: the register has no such width */
	size_t n = ibs_op_encode(&op, raw, IBS_OP_RAW_SIZE);
	if (!n)
		return PMUSIM_ERR_ARG;
	ps->ip = s->ip;
	ps->addr = op.data_addr;
	ps->period = s->interval;
	ps->raw = raw;
	ps->raw_size = (uint32_t)n;
	return 0;
}
