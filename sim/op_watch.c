/* Watching ahead for op sampling's data addresses (see op_watch.h).
 *
 * When the PMU says the tag can fall in the block about to run, the machine
 * reads the registers as the block starts and walks the block's instructions
 * up to the last that can be tagged, with a register file of known values:
 * the instructions whose effect on a register is simple arithmetic on known
 * values (mov, lea, add, sub, and, or, xor, inc, dec, shifts by a constant,
 * push, pop, and loads from memory no earlier instruction of the walk may have
 * written) keep it known; anything else that writes a register makes it
 * unknown. Each instruction that can be tagged gets a note: what it accesses
 * and, when every register its address needs is known, the address. Nothing
 * is hooked: Unicorn 2.0.1 crashes in uc_ctl_remove_cache once its
 * translation cache has been flushed (page_collection_lock, unicorn#1946),
 * which per-sample code hooks, each needing its block translated again, bring
 * about within a million samples.
 *
 * Effective addresses: Intel SDM vol. 1 §3.7.5 (base + index * scale + disp,
 * RIP-relative to the next instruction, FS/GS bases, 32-bit with an
 * address-size prefix); the implicit accesses (SDM vol. 2): PUSH stores at
 * RSP - size, CALL at RSP - 8, POP and RET load at RSP, LEAVE at RBP; writes
 * to a 32-bit register clear its upper half, to 8- and 16-bit ones keep it. */
#include "sim/op_watch.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/machine.h"
#include "sim/sim.h"
#include "sim/sim_state.h"

/* Instructions noted and not yet asked for: a block's worth and more. */
#define NOTES 4096

struct note {
	uint64_t insn, ip;
	struct pmu_op_mem m;
};

struct op_watch {
	const struct pmu *pmu;
	uint64_t at;          /* instruction count from which the slow path looks */
	uint32_t max_run;     /* most instructions of a run seen: a TB pending and the next */
	csh cs;
	cs_insn *insn;
	struct note notes[NOTES];
	size_t nnotes;        /* ring: the newest at (nnotes - 1) % NOTES */
};

/* The walk's registers: the 16 general-purpose ones (RAX..R15 order of
 * gpr_index), the FS and GS bases; known[i] when val[i] is what the machine
 * will hold there. */
struct regs {
	uint64_t val[16];
	uint8_t known[16];
	uint64_t fs, gs;
	/* what the walk's instructions wrote: a load from memory is known when
	 * it overlaps none of it */
	uint64_t st_lo[8], st_hi[8];
	int nst;
	int stored;           /* a write whose address is not known (or too many) */
};

/* Notes a write of `bytes` at ea (known: ok). */
static void wrote(struct regs *g, uint64_t ea, int bytes, int ok)
{
	if (!ok || bytes <= 0 || g->nst == 8) {
		g->stored = 1;
		return;
	}
	g->st_lo[g->nst] = ea;
	g->st_hi[g->nst++] = ea + (uint64_t)bytes;
}

/* 1 when a load of `bytes` at ea reads nothing the walk wrote. */
static int untouched(const struct regs *g, uint64_t ea, int bytes)
{
	if (g->stored)
		return 0;
	for (int i = 0; i < g->nst; i++)
		if (ea < g->st_hi[i] && ea + (uint64_t)bytes > g->st_lo[i])
			return 0;
	return 1;
}

/* Index 0..15 of a Capstone general-purpose register and its width in bytes
 * (hi8: AH, BH, CH, DH), or -1. */
