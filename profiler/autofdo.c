/* AutoFDO text profile (the input of create_llvm_prof/create_gcov --profiler
 * text; google/autofdo sample_reader.cc, TextSampleReaderWriter): three
 * sections, each a decimal count of lines then the lines, addresses in hex:
 *   <n>  then  <begin>-<end>:<count>   instruction ranges executed, both ends
 *                                      inclusive (<end> is the address of the
 *                                      branch that left the range)
 *   <n>  then  <addr>:<count>          sampled addresses (none here)
 *   <n>  then  <from>-><to>:<count>    taken branches
 * Addresses are what AutoFDO's own perf.data reader stores (quipper's
 * ip - mmap start + pgoff): file offsets in the program, which AutoFDO maps back
 * with its executable PT_LOAD (vaddr - offset). AutoFDO 0.19 (Debian 12) adds the
 * first PT_LOAD's vaddr instead: the same for GNU ld's layouts, where the text
 * segment's vaddr - offset is that vaddr; not for lld's, which 0.19 mis-maps
 * in its own perf.data input too.
 * A range runs from an edge's destination to the next branch there. */
#include "profiler/autofdo.h"

#include <fcntl.h>
#include <gelf.h>
#include <inttypes.h>
#include <libelf.h>
#include <math.h>
#include <stdlib.h>
#include <unistd.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/infile.h"

#define MAX_XSEGS 16
#define MAX_RUNS_PER_RANGE 64

struct range {
	uint64_t begin, end, count;
};

/* An executable PT_LOAD: link-time addresses [vaddr, end) at file offset. */
struct xseg {
	uint64_t vaddr, end, offset;
};

/* The executable PT_LOAD segments of path; 0 when it is no readable ELF file. */
static size_t exec_segments(const char *path, struct xseg *s, size_t max)
{
	size_t n = 0, ph;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return 0;
	int fd = infile_open(path, NULL);
	if (fd < 0)
		return 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	if (elf && elf_kind(elf) == ELF_K_ELF && elf_getphdrnum(elf, &ph) == 0) {
		for (size_t i = 0; i < ph && n < max; i++) {
			GElf_Phdr p;
			if (gelf_getphdr(elf, (int)i, &p) && p.p_type == PT_LOAD &&
			    (p.p_flags & PF_X))
				s[n++] =
				    (struct xseg){p.p_vaddr, p.p_vaddr + p.p_filesz, p.p_offset};
		}
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return n;
}

struct addr_map {
	struct xseg seg[MAX_XSEGS];
	size_t nseg;
	uint64_t bias;
};

/* The AutoFDO address of run-time address a in *out; 0 when a lies outside
 * the program's file-backed code (other mappings, the kernel). Without ELF
 * segments (code that exists in no file) the address relative to the bias. */
static int afdo_addr(const struct addr_map *m, uint64_t a, uint64_t *out)
{
	uint64_t v = a - m->bias;
	if (!m->nseg) {
		*out = v;
		return 1;
	}
	for (size_t i = 0; i < m->nseg; i++)
		if (v >= m->seg[i].vaddr && v < m->seg[i].end) {
			*out = v - m->seg[i].vaddr + m->seg[i].offset;
			return 1;
		}
	return 0;
}

/* The run whose branch ends a range that starts with run: control goes on to
 * the next instruction after a SYSCALL, a REP string instruction or a run the
 * decoder cut for length, so the range does too. */
static const struct block_info *range_last_run(struct binary *bin, const struct block_info *run)
{
	for (int i = 0; i < MAX_RUNS_PER_RANGE; i++) {
		if (run->kind != BK_NONE && run->kind != BK_SYSCALL && run->kind != BK_REP)
			break;
		const struct block_info *next = binary_run(bin, run->end);
		if (!next)
			break;
		run = next;
	}
	return run;
}

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

/* Sorted, merged ranges of the edges' destinations in r (room for n); their count. */
static size_t collect_ranges(struct binary *bin, const struct addr_map *m, const struct edge *e,
                             size_t n, struct range *r)
{
	size_t nr = 0;
	for (size_t i = 0; i < n; i++) {
		long long c = llround(e[i].w);
		const struct block_info *run = c > 0 ? binary_run(bin, e[i].to) : NULL;
		uint64_t begin, end;
		if (!run)
			continue;
		run = range_last_run(bin, run);
		if (afdo_addr(m, e[i].to, &begin) && afdo_addr(m, run->term, &end) && end >= begin)
			r[nr++] = (struct range){begin, end, (uint64_t)c};
	}
	arrays_sort(r, nr, sizeof(*r), cmp_range);
	size_t k = 0;
	for (size_t i = 0; i < nr; i++) {
		if (k && r[k - 1].begin == r[i].begin && r[k - 1].end == r[i].end)
			r[k - 1].count += r[i].count;
		else
			r[k++] = r[i];
	}
	return k;
}

/* Taken edges with both ends in the program, as ranges {from, to, count}. */
static size_t collect_branches(const struct addr_map *m, const struct edge *e, size_t n,
                               struct range *r)
{
	size_t nb = 0;
	for (size_t i = 0; i < n; i++) {
		long long c = llround(e[i].w);
		uint64_t from, to;
		if (e[i].taken && c > 0 && afdo_addr(m, e[i].from, &from) &&
		    afdo_addr(m, e[i].to, &to))
			r[nb++] = (struct range){from, to, (uint64_t)c};
	}
	arrays_sort(r, nb, sizeof(*r), cmp_range);
	return nb;
}

int autofdo_write(FILE *f, struct binary *bin, const struct edge *e, size_t n)
{
	struct addr_map m = {.bias = binary_bias(bin)};
	m.nseg = exec_segments(binary_path(bin), m.seg, MAX_XSEGS);
	struct range *r = calloc(n + 1, sizeof(*r)), *b = calloc(n + 1, sizeof(*b));
	if (!r || !b) {
		free(r);
		free(b);
		return PMUSIM_ERR_NOMEM;
	}
	size_t nr = collect_ranges(bin, &m, e, n, r), nb = collect_branches(&m, e, n, b);
	fprintf(f, "%zu\n", nr);
	for (size_t i = 0; i < nr; i++)
		fprintf(f, "%" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n", r[i].begin, r[i].end,
		        r[i].count);
	fprintf(f, "0\n%zu\n", nb);
	for (size_t i = 0; i < nb; i++)
		fprintf(f, "%" PRIx64 "->%" PRIx64 ":%" PRIu64 "\n", b[i].begin, b[i].end,
		        b[i].count);
	free(r);
	free(b);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
