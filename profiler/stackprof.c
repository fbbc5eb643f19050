/* Stack profile of a recording (see stackprof.h): callchains split by their
 * context markers (perf_event.h enum perf_callchain_context), frames named
 * through profiler/symbolize.h, names and call paths interned in keytabs and
 * counted in arrays indexed by their numbers. */
#include "profiler/stackprof.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "profiler/keytab.h"
#include "profiler/perfdata.h"
#include "profiler/symbolize.h"


struct fstat {
	uint64_t total, self, total_weight, self_weight;
	uint64_t stamp; /* the last sample (1-based) that counted in total */
};

struct stackprof {
	struct stackprof_summary sum;
	char *event;
	struct keytab *names, *paths, *tids;
	struct fstat *fs; /* by name number */
	size_t fcap;
	struct pstat {
		uint64_t samples, weight;
	} * ps; /* by path number */
	size_t pcap;
	int comm;                /* opts.comm */
	struct keytab *comm_tid; /* tids with a known command name */
	uint32_t *comm_of;       /* by comm_tid number: a name number */
	size_t ccap;
	uint32_t *frames; /* scratch: one sample's name numbers */
	size_t frcap;
	struct symbolizer *z;
	struct stackprof_sample *seq; /* every sample used, in the file's order */
	size_t nseq, capseq;
	/* results */
	struct stackprof_func *funcs;
	size_t nfuncs;
	struct stackprof_path *outp;
	const char **outframes;
	size_t noutp;
};

/* Makes *arr (elements of sz bytes) hold at least n, zeroing new ones; 0 or -1. */
static int fit(void **arr, size_t *cap, size_t n, size_t sz)
{
	if (n <= *cap)
		return 0;
	size_t nc = *cap ? *cap : 64;
	while (nc < n)
		nc *= 2;
	unsigned char *p = realloc(*arr, nc * sz);
	if (!p)
		return -1;
	memset(p + *cap * sz, 0, (nc - *cap) * sz);
	*arr = p;
	*cap = nc;
	return 0;
}

/* The number of a name, with its function counters made room for; -1 on NOMEM. */
static long name_id(struct stackprof *sp, const char *name)
{
	long id = keytab_put(sp->names, name, strlen(name) + 1, NULL);
	if (id < 0 || fit((void **)&sp->fs, &sp->fcap, (size_t)id + 1, sizeof(*sp->fs)) < 0)
		return -1;
	return id;
}

/* The name of the frame at addr (looked up at look: addr or a return address - 1). */
static long frame_id(struct stackprof *sp, uint32_t pid, uint64_t addr, uint64_t look)
{
	struct sym_place p;
	char buf[320];
	if (!symbolizer_place(sp->z, pid, look, &p))
		return name_id(sp, "[unknown]");
	if (p.sym)
		return name_id(sp, symtab_perf_alias(p.st, p.sym)->name);
	const char *base = strrchr(p.path, '/') ? strrchr(p.path, '/') + 1 : p.path;
	snprintf(buf, sizeof(buf), "%.250s+0x%" PRIx64, base, p.file_off + (addr - look));
	return name_id(sp, buf);
}

/* The user frames of a chain, innermost first, into sp->frames; their count or -1. */
static long chain_frames(struct stackprof *sp, const struct perf_sample *s)
{
	int user = 1, first = 1;
	size_t n = 0;
	for (uint64_t i = 0; i < s->nchain; i++) {
		uint64_t a = s->chain[i];
		if (a >= PERF_CONTEXT_MAX) {
			user = a == PERF_CONTEXT_USER;
			continue;
		}
		if (!user)
			continue;
		if (fit((void **)&sp->frames, &sp->frcap, n + 2, sizeof(*sp->frames)) < 0)
			return -1;
		long id = frame_id(sp, s->pid, a, first ? a : a - 1);
		if (id < 0)
			return -1;
		sp->frames[n++] = (uint32_t)id;
		first = 0;
	}
	return (long)n;
}

