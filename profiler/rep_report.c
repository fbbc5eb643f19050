/* The REP report (see rep_report.h). */
#include "profiler/rep_report.h"

#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/infile.h"
#include "common/json.h"
#include "pmu_model/rep.h"
#include "profiler/perfdata.h"
#include "profiler/symbolize.h"

static uint64_t u64_of(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return v;
}

static uint64_t sat_add(uint64_t a, uint64_t b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

/* Executions whose last record so far left them in the middle (end 2): a resumed
 * record of the same thread and site goes on with the newest of them. Their actual
 * counts are summed until they end, for min and max per execution. */
struct open_exec {
	uint32_t tid;
	uint64_t site, actual;
};
struct open_list {
	struct open_exec *v;
	size_t n, cap;
};

static void row_extent(struct rep_row *row, uint64_t act)
{
	row->min = act < row->min ? act : row->min;
	row->max = act > row->max ? act : row->max;
}

/* One part of an execution with act iterations; ended: it did not end in the middle.
 * 0 or PMUSIM_ERR_NOMEM. */
static int row_part(struct rep_row *row, struct open_list *ol, uint32_t tid, int resumed, int ended, uint64_t act)
{
	size_t k = ol->n;
	if (resumed)
		while (k > 0 && !(ol->v[k - 1].tid == tid && ol->v[k - 1].site == row->site))
			k--;
	if (k > 0 && resumed) {
		struct open_exec *o = &ol->v[k - 1];
		o->actual += act;
		if (ended) {
			row_extent(row, o->actual);
			arrays_move(o, o + 1, ol->n - k, sizeof(*o));
			ol->n--;
		}
		return 0;
	}
	if (ended) {
		row_extent(row, act);
		return 0;
	}
	if (ol->n == ol->cap) {
		size_t nc = ol->cap ? ol->cap * 2 : 16;
		struct open_exec *nv = realloc(ol->v, nc * sizeof(*nv));
		if (!nv)
			return PMUSIM_ERR_NOMEM;
		ol->v = nv, ol->cap = nc;
	}
	ol->v[ol->n++] = (struct open_exec){tid, row->site, act};
	return 0;
}

/* Rows by site: the array the caller gets, and an open-addressing table of
 * indices into it (0 free, else index + 1), kept at most half full, so a
 * recording with many distinct sites is read in linear time. */
struct site_rows {
	struct rep_row *v;
	size_t n, cap;
	size_t *slot;
	size_t nslot; /* a power of two, or 0 before the first row */
};

static size_t site_hash(uint64_t site, size_t nslot)
{
	/* Fibonacci hashing: sites are often close together and aligned */
	return (size_t)((site * 0x9e3779b97f4a7c15ull) >> 17) & (nslot - 1);
}

static struct rep_row *site_find(const struct site_rows *sr, uint64_t site)
{
	if (!sr->nslot)
		return NULL;
	for (size_t h = site_hash(site, sr->nslot);; h = (h + 1) & (sr->nslot - 1)) {
		size_t k = sr->slot[h];
		if (!k)
			return NULL;
		if (sr->v[k - 1].site == site)
			return &sr->v[k - 1];
	}
}

static void site_place(struct site_rows *sr, size_t i)
{
	size_t h = site_hash(sr->v[i].site, sr->nslot);
	while (sr->slot[h])
		h = (h + 1) & (sr->nslot - 1);
	sr->slot[h] = i + 1;
}

/* The row of site, made (zero counts, min at its largest) when there is none;
 * NULL when memory ran out. */
static struct rep_row *row_for(struct site_rows *sr, uint64_t site)
{
	struct rep_row *r = site_find(sr, site);
	if (r)
		return r;
	if (2 * (sr->n + 1) > sr->nslot) {
		size_t ns = sr->nslot ? 2 * sr->nslot : 64;
		size_t *slot = calloc(ns, sizeof(*slot));
		if (!slot)
			return NULL;
		free(sr->slot);
		sr->slot = slot, sr->nslot = ns;
		for (size_t i = 0; i < sr->n; i++)
			site_place(sr, i);
	}
	if (sr->n == sr->cap) {
		size_t nc = sr->cap ? sr->cap * 2 : 32;
		struct rep_row *nr = realloc(sr->v, nc * sizeof(*nr));
		if (!nr)
			return NULL;
		sr->v = nr, sr->cap = nc;
	}
	r = &sr->v[sr->n];
	memset(r, 0, sizeof(*r));
	r->site = site;
	r->min = UINT64_MAX;
	site_place(sr, sr->n++);
	return r;
}

/* symbol+offset and the decoded instruction, from the file mapped at the site */
static void describe(struct rep_row *r, struct symbolizer *z, csh cs)
{
	struct sym_place p;
	snprintf(r->insn, sizeof(r->insn), "?");
	symbolizer_place(z, SYMBOLIZE_ANY_PID, r->site, &p);
	sym_place_text(&p, r->site, r->symbol, sizeof(r->symbol));
	if (!p.path)
		return;
	uint8_t code[16];
	FILE *f = infile_fopen(p.path, NULL);
	size_t got = 0;
	if (f && fseek(f, (long)p.file_off, SEEK_SET) == 0)
		got = fread(code, 1, sizeof(code), f);
	if (f)
		fclose(f);
	cs_insn *insn;
	if (got && cs_disasm(cs, code, got, r->site, 1, &insn) == 1) {
		snprintf(r->insn, sizeof(r->insn), "%.40s", insn->mnemonic);
		cs_free(insn, 1);
	}
}

static int cmp_site(const void *a, const void *b)
{
	const struct rep_row *x = a, *y = b;
	return x->site < y->site ? -1 : x->site > y->site;
}

int rep_report_read(const char *path, struct rep_row **rows, size_t *n, int *mode, char *msg,
		    size_t msglen)
{
	struct perfdata *pd;
	*rows = NULL;
	*n = 0;
	*mode = -1;
	int err = perfdata_open(path, &pd, msg, msglen);
	if (err < 0)
		return err;
	int ev = -1;
	for (size_t i = 0; i < perfdata_nevents(pd); i++) {
		const char *name = perfdata_event(pd, i)->name;
		if (name && strcmp(name, "pmusim_rep") == 0)
			ev = (int)i;
	}
	if (ev < 0) {
		perfdata_close(pd);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
				   "%s has no pmusim_rep event (record with pmusim record --rep MODE)", path);
	}
	/* mappings only (no FORK or exec): sites are placed after the whole file */
	struct symbolizer *z = symbolizer_new();
	struct site_rows sr = {0};
	struct open_list open = {0};
	struct perf_record r;
	while (z && (err = perfdata_next(pd, &r, msg, msglen)) > 0) {
		if (r.type == PERF_RECORD_MMAP2) {
			if ((err = symbolizer_record(z, &r)) < 0)
				break;
			continue;
		}
		if (r.type != PERF_RECORD_SAMPLE || perfdata_event_of_id(pd, r.u.sample.id) != ev)
			continue;
		const struct perf_sample *s = &r.u.sample;
		if (s->raw_size < 32) {
			err = pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT, "%s: a pmusim_rep sample has %u raw bytes, not 32",
					  path, s->raw_size);
			break;
		}
		uint32_t end, m;
		memcpy(&end, s->raw + 24, 4);
		memcpy(&m, s->raw + 28, 4);
		*mode = (int)m;
		int resumed = (end & 0x10) != 0;
		end &= ~0x10u;
		if (end == 5) /* taken-branch records only */
			continue;
		struct rep_row *row = row_for(&sr, u64_of(s->raw));
		if (!row) {
			err = PMUSIM_ERR_NOMEM;
			break;
		}
		if (end == 4) { /* a single step of an iteration */
			row->steps++;
			continue;
		}
		if (!resumed) { /* a continuation's execution and request were counted before */
			row->executions++;
			row->requested = sat_add(row->requested, u64_of(s->raw + 8));
		}
		if (end != 3) { /* the actual count is known */
			uint64_t act = u64_of(s->raw + 16);
			row->has_actual = 1;
			row->actual = sat_add(row->actual, act);
			row->by_condition += end == REP_END_CONDITION;
			if ((err = row_part(row, &open, s->tid, resumed, end != REP_END_INTERRUPTED, act)) < 0)
				break;
		}
	}
	/* executions left in the middle and never resumed ended there */
	for (size_t i = 0; i < open.n; i++) {
		struct rep_row *row = site_find(&sr, open.v[i].site);
		if (row)
			row_extent(row, open.v[i].actual);
	}
	free(open.v);
	free(sr.slot);
	*rows = sr.v;
	*n = sr.n;
	perfdata_close(pd);
	if (!z)
		err = PMUSIM_ERR_NOMEM;
	csh cs;
	if (err >= 0 && cs_open(CS_ARCH_X86, CS_MODE_64, &cs) == CS_ERR_OK) {
		for (size_t i = 0; i < *n; i++)
			describe(&(*rows)[i], z, cs);
		cs_close(&cs);
	}
	symbolizer_free(z);
	if (err < 0) {
		free(*rows);
		*rows = NULL;
		*n = 0;
		return err;
	}
	arrays_sort(*rows, *n, sizeof(**rows), cmp_site);
	return 0;
}

