/* Replacement code: the machine code a dynamic binary rewriter installs for one
 * region of a region set (profiler/region_set.h), and the map from every byte
 * of it back to the original instructions. Plain C: the bytes are emitted for
 * an address the caller chooses (in pmusim, guest memory reserved for them,
 * sim/sim.h sim_dbr_*), from the original instructions read out of a struct
 * binary (the program's file, never the patched guest memory).
 *
 * What is emitted, per copied block of the region (struct rset_block), its
 * instructions in order:
 *   - an instruction that is not a branch: copied byte for byte, except that a
 *     RIP-relative memory operand gets the displacement that reaches the same
 *     original address from the copy (PMUSIM_ERR_UNSUPPORTED when it does not
 *     fit in 32 bits); so is an indirect jump that links no target of its clone,
 *     or whose operand uses RSP, or whose linked targets are 2 GiB or more up (it
 *     leaves the replacement for wherever it goes; with links, a jump table of
 *     the replacement's own or the compare chain of profiler/dbr_indirect.c
 *     reaches their copies; a table is data after the code, with no map
 *     entry), a return outside a clone or whose return point is not linked, a syscall, a REP string instruction, a trap (the
 *     last three then go on as a block ending in BK_NONE does);
 *   - a conditional branch (jcc rel8/rel32; loop, loope, loopne, jrcxz, jecxz,
 *     which exist only with rel8, through a short trampoline: "loop L; jmp F';
 *     L: jmp T'"): each side goes to the copy of its successor when the region
 *     links it (profiler/region_set.h), else back to the original address;
 *     one side falls through when its copy is laid out next. Under
 *     DBR_HOT_PATHS the condition of a jcc is inverted where that makes the
 *     hotter side the fall-through. The trampoline's "loop L" is the
 *     original's bytes with rel8 = 5 (prefixes kept); "jmp F'" is always
 *     there, "jmp T'" left out under DBR_HOT_PATHS when T' comes next;
 *   - a direct jump: to its successor's copy (nothing when laid out next, under
 *     DBR_HOT_PATHS only, and not when it is alone in its block: every copy
 *     holds an instruction that stands for the original, so that the map sees
 *     the block run) or back to its original target;
 *   - a call the region inlines (a successor link into a clone whose call is this
 *     instruction): "push imm32" then "mov dword [rsp+4], imm32", which together
 *     store the original return address as the call would (flags untouched),
 *     then the clone's entry (a jump unless laid out next);
 *   - a call not inlined: a jump back to the original call (DBR_JUMP, standing
 *     for none), which runs in the original code, as region_set.h counts it: the
 *     program's own call pushes its return address, so that the processor's
 *     return stack predicts the return. A call that is one of the region's patch
 *     points (a jump back would come back to itself) is done in the
 *     replacement: "push imm32", "mov dword [rsp+4], imm32" (the original return
 *     address; the mov left out as for an inlined call), then a direct call's
 *     "jmp rel32" to the original callee or an indirect call's own operand as
 *     "jmp r/m64" (FF /4), mapped DBR_CALL_PUSH, DBR_CALL_HIGH, DBR_JUMP;
 *     PMUSIM_ERR_UNSUPPORTED when its operand uses RSP (the push would move it).
 *     Either way the callee returns to the original code, so the replacement
 *     holds no call and the program sees its own return addresses;
 *   - a return in a clone whose return point is linked: "lea rsp, [rsp+8]" (the
 *     return address the inlined call stored, dropped, flags untouched; for
 *     "ret imm16", [rsp+8+imm16]), then the return point's copy;
 *   - the end of a block that does not end in a branch (BK_NONE: the next
 *     instruction starts another block, or the run was cut): a jump to the
 *     successor's copy unless laid out next, or back to the original address.
 * Jumps added are "jmp rel32" (E9). An exit back to the original code is a jump
 * to the original address; so is every edge the region does not link.
 * Successors come from the block's links only, never from a search by address
 * (a clone's blocks copy the addresses of other clones' and own code's): a jcc's
 * or jmp's taken side is the linked block of the same clone starting at the
 * target, a fall side the linked block of the same clone starting at the next
 * instruction; an inlined call's is the linked entry of the clone whose call it
 * is and whose parent is the block's clone; a clone's return's, the linked
 * block of the parent clone at the clone's return point. A patch point's dest
 * is the first instruction emitted for it.
 *
 * Layout:
 *   - DBR_IDENTITY: the blocks in the region set's order (own code by address,
 *     then each clone's), each branch keeping its condition: a relocated copy
 *     whose taken branches are the original's, plus the jumps where the next
 *     block in the original is not the next one laid out. Only a fall side's
 *     jump is left out for the block laid out next; one that stands for a
 *     taken transfer (a jmp, a trampoline's "jmp T'", into a clone, out of
 *     it) stays even then;
 *   - DBR_HOT_PATHS: chains of blocks along their hottest successor link (greedy
 *     on the link weights, hottest first, as Pettis and Hansen lay out code:
 *     a link joins two chains when its source ends one and its target starts
 *     the other), each chain laid out straight, chains hottest first; a jcc's
 *     condition is inverted when its taken side is the one laid out next. A
 *     link's weight: for a conditional branch, the share of hot's weights on
 *     taken and fall (profiler/hot_code.h hot_branch) times the block's count;
 *     for the only way out of a block, its count. hot NULL, or a branch hot
 *     has no directions for: each side's successor's count. Only links the
 *     layout can turn into fall-throughs weigh (not an indirect jump's, a
 *     trampoline's fall side, a jmp alone in its block); a chain's heat is the
 *     highest count of its blocks, ties by the index of its first block
 *     (profiler/dbr_layout.h).
 *
 * The map: one entry per emitted instruction, in address order, saying which
 * original instruction it copies or stands for and how (enum dbr_what), so that
 * a consumer of the replacement's retired instructions can rebuild the
 * original program's instruction stream exactly (sim/dbr_map.h). A direct jump
 * left out has no entry: the next entry's orig is its target.
 * (Instructions are decoded by profiler/dbr_insn.h, chains laid out by
 * profiler/dbr_layout.h.) */
