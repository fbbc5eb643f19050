/* Hot code from op samples (hot_code.h): the samples of a perf.data's ibs_op events,
 * their payloads as Linux 6.1's perf_ibs_handle_irq writes them (profiler/ibs_op.h,
 * docs/ibs.md), merged by IP; a branch's kind from the process's code
 * (profiler/proc_code.h). Also the merging both sources share. */
#include "profiler/hot_code.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"
#include "profiler/binary.h"
#include "profiler/hot_code_internal.h"
#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"
#include "profiler/proc_code.h"
#include "profiler/symbolize.h"

/* ---- merging ---- */

int hot_acc_init(struct hot_acc *a)
{
	*a = (struct hot_acc){0};
	a->h = calloc(1, sizeof(*a->h));
	return a->h ? 0 : PMUSIM_ERR_NOMEM;
}

int hot_acc_ip(struct hot_acc *a, uint64_t ip, double w)
{
	struct hot_ip *g = grow_array(a->h->ip, &a->capip, a->h->nip + 1, sizeof(*g));
	if (!g)
		return PMUSIM_ERR_NOMEM;
	a->h->ip = g;
	g[a->h->nip++] = (struct hot_ip){ip, w};
	return 0;
}

int hot_acc_branch(struct hot_acc *a, uint64_t ip, double taken, double fall)
{
	struct hot_branch *g =
	    grow_array(a->h->branch, &a->capbranch, a->h->nbranch + 1, sizeof(*g));
	if (!g)
		return PMUSIM_ERR_NOMEM;
	a->h->branch = g;
	g[a->h->nbranch++] = (struct hot_branch){ip, taken, fall};
	return 0;
}

int hot_acc_target(struct hot_acc *a, uint64_t from, uint64_t to, double w)
{
	struct hot_target *g =
	    grow_array(a->h->target, &a->captarget, a->h->ntarget + 1, sizeof(*g));
	if (!g)
		return PMUSIM_ERR_NOMEM;
	a->h->target = g;
	g[a->h->ntarget++] = (struct hot_target){from, to, w};
	return 0;
}

static int cmp_u64(uint64_t x, uint64_t y)
{
	return (x > y) - (x < y);
}

static int by_ip(const void *x, const void *y)
{
	return cmp_u64(((const struct hot_ip *)x)->ip, ((const struct hot_ip *)y)->ip);
}

static int by_branch(const void *x, const void *y)
{
	return cmp_u64(((const struct hot_branch *)x)->ip, ((const struct hot_branch *)y)->ip);
}

static int by_pair(const void *x, const void *y)
{
	const struct hot_target *a = x, *b = y;
	return a->from != b->from ? cmp_u64(a->from, b->from) : cmp_u64(a->to, b->to);
}

struct hot_code *hot_acc_finish(struct hot_acc *a)
{
	struct hot_code *h = a->h;
	size_t m = 0;
	if (h->nip)
		arrays_sort(h->ip, h->nip, sizeof(*h->ip), by_ip);
	for (size_t i = 0; i < h->nip; i++) {
		if (m && h->ip[m - 1].ip == h->ip[i].ip)
			h->ip[m - 1].weight += h->ip[i].weight;
		else
			h->ip[m++] = h->ip[i];
	}
	h->nip = m;
	h->total = 0;
	for (size_t i = 0; i < h->nip; i++)
		h->total += h->ip[i].weight;
	m = 0;
	if (h->nbranch)
		arrays_sort(h->branch, h->nbranch, sizeof(*h->branch), by_branch);
	for (size_t i = 0; i < h->nbranch; i++) {
		if (m && h->branch[m - 1].ip == h->branch[i].ip) {
			h->branch[m - 1].taken += h->branch[i].taken;
			h->branch[m - 1].fall += h->branch[i].fall;
		} else {
			h->branch[m++] = h->branch[i];
		}
	}
	h->nbranch = m;
	m = 0;
	if (h->ntarget)
		arrays_sort(h->target, h->ntarget, sizeof(*h->target), by_pair);
	for (size_t i = 0; i < h->ntarget; i++) {
		if (m && by_pair(&h->target[m - 1], &h->target[i]) == 0)
			h->target[m - 1].weight += h->target[i].weight;
		else
			h->target[m++] = h->target[i];
	}
	h->ntarget = m;
	a->h = NULL;
	return h;
}

