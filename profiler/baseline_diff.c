/* Two CI baselines compared (see profiler/baseline_diff.h). */
#include "profiler/baseline_diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/infile.h"
#include "common/json_read.h"
#include "common/number.h"
#include "profiler/overhead.h"
#include "profiler/perfdata.h"

const char *const bl_kind_name[BL_KINDS] = {"instructions", "cycles", "branches", "branch-misses"};

int bl_kind_of(const char *name)
{
	for (int k = 0; k < BL_KINDS; k++)
		if (strcmp(name, bl_kind_name[k]) == 0)
			return k;
	return -1;
}

static int fail(char *msg, size_t len, int err, const char *what)
{
	if (msg && len)
		snprintf(msg, len, "%s", what);
	return err;
}

static char *dup_str(const struct jv *v)
{
	return v && v->type == JV_STR ? strdup(v->text) : strdup("");
}

/* "options" as one line of key=value pairs in the document's order (arrays
 * joined by commas): what a reader compares to see the two runs were alike. */
static char *options_line(const struct jv *o)
{
	size_t cap = 256, n = 0;
	char *s = malloc(cap);
	if (!s)
		return NULL;
	s[0] = 0;
	for (size_t i = 0; o && o->type == JV_OBJ && i < o->n; i++) {
		const struct jv *v = &o->item[i];
		char val[512] = "";
		if (v->type == JV_STR || v->type == JV_NUM) {
			snprintf(val, sizeof(val), "%s", v->text);
		} else if (v->type == JV_ARR) {
			for (size_t k = 0; k < v->n; k++)
				if (v->item[k].type == JV_STR)
					snprintf(val + strlen(val), sizeof(val) - strlen(val), "%s%s", k ? "," : "",
						 v->item[k].text);
		}
		size_t need = strlen(o->key[i]) + strlen(val) + 3;
		if (n + need >= cap) {
			char *ns = realloc(s, cap = (n + need) * 2);
			if (!ns)
				return free(s), NULL;
			s = ns;
		}
		n += (size_t)sprintf(s + n, "%s%s=%s", n ? " " : "", o->key[i], val);
	}
	return s;
}

static int read_cost(const struct jv *o, uint64_t *v)
{
	for (int k = 0; k < BL_KINDS; k++)
		if (jv_u64(jv_get(o, bl_kind_name[k]), &v[k]) < 0)
			return -1;
	return 0;
}

static int by_fname(const void *a, const void *b)
{
	return strcmp(((const struct bl_func *)a)->name, ((const struct bl_func *)b)->name);
}

