/* CPU models for the timing model: documented parameters kept as data.
 *
 * Costs are in quarter cycles (a 4-wide core retires at most four simple ops per
 * cycle), per instruction class of pmu_model/block.h. They are reciprocal
 * throughputs of a Skylake-class core (Intel optimization manual, Agner Fog's
 * instruction tables), not latencies: the model does not track dependencies.
 * README ("Timing model") compares block costs with llvm-mca -mcpu=skylake. */
#ifndef PMUSIM_PMU_MODEL_CPU_MODEL_H
#define PMUSIM_PMU_MODEL_CPU_MODEL_H

#include <stdint.h>

#include "pmu_model/block.h"

struct cpu_model {
	const char *name;            /* "skylake" */
	const char *desc;            /* for perf.data's CPUDESC */
	uint32_t mhz;                /* core clock: sample time = cycles * 1000 / mhz ns */
	uint16_t cost_q[IC_COUNT];   /* quarter cycles per instruction of each class */
	uint16_t rep_iter_q;         /* quarter cycles per REP string iteration */
	uint16_t taken_branch_q;     /* quarter cycles of a taken branch (front-end redirect) */
	uint16_t mispredict_cycles;  /* pipeline flush after a mispredicted branch */
	uint8_t gshare_bits;         /* direction predictor: 2^bits 2-bit counters */
	uint8_t hist_bits;           /* global history length */
	uint8_t btb_bits;            /* indirect-target buffer: 2^bits entries */
	uint8_t rsb_depth;           /* return stack buffer entries */
	uint8_t nr_gp_counters;      /* programmable counters */
};

/* The default model (Skylake). */
const struct cpu_model *cpu_model_default(void);
/* A model by name, or NULL. */
const struct cpu_model *cpu_model_find(const char *name);

#endif
