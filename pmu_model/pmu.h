/* The performance-monitoring unit: fixed and programmable counters fed by the
 * retired-block stream, the timing model (cpu_model + bpred) that supplies
 * cycles, overflow interrupts (PMIs) and the LBR. No Unicorn, no I/O: samples go
 * to a callback, so the unit is tested with hand-made block streams.
 *
 * Overflow: a counter with a sampling period P overflows at exactly the P-th
 * event it counts, even in the middle of a block (instructions and cycles are
 * attributed per instruction from the decode cache's classes; branch events and
 * REP iterations belong to the run's terminator). With --delta D every period is
 * P + U[0, D], drawn afresh for every interval from the counter's own generator,
 * seeded with the seed and the counter's identity: its event and its index among
 * the counters of that event (not its place in the configuration). So adding a
 * counter of another event leaves a counter's periods as they were; with skid 0
 * and refill 0 its samples too (with skid or refill the other counter's PMIs
 * legitimately move them: a pending PMI takes the overflows that happen in its
 * skid, and its refill cycles are counted).
 *
 * Reload (pmu_config.reload), where the next period starts:
 * - PMU_RELOAD_OVERFLOW (default): at the overflow itself, as a counter that
 *   wraps and goes on counting; the skid's and the refill's events count in the
 *   next period. A cycles counter's program cycles between consecutive
 *   overflows are P + R(i+1) - A (A = refill).
 * - PMU_RELOAD_INTERRUPT: by the PMI handler, as Linux's x86 handler does
 *   (x86_perf_event_set_period in x86_pmu_handle_irq): from its overflow to the
 *   PMI the counter is stopped for sampling (what it counts there starts no
 *   period; pmu_count stays exact), and at the PMI it is loaded with the next
 *   period P + R, so the refill charged after the PMI counts in it. A cycles
 *   counter's program cycles between overflows i and i+1 are then
 *   S(i) + P + R(i+1) - A, S(i) = the cycles from overflow i to its PMI.
 *   Each overflow stops its counter, so no counter overflows twice in one PMI
 *   (one sample per counter, its period P + R); every counter that overflowed
 *   is reloaded at that PMI, the others go on counting. Frequency mode adapts
 *   the period at the overflow from the events and cycles counted since the
 *   last reload, and the adapted period starts at the reload.
 *
 * PMI: taken `skid` instructions (or cycles, counted from the end of the
 * instruction in which the counter overflowed) after the overflowing event; skid 0
 * is a precise PMI at the eventing instruction. The sample IP is the instruction
 * at which the PMI is taken; the LBR snapshot holds every recorded branch that
 * retired up to and including it, then the LBR is frozen while the sample is
 * handed over (FREEZE_LBRS_ON_PMI), and `refill` cycles are charged to the
 * instruction after it. Overflows that happen while a PMI is pending join it
 * (one sample per overflowed counter, its period the sum of the periods), but
 * for a cycles counter: each of its overflows is a sample of that PMI (same IP
 * and LBR, its own period and overflow cycle), so that a window anchored at
 * each overflow stays exact when one instruction spans several periods.
 *
 * The cycle of the overflow: a cycles counter's sample also says how many cycles
 * after the newest LBR entry's branch retired the counter reached its period
 * (the first overflow of the sample). The LBR's cycle fields time every entry
 * but the sample point; with this one figure a profile can anchor a window of W
 * cycles at the overflow itself, which every cycle is equally likely to be, and
 * so count every branch with the same probability (docs/cycle-windows.md).
 *
 * One CPU: blocks of all threads arrive in the order they ran. At a block
 * marked new_context (a context switch, or an execve that replaced the address
 * space) the LBR is emptied, as Linux does when it switches tasks and the
 * branch stack is not kept per task (intel_pmu_lbr_sched_task: LBR entries
 * carry no address-space tag); counters, predictor and the pending PMI carry
 * on, as they are per CPU. */
#ifndef PMUSIM_PMU_MODEL_PMU_H
#define PMUSIM_PMU_MODEL_PMU_H

#include <stddef.h>
#include <stdint.h>

#include "pmu_model/block.h"
#include "pmu_model/cpu_model.h"
#include "pmu_model/events.h"
#include "pmu_model/lbr.h"

#define PMU_MAX_COUNTERS 10 /* 2 fixed (instructions, cycles) + up to 8 programmable */

struct pmu_counter_config {
	enum pmu_event ev;
	uint64_t period; /* 0: counting only (unless freq) */
	uint64_t freq;   /* samples per simulated second (perf -F): period is then
	                  * ignored; it starts at the clock's cycles per 1/freq s and
	                  * after each overflow moves 1/8 of the way to the period
	                  * the last interval's rate asks for (Linux perf_adjust_period) */
};

/* Where a sampling counter starts its next period (see above). */
enum pmu_reload {
	PMU_RELOAD_OVERFLOW = 0, /* at its overflow */
	PMU_RELOAD_INTERRUPT,    /* at the PMI, by the handler */
};

