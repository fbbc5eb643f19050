/* perf.data reader (profiler/perfdata.h): maps the file, checks every offset and size
 * against its length, and reads the header, the attrs with their ids and the features;
 * perfdata_records.c decodes the records. Layouts:
 * tools/perf/Documentation/perf.data-file-format.txt, include/uapi/linux/perf_event.h
 * (perf_event_attr) and tools/perf/util/header.c (feature bodies: EVENT_DESC, BUILD_ID). */
#include "common/arrays.h"
#include "profiler/perfdata.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/infile.h"
#include "profiler/perfdata_read_internal.h"

#define HEADER_SIZE 104u     /* struct perf_file_header with the feature bitmap */
#define HEADER_SIZE_OLD 72u  /* the same without it (no features) */
#define HEADER_SIZE_PIPE 16u /* perf_pipe_file_header: records follow, no sections */
#define ATTR_SIZE_VER0 64u   /* the first published perf_event_attr */
#define ATTR_SIZE_LIMIT 4096u
#define FEAT_BUILD_ID 2
#define FEAT_HOSTNAME 3
#define FEAT_VERSION 5
#define FEAT_EVENT_DESC 12
#define FEAT_PMU_MAPPINGS 16
#define FEAT_COMPRESSED 27 /* records are zstd frames (perf record -z) */
#define FEAT_BITS 256
#define BUILD_ID_HDR 36u /* perf_record_header_build_id without the name */
#define MISC_BUILD_ID_SIZE (1u << 15)
#define ATTR_SAMPLE_ID_ALL (1ull << 18)

static int in_file(const struct perfdata *pd, uint64_t off, uint64_t size)
{
	return off <= pd->len && size <= pd->len - off;
}

static int cmp_id(const void *a, const void *b)
{
	const struct idmap *x = a, *y = b;
	return x->id < y->id ? -1 : x->id > y->id;
}

int perfdata_event_of_id(const struct perfdata *pd, uint64_t id)
{
	struct idmap key = {id, 0};
	const struct idmap *m =
	    pd->nids ? arrays_find(&key, pd->ids, pd->nids, sizeof(key), cmp_id) : NULL;
	if (m)
		return (int)m->ev;
	return pd->nev == 1 && id == 0 ? 0 : -1;
}

/* One perf_event_attr and the section of its ids (attr.size + 16 == attr_size). */
static int parse_attr(struct perfdata *pd, size_t i, const uint8_t *a, uint64_t attr_size,
                      char *msg, size_t msglen)
{
	uint32_t size;
	memcpy(&size, a + 4, 4);
	if (size == 0)
		size = ATTR_SIZE_VER0;
	if (size < ATTR_SIZE_VER0 || (uint64_t)size + 16 != attr_size)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                   "perf.data: attr %zu has size %u in %llu-byte slots", i, size,
		                   (unsigned long long)attr_size);
	struct perfdata_event *ev = &pd->ev[i];
	uint64_t flags = u64_at(a + 40);
	memcpy(&ev->type, a, 4);
	ev->config = u64_at(a + 8);
	ev->sample_period = u64_at(a + 16);
	ev->freq = (uint8_t)(flags >> 10 & 1);
	ev->sample_type = u64_at(a + 24);
	pd->read_format[i] = u64_at(a + 32);
	ev->precise_ip = (uint8_t)(flags >> 15 & 3);
	pd->id_all[i] = (flags & ATTR_SAMPLE_ID_ALL) != 0;
	ev->branch_sample_type = size >= 80 ? u64_at(a + 72) : 0;
	ev->sample_regs_user = size >= 96 ? u64_at(a + 80) : 0;
	if (size >= 96)
		memcpy(&ev->sample_stack_user, a + 88, 4);
	uint64_t ids_off = u64_at(a + size), ids_size = u64_at(a + size + 8);
	if (ids_size % 8 || !in_file(pd, ids_off, ids_size))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                   "perf.data: ids of attr %zu lie outside the file", i);
	size_t n = (size_t)(ids_size / 8);
	struct idmap *ids = realloc(pd->ids, (pd->nids + n + 1) * sizeof(*ids));
	if (!ids)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "perf.data: out of memory");
	pd->ids = ids;
	for (size_t j = 0; j < n; j++)
		pd->ids[pd->nids++] = (struct idmap){u64_at(pd->map + ids_off + 8 * j), i};
	ev->id = n ? u64_at(pd->map + ids_off) : 0;
	return 0;
}

/* With several events a sample names its event by IDENTIFIER (first u64) or by ID
 * at one position shared by all events, as perf requires (evlist__valid_sample_type). */
