/* The live rewriter of `pmusim run --dbr` (cli/dbr_live.h): op samples per
 * window, the selector on them, replacement code installed and unpatched. */
#include "cli/dbr_live.h"

#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/program.h"
#include "common/dbr_image.h"
#include "common/err.h"
#include "common/number.h"
#include "pmu_model/pmu.h"
#include "profiler/binary.h"
#include "profiler/dbr_code.h"
#include "profiler/hot_code.h"

/* Fewer samples than this in a window: no selection from it (a program's last,
 * short window). */
#define MIN_WINDOW_SAMPLES 256
/* A window whose samples fall on the code of regions still patched in at least
 * this share selects nothing new: the selector's work (discovery, counts,
 * inlining) is spent only when the program's hot code moved. */
#define DBR_LIVE_SETTLED 0.9

struct live_region {
	struct dbr_code *code;
	uint64_t start;   /* its lowest original block */
	uint64_t *blocks; /* its own blocks' original starts (clone 0) */
	uint32_t nblocks;
	uint64_t (*range)[2]; /* every copied block's original bytes, clones' too */
	uint32_t nrange;
	int active;       /* patched */
	uint64_t samples; /* of the window, on instructions it copies (wherever they ran) */
};

void dbr_live_init(struct dbr_live *d)
{
	memset(d, 0, sizeof(*d));
	d->window = DBR_LIVE_WINDOW;
	d->period = DBR_LIVE_PERIOD;
	d->unpatch = DBR_LIVE_UNPATCH;
	region_args_init(&d->args);
}

int dbr_live_option(struct dbr_live *d, const char *cmd, const char *opt, const char *arg)
{
	d->given = 1;
	if (strcmp(opt, "--dbr-unpatch") == 0) {
		double v;
		if (number_parse_real(arg, &v) != NUMBER_OK || !(v >= 0 && v <= 1))
			return fprintf(stderr, "%s: --dbr-unpatch '%s': a fraction from 0 to 1\n", cmd, arg), -1;
		d->unpatch = v;
		return 0;
	}
	uint64_t *v = strcmp(opt, "--dbr-window") == 0 ? &d->window : &d->period;
	if (option_positive(cmd, opt, arg, v) < 0)
		return -1;
	if (v == &d->period && (d->period % 16 || d->period < 128))
		return fprintf(stderr, "%s: --dbr-period %s: a multiple of 16 from 128 on (IbsOpMaxCnt)\n", cmd,
			       arg),
		       -1;
	return 0;
}

/* A sample on the program's instruction ip counts for every active region that
 * copies it: a region is as hot as its code, whichever copy ran it (another
 * region may hold it inlined). */
static void count_sample(struct dbr_live *d, uint64_t ip)
{
	int covered = 0;
	for (size_t i = 0; i < d->nreg; i++) {
		struct live_region *r = &d->reg[i];
		for (uint32_t k = 0; r->active && k < r->nrange; k++)
			if (ip >= r->range[k][0] && ip < r->range[k][1]) {
				r->samples++;
				covered = 1;
				break;
			}
	}
	d->covered += covered;
}

/* One op sample of the rewritten run, as the program's instruction it stands for. */
static void on_op_sample(void *ctx, const struct pmu_op_sample *s)
{
	struct dbr_live *d = ctx;
	if (d->failed || !sim_dbr_program_running(d->p->sim))
		return; /* another process's, or the program's after an execve */
	int inverted;
	uint64_t ip = sim_dbr_original(d->p->sim, s->ip, &inverted);
	if (!ip)
		return; /* an instruction the rewriter added */
	count_sample(d, ip);
	int cond = s->branch && s->kind == BK_COND;
	uint64_t target = 0;
	if (s->branch && s->taken && (s->kind == BK_JMP_IND || s->kind == BK_CALL_IND))
		target = sim_dbr_resolve(d->p->sim, s->target);
	if (hot_build_sample(d->hb, ip, (double)s->interval, cond, cond && (s->taken ^ inverted), target) < 0)
		d->failed = 1;
}

