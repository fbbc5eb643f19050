/* Text, JSON and folded-stack outputs of a stack profile (see stackprof.h).
 * Folded stacks: Brendan Gregg's stackcollapse format ("a;b;c 12"), as
 * FlameGraph's flamegraph.pl reads it; JSON strings escaped per RFC 8259. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/json.h"
#include "profiler/perfdata.h"
#include "profiler/stackprof.h"

#define TOP_PATHS 20

static double share(uint64_t part, uint64_t whole)
{
	return whole ? 100.0 * (double)part / (double)whole : 0.0;
}

/* A frame name in folded text: ';' separates frames and a line ends a stack. */
static void put_folded_name(FILE *f, const char *s)
{
	for (; *s; s++)
		fputc(*s == ';' ? ':' : *s == '\n' || *s == '\r' ? ' ' : *s, f);
}

static void put_path(FILE *f, const struct stackprof_path *p)
{
	for (size_t i = 0; i < p->depth; i++) {
		if (i)
			fputc(';', f);
		put_folded_name(f, p->frames[i]);
	}
}

int stackprof_write_text(FILE *f, const struct stackprof *sp)
{
	const struct stackprof_summary *s = stackprof_summary(sp);
	size_t nf, np;
	const struct stackprof_func *fn = stackprof_functions(sp, &nf);
	const struct stackprof_path *p = stackprof_paths(sp, &np);
	fprintf(f, "# %" PRIu64 " samples, %zu threads, total weight %" PRIu64, s->samples,
	        s->threads, s->weight);
	if (s->event)
		fprintf(f, " (event %s)", s->event);
	fputc('\n', f);
	if (s->skipped)
		fprintf(f, "# %" PRIu64 " samples without user callchain skipped\n", s->skipped);
	fprintf(f, "#\n# functions (total: samples in which the function is on the stack; self: at "
	           "the top;\n"
	           "# percentages of the total weight)\n");
	fprintf(f, "# %8s %8s %10s %10s  %s\n", "total", "self", "samples", "self", "function");
	for (size_t i = 0; i < nf; i++)
		fprintf(f, "  %7.2f%% %7.2f%% %10" PRIu64 " %10" PRIu64 "  %s\n",
		        share(fn[i].total_weight, s->weight), share(fn[i].self_weight, s->weight),
		        fn[i].total, fn[i].self, fn[i].name);
	fprintf(f, "#\n# heaviest call paths (outermost first)\n# %8s %10s  %s\n", "share",
	        "samples", "path");
	for (size_t i = 0; i < np && i < TOP_PATHS; i++) {
		fprintf(f, "  %7.2f%% %10" PRIu64 "  ", share(p[i].weight, s->weight),
		        p[i].samples);
		put_path(f, &p[i]);
		fputc('\n', f);
	}
	if (np > TOP_PATHS)
		fprintf(f, "# ... %zu more paths (--format json or folded lists all)\n",
		        np - TOP_PATHS);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}

int stackprof_write_json(FILE *f, const struct stackprof *sp)
{
	const struct stackprof_summary *s = stackprof_summary(sp);
	size_t nf, np;
	const struct stackprof_func *fn = stackprof_functions(sp, &nf);
	const struct stackprof_path *p = stackprof_paths(sp, &np);
	fprintf(f,
	        "{\"samples\": %" PRIu64 ", \"threads\": %zu, \"weight\": %" PRIu64
	        ", \"skipped\": %" PRIu64 ", \"functions\": [",
	        s->samples, s->threads, s->weight, s->skipped);
	for (size_t i = 0; i < nf; i++) {
		fputs(i ? ",\n  {\"name\": " : "\n  {\"name\": ", f);
		json_put_str(f, fn[i].name);
		fprintf(f,
		        ", \"total\": %" PRIu64 ", \"self\": %" PRIu64
		        ", \"total_weight\": %" PRIu64 ", \"self_weight\": %" PRIu64 "}",
		        fn[i].total, fn[i].self, fn[i].total_weight, fn[i].self_weight);
	}
	fputs("\n], \"paths\": [", f);
	for (size_t i = 0; i < np; i++) {
		fputs(i ? ",\n  {\"stack\": [" : "\n  {\"stack\": [", f);
		for (size_t j = 0; j < p[i].depth; j++) {
			if (j)
				fputs(", ", f);
			json_put_str(f, p[i].frames[j]);
		}
		fprintf(f, "], \"samples\": %" PRIu64 ", \"weight\": %" PRIu64 "}", p[i].samples,
		        p[i].weight);
	}
	fputs("\n]}\n", f);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}

struct folded_line {
	char *text; /* the stack as folded text */
	uint64_t samples;
};

static int cmp_line(const void *a, const void *b)
{
	const struct folded_line *x = a, *y = b;
	int c = strcmp(x->text, y->text);
	return c ? c : x->samples < y->samples ? -1 : x->samples > y->samples;
}