static int read_doc(const struct jv *d, struct baseline *b, char *msg, size_t len)
{
	const struct jv *prog = jv_get(d, "program"), *ev = jv_get(d, "events"), *fn = jv_get(d, "functions");
	uint64_t st;
	if (!ev || ev->type != JV_ARR || !fn || fn->type != JV_ARR || !prog || prog->type != JV_OBJ)
		return fail(msg, len, PMUSIM_ERR_FORMAT, "a baseline needs \"program\", \"events\" and \"functions\"");
	b->has_functions = 1;
	for (int k = 0; k < BL_KINDS; k++)
		b->kind[k] = bl_kind_name[k];
	b->nkinds = BL_KINDS;
	b->program = dup_str(jv_get(prog, "name"));
	b->build_id = dup_str(jv_get(prog, "build_id"));
	b->pmusim = dup_str(jv_get(d, "pmusim"));
	char *opt = options_line(jv_get(d, "options")), *args = NULL;
	const struct jv *av = jv_get(prog, "args");
	struct jv wrap = {.type = JV_OBJ, .n = 1, .item = (struct jv *)av, .key = (const char *[]){"args"}};
	if (opt && av && av->type == JV_ARR && (args = options_line(&wrap))) {
		b->options = malloc(strlen(opt) + strlen(args) + 2);
		if (b->options)
			sprintf(b->options, "%s%s%s", args, opt[0] ? " " : "", opt);
		free(opt);
	} else {
		b->options = opt; /* no arguments named */
	}
	free(args);
	double es = 0;
	if (jv_num(jv_get(d, "exit_status"), &es) == 0 && es >= -1e9 && es <= 1e9)
		b->exit_status = (int)es;
	if (!b->program || !b->build_id || !b->pmusim || !b->options)
		return PMUSIM_ERR_NOMEM;
	b->ev = calloc(ev->n + 1, sizeof(*b->ev));
	b->fn = calloc(fn->n + 1, sizeof(*b->fn));
	if (!b->ev || !b->fn)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < ev->n; i++, b->nev++) {
		const struct jv *e = &ev->item[i], *name = jv_get(e, "event");
		if (!name || name->type != JV_STR || jv_u64(jv_get(e, "count"), &st) < 0)
			return fail(msg, len, PMUSIM_ERR_FORMAT, "an event needs \"event\" and a whole \"count\"");
		if (!(b->ev[i].name = strdup(name->text)))
			return PMUSIM_ERR_NOMEM;
		b->ev[i].count = st;
	}
	for (size_t i = 0; i < fn->n; i++, b->nfn++) {
		const struct jv *f = &fn->item[i], *name = jv_get(f, "name");
		struct bl_func *o = &b->fn[i];
		if (!name || name->type != JV_STR || jv_u64(jv_get(f, "calls"), &o->calls) < 0 ||
		    read_cost(jv_get(f, "self"), o->self) < 0 || read_cost(jv_get(f, "inclusive"), o->incl) < 0)
			return fail(msg, len, PMUSIM_ERR_FORMAT,
				    "a function needs \"name\", \"calls\", \"self\" and \"inclusive\" with whole counts");
		if (!(o->name = strdup(name->text)))
			return PMUSIM_ERR_NOMEM;
	}
	arrays_sort(b->fn, b->nfn, sizeof(*b->fn), by_fname);
	for (size_t i = 1; i < b->nfn; i++)
		if (strcmp(b->fn[i - 1].name, b->fn[i].name) == 0)
			return fail(msg, len, PMUSIM_ERR_FORMAT, "two functions of one name");
	return 0;
}

/* perf stat -j: "counter-value" is a string ("123.000000") or a number. */
static int read_stat_line(const struct jv *o, struct baseline *b, char *msg, size_t len)
{
	const struct jv *name = jv_get(o, "event"), *cv = jv_get(o, "counter-value");
	if (!name || name->type != JV_STR || !cv || (cv->type != JV_STR && cv->type != JV_NUM))
		return fail(msg, len, PMUSIM_ERR_FORMAT,
			    "neither a pmusim stat --json baseline nor perf stat -j output (\"event\", "
			    "\"counter-value\")");
	double v;
	if (number_parse_real(cv->text, &v) != NUMBER_OK || v < 0 || v > 1.8e19)
		return fail(msg, len, PMUSIM_ERR_FORMAT, "a counter-value that is no count (not counted?)");
	struct bl_event *ne = realloc(b->ev, (b->nev + 1) * sizeof(*ne));
	if (!ne)
		return PMUSIM_ERR_NOMEM;
	b->ev = ne;
	if (!(ne[b->nev].name = strdup(name->text)))
		return PMUSIM_ERR_NOMEM;
	ne[b->nev++].count = (uint64_t)(v + 0.5);
	return 0;
}