/* Instruction-based op sampling (AMD IBS op, docs/ibs.md): a counter of its
 * own, beside the others, that tags one instruction per interval and reports
 * what happened to it when it retires, at its own IP (no skid).
 *
 * It counts retired instructions (count_ops, perf's cnt_ctl=1) or cycles;
 * when the count reaches the interval, the instruction at which it does is
 * tagged (cycles: the instruction while whose cycles the count is reached;
 * an instruction that adds no whole cycle cannot be). The next interval
 * counts from there: in op mode from the instruction after the tagged one,
 * in cycle mode from the cycle after the one the count was reached in, so the
 * tagged instruction's later cycles count toward it and each cycle is as
 * likely as any to be tagged. One tag is in flight at a time: an interval
 * that runs out before the tagged instruction retires (its later cycles, or a
 * REP left in the middle, which never retires) is lost, and the next counts
 * from there (pmu_op_lost_tags). Each interval is the period
 * less U{0..127} (the hardware's random low 7 bits of the initial count),
 * drawn from the op sampler's own generator, or exactly the period with
 * no_random. So, in op mode without randomness, sample i is the
 * (i * period)-th retired instruction.
 *
 * Activation windows (window_every > 0): the counter counts only what retires
 * while the core cycle modulo window_every is below window_on; each time a
 * window opens, a fresh interval starts (the service re-arms the unit). */
struct pmu_op_config {
	uint64_t period;         /* 0: off; else a multiple of 16, >= 128 with randomness */
	int count_ops;           /* 1: retired instructions; 0: cycles */
	int no_random;           /* 1: every interval is the period */
	uint64_t window_on;      /* cycles of each window during which it counts */
	uint64_t window_every;   /* cycles from window to window; 0: always on */
};

struct pmu_config {
	const struct cpu_model *cpu; /* NULL: cpu_model_default() */
	struct pmu_counter_config ctr[PMU_MAX_COUNTERS];
	uint32_t nctr;
	uint64_t delta;          /* extra period per sample, uniform in [0, delta] */
	uint64_t skid;           /* instructions (or cycles) between overflow and PMI */
	int skid_in_cycles;
	uint32_t refill_cycles;  /* charged after each PMI */
	enum pmu_reload reload;  /* 0: PMU_RELOAD_OVERFLOW */
	uint32_t lbr_depth;      /* 0: no LBR; else 4, 8, 16, 32 or 64 */
	uint32_t lbr_filter;     /* LBR_F_* */
	uint64_t seed;
	struct pmu_op_config op; /* op sampling; period 0: off */
};

struct pmu_sample {
	uint32_t counter;          /* index into pmu_config.ctr */
	uint32_t tid;
	uint64_t ip;               /* instruction at which the PMI was taken */
	uint64_t next;             /* where the thread goes on after the PMI: the address
	                            * after the block ip retired in (retired_block.next),
	                            * where the machine stands while the handler runs */
	uint64_t cycle;            /* core cycle of the PMI */
	uint64_t period;           /* events this sample stands for */
	uint32_t nbr;              /* LBR entries, newest first */
	const struct lbr_entry *br;
	int64_t ovf_after_newest;  /* cycles counter with nbr > 0: the cycle at which it
	                            * overflowed minus the cycle at which the newest LBR
	                            * entry's branch retired (negative when that branch
	                            * retired at or after the overflow: the eventing
	                            * instruction itself, or skid); 0 otherwise */
	uint8_t ip_after_newest;   /* nbr > 0: 1 when the instruction at ip is not the newest
	                            * LBR entry's branch (it retired after it: a branch
	                            * not taken, or any other instruction) */
};


/* What an instruction did with memory (its one data access as IBS reports it). */
struct pmu_op_mem {
	uint8_t load, store;     /* read, written (both: read-modify-write) */
	uint8_t width;           /* bytes accessed; 0 unknown */
	uint8_t addr_valid;      /* addr is the linear address of the access */
	uint64_t addr;
};

struct pmu_op_sample {
	uint32_t tid;
	uint64_t ip;             /* the tagged instruction */
	uint64_t insn;           /* its number among all retired instructions (1-based) */
	uint64_t cycle;          /* core cycle at which it retired */
	uint64_t interval;       /* events (instructions or cycles) of the interval that tagged it */
	uint64_t tag_to_ret;     /* cycles from the tag to its retirement: in op mode its own
	                          * cycles, in cycle mode those after the count was reached */
	uint8_t kind;            /* enum br_kind when it is its run's retired terminator, else BK_NONE */
	uint8_t branch;          /* a branch (br_kind_is_branch) */
	uint8_t taken, mispredicted, ret;
	uint8_t microcoded;      /* a REP string instruction (one op) */
	uint64_t target;         /* branch: the address it went to when taken, else its
	                          * static target (0 for an indirect branch not taken) */
	struct pmu_op_mem mem;   /* from pmu_sample_sink.op_memory; all 0 without it */
};

