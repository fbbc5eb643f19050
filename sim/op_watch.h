/* The machine's side of op sampling (pmu_model/pmu.h, "Instruction-based op
 * sampling"): the data address of a tagged instruction is gone once its block
 * has retired, so the machine looks ahead. The PMU says the smallest number
 * the next tagged instruction can have (pmu_op_next_min); the block hook's
 * slow path is entered from a little before it and asks, for the block about
 * to run, whether the tag can fall in it and from which instruction
 * (pmu_op_may_tag). If so the machine reads the registers at the block's entry
 * and walks the block (op_watch.c): each instruction that can be tagged gets a
 * note, keyed by its instruction number, of what it accesses and, when the
 * walk knows the registers its address needs, the address; the PMU asks by
 * number when it samples. Nothing is hooked and nothing runs per instruction:
 * everywhere else the block hook's fast path stays as it is. */
#ifndef PMUSIM_SIM_OP_WATCH_H
#define PMUSIM_SIM_OP_WATCH_H

#include <stdint.h>

#include "pmu_model/pmu.h"

struct sim;
struct block_info;

/* The block hook's slow path, before the block bi starting at addr runs:
 * notes its instructions when the tag can fall in it. Returns 0 (go on). */
int op_watch_block(struct sim *s, const struct block_info *bi, uint64_t addr);
/* The first instruction count at which the block hook must look again. */
uint64_t op_watch_at(const struct sim *s);
void op_watch_free(struct sim *s);

#endif