static int gpr_index(unsigned r, int *bytes, int *hi8)
{
	static const unsigned r64[16] = {X86_REG_RAX, X86_REG_RCX, X86_REG_RDX, X86_REG_RBX, X86_REG_RSP, X86_REG_RBP,
					 X86_REG_RSI, X86_REG_RDI, X86_REG_R8,  X86_REG_R9,  X86_REG_R10, X86_REG_R11,
					 X86_REG_R12, X86_REG_R13, X86_REG_R14, X86_REG_R15};
	static const unsigned r32[16] = {X86_REG_EAX, X86_REG_ECX, X86_REG_EDX, X86_REG_EBX, X86_REG_ESP, X86_REG_EBP,
					 X86_REG_ESI, X86_REG_EDI, X86_REG_R8D, X86_REG_R9D, X86_REG_R10D, X86_REG_R11D,
					 X86_REG_R12D, X86_REG_R13D, X86_REG_R14D, X86_REG_R15D};
	static const unsigned r16[16] = {X86_REG_AX, X86_REG_CX, X86_REG_DX, X86_REG_BX, X86_REG_SP, X86_REG_BP,
					 X86_REG_SI, X86_REG_DI, X86_REG_R8W, X86_REG_R9W, X86_REG_R10W, X86_REG_R11W,
					 X86_REG_R12W, X86_REG_R13W, X86_REG_R14W, X86_REG_R15W};
	static const unsigned r8[16] = {X86_REG_AL, X86_REG_CL, X86_REG_DL, X86_REG_BL, X86_REG_SPL, X86_REG_BPL,
					X86_REG_SIL, X86_REG_DIL, X86_REG_R8B, X86_REG_R9B, X86_REG_R10B, X86_REG_R11B,
					X86_REG_R12B, X86_REG_R13B, X86_REG_R14B, X86_REG_R15B};
	static const unsigned h8[4] = {X86_REG_AH, X86_REG_CH, X86_REG_DH, X86_REG_BH};
	*hi8 = 0;
	for (int i = 0; i < 16; i++) {
		if (r == r64[i])
			return *bytes = 8, i;
		if (r == r32[i])
			return *bytes = 4, i;
		if (r == r16[i])
			return *bytes = 2, i;
		if (r == r8[i])
			return *bytes = 1, i;
	}
	for (int i = 0; i < 4; i++)
		if (r == h8[i])
			return *bytes = 1, *hi8 = 1, i;
	return -1;
}

static uint64_t width_mask(int bytes)
{
	return bytes >= 8 ? ~0ULL : (1ULL << (8 * bytes)) - 1;
}

/* The value of register r: 1 and *v, or 0 when unknown. */
static int get(const struct regs *g, unsigned r, uint64_t *v)
{
	int bytes, hi8, i = gpr_index(r, &bytes, &hi8);
	if (i < 0 || !g->known[i])
		return 0;
	*v = hi8 ? (g->val[i] >> 8) & 0xff : g->val[i] & width_mask(bytes);
	return 1;
}

/* Sets register r to v (known) or unknown (!ok), as the CPU writes a register
 * of its width. */
static void set(struct regs *g, unsigned r, uint64_t v, int ok)
{
	int bytes, hi8, i = gpr_index(r, &bytes, &hi8);
	if (i < 0)
		return;
	if (!ok || ((bytes < 4) && !g->known[i])) { /* a partial write keeps an unknown rest */
		g->known[i] = 0;
		return;
	}
	if (hi8)
		g->val[i] = (g->val[i] & ~0xff00ULL) | (v & 0xff) << 8;
	else if (bytes < 4)
		g->val[i] = (g->val[i] & ~width_mask(bytes)) | (v & width_mask(bytes));
	else
		g->val[i] = v & width_mask(bytes);
	g->known[i] = 1;
}

/* The effective address of memory operand op: 1 and *ea, or 0. */
static int address(const struct regs *g, const cs_insn *in, const cs_x86_op *op, uint64_t *ea)
{
	uint64_t b = 0, x = 0;
	if (op->mem.base == X86_REG_RIP)
		b = in->address + in->size;
	else if (op->mem.base != X86_REG_INVALID && !get(g, op->mem.base, &b))
		return 0;
	if (op->mem.index != X86_REG_INVALID && !get(g, op->mem.index, &x))
		return 0;
	*ea = b + x * (uint64_t)op->mem.scale + (uint64_t)op->mem.disp;
	if (op->mem.segment == X86_REG_FS)
		*ea += g->fs;
	else if (op->mem.segment == X86_REG_GS)
		*ea += g->gs;
	if (in->detail->x86.addr_size == 4)
		*ea &= 0xffffffffu;
	return 1;
}

static int is_string_op(const cs_x86 *x)
{
	return x->opcode[1] == 0 &&
	       ((x->opcode[0] >= 0xa4 && x->opcode[0] <= 0xaf) || (x->opcode[0] >= 0x6c && x->opcode[0] <= 0x6f));
}

/* What instruction in will access, before it runs with registers g (one
 * address: an explicit memory operand's first, else the implicit stack
 * slot's; load and store say every access the instruction makes). */
