/* The overhead table (profiler/overhead.h): every sample of the event placed by
 * the symbolizer, turned into its group's key text, then the groups summed by
 * sorting the keys. Column names and layout follow perf 6.1's util/sort.c and
 * ui/stdio/hist.c (headers "Overhead", "Command", "Pid:Command", "Shared
 * Object", "Symbol"; "%7d:%s" for a thread; "[.] " before user symbols). */
#include "profiler/overhead.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/wordlist.h"
#include "profiler/perfdata.h"
#include "profiler/plt_names.h"
#include "profiler/symbolize.h"

struct ovh_sample {
	char *key[OVH_NKEYS]; /* the text of each requested column, in column order */
	uint64_t period;
	char *hottest; /* unsymbolised code: "dso+0xOFF" of the sample's address */
};

struct ovh_row {
	char *col[OVH_MAX_KEYS];
	uint64_t period, samples;
};

struct tid_comm {
	uint32_t tid;
	char *comm;
};

struct plt_file {
	char *path;
	struct plt_names *names;
};

struct overhead {
	struct plt_file *plts;
	size_t nplts;
	struct overhead_opts o;
	char *event, *program;
	uint64_t nsamples, period, total_period, all_samples;
	struct ovh_row *rows;
	size_t nrows;
	struct tid_comm *comms;
	size_t ncomms, ccomms;
	struct ovh_sample *s;
	size_t ns, cs;
};

static const char *const key_names[OVH_NKEYS] = {"comm", "pid", "dso", "sym"};
static const char *const key_heads[OVH_NKEYS] = {"Command", "    Pid:Command", "Shared Object",
                                                 "Symbol"};

int overhead_parse_sort(struct overhead_opts *o, const char *list, char *msg, size_t msglen)
{
	o->nkeys = 0;
	const char *p = list;
	while (*p) {
		size_t len = strcspn(p, ",");
		int k = 0;
		while (k < OVH_NKEYS &&
		       !(strlen(key_names[k]) == len && strncmp(p, key_names[k], len) == 0))
			k++;
		if (k == OVH_NKEYS && len == 6 && strncmp(p, "symbol", 6) == 0)
			k = OVH_SYM;
		if (k == OVH_NKEYS)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "unknown sort key '%.*s' (comm, pid, dso, sym)",
			                   (int)len, p);
		if (o->nkeys == OVH_MAX_KEYS)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "more than %d sort keys",
			                   OVH_MAX_KEYS);
		o->keys[o->nkeys++] = (enum ovh_key)k;
		p += len + (p[len] == ',');
	}
	if (o->nkeys == 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "empty sort key list");
	return 0;
}

static struct tid_comm *find_tid(struct overhead *ov, uint32_t tid)
{
	for (size_t i = ov->ncomms; i-- > 0;)
		if (ov->comms[i].tid == tid)
			return &ov->comms[i];
	return NULL;
}

/* A thread's command: the latest COMM, else the parent's at FORK (perf's thread
 * comm). */
