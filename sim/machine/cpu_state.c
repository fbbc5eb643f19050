/* The CPU state Linux gives a process and a signal handler (see sim/machine/cpu_state.h).
 * CR0.PG stays off: Unicorn's 64-bit mode translates addresses without page tables,
 * and WP/AM/paging bits change nothing a user program can see there. */
#include "sim/machine/cpu_state.h"

uc_err cpu_state_init(uc_engine *uc)
{
	uint64_t cr0, cr4, cw = CPU_FPCW_INIT, mx = CPU_MXCSR_INIT;
	uc_err e;
	if ((e = uc_reg_read(uc, UC_X86_REG_CR0, &cr0)) != UC_ERR_OK ||
	    (e = uc_reg_read(uc, UC_X86_REG_CR4, &cr4)) != UC_ERR_OK)
		return e;
	cr0 |= CPU_CR0_MP | CPU_CR0_NE;
	cr4 |= CPU_CR4_OSFXSR | CPU_CR4_OSXMMEXCPT;
	if ((e = uc_reg_write(uc, UC_X86_REG_CR0, &cr0)) != UC_ERR_OK ||
	    (e = uc_reg_write(uc, UC_X86_REG_CR4, &cr4)) != UC_ERR_OK ||
	    (e = uc_reg_write(uc, UC_X86_REG_FPCW, &cw)) != UC_ERR_OK)
		return e;
	return uc_reg_write(uc, UC_X86_REG_MXCSR, &mx);
}

uc_err cpu_state_reset_fpu(uc_engine *uc)
{
	uint64_t cw = CPU_FPCW_INIT, mx = CPU_MXCSR_INIT, sw = 0;
	uint8_t zero[16] = {0};
	uc_err e;
	if ((e = uc_reg_write(uc, UC_X86_REG_FPCW, &cw)) != UC_ERR_OK ||
	    (e = uc_reg_write(uc, UC_X86_REG_FPSW, &sw)) != UC_ERR_OK ||
	    (e = uc_reg_write(uc, UC_X86_REG_MXCSR, &mx)) != UC_ERR_OK)
		return e;
	for (int i = 0; i < 16; i++)
		if ((e = uc_reg_write(uc, UC_X86_REG_XMM0 + i, zero)) != UC_ERR_OK)
			return e;
	return UC_ERR_OK;
}
