/* Call-stack snapshots against the truth (see stack_check.h). */
#include "profiler/stack_check.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/infile.h"
#include "profiler/perfdata.h"

static int add_snap(struct stack_set *s, uint32_t tid, uint32_t pid, uint64_t ip)
{
	struct stack_snap *ns = grow_array(s->snap, &s->cap, s->n + 1, sizeof(*ns));
	if (!ns)
		return PMUSIM_ERR_NOMEM;
	s->snap = ns;
	s->snap[s->n++] = (struct stack_snap){tid, pid, ip, s->nrets, 0};
	return 0;
}

static int add_ret(struct stack_set *s, uint64_t r)
{
	uint64_t *nr = grow_array(s->rets, &s->caprets, s->nrets + 1, sizeof(*nr));
	if (!nr)
		return PMUSIM_ERR_NOMEM;
	s->rets = nr;
	s->rets[s->nrets++] = r;
	s->snap[s->n - 1].n++;
	return 0;
}

void stack_set_free(struct stack_set *s)
{
	free(s->snap);
	free(s->rets);
	memset(s, 0, sizeof(*s));
}

/* Whether event ev's samples carry callchains: not a stack dump (--call-graph
 * dwarf, --tstack-dwarf), whose chain is empty and which perf's unwinder reads. */
static int chains_of(struct perfdata *pd, size_t ev)
{
	uint64_t st = perfdata_event(pd, ev)->sample_type;
	return (st & PERF_SAMPLE_CALLCHAIN) && !(st & PERF_SAMPLE_STACK_USER);
}

static int has_chains(struct perfdata *pd)
{
	for (size_t i = 0; i < perfdata_nevents(pd); i++)
		if (chains_of(pd, i))
			return 1;
	return 0;
}

int stack_recording_read(const char *path, struct stack_set *out, char *msg, size_t msglen)
{
	struct perfdata *pd;
	memset(out, 0, sizeof(*out));
	int err = perfdata_open(path, &pd, msg, msglen);
	if (err < 0)
		return err;
	if (!has_chains(pd)) {
		perfdata_close(pd);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
				   "%s has no callchains (record with -g or --tstack; the stack dumps of "
				   "--call-graph dwarf are unwound by perf script)", path);
	}
	struct perf_record r;
	while ((err = perfdata_next(pd, &r, msg, msglen)) > 0) {
		if (r.type != PERF_RECORD_SAMPLE)
			continue;
		int ev = perfdata_event_of_id(pd, r.u.sample.id);
		if (ev < 0 || !chains_of(pd, (size_t)ev))
			continue;
		const struct perf_sample *s = &r.u.sample;
		/* the snapshot's IP is the chain's first address: a PMU sample's own IP
		 * (the eventing instruction) may precede where its chain was taken */
		uint64_t ip = 0;
		int any = 0;
		for (uint64_t i = 0; i < s->nchain && !any; i++)
			if (s->chain[i] < PERF_CONTEXT_MAX)
				ip = s->chain[i], any = 1;
		if (!any)
			continue; /* an event whose samples carry none (--tstack's -e events) */
		if ((err = add_snap(out, s->tid, s->pid, ip)) < 0)
			break;
		int seen_ip = 0;
		for (uint64_t i = 0; i < s->nchain && err >= 0; i++) {
			if (s->chain[i] >= PERF_CONTEXT_MAX)
				continue;
			if (!seen_ip) { /* the first address is the IP */
				seen_ip = 1;
				continue;
			}
			err = add_ret(out, s->chain[i]);
		}
		if (err < 0)
			break;
	}
	perfdata_close(pd);
	if (err < 0)
		stack_set_free(out);
	return err < 0 ? err : 0;
}

/* One line of "stack_snapshots" (sim/truth_write.c writes one per line):
 * {"tid": T, "pid": P, "ip": "0x..", "stack": ["0x..", ...]} */
static int parse_line(struct stack_set *s, const char *line)
{
	unsigned tid, pid;
	uint64_t ip;
	if (sscanf(line, " {\"tid\": %u, \"pid\": %u, \"ip\": \"%" SCNx64 "\"", &tid, &pid, &ip) != 3)
		return PMUSIM_ERR_FORMAT;
	const char *p = strstr(line, "\"stack\": [");
	if (!p)
		return PMUSIM_ERR_FORMAT;
	int err = add_snap(s, tid, pid, ip);
	for (p += 10; err >= 0 && (p = strchr(p, '"')) != NULL; p++) {
		char *end;
		uint64_t v = strtoull(p + 1, &end, 16);
		if (*end != '"')
			return PMUSIM_ERR_FORMAT;
		err = add_ret(s, v);
		p = end;
	}
	return err;
}

int stack_truth_read(const char *path, struct stack_set *out, char *msg, size_t msglen)
{
	memset(out, 0, sizeof(*out));
	const char *why;
	FILE *f = infile_fopen(path, &why);
	if (!f)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_IO, "cannot read %s: %s", path, why);
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	int in = 0, found = 0, err = 0;
	while (err >= 0 && getline(&line, &cap, f) > 0) {
		lineno++;
		if (!in) {
			if (strstr(line, "\"stack_snapshots\": [")) {
				in = found = 1;
			}
			continue;
		}
		if (line[strspn(line, " ")] == ']')
			break;
		if ((err = parse_line(out, line)) == PMUSIM_ERR_FORMAT)
			pmusim_fail(msg, msglen, err, "%s:%zu: not a stack snapshot", path, lineno);
	}
	free(line);
	fclose(f);
	if (err >= 0 && !found)
		err = pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
				  "%s has no \"stack_snapshots\" (record with --tstack and --truth-json)", path);
	if (err < 0)
		stack_set_free(out);
	return err < 0 ? err : 0;
}

static void describe(struct stack_check *c, size_t i, const char *what)
{
	if (!c->first[0])
		snprintf(c->first, sizeof(c->first), "snapshot %zu: %s", i, what);
}

void stack_compare(const struct stack_set *truth, const struct stack_set *got, struct stack_check *c)
{
	memset(c, 0, sizeof(*c));
	c->snapshots = got->n;
	c->truth_snapshots = truth->n;
	size_t n = got->n < truth->n ? got->n : truth->n;
	for (size_t i = 0; i < n; i++) {
		const struct stack_snap *t = &truth->snap[i], *g = &got->snap[i];
		const uint64_t *tr = truth->rets + t->first, *gr = got->rets + g->first;
		c->max_depth = g->n > c->max_depth ? g->n : c->max_depth;
		char what[200];
		if (t->tid != g->tid || t->pid != g->pid || t->ip != g->ip) {
			snprintf(what, sizeof(what), "thread %u ip 0x%" PRIx64 " recorded, thread %u ip 0x%" PRIx64 " true",
				 g->tid, g->ip, t->tid, t->ip);
		} else if (t->n != g->n) {
			snprintf(what, sizeof(what), "thread %u: %zu frames recorded, %zu true", g->tid, g->n, t->n);
		} else {
			size_t k = 0;
			while (k < t->n && tr[k] == gr[k])
				k++;
			c->frames += t->n;
			if (k == t->n)
				continue;
			snprintf(what, sizeof(what), "thread %u frame %zu: return address 0x%" PRIx64 " recorded, 0x%" PRIx64
				 " true", g->tid, k, gr[k], tr[k]);
		}
		c->mismatches++;
		describe(c, i, what);
	}
	size_t extra = got->n > truth->n ? got->n - truth->n : truth->n - got->n;
	if (extra) {
		c->mismatches += extra;
		describe(c, n, got->n > truth->n ? "recorded, not in the truth" : "in the truth, not recorded");
	}
}
