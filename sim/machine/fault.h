/* Locating the instruction behind a memory fault. Unicorn 2.0.1 leaves RIP at
 * the start of the translation block when a load or store faults, so the
 * machine finds the faulting instruction itself: the first instruction of the
 * block, in order, whose memory operand (computed from the registers as they
 * are at the fault) covers the faulting address. */
#ifndef PMUSIM_SIM_MACHINE_FAULT_H
#define PMUSIM_SIM_MACHINE_FAULT_H

#include <capstone/capstone.h>
#include <stdint.h>

struct block_info;
struct sim;

/* Address of the instruction in [bi->start, tb_end) that accessed addr, or
 * fallback when none matches. */
uint64_t fault_locate(struct sim *s, const struct block_info *bi, uint64_t tb_end,
		      uint64_t addr, uint64_t fallback);

/* The effective address of a memory operand from the registers as they are now (RIP
 * relative to next_pc, FS/GS bases added). */
uint64_t fault_operand_address(struct sim *s, const cs_x86_op *op, uint64_t next_pc);

/* Unicorn register for a Capstone general-purpose register id (64-, 32- or
 * 16-bit), with its size in bytes; -1 when it is not one. */
int fault_uc_reg(unsigned cs_reg, int *size);

#endif