static int set_comm(struct overhead *ov, uint32_t tid, const char *comm)
{
	char *c = strdup(comm);
	if (!c)
		return PMUSIM_ERR_NOMEM;
	struct tid_comm *t = find_tid(ov, tid);
	if (t) {
		free(t->comm);
		t->comm = c;
		return 0;
	}
	if (ov->ncomms == ov->ccomms) {
		size_t nc = ov->ccomms ? 2 * ov->ccomms : 16;
		struct tid_comm *m = realloc(ov->comms, nc * sizeof(*m));
		if (!m)
			return free(c), PMUSIM_ERR_NOMEM;
		ov->comms = m;
		ov->ccomms = nc;
	}
	ov->comms[ov->ncomms++] = (struct tid_comm){tid, c};
	return 0;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

/* A program, not a library: a file name without ".so" (the program is what the
 * header names). */
static int is_program(const char *path)
{
	return path[0] == '/' && !strstr(base_name(path), ".so");
}

/* The PLT entry name of a place without a symbol, as perf makes one; NULL if none. */
static const char *plt_name(struct overhead *ov, const struct sym_place *p)
{
	size_t i = 0;
	while (i < ov->nplts && strcmp(ov->plts[i].path, p->path) != 0)
		i++;
	if (i == ov->nplts) {
		struct plt_file *m = realloc(ov->plts, (ov->nplts + 1) * sizeof(*m));
		if (!m)
			return NULL;
		ov->plts = m;
		m[i].path = strdup(p->path);
		m[i].names = m[i].path ? plt_names_read(p->path) : NULL;
		if (!m[i].names) {
			free(m[i].path);
			return NULL;
		}
		ov->nplts++;
	}
	return plt_names_lookup(ov->plts[i].names, p->file_off);
}

static int add_sample(struct overhead *ov, struct symbolizer *z, const struct perf_sample *s)
{
	struct tid_comm *t = find_tid(ov, s->tid);
	if (!t)
		t = find_tid(ov, s->pid);
	char comm_buf[16], text[400];
	snprintf(comm_buf, sizeof(comm_buf), ":%" PRIu32, s->tid);
	const char *comm = t ? t->comm : comm_buf;
	if (ov->o.comms && !word_listed(ov->o.comms, ',', comm))
		return 0;
	struct sym_place p;
	int placed = symbolizer_place(z, s->pid, s->ip, &p);
	const char *plt = placed && !p.sym ? plt_name(ov, &p) : NULL;
	if (ov->ns == ov->cs) {
		size_t nc = ov->cs ? 2 * ov->cs : 256;
		struct ovh_sample *m = realloc(ov->s, nc * sizeof(*m));
		if (!m)
			return PMUSIM_ERR_NOMEM;
		ov->s = m;
		ov->cs = nc;
	}
	struct ovh_sample *o = &ov->s[ov->ns];
	memset(o, 0, sizeof(*o));
	o->period = s->period;
	for (size_t k = 0; k < ov->o.nkeys; k++) {
		switch (ov->o.keys[k]) {
		case OVH_COMM:
			snprintf(text, sizeof(text), "%s", comm);
			break;
		case OVH_PID:
			snprintf(text, sizeof(text), "%7" PRIu32 ":%s", s->tid, comm);
			break;
		case OVH_DSO:
			snprintf(text, sizeof(text), "%s",
			         placed ? base_name(p.path) : "[unknown]");
			break;
		case OVH_SYM:
			if (placed && p.sym)
				snprintf(text, sizeof(text), "[.] %.380s",
				         symtab_perf_alias(p.st, p.sym)->name);
			else if (plt)
				snprintf(text, sizeof(text), "[.] %.380s", plt);
			else if (placed)
				/* one group per dso: the dso's name keeps groups of different files
				 * apart */
				snprintf(text, sizeof(text), "[.] [unsymbolised] %.300s",
				         base_name(p.path));
			else
				snprintf(text, sizeof(text), "[.] [unsymbolised] [unknown]");
			break;
		default:
			return PMUSIM_ERR_INTERNAL;
		}
		if (!(o->key[k] = strdup(text)))
			return PMUSIM_ERR_NOMEM;
	}
	if (!(placed && p.sym) && !plt) {
		if (placed)
			snprintf(text, sizeof(text), "%.300s+0x%" PRIx64, base_name(p.path),
			         p.file_off);
		else
			snprintf(text, sizeof(text), "0x%016" PRIx64, s->ip);
		if (!(o->hottest = strdup(text)))
			return PMUSIM_ERR_NOMEM;
	}
	ov->ns++;
	ov->nsamples++;
	ov->period += s->period;
	return 0;
}

static int cmp_keys_prefix(const struct ovh_sample *x, const struct ovh_sample *y, size_t nkeys)
{
	for (size_t k = 0; k < nkeys; k++) {
		int c = strcmp(x->key[k], y->key[k]);
		if (c)
			return c;
	}
	return 0;
}

/* qsort_r comparators (glibc's argument order): ctx is the number of keys. */
static int cmp_keys(const void *a, const void *b, void *ctx)
{
	const struct ovh_sample *x = a, *y = b;
	int c = cmp_keys_prefix(x, y, *(const size_t *)ctx);
	if (c)
		return c;
	if (!x->hottest || !y->hottest)
		return (x->hottest != NULL) - (y->hottest != NULL);
	return strcmp(x->hottest, y->hottest);
}

static int cmp_rows(const void *a, const void *b, void *ctx)
{
	const struct ovh_row *x = a, *y = b;
	if (x->period != y->period)
		return x->period > y->period ? -1 : 1;
	for (size_t k = 0; k < *(const size_t *)ctx; k++) {
		int c = strcmp(x->col[k], y->col[k]);
		if (c)
			return c;
	}
	return 0;
}

/* One row per run of equal keys; an unsymbolised group names its address
 * count and its heaviest address. */
static int make_rows(struct overhead *ov)
{
	size_t nkeys = ov->o.nkeys;
	if (ov->ns > 1)
		qsort_r(ov->s, ov->ns, sizeof(*ov->s), cmp_keys, &nkeys);
	ov->rows = calloc(ov->ns + 1, sizeof(*ov->rows));
	if (!ov->rows)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < ov->ns;) {
		size_t j = i, naddr = 0;
		uint64_t best = 0, cur = 0, period = 0;
		const char *hot = NULL;
		while (j < ov->ns &&
		       (j == i || cmp_keys_prefix(&ov->s[i], &ov->s[j], nkeys) == 0)) {
			period += ov->s[j].period;
			if (ov->s[j].hottest) {
				int fresh = j == i || !ov->s[j - 1].hottest ||
				            strcmp(ov->s[j - 1].hottest, ov->s[j].hottest);
				cur = fresh ? ov->s[j].period : cur + ov->s[j].period;
				naddr += fresh;
				if (cur > best || (cur == best && fresh && !hot))
					best = cur, hot = ov->s[j].hottest;
			}
			j++;
		}
		struct ovh_row *r = &ov->rows[ov->nrows++];
		r->period = period;
		r->samples = j - i;
		for (size_t k = 0; k < ov->o.nkeys; k++) {
			char text[600];
			const char *c = ov->s[i].key[k];
			if (ov->o.keys[k] == OVH_SYM && ov->s[i].hottest)
				snprintf(text, sizeof(text),
				         "[.] [unsymbolised: %zu address%s, hottest %.400s]", naddr,
				         naddr == 1 ? "" : "es", hot);
			else
				snprintf(text, sizeof(text), "%s", c);
			if (!(r->col[k] = strdup(text)))
				return PMUSIM_ERR_NOMEM;
		}
		i = j;
	}
	if (ov->nrows > 1)
		qsort_r(ov->rows, ov->nrows, sizeof(*ov->rows), cmp_rows, &nkeys);
	return 0;
}