static void note_access(const struct regs *g, const cs_insn *in, struct pmu_op_mem *m)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t sp = 0;
	int sp_known = get(g, X86_REG_RSP, &sp);
	memset(m, 0, sizeof(*m));
	if (in->id == X86_INS_LEA || in->id == X86_INS_NOP)
		return; /* an address computed, nothing accessed */
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM)
			continue;
		m->load = (op->access & CS_AC_READ) != 0;
		m->store = (op->access & CS_AC_WRITE) != 0;
		if (!m->load && !m->store) /* no access flags from Capstone: unknown */
			return;
		m->width = op->size;
		/* the implicit stack access besides the operand's: call [mem] and push
		 * [mem] also store to the stack, pop [mem] also loads from it (SDM vol.
		 * 2); load and store say every access, the address stays the operand's */
		if (in->id == X86_INS_CALL || in->id == X86_INS_PUSH)
			m->store = 1;
		else if (in->id == X86_INS_POP)
			m->load = 1;
		int rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
		if (rep && is_string_op(x))
			return; /* a REP string op: many addresses, none of them the op's */
		m->addr_valid = (uint8_t)address(g, in, op, &m->addr);
		return;
	}
	int w16 = x->prefix[2] == 0x66;
	switch (in->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ:
		*m = (struct pmu_op_mem){.store = 1, .width = w16 ? 2 : 8};
		m->addr = sp - m->width;
		break;
	case X86_INS_CALL:
		*m = (struct pmu_op_mem){.store = 1, .width = 8, .addr = sp - 8};
		break;
	case X86_INS_POP:
	case X86_INS_POPFQ:
		*m = (struct pmu_op_mem){.load = 1, .width = w16 ? 2 : 8, .addr = sp};
		break;
	case X86_INS_RET:
		*m = (struct pmu_op_mem){.load = 1, .width = 8, .addr = sp};
		break;
	case X86_INS_LEAVE: /* mov rsp, rbp; pop rbp: loads at RBP */
		*m = (struct pmu_op_mem){.load = 1, .width = 8};
		sp_known = get(g, X86_REG_RBP, &m->addr);
		break;
	default:
		return;
	}
	m->addr_valid = (uint8_t)sp_known;
	if (!sp_known)
		m->addr = 0;
}

/* A value of `bytes` bytes of guest memory at ea: 1 and *v, or 0. */
static int load(struct sim *s, uint64_t ea, int bytes, uint64_t *v)
{
	*v = 0;
	return bytes > 0 && bytes <= 8 && uc_mem_read(s->p->uc, ea, v, (size_t)bytes) == UC_ERR_OK;
}

/* A source operand's value: 1 and *v, or 0. */
static int source(struct sim *s, const struct regs *g, const cs_insn *in, const cs_x86_op *op, uint64_t *v)
{
	uint64_t ea;
	switch (op->type) {
	case X86_OP_IMM: *v = (uint64_t)op->imm; return 1;
	case X86_OP_REG: return get(g, op->reg, v);
	case X86_OP_MEM: return address(g, in, op, &ea) && untouched(g, ea, op->size) && load(s, ea, op->size, v);
	default: return 0;
	}
}