/* The command name of tid as a name number, or -1 when none is known. */
static long comm_name(const struct stackprof *sp, uint32_t tid)
{
	long c = keytab_find(sp->comm_tid, &tid, sizeof(tid));
	return c < 0 ? -1 : (long)sp->comm_of[c];
}

static int set_comm(struct stackprof *sp, uint32_t tid, long name)
{
	long c = keytab_put(sp->comm_tid, &tid, sizeof(tid), NULL);
	if (c < 0 || name < 0 || fit((void **)&sp->comm_of, &sp->ccap, (size_t)c + 1, 4) < 0)
		return PMUSIM_ERR_NOMEM;
	sp->comm_of[c] = (uint32_t)name;
	return 0;
}

static int on_task(struct stackprof *sp, const struct perf_record *r)
{
	if (r->type == PERF_RECORD_COMM)
		return set_comm(sp, r->u.comm.tid,
		                name_id(sp, r->u.comm.comm ? r->u.comm.comm : ""));
	long parent = comm_name(sp, r->u.task.ptid); /* FORK: the child has its parent's */
	if (r->type == PERF_RECORD_FORK && parent >= 0 && comm_name(sp, r->u.task.tid) < 0)
		return set_comm(sp, r->u.task.tid, parent);
	return 0;
}

static int add_sample(struct stackprof *sp, const struct perf_sample *s, uint64_t w)
{
	long n = chain_frames(sp, s);
	if (n < 0)
		return PMUSIM_ERR_NOMEM;
	if (n == 0) {
		sp->sum.skipped++;
		return 0;
	}
	uint64_t stamp = ++sp->sum.samples;
	sp->sum.weight += w;
	for (long i = 0; i < n; i++) {
		struct fstat *f = &sp->fs[sp->frames[i]];
		if (f->stamp != stamp) { /* recursion counts once */
			f->stamp = stamp;
			f->total++;
			f->total_weight += w;
		}
	}
	sp->fs[sp->frames[0]].self++;
	sp->fs[sp->frames[0]].self_weight += w;
	/* the path: outermost first, after the command name when asked for
	 * (chain_frames left room for one more) */
	size_t k = sp->comm ? 1 : 0;
	arrays_move(sp->frames + k, sp->frames, (size_t)n, sizeof(*sp->frames));
	for (size_t i = k, j = k + (size_t)n - 1; i < j; i++, j--) {
		uint32_t t = sp->frames[i];
		sp->frames[i] = sp->frames[j], sp->frames[j] = t;
	}
	if (k) {
		long c = comm_name(sp, s->tid);
		if (c < 0 && (c = name_id(sp, "[unknown]")) < 0)
			return PMUSIM_ERR_NOMEM;
		sp->frames[0] = (uint32_t)c;
	}
	long p = keytab_put(sp->paths, sp->frames, (k + (size_t)n) * sizeof(*sp->frames), NULL);
	if (p < 0 || fit((void **)&sp->ps, &sp->pcap, (size_t)p + 1, sizeof(*sp->ps)) < 0 ||
	    fit((void **)&sp->seq, &sp->capseq, sp->nseq + 1, sizeof(*sp->seq)) < 0)
		return PMUSIM_ERR_NOMEM;
	sp->seq[sp->nseq++] = (struct stackprof_sample){s->tid, s->time, w, (size_t)p};
	sp->ps[p].samples++;
	sp->ps[p].weight += w;
	return keytab_put(sp->tids, &s->tid, sizeof(s->tid), NULL) < 0 ? PMUSIM_ERR_NOMEM : 0;
}

