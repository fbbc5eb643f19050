/* Ground truth output: BOLT fdata (the --data syntax llvm-bolt and perf2bolt
 * use: "<is_sym> <name> <hex offset> <is_sym> <name> <hex offset> <mispreds>
 * <count>", bolt/docs and DataReader) and a JSON document. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/buildid.h"
#include "common/err.h"
#include "common/fdata.h"
#include "common/grow.h"
#include "common/json.h"
#include "pmu_model/pmu.h"
#include "sim/truth.h"

struct line {
	uint64_t from, to, count;
};

static int cmp_line(const void *a, const void *b)
{
	const struct line *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

int truth_write_fdata(struct truth *t, FILE *f, const struct fdata_namer *nm)
{
	const struct truth_branch *br;
	const struct truth_edge *ed;
	size_t nb, ne;
	int err = truth_branches(t, &br, &nb);
	if (err < 0 || (err = truth_edges(t, &ed, &ne)) < 0)
		return err;
	struct line *l = calloc(2 * nb + ne + 1, sizeof(*l));
	if (!l)
		return PMUSIM_ERR_NOMEM;
	size_t k = 0;
	for (size_t i = 0; i < nb; i++) {
		if (br[i].taken)
			l[k++] = (struct line){br[i].addr, br[i].target, br[i].taken};
		if (br[i].kind == BK_COND && br[i].not_taken)
			l[k++] = (struct line){br[i].addr, br[i].fallthrough, br[i].not_taken};
	}
	for (size_t i = 0; i < ne; i++)
		l[k++] = (struct line){ed[i].from, ed[i].to, ed[i].count};
	arrays_sort(l, k, sizeof(*l), cmp_line);
	for (size_t i = 0; i < k; i++)
		fdata_write_line(f, nm, l[i].from, l[i].to, 0, l[i].count);
	free(l);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}

/* --- JSON ----------------------------------------------------------------- */

static void json_loc(FILE *f, const struct symtab *st, const char *key, uint64_t a)
{
	const struct sym *s = symtab_lookup(st, a);
	fprintf(f, "\"%s\": \"0x%" PRIx64 "\", \"%s_sym\": ", key, a, key);
	if (s) {
		char buf[600];
		snprintf(buf, sizeof(buf), "%s+0x%" PRIx64, s->name, a - s->addr);
		json_put_str(f, buf);
	} else {
		fputs("null", f);
	}
}

static void json_branches(struct truth *t, FILE *f, const struct symtab *st)
{
	const struct truth_branch *br;
	const struct truth_edge *ed;
	size_t nb = 0, ne = 0;
	truth_branches(t, &br, &nb);
	truth_edges(t, &ed, &ne);
	fputs("  \"branches\": [", f);
	for (size_t i = 0; i < nb; i++) {
		fprintf(f, "%s\n    {", i ? "," : "");
		json_loc(f, st, "addr", br[i].addr);
		fprintf(f, ", \"kind\": \"%s\", ", br_kind_name(br[i].kind));
		json_loc(f, st, "target", br[i].target);
		fprintf(f, ", \"fallthrough\": \"0x%" PRIx64 "\"", br[i].fallthrough);
		fprintf(f, ", \"taken\": %" PRIu64 ", \"not_taken\": %" PRIu64 "}", br[i].taken,
			br[i].not_taken);
	}
	fputs("\n  ],\n  \"transfers\": [", f);
	for (size_t i = 0; i < ne; i++) {
		fprintf(f, "%s\n    {\"kind\": \"%s\", ", i ? "," : "", br_kind_name(ed[i].kind));
		json_loc(f, st, "from", ed[i].from);
		fputs(", ", f);
		json_loc(f, st, "to", ed[i].to);
		fprintf(f, ", \"count\": %" PRIu64 "}", ed[i].count);
	}
	fputs("\n  ],\n", f);
}

