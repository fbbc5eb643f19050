/* Edge counts and ptrace_edges' report (see edge_report.h): one line per own function,
 * per branch site, per edge, per executed conditional branch, sorted by address. */
#include "tests/ref/edge_report.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

static size_t edge_slot(const struct edge_map *m, uint64_t from, uint64_t to)
{
	uint64_t h = from * 0x9e3779b97f4a7c15ull ^ to * 0xc2b2ae3d27d4eb4full;
	size_t i = (size_t)(h ^ h >> 29) & (m->cap - 1);
	while (m->e[i].from && (m->e[i].from != from || m->e[i].to != to))
		i = (i + 1) & (m->cap - 1);
	return i;
}

static int edge_grow(struct edge_map *m)
{
	size_t cap = m->cap ? 2 * m->cap : 1024;
	struct edge_map g = {calloc(cap, sizeof(struct edge)), m->n, cap};
	if (!g.e)
		return -1;
	for (size_t i = 0; i < m->cap; i++)
		if (m->e[i].from)
			g.e[edge_slot(&g, m->e[i].from, m->e[i].to)] = m->e[i];
	free(m->e);
	*m = g;
	return 0;
}

int edge_add(struct edge_map *m, uint64_t from, uint64_t to)
{
	if (2 * (m->n + 1) > m->cap && edge_grow(m) < 0)
		return -1;
	struct edge *e = &m->e[edge_slot(m, from, to)];
	if (!e->from) {
		*e = (struct edge){from, to, 0};
		m->n++;
	}
	e->count++;
	return 0;
}

void edge_map_free(struct edge_map *m)
{
	free(m->e);
	*m = (struct edge_map){0};
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

static void write_sites(FILE *f, const struct site_table *t)
{
	for (size_t i = 0; i < t->nfuncs; i++)
		fprintf(f, "func %s %#" PRIx64 " %#" PRIx64 "\n", t->funcs[i].name,
		        t->funcs[i].start, t->funcs[i].end);
	for (size_t i = 0; i < t->nsites; i++) {
		const struct site *s = &t->sites[i];
		fprintf(f, "site %#" PRIx64 " %s %#" PRIx64 " ", s->addr, site_kind_name(s->kind),
		        s->next);
		if (s->kind == SITE_COND || s->kind == SITE_JMP || s->kind == SITE_CALL)
			fprintf(f, "%#" PRIx64, s->target);
		else
			fputc('-', f);
		fprintf(f, " %" PRIu64 "\n", s->executions);
	}
}

static int write_report(FILE *f, const struct site_table *t, const struct edge_map *m, int status)
{
	write_sites(f, t);
	struct edge *e = malloc((m->n + 1) * sizeof(*e));
	if (!e)
		return -1;
	size_t n = 0;
	for (size_t i = 0; i < m->cap; i++)
		if (m->e[i].from)
			e[n++] = m->e[i];
	qsort(e, n, sizeof(*e), cmp_edge);
	for (size_t i = 0; i < n; i++)
		fprintf(f, "edge %#" PRIx64 " %#" PRIx64 " %" PRIu64 "\n", e[i].from, e[i].to,
		        e[i].count);
	free(e);
	for (size_t i = 0; i < t->nsites; i++) {
		const struct site *s = &t->sites[i];
		if (s->kind == SITE_COND && s->executions)
			fprintf(f, "cond %#" PRIx64 " %" PRIu64 " %" PRIu64 "\n", s->addr, s->taken,
			        s->not_taken);
	}
	fprintf(f, "exit %d\n", status);
	return ferror(f) ? -1 : 0;
}

int report_write(const char *out, const struct site_table *t, const struct edge_map *m, int status)
{
	if (!out)
		return write_report(stdout, t, m, status) < 0 || fflush(stdout) != 0 ? -1 : 0;
	char tmp[4096];
	if (snprintf(tmp, sizeof(tmp), "%s.tmp", out) >= (int)sizeof(tmp)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	int rc = write_report(f, t, m, status);
	if (fclose(f) != 0 || rc < 0) {
		remove(tmp);
		return -1;
	}
	return rename(tmp, out);
}
