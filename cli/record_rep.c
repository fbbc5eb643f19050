/* pmusim record --rep (see record_rep.h). */
#include "cli/record_rep.h"

#include <string.h>

static void put64(uint8_t *p, uint64_t v)
{
	memcpy(p, &v, 8); /* x86-64: little-endian, as perf.data */
}

static void put32(uint8_t *p, uint32_t v)
{
	memcpy(p, &v, 4);
}

static void write_sample(struct rep_recording *rr, uint64_t ip, uint32_t tid, const uint8_t *raw, int with_branches)
{
	struct perf_branch stack[REP_MAX_BRANCHES];
	size_t nbr = with_branches ? rr->nbr : 0;
	for (size_t i = 0; i < nbr; i++) /* newest first */
		stack[i] = rr->br[rr->nbr - 1 - i];
	struct perf_sample s = {
		.id = rr->id, .ip = ip, .time = rr->now_ns(rr->ctx), .period = 1,
		.pid = rr->pid_of(rr->ctx, tid), .tid = tid, .misc = PERF_RECORD_MISC_USER,
		.nbr = nbr, .br = stack, .raw_size = REP_RAW_SIZE, .raw = raw,
	};
	if (with_branches)
		rr->nbr = 0;
	if (!rr->err && rr->w)
		rr->err = perfdata_write_sample(rr->w, &s);
	rr->written++;
}

/* The waiting branch records in a sample of their own (no REP record took them). */
static void write_branches(struct rep_recording *rr)
{
	if (rr->nbr == 0)
		return;
	uint8_t raw[REP_RAW_SIZE] = {0};
	put32(raw + 24, REP_RAW_BRANCHES);
	put32(raw + 28, (uint32_t)rr->mode);
	write_sample(rr, rr->br[rr->nbr - 1].to, rr->br_tid, raw, 1);
}

/* A taken-branch record waits for the next REP record (its branch stack). */
static void keep_branch(struct rep_recording *rr, const struct rep_record *r)
{
	if (rr->nbr == REP_MAX_BRANCHES)
		write_branches(rr);
	rr->br[rr->nbr++] = (struct perf_branch){.from = r->site, .to = r->to, .type = PERF_BR_UNKNOWN};
	rr->br_tid = r->tid;
}

static void write_rep(struct rep_recording *rr, const struct rep_record *r)
{
	int step = r->kind == REP_ENTRY_STEP;
	uint8_t raw[REP_RAW_SIZE];
	put64(raw, r->site);
	put64(raw + 8, r->requested);
	put64(raw + 16, r->has_actual || step ? r->actual : 0);
	put32(raw + 24, step ? 4 : r->has_actual ? r->end | (r->resumed ? REP_RAW_RESUMED : 0) : 3);
	put32(raw + 28, (uint32_t)rr->mode);
	/* branch records wait for the REP record, not a single step */
	write_sample(rr, r->site, r->tid, raw, !step);
}

/* The handler: what one interrupt reads (a drained buffer, or one REP record). */
static void on_interrupt(void *ctx, const struct rep_record *r, size_t n)
{
	struct rep_recording *rr = ctx;
	for (size_t i = 0; i < n; i++) {
		if (r[i].kind == REP_ENTRY_BRANCH)
			keep_branch(rr, &r[i]);
		else
			write_rep(rr, &r[i]);
	}
}

void rep_recording_patched(void *ctx, uint64_t site, uint64_t count, uint32_t tid)
{
	struct rep_record r = {.kind = REP_ENTRY_REP, .tid = tid, .site = site, .requested = count};
	write_rep(ctx, &r); /* the trap comes before the REP runs: its end is not known */
}

int rep_recording_init(struct rep_recording *rr, int mode, uint32_t entries, int tbe, int sse)
{
	struct rep_config cfg = {(enum rep_mode)mode, REP_F_RE | (tbe ? REP_F_TBE : 0u) | (sse ? REP_F_SSE : 0u), entries};
	rr->mode = mode;
	if (mode == REP_PATCH)
		return 0;
	return rep_unit_new(&cfg, (struct rep_handler){on_interrupt, rr}, &rr->unit);
}

void rep_recording_finish(struct rep_recording *rr)
{
	if (rr->unit)
		rep_unit_flush(rr->unit);
	write_branches(rr);
}

void rep_recording_free(struct rep_recording *rr)
{
	rep_unit_free(rr->unit);
	rr->unit = NULL;
}
