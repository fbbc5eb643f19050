/* perf.data records (profiler/perfdata.h; perfdata_order.c hands them out): checks a
 * record's size, finds the time perf orders it by, and decodes SAMPLE by its event's sample_type and COMM, MMAP, MMAP2,
 * FORK, EXIT and TEXT_POKE with their sample_id_all trailer. Layouts: include/uapi/linux/perf_event.h (record bodies,
 * sample field order, read_format, struct sample_id). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "profiler/perfdata.h"
#include "profiler/perfdata_read_internal.h"

#define BRANCH_HW_INDEX (1ull << 17) /* PERF_SAMPLE_BRANCH_HW_INDEX: nr is followed by hw_idx */

/* read_format bits */
#define READ_TIME_ENABLED (1u << 0)
#define READ_TIME_RUNNING (1u << 1)
#define READ_ID (1u << 2)
#define READ_GROUP (1u << 3)
#define READ_LOST (1u << 4)

#define TRAILER_BITS                                                                               \
	(PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID |             \
	 PERF_SAMPLE_CPU | PERF_SAMPLE_IDENTIFIER)

/* PERF_SAMPLE_READ per read_format: one value or a group, each with optional fields. */
static void skip_read(struct cur *c, uint64_t rf)
{
	uint64_t per = 1 + !!(rf & READ_ID) + !!(rf & READ_LOST);
	uint64_t times = !!(rf & READ_TIME_ENABLED) + !!(rf & READ_TIME_RUNNING);
	uint64_t nr = rf & READ_GROUP ? get_u64(c) : 1;
	if (nr > (uint64_t)(c->end - c->p) / 8 / per)
		c->bad = 1;
	take(c, (times + nr * per) * 8);
}

static void get_branches(struct perfdata *pd, struct cur *c, uint64_t bst, struct perf_sample *s)
{
	uint64_t nr = get_u64(c);
	if (bst & BRANCH_HW_INDEX)
		get_u64(c);
	const uint8_t *e = nr <= (uint64_t)(c->end - c->p) / 24 ? take(c, nr * 24) : NULL;
	if (!e) {
		c->bad = 1;
		return;
	}
	if (nr > pd->brcap) {
		struct perf_branch *br = realloc(pd->br, nr * sizeof(*br));
		if (!br) {
			c->bad = 1;
			return;
		}
		pd->br = br;
		pd->brcap = nr;
	}
	for (uint64_t i = 0; i < nr; i++, e += 24) {
		struct perf_branch *b = &pd->br[i];
		uint64_t fl = u64_at(e + 16);
		memset(b, 0, sizeof(*b)); /* padding too: tests compare whole structs */
		b->from = u64_at(e);
		b->to = u64_at(e + 8);
		b->cycles = (uint16_t)(fl >> 4);
		b->mispred = fl & 1;
		b->predicted = fl >> 1 & 1;
		b->type = fl >> 20 & 15;
	}
	s->nbr = nr;
	s->br = nr ? pd->br : NULL;
}

/* The event a sample belongs to (several events: by the id at its known place). */
static int sample_event(const struct perfdata *pd, const uint8_t *p, uint16_t size)
{
	if (pd->nev == 1)
		return 0;
	uint64_t at = 8 + 8 * (uint64_t)(pd->id_slot < 0 ? 0 : pd->id_slot);
	return at + 8 <= size ? perfdata_event_of_id(pd, u64_at(p + at)) : -1;
}

