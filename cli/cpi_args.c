/* The CPI options and the reading of the recordings (see cpi_args.h). */
#include "cli/cpi_args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/number.h"
#include "profiler/ibs_op.h"
#include "profiler/profile.h"

static int pick(const char *arg, const char *const *names, int n, const char *what, const char *cmd)
{
	for (int i = 0; i < n; i++)
		if (strcmp(arg, names[i]) == 0)
			return i;
	fprintf(stderr, "%s: unknown %s '%s' (", cmd, what, arg);
	for (int i = 0; i < n; i++)
		fprintf(stderr, "%s%s", i ? ", " : "", names[i]);
	fputs(")\n", stderr);
	return -1;
}

static int cycles_number(const char *arg, double *out, const char *opt, const char *cmd)
{
	double v;
	if (number_parse_real(arg, &v) != NUMBER_OK || v < 0 || v > 1e9)
		return fprintf(stderr, "%s: %s wants a number of cycles (0 or more), not '%s'\n", cmd, opt, arg), -1;
	*out = v;
	return 0;
}

int cpi_args_option(struct cpi_args *a, int code, const char *arg, const char *cmd)
{
	static const char *const units[] = {"function", "block", "insn"};
	static const char *const isrc[] = {"lbr", "ip", "ibs"};
	static const char *const csrc[] = {"period", "lbr"};
	int v;
	switch (code) {
	case CPI_O_BY:
		if ((v = pick(arg, units, 3, "--by unit", cmd)) < 0)
			return -1;
		a->by = (enum cpi_unit)v;
		break;
	case CPI_O_INSNS_FROM:
		if ((v = pick(arg, isrc, 3, "--insns-from source", cmd)) < 0)
			return -1;
		a->o.insns_from = (enum cpi_insns_src)v;
		break;
	case CPI_O_CYCLES_FROM:
		if ((v = pick(arg, csrc, 2, "--cycles-from source", cmd)) < 0)
			return -1;
		a->o.cycles_from = (enum cpi_cycles_src)v;
		break;
	case CPI_O_CYCLES_INPUT: a->cycles_input = arg; break;
	case CPI_O_REFILL:
		if (cycles_number(arg, &a->refill, "--refill", cmd) < 0)
			return -1;
		break;
	case CPI_O_SKID:
		if (cycles_number(arg, &a->skid, "--skid-cycles", cmd) < 0)
			return -1;
		break;
	default: return 1;
	}
	a->given = 1;
	return 0;
}

struct feed {
	struct cpi *c;
	const struct cpi_args *a;
	int cycles_only; /* the --cycles-input recording */
	int cycles_here; /* the cycles samples come from this recording */
};

static int on_sample(void *ctx, struct binary *bin, const struct perf_sample *s, const struct perfdata_event *ev)
{
	struct feed *f = ctx;
	int trig = ev ? trigger_of_event(ev->type, ev->config) : TRIG_TAKEN; /* text: perf script brstack */
	const struct cpi_opts *o = &f->a->o;
	if (ev && ev->pmu && strcmp(ev->pmu, IBS_OP_PMU_NAME) == 0) {
		/* op samples counting instructions: each IP stands for its interval */
		if (!f->cycles_only && o->insns_from == CPI_INSNS_IBS && (ev->config & IBS_OP_CONFIG_CNT_CTL))
			return cpi_add_insn_ip(f->c, s);
		return 0;
	}
	if (!f->cycles_only && trig == TRIG_TAKEN && s->nbr &&
	    (o->insns_from == CPI_INSNS_LBR || o->cycles_from == CPI_CYCLES_LBR))
		return cpi_add_lbr(f->c, bin, s);
	if (!f->cycles_only && trig == TRIG_INSNS && o->insns_from == CPI_INSNS_IP)
		return cpi_add_insn_ip(f->c, s);
	if (f->cycles_here && trig == TRIG_CYCLES && o->cycles_from == CPI_CYCLES_PERIOD)
		return cpi_add_cycles(f->c, bin, s);
	return 0;
}

static int read_one(struct feed *f, const struct profile_args *pa, const char *path, struct binary **bin,
		    const char *cmd)
{
	char msg[512] = "";
	int err = input_each_sample(path, &pa->io, on_sample, f, bin, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "%s: %s\n", cmd, msg[0] ? msg : pmusim_strerror(err));
		return -1;
	}
	return 0;
}

int cpi_args_load(struct cpi_args *a, const struct profile_args *pa, struct cpi **out, struct binary **bin,
		  struct binary **bin2, const char *cmd)
{
	*out = NULL;
	*bin = NULL;
	if (bin2)
		*bin2 = NULL;
	a->o.cycles_adjust = a->skid - a->refill;
	struct cpi *c = cpi_new(&a->o);
	if (!c)
		return fprintf(stderr, "%s: out of memory\n", cmd), -1;
	struct feed f = {.c = c, .a = a, .cycles_here = !a->cycles_input};
	if (read_one(&f, pa, pa->input, bin, cmd) < 0)
		return cpi_free(c), -1;
	if (a->cycles_input) {
		struct feed g = {.c = c, .a = a, .cycles_only = 1, .cycles_here = 1};
		struct binary *b2 = NULL;
		int r = read_one(&g, pa, a->cycles_input, &b2, cmd);
		if (bin2)
			*bin2 = b2;
		else
			binary_free(b2);
		if (r < 0)
			return cpi_free(c), -1;
	}
	*out = c;
	const struct cpi_stats *st = cpi_stats(c);
	if (a->o.insns_from == CPI_INSNS_LBR && !st->ranges)
		return fprintf(stderr,
			       "%s: %s holds no taken-branch samples with a branch stack (record "
			       "-e br_inst_retired.near_taken -b, or use --insns-from ip)\n",
			       cmd, pa->input), 1;
	if (a->o.insns_from == CPI_INSNS_IP && !st->insn_samples)
		return fprintf(stderr, "%s: %s holds no samples of the instructions event (record -e instructions)\n",
			       cmd, pa->input), 1;
	if (a->o.insns_from == CPI_INSNS_IBS && !st->insn_samples)
		return fprintf(stderr, "%s: %s holds no op samples counting instructions (record -e ibs_op/cnt_ctl=1/)\n",
			       cmd, pa->input), 1;
	if (a->o.cycles_from == CPI_CYCLES_PERIOD && !st->cycle_samples)
		return fprintf(stderr,
			       "%s: %s holds no samples of the cycles event (record -e cycles/period=N/ with "
			       "--delta 255, or give --cycles-input, or --cycles-from lbr)\n",
			       cmd, a->cycles_input ? a->cycles_input : pa->input), 1;
	if (a->o.cycles_from == CPI_CYCLES_LBR && !st->ranges)
		return fprintf(stderr, "%s: %s holds no taken-branch samples with a branch stack for --cycles-from lbr "
				       "(record -e br_inst_retired.near_taken -b)\n", cmd, pa->input), 1;
	if (a->o.cycles_from == CPI_CYCLES_LBR && st->ranges && st->lbr_no_cycles == st->ranges)
		return fprintf(stderr, "%s: %s: no LBR entry carries a cycle count\n", cmd, pa->input), 1;
	return 0;
}