/* 1 when a block of r's own code starts where a block of an active region does. */
static int overlaps_active(const struct dbr_live *d, const struct rset_region *r)
{
	for (size_t i = 0; i < d->nreg; i++) {
		if (!d->reg[i].active)
			continue;
		for (uint32_t b = 0; b < r->nblock; b++)
			for (uint32_t k = 0; r->block[b].clone == 0 && k < d->reg[i].nblocks; k++)
				if (d->reg[i].blocks[k] == r->block[b].start)
					return 1;
	}
	return 0;
}

static int keep_region(struct dbr_live *d, const struct rset_region *r, struct dbr_code *c)
{
	struct live_region *nr = realloc(d->reg, (d->nreg + 1) * sizeof(*nr));
	if (!nr)
		return PMUSIM_ERR_NOMEM;
	d->reg = nr;
	struct live_region *lr = &d->reg[d->nreg];
	*lr = (struct live_region){.code = c, .start = r->start, .active = 1};
	lr->blocks = calloc(r->nblock + 1, sizeof(uint64_t));
	lr->range = calloc(r->nblock + 1, sizeof(*lr->range));
	d->nreg++;
	if (!lr->blocks || !lr->range)
		return PMUSIM_ERR_NOMEM;
	for (uint32_t b = 0; b < r->nblock; b++) {
		const struct rset_block *rb = &r->block[b];
		if (rb->clone == 0)
			lr->blocks[lr->nblocks++] = rb->start;
		lr->range[lr->nrange][0] = rb->start;
		lr->range[lr->nrange++][1] = rb->start + rb->off[rb->ninsns];
	}
	return 0;
}

static void install(struct dbr_live *d, const struct rset_region *r, const struct hot_code *hot)
{
	struct program *p = d->p;
	char msg[512] = "";
	struct dbr_code *c = NULL;
	if (!dbr_region_in(r, d->bin) || overlaps_active(d, r))
		return;
	int err = dbr_code_emit(r, d->bin, hot, p->dbr.identity ? DBR_IDENTITY : DBR_HOT_PATHS,
				sim_dbr_next(p->sim), &c, msg, sizeof(msg));
	if (!err && c->len > sim_dbr_room(p->sim))
		err = PMUSIM_ERR_UNSUPPORTED, snprintf(msg, sizeof(msg), "no room left for replacement code");
	struct dbr_image img = {0};
	if (!err) {
		img = dbr_code_image(c);
		err = sim_dbr_install(p->sim, &img);
		if (err == PMUSIM_ERR_ARG)
			snprintf(msg, sizeof(msg), "its patch points are patched already");
	}
	if (!err)
		err = keep_region(d, r, c);
	if (err) {
		if (p->verbose)
			fprintf(stderr, "%s: window %" PRIu64 ": region 0x%" PRIx64 " not installed: %s\n", p->cmd,
				d->windows, r->start, msg[0] ? msg : pmusim_strerror(err));
		if (err == PMUSIM_ERR_NOMEM)
			d->failed = 1;
		if (!d->nreg || d->reg[d->nreg - 1].code != c)
			dbr_code_free(c); /* else it is the region's, freed with it */
		return;
	}
	d->installed++;
	if (p->verbose)
		fprintf(stderr, "%s: window %" PRIu64 ": region 0x%" PRIx64 " installed (%u blocks, %zu bytes at 0x%" PRIx64
			", %zu patch points)\n",
			p->cmd, d->windows, r->start, r->nblock, c->len, c->base, c->npatch);
}

