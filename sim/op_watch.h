/* The machine's side of op sampling (pmu_model/pmu.h, "Instruction-based op
 * sampling"): the data address of a tagged instruction is gone once its block
 * has retired, so the machine watches ahead. The PMU says the smallest number
 * the next tagged instruction can have (pmu_op_next_min); the block hook's
 * slow path is entered from a little before it, and a block that can hold it
 * gets a code hook over the instructions that can be tagged, for as long as it
 * may. The hook notes what each of them accessed, keyed by its instruction
 * number, from the registers before it runs (the operand's effective address;
 * push, pop, call and ret through RSP); the PMU asks by number when it samples.
 * Nothing else runs per instruction: everywhere else the block hook's fast
 * path stays as it is. */
#ifndef PMUSIM_SIM_OP_WATCH_H
#define PMUSIM_SIM_OP_WATCH_H

#include <stdint.h>

#include "pmu_model/pmu.h"

struct sim;
struct block_info;

/* The block hook's slow path, before the block bi starting at addr runs: 1
 * when emulation was stopped to translate bi again with a watch (the caller
 * returns at once), 0 to go on. */
int op_watch_block(struct sim *s, const struct block_info *bi, uint64_t addr);
/* The run loop, about to restart emulation a hook stopped (outside Unicorn): empties
 * the translation cache when the watches' retranslations may be filling it. */
void op_watch_restarting(struct sim *s);
/* The first instruction count at which the block hook must look again. */
uint64_t op_watch_at(const struct sim *s);
void op_watch_free(struct sim *s);

#endif
