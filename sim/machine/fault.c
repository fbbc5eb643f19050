/* Finds the faulting instruction of a memory fault (see sim/machine/fault.h). Effective
 * addresses follow Intel SDM vol. 1 §3.7.5 (base + index*scale + disp, RIP
 * relative to the next instruction, FS/GS bases). */
#include "sim/machine/fault.h"

#include "sim/machine/memory.h"
#include "sim/sim_state.h"

static int uc_reg_of(x86_reg r)
{
	switch (r) {
	case X86_REG_RAX: return UC_X86_REG_RAX;
	case X86_REG_RBX: return UC_X86_REG_RBX;
	case X86_REG_RCX: return UC_X86_REG_RCX;
	case X86_REG_RDX: return UC_X86_REG_RDX;
	case X86_REG_RSI: return UC_X86_REG_RSI;
	case X86_REG_RDI: return UC_X86_REG_RDI;
	case X86_REG_RBP: return UC_X86_REG_RBP;
	case X86_REG_RSP: return UC_X86_REG_RSP;
	case X86_REG_R8: return UC_X86_REG_R8;
	case X86_REG_R9: return UC_X86_REG_R9;
	case X86_REG_R10: return UC_X86_REG_R10;
	case X86_REG_R11: return UC_X86_REG_R11;
	case X86_REG_R12: return UC_X86_REG_R12;
	case X86_REG_R13: return UC_X86_REG_R13;
	case X86_REG_R14: return UC_X86_REG_R14;
	case X86_REG_R15: return UC_X86_REG_R15;
	case X86_REG_EAX: return UC_X86_REG_EAX;
	case X86_REG_EBX: return UC_X86_REG_EBX;
	case X86_REG_ECX: return UC_X86_REG_ECX;
	case X86_REG_EDX: return UC_X86_REG_EDX;
	case X86_REG_ESI: return UC_X86_REG_ESI;
	case X86_REG_EDI: return UC_X86_REG_EDI;
	case X86_REG_EBP: return UC_X86_REG_EBP;
	case X86_REG_ESP: return UC_X86_REG_ESP;
	default: return -1;
	}
}

static uint64_t reg_val(struct sim *s, x86_reg r, uint64_t next_pc)
{
	if (r == X86_REG_INVALID)
		return 0;
	if (r == X86_REG_RIP)
		return next_pc;
	int u = uc_reg_of(r);
	uint64_t v = 0;
	if (u >= 0)
		uc_reg_read(s->p->uc, u, &v);
	return v;
}

uint64_t fault_operand_address(struct sim *s, const cs_x86_op *op, uint64_t next_pc)
{
	uint64_t ea = reg_val(s, op->mem.base, next_pc) + reg_val(s, op->mem.index, next_pc) * (uint64_t)op->mem.scale +
		      (uint64_t)op->mem.disp;
	if (op->mem.segment == X86_REG_FS || op->mem.segment == X86_REG_GS) {
		uint64_t b = 0;
		uc_reg_read(s->p->uc, op->mem.segment == X86_REG_FS ? UC_X86_REG_FS_BASE : UC_X86_REG_GS_BASE, &b);
		ea += b;
	}
	return ea;
}

static int insn_touches(struct sim *s, const cs_insn *in, uint64_t addr)
{
	const cs_x86 *x = &in->detail->x86;
	uint64_t next = in->address + in->size;
	/* implicit stack accesses */
	if (in->id == X86_INS_PUSH || in->id == X86_INS_CALL || in->id == X86_INS_POP ||
	    in->id == X86_INS_RET) {
		uint64_t sp = reg_val(s, X86_REG_RSP, next);
		if (addr + 16 >= sp && addr <= sp + 16)
			return 1;
	}
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM)
			continue;
		uint64_t ea = fault_operand_address(s, op, next);
		uint64_t sz = op->size ? op->size : 1;
		if (addr >= PAGE_DOWN(ea) && addr < PAGE_UP(ea + sz))
			return 1;
	}
	/* string instructions address through RSI/RDI */
	if (x->opcode[1] == 0 && x->opcode[0] >= 0xa4 && x->opcode[0] <= 0xaf) {
		uint64_t si = reg_val(s, X86_REG_RSI, next), di = reg_val(s, X86_REG_RDI, next);
		if (PAGE_DOWN(addr) == PAGE_DOWN(si) || PAGE_DOWN(addr) == PAGE_DOWN(di))
			return 1;
	}
	return 0;
}

int fault_uc_reg(unsigned cs_reg, int *size)
{
	static const struct { x86_reg cs; int uc; int size; } map[] = {
		{X86_REG_AX, UC_X86_REG_AX, 2}, {X86_REG_BX, UC_X86_REG_BX, 2},
		{X86_REG_CX, UC_X86_REG_CX, 2}, {X86_REG_DX, UC_X86_REG_DX, 2},
		{X86_REG_SI, UC_X86_REG_SI, 2}, {X86_REG_DI, UC_X86_REG_DI, 2},
		{X86_REG_R8W, UC_X86_REG_R8W, 2}, {X86_REG_R9W, UC_X86_REG_R9W, 2},
		{X86_REG_R10D, UC_X86_REG_R10D, 4}, {X86_REG_R11D, UC_X86_REG_R11D, 4},
		{X86_REG_R8D, UC_X86_REG_R8D, 4}, {X86_REG_R9D, UC_X86_REG_R9D, 4},
		{X86_REG_R12D, UC_X86_REG_R12D, 4}, {X86_REG_R13D, UC_X86_REG_R13D, 4},
		{X86_REG_R14D, UC_X86_REG_R14D, 4}, {X86_REG_R15D, UC_X86_REG_R15D, 4},
		{X86_REG_R10, UC_X86_REG_R10, 8}, {X86_REG_R11, UC_X86_REG_R11, 8},
		{X86_REG_R12, UC_X86_REG_R12, 8}, {X86_REG_R13, UC_X86_REG_R13, 8},
		{X86_REG_R14, UC_X86_REG_R14, 8}, {X86_REG_R15, UC_X86_REG_R15, 8},
	};
	int u = uc_reg_of((x86_reg)cs_reg);
	if (u >= 0) {
		*size = (cs_reg == X86_REG_EAX || cs_reg == X86_REG_EBX || cs_reg == X86_REG_ECX ||
			 cs_reg == X86_REG_EDX || cs_reg == X86_REG_ESI || cs_reg == X86_REG_EDI ||
			 cs_reg == X86_REG_EBP || cs_reg == X86_REG_ESP) ? 4 : 8;
		return u;
	}
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i].cs == (x86_reg)cs_reg) {
			*size = map[i].size;
			return map[i].uc;
		}
	return -1;
}

uint64_t fault_locate(struct sim *s, const struct block_info *bi, uint64_t tb_end,
		      uint64_t addr, uint64_t fallback)
{
	csh cs;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return fallback;
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	cs_insn *in = cs_malloc(cs);
	uint64_t found = fallback;
	for (int i = 0; in && i < bi->ninsns; i++) {
		uint64_t pc = bi->start + bi->off[i];
		if (pc >= tb_end)
			break;
		uint8_t buf[16];
		size_t n = bi->off[i + 1] - bi->off[i];
		if (uc_mem_read(s->p->uc, pc, buf, n) != UC_ERR_OK)
			break;
		const uint8_t *code = buf;
		uint64_t a = pc;
		if (!cs_disasm_iter(cs, &code, &n, &a, in))
			break;
		if (insn_touches(s, in, addr)) {
			found = pc;
			break;
		}
	}
	if (in)
		cs_free(in, 1);
	cs_close(&cs);
	return found;
}