int rep_truth_read(const char *path, struct rep_row **rows, size_t *n, char *msg, size_t msglen)
{
	*rows = NULL;
	*n = 0;
	const char *why;
	FILE *f = infile_fopen(path, &why);
	if (!f)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_IO, "cannot open %s: %s", path, why);
	char line[1024];
	int in_rep = 0, found = 0;
	struct site_rows sr = {0};
	while (fgets(line, sizeof(line), f)) {
		if (strstr(line, "\"rep\": [")) {
			in_rep = found = 1;
			continue;
		}
		if (!in_rep)
			continue;
		const char *p = strstr(line, "{\"addr\": \"");
		if (!p)
			break; /* the end of the array */
		unsigned long long a, e, it, rq, c;
		const char *q = strstr(p, "\"executions\"");
		const char *sym = strstr(p, "\"addr_sym\": \"");
		if (sscanf(p, "{\"addr\": \"%llx\"", &a) != 1 || !q ||
		    sscanf(q, "\"executions\": %llu, \"iterations\": %llu, \"requested\": %llu, \"ended_by_condition\": %llu",
			   &e, &it, &rq, &c) != 4) {
			fclose(f);
			free(sr.v);
			free(sr.slot);
			return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
					   "%s: a REP site without executions, iterations, requested and ended_by_condition "
					   "(written by an older pmusim?)", path);
		}
		struct rep_row *r = row_for(&sr, a);
		if (!r) {
			fclose(f);
			free(sr.v);
			free(sr.slot);
			return PMUSIM_ERR_NOMEM;
		}
		r->executions = e, r->actual = it, r->requested = rq, r->by_condition = c, r->has_actual = 1;
		snprintf(r->insn, sizeof(r->insn), "?");
		if (sym)
			snprintf(r->symbol, sizeof(r->symbol), "%.*s", (int)strcspn(sym + 13, "\""), sym + 13);
	}
	fclose(f);
	free(sr.slot);
	if (!found) {
		free(sr.v);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT, "%s has no \"rep\" array (use --truth-json)", path);
	}
	*rows = sr.v;
	*n = sr.n;
	arrays_sort(*rows, *n, sizeof(**rows), cmp_site);
	return 0;
}

