/* perf.data writer (profiler/perfdata.h): header placeholder, attrs and their ids, and
 * a data section streamed through stdio; perfdata_finish.c adds the feature sections and
 * the final header. Layouts: tools/perf/Documentation/perf.data-file-format.txt, structs
 * from include/uapi/linux/perf_event.h, feature bodies as tools/perf/util/header.c writes them. */
#include "profiler/perfdata.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/outfile.h"
#include "profiler/perfdata_write_internal.h"

#define NAME_ALIGN 64u      /* header.c: feature strings are padded to this */
#define MAX_RECORD 65535u   /* perf_event_header.size is a u16 */
#define ROUND_SAMPLES 1000u /* a FINISHED_ROUND after this many samples */

/* perf_event_attr flag bits (the bitfield word at offset 40) */
#define ATTR_DISABLED (1ull << 0)
#define ATTR_INHERIT (1ull << 1) /* children and threads are followed, as perf record does by default */
#define ATTR_EXCLUDE_KERNEL (1ull << 5)
#define ATTR_EXCLUDE_HV (1ull << 6)
#define ATTR_MMAP (1ull << 8)
#define ATTR_COMM (1ull << 9)
#define ATTR_FREQ (1ull << 10)
#define ATTR_ENABLE_ON_EXEC (1ull << 12)
#define ATTR_TASK (1ull << 13)
#define ATTR_PRECISE_SHIFT 15
#define ATTR_SAMPLE_ID_ALL (1ull << 18)
#define ATTR_EXCLUDE_GUEST (1ull << 20)
#define ATTR_MMAP2 (1ull << 23)
#define ATTR_COMM_EXEC (1ull << 24)

#define MISC_BUILD_ID_SIZE (1u << 15) /* PERF_RECORD_MISC_BUILD_ID_SIZE */
#define HOST_KERNEL_ID (-1)           /* pid of host build ids (machine.h) */
#define BUILD_ID_MAX 20u

#define WRITABLE_SAMPLE                                                                            \
	(PERF_SAMPLE_IDENTIFIER | PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |            \
	 PERF_SAMPLE_ADDR | PERF_SAMPLE_ID | PERF_SAMPLE_STREAM_ID | PERF_SAMPLE_CPU |             \
	 PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_RAW | PERF_SAMPLE_BRANCH_STACK |      \
	 PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER)
/* Largest branch stack whose sample still fits a record: header, nine u64 fields, nr. */
#define MAX_BRANCHES ((MAX_RECORD - 8u - 9u * 8u - 8u) / 24u)

/* header.c do_write_string (perfdata_write_internal.h) */
void perfdata_put_string(struct bbuf *b, const char *s)
{
	size_t n = strlen(s) + 1, padded = (n + NAME_ALIGN - 1) / NAME_ALIGN * NAME_ALIGN;
	put_u32(b, (uint32_t)padded);
	put(b, s, n);
	put(b, NULL, padded - n);
}

/* A NUL-terminated name in a record, padded to 8 bytes (as the kernel pads comm). */
static void put_name8(struct bbuf *b, const char *s, size_t n)
{
	put(b, s, n);
	put(b, NULL, (8 - n % 8) % 8);
}

/* struct perf_event_attr, ATTR_SIZE bytes, as `perf record` of a user program sets it. */
static void put_attr(struct bbuf *b, const struct perfdata_event *ev)
{
	size_t start = b->len;
	uint64_t flags = ATTR_DISABLED | ATTR_INHERIT | ATTR_EXCLUDE_KERNEL | ATTR_EXCLUDE_HV | ATTR_MMAP |
	                 ATTR_COMM | ATTR_ENABLE_ON_EXEC | ATTR_TASK | ATTR_SAMPLE_ID_ALL |
	                 ATTR_EXCLUDE_GUEST | ATTR_MMAP2 | ATTR_COMM_EXEC | (ev->freq ? ATTR_FREQ : 0) |
	                 (uint64_t)(ev->precise_ip & 3) << ATTR_PRECISE_SHIFT;
	put_u32(b, ev->type);
	put_u32(b, ATTR_SIZE);
	put_u64(b, ev->config);
	put_u64(b, ev->sample_period);
	put_u64(b, ev->sample_type);
	put_u64(b, 0); /* read_format */
	put_u64(b, flags);
	put_u32(b, 0); /* wakeup_events */
	put_u32(b, 0); /* bp_type */
	put_u64(b, 0); /* config1 */
	put_u64(b, 0); /* config2 */
	put_u64(b, ev->branch_sample_type);
	put_u64(b, ev->sample_regs_user);
	put_u32(b, ev->sample_stack_user);
	put(b, NULL, ATTR_SIZE - (b->len - start));
}

