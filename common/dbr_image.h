/* Replacement code as the machine installs it: the bytes a dynamic binary
 * rewriter emitted for one region (profiler/dbr_code.h makes them), the map of
 * every emitted instruction back to the original instruction it copies or
 * stands for, and the patch points whose 5-byte jumps send the program there.
 * Plain records shared by the emitter (profiler/) and the machine (sim/), which
 * installs them and maps the retired blocks of replacement code back to the
 * original program's (sim/dbr_map.h). */
#ifndef PMUSIM_COMMON_DBR_IMAGE_H
#define PMUSIM_COMMON_DBR_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* What an emitted instruction is, for the map back to the original. */
enum dbr_what {
	DBR_COPY = 0,  /* a copy of orig (relocated or widened: same operation, same
	                * outcome; a jcc whose taken side and original taken side agree) */
	DBR_INVERTED,  /* a copy of the jcc at orig with its condition inverted: taken
	                * here means the original fell through, and the reverse */
	DBR_JUMP,      /* an instruction added after orig, the last instruction of its
	                * block: a jump, the trampoline of a loop/jrcxz, or any of an
	                * indirect jump's compare chain (push, pushfq, mov, cmp, je,
	                * xchg, a "ret 128" that is no return...; profiler/dbr_indirect.c);
	                * it stands for no instruction of the program; orig's own
	                * outcome is carried by where control goes */
	DBR_CALL_PUSH, /* the "push imm32" of the call at orig, inlined or not */
	DBR_CALL_HIGH, /* the "mov dword [rsp+4], imm32" after it */
	DBR_RET_POP,   /* the "lea rsp, [rsp+8]" standing for the return at orig in a clone */
};

struct dbr_insn {
	uint32_t off;    /* offset in the replacement bytes */
	uint8_t len;
	uint8_t what;    /* enum dbr_what */
	uint64_t orig;   /* the original instruction copied or stood for */
	uint8_t carries; /* a DBR_JUMP whose taking is orig's own taken transfer: the
	                  * jump into an inlined call's clone or to a callee not inlined,
	                  * out of a clone's return, a loop's taken side, the last step of
	                  * an indirect call or jump (a branch record of it is orig's) */
	int16_t sp_off;  /* RSP before it runs minus the program's RSP there (<= 0): an
	                  * indirect jump's compare chain runs below the program's stack
	                  * (profiler/dbr_indirect.c); 0 everywhere else */
};

/* Whether RSP after the program's instruction that insn[i] stands for is worth
 * noting when insn[i] runs (the map hands the call, return or jump on with it):
 * the push of a call, the pop of a clone's return, and the first instruction of
 * an indirect jump's compare chain (a copy followed by one that runs below the
 * program's stack: the jump leaves RSP as it is, where the chain moves it). */
static inline int dbr_insn_notes_sp(const struct dbr_insn *insn, size_t n, size_t i)
{
	return insn[i].what == DBR_CALL_PUSH || insn[i].what == DBR_RET_POP ||
	       (insn[i].what == DBR_COPY && i + 1 < n && insn[i + 1].sp_off < 0);
}

/* Or'ed into a what given to the emitter's appending calls: the carries flag. */
#define DBR_CARRIES 0x80

/* A patch point: the 5-byte "jmp rel32" to write over the original instruction at
 * addr (at least 5 bytes long) sends it to dest, the copy of that instruction. */
struct dbr_patch {
	uint64_t addr, dest;
	uint8_t jmp[5];  /* the bytes to write */
	uint8_t orig[5]; /* the original bytes they replace (from the binary) */
};

/* One region's replacement, borrowed by whoever installs it. */
struct dbr_image {
	uint64_t base; /* address of bytes[0] */
	const uint8_t *bytes;
	size_t len;
	const struct dbr_insn *insn; /* by off */
	size_t ninsn;
	const struct dbr_patch *patch;
	size_t npatch;
};

#endif
