/* Binary images for the profiler (see binary.h): PT_LOAD segments from libelf
 * (System V gABI program headers), code decoded by the shared Capstone cache. */
#include "profiler/binary.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/decode.h"
#include "common/err.h"
#include "common/infile.h"
#include "profiler/code_pages.h"

#define MAX_SEGS 64
#define MAX_FILES 32

struct seg {
	uint64_t start, end;        /* run-time addresses of the file-backed bytes */
	const unsigned char *bytes; /* the file's bytes at start */
};

struct binary {
	char *path;
	unsigned char *file;
	size_t flen;
	uint64_t bias;
	struct seg seg[MAX_SEGS];
	size_t nseg;
	struct seg ro[MAX_SEGS]; /* segments without PF_W (code's too) */
	size_t nro;
	unsigned char *ro_added[MAX_SEGS]; /* copies binary_add_rodata made */
	size_t nro_added;
	unsigned char *more[MAX_FILES]; /* bytes of the files added (shared libraries) */
	size_t nmore;
	struct symtab *syms;
	struct dcache *dc;
	struct code_pages *jit;       /* code in no file; NULL until some is added */
	struct fdata_region *regions; /* names (heap strings) of libraries, "//anon" */
	size_t nregions, rcap;
};

static const struct seg *seg_of(const struct binary *b, uint64_t addr)
{
	for (size_t i = 0; i < b->nseg; i++)
		if (addr >= b->seg[i].start && addr < b->seg[i].end)
			return &b->seg[i];
	return NULL;
}

size_t binary_read(const struct binary *b, uint64_t addr, uint8_t *buf, size_t len)
{
	const struct seg *s = seg_of(b, addr);
	if (!s)
		return b->jit ? code_pages_read(b->jit, addr, buf, len) : 0;
	size_t n = (size_t)(s->end - addr) < len ? (size_t)(s->end - addr) : len;
	memcpy(buf, s->bytes + (addr - s->start), n);
	return n;
}

size_t binary_read_ro(const struct binary *b, uint64_t addr, uint8_t *buf, size_t len)
{
	for (size_t i = 0; i < b->nro; i++) {
		const struct seg *s = &b->ro[i];
		if (addr < s->start || addr >= s->end)
			continue;
		size_t n = (size_t)(s->end - addr) < len ? (size_t)(s->end - addr) : len;
		memcpy(buf, s->bytes + (addr - s->start), n);
		return n;
	}
	return 0;
}

int binary_add_rodata(struct binary *b, uint64_t addr, const uint8_t *bytes, size_t len)
{
	if (b->nro == MAX_SEGS || b->nro_added == MAX_SEGS)
		return PMUSIM_ERR_ARG;
	unsigned char *copy = malloc(len ? len : 1);
	if (!copy)
		return PMUSIM_ERR_NOMEM;
	memcpy(copy, bytes, len);
	b->ro_added[b->nro_added++] = copy;
	b->ro[b->nro++] = (struct seg){addr, addr + len, copy};
	return 0;
}

static size_t read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	return binary_read(ctx, addr, buf, len);
}

/* The whole file, or NULL with *why ("" when it is empty or short). */
static unsigned char *slurp_file(const char *path, size_t *len, const char **why)
{
	*why = "";
	int fd = infile_open(path, why);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0 || st.st_size <= 0) {
		if (fd >= 0)
			close(fd);
		return NULL;
	}
	unsigned char *p = malloc((size_t)st.st_size);
	size_t got = 0;
	while (p && got < (size_t)st.st_size) {
		ssize_t r = read(fd, p + got, (size_t)st.st_size - got);
		if (r <= 0)
			break;
		got += (size_t)r;
	}
	close(fd);
	if (p && got != (size_t)st.st_size) {
		free(p);
		return NULL;
	}
	*len = got;
	return p;
}

static int add_region(struct binary *b, uint64_t start, uint64_t end, uint64_t bias, const char *name)
{
	if (b->nregions == b->rcap) {
		size_t cap = b->rcap ? 2 * b->rcap : 16;
		struct fdata_region *nr = realloc(b->regions, cap * sizeof(*nr));
		if (!nr)
			return PMUSIM_ERR_NOMEM;
		b->regions = nr;
		b->rcap = cap;
	}
	char *copy = strdup(name);
	if (!copy)
		return PMUSIM_ERR_NOMEM;
	b->regions[b->nregions++] = (struct fdata_region){start, end, bias, copy};
	return 0;
}

/* Adds the executable segments of one file's bytes placed at bias. */
static int load_segments(struct binary *b, const unsigned char *file, size_t flen, uint64_t bias,
			 const char *path, char *msg, size_t ml)
{
	Elf *elf = elf_memory((char *)file, flen);
	GElf_Ehdr eh;
	size_t n = 0;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) || elf_getphdrnum(elf, &n) != 0) {
		if (elf)
			elf_end(elf);
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: not an ELF file", path);
	}
	int err = eh.e_machine == EM_X86_64 ? 0
		: pmusim_fail(msg, ml, PMUSIM_ERR_ARCH, "%s: not an x86-64 program", path);
	size_t before = b->nseg;
	for (size_t i = 0; !err && i < n && b->nseg < MAX_SEGS; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD)
			continue;
		if (ph.p_offset > flen || ph.p_filesz > flen - ph.p_offset) {
			err = pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: truncated ELF file", path);
			break;
		}
		if (!(ph.p_flags & PF_W) && b->nro < MAX_SEGS)
			b->ro[b->nro++] = (struct seg){ph.p_vaddr + bias, ph.p_vaddr + bias + ph.p_filesz,
						       file + ph.p_offset};
		if (!(ph.p_flags & PF_X))
			continue;
		b->seg[b->nseg++] = (struct seg){ph.p_vaddr + bias, ph.p_vaddr + bias + ph.p_filesz,
						 file + ph.p_offset};
	}
	elf_end(elf);
	if (!err && b->nseg == before)
		err = pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: no executable segment", path);
	return err;
}