/* The event whose samples count: pmusim_tstack, else opts->event, else -1 (all). */
static int pick_event(struct perfdata *pd, const char *path, const struct stackprof_opts *o,
                      int *ev, char *msg, size_t ml)
{
	size_t nev = perfdata_nevents(pd);
	*ev = o->event;
	for (size_t i = 0; i < nev; i++) {
		const char *name = perfdata_event(pd, i)->name;
		if (name && strcmp(name, STACKPROF_EVENT) == 0)
			*ev = (int)i;
	}
	if (*ev >= 0 && (size_t)*ev >= nev)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARG, "%s has %zu event(s)", path, nev);
	int chains = 0;
	for (size_t i = 0; i < nev; i++)
		if (*ev < 0 || (size_t)*ev == i)
			chains |= (perfdata_event(pd, i)->sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
	if (!chains)
		return pmusim_fail(
		    msg, ml, PMUSIM_ERR_ARG,
		    "%s has no callchains (record with pmusim record --tstack or perf record -g)",
		    path);
	return 0;
}

/* Reads every record: mappings and names as they come, samples of event ev. */
static int read_records(struct stackprof *sp, struct perfdata *pd, int ev, char *msg, size_t ml)
{
	struct perf_record r;
	int err;
	while ((err = perfdata_next(pd, &r, msg, ml)) > 0) {
		if (r.type != PERF_RECORD_SAMPLE) {
			if ((err = symbolizer_record(sp->z, &r)) < 0 ||
			    (sp->comm && (err = on_task(sp, &r)) < 0))
				return err;
			continue;
		}
		int e = perfdata_event_of_id(pd, r.u.sample.id);
		e = e < 0 ? 0 : e;
		if (ev >= 0 && e != ev)
			continue;
		const struct perfdata_event *pe = perfdata_event(pd, (size_t)e);
		uint64_t w =
		    pe->sample_type & PERF_SAMPLE_PERIOD ? r.u.sample.period : pe->sample_period;
		if ((err = add_sample(sp, &r.u.sample, w)) < 0)
			return err;
	}
	return err;
}

static int cmp_func(const void *a, const void *b)
{
	const struct stackprof_func *x = a, *y = b;
	if (x->total_weight != y->total_weight)
		return x->total_weight > y->total_weight ? -1 : 1;
	if (x->total != y->total)
		return x->total > y->total ? -1 : 1;
	if (x->self_weight != y->self_weight)
		return x->self_weight > y->self_weight ? -1 : 1;
	return strcmp(x->name, y->name);
}

static int cmp_path(const void *a, const void *b)
{
	const struct stackprof_path *x = a, *y = b;
	if (x->weight != y->weight)
		return x->weight > y->weight ? -1 : 1;
	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	for (size_t i = 0; i < x->depth && i < y->depth; i++) {
		int c = strcmp(x->frames[i], y->frames[i]);
		if (c)
			return c;
	}
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

/* The sorted tables of stackprof_functions and stackprof_paths. */
static int finish(struct stackprof *sp)
{
	size_t nn = keytab_count(sp->names), np = keytab_count(sp->paths), nframes = 0;
	sp->funcs = calloc(nn + 1, sizeof(*sp->funcs));
	sp->outp = calloc(np + 1, sizeof(*sp->outp));
	for (size_t i = 0; i < np; i++) {
		size_t len;
		keytab_key(sp->paths, i, &len);
		nframes += len / sizeof(uint32_t);
	}
	sp->outframes = calloc(nframes + 1, sizeof(*sp->outframes));
	if (!sp->funcs || !sp->outp || !sp->outframes)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < nn; i++) {
		const struct fstat *f = &sp->fs[i];
		if (f->total)
			sp->funcs[sp->nfuncs++] =
			    (struct stackprof_func){keytab_key(sp->names, i, NULL), f->total,
			                            f->self, f->total_weight, f->self_weight};
	}
	const char **fr = sp->outframes;
	for (size_t i = 0; i < np; i++) {
		size_t len;
		const uint32_t *ids = keytab_key(sp->paths, i, &len);
		struct stackprof_path *p = &sp->outp[sp->noutp++];
		p->frames = fr;
		p->depth = len / sizeof(*ids);
		p->samples = sp->ps[i].samples;
		p->weight = sp->ps[i].weight;
		for (size_t j = 0; j < p->depth; j++)
			*fr++ = keytab_key(sp->names, ids[j], NULL);
	}
	arrays_sort(sp->funcs, sp->nfuncs, sizeof(*sp->funcs), cmp_func);
	arrays_sort(sp->outp, sp->noutp, sizeof(*sp->outp), cmp_path);
	return 0;
}

