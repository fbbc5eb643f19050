/* The options, inputs and stage chain of `report --regions` and `validate
 * --regions` (see report_regions.h; the stages: docs/regions.md). */
#include "cli/report_regions.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "common/err.h"
#include "common/number.h"
#include "profiler/perfdata.h"
#include "profiler/symbolize.h"

void region_args_init(struct region_args *a)
{
	memset(a, 0, sizeof(*a));
	rcfg_options_init(&a->cfg);
	rprune_options_init(&a->prune);
	rinline_options_init(&a->inl);
	a->min_jaccard = 0.95;
	a->reentry = 1;
}

/* A fraction from 0 to 1; 0 or -1 with one line printed. */
static int fraction(const char *arg, double *out, const char *opt, const char *cmd)
{
	double v;
	if (number_parse_real(arg, &v) != NUMBER_OK || !(v >= 0 && v <= 1))
		return fprintf(stderr, "%s: %s needs a number from 0 to 1, not '%s'\n", cmd, opt,
		               arg),
		       -1;
	*out = v;
	return 0;
}

/* A whole number up to max; 0 or -1 with one line printed. */
static int whole(const char *arg, uint64_t max, uint64_t *out, const char *opt, const char *cmd)
{
	int st = number_parse(arg, out);
	if (st == NUMBER_OK && *out > max)
		st = NUMBER_RANGE;
	if (st != NUMBER_OK)
		return fprintf(stderr, "%s: %s needs a whole number up to %llu: '%s' %s\n", cmd,
		               opt, (unsigned long long)max, arg, number_strerror(st)),
		       -1;
	return 0;
}

int region_args_option(struct region_args *a, int code, const char *arg, const char *cmd)
{
	uint64_t v;
	switch (code) {
	case RGN_O_MAX_HOPS:
		if (whole(arg, 1000, &v, "--max-hops", cmd) < 0)
			return -1;
		a->cfg.max_hops = (unsigned)v;
		break;
	case RGN_O_COLD_FRACTION:
		if (fraction(arg, &a->prune.cold_fraction, "--cold-fraction", cmd) < 0)
			return -1;
		break;
	case RGN_O_KEEP_SHARE:
		if (fraction(arg, &a->prune.loop_share, "--keep-share", cmd) < 0)
			return -1;
		break;
	case RGN_O_MIN_REGION_SHARE:
		if (fraction(arg, &a->prune.min_share, "--min-region-share", cmd) < 0)
			return -1;
		break;
	case RGN_O_MIN_ITERATIONS:
		if (number_parse_real(arg, &a->prune.min_iterations) != NUMBER_OK ||
		    !(a->prune.min_iterations >= 0 && a->prune.min_iterations <= 1e15))
			return fprintf(
			           stderr,
			           "%s: --min-iterations needs a number of 0 or more, not '%s'\n",
			           cmd, arg),
			       -1;
		break;
	case RGN_O_MIN_INSNS:
		if (whole(arg, UINT32_MAX, &a->prune.min_insns, "--min-insns", cmd) < 0)
			return -1;
		break;
	case RGN_O_PID:
		if (whole(arg, UINT32_MAX - 1, &v, "--pid", cmd) < 0)
			return -1;
		a->pid = (uint32_t)v;
		break;
	case RGN_O_TRUTH_JSON:
		a->truth = arg;
		break;
	case RGN_O_INLINE_DEPTH:
		if (whole(arg, 64, &v, "--inline-depth", cmd) < 0)
			return -1;
		a->inl.max_depth = (unsigned)v;
		break;
	case RGN_O_INLINE_CALLEE:
		if (whole(arg, UINT32_MAX, &a->inl.max_callee_insns, "--inline-callee-insns", cmd) < 0)
			return -1;
		break;
	case RGN_O_INLINE_BUDGET:
		if (whole(arg, UINT32_MAX, &a->inl.max_region_insns, "--inline-region-insns", cmd) < 0)
			return -1;
		break;
	case RGN_O_INLINE_MIN_CALL:
		if (fraction(arg, &a->inl.min_call_fraction, "--inline-min-call", cmd) < 0)
			return -1;
		break;
	case RGN_O_REENTRY:
		if (strcmp(arg, "yes") != 0 && strcmp(arg, "no") != 0)
			return fprintf(stderr, "%s: --reentry-points needs yes or no, not '%s'\n", cmd,
			               arg),
			       -1;
		a->reentry = strcmp(arg, "yes") == 0;
		break;
	case RGN_O_MIN_JACCARD:
		if (fraction(arg, &a->min_jaccard, "--min-jaccard", cmd) < 0)
			return -1;
		break;
	default:
		return 1;
	}
	a->given = 1;
	return 0;
}

