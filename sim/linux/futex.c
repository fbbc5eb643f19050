/* futex(2) on the simulated CPU: waiters are threads blocked in the scheduler
 * (sim/linux/sched.h), woken oldest first; timeouts on simulated time. Values
 * from Linux's include/uapi/linux/futex.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "sim/linux/sched.h"
#include "sim/linux/syscall_internal.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define FUTEX_WAIT           0
#define FUTEX_WAKE           1
#define FUTEX_REQUEUE        3
#define FUTEX_CMP_REQUEUE    4
#define FUTEX_WAKE_OP        5
#define FUTEX_WAIT_BITSET    9
#define FUTEX_WAKE_BITSET    10
#define FUTEX_PRIVATE        128
#define FUTEX_CLOCK_REALTIME 256

#define NS_PER_S 1000000000ULL

/* Wakes up to n waiters on addr whose bitset meets mask, oldest first. */
static int futex_wake(struct sim *s, uint64_t addr, int64_t n, uint32_t mask)
{
	int woken = 0;
	while (woken < n) {
		struct thread *best = NULL;
		for (size_t i = 0; i < s->nthreads; i++) {
			struct thread *t = &s->threads[i];
			if (t->state == TS_FUTEX && t->futex_addr == addr && (t->futex_bitset & mask) &&
			    (!best || t->wait_seq < best->wait_seq))
				best = t;
		}
		if (!best)
			break;
		sched_wake(s, best, 0);
		woken++;
	}
	return woken;
}

static int futex_requeue(struct sim *s, uint64_t addr, uint64_t addr2, int64_t nwake, int64_t nmove)
{
	int done = futex_wake(s, addr, nwake, FUTEX_BITSET_ANY);
	for (int64_t moved = 0; moved < nmove;) {
		struct thread *best = NULL;
		for (size_t i = 0; i < s->nthreads; i++) {
			struct thread *t = &s->threads[i];
			if (t->state == TS_FUTEX && t->futex_addr == addr && (!best || t->wait_seq < best->wait_seq))
				best = t;
		}
		if (!best)
			break;
		best->futex_addr = addr2;
		moved++;
		done++;
	}
	return done;
}

/* FUTEX_WAKE_OP: *addr2 = op(*addr2, oparg); wake addr; wake addr2 if cmp(old, cmparg). */
static int64_t futex_wake_op(struct sim *s, uint64_t addr, int64_t n, uint64_t addr2, int64_t n2,
			     uint32_t encoded)
{
	uint32_t op = (encoded >> 28) & 7, cmp = (encoded >> 24) & 15;
	int32_t oparg = (int32_t)(encoded << 8) >> 20, cmparg = (int32_t)(encoded << 20) >> 20;
	if (encoded & (8u << 28))
		oparg = 1 << (oparg & 31);
	int32_t old, nv;
	if (mem_read(s, addr2, &old, 4) < 0)
		return -EFAULT;
	switch (op) {
	case 0: nv = oparg; break;
	case 1: nv = old + oparg; break;
	case 2: nv = old | oparg; break;
	case 3: nv = old & ~oparg; break;
	case 4: nv = old ^ oparg; break;
	default: return -ENOSYS;
	}
	if (mem_write(s, addr2, &nv, 4) < 0)
		return -EFAULT;
	int c;
	switch (cmp) {
	case 0: c = old == cmparg; break;
	case 1: c = old != cmparg; break;
	case 2: c = old < cmparg; break;
	case 3: c = old <= cmparg; break;
	case 4: c = old > cmparg; break;
	case 5: c = old >= cmparg; break;
	default: return -ENOSYS;
	}
	int woken = futex_wake(s, addr, n, FUTEX_BITSET_ANY);
	if (c)
		woken += futex_wake(s, addr2, n2, FUTEX_BITSET_ANY);
	return woken;
}

/* Deadline in simulated ns since boot of a futex timeout, UINT64_MAX for none. */
static int64_t futex_deadline(struct sim *s, int cmd, int realtime, uint64_t tsp, uint64_t *out)
{
	*out = UINT64_MAX;
	if (!tsp)
		return 0;
	int64_t ts[2];
	if (mem_read(s, tsp, ts, sizeof(ts)) < 0)
		return -EFAULT;
	if (ts[0] < 0 || ts[1] < 0 || ts[1] >= (int64_t)NS_PER_S)
		return -EINVAL;
	uint64_t v = (uint64_t)ts[0] * NS_PER_S + (uint64_t)ts[1], now = sim_now_ns(s);
	if (cmd == FUTEX_WAIT) /* relative */
		*out = now + v;
	else if (realtime) /* absolute CLOCK_REALTIME */
		*out = v > s->realtime_base_ns ? v - s->realtime_base_ns : 0;
	else /* absolute CLOCK_MONOTONIC */
		*out = v;
	return 0;
}

int64_t sys_futex(struct sim *s, const uint64_t *a)
{
	uint64_t addr = a[0];
	int cmd = (int)(a[1] & ~(uint64_t)(FUTEX_PRIVATE | FUTEX_CLOCK_REALTIME));
	uint32_t val = (uint32_t)a[2], cur;
	if (addr & 3)
		return -EINVAL;
	switch (cmd) {
	case FUTEX_WAIT:
	case FUTEX_WAIT_BITSET: {
		uint32_t mask = cmd == FUTEX_WAIT ? FUTEX_BITSET_ANY : (uint32_t)a[5];
		if (!mask)
			return -EINVAL;
		uint64_t deadline;
		int64_t err = futex_deadline(s, cmd, (a[1] & FUTEX_CLOCK_REALTIME) != 0, a[3], &deadline);
		if (err < 0)
			return err;
		if (mem_read(s, addr, &cur, 4) < 0)
			return -EFAULT;
		if (cur != val)
			return -EAGAIN;
		if (deadline <= sim_now_ns(s))
			return -ETIMEDOUT;
		struct thread *t = cur_thread(s);
		t->futex_addr = addr;
		t->futex_bitset = mask;
		t->wait_seq = s->wait_seq++;
		sched_block_current(s, TS_FUTEX, deadline);
		return 0; /* replaced by the waker's value */
	}
	case FUTEX_WAKE:
		return futex_wake(s, addr, (int64_t)(uint32_t)val, FUTEX_BITSET_ANY);
	case FUTEX_WAKE_BITSET:
		if (!(uint32_t)a[5])
			return -EINVAL;
		return futex_wake(s, addr, (int64_t)(uint32_t)val, (uint32_t)a[5]);
	case FUTEX_REQUEUE:
		return futex_requeue(s, addr, a[4], (int32_t)val, (int64_t)(uint32_t)a[3]);
	case FUTEX_CMP_REQUEUE:
		if (mem_read(s, addr, &cur, 4) < 0)
			return -EFAULT;
		if (cur != (uint32_t)a[5])
			return -EAGAIN;
		return futex_requeue(s, addr, a[4], (int32_t)val, (int64_t)(uint32_t)a[3]);
	case FUTEX_WAKE_OP:
		return futex_wake_op(s, addr, (int32_t)val, a[4], (int64_t)(uint32_t)a[3], (uint32_t)a[5]);
	}
	return -ENOSYS; /* priority-inheritance and lock operations */
}

int futex_wake_any(struct sim *s, uint64_t addr, int64_t n)
{
	return futex_wake(s, addr, n, FUTEX_BITSET_ANY);
}
