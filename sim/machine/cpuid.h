/* The one CPU model pmusim reports through CPUID on every host (cpuid.c says which
 * features and why): the machine's CPUID hook answers with it, the loader's AT_HWCAP
 * is its leaf 1 EDX, as Linux's. */
#ifndef PMUSIM_SIM_MACHINE_CPUID_H
#define PMUSIM_SIM_MACHINE_CPUID_H

#include <stdint.h>

/* EAX, EBX, ECX, EDX of CPUID leaf, subleaf into out (Intel SDM vol. 2A, CPUID). */
void cpuid_query(uint32_t leaf, uint32_t subleaf, uint32_t out[4]);

#endif
