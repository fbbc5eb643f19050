/* Recording -> profile (see input.h): perf.data through profiler/perfdata.h,
 * perf script text through profiler/script_text.h, one loop over their records. */
#include "common/elf_bias.h"
#include "profiler/input.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/buildid.h"
#include "common/err.h"
#include "common/infile.h"
#include "profiler/script_text.h"

struct mapping {
	char path[PATH_MAX];
	uint64_t addr, pgoff;
};

/* The recording: exactly one of the two readers. */
struct source {
	const char *path;
	struct perfdata *pd;
	struct script_text *st;
	FILE *fp; /* the text's stream */
};

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static int is_system(const char *path)
{
	return path[0] == '[' || strncmp(path, "/lib", 4) == 0 ||
	       strncmp(path, "/usr/lib", 8) == 0 || strstr(path, "/ld-") != NULL ||
	       strstr(path, "libc") != NULL;
}

/* 1 when the recording gives the mapped file the wanted build id (perf.data:
 * its BUILD_ID feature; text: the "<id>" of the MMAP2 line just read). */
static int id_matches(const struct source *src, const char *mapped, const uint8_t *want_id,
                      size_t want_len)
{
	const uint8_t *id;
	size_t len;
	if (src->st)
		return (len = script_text_build_id(src->st, &id)) >= want_len &&
		       memcmp(id, want_id, want_len) == 0;
	for (size_t i = 0; i < perfdata_nbuild_ids(src->pd); i++) {
		const char *file;
		if (perfdata_build_id(src->pd, i, &id, &len, &file) == 0 &&
		    strcmp(file, mapped) == 0 && len >= want_len &&
		    memcmp(id, want_id, want_len) == 0)
			return 1;
	}
	return 0;
}

/* 1 when the mapped file is the program we look for. */
static int matches(const struct source *src, const char *mapped, const struct input_opts *io,
                   const uint8_t *want_id, int want_len)
{
	if (!io->binary)
		return !is_system(mapped);
	if (want_len > 0 && id_matches(src, mapped, want_id, (size_t)want_len))
		return 1;
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
	uint64_t bias = elf_mapping_bias(path, m->addr, m->pgoff);
	return binary_open(path, bias, bin, msg, ml);
}

/* 1 when path is an ELF file of type ET_DYN (a PIE, loaded at a bias). */
static int is_dyn_elf(const char *path)
{
	unsigned char h[18];
	FILE *f = infile_fopen(path, NULL);
	size_t n = f ? fread(h, 1, sizeof(h), f) : 0;
	if (f)
		fclose(f);
	return n == sizeof(h) && memcmp(h, "\177ELF", 4) == 0 && h[16] == 3 && h[17] == 0;
}

struct feed {
	struct source src;
	const struct input_opts *io;
	const struct profile_opts *po;
	struct profile *prof;
	struct binary *bin;
	uint8_t want_id[BUILD_ID_MAX];
	int want_len;
	struct mapping m;
	int have_map;
	struct mapping libs[32]; /* other files mapped executable: shared libraries */
	size_t nlibs, nadded;
	struct { uint64_t addr, len; } anon[256]; /* anonymous executable memory (run-time code) */
	size_t nanon, nanon_added;
	/* perf.data: the processes running the program (pid of its MMAP records, their
	 * forks, less those that executed another one); samples of others are skipped,
	 * their addresses mean other code */
	uint32_t pids[1024];
	size_t npids;
	int pid_overflow;
	int seen_mmap;          /* the file maps files at all (else every sample counts) */
	input_sample_fn fn;     /* input_each_sample: every sample goes here, not to a profile */
	void *fn_ctx;
	int fn_called;
};

static int pid_index(const struct feed *f, uint32_t pid)
{
	for (size_t i = 0; i < f->npids; i++)
		if (f->pids[i] == pid)
			return (int)i;
	return -1;
}

static void pid_add(struct feed *f, uint32_t pid)
{
	if (pid_index(f, pid) >= 0)
		return;
	if (f->npids == sizeof(f->pids) / sizeof(f->pids[0]))
		f->pid_overflow = 1; /* too many to tell apart: keep every sample */
	else
		f->pids[f->npids++] = pid;
}