/* Hands bytes to stdio; the first failure makes the writer cut back at close. */
static int emit(struct perfdata_writer *w, const void *p, size_t n)
{
	if (w->failed)
		return PMUSIM_ERR_IO;
	if (fwrite(p, 1, n, w->out.f) != n) {
		w->failed = 1;
		return PMUSIM_ERR_IO;
	}
	w->pos += n;
	return 0;
}

static void rec_begin(struct perfdata_writer *w, uint32_t type, uint16_t misc)
{
	w->rec.len = 0;
	put_u32(&w->rec, type);
	put_u16(&w->rec, misc);
	put_u16(&w->rec, 0); /* size, set by rec_end */
}

static int rec_end(struct perfdata_writer *w)
{
	if (w->rec.nomem)
		return PMUSIM_ERR_NOMEM;
	if (w->rec.len > MAX_RECORD)
		return PMUSIM_ERR_ARG;
	uint16_t size = (uint16_t)w->rec.len;
	memcpy(w->rec.p + 6, &size, 2);
	return emit(w, w->rec.p, w->rec.len);
}

/* The sample_id_all trailer of a non-sample record, for the first event. */
static void put_trailer(struct perfdata_writer *w, uint32_t pid, uint32_t tid, uint64_t time)
{
	uint64_t st = w->sample_type, id = w->ids[0];
	if (st & PERF_SAMPLE_TID)
		put_u32(&w->rec, pid), put_u32(&w->rec, tid);
	if (st & PERF_SAMPLE_TIME)
		put_u64(&w->rec, time);
	if (st & PERF_SAMPLE_ID)
		put_u64(&w->rec, id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put_u64(&w->rec, id);
	if (st & PERF_SAMPLE_CPU)
		put_u64(&w->rec, 0);
	if (st & PERF_SAMPLE_IDENTIFIER)
		put_u64(&w->rec, id);
}

static void build_info_features(struct perfdata_writer *w, const struct perfdata_info *info)
{
	const char *str[NFEAT] = {0};
	str[FEAT_HOSTNAME] = info->hostname;
	str[FEAT_OSRELEASE] = info->os_release;
	str[FEAT_VERSION] = info->version;
	str[FEAT_ARCH] = info->arch;
	str[FEAT_CPUDESC] = info->cpudesc;
	str[FEAT_CPUID] = info->cpuid;
	for (int f = 0; f < NFEAT; f++) {
		if (str[f]) {
			perfdata_put_string(&w->feat[f], str[f]);
			w->featmask |= 1u << f;
		}
	}
	if (info->nr_cpus) { /* nr_cpus_avail, then nr_cpus_online */
		put_u32(&w->feat[FEAT_NRCPUS], info->nr_cpus);
		put_u32(&w->feat[FEAT_NRCPUS], info->nr_cpus);
		w->featmask |= 1u << FEAT_NRCPUS;
	}
	if (info->total_mem_kb) {
		put_u64(&w->feat[FEAT_TOTAL_MEM], info->total_mem_kb);
		w->featmask |= 1u << FEAT_TOTAL_MEM;
	}
	if (info->ncmdline) {
		put_u32(&w->feat[FEAT_CMDLINE], (uint32_t)info->ncmdline);
		for (size_t i = 0; i < info->ncmdline; i++)
			perfdata_put_string(&w->feat[FEAT_CMDLINE],
			           info->cmdline[i] ? info->cmdline[i] : "");
		w->featmask |= 1u << FEAT_CMDLINE;
	}
}

/* EVENT_DESC: u32 nr, u32 attr size, then per event the attr, u32 nr_ids, the name
 * as a header string and the ids. BRANCH_STACK is an empty marker. */
static void build_event_features(struct perfdata_writer *w, const struct perfdata_event *ev)
{
	struct bbuf *b = &w->feat[FEAT_EVENT_DESC];
	put_u32(b, (uint32_t)w->nev);
	put_u32(b, ATTR_SIZE);
	for (size_t i = 0; i < w->nev; i++) {
		put_attr(b, &ev[i]);
		put_u32(b, 1);
		perfdata_put_string(b, ev[i].name ? ev[i].name : "");
		put_u64(b, ev[i].id);
	}
	w->featmask |= 1u << FEAT_EVENT_DESC;
	if (w->sample_type & PERF_SAMPLE_BRANCH_STACK)
		w->featmask |= 1u << FEAT_BRANCH_STACK;
}

static int check_events(const struct perfdata_event *ev, size_t nev, char *msg, size_t msglen)
{
	if (!ev || nev == 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "perf.data: no events");
	uint64_t st = ev[0].sample_type;
	if (st & ~(uint64_t)WRITABLE_SAMPLE)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_UNSUPPORTED,
		                   "perf.data: cannot write sample_type bits %#llx",
		                   (unsigned long long)(st & ~(uint64_t)WRITABLE_SAMPLE));
	if (nev > 1 && !(st & PERF_SAMPLE_IDENTIFIER))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
		                   "perf.data: several events need PERF_SAMPLE_IDENTIFIER");
	for (size_t i = 0; i < nev; i++) {
		if (ev[i].sample_type != st)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "perf.data: events differ in sample_type");
		if (ev[i].id == 0 || ev[i].precise_ip > 3)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "perf.data: event %zu: id must be >= 1, precise_ip <= 3",
			                   i);
		for (size_t j = 0; j < i; j++)
			if (ev[j].id == ev[i].id)
				return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
				                   "perf.data: events %zu and %zu share id %llu", j,
				                   i, (unsigned long long)ev[i].id);
	}
	return 0;
}

