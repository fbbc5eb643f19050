/* Private state of the perf.data writer, shared by perfdata_write.c (open, records) and
 * perfdata_finish.c (features, final header, cutting back, close), and the growable
 * buffer both build file contents in. Not for other modules: use profiler/perfdata.h. */
#ifndef PMUSIM_PROFILER_PERFDATA_WRITE_INTERNAL_H
#define PMUSIM_PROFILER_PERFDATA_WRITE_INTERNAL_H

#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/outfile.h"
#include "profiler/perfdata.h"

#if __BYTE_ORDER__ != __ORDER_LITTLE_ENDIAN__
#error "perf.data is written in host byte order; pmusim writes little-endian files"
#endif

#define HEADER_SIZE 104u                 /* struct perf_file_header with the 256-bit feature map */
#define ATTR_SIZE 128u                   /* PERF_ATTR_SIZE_VER7, as perf 6.1 writes */
#define FILE_ATTR_SIZE (ATTR_SIZE + 16u) /* attr, then perf_file_section of its ids */
#define NCHECKPOINTS 64u                 /* recent record boundaries kept for cutting back */

/* header.h enum perf_header_feature */
enum {
	FEAT_BUILD_ID = 2,
	FEAT_HOSTNAME = 3,
	FEAT_OSRELEASE = 4,
	FEAT_VERSION = 5,
	FEAT_ARCH = 6,
	FEAT_NRCPUS = 7,
	FEAT_CPUDESC = 8,
	FEAT_CPUID = 9,
	FEAT_TOTAL_MEM = 10,
	FEAT_CMDLINE = 11,
	FEAT_EVENT_DESC = 12,
	FEAT_BRANCH_STACK = 15,
	FEAT_PMU_MAPPINGS = 16,
	NFEAT = 17,
};

/* A growable byte buffer; a failed allocation is remembered and reported once. */
struct bbuf {
	uint8_t *p;
	size_t len, cap;
	int nomem;
};

struct perfdata_writer {
	struct outfile out;
	char *iobuf;
	uint64_t *ids; /* id of each event */
	size_t nev;
	uint64_t sample_type;
	uint64_t regs_mask;          /* sample_regs_user of the events (the same for all) */
	uint64_t data_off, pos; /* pos: file offset after the last record handed to stdio */
	uint64_t nsamples, since_round;
	uint64_t ckpt[NCHECKPOINTS]; /* record boundaries at the last rounds (a ring) */
	uint64_t nckpt;
	int failed;              /* a write failed: the file holds a prefix of the stream */
	struct bbuf rec;         /* the record being built */
	struct bbuf feat[NFEAT]; /* feature bodies, built at open (build ids: as added) */
	uint32_t featmask;
};

static inline void put(struct bbuf *b, const void *src, size_t n)
{
	if (b->nomem)
		return;
	if (b->len + n > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		while (cap < b->len + n)
			cap *= 2;
		uint8_t *p = realloc(b->p, cap);
		if (!p) {
			b->nomem = 1;
			return;
		}
		b->p = p;
		b->cap = cap;
	}
	if (src)
		memcpy(b->p + b->len, src, n);
	else
		memset(b->p + b->len, 0, n);
	b->len += n;
}

static inline void put_u64(struct bbuf *b, uint64_t v)
{
	put(b, &v, 8);
}

static inline void put_u32(struct bbuf *b, uint32_t v)
{
	put(b, &v, 4);
}

static inline void put_u16(struct bbuf *b, uint16_t v)
{
	put(b, &v, 2);
}

/* header.c do_write_string: u32 length (NUL included, padded to 64), bytes. */
void perfdata_put_string(struct bbuf *b, const char *s);

/* PMU_MAPPINGS (perfdata_pmus.c): checks the events' PMU names against their
 * types and the cpuid an ibs_op event needs (0, or a negative pmusim_err with a
 * one-line reason in msg), and builds the feature when an event names a PMU. */
int perfdata_check_pmus(const struct perfdata_event *ev, size_t nev,
			const struct perfdata_info *info, char *msg, size_t msglen);
void perfdata_build_pmu_mappings(struct perfdata_writer *w, const struct perfdata_event *ev);

/* A FINISHED_ROUND record, which also marks a record boundary for cutting back. */
int perfdata_write_round(struct perfdata_writer *w);

/* Frees the writer's memory, the stdio buffer included: only once its file is committed
 * or aborted, or was never opened. */
void perfdata_writer_free(struct perfdata_writer *w);

#endif