static void on_task(struct feed *f, const struct perf_record *r)
{
	if (r->type == PERF_RECORD_FORK && r->u.task.pid != r->u.task.ppid &&
	    pid_index(f, r->u.task.ppid) >= 0)
		pid_add(f, r->u.task.pid); /* a forked copy runs the program too */
	if (r->type == PERF_RECORD_COMM && (r->misc & PERF_RECORD_MISC_COMM_EXEC)) {
		int i = pid_index(f, r->u.comm.pid); /* it runs another program now */
		if (i >= 0)
			f->pids[i] = f->pids[--f->npids];
	}
}

/* Adds the libraries and anonymous code mappings seen so far to the binary (the
 * libraries whose files are here). */
static int add_libs(struct feed *f)
{
	for (; f->nadded < f->nlibs; f->nadded++) {
		const struct mapping *l = &f->libs[f->nadded];
		char msg[256];
		if (access(l->path, R_OK) == 0)
			binary_add_file(f->bin, l->path, elf_mapping_bias(l->path, l->addr, l->pgoff), msg,
					sizeof(msg));
	}
	int err = 0;
	for (; !err && f->nanon_added < f->nanon; f->nanon_added++)
		err = binary_add_anon(f->bin, f->anon[f->nanon_added].addr, f->anon[f->nanon_added].len);
	return err;
}

/* The binary, opened at the program's first sample or first code bytes. */
static int open_program(struct feed *f, char *msg, size_t ml)
{
	if (!f->have_map && !f->io->binary)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARG,
		                   f->src.st ? "%s: no executable mapping of the program before "
		                               "the first sample (use --binary, "
		                               "or perf script --show-mmap-events)"
		                             : "%s: no executable mapping of the program before "
		                               "the first sample (use --binary)",
		                   f->src.path);
	/* text without the mapping cannot place a PIE: every address would miss it */
	if (!f->have_map && f->src.st && is_dyn_elf(f->io->binary))
		return pmusim_fail(
		    msg, ml, PMUSIM_ERR_ARG,
		    "%s: no PERF_RECORD_MMAP2 line maps %s, a position-independent program, "
		    "before the first sample (run perf script with --show-mmap-events)",
		    f->src.path, f->io->binary);
	int err = open_binary(&f->m, f->io, &f->bin, msg, ml);
	return err < 0 ? err : add_libs(f);
}

/* The profile, made at the first sample of the program's event. */
static int first_sample(struct feed *f, char *msg, size_t ml)
{
	int err = f->bin ? 0 : open_program(f, msg, ml);
	struct profile_opts po = *f->po;
	if (f->src.pd) {
		/* pmusim's LBR never repeats the newest entry at a PMI; real Skylakes do */
		const char *host = perfdata_hostname(f->src.pd);
		int ev = f->io->event < 0 ? 0 : f->io->event;
		po.skylake_dup = !host || strcmp(host, "pmusim") != 0;
		po.precise = perfdata_event(f->src.pd, (size_t)ev)->precise_ip > 0;
	} else {
		po.skylake_dup = 1; /* perf script text comes from real hardware */
	}
	return err < 0 ? err : profile_new(&po, f->bin, &f->prof);
}

static int on_sample(struct feed *f, const struct perf_sample *s, char *msg, size_t ml)
{
	int trigger = TRIG_TAKEN; /* text: see input.h */
	if (f->src.pd) {
		int ev = perfdata_event_of_id(f->src.pd, s->id);
		if (ev < 0)
			ev = 0;
		if (!f->fn && ev != (f->io->event < 0 ? 0 : f->io->event))
			return 0;
		const struct perfdata_event *e = perfdata_event(f->src.pd, (size_t)ev);
		trigger = trigger_of_event(e->type, e->config);
		if (f->seen_mmap && !f->pid_overflow && pid_index(f, s->pid) < 0)
			return 0; /* another process, or before the program is mapped */
	}
	int err;
	if (f->fn) {
		if (!f->bin && (err = open_program(f, msg, ml)) < 0)
			return err;
		f->fn_called = 1;
		int ev = f->src.pd ? perfdata_event_of_id(f->src.pd, s->id) : 0;
		return f->fn(f->fn_ctx, f->bin, s, f->src.pd ? perfdata_event(f->src.pd, (size_t)(ev < 0 ? 0 : ev)) : NULL);
	}
	if (!f->prof && (err = first_sample(f, msg, ml)) < 0)
		return err;
	return profile_add(f->prof, s, trigger);
}

