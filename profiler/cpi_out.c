/* Writing a CPI report (see cpi.h: cpi_write). */
#include <inttypes.h>
#include <stdlib.h>

#include "common/err.h"
#include "common/json.h"
#include "common/symtab.h"
#include "profiler/cpi.h"

const char *cpi_insns_src_name(enum cpi_insns_src s)
{
	return s == CPI_INSNS_IP ? "ip" : s == CPI_INSNS_IBS ? "ibs" : "lbr";
}

const char *cpi_cycles_src_name(enum cpi_cycles_src s)
{
	return s == CPI_CYCLES_LBR ? "lbr" : "period";
}

const char *cpi_unit_name(enum cpi_unit u)
{
	return u == CPI_BY_BLOCK ? "block" : u == CPI_BY_INSN ? "insn" : "function";
}

/* "name+0xOFF" of addr, or its address without a symbol. */
static void place(struct binary *bin, uint64_t addr, char *buf, size_t len)
{
	const struct sym *s = symtab_lookup(binary_symtab(bin), addr);
	if (s)
		snprintf(buf, len, "%s+0x%" PRIx64, symtab_perf_alias(binary_symtab(bin), s)->name, addr - s->addr);
	else
		snprintf(buf, len, "0x%" PRIx64, addr);
}

static void row_name(struct binary *bin, enum cpi_unit by, const struct cpi_row *r, char *buf, size_t len)
{
	if (by == CPI_BY_FUNCTION && r->name)
		snprintf(buf, len, "%s", r->name);
	else
		place(bin, r->start, buf, len);
}

static void csv_field(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"')
			fputc('"', f); /* RFC 4180: a quote inside a field is doubled */
		fputc(*s, f);
	}
	fputc('"', f);
}

static void text_header(FILE *f, const struct cpi *c, enum cpi_unit by, const struct cpi_opts *o)
{
	const struct cpi_stats *st = cpi_stats(c);
	fprintf(f, "# CPI by %s\n", cpi_unit_name(by));
	if (o->insns_from == CPI_INSNS_LBR)
		fprintf(f, "# instructions: the LBR ranges of %" PRIu64 " taken-branch samples (%" PRIu64
			   " ranges; %" PRIu64 " outside the code read)\n",
			st->lbr_samples, st->ranges, st->ranges_dropped);
	else
		fprintf(f, "# instructions: the IPs of %" PRIu64 " %s\n", st->insn_samples,
			o->insns_from == CPI_INSNS_IBS ? "op samples (ibs_op, counting instructions)"
						       : "instructions samples");
	if (o->cycles_from == CPI_CYCLES_LBR)
		fprintf(f, "# cycles: the LBR entries' cycle counts (%" PRIu64 " ranges without one)\n",
			st->lbr_no_cycles);
	else
		fprintf(f, "# cycles: the IPs of %" PRIu64 " cycles samples, each its period%s%g\n",
			st->cycle_samples, o->cycles_adjust < 0 ? " - " : " + ",
			o->cycles_adjust < 0 ? -o->cycles_adjust : o->cycles_adjust);
}