/* The event index of o->event, its name, and the records read. */
static int read_records(struct overhead *ov, struct perfdata *pd, int ev, char *msg, size_t ml)
{
	struct symbolizer *z = symbolizer_new();
	if (!z)
		return PMUSIM_ERR_NOMEM;
	struct perf_record r;
	int err;
	while ((err = perfdata_next(pd, &r, msg, ml)) > 0) {
		if (r.type == PERF_RECORD_COMM)
			err = set_comm(ov, r.u.comm.tid, r.u.comm.comm);
		else if (r.type == PERF_RECORD_FORK && !find_tid(ov, r.u.task.tid) &&
		         find_tid(ov, r.u.task.ptid))
			err = set_comm(ov, r.u.task.tid, find_tid(ov, r.u.task.ptid)->comm);
		else if ((r.type == PERF_RECORD_MMAP || r.type == PERF_RECORD_MMAP2) &&
		         !ov->program && (r.type == PERF_RECORD_MMAP || (r.u.mmap.prot & 4)) &&
		         is_program(r.u.mmap.filename))
			err = (ov->program = strdup(r.u.mmap.filename)) ? 0 : PMUSIM_ERR_NOMEM;
		if (err >= 0 && r.type != PERF_RECORD_SAMPLE)
			err = symbolizer_record(z, &r);
		if (err >= 0 && r.type == PERF_RECORD_SAMPLE &&
		    perfdata_event_of_id(pd, r.u.sample.id) == ev) {
			ov->total_period += r.u.sample.period;
			ov->all_samples++;
			err = add_sample(ov, z, &r.u.sample);
		}
		if (err < 0)
			break;
	}
	symbolizer_free(z);
	if (err < 0 && !msg[0])
		pmusim_fail(msg, ml, err, "%s", pmusim_strerror(err));
	return err < 0 ? err : 0;
}