/* Header placeholder, attrs each followed by the section of its ids, the ids. */
static int write_prologue(struct perfdata_writer *w, const struct perfdata_event *ev)
{
	struct bbuf b = {0};
	uint64_t ids_off = HEADER_SIZE + w->nev * FILE_ATTR_SIZE;
	put(&b, NULL, HEADER_SIZE);
	for (size_t i = 0; i < w->nev; i++) {
		put_attr(&b, &ev[i]);
		put_u64(&b, ids_off + 8 * i);
		put_u64(&b, 8);
	}
	for (size_t i = 0; i < w->nev; i++)
		put_u64(&b, ev[i].id);
	int rc = b.nomem ? PMUSIM_ERR_NOMEM : emit(w, b.p, b.len);
	if (!rc && fflush(w->out.f) != 0) /* fail now if not even this fits */
		rc = PMUSIM_ERR_IO;
	free(b.p);
	w->data_off = w->pos;
	return rc;
}

int perfdata_writer_open(struct perfdata_writer **out, const char *path,
                         const struct perfdata_event *ev, size_t nev,
                         const struct perfdata_info *info, char *msg, size_t msglen)
{
	*out = NULL;
	if (!path || strcmp(path, "-") == 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "perf.data: needs a seekable file");
	struct outfile of;
	int rc = outfile_open(&of, path);
	if (rc)
		return pmusim_fail(msg, msglen, rc, "perf.data: cannot write %s: %s", path, strerror(errno));
	return perfdata_writer_open_file(out, &of, ev, nev, info, msg, msglen);
}