int cpi_write(FILE *f, struct cpi *c, struct binary *bin, enum cpi_unit by, enum cpi_format fmt)
{
	struct cpi_row *rows;
	size_t n;
	int err = cpi_rows(c, bin, by, &rows, &n);
	if (err)
		return err;
	const struct cpi_opts *o = cpi_opts(c);
	const struct cpi_stats *st = cpi_stats(c);
	struct cpi_row total = {.insns = 0};
	for (size_t i = 0; i < n; i++) {
		total.insns += rows[i].insns;
		total.cycles += rows[i].cycles;
	}
	char name[512], dis[160];
	if (fmt == CPI_TEXT) {
		text_header(f, c, by, o);
		fprintf(f, "# total: %.0f cycles, %.0f instructions: CPI %.3f, IPC %.3f\n#\n", total.cycles,
			total.insns, cpi_row_cpi(&total), cpi_row_ipc(&total));
		fprintf(f, "# %7s %14s %14s %8s %7s %6s  %s\n", "cycles%", "cycles", "instructions", "CPI", "IPC",
			"±err", by == CPI_BY_FUNCTION ? "function" : by == CPI_BY_BLOCK ? "block" : "instruction");
	} else if (fmt == CPI_JSON) {
		fprintf(f, "{\"unit\": \"%s\", \"insns_from\": \"%s\", \"cycles_from\": \"%s\", \"lbr_samples\": %" PRIu64
			   ", \"ranges\": %" PRIu64 ", \"ranges_dropped\": %" PRIu64 ", \"insn_samples\": %" PRIu64
			   ", \"cycle_samples\": %" PRIu64 ",\n \"cycles\": %.1f, \"instructions\": %.1f, \"cpi\": %.6f, "
			   "\"ipc\": %.6f, \"rows\": [",
			cpi_unit_name(by), cpi_insns_src_name(o->insns_from), cpi_cycles_src_name(o->cycles_from),
			st->lbr_samples, st->ranges, st->ranges_dropped, st->insn_samples, st->cycle_samples, total.cycles,
			total.insns, cpi_row_cpi(&total), cpi_row_ipc(&total));
	} else {
		fputs("unit,start,end,name,cycles,instructions,cpi,ipc,rel_err,insn_samples,cycle_samples,disasm\n", f);
	}
	for (size_t i = 0; i < n; i++) {
		const struct cpi_row *r = &rows[i];
		row_name(bin, by, r, name, sizeof(name));
		dis[0] = 0;
		if (by == CPI_BY_INSN && binary_disasm(bin, r->start, dis, sizeof(dis)) < 0)
			dis[0] = 0;
		double share = total.cycles > 0 ? 100.0 * r->cycles / total.cycles : 0;
		if (fmt == CPI_TEXT) {
			fprintf(f, "  %6.2f%% %14.0f %14.0f ", share, r->cycles, r->insns);
			if (r->insns > 0)
				fprintf(f, "%8.3f ", cpi_row_cpi(r));
			else
				fprintf(f, "%8s ", "-");
			if (r->cycles > 0 && r->insns > 0)
				fprintf(f, "%7.3f ", cpi_row_ipc(r));
			else
				fprintf(f, "%7s ", "-");
			fprintf(f, "%5.1f%%  ", 100.0 * cpi_row_rel_err(r));
			if (by == CPI_BY_BLOCK)
				fprintf(f, "0x%" PRIx64 "-0x%" PRIx64 " ", r->start, r->end);
			else if (by == CPI_BY_INSN)
				fprintf(f, "%12" PRIx64 ": ", r->start);
			fprintf(f, "%s%s%s\n", name, dis[0] ? "  " : "", dis);
		} else if (fmt == CPI_JSON) {
			fprintf(f, "%s\n  {\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64 "\", \"name\": ", i ? "," : "",
				r->start, r->end);
			json_put_str(f, name);
			fprintf(f, ", \"cycles\": %.1f, \"instructions\": %.1f, \"cpi\": %.6f, \"ipc\": %.6f, "
				   "\"rel_err\": %.6f, \"insn_samples\": %" PRIu64 ", \"cycle_samples\": %" PRIu64,
				r->cycles, r->insns, cpi_row_cpi(r), cpi_row_ipc(r), cpi_row_rel_err(r), r->n_insn, r->n_cyc);
			if (by == CPI_BY_INSN) {
				fputs(", \"disasm\": ", f);
				json_put_str(f, dis);
			}
			fputc('}', f);
		} else {
			fprintf(f, "%s,0x%" PRIx64 ",0x%" PRIx64 ",", cpi_unit_name(by), r->start, r->end);
			csv_field(f, name);
			fprintf(f, ",%.1f,%.1f,%.6f,%.6f,%.6f,%" PRIu64 ",%" PRIu64 ",", r->cycles, r->insns, cpi_row_cpi(r),
				cpi_row_ipc(r), cpi_row_rel_err(r), r->n_insn, r->n_cyc);
			csv_field(f, dis);
			fputc('\n', f);
		}
	}
	if (fmt == CPI_JSON)
		fputs("\n]}\n", f);
	free(rows);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