int overhead_read(const char *path, const struct overhead_opts *o, struct overhead **out, char *msg,
                  size_t msglen)
{
	struct perfdata *pd;
	*out = NULL;
	msg[0] = 0;
	int err = perfdata_open(path, &pd, msg, msglen);
	if (err < 0)
		return err;
	int ev = o->event < 0 ? 0 : o->event;
	if ((size_t)ev >= perfdata_nevents(pd)) {
		err = pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "%s has %zu event(s), no event %d",
		                  path, perfdata_nevents(pd), ev);
		perfdata_close(pd);
		return err;
	}
	struct overhead *ov = calloc(1, sizeof(*ov));
	if (!ov)
		return perfdata_close(pd), PMUSIM_ERR_NOMEM;
	ov->o = *o;
	if (ov->o.nkeys == 0) {
		ov->o.keys[0] = OVH_COMM, ov->o.keys[1] = OVH_DSO, ov->o.keys[2] = OVH_SYM;
		ov->o.nkeys = 3;
	}
	const char *name = perfdata_event(pd, (size_t)ev)->name;
	if (name && !(ov->event = strdup(name)))
		err = PMUSIM_ERR_NOMEM;
	if (err >= 0)
		err = read_records(ov, pd, ev, msg, msglen);
	perfdata_close(pd);
	if (err >= 0)
		err = make_rows(ov);
	if (err < 0) {
		if (!msg[0])
			pmusim_fail(msg, msglen, err, "%s", pmusim_strerror(err));
		overhead_free(ov);
		return err;
	}
	*out = ov;
	return 0;
}

void overhead_free(struct overhead *ov)
{
	if (!ov)
		return;
	for (size_t i = 0; i < ov->ns; i++) {
		for (size_t k = 0; k < OVH_NKEYS; k++)
			free(ov->s[i].key[k]);
		free(ov->s[i].hottest);
	}
	for (size_t i = 0; i < ov->nrows; i++)
		for (size_t k = 0; k < OVH_MAX_KEYS; k++)
			free(ov->rows[i].col[k]);
	for (size_t i = 0; i < ov->ncomms; i++)
		free(ov->comms[i].comm);
	free(ov->comms);
	for (size_t i = 0; i < ov->nplts; i++) {
		free(ov->plts[i].path);
		plt_names_free(ov->plts[i].names);
	}
	free(ov->plts);
	free(ov->s);
	free(ov->rows);
	free(ov->event);
	free(ov->program);
	free(ov);
}

uint64_t overhead_total_period(const struct overhead *ov)
{
	return ov->total_period;
}

size_t overhead_nrows(const struct overhead *ov)
{
	return ov->nrows;
}

const char *overhead_row(const struct overhead *ov, size_t i, size_t k, uint64_t *period, uint64_t *samples)
{
	*period = ov->rows[i].period, *samples = ov->rows[i].samples;
	return ov->rows[i].col[k];
}

uint64_t overhead_samples(const struct overhead *ov)
{
	return ov->nsamples;
}
uint64_t overhead_all_samples(const struct overhead *ov)
{
	return ov->all_samples;
}
const char *overhead_event(const struct overhead *ov)
{
	return ov->event;
}
const char *overhead_program(const struct overhead *ov)
{
	return ov->program;
}

static void put_dots(FILE *f, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fputc('.', f);
}

int overhead_write_text(FILE *f, const struct overhead *ov)
{
	size_t w[OVH_MAX_KEYS];
	for (size_t k = 0; k < ov->o.nkeys; k++) {
		w[k] = strlen(key_heads[ov->o.keys[k]]);
		for (size_t i = 0; i < ov->nrows; i++)
			if (strlen(ov->rows[i].col[k]) > w[k])
				w[k] = strlen(ov->rows[i].col[k]);
	}
	fprintf(f,
	        "# Samples: %" PRIu64 "  of event '%s'\n# Event count: %" PRIu64
	        "\n# Program: %s\n#\n",
	        ov->nsamples, ov->event ? ov->event : "?", ov->total_period,
	        ov->program ? ov->program : "?");
	fprintf(f, "# Overhead");
	for (size_t k = 0; k < ov->o.nkeys; k++)
		fprintf(f, "  %-*s", k + 1 < ov->o.nkeys ? (int)w[k] : 0, key_heads[ov->o.keys[k]]);
	fprintf(f, "\n# ........");
	for (size_t k = 0; k < ov->o.nkeys; k++) {
		fputs("  ", f);
		put_dots(f, w[k]);
	}
	fputs("\n#\n", f);
	for (size_t i = 0; i < ov->nrows; i++) {
		const struct ovh_row *r = &ov->rows[i];
		double pct =
		    ov->total_period ? 100.0 * (double)r->period / (double)ov->total_period : 0;
		fprintf(f, "  %7.2f%%", pct);
		for (size_t k = 0; k < ov->o.nkeys; k++)
			fprintf(f, "  %-*s", k + 1 < ov->o.nkeys ? (int)w[k] : 0, r->col[k]);
		fputc('\n', f);
	}
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
