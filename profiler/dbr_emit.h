/* What the emitter of replacement code (profiler/dbr_code.c) shares with its
 * parts for indirect branches (profiler/dbr_indirect.c): its working state and
 * the calls that append instructions. Internal to those files. */
#ifndef PMUSIM_PROFILER_DBR_EMIT_H
#define PMUSIM_PROFILER_DBR_EMIT_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/dbr_code.h"

#define MAX_INSN 15 /* the longest x86 instruction (SDM vol. 2, 2.3.11) */

/* What decoding and the links say about a block. */
struct dblock {
	uint64_t target;      /* its last instruction's direct target (jcc, jmp, call) */
	uint32_t first;       /* its first instruction's index in em.ins */
	uint32_t taken, fall; /* the successors dbr_code.h's rules pick, RSET_NONE */
	uint16_t pop;         /* a "ret imm16"'s imm16 */
	uint8_t cc;           /* a jcc's condition */
	uint8_t loop;         /* loop, loope, loopne, jrcxz, jecxz: rel8 only */
};

/* Per original instruction of the region. */
struct einsn {
	uint32_t copy; /* offset of the first instruction emitted for it */
	uint8_t disp;  /* offset of its RIP-relative disp32 in its bytes, 0: none */
};

/* A rel32 (the last 4 bytes of its instruction) to aim at a block's copy. */
struct fix {
	uint32_t at, block;
};

/* A jump table translated (dbr_indirect.c): the jump at orig's disp32 at
 * offset disp_at, the original table's n entries at table, block b's links. */
struct jtab {
	uint32_t disp_at, block, n;
	uint64_t table;
};

struct em {
	const struct rset_region *r;
	struct binary *code;
	enum dbr_layout layout;
	uint64_t base;
	struct dbr_decoder *dec;
	struct dbr_code *c;
	size_t cap, icap;
	struct dblock *blk;
	struct einsn *ins;
	uint32_t *order, *pos; /* order[k]: the block laid out k-th; pos[b]: its k */
	struct fix *fix;
	size_t nfix, fcap;
	struct jtab *jt;
	size_t njt, jtcap;
	int16_t sp_off; /* what dbr_put gives the instructions it appends (dbr_insn.sp_off) */
	char *msg;
	size_t msglen;
};

static inline uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static inline void wr32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v, p[1] = (uint8_t)(v >> 8), p[2] = (uint8_t)(v >> 16),
	p[3] = (uint8_t)(v >> 24);
}


/* A one-line out-of-memory failure in e->msg. */
int dbr_nomem(struct em *e);
/* Appends one instruction of n bytes and its map entry (enum dbr_what, orig). */
int dbr_put(struct em *e, const uint8_t *b, size_t n, int what, uint64_t orig);
/* The rel32 from next (the end of a jump) to to, when it reaches. */
int dbr_rel32(struct em *e, uint64_t next, uint64_t to, uint32_t *out);
/* Appends n bytes of data (no instruction, no map entry). */
int dbr_put_data(struct em *e, const uint8_t *b, size_t n);
/* "jmp rel32" (cc < 0) or "jcc rel32" to block to's copy, or (to RSET_NONE) to addr. */
int dbr_put_jump(struct em *e, int cc, int what, uint64_t orig, uint32_t to, uint64_t addr);
/* The push of return address ret by the call at orig, in two instructions. */
int dbr_put_push(struct em *e, uint64_t orig, uint64_t ret);

/* Block b's last instruction, an indirect call at at (its fall-through end): the
 * call done in the replacement, to wherever its operand says (the return
 * address pushed is the original's): 0 or a negative pmusim_err; 1, nothing
 * emitted, when its operand uses RSP (the push moves it) or is not FF /2. */
int dbr_emit_ind_call(struct em *e, uint32_t b, uint64_t at, uint64_t end);
/* Block b's last instruction, an indirect jump at at: its targets that the
 * region links (same clone) reached inside the replacement, any other target
 * in the original code (see dbr_indirect.c): 0 or a negative pmusim_err; 1,
 * nothing emitted, when it has no such link or its operand or targets do not fit
 * the compare chain (then it is copied as it is and leaves the replacement). */
int dbr_emit_ind_jump(struct em *e, uint32_t b, uint64_t at);
/* After every block: the translated jump tables placed after the code, 8-byte
 * aligned, and their jumps aimed at them. 0 or a negative pmusim_err. */
int dbr_put_tables(struct em *e);

#endif