/* *first_bad: the first line that is not blank is no JSON text at all. */
static int read_lines(const char *path, struct baseline *b, char *msg, size_t len, int *first_bad)
{
	const char *why;
	FILE *f = infile_fopen(path, &why);
	if (!f)
		return pmusim_fail(msg, len, PMUSIM_ERR_IO, "cannot be read: %s", why);
	char line[8192];
	int err = 0, lineno = 0;
	while (!err && fgets(line, sizeof(line), f)) {
		lineno++;
		size_t n = strlen(line);
		if (n == strspn(line, " \t\r\n"))
			continue;
		struct jv *o = NULL;
		char m[200];
		err = json_parse(line, n, &o, m, sizeof(m));
		*first_bad = err && !b->nev;
		if (!err)
			err = o->type == JV_OBJ ? read_stat_line(o, b, msg, len)
						: fail(msg, len, PMUSIM_ERR_FORMAT, "a line that is no JSON object");
		else if (msg && len)
			snprintf(msg, len, "line %d: %s", lineno, m);
		jv_free(o);
	}
	fclose(f);
	if (!err && !b->nev)
		err = fail(msg, len, PMUSIM_ERR_FORMAT, "no events in it");
	b->options = strdup(""), b->program = strdup(""), b->build_id = strdup(""), b->pmusim = strdup("");
	return err ? err : b->options && b->program && b->build_id && b->pmusim ? 0 : PMUSIM_ERR_NOMEM;
}

/* A perf.data file's first 8 bytes (perf.data-file-format.txt: "PERFILE2"). */
static int is_recording(const char *path)
{
	char magic[8];
	FILE *f = infile_fopen(path, NULL);
	int yes = f && fread(magic, 1, 8, f) == 8 && memcmp(magic, "PERFILE2", 8) == 0;
	if (f)
		fclose(f);
	return yes;
}

static struct bl_func *func_named(struct baseline *b, const char *name)
{
	for (size_t i = 0; i < b->nfn; i++)
		if (strcmp(b->fn[i].name, name) == 0)
			return &b->fn[i];
	struct bl_func *nf = realloc(b->fn, (b->nfn + 1) * sizeof(*nf));
	if (!nf)
		return NULL;
	b->fn = nf;
	memset(&nf[b->nfn], 0, sizeof(*nf));
	if (!(nf[b->nfn].name = strdup(name)))
		return NULL;
	return &nf[b->nfn++];
}

/* Per event of the recording: its total period; per function (perf report's
 * symbol column, "[.] " left out) its samples' period of the first BL_KINDS
 * events. */
static int read_recording(const char *path, struct baseline *b, char *msg, size_t len)
{
	struct perfdata *pd;
	int err = perfdata_open(path, &pd, msg, len);
	if (err < 0)
		return err;
	size_t nev = perfdata_nevents(pd);
	char *names[64] = {0};
	for (size_t i = 0; i < nev && i < 64 && !err; i++) {
		const char *n = perfdata_event(pd, i)->name;
		if (!(names[i] = strdup(n ? n : "?")))
			err = PMUSIM_ERR_NOMEM;
	}
	perfdata_close(pd);
	b->has_functions = b->recording = 1;
	b->ev = calloc(nev + 1, sizeof(*b->ev));
	if (!b->ev)
		err = PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < nev && i < 64 && !err; i++) {
		struct overhead_opts o = {.event = (int)i, .keys = {OVH_SYM}, .nkeys = 1};
		struct overhead *ov;
		if ((err = overhead_read(path, &o, &ov, msg, len)) < 0)
			break;
		b->ev[b->nev].name = names[i], names[i] = NULL;
		b->ev[b->nev++].count = overhead_total_period(ov);
		if (b->nkinds < BL_KINDS) {
			size_t k = b->nkinds++;
			b->kind[k] = b->ev[b->nev - 1].name;
			for (size_t r = 0; r < overhead_nrows(ov) && !err; r++) {
				uint64_t period, samples;
				const char *sym = overhead_row(ov, r, 0, &period, &samples);
				struct bl_func *f = func_named(b, strncmp(sym, "[.] ", 4) == 0 ? sym + 4 : sym);
				if (!f)
					err = PMUSIM_ERR_NOMEM;
				else
					f->self[k] += period;
			}
		}
		overhead_free(ov);
	}
	for (size_t i = 0; i < 64; i++)
		free(names[i]);
	if (!err && b->nfn)
		arrays_sort(b->fn, b->nfn, sizeof(*b->fn), by_fname);
	b->program = strdup(""), b->build_id = strdup(""), b->pmusim = strdup(""), b->options = strdup("");
	return err ? err : b->program && b->build_id && b->pmusim && b->options ? 0 : PMUSIM_ERR_NOMEM;
}