static int check_id_position(struct perfdata *pd, char *msg, size_t msglen)
{
	const uint64_t before_id =
	    PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_ADDR;
	int slot = -2;
	for (size_t i = 0; i < pd->nev && pd->nev > 1; i++) {
		uint64_t st = pd->ev[i].sample_type;
		int s = st & PERF_SAMPLE_IDENTIFIER ? -1
		        : st & PERF_SAMPLE_ID       ? __builtin_popcountll(st & before_id)
		                                    : -3;
		if (s == -3 || (slot != -2 && s != slot) || pd->id_all[i] != pd->id_all[0])
			return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
			                   "perf.data: %zu events without a common sample id",
			                   pd->nev);
		slot = s;
	}
	pd->id_slot = slot;
	arrays_sort(pd->ids, pd->nids, sizeof(*pd->ids), cmp_id);
	for (size_t i = 1; i < pd->nids; i++)
		if (pd->ids[i].id == pd->ids[i - 1].id)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
			                   "perf.data: sample id %llu appears twice",
			                   (unsigned long long)pd->ids[i].id);
	return 0;
}

static int parse_header(struct perfdata *pd, uint64_t *feat_map, char *msg, size_t msglen)
{
	const uint8_t *h = pd->map;
	if (pd->len < HEADER_SIZE_OLD)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT, "perf.data: file too short");
	if (memcmp(h, "PERFILE2", 8) != 0) {
		int other = memcmp(h, "2ELIFREP", 8) == 0 || memcmp(h, "PERFFILE", 8) == 0;
		return pmusim_fail(msg, msglen, other ? PMUSIM_ERR_UNSUPPORTED : PMUSIM_ERR_FORMAT,
		                   "perf.data: %s",
		                   other ? "big-endian or pre-2010 perf.data"
		                         : "not a perf.data file (bad magic)");
	}
	uint64_t hsize = u64_at(h + 8), attr_size = u64_at(h + 16);
	uint64_t attrs_off = u64_at(h + 24), attrs_size = u64_at(h + 32);
	pd->data_off = u64_at(h + 40);
	uint64_t data_size = u64_at(h + 48);
	if (hsize == HEADER_SIZE_PIPE)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_UNSUPPORTED,
		                   "perf.data: pipe-mode file (perf record -o -)");
	if ((hsize != HEADER_SIZE && hsize != HEADER_SIZE_OLD) || pd->len < hsize)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT, "perf.data: bad header size");
	if (hsize == HEADER_SIZE)
		memcpy(feat_map, h + 72, FEAT_BITS / 8);
	if (attr_size < ATTR_SIZE_VER0 + 16 || attr_size > ATTR_SIZE_LIMIT || attrs_size == 0 ||
	    attrs_size % attr_size || !in_file(pd, attrs_off, attrs_size))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT, "perf.data: bad attr section");
	if (!in_file(pd, pd->data_off, data_size))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                   "perf.data: data section ends past the end of the file");
	pd->data_end = pd->data_off + data_size;
	pd->pos = pd->data_off;
	pd->nev = (size_t)(attrs_size / attr_size);
	pd->ev = calloc(pd->nev, sizeof(*pd->ev));
	pd->read_format = calloc(pd->nev, sizeof(*pd->read_format));
	pd->id_all = calloc(pd->nev, 1);
	if (!pd->ev || !pd->read_format || !pd->id_all)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "perf.data: out of memory");
	for (size_t i = 0; i < pd->nev; i++) {
		int rc = parse_attr(pd, i, h + attrs_off + i * attr_size, attr_size, msg, msglen);
		if (rc)
			return rc;
	}
	return check_id_position(pd, msg, msglen);
}

/* header.c do_read_string: u32 length, then that many bytes holding a NUL. */
static const char *get_string(struct cur *c)
{
	uint32_t n = get_u32(c);
	const uint8_t *s = take(c, n);
	if (!s || !memchr(s, 0, n)) {
		c->bad = 1;
		return NULL;
	}
	return (const char *)s;
}

/* EVENT_DESC: u32 nr, u32 attr size, then per event attr, u32 nr_ids, name, ids.
 * A name goes to the event of its first id, or by position when it has none. */
static int parse_event_desc(struct perfdata *pd, const uint8_t *p, uint64_t size)
{
	struct cur c = {p, p + size, 0};
	uint32_t nr = get_u32(&c), asz = get_u32(&c);
	if (asz < ATTR_SIZE_VER0 || asz > ATTR_SIZE_LIMIT)
		return PMUSIM_ERR_FORMAT;
	for (uint32_t i = 0; i < nr && !c.bad; i++) {
		take(&c, asz);
		uint32_t nids = get_u32(&c);
		const char *name = get_string(&c);
		const uint8_t *ids = take(&c, (uint64_t)nids * 8);
		if (c.bad)
			break;
		int ev = nids ? perfdata_event_of_id(pd, u64_at(ids)) : i < pd->nev ? (int)i : -1;
		if (ev >= 0 && !pd->ev[ev].name)
			pd->ev[ev].name = name;
	}
	return c.bad ? PMUSIM_ERR_FORMAT : 0;
}

