/* Fine-grained CPI from samples: instruction frequencies from taken-branch-
 * triggered LBR samples, cycles from a cycles counter with a randomised
 * period, and their quotient per function, block or instruction.
 *
 * Instruction frequency (S1). A sample of the taken-branch event with period Q
 * and entries e0..e(L-1), newest first, holds L-1 ranges: e(k+1).to through
 * e(k).from (profiler/lbr_range.h). Every instruction of every range gets
 * Q/(L-1): a straight-line instruction lies in L-1 of the ranges of the
 * samples that see it, and every taken branch is equally likely to trigger
 * (with a jittered Q), so the sum estimates its executions without bias.
 * A run of the walk (a code run, pmu_model/block.h) gets the same weight as
 * one execution.
 *
 * Cycles (S2). Every sample of the cycles event stands for the program cycles
 * since the one before: its period, plus cycles_adjust (the refill A charged
 * after each interrupt is counted by the counter but is not the program's: -A;
 * with the counter reloaded at the interrupt, the skid S it did not count: +S).
 * They go to the sample's IP.
 *
 * Baselines: instruction frequency from the IPs of an instructions event (each
 * sample adds its period at its IP: the traditional method, skid included);
 * cycles from the LBR entries' own cycle fields (perf's method: a range's
 * cycles spread evenly over its instructions, with the range's weight).
 *
 * Units. A function: the sums over its addresses. An instruction: its
 * address. A block: a code run, keyed by its start address as pmusim's truth
 * keys them; with LBR instruction frequencies a run's instructions are its
 * executions times its length, and its cycles those of the cycles samples
 * whose branch stacks place their IP in it (the walk from the newest taken
 * branch's target to the IP) plus, for samples without a branch stack, the
 * cycles of its addresses shared among the runs that contain them in
 * proportion to their executions (runs overlap where code falls through into
 * a branch target; an overlap's last instruction, a branch, can cost more on
 * one path than on the other, which only the placement sees); otherwise the
 * sums over the run's addresses. */
#ifndef PMUSIM_PROFILER_CPI_H
#define PMUSIM_PROFILER_CPI_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/binary.h"
#include "profiler/perfdata.h"

/* Instruction frequency from: LBR ranges, the IPs of an instructions event, or
 * op samples counting instructions (ibs_op/cnt_ctl=1/: exact IPs). */
enum cpi_insns_src { CPI_INSNS_LBR = 0, CPI_INSNS_IP, CPI_INSNS_IBS };
enum cpi_cycles_src { CPI_CYCLES_PERIOD = 0, CPI_CYCLES_LBR };
enum cpi_unit { CPI_BY_FUNCTION = 0, CPI_BY_BLOCK, CPI_BY_INSN };

struct cpi_opts {
	enum cpi_insns_src insns_from;
	enum cpi_cycles_src cycles_from;
	double cycles_adjust; /* added to every cycles sample's period: S - A */
};

/* Counts of what the samples gave. */
struct cpi_stats {
	uint64_t lbr_samples;     /* taken-branch samples with at least 2 entries */
	uint64_t ranges, ranges_dropped; /* LBR ranges walked; not walkable (other code) */
	uint64_t lbr_no_cycles;   /* ranges whose entry has no cycle count (LBR cycles) */
	uint64_t insn_samples, cycle_samples;
	uint64_t cycles_placed;   /* cycle samples placed in a run by their branch stack */
	double insns, ip_insns, cycles; /* estimated totals (LBR, instruction IPs, cycles event) */
};

struct cpi;

/* NULL when out of memory. */
struct cpi *cpi_new(const struct cpi_opts *o);
void cpi_free(struct cpi *c);

/* A sample of a taken-branch event with its branch stack (S1, and LBR cycles);
 * bin must stay open until cpi_free (its runs are kept). 0 or PMUSIM_ERR_NOMEM. */
int cpi_add_lbr(struct cpi *c, struct binary *bin, const struct perf_sample *s);
/* A sample of the instructions event (the IP baseline). 0 or PMUSIM_ERR_NOMEM. */
int cpi_add_insn_ip(struct cpi *c, const struct perf_sample *s);
/* A sample of the cycles event; with a branch stack (and bin) it is also
 * placed in the code run its IP retired in (see the blocks above). 0 or
 * PMUSIM_ERR_NOMEM. */
int cpi_add_cycles(struct cpi *c, struct binary *bin, const struct perf_sample *s);

const struct cpi_stats *cpi_stats(const struct cpi *c);
const struct cpi_opts *cpi_opts(const struct cpi *c);

/* One unit's estimate. */
struct cpi_row {
	uint64_t start, end;  /* the unit's addresses [start, end) */
	const char *name;     /* function: its name; otherwise NULL */
	double insns, cycles; /* estimated instructions and program cycles */
	uint64_t n_insn;      /* LBR samples (of its most sampled address or run) or
	                       * instruction samples behind insns */
	uint64_t n_cyc;       /* cycle samples (or LBR ranges) behind cycles */
};

/* CPI and IPC of a row (0 when the denominator is 0). */
double cpi_row_cpi(const struct cpi_row *r);
double cpi_row_ipc(const struct cpi_row *r);
/* The relative error the row's sample counts allow (counts taken as Poisson:
 * sqrt(1/n_insn + 1/n_cyc)); 1 when either is 0. */
double cpi_row_rel_err(const struct cpi_row *r);

/* The estimate of the function that holds addr (bin's symbols; a row of
 * nothing without one), of the code run that starts at start, or of the
 * instruction at addr. */
void cpi_function(struct cpi *c, struct binary *bin, uint64_t addr, struct cpi_row *out);
void cpi_block(struct cpi *c, struct binary *bin, uint64_t start, struct cpi_row *out);
void cpi_insn(struct cpi *c, uint64_t addr, struct cpi_row *out);

/* Every unit with instructions or cycles, by unit, hottest (cycles) first;
 * ties by address. *rows is malloc'd. 0 or PMUSIM_ERR_NOMEM. */
int cpi_rows(struct cpi *c, struct binary *bin, enum cpi_unit by, struct cpi_row **rows, size_t *n);

enum cpi_format { CPI_TEXT = 0, CPI_JSON, CPI_CSV };

/* Writes the rows of unit `by` (cpi_rows) with the totals and what the
 * estimate stands on: text (a table, hottest first; instructions with their
 * disassembly), JSON (keys unit, insns_from, cycles_from, lbr_samples, ranges,
 * ranges_dropped, insn_samples, cycle_samples, cycles, instructions, cpi, ipc,
 * rows: start, end, name, cycles, instructions, cpi, ipc, rel_err,
 * insn_samples, cycle_samples [, disasm]) or CSV (a header line, then one line
 * per row: unit,start,end,name,cycles,instructions,cpi,ipc,rel_err,
 * insn_samples,cycle_samples,disasm). 0 or a negative pmusim_err. */
int cpi_write(FILE *f, struct cpi *c, struct binary *bin, enum cpi_unit by, enum cpi_format fmt);

/* Names of the options' values ("lbr", "ip"; "period", "lbr"; "function",
 * "block", "insn"). */
const char *cpi_insns_src_name(enum cpi_insns_src s);
const char *cpi_cycles_src_name(enum cpi_cycles_src s);
const char *cpi_unit_name(enum cpi_unit u);

#endif