/* Follows every mapping record of the recording, so that the process's code is
 * what it mapped (the way hot_code_from_ops decodes its branches). */
static int follow_mappings(const char *path, struct symbolizer *z, char *msg, size_t ml)
{
	struct perfdata *pd;
	int err = perfdata_open(path, &pd, msg, ml), got;
	if (err < 0)
		return err;
	struct perf_record r;
	while (!err && (got = perfdata_next(pd, &r, msg, ml)) != 0)
		err = got < 0 ? got : symbolizer_record(z, &r);
	perfdata_close(pd);
	return err;
}

int region_load_ops(const struct region_args *a, const char *path, struct hot_code **hot,
                    struct region_code *code, const char *cmd)
{
	char msg[512] = "";
	memset(code, 0, sizeof(*code));
	int err = hot_code_from_ops(path, a->pid, hot, msg, sizeof(msg));
	if (err == 0 && (!(code->z = symbolizer_new()) || !(code->pc = proc_code_new(code->z))))
		err = PMUSIM_ERR_NOMEM;
	if (err == 0)
		err = follow_mappings(path, code->z, msg, sizeof(msg));
	if (err == 0 && !(code->bin = proc_code_of(code->pc, (*hot)->pid)))
		err = pmusim_fail(msg, sizeof(msg), PMUSIM_ERR_UNSUPPORTED,
		                  "%s: none of the files process %u maps can be read here", path,
		                  (unsigned)(*hot)->pid);
	if (err == 0)
		return 0;
	fprintf(stderr, "%s: %s\n", cmd, msg[0] ? msg : pmusim_strerror(err));
	hot_code_free(*hot);
	*hot = NULL;
	region_code_fini(code);
	return -1;
}

int region_load_truth(const char *path, struct hot_code **hot, struct region_code *code,
                      const char *cmd)
{
	char msg[512] = "";
	int err = 0;
	*hot = NULL;
	if (!code->bin && (err = hot_code_truth_binary(path, &code->own, msg, sizeof(msg))) == 0)
		code->bin = code->own;
	if (err == 0)
		err = hot_code_from_truth_code(path, code->bin, hot, msg, sizeof(msg));
	if (err == 0)
		return 0;
	return fprintf(stderr, "%s: %s\n", cmd, msg[0] ? msg : pmusim_strerror(err)), -1;
}

void region_code_fini(struct region_code *c)
{
	proc_code_free(c->pc);
	symbolizer_free(c->z);
	binary_free(c->own);
	memset(c, 0, sizeof(*c));
}

void region_sel_free(struct region_sel *s)
{
	if (!s)
		return;
	for (size_t r = 0; s->patch && s->rg && r < s->rg->nregion; r++)
		rpatch_free(s->patch[r]);
	free(s->patch);
	rinline_free(s->inl);
	free(s->order);
	free(s->set_of);
	rset_free(s->set);
	rprune_free(s->p);
	rflow_free(s->f);
	rgraph_free(s->rg);
	rcfg_free(s->g);
	hot_code_free(s->hot);
	free(s);
}

/* Patch points of the kept regions only: a dropped region is not rewritten. */
static int find_patches(struct region_sel *s, char *msg, size_t ml)
{
	s->patch = calloc(s->rg->nregion + 1, sizeof(*s->patch));
	if (!s->patch)
		return PMUSIM_ERR_NOMEM;
	for (size_t r = 0; r < s->rg->nregion; r++) {
		if (!s->p->region[r].kept)
			continue;
		int err = rpatch_find(s->g, &s->rg->region[r], s->f, &s->patch[r], msg, ml);
		if (!err && s->args->reentry)
			err = rpatch_add_reentry(s->g, &s->rg->region[r], s->f, s->patch[r], msg, ml);
		if (err < 0)
			return err;
	}
	return 0;
}