int perfdata_writer_open_file(struct perfdata_writer **out, struct outfile *of,
                              const struct perfdata_event *ev, size_t nev,
                              const struct perfdata_info *info, char *msg, size_t msglen)
{
	*out = NULL;
	if (of->f == stdout) {
		outfile_abort(of);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "perf.data: needs a seekable file");
	}
	int rc = check_events(ev, nev, msg, msglen);
	if (!rc)
		rc = perfdata_check_pmus(ev, nev, info, msg, msglen);
	if (rc) {
		outfile_abort(of);
		return rc;
	}
	struct perfdata_writer *w = calloc(1, sizeof(*w));
	if (!w || !(w->ids = calloc(nev, sizeof(*w->ids))) || !(w->iobuf = malloc(1 << 16))) {
		if (w)
			perfdata_writer_free(w);
		outfile_abort(of);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "perf.data: out of memory");
	}
	w->out = *of; /* the writer owns it now */
	memset(of, 0, sizeof(*of));
	w->nev = nev;
	w->sample_type = ev[0].sample_type;
	w->regs_mask = ev[0].sample_regs_user;
	for (size_t i = 0; i < nev; i++)
		w->ids[i] = ev[i].id;
	if (info)
		build_info_features(w, info);
	build_event_features(w, ev);
	perfdata_build_pmu_mappings(w, ev);
	setvbuf(w->out.f, w->iobuf, _IOFBF, 1 << 16);
	rc = write_prologue(w, ev);
	for (int f = 0; f < NFEAT && !rc; f++)
		if (w->feat[f].nomem)
			rc = PMUSIM_ERR_NOMEM;
	if (rc) {
		pmusim_fail(msg, msglen, rc, "perf.data: cannot write %s: %s", outfile_name(&w->out),
		            rc == PMUSIM_ERR_NOMEM ? "out of memory" : strerror(errno));
		perfdata_writer_abort(w);
		return rc;
	}
	*out = w;
	return 0;
}

static int write_comm(struct perfdata_writer *w, uint32_t pid, uint32_t tid, const char *comm,
		      uint64_t time, uint16_t misc)
{
	size_t n = strlen(comm) + 1;
	if (n > MAX_RECORD)
		return PMUSIM_ERR_ARG;
	rec_begin(w, PERF_RECORD_COMM, misc);
	put_u32(&w->rec, pid);
	put_u32(&w->rec, tid);
	put_name8(&w->rec, comm, n);
	put_trailer(w, pid, tid, time);
	return rec_end(w);
}

int perfdata_write_comm(struct perfdata_writer *w, uint32_t pid, uint32_t tid, const char *comm,
                        uint64_t time)
{
	return write_comm(w, pid, tid, comm, time, 0);
}

int perfdata_write_comm_exec(struct perfdata_writer *w, uint32_t pid, uint32_t tid,
			     const char *comm, uint64_t time)
{
	return write_comm(w, pid, tid, comm, time, PERF_RECORD_MISC_COMM_EXEC);
}

int perfdata_write_task(struct perfdata_writer *w, uint32_t type, uint32_t pid, uint32_t ppid,
			uint32_t tid, uint32_t ptid, uint64_t time)
{
	if (type != PERF_RECORD_FORK && type != PERF_RECORD_EXIT)
		return PMUSIM_ERR_ARG;
	rec_begin(w, type, 0);
	put_u32(&w->rec, pid);
	put_u32(&w->rec, ppid);
	put_u32(&w->rec, tid);
	put_u32(&w->rec, ptid);
	put_u64(&w->rec, time);
	put_trailer(w, pid, tid, time);
	return rec_end(w);
}