/* A library mapping (not the program's), once per file. */
static int on_lib(struct feed *f, const struct perf_record *r)
{
	const char *path = r->u.mmap.filename;
	if (path[0] != '/' || (f->have_map && strcmp(path, f->m.path) == 0))
		return 0;
	for (size_t i = 0; i < f->nlibs; i++)
		if (strcmp(f->libs[i].path, path) == 0)
			return 0;
	if (f->nlibs == sizeof(f->libs) / sizeof(f->libs[0]))
		return 0;
	struct mapping *l = &f->libs[f->nlibs++];
	snprintf(l->path, sizeof(l->path), "%s", path);
	l->addr = r->u.mmap.addr;
	l->pgoff = r->u.mmap.pgoff;
	return f->bin ? add_libs(f) : 0;
}

/* Anonymous executable memory of the program's processes: "//anon" (perf's
 * name; the kernel's perf_event_mmap), its code arriving in TEXT_POKE records. */
static int on_anon(struct feed *f, const struct perf_record *r)
{
	if (pid_index(f, r->u.mmap.pid) < 0 || f->nanon == sizeof(f->anon) / sizeof(f->anon[0]))
		return 0;
	f->anon[f->nanon].addr = r->u.mmap.addr;
	f->anon[f->nanon++].len = r->u.mmap.len;
	return f->bin ? add_libs(f) : 0;
}

/* Code bytes of the program's processes that no file holds (perf.data TEXT_POKE
 * of user code, as pmusim writes for code written at run time). */
static int on_poke(struct feed *f, const struct perf_record *r, char *msg, size_t ml)
{
	if (!(r->misc & PERF_RECORD_MISC_USER) || pid_index(f, r->u.poke.pid) < 0 ||
	    (!f->have_map && !f->io->binary))
		return 0;
	int err = f->bin ? 0 : open_program(f, msg, ml);
	return err < 0 ? err : binary_add_code(f->bin, r->u.poke.addr, r->u.poke.bytes, r->u.poke.len);
}

static int on_mmap(struct feed *f, const struct perf_record *r)
{
	if (!r->u.mmap.filename)
		return 0;
	if (r->type == PERF_RECORD_MMAP2 && !(r->u.mmap.prot & 4 /* PROT_EXEC */))
		return 0;
	if (strcmp(r->u.mmap.filename, "//anon") == 0)
		return on_anon(f, r);
	f->seen_mmap = 1;
	if (f->have_map && strcmp(r->u.mmap.filename, f->m.path) == 0) {
		pid_add(f, r->u.mmap.pid); /* another process runs the program */
		return 0;
	}
	if (f->have_map || !matches(&f->src, r->u.mmap.filename, f->io, f->want_id, f->want_len))
		return on_lib(f, r);
	pid_add(f, r->u.mmap.pid);
	snprintf(f->m.path, sizeof(f->m.path), "%s", r->u.mmap.filename);
	f->m.addr = r->u.mmap.addr;
	f->m.pgoff = r->u.mmap.pgoff;
	f->have_map = 1;
	return 0;
}

/* perf.data ("PERFILE2", or "2ELIFREP" which the reader refuses as big-endian)
 * or, for anything else, perf script text read from the same stream. */
static int source_open(struct source *src, const char *path, const struct input_opts *io, char *msg,
                       size_t ml)
{
	char magic[8];
	src->path = path;
	const char *why;
	if (!(src->fp = infile_fopen(path, &why)))
		return pmusim_fail(msg, ml, PMUSIM_ERR_IO, "cannot open %s: %s", path, why);
	size_t n = fread(magic, 1, sizeof(magic), src->fp);
	if (ferror(src->fp))
		return pmusim_fail(msg, ml, PMUSIM_ERR_IO, "cannot read %s", path);
	if (n == 0)
		return pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT, "%s is empty", path);
	if (n == 8 && (memcmp(magic, "PERFILE2", 8) == 0 || memcmp(magic, "2ELIFREP", 8) == 0)) {
		fclose(src->fp);
		src->fp = NULL;
		int err = perfdata_open(path, &src->pd, msg, ml);
		if (err == 0 && io->event >= 0 && (size_t)io->event >= perfdata_nevents(src->pd))
			err = pmusim_fail(msg, ml, PMUSIM_ERR_ARG, "%s has %zu event(s)", path,
			                  perfdata_nevents(src->pd));
		return err;
	}
	if (io->event > 0)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARG, "%s is perf script text: one event",
		                   path);
	if (fseek(src->fp, 0, SEEK_SET) != 0)
		return pmusim_fail(msg, ml, PMUSIM_ERR_UNSUPPORTED,
		                   "%s: perf script text must be a file, not a pipe", path);
	return script_text_open_stream(src->fp, path, &src->st, msg, ml);
}

