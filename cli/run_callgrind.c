/* pmusim run --callgrind FILE (see cli/run_callgrind.h). */
#include "cli/run_callgrind.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/symtab.h"
#include "profiler/callgrind_out.h"

int run_callgrind_open(struct run_callgrind *cg, struct program *p)
{
	if (!cg->path)
		return 0;
	if (!(cg->out = outputs_open(&p->outs, "--callgrind", cg->path)))
		return -1;
	struct pmu_config cfg = {.seed = p->so.seed};
	char msg[256] = "";
	if (pmu_new(&cfg, (struct pmu_sample_sink){0}, &cg->pmu, msg, sizeof(msg)) < 0 ||
	    pmu_attribute_runs(cg->pmu) < 0 || pmu_attribute_insns(cg->pmu) < 0)
		return fprintf(stderr, "%s: %s\n", p->cmd, msg[0] ? msg : "out of memory"), -1;
	return program_use_pmu(p, cg->pmu);
}

static uint64_t clock_cycles(void *ctx)
{
	return pmu_cycles(ctx);
}

static uint64_t clock_misses(void *ctx)
{
	return pmu_mispredicts(ctx);
}

int run_callgrind_attach(struct run_callgrind *cg, struct program *p)
{
	if (!cg->path)
		return 0;
	/* the function costs after the PMU: its clock includes each block */
	if (sim_add_sink(p->sim, pmu_block_sink(cg->pmu)) < 0 ||
	    !(cg->fc = func_costs_new(sim_symtab(p->sim), (struct fc_clock){clock_cycles, clock_misses, cg->pmu})) ||
	    sim_add_sink(p->sim, func_costs_sink(cg->fc)) < 0)
		return fprintf(stderr, "%s: out of memory\n", p->cmd), -1;
	func_costs_keep_detail(cg->fc);
	return 0;
}

/* Names of the functions that ran: the symbol's, BOLT's "name/N" for a local
 * whose name another one that ran has too. */
struct fname {
	uint64_t addr;
	char name[256];
};

struct ctx {
	const struct sim *sim;
	const struct pmu *pmu;
	struct fname *fn;
	size_t nfn;
};

static int by_name(const void *a, const void *b)
{
	return strcmp(((const struct fname *)a)->name, ((const struct fname *)b)->name);
}

static int by_addr(const void *a, const void *b)
{
	const struct fname *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static const struct pmu_insn_figures *insn_of(void *ctx, uint32_t id)
{
	return pmu_insn_figures(((struct ctx *)ctx)->pmu, id);
}

static uint64_t func_of(void *ctx, uint64_t addr)
{
	const struct sym *s = symtab_lookup(sim_symtab(((struct ctx *)ctx)->sim), addr);
	return s ? s->addr : 0;
}

static const char *name_of(void *ctx, uint64_t func, char *buf, size_t len)
{
	struct ctx *c = ctx;
	struct fname key = {.addr = func};
	const struct fname *f = arrays_find(&key, c->fn, c->nfn, sizeof(*c->fn), by_addr);
	snprintf(buf, len, "%s", f ? f->name : "[unknown]");
	return buf;
}

static const char *object_of(void *ctx, uint64_t addr)
{
	const struct sim_mapping *m;
	size_t n = sim_exec_mappings(((struct ctx *)ctx)->sim, &m);
	for (size_t i = 0; i < n; i++)
		if (addr >= m[i].addr && addr - m[i].addr < m[i].len)
			return m[i].path;
	return "???";
}

static int names(struct ctx *c, struct func_costs *fc)
{
	size_t n;
	const struct fc_func *f = func_costs_list(fc, &n);
	const struct symtab *st = sim_symtab(c->sim);
	if (!(c->fn = calloc(n + 1, sizeof(*c->fn))))
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < n; i++) {
		const struct sym *s = f[i].addr ? symtab_lookup(st, f[i].addr) : NULL;
		c->fn[c->nfn].addr = f[i].addr;
		snprintf(c->fn[c->nfn++].name, sizeof(c->fn->name), "%s", s ? s->name : "[unknown]");
	}
	arrays_sort(c->fn, c->nfn, sizeof(*c->fn), by_name);
	for (size_t i = 0; i < c->nfn; i++) {
		int dup = (i > 0 && strcmp(c->fn[i - 1].name, c->fn[i].name) == 0) ||
			  (i + 1 < c->nfn && strcmp(c->fn[i + 1].name, c->fn[i].name) == 0);
		const struct sym *s = dup && c->fn[i].addr ? symtab_lookup(st, c->fn[i].addr) : NULL;
		if (s)
			symtab_bolt_name(s, c->fn[i].name, sizeof(c->fn[i].name));
	}
	arrays_sort(c->fn, c->nfn, sizeof(*c->fn), by_addr);
	return 0;
}

int run_callgrind_write(struct run_callgrind *cg, struct program *p)
{
	if (!cg->path)
		return 0;
	func_costs_finish(cg->fc);
	struct ctx c = {p->sim, cg->pmu, NULL, 0};
	char cmd[4096] = "";
	size_t k = 0;
	for (char *const *v = p->so.argv; *v && k < sizeof(cmd) - 1; v++)
		k += (size_t)snprintf(cmd + k, sizeof(cmd) - k, "%s%s", v == p->so.argv ? "" : " ", *v);
	struct cg_source src = {cg->fc, insn_of, func_of, name_of, object_of, &c, "pmusim " PMUSIM_VERSION, cmd,
				sim_pid(p->sim)};
	int err = func_costs_error(cg->fc);
	if (!err)
		err = names(&c, cg->fc);
	if (!err)
		err = callgrind_write(cg->out->f, &src);
	free(c.fn);
	if (err < 0)
		return fprintf(stderr, "%s: --callgrind: %s\n", p->cmd, pmusim_strerror(err)), -1;
	return outputs_commit(&p->outs, cg->out);
}

void run_callgrind_free(struct run_callgrind *cg)
{
	func_costs_free(cg->fc);
	pmu_free(cg->pmu);
}