struct pmu_sample_sink {
	void (*sample)(void *ctx, const struct pmu_sample *s);
	void *ctx;
	/* Op samples (pmu_config.op), in retirement order with the counters' samples. */
	void (*op_sample)(void *ctx, const struct pmu_op_sample *s);
	/* The memory facts of instruction number insn at ip, asked once per op
	 * sample before op_sample; may leave m all 0 (not a memory instruction,
	 * or unknown: then addr_valid 0, never a wrong address). */
	void (*op_memory)(void *ctx, uint64_t insn, uint64_t ip, struct pmu_op_mem *m);
};

struct pmu;

/* 0, PMUSIM_ERR_ARG (too many counters for the model, bad LBR depth, an
 * unknown reload) with a reason in msg, or PMUSIM_ERR_NOMEM. */
int pmu_new(const struct pmu_config *cfg, struct pmu_sample_sink sink, struct pmu **out,
	    char *msg, size_t msglen);
void pmu_free(struct pmu *p);

/* The consumer of the retired-block stream that drives p. */
struct block_sink pmu_block_sink(struct pmu *p);

/* Events counted by counter i so far (exact). */
uint64_t pmu_count(const struct pmu *p, uint32_t i);
uint64_t pmu_cycles(const struct pmu *p);
uint64_t pmu_instructions(const struct pmu *p);
uint64_t pmu_samples(const struct pmu *p);
uint64_t pmu_mispredicts(const struct pmu *p);

/* Op sampling: the smallest number (1-based, among all retired instructions)
 * the next tagged instruction can have, from what p has retired so far: in op
 * mode without windows exactly the next tag's; otherwise a lower bound (in
 * cycle mode, and for the next window's opening, from the most cycles one
 * instruction other than a REP can add, refills owed included: a REP's
 * iterations, retired or left in the middle, may bring the tag earlier).
 * UINT64_MAX without op sampling.
 * The machine uses it to watch the instructions where a tag can fall, so that
 * it knows their data addresses (pmu_sample_sink.op_memory). */
uint64_t pmu_op_next_min(const struct pmu *p);
/* Op sampling, for the same watch, one block ahead: with p as it stands and
 * then pend_n instructions of run pend retired (the machine's block not yet
 * delivered; pend NULL: none), can the tag fall on an instruction of run bi if
 * bi retires next? 0 when it cannot; 1 with *first the first index of bi it
 * can fall on. Certain in op mode without windows; otherwise it assumes the
 * most and the fewest cycles each instruction can take (a REP's iterations:
 * any number), so that a 0 is never wrong. */
int pmu_op_may_tag(const struct pmu *p, const struct block_info *pend, uint32_t pend_n,
		   const struct block_info *bi, uint32_t *first);
/* Op samples taken so far. */
uint64_t pmu_op_samples(const struct pmu *p);
/* Intervals that ran out with no sample: during a tagged instruction after
 * its own tag, or in a REP left in the middle. */
uint64_t pmu_op_lost_tags(const struct pmu *p);

/* Program cycles per code run: from now on p adds to run id's figure exactly
 * the cycles its cycles counter counts while a block of that run retires (the
 * clock's whole cycles before and after it: class costs, misprediction
 * penalty, taken-branch bubble, REP iterations, also of a REP left in the
 * middle) less the refill cycles charged there after a PMI. Summed over the
 * runs that is the cycles counter's count less samples' refills already
 * charged: with refill 0, exactly what a cycles counter counts. Call before
 * pmu_block_sink (the sink it returns does the adding); 0 or
 * PMUSIM_ERR_NOMEM. */
int pmu_attribute_runs(struct pmu *p);
/* The figures by run id (block_info.id < *n; ids not seen hold 0), valid
 * until the next block; 0, PMUSIM_ERR_ARG without pmu_attribute_runs, or
 * PMUSIM_ERR_NOMEM when an array could not grow (the figures are incomplete). */
int pmu_run_cycles(const struct pmu *p, const uint64_t **cyc, uint32_t *n);

/* One instruction of a run: its program cycles (what the cycles counter
 * counted while it retired, less the refill charged to it) and retirements. */
struct pmu_insn_figures {
	uint64_t cycles, retired;
};
/* With pmu_attribute_runs, also attributes per instruction: every block is
 * then replayed instruction by instruction (slower), and the cycles of a run's
 * instructions add up to the run's (pmu_run_cycles). Call before
 * pmu_block_sink; 0 or PMUSIM_ERR_ARG without pmu_attribute_runs. */
int pmu_attribute_insns(struct pmu *p);
/* The figures of run id's instructions (block_info.ninsns entries), or NULL
 * when none of them retired; valid until the next block. The iterations of a
 * REP left in the middle count to the REP's cycles, not its retirements. */
const struct pmu_insn_figures *pmu_insn_figures(const struct pmu *p, uint32_t id);

/* Quarter cycles a run costs when its first n instructions retire (no
 * misprediction, no REP iterations): the timing model's static block cost. */
uint64_t pmu_block_cost_q(const struct cpu_model *cpu, const struct block_info *bi, uint32_t n);

#endif