/* The kept regions, hottest first (ties by address: block order). */
static int order_kept(struct region_sel *s)
{
	s->order = malloc((s->rg->nregion + 1) * sizeof(size_t));
	if (!s->order)
		return PMUSIM_ERR_NOMEM;
	for (size_t r = 0; r < s->rg->nregion; r++) {
		if (!s->p->region[r].kept)
			continue;
		size_t k = s->norder++;
		while (k > 0 && s->p->region[s->order[k - 1]].weight < s->p->region[r].weight)
			s->order[k] = s->order[k - 1], k--;
		s->order[k] = r;
	}
	return 0;
}

/* The replacement code of the kept regions, and where each region's is. */
static int build_set(struct region_sel *s, char *msg, size_t ml)
{
	int err = order_kept(s);
	if (!err)
		err = rset_build(s->g, s->rg, s->f, s->p, s->patch, s->inl, s->order, s->norder,
		                 s->hot->total, &s->set, msg, ml);
	if (!err && !(s->set_of = malloc((s->rg->nregion + 1) * sizeof(size_t))))
		err = PMUSIM_ERR_NOMEM;
	for (size_t r = 0; !err && r < s->rg->nregion; r++)
		s->set_of[r] = SIZE_MAX;
	for (size_t i = 0, k = 0; !err && i < s->norder; i++)
		if (s->patch[s->order[i]]->npoint)
			s->set_of[s->order[i]] = k++;
	return err;
}

int region_select(const struct region_args *a, struct binary *code, struct hot_code *hot,
                  const char *source, struct region_sel **out, const char *cmd)
{
	char msg[512] = "";
	*out = NULL;
	struct region_sel *s = calloc(1, sizeof(*s));
	if (!s) {
		hot_code_free(hot);
		return fprintf(stderr, "%s: out of memory\n", cmd), -1;
	}
	s->hot = hot;
	s->source = source;
	s->args = a;
	struct rflow_options fo;
	rflow_options_init(&fo);
	int err = rcfg_discover(code, hot, &a->cfg, &s->g, msg, sizeof(msg));
	if (!err)
		err = rgraph_build(s->g, &s->rg, msg, sizeof(msg));
	if (!err)
		err = rflow_infer(s->g, &fo, &s->f, msg, sizeof(msg));
	if (!err)
		err = rprune_select(s->g, s->rg, s->f, hot->total, &a->prune, &s->p, msg,
		                    sizeof(msg));
	if (!err)
		err = find_patches(s, msg, sizeof(msg));
	if (!err) {
		struct rinline_options io = a->inl;
		io.cold_fraction = a->prune.cold_fraction;
		io.sample_weight = hot->samples ? hot->total / (double)hot->samples : 0;
		err = rinline_run(s->g, s->rg, s->f, s->p, &io, &s->inl, msg, sizeof(msg));
	}
	if (!err)
		err = build_set(s, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", cmd, msg[0] ? msg : pmusim_strerror(err));
		region_sel_free(s);
		return -1;
	}
	*out = s;
	return 0;
}

static int write_text(FILE *f, void *ctx)
{
	return region_sel_write_text(f, ctx);
}

static int write_json(FILE *f, void *ctx)
{
	return region_sel_write_json(f, ctx);
}

static int write_dot(FILE *f, void *ctx)
{
	return region_sel_write_dot(f, ctx);
}

int region_report(const struct region_args *a, const char *input, const char *name, int format,
                  const char *svg_dir, int (*write)(int (*fn)(FILE *f, void *ctx), void *ctx))
{
	static int (*const writer[])(FILE * f, void *ctx) = {
	    [REGION_TEXT] = write_text, [REGION_JSON] = write_json, [REGION_DOT] = write_dot};
	const char *cmd = "pmusim report";
	/* a --svg that cannot work fails before the selection's work */
	if (svg_dir && region_svg_check(svg_dir, cmd) < 0)
		return EXIT_PMUSIM_ERROR;
	struct region_code code = {0};
	struct hot_code *hot;
	int r = a->truth ? region_load_truth(a->truth, &hot, &code, cmd)
	                 : region_load_ops(a, input, &hot, &code, cmd);
	struct region_sel *s = NULL;
	if (r == 0)
		r = region_select(a, code.bin, hot, a->truth ? a->truth : name, &s, cmd);
	/* the files first, as report's other outputs: a reader of standard output that
	 * stops early (| head) must not cost them */
	if (r == 0 && svg_dir)
		r = region_sel_write_svgs(s, svg_dir, cmd);
	if (r == 0)
		r = write(writer[format], s);
	region_sel_free(s);
	region_code_fini(&code);
	return r < 0 ? EXIT_PMUSIM_ERROR : 0;
}
