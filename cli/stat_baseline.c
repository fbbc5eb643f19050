/* pmusim stat --json: the baseline document (see cli/stat_baseline.h). */
#include "cli/stat_baseline.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/buildid.h"
#include "common/err.h"
#include "common/json.h"
#include "common/symtab.h"
#include "pmu_model/cpu_model.h"

/* The names a baseline's costs go by, in the order they are written. */
static const char *const kind_name[FC_BASE_KINDS] = {"instructions", "cycles", "branches", "branch-misses"};

struct named {
	char name[256];
	const struct fc_func *f;
};

static int by_name(const void *a, const void *b)
{
	const struct named *x = a, *y = b;
	int c = strcmp(x->name, y->name);
	return c ? c : x->f->addr < y->f->addr ? -1 : x->f->addr > y->f->addr;
}

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');
	return s ? s + 1 : path;
}

static void put_cost(FILE *f, const char *key, const struct fc_cost *c)
{
	fprintf(f, "\"%s\": {", key);
	for (int k = 0; k < FC_BASE_KINDS; k++)
		fprintf(f, "%s\"%s\": %llu", k ? ", " : "", kind_name[k], (unsigned long long)c->v[k]);
	fputc('}', f);
}

/* A function's name as a baseline matches it across builds: the symbol's name, a
 * local one numbered as BOLT numbers them ("name/2"), "[unknown]" for code no
 * symbol covers. */
static void name_of(const struct symtab *st, const struct fc_func *fn, char *buf, size_t len)
{
	const struct sym *s = fn->addr ? symtab_lookup(st, fn->addr) : NULL;
	if (s && s->addr == fn->addr)
		symtab_bolt_name(symtab_perf_alias(st, s), buf, len);
	else
		snprintf(buf, len, "[unknown]");
}

static void put_program(FILE *f, const struct program *p)
{
	uint8_t id[64];
	char hex[2 * sizeof(id) + 1] = "";
	int n = elf_build_id(p->so.path, id);
	if (n > 0)
		build_id_hex(id, (size_t)n, hex);
	fprintf(f, "  \"program\": {\"name\": ");
	json_put_str(f, base_name(p->so.path));
	fprintf(f, ", \"build_id\": ");
	json_put_str(f, hex);
	/* argv[0] as given: its length moves the program's stack, so the counts
	 * depend on it (give the program the same relative path on every host) */
	fprintf(f, ", \"args\": [");
	for (char *const *v = p->so.argv; *v; v++)
		fprintf(f, "%s", v == p->so.argv ? "" : ", "), json_put_str(f, *v);
	fprintf(f, "]},\n");
}

static void put_options(FILE *f, const struct program *p)
{
	const struct cpu_model *cpu = cpu_model_default();
	fprintf(f, "  \"options\": {\"cpu\": ");
	json_put_str(f, cpu->name);
	fprintf(f, ", \"mhz\": %u, \"seed\": %llu, \"max_insns\": %llu, \"quantum\": %llu, \"quantum_unit\": \"%s\", "
		"\"clock_start\": %llu, \"env\": [",
		cpu->mhz, (unsigned long long)p->so.seed, (unsigned long long)p->so.max_insns,
		(unsigned long long)(p->so.quantum ? p->so.quantum : 1000000),
		p->so.quantum_cycles ? "cycles" : "instructions",
		(unsigned long long)(p->so.clock_start_given ? p->so.clock_start : SIM_CLOCK_START_DEFAULT));
	for (size_t i = 0; i < p->nenv; i++)
		fprintf(f, "%s", i ? ", " : ""), json_put_str(f, p->env[i]);
	fprintf(f, "]},\n");
}

int baseline_write(FILE *f, const struct program *p, const struct pmu *pmu, const struct eventlist *el,
		   struct func_costs *fc, int status)
{
	size_t nf;
	const struct fc_func *fn = func_costs_list(fc, &nf);
	const struct symtab *st = sim_symtab(p->sim);
	struct named *nm = calloc(nf + 1, sizeof(*nm));
	if (!nm)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < nf; i++) {
		nm[i].f = &fn[i];
		name_of(st, &fn[i], nm[i].name, sizeof(nm[i].name));
	}
	arrays_sort(nm, nf, sizeof(*nm), by_name);
	fprintf(f, "{\n  \"pmusim_baseline\": %d,\n  \"pmusim\": ", BASELINE_FORMAT);
	json_put_str(f, PMUSIM_VERSION);
	fprintf(f, ",\n");
	put_program(f, p);
	put_options(f, p);
	fprintf(f, "  \"exit_status\": %d,\n  \"events\": [", status);
	for (size_t i = 0; i < el->n; i++) {
		fprintf(f, "%s\n    {\"event\": ", i ? "," : "");
		json_put_str(f, el->name[i]);
		fprintf(f, ", \"count\": %llu}", (unsigned long long)pmu_count(pmu, (uint32_t)i));
	}
	fprintf(f, "\n  ],\n  \"functions\": [");
	for (size_t i = 0; i < nf; i++) {
		fprintf(f, "%s\n    {\"name\": ", i ? "," : "");
		json_put_str(f, nm[i].name);
		fprintf(f, ", \"calls\": %llu, ", (unsigned long long)nm[i].f->calls);
		put_cost(f, "self", &nm[i].f->self);
		fprintf(f, ", ");
		put_cost(f, "inclusive", &nm[i].f->incl);
		fputc('}', f);
	}
	fprintf(f, "\n  ]\n}\n");
	free(nm);
	return 0;
}