int stackprof_write_folded(FILE *f, const struct stackprof *sp)
{
	size_t np;
	const struct stackprof_path *p = stackprof_paths(sp, &np);
	struct folded_line *l = calloc(np + 1, sizeof(*l));
	int err = l ? 0 : PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < np && !err; i++) {
		size_t len = 0;
		FILE *m = open_memstream(&l[i].text, &len);
		if (!m) {
			err = PMUSIM_ERR_NOMEM;
			break;
		}
		put_path(m, &p[i]);
		if (fclose(m) != 0)
			err = PMUSIM_ERR_NOMEM;
		l[i].samples = p[i].samples;
	}
	if (!err) {
		arrays_sort(l, np, sizeof(*l), cmp_line);
		for (size_t i = 0; i < np; i++)
			fprintf(f, "%s %" PRIu64 "\n", l[i].text, l[i].samples);
	}
	for (size_t i = 0; l && i < np; i++)
		free(l[i].text);
	free(l);
	return err ? err : ferror(f) ? PMUSIM_ERR_IO : 0;
}

static int by_tid(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* One thread's snapshots as speedscope's open (O) and close (C) events: each
 * sample's stack held for its weight up to its time; frames a stack shares with
 * the one before stay open, the thread's stack closes where no sample covers
 * its time (it did not run, or was not sampled). */
struct ev_state {
	FILE *f;
	uint32_t open[PERFDATA_MAX_CHAIN];
	size_t nopen;
	uint64_t end; /* where the open frames were last known to hold */
	int first;
};

static void ev_put(struct ev_state *e, char type, uint32_t frame, uint64_t at)
{
	fprintf(e->f, "%s{\"type\": \"%c\", \"frame\": %" PRIu32 ", \"at\": %" PRIu64 "}", e->first ? "" : ", ", type,
		frame, at);
	e->first = 0;
}

static void ev_close_to(struct ev_state *e, size_t keep, uint64_t at)
{
	while (e->nopen > keep)
		ev_put(e, 'C', e->open[--e->nopen], at);
}

int stackprof_write_speedscope(FILE *f, const struct stackprof *sp, const char *name)
{
	size_t ns, nn = stackprof_names(sp);
	const struct stackprof_sample *s = stackprof_samples(sp, &ns);
	uint32_t *tids = calloc(ns + 1, sizeof(*tids));
	if (!tids)
		return PMUSIM_ERR_NOMEM;
	size_t nt = 0;
	for (size_t i = 0; i < ns; i++)
		tids[nt++] = s[i].tid;
	arrays_sort(tids, nt, sizeof(*tids), by_tid);
	size_t w = 0;
	for (size_t i = 0; i < nt; i++)
		if (!w || tids[w - 1] != tids[i])
			tids[w++] = tids[i];
	nt = w;
	fprintf(f, "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\",\n \"shared\": {\"frames\": [");
	for (size_t i = 0; i < nn; i++) {
		fprintf(f, "%s{\"name\": ", i ? ", " : "");
		json_put_str(f, stackprof_name(sp, i));
		fputc('}', f);
	}
	fprintf(f, "]},\n \"profiles\": [");
	struct ev_state *e = malloc(sizeof(*e));
	if (!e)
		return free(tids), PMUSIM_ERR_NOMEM;
	for (size_t t = 0; t < nt; t++) {
		uint64_t start = UINT64_MAX, end = 0;
		for (size_t i = 0; i < ns; i++)
			if (s[i].tid == tids[t]) {
				uint64_t b = s[i].time > s[i].weight ? s[i].time - s[i].weight : 0;
				start = b < start ? b : start;
				end = s[i].time > end ? s[i].time : end;
			}
		if (end < start)
			end = start;
		fprintf(f, "%s\n  {\"type\": \"evented\", \"name\": \"thread %" PRIu32 "\", \"unit\": \"nanoseconds\", "
			"\"startValue\": %" PRIu64 ", \"endValue\": %" PRIu64 ",\n   \"events\": [",
			t ? "," : "", tids[t], start, end);
		*e = (struct ev_state){.f = f, .first = 1};
		for (size_t i = 0; i < ns; i++) {
			if (s[i].tid != tids[t])
				continue;
			size_t depth;
			const uint32_t *fr = stackprof_path_frames(sp, s[i].path, &depth);
			uint64_t b = s[i].time > s[i].weight ? s[i].time - s[i].weight : 0, at = s[i].time;
			/* snapshots fall at the first block boundary after each period's
			 * end: one that comes less than a period late follows on the last */
			if (b < e->end || (e->nopen && b - e->end < s[i].weight))
				b = e->end;
			if (e->nopen && b > e->end)
				ev_close_to(e, 0, e->end); /* a gap: the thread's stack was not seen */
			size_t keep = 0;
			while (keep < e->nopen && keep < depth && e->open[keep] == fr[keep])
				keep++;
			ev_close_to(e, keep, b);
			for (size_t k = keep; k < depth && e->nopen < PERFDATA_MAX_CHAIN; k++)
				ev_put(e, 'O', e->open[e->nopen++] = fr[k], b);
			e->end = at > b ? at : b;
		}
		ev_close_to(e, 0, e->end);
		fprintf(f, "]}");
	}
	free(e);
	fprintf(f, "],\n \"name\": ");
	json_put_str(f, name);
	fprintf(f, ",\n \"activeProfileIndex\": 0,\n \"exporter\": \"pmusim\"}\n");
	free(tids);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