void stackprof_free(struct stackprof *sp)
{
	if (sp)
		free(sp->seq);
	if (!sp)
		return;
	free(sp->event);
	keytab_free(sp->names);
	keytab_free(sp->paths);
	keytab_free(sp->tids);
	keytab_free(sp->comm_tid);
	free(sp->fs);
	free(sp->ps);
	free(sp->comm_of);
	free(sp->frames);
	symbolizer_free(sp->z);
	free(sp->funcs);
	free(sp->outp);
	free(sp->outframes);
	free(sp);
}

int stackprof_read(const char *path, const struct stackprof_opts *opts, struct stackprof **out,
                   char *msg, size_t ml)
{
	struct perfdata *pd;
	*out = NULL;
	int ev, err = perfdata_open(path, &pd, msg, ml);
	if (err < 0)
		return err;
	if ((err = pick_event(pd, path, opts, &ev, msg, ml)) < 0) {
		perfdata_close(pd);
		return err;
	}
	struct stackprof *sp = calloc(1, sizeof(*sp));
	if (sp) {
		sp->comm = opts->comm;
		sp->names = keytab_new(), sp->paths = keytab_new(), sp->tids = keytab_new();
		sp->comm_tid = keytab_new();
		sp->z = symbolizer_new();
	}
	size_t one = ev >= 0 ? (size_t)ev : 0; /* the event used, when only one is */
	const char *evname =
	    ev >= 0 || perfdata_nevents(pd) == 1 ? perfdata_event(pd, one)->name : NULL;
	if (!sp || !sp->names || !sp->paths || !sp->tids || !sp->comm_tid || !sp->z ||
	    (evname && !(sp->event = strdup(evname))))
		err = PMUSIM_ERR_NOMEM;
	if (err == 0)
		err = read_records(sp, pd, ev, msg, ml);
	perfdata_close(pd); /* evname is gone; sp->event is its copy */
	if (err == 0 && sp->sum.samples == 0)
		err = pmusim_fail(
		    msg, ml, PMUSIM_ERR_ARG,
		    "%s has no callchains: no sample%s%s has user addresses (record with "
		    "pmusim record --tstack or perf record -g)",
		    path, sp->event ? " of " : "", sp->event ? sp->event : "");
	if (err == 0)
		err = finish(sp);
	if (err < 0) {
		stackprof_free(sp);
		return err == PMUSIM_ERR_NOMEM
		           ? pmusim_fail(msg, ml, err, "%s: out of memory", path)
		           : err;
	}
	sp->sum.threads = keytab_count(sp->tids);
	sp->sum.event = sp->event;
	*out = sp;
	return 0;
}

const struct stackprof_summary *stackprof_summary(const struct stackprof *sp)
{
	return &sp->sum;
}

const struct stackprof_func *stackprof_functions(const struct stackprof *sp, size_t *n)
{
	*n = sp->nfuncs;
	return sp->funcs;
}

const struct stackprof_path *stackprof_paths(const struct stackprof *sp, size_t *n)
{
	*n = sp->noutp;
	return sp->outp;
}

const struct stackprof_sample *stackprof_samples(const struct stackprof *sp, size_t *n)
{
	*n = sp->nseq;
	return sp->seq;
}

const uint32_t *stackprof_path_frames(const struct stackprof *sp, size_t path, size_t *depth)
{
	size_t len;
	const uint32_t *ids = keytab_key(sp->paths, path, &len);
	*depth = len / sizeof(*ids);
	return ids;
}

size_t stackprof_names(const struct stackprof *sp)
{
	return keytab_count(sp->names);
}

const char *stackprof_name(const struct stackprof *sp, size_t i)
{
	return keytab_key(sp->names, i, NULL);
}