/* Installed regions that the window's samples left: unpatched. */
static void unpatch_cold(struct dbr_live *d, uint64_t samples)
{
	for (size_t i = 0; i < d->nreg; i++) {
		struct live_region *r = &d->reg[i];
		double share = (double)r->samples / (double)samples;
		r->samples = 0;
		if (!r->active || share >= d->unpatch)
			continue;
		struct dbr_image img = dbr_code_image(r->code);
		if (sim_dbr_unpatch(d->p->sim, &img) < 0)
			continue;
		r->active = 0;
		d->unpatched++;
		if (d->p->verbose)
			fprintf(stderr, "%s: window %" PRIu64 ": region 0x%" PRIx64 " unpatched (%.2f %% of the samples)\n",
				d->p->cmd, d->windows, r->start, 100 * share);
	}
}

static void on_window(void *ctx)
{
	struct dbr_live *d = ctx;
	if (d->failed || !sim_dbr_usable(d->p->sim))
		return;
	d->windows++;
	struct hot_code *hot = hot_build_finish(d->hb);
	d->hb = NULL;
	if (!hot || hot_build_new(&d->hb) < 0) {
		hot_code_free(hot);
		d->failed = 1;
		return;
	}
	uint64_t n = hot->samples;
	d->samples += n;
	uint64_t covered = d->covered;
	d->covered = 0;
	if (n < MIN_WINDOW_SAMPLES) {
		for (size_t i = 0; i < d->nreg; i++)
			d->reg[i].samples = 0; /* shares are of one window's samples */
		hot_code_free(hot);
		return;
	}
	unpatch_cold(d, n);
	if ((double)covered >= DBR_LIVE_SETTLED * (double)n) {
		/* the hot code is what the patched regions copy: nothing new to select */
		hot_code_free(hot);
		return;
	}
	struct region_sel *sel = NULL;
	if (region_select(&d->args, d->bin, hot, "live op samples", &sel, d->p->cmd) < 0)
		return; /* one line printed; the next window tries again */
	for (size_t i = 0; i < sel->set->nregion && !d->failed; i++)
		install(d, &sel->set->region[i], sel->hot); /* the window's branch directions */
	region_sel_free(sel);
}

int dbr_live_start(struct dbr_live *d, struct program *p)
{
	char msg[512] = "";
	d->p = p;
	struct pmu_config cfg = {.seed = p->so.seed};
	cfg.op = (struct pmu_op_config){.period = d->period, .count_ops = 1};
	struct pmu_sample_sink sink = {.op_sample = on_op_sample, .ctx = d};
	int err = binary_open(sim_exe_path(p->sim), sim_load_bias(p->sim), &d->bin, msg, sizeof(msg));
	if (err < 0)
		return fprintf(stderr, "%s: %s\n", p->cmd, msg), -1;
	if (pmu_new(&cfg, sink, &d->pmu, msg, sizeof(msg)) < 0 || hot_build_new(&d->hb) < 0 ||
	    sim_add_sink(p->sim, pmu_block_sink(d->pmu)) < 0)
		return fprintf(stderr, "%s: %s\n", p->cmd, msg[0] ? msg : "out of memory"), -1;
	sim_set_window(p->sim, d->window, on_window, d);
	return 0;
}

void dbr_live_tell(const struct dbr_live *d)
{
	if (!d->p || !d->p->verbose)
		return;
	size_t active = 0;
	for (size_t i = 0; i < d->nreg; i++)
		active += d->reg[i].active;
	fprintf(stderr, "%s: live rewriter: %" PRIu64 " windows, %" PRIu64 " op samples, %" PRIu64
		" regions installed, %" PRIu64 " unpatched, %zu patched at the end\n",
		d->p->cmd, d->windows, d->samples, d->installed, d->unpatched, active);
}

void dbr_live_free(struct dbr_live *d)
{
	for (size_t i = 0; i < d->nreg; i++) {
		dbr_code_free(d->reg[i].code);
		free(d->reg[i].blocks);
		free(d->reg[i].range);
	}
	free(d->reg);
	hot_build_free(d->hb);
	binary_free(d->bin);
	pmu_free(d->pmu);
	memset(d, 0, sizeof(*d));
}
