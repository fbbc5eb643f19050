/* Per-process mappings and ELF symbols (see symbolize.h). Record semantics from
 * include/uapi/linux/perf_event.h (perf 6.1): MMAP/MMAP2 (PERF_RECORD_MISC_MMAP_DATA
 * marks a data mapping of MMAP), FORK (pid, ppid, tid, ptid), COMM with
 * PERF_RECORD_MISC_COMM_EXEC after an execve; how a mapping's file offset
 * places the file: common/elf_bias.h. */
#include "profiler/symbolize.h"

#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/arrays.h"
#include "common/elf_bias.h"
#include "common/err.h"
#include "common/grow.h"

#define PERF_RECORD_MISC_MMAP_DATA (1u << 13) /* perf_event.h, for MMAP records */
#define PROT_EXEC_BIT 4u                      /* PROT_EXEC of MMAP2's prot */

/* A mapped file at one placement; symbols loaded on first use. */
struct dso {
	char *path;           /* as the recording names it */
	char *host_path;      /* where this host reads it (under the symfs directory) */
	uint64_t addr, pgoff; /* the first mapping's, which give the load bias */
	struct symtab *st;    /* NULL until loaded, or when the file is not here */
	int tried;
	int anon;             /* anonymous memory: no file */
	int bias_known;
	uint64_t bias;
};

struct map {
	uint64_t addr, len, pgoff;
	size_t dso;
};

struct proc {
	uint32_t pid;
	uint64_t version; /* changes whenever maps do */
	struct map *maps; /* in record order; lookups go newest first */
	size_t n, cap;
};

struct symbolizer {
	struct dso *dsos;
	size_t ndsos, dcap;
	struct proc *procs;
	size_t nprocs, pcap;
	size_t last; /* the process of the previous lookup */
	uint64_t clock; /* source of proc versions */
	char *symfs;    /* directory the recorded paths are looked up under, or NULL */
};

struct symbolizer *symbolizer_new(void)
{
	return calloc(1, sizeof(struct symbolizer));
}

void symbolizer_free(struct symbolizer *z)
{
	if (!z)
		return;
	for (size_t i = 0; i < z->ndsos; i++) {
		free(z->dsos[i].path);
		free(z->dsos[i].host_path);
		symtab_free(z->dsos[i].st);
	}
	for (size_t i = 0; i < z->nprocs; i++)
		free(z->procs[i].maps);
	free(z->dsos);
	free(z->procs);
	free(z->symfs);
	free(z);
}

int symbolizer_set_symfs(struct symbolizer *z, const char *dir)
{
	char *d = dir ? strdup(dir) : NULL;
	if (dir && !d)
		return PMUSIM_ERR_NOMEM;
	free(z->symfs);
	z->symfs = d;
	return 0;
}

static struct proc *proc_find(struct symbolizer *z, uint32_t pid)
{
	if (z->last < z->nprocs && z->procs[z->last].pid == pid)
		return &z->procs[z->last];
	for (size_t i = 0; i < z->nprocs; i++)
		if (z->procs[i].pid == pid) {
			z->last = i;
			return &z->procs[i];
		}
	return NULL;
}

static struct proc *proc_get(struct symbolizer *z, uint32_t pid)
{
	struct proc *p = proc_find(z, pid), *np;
	if (p || !(np = grow_array(z->procs, &z->pcap, z->nprocs + 1, sizeof(*np))))
		return p;
	z->procs = np;
	p = &z->procs[z->nprocs++];
	memset(p, 0, sizeof(*p));
	p->pid = pid;
	return p;
}

/* The dso of a file first mapped at addr from pgoff (shared by every mapping
 * that places the file the same way); index or -1. */
static long dso_get(struct symbolizer *z, const char *path, uint64_t addr, uint64_t pgoff, int anon)
{
	for (size_t i = 0; i < z->ndsos; i++) {
		const struct dso *d = &z->dsos[i];
		if (d->addr - d->pgoff == addr - pgoff && strcmp(d->path, path) == 0)
			return (long)i;
	}
	struct dso *nd = grow_array(z->dsos, &z->dcap, z->ndsos + 1, sizeof(*nd));
	if (!nd)
		return -1;
	z->dsos = nd;
	struct dso *d = &z->dsos[z->ndsos];
	memset(d, 0, sizeof(*d));
	char host[PATH_MAX];
	snprintf(host, sizeof(host), "%s%s", z->symfs && path[0] == '/' ? z->symfs : "", path);
	if (!(d->path = strdup(path)) || !(d->host_path = strdup(host))) {
		free(d->path);
		return -1;
	}
	d->addr = addr;
	d->pgoff = pgoff;
	d->anon = anon;
	return (long)z->ndsos++;
}