size_t rep_mismatches(const struct rep_row *truth, size_t nt, const struct rep_row *got, size_t ng)
{
	size_t bad = 0, j = 0;
	for (size_t i = 0; i < nt; i++) {
		while (j < ng && got[j].site < truth[i].site) {
			bad++; /* recorded, not in the truth */
			j++;
		}
		if (j == ng || got[j].site != truth[i].site) {
			bad++;
			continue;
		}
		const struct rep_row *t = &truth[i], *g = &got[j++];
		bad += t->executions != g->executions || t->requested != g->requested ||
		       (g->has_actual && (t->actual != g->actual || t->by_condition != g->by_condition));
	}
	return bad + (ng - j);
}

int rep_report_write(FILE *f, const struct rep_row *rows, size_t n, int mode, int json)
{
	uint64_t execs = 0;
	for (size_t i = 0; i < n; i++)
		execs += rows[i].executions;
	if (json) {
		fprintf(f, "{\"mode\": \"%s\", \"sites\": [", rep_mode_name(mode));
		for (size_t i = 0; i < n; i++) {
			const struct rep_row *r = &rows[i];
			fprintf(f, "%s\n  {\"site\": \"0x%" PRIx64 "\", \"symbol\": ", i ? "," : "", r->site);
			json_put_str(f, r->symbol);
			fputs(", \"instruction\": ", f);
			json_put_str(f, r->insn);
			fprintf(f, ", \"executions\": %" PRIu64 ", \"requested\": %" PRIu64 ", \"steps\": %" PRIu64 ", ",
				r->executions, r->requested, r->steps);
			if (r->has_actual)
				fprintf(f, "\"actual\": %" PRIu64 ", \"min\": %" PRIu64 ", \"mean\": %.3f, \"max\": %" PRIu64
					", \"ended_by_condition\": %" PRIu64 "}", r->actual, r->min,
					(double)r->actual / (double)r->executions, r->max, r->by_condition);
			else
				fputs("\"actual\": null, \"min\": null, \"mean\": null, \"max\": null, "
				      "\"ended_by_condition\": null}", f);
		}
		fputs("\n]}\n", f);
	} else {
		fprintf(f, "# REP sites: %zu, executions: %" PRIu64 " (mode %s)\n", n, execs, rep_mode_name(mode));
		fprintf(f, "# %-18s %-36s %-12s %10s %20s %14s %8s %10s %8s %10s\n", "site", "symbol", "instruction",
			"executions", "requested", "actual", "min", "mean", "max", "by_cond");
		for (size_t i = 0; i < n; i++) {
			const struct rep_row *r = &rows[i];
			fprintf(f, "  0x%-16" PRIx64 " %-36s %-12s %10" PRIu64 " %20" PRIu64, r->site, r->symbol, r->insn,
				r->executions, r->requested);
			if (r->has_actual)
				fprintf(f, " %14" PRIu64 " %8" PRIu64 " %10.1f %8" PRIu64 " %10" PRIu64 "\n", r->actual,
					r->min, (double)r->actual / (double)r->executions, r->max, r->by_condition);
			else
				fprintf(f, " %14s %8s %10s %8s %10s\n", "-", "-", "-", "-", "-");
		}
	}
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