#ifndef PMUSIM_PROFILER_DBR_CODE_H
#define PMUSIM_PROFILER_DBR_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/dbr_image.h"
#include "profiler/binary.h"
#include "profiler/hot_code.h"
#include "profiler/region_set.h"

enum dbr_layout {
	DBR_IDENTITY = 0, /* relocated copies, original branch directions */
	DBR_HOT_PATHS,    /* hottest successors laid out as fall-throughs */
};

struct dbr_code {
	uint64_t base;         /* address of bytes[0] */
	uint8_t *bytes;
	size_t len;
	struct dbr_insn *insn; /* by off */
	size_t ninsn;
	struct dbr_patch *patch; /* the region's points, by address */
	size_t npatch;
	uint64_t *copy_of_block; /* per rset block: address of its first instruction's copy */
};

/* Emits region r's replacement code for address base, reading the original
 * instructions from code. hot: the branch directions for DBR_HOT_PATHS (NULL:
 * each successor's count instead). 0 with *out set (free with dbr_code_free), or a
 * negative pmusim_err with a one-line reason in msg: PMUSIM_ERR_UNSUPPORTED when
 * some operand or jump cannot reach from base (more than 2 GiB away), a
 * RIP-relative operand's displacement cannot be placed (VEX, EVEX, XOP), or an
 * indirect call through RSP is a patch point; PMUSIM_ERR_FORMAT when an instruction of a
 * block cannot be read or decoded, its decoding disagrees with the block's
 * offsets, a branch is not last, the last instruction is not of the block's
 * kind, a link is out of range, or a point is not an instruction of 5 bytes or
 * more of its block. */
int dbr_code_emit(const struct rset_region *r, struct binary *code, const struct hot_code *hot,
                  enum dbr_layout layout, uint64_t base, struct dbr_code **out, char *msg,
                  size_t msglen);
void dbr_code_free(struct dbr_code *c);

/* c as the machine installs it (borrowing c's arrays). */
struct dbr_image dbr_code_image(const struct dbr_code *c);
/* 1 when every block of r lies in code (a rewriter that writes one file's code
 * only: the program's, not its libraries'). */
int dbr_region_in(const struct rset_region *r, const struct binary *code);

/* The map entry of the instruction at addr of the replacement, NULL when no
 * emitted instruction starts there. */
const struct dbr_insn *dbr_code_insn(const struct dbr_code *c, uint64_t addr);

#endif