static int on_mmap(struct symbolizer *z, const struct perf_record *r)
{
	if (!r->u.mmap.filename || r->u.mmap.len == 0)
		return 0;
	if (r->type == PERF_RECORD_MMAP2 ? !(r->u.mmap.prot & PROT_EXEC_BIT)
	                                 : (r->misc & PERF_RECORD_MISC_MMAP_DATA) != 0)
		return 0;
	/* perf names anonymous executable memory (JIT code) after the symbol map a
	 * JIT may write for it (tools/perf/util/map.c, map__new) */
	char anon[64];
	const char *path = r->u.mmap.filename;
	if (strcmp(path, "//anon") == 0) {
		snprintf(anon, sizeof(anon), "/tmp/perf-%u.map", r->u.mmap.pid);
		path = anon;
	}
	long d = dso_get(z, path, r->u.mmap.addr, r->u.mmap.pgoff, path == anon);
	struct proc *p = d < 0 ? NULL : proc_get(z, r->u.mmap.pid);
	struct map *nm = p ? grow_array(p->maps, &p->cap, p->n + 1, sizeof(*nm)) : NULL;
	if (!nm)
		return PMUSIM_ERR_NOMEM;
	p->maps = nm;
	p->maps[p->n++] = (struct map){r->u.mmap.addr, r->u.mmap.len, r->u.mmap.pgoff, (size_t)d};
	p->version = ++z->clock;
	return 0;
}

/* A new process starts with a copy of its parent's mappings. */
static int on_fork(struct symbolizer *z, uint32_t pid, uint32_t ppid)
{
	struct proc *parent = proc_find(z, ppid);
	if (!parent || !parent->n)
		return 0;
	size_t n = parent->n;
	struct map *copy = malloc(n * sizeof(*copy));
	if (!copy)
		return PMUSIM_ERR_NOMEM;
	arrays_copy(copy, parent->maps, n, sizeof(*copy)); /* before proc_get moves the array */
	struct proc *child = proc_get(z, pid);
	if (!child) {
		free(copy);
		return PMUSIM_ERR_NOMEM;
	}
	free(child->maps);
	child->maps = copy;
	child->n = child->cap = n;
	child->version = ++z->clock;
	return 0;
}

int symbolizer_record(struct symbolizer *z, const struct perf_record *r)
{
	if (r->type == PERF_RECORD_MMAP || r->type == PERF_RECORD_MMAP2)
		return on_mmap(z, r);
	if (r->type == PERF_RECORD_FORK && r->u.task.pid != r->u.task.ppid)
		return on_fork(z, r->u.task.pid, r->u.task.ppid);
	if (r->type == PERF_RECORD_COMM && (r->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		struct proc *p = proc_find(z, r->u.comm.pid);
		if (p) {
			p->n = 0; /* another program: its mappings follow */
			p->version = ++z->clock;
		}
	}
	return 0;
}

static uint64_t dso_bias(struct dso *d)
{
	if (!d->bias_known) {
		d->bias = elf_mapping_bias(d->host_path, d->addr, d->pgoff);
		d->bias_known = 1;
	}
	return d->bias;
}

size_t symbolizer_files(struct symbolizer *z, uint32_t pid, struct sym_file *out, size_t max,
                        uint64_t *version)
{
	const struct proc *p = proc_find(z, pid);
	size_t n = 0;
	if (version)
		*version = p ? p->version : 0;
	for (size_t i = 0; p && i < p->n; i++) {
		size_t k = p->maps[i].dso, j;
		struct dso *d = &z->dsos[k];
		if (d->anon || d->path[0] != '/' || access(d->host_path, R_OK) != 0)
			continue;
		for (j = 0; j < i && p->maps[j].dso != k; j++)
			;
		if (j < i)
			continue; /* listed at its first mapping */
		if (n < max)
			out[n] = (struct sym_file){d->host_path, dso_bias(d)};
		n++;
	}
	return n;
}

static const struct map *map_in(const struct proc *p, uint64_t addr)
{
	for (size_t i = p->n; i-- > 0;)
		if (addr >= p->maps[i].addr && addr - p->maps[i].addr < p->maps[i].len)
			return &p->maps[i];
	return NULL;
}

int symbolizer_place(struct symbolizer *z, uint32_t pid, uint64_t addr, struct sym_place *out)
{
	memset(out, 0, sizeof(*out));
	const struct map *m = NULL;
	if (pid != SYMBOLIZE_ANY_PID) {
		const struct proc *p = proc_find(z, pid);
		m = p ? map_in(p, addr) : NULL;
	}
	for (size_t i = 0; pid == SYMBOLIZE_ANY_PID && !m && i < z->nprocs; i++)
		m = map_in(&z->procs[i], addr);
	if (!m)
		return 0;
	struct dso *d = &z->dsos[m->dso];
	if (!d->tried) {
		d->tried = 1;
		if (symtab_load(d->host_path, dso_bias(d), &d->st) < 0)
			d->st = NULL;
	}
	out->path = d->path;
	out->file_off = addr - m->addr + m->pgoff;
	out->st = d->st;
	out->sym = d->st ? symtab_lookup(d->st, addr) : NULL;
	return 1;
}

void sym_place_text(const struct sym_place *p, uint64_t addr, char *buf, size_t len)
{
	const char *base = p->path && strrchr(p->path, '/') ? strrchr(p->path, '/') + 1 : p->path;
	if (p->sym)
		snprintf(buf, len, "%.120s+0x%" PRIx64, p->sym->name, addr - p->sym->addr);
	else if (p->path)
		snprintf(buf, len, "%.120s+0x%" PRIx64, base, p->file_off);
	else
		snprintf(buf, len, "?");
}
