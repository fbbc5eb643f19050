/* x86-64 instruction facts for relocation, from Capstone 4 and the encoding
 * rules of the Intel SDM vol. 2: legacy prefixes, REX and opcode bytes (2.1,
 * 2.2.1), RIP-relative addressing (2.2.1.6), Jcc/LOOP/JrCXZ opcodes. */
#include "profiler/dbr_insn.h"

#include <capstone/capstone.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "pmu_model/block.h"

struct dbr_decoder {
	csh cs;
	cs_insn *ci;
};

int dbr_decoder_new(struct dbr_decoder **out, char *msg, size_t msglen)
{
	*out = NULL;
	struct dbr_decoder *d = calloc(1, sizeof(*d));
	if (!d)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "out of memory");
	cs_err ce = cs_open(CS_ARCH_X86, CS_MODE_64, &d->cs);
	if (ce != CS_ERR_OK) {
		free(d);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_INTERNAL, "capstone: %s",
		                   cs_strerror(ce));
	}
	ce = cs_option(d->cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (ce == CS_ERR_OK && !(d->ci = cs_malloc(d->cs)))
		ce = CS_ERR_MEM;
	if (ce != CS_ERR_OK) {
		dbr_decoder_free(d);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_INTERNAL, "capstone: %s",
		                   cs_strerror(ce));
	}
	*out = d;
	return 0;
}

void dbr_decoder_free(struct dbr_decoder *d)
{
	if (!d)
		return;
	if (d->ci)
		cs_free(d->ci, 1);
	cs_close(&d->cs);
	free(d);
}

static size_t skip_prefixes(const uint8_t *b, size_t n)
{
	static const uint8_t legacy[] = {0xf0, 0xf2, 0xf3, 0x2e, 0x36, 0x3e,
	                                 0x26, 0x64, 0x65, 0x66, 0x67};
	size_t p = 0;
	while (p < n && ((b[p] & 0xf0) == 0x40 || memchr(legacy, b[p], sizeof(legacy))))
		p++;
	return p;
}

/* Offset of the disp32 of in's RIP-relative operand in its bytes b, 0 when it
 * has none, -1 when it cannot be placed. In 64-bit mode that operand is ModRM
 * mod=00 rm=101 without SIB, its disp32 right after the ModRM byte, which
 * follows the legacy prefixes, REX and the opcode: one byte, 0F xx, or
 * 0F 38 xx / 0F 3A xx. Capstone's ModRM and displacement check the place. */
static int rip_disp_at(const cs_insn *in, const uint8_t *b, size_t n)
{
	const cs_x86 *x = &in->detail->x86;
	int k = 0;
	while (k < x->op_count &&
	       !(x->operands[k].type == X86_OP_MEM && x->operands[k].mem.base == X86_REG_RIP))
		k++;
	if (k == x->op_count)
		return 0;
	size_t p = skip_prefixes(b, n);
	/* VEX (C4, C5), EVEX (62), XOP (8F with a map select >= 8, where POP r/m
	 * has ModRM.reg 0): their prefix is longer, and the engine does not run
	 * them (common/decode.h DS_UNREPORTED) */
	if (p + 1 >= n || b[p] == 0xc4 || b[p] == 0xc5 || b[p] == 0x62 ||
	    (b[p] == 0x8f && (b[p + 1] & 0x1f) >= 8))
		return -1;
	if (b[p] == 0x0f)
		p += b[p + 1] == 0x38 || b[p + 1] == 0x3a ? 3 : 2;
	else
		p += 1;
	if (p + 5 > n || b[p] != x->modrm || (b[p] & 0xc7) != 0x05 ||
	    (int32_t)((uint32_t)b[p + 1] | (uint32_t)b[p + 2] << 8 | (uint32_t)b[p + 3] << 16 |
	              (uint32_t)b[p + 4] << 24) != x->operands[k].mem.disp)
		return -1;
	return (int)p + 1;
}

/* Its branch kind (BK_NONE: none; -1: a conditional branch without a direct
 * target), with target, cc, loop and pop set in o. */
static int kind_of(const cs_insn *in, const uint8_t *b, size_t n, struct dbr_orig *o)
{
	const cs_x86 *x = &in->detail->x86;
	int direct = x->op_count == 1 && x->operands[0].type == X86_OP_IMM;
	size_t p = skip_prefixes(b, n);
	uint8_t op = p < n ? b[p] : 0, op2 = p + 1 < n ? b[p + 1] : 0;
	if (direct)
		o->target = (uint64_t)x->operands[0].imm;
	/* Jcc rel8 70+cc, Jcc rel32 0F 80+cc; LOOPNE E0, LOOPE E1, LOOP E2, JrCXZ E3 */
	if ((op >= 0x70 && op <= 0x7f) || (op == 0x0f && op2 >= 0x80 && op2 <= 0x8f)) {
		o->cc = (op == 0x0f ? op2 : op) & 0xf;
		return direct ? BK_COND : -1;
	}
	if (op >= 0xe0 && op <= 0xe3) {
		o->loop = 1;
		return direct ? BK_COND : -1;
	}
	switch (in->id) {
	case X86_INS_JMP:
		return direct ? BK_JMP : BK_JMP_IND;
	case X86_INS_CALL:
		return direct ? BK_CALL : BK_CALL_IND;
	case X86_INS_RET:
		o->pop = x->op_count == 1 ? (uint16_t)x->operands[0].imm : 0;
		return BK_RET;
	}
	return BK_NONE;
}

int dbr_decode(struct dbr_decoder *d, const uint8_t *b, size_t n, uint64_t addr, struct dbr_orig *o,
               char *msg, size_t msglen)
{
	memset(o, 0, sizeof(*o));
	const uint8_t *p = b;
	size_t left = n;
	uint64_t a = addr;
	if (!cs_disasm_iter(d->cs, &p, &left, &a, d->ci) || d->ci->size != n)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                   "the bytes at %#" PRIx64 " are not one instruction of %zu bytes",
		                   addr, n);
	snprintf(o->text, sizeof(o->text), "%s%s%s", d->ci->mnemonic, d->ci->op_str[0] ? " " : "",
	         d->ci->op_str);
	int kind = kind_of(d->ci, b, n, o);
	if (kind < 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                   "the conditional branch at %#" PRIx64
		                   " (%s) has no direct target",
		                   addr, o->text);
	int at = rip_disp_at(d->ci, b, n);
	if (at < 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_UNSUPPORTED,
		                   "the RIP-relative operand of the instruction at %#" PRIx64
		                   " (%s) cannot be relocated",
		                   addr, o->text);
	o->kind = (uint8_t)kind, o->disp = (uint8_t)at;
	return 0;
}