/* Instruction in runs: its effect on g's registers. */
static void step(struct sim *s, struct regs *g, const cs_insn *in)
{
	const cs_x86 *x = &in->detail->x86;
	const cs_x86_op *d = x->op_count > 0 ? &x->operands[0] : NULL;
	const cs_x86_op *src = x->op_count > 1 ? &x->operands[1] : NULL;
	uint64_t a = 0, b = 0, sp = 0, v = 0;
	for (int i = 0; i < x->op_count; i++)
		if (x->operands[i].type == X86_OP_MEM && (x->operands[i].access & CS_AC_WRITE)) {
			int known = address(g, in, &x->operands[i], &a);
			wrote(g, a, x->operands[i].size, known && !(is_string_op(x)));
		}
	int ok = 0, handled = 1, dreg = d && d->type == X86_OP_REG;
	switch (in->id) {
	case X86_INS_MOV:
	case X86_INS_MOVABS:
		if (dreg)
			set(g, d->reg, v, source(s, g, in, src, &v));
		else
			handled = 0;
		break;
	case X86_INS_MOVSXD:
	case X86_INS_MOVSX:
	case X86_INS_MOVZX:
		if (dreg && src && src->size >= 1 && src->size <= 4) {
			ok = source(s, g, in, src, &v);
			v &= width_mask(src->size);
			if (in->id != X86_INS_MOVZX && (v >> (8 * src->size - 1)) & 1)
				v |= ~width_mask(src->size); /* sign-extended */
			set(g, d->reg, v, ok);
		} else {
			handled = 0;
		}
		break;
	case X86_INS_LEA:
		if (dreg && src->type == X86_OP_MEM) {
			ok = address(g, in, src, &v);
			set(g, d->reg, v, ok);
		} else {
			handled = 0;
		}
		break;
	case X86_INS_ADD:
	case X86_INS_SUB:
	case X86_INS_AND:
	case X86_INS_OR:
	case X86_INS_XOR:
		if (!dreg) {
			handled = 0;
			break;
		}
		if (in->id == X86_INS_XOR && src->type == X86_OP_REG && src->reg == d->reg) {
			set(g, d->reg, 0, 1);
			break;
		}
		ok = get(g, d->reg, &a) && source(s, g, in, src, &b);
		v = in->id == X86_INS_ADD ? a + b : in->id == X86_INS_SUB ? a - b : in->id == X86_INS_AND ? a & b
		  : in->id == X86_INS_OR  ? a | b : a ^ b;
		set(g, d->reg, v, ok);
		break;
	case X86_INS_INC:
	case X86_INS_DEC:
		if (dreg) {
			ok = get(g, d->reg, &a);
			set(g, d->reg, in->id == X86_INS_INC ? a + 1 : a - 1, ok);
		} else {
			handled = 0;
		}
		break;
	case X86_INS_SHL:
	case X86_INS_SHR:
		if (dreg && src && src->type == X86_OP_IMM) {
			int bytes, hi8;
			gpr_index(d->reg, &bytes, &hi8);
			unsigned n = (unsigned)src->imm & (bytes == 8 ? 63 : 31);
			ok = get(g, d->reg, &a);
			set(g, d->reg, in->id == X86_INS_SHL ? a << n : a >> n, ok);
		} else {
			handled = 0;
		}
		break;
	case X86_INS_PUSH: {
		int w = x->prefix[2] == 0x66 ? 2 : 8;
		ok = get(g, X86_REG_RSP, &sp);
		wrote(g, sp - (uint64_t)w, w, ok);
		set(g, X86_REG_RSP, sp - (uint64_t)w, ok);
		break;
	}
	case X86_INS_POP:
		ok = get(g, X86_REG_RSP, &sp);
		if (dreg) { /* loaded before RSP moves */
			int w = x->prefix[2] == 0x66 ? 2 : 8;
			int got = ok && untouched(g, sp, w) && load(s, sp, w, &v);
			if (ok && !got && g->nst && g->st_lo[g->nst - 1] == sp && g->st_hi[g->nst - 1] == sp + (uint64_t)w)
				got = 0; /* a push just before: its value is not kept */
			set(g, d->reg, v, got);
		} else {
			handled = 0;
		}
		if (!dreg || d->reg != X86_REG_RSP)
			set(g, X86_REG_RSP, sp + (x->prefix[2] == 0x66 ? 2 : 8), ok);
		break;
	case X86_INS_LEAVE: /* RSP = RBP, then pop RBP */
		ok = get(g, X86_REG_RBP, &a);
		set(g, X86_REG_RBP, v, ok && untouched(g, a, 8) && load(s, a, 8, &v));
		set(g, X86_REG_RSP, a + 8, ok);
		break;
	case X86_INS_NOP:
		break;
	default:
		handled = 0;
	}
	if (handled)
		return;
	/* anything else: every register it writes is unknown from now on */
	cs_regs wr, rd;
	uint8_t nr = 0, nw = 0;
	if (cs_regs_access(s->opw->cs, in, rd, &nr, wr, &nw) != CS_ERR_OK) {
		memset(g->known, 0, sizeof(g->known));
		g->stored = 1;
		return;
	}
	for (uint8_t i = 0; i < nw; i++)
		set(g, wr[i], 0, 0);
	if (in->id == X86_INS_CALL || in->id == X86_INS_SYSCALL)
		g->stored = 1;
}

static void add_note(struct op_watch *o, uint64_t insn, uint64_t ip, const struct pmu_op_mem *m)
{
	struct note *nt = &o->notes[o->nnotes++ % NOTES];
	nt->insn = insn;
	nt->ip = ip;
	nt->m = *m;
}

/* Notes instructions first..n-1 of bi, about to run from its start after
 * `done` instructions retired. */