static int json_functions(struct truth *t, FILE *f, const struct symtab *st)
{
	uint64_t *insns, *calls, unknown, *cyc = NULL, cyc_unknown = 0;
	int err = truth_function_counts(t, st, &insns, &calls, &unknown);
	if (err < 0)
		return err;
	if (truth_has_cycles(t) && (err = truth_function_cycles(t, st, &cyc, &cyc_unknown)) < 0) {
		free(insns);
		free(calls);
		return err;
	}
	fputs("  \"functions\": [", f);
	int first = 1;
	for (size_t i = 0; i < symtab_count(st); i++) {
		if (!insns[i] && !calls[i] && !(cyc && cyc[i]))
			continue;
		const struct sym *s = symtab_at(st, i);
		fprintf(f, "%s\n    {\"name\": ", first ? "" : ",");
		json_put_str(f, s->name);
		fprintf(f, ", \"addr\": \"0x%" PRIx64 "\", \"instructions\": %" PRIu64
			   ", \"calls\": %" PRIu64, s->addr, insns[i], calls[i]);
		if (cyc)
			fprintf(f, ", \"cycles\": %" PRIu64, cyc[i]);
		fputs("}", f);
		first = 0;
	}
	fprintf(f, "\n  ],\n  \"instructions_outside_symbols\": %" PRIu64 ",\n", unknown);
	if (cyc)
		fprintf(f, "  \"cycles_outside_symbols\": %" PRIu64 ",\n", cyc_unknown);
	free(insns);
	free(calls);
	free(cyc);
	return 0;
}