static int source_next(struct source *src, struct perf_record *r, char *msg, size_t ml)
{
	return src->pd ? perfdata_next(src->pd, r, msg, ml) : script_text_next(src->st, r, msg, ml);
}

static void source_close(struct source *src)
{
	perfdata_close(src->pd);
	script_text_close(src->st);
	if (src->fp)
		fclose(src->fp);
}

/* One pass over the recording into *prof and *bin (or, with fn, into fn). */
static int read_pass(const char *path, const struct input_opts *io, const struct profile_opts *po,
		     input_sample_fn fn, void *ctx, struct profile **prof, struct binary **bin,
		     char *msg, size_t ml)
{
	struct feed f = {.io = io, .po = po, .fn = fn, .fn_ctx = ctx};
	*prof = NULL;
	*bin = NULL;
	int err = source_open(&f.src, path, io, msg, ml);
	if (err == 0 && io->binary)
		f.want_len = elf_build_id(io->binary, f.want_id);
	struct perf_record r;
	while (err >= 0 && (err = source_next(&f.src, &r, msg, ml)) > 0) {
		if (r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2)
			err = on_mmap(&f, &r);
		else if (r.type == PERF_RECORD_TEXT_POKE)
			err = on_poke(&f, &r, msg, ml);
		else if (r.type == PERF_RECORD_FORK || r.type == PERF_RECORD_COMM)
			on_task(&f, &r);
		else if (r.type == PERF_RECORD_SAMPLE)
			err = on_sample(&f, &r.u.sample, msg, ml);
	}
	source_close(&f.src);
	if (err >= 0 && !f.prof && !f.fn_called)
		err = pmusim_fail(msg, ml, PMUSIM_ERR_ARG, "%s holds no samples of the program",
		                  path);
	if (err < 0) {
		profile_free(f.prof);
		binary_free(f.bin);
		return err;
	}
	*prof = f.prof;
	*bin = f.bin;
	return 0;
}

/* The trigger of the recording's chosen event (text: taken branches). */
static int recording_trigger(const char *path, const struct input_opts *io)
{
	struct perfdata *pd;
	char msg[256];
	if (perfdata_open(path, &pd, msg, sizeof(msg)) < 0)
		return TRIG_TAKEN;
	size_t ev = io->event < 0 ? 0 : (size_t)io->event;
	int trigger = ev < perfdata_nevents(pd)
			      ? trigger_of_event(perfdata_event(pd, ev)->type, perfdata_event(pd, ev)->config)
			      : TRIG_TAKEN;
	perfdata_close(pd);
	return trigger;
}

static int read_all(const char *path, const struct input_opts *io, const struct profile_opts *po,
		    struct profile **prof, struct binary **bin, char *msg, size_t ml)
{
	return read_pass(path, io, po, NULL, NULL, prof, bin, msg, ml);
}

int input_each_sample(const char *path, const struct input_opts *io, input_sample_fn fn, void *ctx,
		      struct binary **bin, char *msg, size_t ml)
{
	struct profile *prof = NULL;
	struct profile_opts po = {0};
	return read_pass(path, io, &po, fn, ctx, &prof, bin, msg, ml);
}

int input_profile(const char *path, const struct input_opts *io, const struct profile_opts *po,
                  struct profile **prof, struct binary **bin, char *msg, size_t ml)
{
	int trigger = po->method == METHOD_CBT ? recording_trigger(path, io) : TRIG_TAKEN;
	int in_time = trigger == TRIG_INSNS || trigger == TRIG_CYCLES;
	if (po->method != METHOD_CBT || (trigger < TRIG_COND && !in_time) || (in_time ? po->span : po->cbt))
		return read_all(path, io, po, prof, bin, msg, ml);
	/* A census of the recording first: the window, in events of a trigger that
	 * not every branch is or in instructions or cycles, is as long as every full
	 * trace covers whole, so that no sample misses part of its window (a sample
	 * that did would count the branches there less often than the others). */
	struct profile_opts census = *po;
	census.census = 1;
	int err = read_all(path, io, &census, prof, bin, msg, ml);
	if (err < 0)
		return err;
	census.census = 0;
	census.lbr_depth = profile_depth(*prof);
	if (in_time)
		census.span = profile_census_window(*prof, 0);
	else
		census.cbt = profile_census_window(*prof, 0);
	profile_free(*prof);
	binary_free(*bin);
	return read_all(path, io, &census, prof, bin, msg, ml);
}
