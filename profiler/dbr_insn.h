/* One original instruction as replacement code (profiler/dbr_code.h) needs to
 * know it, decoded with Capstone from its bytes: its length, whether and how it
 * branches, and where the displacement of a RIP-relative operand lies in it
 * (Capstone 4 gives its value, not its place). */
#ifndef PMUSIM_PROFILER_DBR_INSN_H
#define PMUSIM_PROFILER_DBR_INSN_H

#include <stddef.h>
#include <stdint.h>

struct dbr_decoder;

struct dbr_orig {
	uint64_t target; /* a direct jcc's, jmp's or call's target */
	uint16_t pop;    /* a "ret imm16"'s imm16 */
	uint8_t kind;    /* enum br_kind (pmu_model/block.h): BK_COND, BK_JMP, BK_JMP_IND,
	                  * BK_CALL, BK_CALL_IND, BK_RET; BK_NONE when it does not branch */
	uint8_t cc;      /* a jcc's condition (Intel SDM vol. 2, B.1.4.7) */
	uint8_t loop;    /* 1: loop, loope, loopne, jrcxz, jecxz (rel8 only) */
	uint8_t disp;    /* offset of its RIP-relative disp32 in its bytes, 0: none */
	char text[192];  /* "mnemonic operands", for messages */
};

/* 0 with *out set (free with dbr_decoder_free), or a negative pmusim_err with
 * Capstone's reason in msg. */
int dbr_decoder_new(struct dbr_decoder **out, char *msg, size_t msglen);
void dbr_decoder_free(struct dbr_decoder *d);

/* The instruction at addr whose bytes are b[0 .. n): 0 with *o set;
 * PMUSIM_ERR_FORMAT when b is not exactly one instruction of n bytes, or a
 * conditional branch without a direct target; PMUSIM_ERR_UNSUPPORTED when it
 * has a RIP-relative operand whose displacement cannot be placed (VEX, EVEX
 * and XOP encodings, which the engine does not run either). A one-line reason
 * in msg. */
int dbr_decode(struct dbr_decoder *d, const uint8_t *b, size_t n, uint64_t addr, struct dbr_orig *o,
               char *msg, size_t msglen);

#endif
