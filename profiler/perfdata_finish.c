/* perf.data writer, the end of the file (profiler/perfdata.h): the feature table and
 * bodies after the data, then the final header; after a failed write, the file cut back to
 * its last complete record. Layouts: tools/perf/Documentation/perf.data-file-format.txt,
 * struct perf_file_header and perf_file_section in tools/perf/util/header.h. */
#include <stdio.h>
#include <stdio_ext.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/outfile.h"
#include "profiler/perfdata.h"
#include "profiler/perfdata_write_internal.h"

static size_t features_len(const struct perfdata_writer *w)
{
	size_t n = 0;
	for (int f = 0; f < NFEAT; f++)
		if (w->featmask & 1u << f)
			n += 16 + w->feat[f].len;
	return n;
}

/* Writes the feature table and bodies at data_end, then the final header. */
static int finish(struct perfdata_writer *w, uint64_t data_end)
{
	struct bbuf b = {0};
	uint64_t off = data_end + 16 * (uint64_t)__builtin_popcount(w->featmask);
	for (int f = 0; f < NFEAT; f++) {
		if (w->featmask & 1u << f) {
			put_u64(&b, off);
			put_u64(&b, w->feat[f].len);
			off += w->feat[f].len;
		}
	}
	for (int f = 0; f < NFEAT; f++)
		if (w->featmask & 1u << f)
			put(&b, w->feat[f].p, w->feat[f].len);
	put(&b, "PERFILE2", 8);
	put_u64(&b, HEADER_SIZE);
	put_u64(&b, FILE_ATTR_SIZE);
	put_u64(&b, HEADER_SIZE);
	put_u64(&b, w->nev * FILE_ATTR_SIZE);
	put_u64(&b, w->data_off);
	put_u64(&b, data_end - w->data_off);
	put(&b, NULL, 16); /* event_types, unused */
	put_u64(&b, w->featmask);
	put(&b, NULL, 24);
	FILE *f = w->out.f;
	size_t flen = b.len - HEADER_SIZE;
	int ok = !b.nomem && fseeko(f, (off_t)data_end, SEEK_SET) == 0 &&
	         fwrite(b.p, 1, flen, f) == flen && fflush(f) == 0 && fseeko(f, 0, SEEK_SET) == 0 &&
	         fwrite(b.p + flen, 1, HEADER_SIZE, f) == HEADER_SIZE && fflush(f) == 0;
	free(b.p);
	if (!ok)
		w->failed = 1;
	return ok ? 0 : PMUSIM_ERR_IO;
}

/* The end of the last complete record at or below cap, walking the record headers
 * on disk from the nearest known boundary. */
static uint64_t last_boundary(struct perfdata_writer *w, uint64_t cap)
{
	uint64_t p = w->data_off;
	size_t n = w->nckpt < NCHECKPOINTS ? (size_t)w->nckpt : NCHECKPOINTS;
	for (size_t i = 0; i < n; i++)
		if (w->ckpt[i] <= cap && w->ckpt[i] > p)
			p = w->ckpt[i];
	int fd = fileno(w->out.f);
	uint8_t hdr[8];
	while (p + sizeof(hdr) <= cap && pread(fd, hdr, sizeof(hdr), (off_t)p) == sizeof(hdr)) {
		uint16_t size;
		memcpy(&size, hdr + 6, 2);
		if (size < 8 || p + size > cap)
			break;
		p += size;
	}
	return p;
}

/* After a failed write: drop what stdio still holds, and cut the file back to the
 * last complete record on disk, the next times leaving room for the features. */
static int cut_back(struct perfdata_writer *w, int nth, uint64_t *data_end)
{
	struct stat sb;
	int fd = fileno(w->out.f);
	__fpurge(w->out.f);
	clearerr(w->out.f);
	if (fstat(fd, &sb) != 0)
		return PMUSIM_ERR_IO;
	uint64_t cap = (uint64_t)sb.st_size < *data_end ? (uint64_t)sb.st_size : *data_end;
	/* EFBIG needs room for the features; ENOSPC may need whole blocks freed */
	uint64_t room = nth == 0 ? 0 : features_len(w) + (nth == 1 ? 0 : 1u << 16);
	cap = cap > w->data_off + room ? cap - room : w->data_off;
	*data_end = last_boundary(w, cap);
	if (ftruncate(fd, (off_t)*data_end) != 0)
		return PMUSIM_ERR_IO;
	w->failed = 0;
	return 0;
}

int perfdata_writer_close(struct perfdata_writer *w)
{
	if (w->since_round)
		perfdata_write_round(w);
	for (int f = 0; f < NFEAT; f++)
		if (w->feat[f].nomem) {
			perfdata_writer_abort(w);
			return PMUSIM_ERR_NOMEM;
		}
	uint64_t data_end = w->pos;
	int rc = w->failed ? PMUSIM_ERR_IO : finish(w, data_end);
	for (int nth = 0; rc && nth < 3; nth++) {
		rc = cut_back(w, nth, &data_end);
		if (!rc)
			rc = finish(w, data_end);
	}
	if (rc) {
		perfdata_writer_abort(w);
		return PMUSIM_ERR_IO;
	}
	rc = outfile_commit(&w->out);
	perfdata_writer_free(w);
	return rc;
}

void perfdata_writer_abort(struct perfdata_writer *w)
{
	if (!w)
		return;
	outfile_abort(&w->out);
	perfdata_writer_free(w);
}

void perfdata_writer_free(struct perfdata_writer *w)
{
	free(w->iobuf);
	free(w->ids);
	free(w->rec.p);
	for (int f = 0; f < NFEAT; f++)
		free(w->feat[f].p);
	free(w);
}
