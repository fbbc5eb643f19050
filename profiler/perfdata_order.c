/* perfdata_next (profiler/perfdata.h): the records of a perf.data file in time order, as
 * perf's readers see them. `perf record` empties one ring buffer per CPU after another
 * and writes a FINISHED_ROUND after each pass, so a sample can lie in the file before
 * the MMAP2 or COMM of its process although it happened later. perf queues every record
 * that has a time and hands the queue out by time (tools/perf/util/ordered-events.c,
 * session.c perf_session__process_event, perf 6.1); this follows its rules:
 *  - a record with no time (0 or ~0: no sample_id_all, no PERF_SAMPLE_TIME) is not
 *    queued and comes out at once, ahead of queued records (ordered_events__queue -ETIME);
 *  - a timed record joins the queue after every queued one of the same or an earlier
 *    time (queue_event: equal times keep file order);
 *  - at a FINISHED_ROUND the queued records up to the previous round's latest time come
 *    out (ordered_events__flush OE_FLUSH__ROUND: next_flush, then next_flush =
 *    max_timestamp): the records of round n+1 may still precede those of round n, never
 *    those of round n-1; nothing comes out at the first round, nor when the queue is
 *    empty (the limit is then kept);
 *  - at the end of the data everything still queued comes out (OE_FLUSH__FINAL).
 * The queue holds 16 bytes per record (time and offset; the file stays mapped and a
 * record is decoded when it is handed out), about two rounds of records; a file without
 * FINISHED_ROUND whose records have times is queued whole. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "profiler/perfdata.h"
#include "profiler/perfdata_read_internal.h"

#define TIME_NONE UINT64_MAX /* perf's "no timestamp" besides 0 */

static int cmp_entry(const void *a, const void *b)
{
	const struct order_entry *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off; /* offsets are arrival order */
}

/* Sorts the queue and marks the records up to time limit as due. */
static void flush(struct perfdata *pd, uint64_t limit)
{
	arrays_sort(pd->queue, pd->nqueue, sizeof(*pd->queue), cmp_entry);
	size_t n = 0;
	while (n < pd->nqueue && pd->queue[n].time <= limit)
		n++;
	pd->ready = n;
	pd->next_ready = 0;
}

/* Drops the records handed out from the front of the queue. */
static void drop_handed_out(struct perfdata *pd)
{
	memmove(pd->queue, pd->queue + pd->ready, (pd->nqueue - pd->ready) * sizeof(*pd->queue));
	pd->nqueue -= pd->ready;
	pd->ready = pd->next_ready = 0;
}

static int enqueue(struct perfdata *pd, uint64_t time, uint64_t off)
{
	if (pd->nqueue == pd->queue_cap) {
		size_t cap = pd->queue_cap ? 2 * pd->queue_cap : 1024;
		struct order_entry *q = realloc(pd->queue, cap * sizeof(*q));
		if (!q)
			return PMUSIM_ERR_NOMEM;
		pd->queue = q;
		pd->queue_cap = cap;
	}
	/* max_timestamp is that of the queue's last entry: it restarts when the queue was
	 * emptied (queue_event with no last event) */
	if (pd->nqueue == 0 || time > pd->queue_max)
		pd->queue_max = time;
	pd->queue[pd->nqueue++] = (struct order_entry){time, off};
	return 0;
}

static void round_finished(struct perfdata *pd)
{
	if (pd->nqueue == 0)
		return;
	flush(pd, pd->flush_limit); /* limit 0 (the first round): nothing timed is due */
	pd->flush_limit = pd->queue_max;
}

static int corrupt(char *msg, size_t msglen, int rc, uint32_t type, uint64_t off)
{
	if (rc == PMUSIM_ERR_NOMEM)
		return pmusim_fail(msg, msglen, rc, "perf.data: out of memory");
	return pmusim_fail(msg, msglen, rc, "perf.data: record %u at %#llx is corrupt", type,
	                   (unsigned long long)off);
}

/* Decodes the record at off for the caller. */
static int hand_out(struct perfdata *pd, uint64_t off, uint16_t size, struct perf_record *rec,
                    char *msg, size_t msglen)
{
	int rc = perfdata_record_at(pd, off, size, rec);
	return rc ? corrupt(msg, msglen, rc, rec->type, off) : 1;
}

int perfdata_next(struct perfdata *pd, struct perf_record *rec, char *msg, size_t msglen)
{
	for (;;) {
		uint16_t size;
		if (pd->next_ready < pd->ready) {
			uint64_t off = pd->queue[pd->next_ready++].off;
			if (perfdata_record_size(pd, off, &size))
				return corrupt(msg, msglen, PMUSIM_ERR_FORMAT, 0, off);
			return hand_out(pd, off, size, rec, msg, msglen);
		}
		if (pd->ready)
			drop_handed_out(pd);
		if (pd->pos >= pd->data_end) {
			if (pd->nqueue == 0)
				return 0;
			flush(pd, UINT64_MAX);
			continue;
		}
		uint64_t off = pd->pos;
		if (perfdata_record_size(pd, off, &size)) {
			/* nothing after a broken size can be trusted; what is queued still follows */
			pd->pos = pd->data_end;
			return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
			                   "perf.data: record at %#llx has a bad size",
			                   (unsigned long long)off);
		}
		pd->pos += size;
		uint32_t type;
		memcpy(&type, pd->map + off, 4);
		if (type == PERF_RECORD_FINISHED_ROUND) {
			round_finished(pd);
			continue;
		}
		if (!perfdata_record_carried(type))
			continue;
		uint64_t time;
		/* a record whose time cannot be read is decoded now, which reports it */
		if (perfdata_record_time(pd, off, size, &time) || time == 0 || time == TIME_NONE)
			return hand_out(pd, off, size, rec, msg, msglen);
		int rc = enqueue(pd, time, off);
		if (rc)
			return corrupt(msg, msglen, rc, type, off);
	}
}