int perfdata_write_mmap2(struct perfdata_writer *w, uint32_t pid, uint32_t tid, uint64_t addr,
                         uint64_t len, uint64_t pgoff, uint32_t prot, uint32_t flags,
                         const char *filename, uint64_t time)
{
	size_t n = strlen(filename) + 1;
	if (n > MAX_RECORD)
		return PMUSIM_ERR_ARG;
	rec_begin(w, PERF_RECORD_MMAP2, PERF_RECORD_MISC_USER);
	put_u32(&w->rec, pid);
	put_u32(&w->rec, tid);
	put_u64(&w->rec, addr);
	put_u64(&w->rec, len);
	put_u64(&w->rec, pgoff);
	put(&w->rec, NULL, 24); /* maj, min, ino, ino_generation */
	put_u32(&w->rec, prot);
	put_u32(&w->rec, flags);
	put_name8(&w->rec, filename, n);
	put_trailer(w, pid, tid, time);
	return rec_end(w);
}

int perfdata_write_text_poke(struct perfdata_writer *w, uint32_t pid, uint32_t tid, uint64_t addr,
			     const uint8_t *bytes, size_t len, uint64_t time)
{
	if (len > UINT16_MAX || 8 + 12 + len > MAX_RECORD)
		return PMUSIM_ERR_ARG;
	rec_begin(w, PERF_RECORD_TEXT_POKE, PERF_RECORD_MISC_USER);
	put_u64(&w->rec, addr);
	put_u16(&w->rec, 0); /* old_len: the bytes were unknown before */
	put_u16(&w->rec, (uint16_t)len);
	put(&w->rec, bytes, len);
	put(&w->rec, NULL, (8 - (12 + len) % 8) % 8); /* the kernel pads bytes[] to 8 */
	put_trailer(w, pid, tid, time);
	return rec_end(w);
}

int perfdata_write_round(struct perfdata_writer *w)
{
	rec_begin(w, PERF_RECORD_FINISHED_ROUND, 0);
	int rc = rec_end(w);
	if (!rc) {
		w->ckpt[w->nckpt++ % NCHECKPOINTS] = w->pos;
		w->since_round = 0;
	}
	return rc;
}

/* perf_branch_entry flags: bit 0 mispred, bit 1 predicted, bits 4..19 cycles,
 * bits 20..23 type; in_tx, abort and the rest stay 0. */
static int put_branches(struct bbuf *b, const struct perf_branch *br, uint64_t n)
{
	put_u64(b, n);
	for (uint64_t i = 0; i < n; i++) {
		if (br[i].mispred > 1 || br[i].predicted > 1 || br[i].type > 15)
			return PMUSIM_ERR_ARG;
		put_u64(b, br[i].from);
		put_u64(b, br[i].to);
		put_u64(b, (uint64_t)br[i].mispred | (uint64_t)br[i].predicted << 1 |
		               (uint64_t)br[i].cycles << 4 | (uint64_t)br[i].type << 20);
	}
	return 0;
}

static int known_id(const struct perfdata_writer *w, uint64_t id)
{
	for (size_t i = 0; i < w->nev; i++)
		if (w->ids[i] == id)
			return 1;
	return w->nev == 1 && id == 0;
}