/* BUILD_ID: perf_record_header_build_id records; header.size covers the padded name. */
static int parse_build_ids(struct perfdata *pd, const uint8_t *p, uint64_t size)
{
	uint64_t at = 0;
	while (at < size) {
		uint16_t misc, rsize;
		if (size - at < BUILD_ID_HDR)
			return PMUSIM_ERR_FORMAT;
		memcpy(&misc, p + at + 4, 2);
		memcpy(&rsize, p + at + 6, 2);
		const uint8_t *name = p + at + BUILD_ID_HDR;
		if (rsize <= BUILD_ID_HDR || rsize > size - at ||
		    !memchr(name, 0, rsize - BUILD_ID_HDR))
			return PMUSIM_ERR_FORMAT;
		size_t idlen = misc & MISC_BUILD_ID_SIZE ? p[at + 12 + 20] : 20;
		if (idlen > 20)
			return PMUSIM_ERR_FORMAT;
		struct build_id *b = realloc(pd->bids, (pd->nbids + 1) * sizeof(*b));
		if (!b)
			return PMUSIM_ERR_NOMEM;
		pd->bids = b;
		pd->bids[pd->nbids++] = (struct build_id){p + at + 12, idlen, (const char *)name};
		at += rsize;
	}
	return 0;
}

/* PMU_MAPPINGS: u32 nr, then per PMU u32 type and a header string (header.c
 * write_pmu_mappings). Events of dynamic types get their PMU's name. */
static int parse_pmu_mappings(struct perfdata *pd, const uint8_t *p, uint64_t size)
{
	struct cur c = {p, p + size, 0};
	uint32_t nr = get_u32(&c);
	if (c.bad || nr > size / 8)
		return PMUSIM_ERR_FORMAT;
	free(pd->pmus);
	pd->npmus = 0;
	pd->pmus = calloc(nr ? nr : 1, sizeof(*pd->pmus));
	if (!pd->pmus)
		return PMUSIM_ERR_NOMEM;
	for (uint32_t i = 0; i < nr && !c.bad; i++) {
		uint32_t type = get_u32(&c);
		const char *name = get_string(&c);
		if (name)
			pd->pmus[pd->npmus++] = (struct pmu_name){type, name};
	}
	if (c.bad)
		return PMUSIM_ERR_FORMAT;
	for (size_t i = 0; i < pd->nev; i++)
		if (pd->ev[i].type >= PERF_TYPE_MAX)
			pd->ev[i].pmu = perfdata_pmu_name(pd, pd->ev[i].type);
	return 0;
}

/* The table of perf_file_section after the data, one per set feature bit. */
static int parse_features(struct perfdata *pd, const uint64_t *feat_map, char *msg, size_t msglen)
{
	uint64_t table = pd->data_end;
	for (int f = 0; f < FEAT_BITS; f++) {
		if (!(feat_map[f / 64] >> (f % 64) & 1))
			continue;
		if (!in_file(pd, table, 16))
			return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
			                   "perf.data: feature table past the end of the file");
		uint64_t off = u64_at(pd->map + table), size = u64_at(pd->map + table + 8);
		table += 16;
		if (!in_file(pd, off, size))
			return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
			                   "perf.data: feature %d lies outside the file", f);
		if (f == FEAT_COMPRESSED)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_UNSUPPORTED,
			                   "perf.data: compressed records (perf record -z)");
		int rc = 0;
		if (f == FEAT_HOSTNAME || f == FEAT_VERSION) {
			struct cur c = {pd->map + off, pd->map + off + size, 0};
			const char *str = get_string(&c);
			if (!str)
				return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT, "perf.data: feature %d is corrupt", f);
			*(f == FEAT_HOSTNAME ? &pd->hostname : &pd->version) = str;
		} else if (f == FEAT_EVENT_DESC)
			rc = parse_event_desc(pd, pd->map + off, size);
		else if (f == FEAT_BUILD_ID)
			rc = parse_build_ids(pd, pd->map + off, size);
		else if (f == FEAT_PMU_MAPPINGS)
			rc = parse_pmu_mappings(pd, pd->map + off, size);
		if (rc)
			return pmusim_fail(msg, msglen, rc, "perf.data: %s feature is corrupt",
			                   f == FEAT_BUILD_ID ? "BUILD_ID"
			                   : f == FEAT_PMU_MAPPINGS ? "PMU_MAPPINGS" : "EVENT_DESC");
	}
	return 0;
}