int baseline_read(const char *path, struct baseline *b, char *msg, size_t msglen)
{
	memset(b, 0, sizeof(*b));
	if (is_recording(path))
		return read_recording(path, b, msg, msglen);
	struct jv *d = NULL;
	char whole[256] = "";
	int err = json_parse_file(path, &d, whole, sizeof(whole));
	if (err == PMUSIM_ERR_FORMAT) {
		/* perf stat -j: several objects, one a line; when not even its first
		 * line is one, the document's own error says what is wrong */
		int first_bad = 0;
		err = read_lines(path, b, msg, msglen, &first_bad);
		if (err == PMUSIM_ERR_FORMAT && first_bad && msg && msglen)
			snprintf(msg, msglen, "%s", whole);
		return err;
	}
	if (err < 0 && msg && msglen)
		snprintf(msg, msglen, "%s", whole);
	if (err < 0)
		return err;
	if (d->type == JV_OBJ && jv_get(d, "pmusim_baseline"))
		err = read_doc(d, b, msg, msglen);
	else if (d->type == JV_OBJ)
		err = read_stat_line(d, b, msg, msglen);
	else
		err = fail(msg, msglen, PMUSIM_ERR_FORMAT, "neither a pmusim stat --json baseline nor perf stat -j output");
	if (!err && !b->has_functions)
		err = (b->options = strdup("")) && (b->program = strdup("")) && (b->build_id = strdup("")) &&
				      (b->pmusim = strdup(""))
			      ? 0
			      : PMUSIM_ERR_NOMEM;
	jv_free(d);
	return err;
}

void baseline_free(struct baseline *b)
{
	for (size_t i = 0; i < b->nev; i++)
		free(b->ev[i].name);
	for (size_t i = 0; i < b->nfn; i++)
		free(b->fn[i].name);
	free(b->ev);
	free(b->fn);
	free(b->program), free(b->build_id), free(b->options), free(b->pmusim);
	memset(b, 0, sizeof(*b));
}

double bl_percent(const struct bl_delta *d)
{
	if (d->base == 0)
		return d->cur == 0 ? 0 : 1e300;
	return ((double)d->cur - (double)d->base) * 100.0 / (double)d->base;
}

static const struct bl_event *event_in(const struct baseline *b, const char *name)
{
	for (size_t i = 0; i < b->nev; i++)
		if (strcmp(b->ev[i].name, name) == 0)
			return &b->ev[i];
	return NULL;
}

static uint64_t mag(int64_t v)
{
	return v < 0 ? (uint64_t)0 - (uint64_t)v : (uint64_t)v;
}

static int g_sort_kind;

static int by_impact(const void *pa, const void *pb)
{
	const struct bl_func_diff *a = pa, *b = pb;
	uint64_t x = mag(bl_change(&a->self[g_sort_kind])), y = mag(bl_change(&b->self[g_sort_kind]));
	if (x != y)
		return x > y ? -1 : 1;
	for (int k = 0; k < BL_KINDS; k++) {
		x = mag(bl_change(&a->self[k])), y = mag(bl_change(&b->self[k]));
		if (x != y)
			return x > y ? -1 : 1;
	}
	return strcmp(a->name, b->name);
}

static int same_kinds(const struct baseline *a, const struct baseline *b)
{
	if (a->nkinds != b->nkinds || a->recording != b->recording)
		return 0;
	for (size_t k = 0; k < a->nkinds; k++)
		if (strcmp(a->kind[k], b->kind[k]) != 0)
			return 0;
	return 1;
}