int perfdata_write_sample(struct perfdata_writer *w, const struct perf_sample *s)
{
	uint64_t st = w->sample_type;
	int brs = (st & PERF_SAMPLE_BRANCH_STACK) != 0;
	if (!known_id(w, s->id) || (brs && s->nbr && !s->br) || (brs && s->nbr > MAX_BRANCHES))
		return PMUSIM_ERR_ARG;
	struct bbuf *b = &w->rec;
	rec_begin(w, PERF_RECORD_SAMPLE, PERF_RECORD_MISC_USER);
	if (st & PERF_SAMPLE_IDENTIFIER)
		put_u64(b, s->id);
	if (st & PERF_SAMPLE_IP)
		put_u64(b, s->ip);
	if (st & PERF_SAMPLE_TID)
		put_u32(b, s->pid), put_u32(b, s->tid);
	if (st & PERF_SAMPLE_TIME)
		put_u64(b, s->time);
	if (st & PERF_SAMPLE_ADDR)
		put_u64(b, s->addr);
	if (st & PERF_SAMPLE_ID)
		put_u64(b, s->id);
	if (st & PERF_SAMPLE_STREAM_ID)
		put_u64(b, s->id);
	if (st & PERF_SAMPLE_CPU)
		put_u32(b, s->cpu), put_u32(b, 0);
	if (st & PERF_SAMPLE_PERIOD)
		put_u64(b, s->period);
	if (st & PERF_SAMPLE_CALLCHAIN) {
		/* u64 nr, u64 ips[nr] (perf_event.h) */
		if ((s->nchain && !s->chain) || s->nchain > PERFDATA_MAX_CHAIN)
			return PMUSIM_ERR_ARG;
		put_u64(b, s->nchain);
		for (uint64_t i = 0; i < s->nchain; i++)
			put_u64(b, s->chain[i]);
	}
	if (st & PERF_SAMPLE_RAW) {
		/* u32 size, data, zeros up to a multiple of 8 with the size (perf_event.h) */
		uint32_t padded = (uint32_t)(((4u + (uint64_t)s->raw_size + 7u) & ~7ull) - 4u);
		if (s->raw_size && !s->raw)
			return PMUSIM_ERR_ARG;
		put_u32(b, padded);
		put(b, s->raw, s->raw_size);
		put(b, NULL, padded - s->raw_size);
	}
	if (brs && put_branches(b, s->br, s->nbr))
		return PMUSIM_ERR_ARG;
	if (st & PERF_SAMPLE_REGS_USER) {
		/* u64 abi, then (abi != 0) one u64 per bit of sample_regs_user */
		put_u64(b, s->regs_abi);
		if (s->regs_abi) {
			if (!s->regs)
				return PMUSIM_ERR_ARG;
			for (int i = 0; i < __builtin_popcountll(w->regs_mask); i++)
				put_u64(b, s->regs[i]);
		}
	}
	if (st & PERF_SAMPLE_STACK_USER) {
		/* u64 size, then (size != 0) data[size] and u64 dyn_size */
		if (s->stack_size % 8 || s->stack_dyn > s->stack_size || (s->stack_dyn && !s->stack))
			return PMUSIM_ERR_ARG;
		put_u64(b, s->stack_size);
		if (s->stack_size) {
			put(b, s->stack, s->stack_dyn);
			put(b, NULL, s->stack_size - s->stack_dyn);
			put_u64(b, s->stack_dyn);
		}
	}
	int rc = rec_end(w);
	if (rc)
		return rc;
	w->nsamples++;
	if (++w->since_round >= ROUND_SAMPLES)
		rc = perfdata_write_round(w);
	return rc;
}

/* struct perf_record_header_build_id: header (type 0), pid, a 24-byte id area whose
 * byte 20 is the id's length, then the file name padded to 8; size covers it all. */
int perfdata_add_build_id(struct perfdata_writer *w, const char *filename, const uint8_t *id,
                          size_t idlen)
{
	size_t n = strlen(filename) + 1, padded = (n + 7) / 8 * 8;
	if (idlen > BUILD_ID_MAX || (idlen && !id) || 36 + padded > MAX_RECORD)
		return PMUSIM_ERR_ARG;
	struct bbuf *b = &w->feat[FEAT_BUILD_ID];
	uint8_t area[24] = {0};
	if (idlen)
		memcpy(area, id, idlen);
	area[20] = (uint8_t)idlen;
	put_u32(b, 0);
	put_u16(b, PERF_RECORD_MISC_USER | MISC_BUILD_ID_SIZE);
	put_u16(b, (uint16_t)(36 + padded));
	put_u32(b, (uint32_t)HOST_KERNEL_ID);
	put(b, area, sizeof(area));
	put(b, filename, n);
	put(b, NULL, padded - n);
	if (b->nomem)
		return PMUSIM_ERR_NOMEM;
	w->featmask |= 1u << FEAT_BUILD_ID;
	return 0;
}

uint64_t perfdata_writer_samples(const struct perfdata_writer *w)
{
	return w->nsamples;
}

uint64_t perfdata_writer_bytes(const struct perfdata_writer *w)
{
	return w->pos;
}