static int json_rep_and_runs(struct truth *t, FILE *f, const struct symtab *st)
{
	struct truth_rep *rep;
	size_t n;
	int err = truth_rep_sites(t, &rep, &n);
	if (err < 0)
		return err;
	fputs("  \"rep\": [", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n    {", i ? "," : "");
		json_loc(f, st, "addr", rep[i].addr);
		fprintf(f, ", \"executions\": %" PRIu64 ", \"iterations\": %" PRIu64 ", \"requested\": %" PRIu64
			", \"ended_by_condition\": %" PRIu64 "}", rep[i].executions, rep[i].iterations,
			rep[i].requested, rep[i].by_condition);
	}
	free(rep);
	const struct block_info **bi;
	uint64_t *ex;
	if ((err = truth_runs(t, &bi, &ex, &n)) < 0)
		return err;
	fputs("\n  ],\n  \"blocks\": [", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n    {", i ? "," : "");
		json_loc(f, st, "start", bi[i]->start);
		fprintf(f, ", \"instructions\": %u, \"end_kind\": \"%s\", \"executions\": %" PRIu64,
			bi[i]->ninsns, br_kind_name(bi[i]->kind), ex[i]);
		if (truth_has_cycles(t))
			fprintf(f, ", \"cycles\": %" PRIu64, truth_run_cycles(t, bi[i]->id));
		fputs("}", f);
	}
	fputs("\n  ]", f);
	free(bi);
	free(ex);
	return 0;
}

struct insn_line {
	uint64_t addr, retired, cycles;
};

static int by_insn_addr(const void *x, const void *y)
{
	const struct insn_line *a = x, *b = y;
	return (a->addr > b->addr) - (a->addr < b->addr);
}

/* "insns": [{"addr", "addr_sym", "retired", "cycles"}]: every instruction of the
 * program's runs that retired, the figures of the runs that hold it summed. */
static int json_insns(struct truth *t, FILE *f, const struct symtab *st)
{
	void *ctx;
	truth_insn_fn fn = truth_insn_figures(t, &ctx);
	if (!fn)
		return 0;
	const struct block_info **bi;
	size_t n, m = 0, cap = 0;
	int err = truth_program_runs(t, &bi, &n);
	if (err < 0)
		return err;
	struct insn_line *l = NULL;
	for (size_t i = 0; i < n && !err; i++) {
		const struct pmu_insn_figures *fig = fn(ctx, bi[i]->id);
		for (uint32_t k = 0; fig && k < bi[i]->ninsns && !err; k++) {
			if (!fig[k].retired && !fig[k].cycles)
				continue;
			struct insn_line *g = grow_array(l, &cap, m + 1, sizeof(*l));
			if (!g) {
				err = PMUSIM_ERR_NOMEM;
				break;
			}
			l = g;
			l[m++] = (struct insn_line){bi[i]->start + bi[i]->off[k], fig[k].retired, fig[k].cycles};
		}
	}
	free(bi);
	if (err) {
		free(l);
		return err;
	}
	if (m)
		arrays_sort(l, m, sizeof(*l), by_insn_addr);
	fputs(",\n  \"insns\": [", f);
	size_t out = 0;
	for (size_t i = 0; i < m; i++) {
		if (i + 1 < m && l[i + 1].addr == l[i].addr) { /* runs overlap here: one line */
			l[i + 1].retired += l[i].retired;
			l[i + 1].cycles += l[i].cycles;
			continue;
		}
		fprintf(f, "%s\n    {", out++ ? "," : "");
		json_loc(f, st, "addr", l[i].addr);
		fprintf(f, ", \"retired\": %" PRIu64 ", \"cycles\": %" PRIu64 "}", l[i].retired, l[i].cycles);
	}
	fputs("\n  ]", f);
	free(l);
	return 0;
}

/* "stack_snapshots": [{"tid", "pid", "ip", "stack": [return addresses, innermost first]}] */
static void json_stacks(const struct truth *t, FILE *f)
{
	const struct truth_stack *sk;
	size_t n = truth_stacks(t, &sk);
	const uint64_t *r = truth_stack_rets(t);
	if (!n)
		return;
	fputs(",\n  \"stack_snapshots\": [", f);
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s\n    {\"tid\": %u, \"pid\": %u, \"ip\": \"0x%" PRIx64 "\", \"stack\": [", i ? "," : "",
			sk[i].tid, sk[i].pid, sk[i].ip);
		for (size_t k = 0; k < sk[i].n; k++)
			fprintf(f, "%s\"0x%" PRIx64 "\"", k ? ", " : "", r[sk[i].first + k]);
		fputs("]}", f);
	}
	fputs("\n  ]", f);
}

int truth_write_json(struct truth *t, FILE *f, const struct symtab *st, const char *program,
		     uint64_t load_bias)
{
	fputs("{\n  \"program\": ", f);
	json_put_str(f, program);
	/* the program's build id, as perf.data's BUILD_ID table holds it: validate
	 * checks that a truth and a recording are of the same program */
	uint8_t id[BUILD_ID_MAX];
	char hex[2 * BUILD_ID_MAX + 1];
	int idlen = elf_build_id(program, id);
	if (idlen > 0) {
		build_id_hex(id, (size_t)idlen, hex);
		fprintf(f, ",\n  \"build_id\": \"%s\"", hex);
	}
	fprintf(f, ",\n  \"load_bias\": \"0x%" PRIx64 "\"", load_bias);
	fprintf(f, ",\n  \"instructions\": %" PRIu64 ",\n", truth_insns(t));
	if (truth_has_cycles(t)) {
		/* program cycles: the timing model's, without the cost of interrupts */
		uint64_t own, unlisted, other;
		truth_cycle_totals(t, &own, &unlisted, &other);
		fprintf(f, "  \"cycles\": %" PRIu64 ",\n  \"cycles_outside_blocks\": %" PRIu64
			   ",\n  \"cycles_other_programs\": %" PRIu64 ",\n", own, unlisted, other);
	}
	json_branches(t, f, st);
	int err = json_functions(t, f, st);
	if (err < 0 || (err = json_rep_and_runs(t, f, st)) < 0 || (err = json_insns(t, f, st)) < 0)
		return err;
	json_stacks(t, f);
	fputs("\n}\n", f);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