int binary_add_file(struct binary *b, const char *path, uint64_t bias, char *msg, size_t ml)
{
	if (b->nmore == MAX_FILES)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARG, "%s: too many files in one binary", path);
	size_t flen;
	const char *why;
	unsigned char *file = slurp_file(path, &flen, &why);
	if (!file)
		return pmusim_fail(msg, ml, PMUSIM_ERR_IO, "%s: cannot read the file%s%s", path, why[0] ? ": " : "",
				   why);
	b->more[b->nmore++] = file;
	size_t first = b->nseg;
	int err = load_segments(b, file, flen, bias, path, msg, ml);
	if (!err)
		symtab_add_file(b->syms, path, bias);
	const char *base = strrchr(path, '/') ? strrchr(path, '/') + 1 : path;
	for (size_t i = first; !err && i < b->nseg; i++)
		if (add_region(b, b->seg[i].start, b->seg[i].end, bias, base) < 0)
			err = pmusim_fail(msg, ml, PMUSIM_ERR_NOMEM, "out of memory");
	return err;
}

int binary_open(const char *path, uint64_t bias, struct binary **out, char *msg, size_t ml)
{
	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "libelf is unusable");
	struct binary *b = calloc(1, sizeof(*b));
	if (!b)
		return PMUSIM_ERR_NOMEM;
	b->bias = bias;
	b->path = strdup(path);
	const char *why = "";
	b->file = b->path ? slurp_file(path, &b->flen, &why) : NULL;
	int err = b->file ? load_segments(b, b->file, b->flen, bias, path, msg, ml)
			  : pmusim_fail(msg, ml, PMUSIM_ERR_IO, "%s: cannot read the binary%s%s", path,
					why[0] ? ": " : "", why);
	if (!err && symtab_load(path, bias, &b->syms) < 0)
		b->syms = symtab_new_empty();
	if (!err && (!b->syms || !(b->dc = dcache_new(read_code, b))))
		err = pmusim_fail(msg, ml, PMUSIM_ERR_NOMEM, "out of memory");
	if (err) {
		binary_free(b);
		return err;
	}
	*out = b;
	return 0;
}

int binary_from_code(const uint8_t *code, size_t len, uint64_t addr, struct binary **out)
{
	struct binary *b = calloc(1, sizeof(*b));
	*out = NULL;
	if (!b)
		return PMUSIM_ERR_NOMEM;
	b->path = strdup("[code]");
	b->file = malloc(len ? len : 1);
	b->flen = len;
	b->seg[0] = (struct seg){addr, addr + len, NULL};
	b->nseg = 1;
	b->syms = symtab_new_empty();
	if (b->file) {
		memcpy(b->file, code, len);
		b->seg[0].bytes = b->file;
	}
	if (!b->path || !b->file || !b->syms || !(b->dc = dcache_new(read_code, b))) {
		binary_free(b);
		return PMUSIM_ERR_NOMEM;
	}
	*out = b;
	return 0;
}

int binary_add_anon(struct binary *b, uint64_t addr, uint64_t len)
{
	return add_region(b, addr, addr + len, 0, "//anon");
}

int binary_add_code(struct binary *b, uint64_t addr, const uint8_t *bytes, size_t len)
{
	if (!b->jit && !(b->jit = code_pages_new()))
		return PMUSIM_ERR_NOMEM;
	int changed = code_pages_put(b->jit, addr, bytes, len);
	if (changed > 0)
		dcache_invalidate(b->dc, addr, len);
	return changed < 0 ? changed : 0;
}

size_t binary_regions(const struct binary *b, const struct fdata_region **out)
{
	*out = b->regions;
	return b->nregions;
}

void binary_free(struct binary *b)
{
	if (!b)
		return;
	for (size_t i = 0; i < b->nregions; i++)
		free((char *)b->regions[i].name);
	free(b->regions);
	code_pages_free(b->jit);
	dcache_free(b->dc);
	symtab_free(b->syms);
	free(b->file);
	for (size_t i = 0; i < b->nro_added; i++)
		free(b->ro_added[i]);
	for (size_t i = 0; i < b->nmore; i++)
		free(b->more[i]);
	free(b->path);
	free(b);
}

const struct block_info *binary_run(struct binary *b, uint64_t addr)
{
	if (!binary_has_code(b, addr))
		return NULL;
	int is_new;
	return dcache_get(b->dc, addr, &is_new);
}

int binary_disasm(struct binary *b, uint64_t addr, char *out, size_t outlen)
{
	if (!binary_has_code(b, addr))
		return PMUSIM_ERR_ARG;
	return dcache_disasm(b->dc, addr, out, outlen);
}

int binary_has_code(const struct binary *b, uint64_t addr)
{
	return seg_of(b, addr) != NULL || (b->jit && code_pages_known(b->jit, addr));
}

const struct symtab *binary_symtab(const struct binary *b)
{
	return b->syms;
}

uint64_t binary_bias(const struct binary *b)
{
	return b->bias;
}

const char *binary_path(const struct binary *b)
{
	return b->path;
}
