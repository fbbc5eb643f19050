/* Exact ground truth, counted from the retired-block stream: instructions,
 * executions per code run, per branch instruction its taken / not-taken counts
 * and indirect targets, calls (site -> callee), returns, per function (ELF
 * symbols) instructions and calls; and REP figures per site added by the REP
 * reference (sim_rep_reference), which reads registers, not blocks.
 *
 * A truth is a block_sink; it knows no Unicorn and can be fed by hand. Output:
 * BOLT fdata (llvm-bolt's --data syntax) and JSON. */
#ifndef PMUSIM_SIM_TRUTH_H
#define PMUSIM_SIM_TRUTH_H

#include <stdint.h>
#include <stdio.h>

#include "common/fdata.h"
#include "common/symtab.h"
#include "pmu_model/block.h"

struct truth;

struct truth *truth_new(void);
void truth_free(struct truth *t);

/* The sink that feeds t. */
struct block_sink truth_sink(struct truth *t);

uint64_t truth_insns(const struct truth *t);

/* Per branch site, aggregated over every run ending there. */
struct truth_branch {
	uint64_t addr, fallthrough, target; /* target: static target, 0 if indirect */
	int kind;
	uint64_t taken, not_taken;
};
/* Indirect jumps, calls (direct too) and returns: one per (site, target). */
struct truth_edge {
	uint64_t from, to;
	int kind;
	uint64_t count;
};

/* Sorted views, valid until the next retire or truth_free. */
int truth_branches(struct truth *t, const struct truth_branch **out, size_t *n);
int truth_edges(struct truth *t, const struct truth_edge **out, size_t *n);

/* Per-function totals, indexed like symtab_at(st, i); caller frees both arrays.
 * unknown: instructions no symbol covers. calls: entries by call instructions. */
int truth_function_counts(struct truth *t, const struct symtab *st, uint64_t **insns,
			  uint64_t **calls, uint64_t *unknown);
/* Per REP site (sorted by address): executions, iterations done, counts
 * requested (the count register when each execution began) and executions a
 * repe/repne condition ended with count left (pmu_model/block.h says what one
 * execution is). They do not come from the blocks: a reference that reads the
 * count register itself (sim_rep_reference) adds them. */
struct truth_rep {
	uint64_t addr, executions, iterations, requested, by_condition; /* requested saturates at 2^64-1 */
};
/* Adds to site's figures. 0 or PMUSIM_ERR_NOMEM. */
int truth_rep_add(struct truth *t, uint64_t site, uint64_t executions, uint64_t requested, uint64_t iterations,
		  uint64_t by_condition);
/* The REP sites; caller frees *out. */
int truth_rep_sites(struct truth *t, struct truth_rep **out, size_t *n);
/* Runs entered by a control transfer, sorted by start, with entry counts; caller frees. */
int truth_runs(struct truth *t, const struct block_info ***bi, uint64_t **execs, size_t *n);

/* A true call stack at a snapshot of the thread-stack tracer (sim_true_stack):
 * thread, process, where it was and its return addresses, innermost first.
 * Kept in order and written as "stack_snapshots". 0 or PMUSIM_ERR_NOMEM. */
int truth_add_stack(struct truth *t, uint32_t tid, uint32_t pid, uint64_t ip, const uint64_t *rets, size_t n);
struct truth_stack {
	uint32_t tid, pid;
	uint64_t ip;
	size_t first, n;    /* its return addresses: truth_stack_rets(t) + first */
};
size_t truth_stacks(const struct truth *t, const struct truth_stack **out);
const uint64_t *truth_stack_rets(const struct truth *t);

/* Writes branch, call and return edges as BOLT fdata:
 * "<1|0> <sym|dso> <hexoff> <1|0> <sym|dso> <hexoff> <mispreds> <count>", sorted,
 * addresses named by nm (common/fdata.h: functions, else the mapping holding them). */
int truth_write_fdata(struct truth *t, FILE *f, const struct fdata_namer *nm);

/* Program cycles by run id, from the timing model that counted the same blocks
 * (pmu_run_cycles: every process's runs; ids are unique across processes):
 * cyc[id] for id < n, borrowed until the next truth_write_json. With them the
 * JSON gives cycles in total, per function and per block; without, no cycles. */
void truth_set_run_cycles(struct truth *t, const uint64_t *cyc, uint32_t n);

/* Per-function program cycles, indexed like symtab_at(st, i) (caller frees):
 * each run's cycles go to the function holding its terminator (where its
 * branch and REP costs are); unknown: runs no symbol holds. Needs
 * truth_set_run_cycles; 0 or PMUSIM_ERR_NOMEM. */
int truth_function_cycles(struct truth *t, const struct symtab *st, uint64_t **cycles, uint64_t *unknown);
/* Cycles of the program's runs (*own), of those no control transfer entered, which
 * the JSON's blocks leave out (*unlisted), and of runs of other programs (child
 * processes, a program executed later) that the truth does not count (*other). */
void truth_cycle_totals(const struct truth *t, uint64_t *own, uint64_t *unlisted, uint64_t *other);
/* Cycles of run id (0 if unknown). */
uint64_t truth_run_cycles(const struct truth *t, uint32_t id);
int truth_has_cycles(const struct truth *t);

/* Per-instruction figures (pmu_attribute_insns) of run id, or NULL: with them
 * the JSON has "insns": every instruction of the program that retired, its
 * retirements and program cycles, summed over the runs that hold it. */
struct pmu_insn_figures;
typedef const struct pmu_insn_figures *(*truth_insn_fn)(void *ctx, uint32_t id);
void truth_set_insn_figures(struct truth *t, truth_insn_fn fn, void *ctx);
/* The program's runs (retired at least once, whole or in part) in id order:
 * *bi (caller frees); for the per-instruction listing. 0 or PMUSIM_ERR_NOMEM. */
int truth_program_runs(struct truth *t, const struct block_info ***bi, size_t *n);
truth_insn_fn truth_insn_figures(const struct truth *t, void **ctx);

/* Writes everything as one JSON object (see README, "Ground truth"). load_bias: where
 * the program was loaded (a PIE's base; 0 for ET_EXEC), so that a reader places the
 * program's file at the truth's addresses without its symbols (a stripped PIE). */
int truth_write_json(struct truth *t, FILE *f, const struct symtab *st, const char *program,
		     uint64_t load_bias);

#endif
