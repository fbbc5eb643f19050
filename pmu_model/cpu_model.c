/* The CPU-model table (see cpu_model.h). Skylake figures: 4-wide retirement,
 * two load ports and one store port, one multiply per cycle, 64-bit division in
 * the tens of cycles, ~16-cycle misprediction penalty (Intel 64 and IA-32
 * Architectures Optimization Reference Manual, Skylake microarchitecture), a
 * 16-entry return stack buffer and 8 programmable counters per core with
 * Hyper-Threading off (Intel SDM vol. 3B, 18.3.8). */
#include "pmu_model/cpu_model.h"

#include <string.h>

static const struct cpu_model models[] = {
	{
		.name = "skylake",
		.desc = "pmusim Skylake model (GenuineIntel family 6 model 0x55)",
		.mhz = 2000,
		.cost_q = {
			[IC_ALU] = 1,     /* 4 per cycle */
			[IC_MUL] = 4,     /* 1 per cycle */
			[IC_DIV] = 96,    /* ~24 cycles */
			[IC_LOAD] = 2,    /* 2 load ports */
			[IC_STORE] = 4,   /* 1 store port */
			[IC_BRANCH] = 2,  /* 2 branch units; taken branches 1 per cycle */
			[IC_STRING] = 4,
			[IC_SIMD] = 2,
			[IC_SYSCALL] = 400, /* user-visible cost of a trip to the kernel */
			[IC_NOP] = 1,
			[IC_OTHER] = 80,  /* cpuid, rdtsc, fences: serialising */
		},
		.rep_iter_q = 4,
		.taken_branch_q = 4, /* one taken branch per cycle */
		.mispredict_cycles = 16,
		.gshare_bits = 14,
		.hist_bits = 12,
		.btb_bits = 10,
		.rsb_depth = 16,
		.nr_gp_counters = 8,
	},
};

const struct cpu_model *cpu_model_default(void)
{
	return &models[0];
}

const struct cpu_model *cpu_model_find(const char *name)
{
	for (size_t i = 0; i < sizeof(models) / sizeof(models[0]); i++)
		if (strcmp(models[i].name, name) == 0)
			return &models[i];
	return NULL;
}