void hot_code_free(struct hot_code *h)
{
	if (!h)
		return;
	free(h->program);
	free(h->ip);
	free(h->branch);
	free(h->target);
	free(h);
}

double hot_code_weight(const struct hot_code *h, uint64_t ip)
{
	size_t lo = 0, hi = h->nip;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->ip[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < h->nip && h->ip[lo].ip == ip ? h->ip[lo].weight : 0;
}

/* ---- op samples ---- */

/* perf_event.h: the cpumode of a record's misc (PERF_RECORD_MISC_CPUMODE_MASK) and
 * its kernel value. */
#define CPUMODE_MASK 7u
#define CPUMODE_KERNEL 1u

/* The open recording and which of its events are op events. */
struct ops {
	struct perfdata *pd;
	uint8_t *is_op;
};

static void ops_close(struct ops *o)
{
	perfdata_close(o->pd);
	free(o->is_op);
	*o = (struct ops){0};
}

static int ops_open(struct ops *o, const char *path, char *msg, size_t ml)
{
	*o = (struct ops){0};
	int err = perfdata_open(path, &o->pd, msg, ml);
	if (err < 0)
		return err;
	size_t n = perfdata_nevents(o->pd), nop = 0;
	if (!(o->is_op = calloc(n ? n : 1, 1))) {
		ops_close(o);
		return PMUSIM_ERR_NOMEM;
	}
	for (size_t i = 0; i < n; i++) {
		const struct perfdata_event *ev = perfdata_event(o->pd, i);
		/* perf's own test (amd-sample-raw.c evlist__has_amd_ibs): the PMU's name
		 * starts so; without PERF_SAMPLE_RAW a sample has no registers */
		o->is_op[i] = ev->pmu &&
		              strncmp(ev->pmu, IBS_OP_PMU_NAME, strlen(IBS_OP_PMU_NAME)) == 0 &&
		              (ev->sample_type & PERF_SAMPLE_RAW);
		nop += o->is_op[i];
	}
	if (!nop) {
		ops_close(o);
		return pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT,
		                   "%s has no ibs_op event (record -e ibs_op//)", path);
	}
	return 0;
}

/* The op event of a record, or NULL when it is not a user-mode sample of one. */
static const struct perf_sample *op_sample(const struct ops *o, const struct perf_record *r)
{
	if (r->type != PERF_RECORD_SAMPLE || (r->misc & CPUMODE_MASK) == CPUMODE_KERNEL)
		return NULL;
	int e = perfdata_event_of_id(o->pd, r->u.sample.id);
	return e >= 0 && o->is_op[e] ? &r->u.sample : NULL;
}

struct pid_count {
	uint32_t pid;
	uint64_t n;
};

/* The process with the most op samples (the lowest pid of those tied). */
static int busiest_pid(struct ops *o, uint32_t *pid, char *msg, size_t ml)
{
	struct pid_count *c = NULL;
	size_t n = 0, cap = 0;
	struct perf_record r;
	int got, err = 0;
	while (!err && (got = perfdata_next(o->pd, &r, msg, ml)) != 0) {
		const struct perf_sample *s = got < 0 ? NULL : op_sample(o, &r);
		if (got < 0)
			err = got;
		if (!s)
			continue;
		size_t i = 0;
		while (i < n && c[i].pid != s->pid)
			i++;
		if (i == n) {
			struct pid_count *g = grow_array(c, &cap, n + 1, sizeof(*g));
			if (!g) {
				err = PMUSIM_ERR_NOMEM;
				break;
			}
			c = g;
			c[n++] = (struct pid_count){s->pid, 0};
		}
		c[i].n++;
	}
	*pid = 0;
	uint64_t best = 0;
	for (size_t i = 0; i < n; i++)
		if (c[i].n > best || (c[i].n == best && c[i].pid < *pid))
			*pid = c[i].pid, best = c[i].n;
	free(c);
	return err;
}

