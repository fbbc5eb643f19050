/* The CPU state Linux gives a process and a signal handler, which Unicorn 2.0.1 does not
 * start with (it leaves CR0.MP/NE, CR4.OSFXSR/OSXMMEXCPT, the x87 control word and MXCSR
 * at 0). */
#ifndef PMUSIM_SIM_MACHINE_CPU_STATE_H
#define PMUSIM_SIM_MACHINE_CPU_STATE_H

#include <unicorn/unicorn.h>

/* Linux's values (Intel SDM vol. 3A 2.5 and 13.1; arch/x86/kernel/fpu/init.c). */
#define CPU_CR0_MP (1u << 1)          /* WAIT/FWAIT see CR0.TS */
#define CPU_CR0_NE (1u << 5)          /* unmasked x87 exceptions raise #MF (SIGFPE) */
#define CPU_CR4_OSFXSR (1u << 9)      /* FXSAVE/FXRSTOR include XMM0-15 and MXCSR */
#define CPU_CR4_OSXMMEXCPT (1u << 10) /* unmasked SIMD exceptions raise #XM, not #UD */
#define CPU_FPCW_INIT 0x37f           /* all x87 exceptions masked, 64-bit precision, nearest */
#define CPU_MXCSR_INIT 0x1f80         /* all SIMD exceptions masked, nearest */

/* A new engine's state as Linux starts a process: the control-register bits above
 * (added to what Unicorn's 64-bit mode needs), the x87 control word and MXCSR.
 * UC_ERR_OK or Unicorn's error. */
uc_err cpu_state_init(uc_engine *uc);

/* The FPU and SSE state Linux gives a signal handler (fpu__clear_user_states): the
 * initial control word and MXCSR, status cleared, XMM0-15 zero. */
uc_err cpu_state_reset_fpu(uc_engine *uc);

#endif