static void walk(struct sim *s, struct op_watch *o, const struct block_info *bi, uint32_t first, uint64_t done)
{
	static const int uc_gpr[16] = {UC_X86_REG_RAX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RBX,
				       UC_X86_REG_RSP, UC_X86_REG_RBP, UC_X86_REG_RSI, UC_X86_REG_RDI,
				       UC_X86_REG_R8,  UC_X86_REG_R9,  UC_X86_REG_R10, UC_X86_REG_R11,
				       UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15};
	struct regs g = {0};
	for (int i = 0; i < 16; i++) {
		uc_reg_read(s->p->uc, uc_gpr[i], &g.val[i]);
		g.known[i] = 1;
	}
	uc_reg_read(s->p->uc, UC_X86_REG_FS_BASE, &g.fs);
	uc_reg_read(s->p->uc, UC_X86_REG_GS_BASE, &g.gs);
	for (uint32_t i = 0; i < bi->ninsns; i++) {
		uint64_t ip = bi->start + bi->off[i];
		uint8_t b[16];
		size_t n = machine_read_code(s, ip, b, (size_t)(bi->off[i + 1] - bi->off[i]));
		const uint8_t *code = b;
		uint64_t a = ip;
		struct pmu_op_mem m = {0};
		int decoded = n && cs_disasm_iter(o->cs, &code, &n, &a, o->insn);
		if (i >= first) {
			if (decoded)
				note_access(&g, o->insn, &m);
			add_note(o, done + i + 1, ip, &m);
		}
		if (!decoded || i + 1 == bi->ninsns)
			return;
		step(s, &g, o->insn);
	}
}

static void set_at(struct sim *s, struct op_watch *o, uint64_t next_min)
{
	uint64_t margin = 2 * (uint64_t)o->max_run;
	o->at = next_min > margin ? next_min - margin : 0;
	machine_refresh_checks(s);
}

int op_watch_block(struct sim *s, const struct block_info *bi, uint64_t addr)
{
	struct op_watch *o = s->opw;
	if (!o)
		return 0;
	if (bi->ninsns > o->max_run)
		o->max_run = bi->ninsns;
	uint64_t nm = pmu_op_next_min(o->pmu);
	uint32_t pend_n = (uint32_t)bstream_pending_insns(s->bs, addr);
	uint64_t done = bstream_insns(s->bs) + pend_n;
	if (nm == UINT64_MAX || done + bi->ninsns < nm || bstream_is_rep_continuation(s->bs, addr)) {
		set_at(s, o, nm);
		return 0;
	}
	/* near: the PMU tells, block by block, whether the tag can fall in it */
	const struct block_info *pend = NULL;
	uint64_t tb_end;
	if (!pend_n || !bstream_current(s->bs, &pend, &tb_end))
		pend = NULL, pend_n = 0;
	uint32_t k;
	if (pmu_op_may_tag(o->pmu, pend, pend_n, bi, &k))
		walk(s, o, bi, k, done);
	return 0;
}

uint64_t op_watch_at(const struct sim *s)
{
	return s->opw ? s->opw->at : UINT64_MAX;
}

int sim_watch_ops(struct sim *s, const struct pmu *pmu)
{
	struct op_watch *o = calloc(1, sizeof(*o));
	if (!o)
		return PMUSIM_ERR_NOMEM;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &o->cs) != CS_ERR_OK) {
		free(o);
		return PMUSIM_ERR_NOMEM;
	}
	cs_option(o->cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (!(o->insn = cs_malloc(o->cs))) {
		cs_close(&o->cs);
		free(o);
		return PMUSIM_ERR_NOMEM;
	}
	o->pmu = pmu;
	o->max_run = 1;
	s->opw = o;
	machine_refresh_checks(s);
	return 0;
}

void sim_op_memory(struct sim *s, uint64_t insn, uint64_t ip, struct pmu_op_mem *m)
{
	const struct op_watch *o = s->opw;
	memset(m, 0, sizeof(*m));
	if (!o)
		return;
	size_t n = o->nnotes < NOTES ? o->nnotes : NOTES;
	for (size_t i = 1; i <= n; i++) {
		const struct note *nt = &o->notes[(o->nnotes - i) % NOTES];
		if (nt->insn == insn && nt->ip == ip) {
			*m = nt->m;
			return;
		}
		if (nt->insn < insn)
			return; /* older notes are of earlier instructions */
	}
}

void op_watch_free(struct sim *s)
{
	struct op_watch *o = s->opw;
	if (!o)
		return;
	cs_free(o->insn, 1);
	cs_close(&o->cs);
	free(o);
	s->opw = NULL;
}