/* One op sample of the process: its period on its IP; a branch's direction or
 * target when its code says it is a conditional or an indirect jump or call. */
static int add_op(struct hot_acc *a, struct proc_code *pc, const struct perfdata_event *ev,
                  const struct perf_record *r, char *msg, size_t ml)
{
	const struct perf_sample *s = &r->u.sample;
	struct ibs_op op;
	char why[160] = "a payload ibs_op_decode refuses";
	if (ibs_op_problem(s->raw, s->raw_size, why, sizeof(why)) ||
	    ibs_op_decode(s->raw, s->raw_size, &op) < 0)
		return pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT, "op sample at file offset %#llx: %s",
		                   (unsigned long long)r->offset, why);
	/* the period the counter ran for (PERF_SAMPLE_PERIOD; a fixed period stands in
	 * when the attr has none) */
	double w = (double)(s->period ? s->period : ev->sample_period ? ev->sample_period : 1);
	a->h->samples++;
	int err = hot_acc_ip(a, s->ip, w);
	if (err < 0 || !op.branch)
		return err;
	struct binary *b = proc_code_of(pc, s->pid);
	const struct block_info *run = b ? binary_run(b, s->ip) : NULL;
	if (!run || run->term != s->ip || !br_kind_is_branch(run->kind)) {
		a->h->unresolved++;
		return 0;
	}
	if (run->kind == BK_COND)
		return hot_acc_branch(a, s->ip, op.taken ? w : 0, op.taken ? 0 : w);
	/* IbsBrTarget is 0 when the hardware gave none (ibs_op_decode) */
	if ((run->kind == BK_JMP_IND || run->kind == BK_CALL_IND) && op.br_target)
		return hot_acc_target(a, s->ip, op.br_target, w);
	return 0;
}

/* Merges the op samples of pid, following the mappings as the records come. */
static int merge_ops(struct ops *o, uint32_t pid, struct hot_acc *a, char *msg, size_t ml)
{
	struct symbolizer *z = symbolizer_new();
	struct proc_code *pc = z ? proc_code_new(z) : NULL;
	int err = pc ? 0 : PMUSIM_ERR_NOMEM, got;
	struct perf_record r;
	while (!err && (got = perfdata_next(o->pd, &r, msg, ml)) != 0) {
		if (got < 0) {
			err = got;
			break;
		}
		const struct perf_sample *s = op_sample(o, &r);
		if (!s)
			err = symbolizer_record(z, &r);
		else if (s->pid == pid)
			err = add_op(
			    a, pc,
			    perfdata_event(o->pd, (size_t)perfdata_event_of_id(o->pd, s->id)), &r,
			    msg, ml);
	}
	struct sym_file f;
	if (!err && symbolizer_files(z, pid, &f, 1, NULL) > 0 && !(a->h->program = strdup(f.path)))
		err = PMUSIM_ERR_NOMEM;
	proc_code_free(pc);
	symbolizer_free(z);
	return err;
}

int hot_code_from_ops(const char *path, uint32_t pid, struct hot_code **out, char *msg,
                      size_t msglen)
{
	*out = NULL;
	struct ops o;
	int err = ops_open(&o, path, msg, msglen);
	if (err < 0)
		return err;
	if (pid == 0) { /* a first pass to count, then the file again from its start */
		err = busiest_pid(&o, &pid, msg, msglen);
		ops_close(&o);
		if (err < 0 || (err = ops_open(&o, path, msg, msglen)) < 0)
			return err;
	}
	struct hot_acc a;
	if ((err = hot_acc_init(&a)) < 0) {
		ops_close(&o);
		return err;
	}
	a.h->pid = pid;
	err = merge_ops(&o, pid, &a, msg, msglen);
	ops_close(&o);
	struct hot_code *h = hot_acc_finish(&a);
	if (!err && h->samples == 0)
		err = pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                  "%s has no op sample of process %u", path, pid);
	if (err < 0) {
		hot_code_free(h);
		return err;
	}
	*out = h;
	return 0;
}
