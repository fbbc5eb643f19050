/* Recording -> profile (see input.h). */
#include "profiler/input.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buildid.h"
#include "common/err.h"

struct mapping {
	char path[PATH_MAX];
	uint64_t addr, pgoff;
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int is_system(const char *path)
{
	return path[0] == '[' || strncmp(path, "/lib", 4) == 0 || strncmp(path, "/usr/lib", 8) == 0 ||
	       strstr(path, "/ld-") != NULL || strstr(path, "libc") != NULL;
}

/* 1 when the mapped file is the program we look for. */
static int matches(const struct perfdata *pd, const char *mapped, const struct input_opts *io,
		   const uint8_t *want_id, int want_len)
{
	if (!io->binary)
		return !is_system(mapped);
	if (want_len > 0)
		for (size_t i = 0; i < perfdata_nbuild_ids(pd); i++) {
			const uint8_t *id;
			size_t len;
			const char *file;
			if (perfdata_build_id(pd, i, &id, &len, &file) == 0 && strcmp(file, mapped) == 0 &&
			    len >= (size_t)want_len && memcmp(id, want_id, (size_t)want_len) == 0)
				return 1;
		}
	const char *a = base_name(mapped), *b = base_name(io->binary);
	return strcmp(a, b) == 0 || (strncmp(a, b, strlen(b)) == 0 && a[strlen(b)] == '.');
}

static int open_binary(const struct mapping *m, const struct input_opts *io, struct binary **bin,
		       char *msg, size_t ml)
{
	char path[PATH_MAX + NAME_MAX + 2];
	if (io->binary)
		snprintf(path, sizeof(path), "%s", io->binary);
	else if (io->binary_dir)
		snprintf(path, sizeof(path), "%s/%s", io->binary_dir, base_name(m->path));
	else
		snprintf(path, sizeof(path), "%s", m->path);
	uint64_t bias = binary_bias_for_mapping(path, m->addr, m->pgoff);
	return binary_open(path, bias, bin, msg, ml);
}

struct feed {
	struct perfdata *pd;
	const struct input_opts *io;
	const struct profile_opts *po;
	struct profile *prof;
	struct binary *bin;
	uint8_t want_id[BUILD_ID_MAX];
	int want_len;
	struct mapping m;
	int have_map;
};

static int on_sample(struct feed *f, const struct perf_sample *s, char *msg, size_t ml)
{
	int ev = perfdata_event_of_id(f->pd, s->id);
	if (ev < 0)
		ev = 0;
	if (ev != (f->io->event < 0 ? 0 : f->io->event))
		return 0;
	if (!f->prof) {
		if (!f->have_map && !f->io->binary)
			return pmusim_fail(msg, ml, PMUSIM_ERR_ARG,
					   "no executable mapping of the program before the first sample (use --binary)");
		int err = open_binary(&f->m, f->io, &f->bin, msg, ml);
		if (err < 0 || (err = profile_new(f->po, f->bin, &f->prof)) < 0)
			return err;
	}
	const struct perfdata_event *e = perfdata_event(f->pd, (size_t)ev);
	return profile_add(f->prof, s, trigger_of_event(e->type, e->config));
}

static void on_mmap(struct feed *f, const struct perf_record *r)
{
	if (f->have_map || !r->u.mmap.filename)
		return;
	if (r->type == PERF_RECORD_MMAP2 && !(r->u.mmap.prot & 4 /* PROT_EXEC */))
		return;
	if (!matches(f->pd, r->u.mmap.filename, f->io, f->want_id, f->want_len))
		return;
	snprintf(f->m.path, sizeof(f->m.path), "%s", r->u.mmap.filename);
	f->m.addr = r->u.mmap.addr;
	f->m.pgoff = r->u.mmap.pgoff;
	f->have_map = 1;
}

int input_profile(const char *path, const struct input_opts *io, const struct profile_opts *po,
		  struct profile **prof, struct binary **bin, char *msg, size_t ml)
{
	struct feed f = {.io = io, .po = po};
	*prof = NULL;
	*bin = NULL;
	int err = perfdata_open(path, &f.pd, msg, ml);
	if (err < 0)
		return err;
	if (io->event >= 0 && (size_t)io->event >= perfdata_nevents(f.pd)) {
		perfdata_close(f.pd);
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARG, "%s has %zu event(s)", path, perfdata_nevents(f.pd));
	}
	if (io->binary)
		f.want_len = elf_build_id(io->binary, f.want_id);
	struct perf_record r;
	while (err >= 0 && (err = perfdata_next(f.pd, &r, msg, ml)) > 0) {
		if (r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2)
			on_mmap(&f, &r);
		else if (r.type == PERF_RECORD_SAMPLE)
			err = on_sample(&f, &r.u.sample, msg, ml);
	}
	perfdata_close(f.pd);
	if (err >= 0 && f.prof)
		err = profile_finish(f.prof);
	if (err >= 0 && !f.prof)
		err = pmusim_fail(msg, ml, PMUSIM_ERR_ARG, "%s holds no samples of the program", path);
	if (err < 0) {
		profile_free(f.prof);
		binary_free(f.bin);
		return err;
	}
	*prof = f.prof;
	*bin = f.bin;
	return 0;
}
