/* bench/block_cost: prints the timing model's static cost of the code runs that
 * start at the given addresses of a program (cycles per execution, no
 * misprediction, the taken-branch redirect included when the run ends in a taken
 * jump), one line each: "ADDR INSNS CYCLES", for comparison with llvm-mca
 * (bench/mca.sh). Usage: block_cost PROG ADDR... */
#include <stdio.h>
#include <stdlib.h>

#include "pmu_model/cpu_model.h"
#include "pmu_model/pmu.h"
#include "common/decode.h"
#include "sim/sim.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: block_cost PROG ADDR...\n");
		return 2;
	}
	char *args[] = {argv[1], NULL}, *env[] = {NULL};
	struct sim_options so = {.path = argv[1], .argv = args, .envp = env, .log = stderr};
	struct sim *s;
	char msg[512];
	if (sim_new(&so, &s, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "block_cost: %s\n", msg);
		return 2;
	}
	const struct cpu_model *cpu = cpu_model_default();
	for (int i = 2; i < argc; i++) {
		int is_new;
		const struct block_info *bi = dcache_get(sim_dcache(s), strtoull(argv[i], NULL, 0), &is_new);
		if (!bi)
			continue;
		uint64_t q = pmu_block_cost_q(cpu, bi, bi->ninsns);
		if (bi->kind >= BK_JMP && bi->kind <= BK_RET && cpu->taken_branch_q > cpu->cost_q[IC_BRANCH])
			q += cpu->taken_branch_q - cpu->cost_q[IC_BRANCH];
		printf("0x%llx %u %.2f\n", (unsigned long long)bi->start, bi->ninsns, (double)q / 4.0);
	}
	sim_free(s);
	return 0;
}
