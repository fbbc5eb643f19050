/* Per-process code images (see proc_code.h): a binary per distinct list of
 * mapped files, remembered per process with the version of its mappings. */
#include "profiler/proc_code.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/grow.h"

#define MAX_FILES 32 /* binary_add_file's limit, plus the program */

/* One binary and the files it was made of, in order. */
struct image {
	struct sym_file files[MAX_FILES];
	size_t nfiles;
	struct binary *bin; /* NULL: none of the files opened */
};

struct proc_entry {
	uint32_t pid;
	uint64_t version; /* of the mappings image was made for */
	size_t image;
};

struct proc_code {
	struct symbolizer *z;
	struct image **images; /* pointers: images stay put while the array grows */
	size_t nimages, icap;
	struct proc_entry *procs;
	size_t nprocs, pcap;
};

struct proc_code *proc_code_new(struct symbolizer *z)
{
	struct proc_code *pc = calloc(1, sizeof(*pc));
	if (pc)
		pc->z = z;
	return pc;
}

void proc_code_free(struct proc_code *pc)
{
	if (!pc)
		return;
	for (size_t i = 0; i < pc->nimages; i++) {
		binary_free(pc->images[i]->bin);
		free(pc->images[i]);
	}
	free(pc->images);
	free(pc->procs);
	free(pc);
}

static int same_files(const struct image *im, const struct sym_file *f, size_t n)
{
	if (im->nfiles != n)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (strcmp(im->files[i].path, f[i].path) != 0 || im->files[i].bias != f[i].bias)
			return 0;
	return 1;
}

/* The first file that opens is the binary; the others join it. */
static struct binary *open_files(const struct sym_file *f, size_t n)
{
	struct binary *b = NULL;
	char msg[256];
	for (size_t i = 0; i < n; i++) {
		if (!b)
			binary_open(f[i].path, f[i].bias, &b, msg, sizeof(msg));
		else
			binary_add_file(b, f[i].path, f[i].bias, msg, sizeof(msg));
	}
	return b;
}

/* Index of the image of these files, made when new; -1 when out of memory. */
static long image_of(struct proc_code *pc, const struct sym_file *f, size_t n)
{
	for (size_t i = 0; i < pc->nimages; i++)
		if (same_files(pc->images[i], f, n))
			return (long)i;
	struct image **ni = grow_array(pc->images, &pc->icap, pc->nimages + 1, sizeof(*ni));
	if (!ni)
		return -1;
	pc->images = ni;
	struct image *im = calloc(1, sizeof(*im));
	if (!im)
		return -1;
	arrays_copy(im->files, f, n, sizeof(*f));
	im->nfiles = n;
	im->bin = open_files(f, n);
	pc->images[pc->nimages] = im;
	return (long)pc->nimages++;
}

struct binary *proc_code_of(struct proc_code *pc, uint32_t pid)
{
	struct sym_file f[MAX_FILES];
	uint64_t version;
	size_t n = symbolizer_files(pc->z, pid, f, MAX_FILES, &version);
	if (n > MAX_FILES)
		n = MAX_FILES; /* the first ones: the program and its early libraries */
	struct proc_entry *e = NULL;
	for (size_t i = 0; i < pc->nprocs && !e; i++)
		if (pc->procs[i].pid == pid)
			e = &pc->procs[i];
	if (e && e->version == version)
		return pc->images[e->image]->bin;
	long im = image_of(pc, f, n);
	if (im < 0)
		return NULL;
	if (!e) {
		struct proc_entry *np =
		    grow_array(pc->procs, &pc->pcap, pc->nprocs + 1, sizeof(*np));
		if (!np)
			return NULL;
		pc->procs = np;
		e = &pc->procs[pc->nprocs++];
		e->pid = pid;
	}
	e->version = version;
	e->image = (size_t)im;
	return pc->images[im]->bin;
}