int baseline_diff(const struct baseline *base, const struct baseline *cur, const char *sort,
		  struct bl_threshold *th, size_t nth, struct bl_diff *out)
{
	memset(out, 0, sizeof(*out));
	const struct baseline *kinds = base->has_functions ? base : cur;
	if (base->has_functions && cur->has_functions && !same_kinds(base, cur))
		return PMUSIM_ERR_ARG;
	out->kind = kinds->kind, out->nkinds = kinds->nkinds;
	out->inclusive = kinds->has_functions && !kinds->recording;
	int sort_kind = -1;
	for (size_t k = 0; k < kinds->nkinds; k++)
		if (strcmp(kinds->kind[k], sort ? sort : "cycles") == 0)
			sort_kind = (int)k;
	if (sort_kind < 0 && sort && kinds->nkinds)
		return PMUSIM_ERR_ARG;
	out->sort_kind = sort_kind < 0 ? 0 : sort_kind;
	sort_kind = out->sort_kind;
	out->ev = calloc(base->nev + cur->nev + 1, sizeof(*out->ev));
	out->fn = calloc(base->nfn + cur->nfn + 1, sizeof(*out->fn));
	if (!out->ev || !out->fn)
		return bl_diff_free(out), PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < base->nev; i++) {
		const struct bl_event *c = event_in(cur, base->ev[i].name);
		out->ev[out->nev++] = (struct bl_event_diff){base->ev[i].name, {base->ev[i].count, c ? c->count : 0}, 1,
							      c != NULL};
	}
	for (size_t i = 0; i < cur->nev; i++)
		if (!event_in(base, cur->ev[i].name))
			out->ev[out->nev++] = (struct bl_event_diff){cur->ev[i].name, {0, cur->ev[i].count}, 0, 1};
	/* both lists are sorted by name: a merge */
	size_t i = 0, j = 0;
	while (i < base->nfn || j < cur->nfn) {
		int c = i == base->nfn ? 1 : j == cur->nfn ? -1 : strcmp(base->fn[i].name, cur->fn[j].name);
		const struct bl_func *a = c <= 0 ? &base->fn[i++] : NULL, *b = c >= 0 ? &cur->fn[j++] : NULL;
		struct bl_func_diff *d = &out->fn[out->nfn++];
		d->name = a ? a->name : b->name;
		d->status = !a ? BL_ADDED : !b ? BL_REMOVED : BL_SAME;
		d->calls = (struct bl_delta){a ? a->calls : 0, b ? b->calls : 0};
		for (int k = 0; k < BL_KINDS; k++) {
			d->self[k] = (struct bl_delta){a ? a->self[k] : 0, b ? b->self[k] : 0};
			d->incl[k] = (struct bl_delta){a ? a->incl[k] : 0, b ? b->incl[k] : 0};
			if (d->status == BL_SAME && (bl_change(&d->self[k]) || bl_change(&d->incl[k])))
				d->status = BL_CHANGED;
		}
		if (d->status == BL_SAME && bl_change(&d->calls))
			d->status = BL_CHANGED;
	}
	g_sort_kind = sort_kind;
	arrays_sort(out->fn, out->nfn, sizeof(*out->fn), by_impact);
	for (size_t t = 0; t < nth; t++) {
		const struct bl_event *a = event_in(base, th[t].event), *b = event_in(cur, th[t].event);
		th[t].found = a && b;
		if (!th[t].found)
			continue;
		struct bl_delta d = {a->count, b->count};
		th[t].got = bl_percent(&d);
		th[t].regressed = th[t].got > th[t].pct;
		out->regressed |= th[t].regressed;
	}
	return 0;
}

void bl_diff_free(struct bl_diff *d)
{
	free(d->ev);
	free(d->fn);
	memset(d, 0, sizeof(*d));
}