static int parse_sample(struct perfdata *pd, const uint8_t *p, uint16_t size, struct perf_sample *s)
{
	int ev = sample_event(pd, p, size);
	if (ev < 0)
		return PMUSIM_ERR_FORMAT;
	uint64_t st = pd->ev[ev].sample_type;
	struct cur c = {p + 8, p + size, 0};
	if (st & PERF_SAMPLE_IDENTIFIER)
		s->id = get_u64(&c);
	if (st & PERF_SAMPLE_IP)
		s->ip = get_u64(&c);
	if (st & PERF_SAMPLE_TID)
		s->pid = get_u32(&c), s->tid = get_u32(&c);
	if (st & PERF_SAMPLE_TIME)
		s->time = get_u64(&c);
	if (st & PERF_SAMPLE_ADDR)
		s->addr = get_u64(&c);
	if (st & PERF_SAMPLE_ID)
		s->id = get_u64(&c);
	if (st & PERF_SAMPLE_STREAM_ID)
		get_u64(&c);
	if (st & PERF_SAMPLE_CPU)
		s->cpu = get_u32(&c), get_u32(&c);
	if (st & PERF_SAMPLE_PERIOD)
		s->period = get_u64(&c);
	if (st & PERF_SAMPLE_READ)
		skip_read(&c, pd->read_format[ev]);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		uint64_t n = get_u64(&c);
		const uint8_t *ips = take(&c, n <= (uint64_t)(c.end - c.p) / 8 ? n * 8 : UINT64_MAX);
		s->nchain = ips ? n : 0;
		s->chain = (const uint64_t *)(const void *)ips; /* 8-byte aligned within the record */
	}
	if (st & PERF_SAMPLE_RAW) {
		s->raw_size = get_u32(&c);
		s->raw = take(&c, s->raw_size);
	}
	if (st & PERF_SAMPLE_BRANCH_STACK)
		get_branches(pd, &c, pd->ev[ev].branch_sample_type, s);
	if ((st & PERF_SAMPLE_REGS_USER) && (s->regs_abi = get_u64(&c)) != 0)
		s->regs = (const uint64_t *)(const void *)take(&c, 8u * (size_t)__builtin_popcountll(pd->ev[ev].sample_regs_user));
	if ((st & PERF_SAMPLE_STACK_USER) && (s->stack_size = get_u64(&c)) != 0) {
		s->stack = take(&c, s->stack_size <= (uint64_t)(c.end - c.p) ? s->stack_size : UINT64_MAX);
		s->stack_dyn = get_u64(&c);
		if (s->stack_dyn > s->stack_size)
			c.bad = 1;
	}
	memcpy(&s->misc, p + 4, 2);
	return c.bad ? PMUSIM_ERR_FORMAT : 0;
}

/* The sample_id_all trailer at the end of a non-sample record: its length (0 when the
 * event has none), the time and (when pid_tid is not NULL) pid and tid in it. With
 * IDENTIFIER the last u64 names the event. */
static int parse_trailer(const struct perfdata *pd, const uint8_t *p, uint16_t size, uint16_t *len,
                         uint64_t *time, uint32_t *pid_tid)
{
	int ev = 0;
	if (pd->nev > 1 && pd->id_slot < 0 && pd->id_all[0])
		ev = size >= 16 ? perfdata_event_of_id(pd, u64_at(p + size - 8)) : -1;
	if (ev < 0)
		return PMUSIM_ERR_FORMAT;
	uint64_t st = pd->ev[ev].sample_type;
	*len = pd->id_all[ev] ? (uint16_t)(8 * __builtin_popcountll(st & TRAILER_BITS)) : 0;
	if (*len > size - 8)
		return PMUSIM_ERR_FORMAT;
	const uint8_t *t = p + size - *len;
	if (*len && (st & PERF_SAMPLE_TID) && pid_tid)
		memcpy(pid_tid, t, 8);
	if (st & PERF_SAMPLE_TID)
		t += 8;
	*time = *len && (st & PERF_SAMPLE_TIME) ? u64_at(t) : 0; /* no trailer: no time */
	return 0;
}

/* COMM (pid, tid, name), MMAP (pid, tid, addr, len, pgoff, name) and MMAP2 (the same
 * with device, inode, prot and flags before the name); names end with a NUL. */
static int parse_task_record(const struct perfdata *pd, const uint8_t *p, uint16_t size,
                             struct perf_record *rec)
{
	uint16_t tlen;
	if (parse_trailer(pd, p, size, &tlen, &rec->time, NULL))
		return PMUSIM_ERR_FORMAT;
	uint16_t fixed = rec->type == PERF_RECORD_COMM   ? 16
	                 : rec->type == PERF_RECORD_MMAP ? 40
	                                                 : 72;
	if (size - tlen <= fixed || !memchr(p + fixed, 0, (size_t)(size - tlen - fixed)))
		return PMUSIM_ERR_FORMAT;
	const char *name = (const char *)p + fixed;
	uint32_t pid, tid;
	memcpy(&pid, p + 8, 4);
	memcpy(&tid, p + 12, 4);
	if (rec->type == PERF_RECORD_COMM) {
		rec->u.comm.pid = pid, rec->u.comm.tid = tid, rec->u.comm.comm = name;
		return 0;
	}
	rec->u.mmap.pid = pid, rec->u.mmap.tid = tid, rec->u.mmap.filename = name;
	rec->u.mmap.addr = u64_at(p + 16);
	rec->u.mmap.len = u64_at(p + 24);
	rec->u.mmap.pgoff = u64_at(p + 32);
	if (rec->type == PERF_RECORD_MMAP2) {
		memcpy(&rec->u.mmap.prot, p + 64, 4);
		memcpy(&rec->u.mmap.flags, p + 68, 4);
	}
	return 0;
}