/* The whole file in memory: mapped, or under AddressSanitizer read into the heap so
 * that any read past its end is reported (gcc says ASan with __SANITIZE_ADDRESS__,
 * clang with __has_feature). NULL with errno set on failure. */
#if defined(__SANITIZE_ADDRESS__)
#define PERFDATA_LOAD_HEAP 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PERFDATA_LOAD_HEAP 1
#endif
#endif
#if defined(PERFDATA_LOAD_HEAP)
static const uint8_t *load(int fd, size_t len)
{
	uint8_t *p = malloc(len);
	for (size_t got = 0; p && got < len;) {
		ssize_t n = pread(fd, p + got, len - got, (off_t)got);
		if (n <= 0) {
			errno = n ? errno : EIO;
			free(p);
			return NULL;
		}
		got += (size_t)n;
	}
	return p;
}

static void unload(const uint8_t *p, size_t len)
{
	(void)len;
	free((void *)p);
}
#else
static const uint8_t *load(int fd, size_t len)
{
	void *p = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
	return p == MAP_FAILED ? NULL : p;
}

static void unload(const uint8_t *p, size_t len)
{
	munmap((void *)p, len);
}
#endif

/* The parsers name the format ("perf.data: ..."); a user with several files
 * wants the one at fault named instead. */
static void name_the_file(char *msg, size_t msglen, const char *path)
{
	static const char prefix[] = "perf.data: ";
	if (!msg || !msglen || strncmp(msg, prefix, sizeof(prefix) - 1) != 0)
		return;
	char rest[512];
	snprintf(rest, sizeof(rest), "%s", msg + sizeof(prefix) - 1);
	snprintf(msg, msglen, "%s: %s", path, rest);
}

int perfdata_open(const char *path, struct perfdata **out, char *msg, size_t msglen)
{
	*out = NULL;
	const char *why;
	int fd = infile_open(path, &why);
	struct stat sb;
	if (fd < 0 || fstat(fd, &sb) != 0) {
		if (fd >= 0)
			why = strerror(errno), close(fd);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_IO, "perf.data: cannot read %s: %s", path, why);
	}
	struct perfdata *pd = calloc(1, sizeof(*pd));
	if ((uint64_t)sb.st_size < HEADER_SIZE_OLD || !pd) {
		close(fd);
		free(pd);
		return pd ? pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                        "perf.data: %s is too short", path)
		          : pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "perf.data: out of memory");
	}
	pd->len = (size_t)sb.st_size;
	pd->map = load(fd, pd->len);
	int e = errno;
	close(fd);
	if (!pd->map) {
		free(pd);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_IO, "perf.data: cannot read %s: %s",
		                   path, strerror(e));
	}
	uint64_t feat_map[FEAT_BITS / 64] = {0};
	int rc = parse_header(pd, feat_map, msg, msglen);
	if (!rc)
		rc = parse_features(pd, feat_map, msg, msglen);
	if (rc) {
		perfdata_close(pd);
		name_the_file(msg, msglen, path);
		return rc;
	}
	*out = pd;
	return 0;
}

void perfdata_close(struct perfdata *pd)
{
	if (!pd)
		return;
	unload(pd->map, pd->len);
	free(pd->ev);
	free(pd->read_format);
	free(pd->id_all);
	free(pd->ids);
	free(pd->br);
	free(pd->copy);
	free(pd->bids);
	free(pd->pmus);
	free(pd->queue);
	free(pd);
}

size_t perfdata_nevents(const struct perfdata *pd)
{
	return pd->nev;
}

const struct perfdata_event *perfdata_event(const struct perfdata *pd, size_t i)
{
	return i < pd->nev ? &pd->ev[i] : NULL;
}

size_t perfdata_nbuild_ids(const struct perfdata *pd)
{
	return pd->nbids;
}

int perfdata_build_id(const struct perfdata *pd, size_t i, const uint8_t **id, size_t *idlen,
                      const char **filename)
{
	if (i >= pd->nbids)
		return PMUSIM_ERR_ARG;
	*id = pd->bids[i].id;
	*idlen = pd->bids[i].len;
	*filename = pd->bids[i].file;
	return 0;
}

const char *perfdata_pmu_name(const struct perfdata *pd, uint32_t type)
{
	for (size_t i = 0; i < pd->npmus; i++)
		if (pd->pmus[i].type == type)
			return pd->pmus[i].name;
	return NULL;
}

const char *perfdata_hostname(const struct perfdata *pd)
{
	return pd->hostname;
}

const char *perfdata_version(const struct perfdata *pd)
{
	return pd->version;
}
