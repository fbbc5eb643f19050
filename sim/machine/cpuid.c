/* The one CPU model pmusim reports through CPUID, on every host, so guest
 * libraries choose the same code paths everywhere (Intel SDM vol. 2A, CPUID).
 *
 * "pmusim virtual CPU": GenuineIntel, family 6 model 0x55 stepping 4 (a
 * Skylake-SP signature, matching the real-LBR fixture's machine), with only the
 * features Unicorn 2.0.1's TCG executes: SSE..SSE4.2, SSSE3, CX16, AES,
 * BMI1/2 (PDEP and PEXT computed by pmusim, sim/machine/bmi2_fix.c), LZCNT, ERMS. Not reported
 * (Unicorn 2.0.1 cannot run them, or we do not model them): PCLMULQDQ, POPCNT, MOVBE,
 * AVX* (VEX-encoded instructions raise SIGILL: decode.c DS_UNREPORTED), XSAVE/OSXSAVE,
 * RDRAND, RDSEED, FSGSBASE, TSX, hypervisor. tests/e2e/check_cpuid.c holds a probe
 * instruction for every bit reported here and compares its result with the host's. Caches: 32 KiB L1d/L1i (8-way), 1 MiB L2 (16-way), 32 MiB L3
 * (16-way), 64-byte lines. */
#include "sim/machine/cpuid.h"

#include <string.h>

#define B(n) (1u << (n))

/* leaf 4 cache descriptor: type 1 data, 2 instruction, 3 unified */
static void cache_leaf(uint32_t sub, uint32_t r[4])
{
	static const struct { uint32_t type, level, ways, sets; } c[] = {
		{1, 1, 8, 64}, {2, 1, 8, 64}, {3, 2, 16, 1024}, {3, 3, 16, 32768},
	};
	if (sub >= 4) {
		memset(r, 0, 16);
		return;
	}
	r[0] = c[sub].type | (c[sub].level << 5) | B(8);
	r[1] = (c[sub].ways - 1) << 22 | 63; /* 1 partition, 64-byte line */
	r[2] = c[sub].sets - 1;
	r[3] = 0;
}

static void put_str(uint32_t r[4], const char *s16)
{
	memcpy(r, s16, 16);
}

void cpuid_query(uint32_t leaf, uint32_t sub, uint32_t r[4])
{
	memset(r, 0, 16);
	switch (leaf) {
	case 0:
		r[0] = 7;
		memcpy(&r[1], "Genu", 4);
		memcpy(&r[3], "ineI", 4);
		memcpy(&r[2], "ntel", 4);
		break;
	case 1:
		r[0] = 0x00050654; /* family 6, model 0x55, stepping 4 */
		r[1] = (64 / 8) << 8 | 1 << 16; /* clflush 64 bytes, 1 logical cpu */
		r[2] = B(0) | B(9) | B(13) | B(19) | B(20) | B(25); /* SSE3 SSSE3 CX16 SSE4.1 SSE4.2 AES */
		r[3] = B(0) | B(4) | B(5) | B(6) | B(8) | B(11) | B(13) | B(15) | B(19) | B(23) |
		       B(24) | B(25) | B(26); /* FPU TSC MSR PAE CX8 SEP PGE CMOV CLFSH MMX FXSR SSE SSE2 */
		break;
	case 4:
		cache_leaf(sub, r);
		break;
	case 7:
		if (sub == 0)
			r[1] = B(3) | B(8) | B(9); /* BMI1 BMI2 ERMS */
		break;
	case 0x80000000:
		r[0] = 0x80000008;
		break;
	case 0x80000001:
		r[2] = B(0) | B(5);  /* LAHF/SAHF, LZCNT */
		r[3] = B(11) | B(20) | B(29); /* SYSCALL, NX, LM */
		break;
	case 0x80000002: put_str(r, "pmusim virtual C"); break;
	case 0x80000003: put_str(r, "PU (Skylake-like"); break;
	case 0x80000004: put_str(r, ") x86-64        "); break;
	case 0x80000006:
		r[2] = 1024 << 16 | 6 << 12 | 64; /* L2: 1 MiB, 8-way code, 64-byte lines */
		break;
	case 0x80000008:
		r[0] = 48 << 8 | 46; /* 48-bit virtual, 46-bit physical addresses */
		break;
	}
}
