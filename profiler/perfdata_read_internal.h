/* Private state of the perf.data reader, shared by perfdata_read.c (file, header,
 * attrs, features) and perfdata_records.c (the records of the data section), and a
 * bounded cursor over the mapped file. Not for other modules: use profiler/perfdata.h. */
#ifndef PMUSIM_PROFILER_PERFDATA_READ_INTERNAL_H
#define PMUSIM_PROFILER_PERFDATA_READ_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "profiler/perfdata.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "the reader decodes little-endian perf.data in place"
/* The records of the data section (perfdata_records.c). The size of the record at
 * off (0, or PMUSIM_ERR_FORMAT when it is below 8 or runs past the data section). */
int perfdata_record_size(const struct perfdata *pd, uint64_t off, uint16_t *size);
/* 1 when perfdata_next hands records of this type out. */
int perfdata_record_carried(uint32_t type);
/* The time perf orders a carried record by (evsel__parse_sample_timestamp): a
 * sample's TIME, another record's sample_id_all trailer time (for FORK and EXIT too,
 * not the body's), 0 when it has none. 0 or PMUSIM_ERR_FORMAT (unknown event). */
int perfdata_record_time(const struct perfdata *pd, uint64_t off, uint16_t size, uint64_t *time);
/* Decodes the carried record at off of the given size: 0, or a negative pmusim_err.
 * Pointers into the file stay valid while pd is open; the branch stack lives in pd
 * until the next decode. */
int perfdata_record_at(struct perfdata *pd, uint64_t off, uint16_t size, struct perf_record *rec);

#endif

struct idmap {
	uint64_t id;
	size_t ev;
};

struct pmu_name {
	uint32_t type;
	const char *name; /* in the mapped file */
};

struct build_id {
	const uint8_t *id;
	size_t len;
	const char *file;
};

/* A record waiting in the time-order queue (perfdata_order.c). */
struct order_entry {
	uint64_t time, off;
};

struct perfdata {
	const uint8_t *map;
	size_t len;
	struct perfdata_event *ev;
	uint64_t *read_format;
	uint8_t *id_all; /* sample_id_all of each event */
	size_t nev;
	struct idmap *ids;
	size_t nids;
	int id_slot; /* several events: u64 index of the sample's id (-1: IDENTIFIER) */
	uint64_t data_off, data_end, pos;
	struct perf_branch *br;
	size_t brcap;
	uint64_t *copy; /* a record whose place in the file is not 8-aligned, copied */
	size_t copycap; /* in u64s */
	struct build_id *bids;
	size_t nbids;
	const char *hostname, *version; /* HOSTNAME and VERSION features, or NULL */
	struct pmu_name *pmus;          /* PMU_MAPPINGS feature */
	size_t npmus;
	/* perfdata_order.c: records read but not yet handed out, and perf's flush state */
	struct order_entry *queue;
	size_t nqueue, queue_cap;
	size_t ready, next_ready; /* queue[next_ready..ready) are flushed, sorted, due */
	uint64_t flush_limit;     /* ordered_events next_flush */
	uint64_t queue_max;       /* ordered_events max_timestamp */
};

/* A bounded cursor: reading past end sets bad and yields zeros. */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static inline const uint8_t *take(struct cur *c, uint64_t n)
{
	if (c->bad || n > (uint64_t)(c->end - c->p)) {
		c->bad = 1;
		c->p = c->end;
		return NULL;
	}
	const uint8_t *p = c->p;
	c->p += n;
	return p;
}

static inline uint64_t get_u64(struct cur *c)
{
	uint64_t v = 0;
	const uint8_t *p = take(c, 8);
	if (p)
		memcpy(&v, p, 8);
	return v;
}

static inline uint32_t get_u32(struct cur *c)
{
	uint32_t v = 0;
	const uint8_t *p = take(c, 4);
	if (p)
		memcpy(&v, p, 4);
	return v;
}

static inline uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

/* The records of the data section (perfdata_records.c). The size of the record at
 * off (0, or PMUSIM_ERR_FORMAT when it is below 8 or runs past the data section). */
int perfdata_record_size(const struct perfdata *pd, uint64_t off, uint16_t *size);
/* 1 when perfdata_next hands records of this type out. */
int perfdata_record_carried(uint32_t type);
/* The time perf orders a carried record by (evsel__parse_sample_timestamp): a
 * sample's TIME, another record's sample_id_all trailer time (for FORK and EXIT too,
 * not the body's), 0 when it has none. 0 or PMUSIM_ERR_FORMAT (unknown event). */
int perfdata_record_time(const struct perfdata *pd, uint64_t off, uint16_t size, uint64_t *time);
/* Decodes the carried record at off of the given size: 0, or a negative pmusim_err.
 * Pointers into the file stay valid while pd is open; the branch stack lives in pd
 * until the next decode. */
int perfdata_record_at(struct perfdata *pd, uint64_t off, uint16_t size, struct perf_record *rec);

#endif