/* TEXT_POKE: addr, old_len, new_len, the old bytes then the new ones. */
static int parse_text_poke(const struct perfdata *pd, const uint8_t *p, uint16_t size,
                           struct perf_record *rec)
{
	uint16_t tlen, old_len, new_len;
	uint32_t pid_tid[2] = {0, 0};
	if (size < 20 || parse_trailer(pd, p, size, &tlen, &rec->time, pid_tid))
		return PMUSIM_ERR_FORMAT;
	memcpy(&old_len, p + 16, 2);
	memcpy(&new_len, p + 18, 2);
	if (20u + old_len + new_len > (unsigned)(size - tlen))
		return PMUSIM_ERR_FORMAT;
	rec->u.poke.pid = pid_tid[0];
	rec->u.poke.tid = pid_tid[1];
	rec->u.poke.addr = u64_at(p + 8);
	rec->u.poke.bytes = p + 20 + old_len;
	rec->u.poke.len = new_len;
	return 0;
}

int perfdata_record_size(const struct perfdata *pd, uint64_t off, uint16_t *size)
{
	*size = 0;
	if (off > pd->data_end || pd->data_end - off < 8)
		return PMUSIM_ERR_FORMAT;
	memcpy(size, pd->map + off + 6, 2);
	return *size < 8 || *size > pd->data_end - off ? PMUSIM_ERR_FORMAT : 0;
}

int perfdata_record_carried(uint32_t type)
{
	return type == PERF_RECORD_SAMPLE || type == PERF_RECORD_COMM || type == PERF_RECORD_MMAP ||
	       type == PERF_RECORD_MMAP2 || type == PERF_RECORD_FORK || type == PERF_RECORD_EXIT ||
	       type == PERF_RECORD_TEXT_POKE;
}

int perfdata_record_time(const struct perfdata *pd, uint64_t off, uint16_t size, uint64_t *time)
{
	const uint8_t *p = pd->map + off;
	uint32_t type;
	memcpy(&type, p, 4);
	*time = 0;
	if (type != PERF_RECORD_SAMPLE) {
		uint16_t tlen;
		return parse_trailer(pd, p, size, &tlen, time, NULL);
	}
	int ev = sample_event(pd, p, size);
	if (ev < 0)
		return PMUSIM_ERR_FORMAT;
	uint64_t st = pd->ev[ev].sample_type;
	if (!(st & PERF_SAMPLE_TIME))
		return 0;
	/* IDENTIFIER, IP and TID come before TIME (perf_event.h field order) */
	uint64_t at = 8 + 8 * (uint64_t)(!!(st & PERF_SAMPLE_IDENTIFIER) + !!(st & PERF_SAMPLE_IP) +
	                                 !!(st & PERF_SAMPLE_TID));
	if (at + 8 > size)
		return PMUSIM_ERR_FORMAT;
	*time = u64_at(p + at);
	return 0;
}

/* The record at off where its u64 fields can be read in place: perf writes every record
 * size as a multiple of 8, but a crafted file need not, and the sample's pointers
 * (callchain, registers) are u64 arrays. NULL when memory ran out. */
static const uint8_t *record_aligned(struct perfdata *pd, uint64_t off, uint16_t size)
{
	const uint8_t *p = pd->map + off;
	if (((uintptr_t)p & 7) == 0)
		return p;
	size_t n = ((size_t)size + 7) / 8;
	if (n > pd->copycap) {
		uint64_t *c = realloc(pd->copy, n * 8);
		if (!c)
			return NULL;
		pd->copy = c, pd->copycap = n;
	}
	memcpy(pd->copy, p, size);
	return (const uint8_t *)pd->copy;
}

int perfdata_record_at(struct perfdata *pd, uint64_t off, uint16_t size, struct perf_record *rec)
{
	memset(rec, 0, sizeof(*rec));
	const uint8_t *p = record_aligned(pd, off, size);
	if (!p)
		return PMUSIM_ERR_NOMEM;
	memcpy(&rec->type, p, 4);
	memcpy(&rec->misc, p + 4, 2);
	rec->offset = off;
	if (rec->type == PERF_RECORD_SAMPLE) {
		int rc = parse_sample(pd, p, size, &rec->u.sample);
		rec->time = rec->u.sample.time;
		return rc;
	}
	if (rec->type == PERF_RECORD_COMM || rec->type == PERF_RECORD_MMAP ||
	    rec->type == PERF_RECORD_MMAP2)
		return parse_task_record(pd, p, size, rec);
	if (rec->type == PERF_RECORD_FORK || rec->type == PERF_RECORD_EXIT) {
		/* pid, ppid, tid, ptid, time (perf_event.h) */
		uint16_t tlen;
		if (size < 32 || parse_trailer(pd, p, size, &tlen, &rec->time, NULL))
			return PMUSIM_ERR_FORMAT;
		memcpy(&rec->u.task, p + 8, 16);
		rec->time = u64_at(p + 24);
		return 0;
	}
	if (rec->type == PERF_RECORD_TEXT_POKE)
		return parse_text_poke(pd, p, size, rec);
	return PMUSIM_ERR_ARG; /* not a type the interface carries */
}
