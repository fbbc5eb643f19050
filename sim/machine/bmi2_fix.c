/* PDEP and PEXT computed from their operands (see sim/machine/bmi2_fix.h). VEX.vvvv holds the
 * source and ModRM.r/m the mask: Capstone lists destination, source, mask. */
#include "sim/machine/bmi2_fix.h"

#include <capstone/capstone.h>

#include "sim/machine/fault.h"
#include "sim/sim_state.h"

uint64_t bmi2_pdep(uint64_t src, uint64_t mask)
{
	uint64_t r = 0;
	for (uint64_t bit = 1; mask; bit <<= 1) {
		uint64_t low = mask & -mask; /* the lowest mask bit takes the next source bit */
		if (src & bit)
			r |= low;
		mask &= mask - 1;
	}
	return r;
}

uint64_t bmi2_pext(uint64_t src, uint64_t mask)
{
	uint64_t r = 0;
	for (uint64_t bit = 1; mask; bit <<= 1) {
		uint64_t low = mask & -mask;
		if (src & low)
			r |= bit;
		mask &= mask - 1;
	}
	return r;
}

static int read_reg(struct sim *s, unsigned cs_reg, uint64_t *v)
{
	int size = 8, u = fault_uc_reg(cs_reg, &size);
	*v = 0;
	if (u < 0)
		return -1;
	uc_reg_read(s->p->uc, u, v);
	if (size == 4)
		*v &= 0xffffffffu;
	return 0;
}

/* The 64-bit register a 32-bit destination is part of: writing a 32-bit register
 * clears the upper half (Intel SDM vol. 1 3.4.1.1), and Unicorn's EAX keeps it. */
static unsigned full_register(unsigned r)
{
	static const unsigned map[][2] = {
		{X86_REG_EAX, X86_REG_RAX}, {X86_REG_EBX, X86_REG_RBX}, {X86_REG_ECX, X86_REG_RCX},
		{X86_REG_EDX, X86_REG_RDX}, {X86_REG_ESI, X86_REG_RSI}, {X86_REG_EDI, X86_REG_RDI},
		{X86_REG_EBP, X86_REG_RBP}, {X86_REG_ESP, X86_REG_RSP}, {X86_REG_R8D, X86_REG_R8},
		{X86_REG_R9D, X86_REG_R9},   {X86_REG_R10D, X86_REG_R10}, {X86_REG_R11D, X86_REG_R11},
		{X86_REG_R12D, X86_REG_R12}, {X86_REG_R13D, X86_REG_R13}, {X86_REG_R14D, X86_REG_R14},
		{X86_REG_R15D, X86_REG_R15},
	};
	for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
		if (map[i][0] == r)
			return map[i][1];
	return r;
}

int bmi2_fix_execute(struct sim *s, uint64_t addr, uint8_t len, uint64_t *fault_addr)
{
	static csh cs; /* opened once: decoding is read-only */
	static int opened;
	if (!opened) {
		if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
			return -1;
		cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
		opened = 1;
	}
	uint8_t buf[16];
	*fault_addr = addr;
	if (len > sizeof(buf) || uc_mem_read(s->p->uc, addr, buf, len) != UC_ERR_OK)
		return -1;
	cs_insn *in;
	if (cs_disasm(cs, buf, len, addr, 1, &in) != 1)
		return -1;
	const cs_x86 *x = &in->detail->x86;
	uint64_t src, mask = 0;
	int rc = -1;
	if (x->op_count == 3 && x->operands[0].type == X86_OP_REG && x->operands[1].type == X86_OP_REG &&
	    read_reg(s, x->operands[1].reg, &src) == 0) {
		int size = x->operands[0].size;
		if (x->operands[2].type == X86_OP_REG) {
			rc = read_reg(s, x->operands[2].reg, &mask);
		} else if (x->operands[2].type == X86_OP_MEM) {
			uint64_t ea = fault_operand_address(s, &x->operands[2], addr + len);
			rc = uc_mem_read(s->p->uc, ea, &mask, (size_t)size) == UC_ERR_OK ? 0 : -1;
			if (rc)
				*fault_addr = ea;
			if (size == 4)
				mask &= 0xffffffffu;
		}
		if (rc == 0) {
			uint64_t r = in->id == X86_INS_PDEP ? bmi2_pdep(src, mask) : bmi2_pext(src, mask);
			int dsize, u = fault_uc_reg(full_register(x->operands[0].reg), &dsize);
			if (u < 0 || dsize != 8)
				rc = -1;
			else
				uc_reg_write(s->p->uc, u, &r);
		}
	}
	cs_free(in, 1);
	return rc;
}
