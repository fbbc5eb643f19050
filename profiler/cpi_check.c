/* CPI estimate against the truth (see cpi_check.h). */
#include "profiler/cpi_check.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/infile.h"

/* The number after "key": in line; 0 when absent. */
static int num_field(const char *line, const char *key, double *out)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	const char *p = strstr(line, pat);
	if (!p)
		return 0;
	char *end;
	double v = strtod(p + strlen(pat), &end);
	if (end == p + strlen(pat) || !isfinite(v))
		return 0; /* no number, or one no count can be (nan, inf) */
	*out = v;
	return 1;
}

/* The string after "key": in line (a truth's names hold no escaped quote that
 * matters here: the text is for display); 0 when absent. */
static int str_field(const char *line, const char *key, char *out, size_t len)
{
	char pat[64];
	snprintf(pat, sizeof(pat), "\"%s\": \"", key);
	const char *p = strstr(line, pat);
	if (!p)
		return 0;
	p += strlen(pat);
	size_t m = strcspn(p, "\"");
	snprintf(out, len, "%.*s", (int)(m < len ? m : len - 1), p);
	return 1;
}

int cpi_truth_read(const char *path, enum cpi_unit by, struct cpi_truth_unit **units, size_t *n,
		   double *total_cycles, char *msg, size_t ml)
{
	*units = NULL;
	*n = 0;
	*total_cycles = 0;
	const char *why;
	FILE *f = infile_fopen(path, &why);
	if (!f)
		return pmusim_fail(msg, ml, PMUSIM_ERR_IO, "cannot open %s: %s", path, why);
	const char *section = by == CPI_BY_BLOCK  ? "  \"blocks\": ["
			      : by == CPI_BY_INSN ? "  \"insns\": ["
						  : "  \"functions\": [";
	char line[4096];
	int in = 0, have_total = 0, err = 0;
	size_t cap = 0;
	while (!err && fgets(line, sizeof(line), f)) {
		if (!have_total && strncmp(line, "  \"cycles\": ", 12) == 0)
			have_total = num_field(line, "cycles", total_cycles);
		if (strncmp(line, section, strlen(section)) == 0) {
			in = 1;
			continue;
		}
		if (!in)
			continue;
		if (line[0] == ' ' && line[1] == ' ' && line[2] != ' ')
			break; /* the section's end */
		struct cpi_truth_unit u = {0};
		double ins, cyc, ex = 1;
		char hex[40];
		if (!str_field(line, by == CPI_BY_BLOCK ? "start" : "addr", hex, sizeof(hex)) ||
		    !num_field(line, by == CPI_BY_INSN ? "retired" : "instructions", &ins) ||
		    !num_field(line, "cycles", &cyc) || (by == CPI_BY_BLOCK && !num_field(line, "executions", &ex))) {
			err = pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT, "%s: a%s entry without %s", path,
					  by == CPI_BY_BLOCK ? " block" : by == CPI_BY_INSN ? "n insns" : " function",
					  by == CPI_BY_BLOCK  ? "start, instructions, executions and cycles"
					  : by == CPI_BY_INSN ? "addr, retired and cycles"
							      : "addr, instructions and cycles");
			break;
		}
		u.addr = strtoull(hex, NULL, 16);
		if (!str_field(line, by == CPI_BY_BLOCK ? "start_sym" : by == CPI_BY_INSN ? "addr_sym" : "name", u.name,
			       sizeof(u.name)))
			snprintf(u.name, sizeof(u.name), "0x%" PRIx64, u.addr);
		u.insns = by == CPI_BY_BLOCK ? ins * ex : ins;
		u.cycles = cyc;
		struct cpi_truth_unit *g = grow_array(*units, &cap, *n + 1, sizeof(*g));
		if (!g) {
			err = PMUSIM_ERR_NOMEM;
			break;
		}
		*units = g;
		g[(*n)++] = u;
	}
	if (!err && ferror(f))
		err = pmusim_fail(msg, ml, PMUSIM_ERR_IO, "cannot read %s", path);
	fclose(f);
	if (!err && !have_total)
		err = pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT,
				  "%s has no program cycles (a truth JSON of pmusim run or record --truth-json)", path);
	else if (!err && !in)
		err = pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT, "%s has no %.*s%s", path, (int)strlen(section + 2) - 3,
				  section + 2, by == CPI_BY_INSN ? " (record or run it with --truth-insns)" : "");
	if (err) {
		free(*units);
		*units = NULL;
		*n = 0;
	}
	return err;
}

static int hotter(const void *x, const void *y)
{
	const struct cpi_check_row *a = x, *b = y;
	if (a->share != b->share)
		return a->share < b->share ? 1 : -1;
	return (a->t->addr > b->t->addr) - (a->t->addr < b->t->addr);
}

int cpi_check(struct cpi *c, struct binary *bin, enum cpi_unit by, const struct cpi_truth_unit *u, size_t n,
	      double total_cycles, double min_share, struct cpi_check *out)
{
	*out = (struct cpi_check){.units = n};
	size_t cap = 0;
	double wsum = 0, esum = 0;
	for (size_t i = 0; i < n; i++) {
		double share = total_cycles > 0 ? u[i].cycles / total_cycles : 0;
		if (share < min_share || u[i].insns <= 0)
			continue;
		struct cpi_row r;
		if (by == CPI_BY_BLOCK)
			cpi_block(c, bin, u[i].addr, &r);
		else if (by == CPI_BY_INSN)
			cpi_insn(c, u[i].addr, &r);
		else
			cpi_function(c, bin, u[i].addr, &r);
		struct cpi_check_row k = {.t = &u[i], .share = share, .true_cpi = u[i].cycles / u[i].insns,
					  .est_cpi = cpi_row_cpi(&r), .est_rel_err = cpi_row_rel_err(&r)};
		k.rel_err = r.insns > 0 ? fabs(k.est_cpi - k.true_cpi) / k.true_cpi : 1.0;
		struct cpi_check_row *g = grow_array(out->rows, &cap, out->checked + 1, sizeof(*g));
		if (!g) {
			cpi_check_free(out);
			return PMUSIM_ERR_NOMEM;
		}
		out->rows = g;
		g[out->checked++] = k;
		wsum += u[i].cycles;
		esum += u[i].cycles * k.rel_err;
	}
	if (out->checked)
		arrays_sort(out->rows, out->checked, sizeof(*out->rows), hotter);
	for (size_t i = 0; i < out->checked; i++)
		if (out->rows[i].rel_err > out->max_rel_err) {
			out->max_rel_err = out->rows[i].rel_err;
			out->worst = i;
		}
	out->mean_rel_err = wsum > 0 ? esum / wsum : 0;
	return 0;
}

void cpi_check_free(struct cpi_check *k)
{
	free(k->rows);
	k->rows = NULL;
	k->checked = 0;
}
