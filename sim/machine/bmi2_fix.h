/* PDEP and PEXT computed by pmusim: Unicorn 2.0.1 (QEMU before the fix in Unicorn
 * 2.1.0) swaps their source and mask operands, and pmusim's CPUID reports BMI2, whose
 * other instructions it executes correctly. */
#ifndef PMUSIM_SIM_MACHINE_BMI2_FIX_H
#define PMUSIM_SIM_MACHINE_BMI2_FIX_H

#include <stdint.h>

struct sim;

/* Parallel bit deposit and extract (Intel SDM vol. 2B, PDEP, PEXT). */
uint64_t bmi2_pdep(uint64_t src, uint64_t mask);
uint64_t bmi2_pext(uint64_t src, uint64_t mask);

/* Executes the PDEP or PEXT at addr (len bytes) in the running thread: its destination
 * written, RIP past it. 0, or -1 when its memory operand cannot be read (*fault_addr
 * set; the instruction did not execute). */
int bmi2_fix_execute(struct sim *s, uint64_t addr, uint8_t len, uint64_t *fault_addr);

#endif
