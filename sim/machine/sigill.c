/* Describing an illegal instruction (see sim/machine/sigill.h). The instruction groups are
 * Capstone's (x86.h X86_GRP_*), its names for the ISA extensions. */
#include "sim/machine/sigill.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <string.h>

#include "sim/sim_state.h"

/* Capstone's names of the ISA-extension groups of in, space-separated, upper case. */
static void group_names(csh cs, const cs_insn *in, char *buf, size_t len)
{
	buf[0] = 0;
	for (int i = 0; i < in->detail->groups_count; i++) {
		uint8_t g = in->detail->groups[i];
		if (g < 128) /* 1..127: jump, call, ret, int, privilege… not extensions */
			continue;
		const char *n = cs_group_name(cs, g);
		if (!n)
			continue;
		size_t at = strlen(buf);
		snprintf(buf + at, len - at, "%s%s", at ? " " : "", n);
	}
	for (char *p = buf; *p; p++)
		if (*p >= 'a' && *p <= 'z')
			*p = (char)(*p - 'a' + 'A');
}

void sigill_describe(struct sim *s, uint64_t pc, char *buf, size_t len)
{
	uint8_t bytes[16];
	size_t n = 0;
	while (n < sizeof(bytes) && uc_mem_read(s->p->uc, pc + n, bytes + n, 1) == UC_ERR_OK)
		n++;
	csh cs;
	cs_insn *in = NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK) {
		snprintf(buf, len, "illegal instruction");
		return;
	}
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	if (n == 0 || cs_disasm(cs, bytes, n, pc, 1, &in) != 1) {
		char hex[64] = "";
		for (size_t i = 0; i < n && i < 8; i++)
			snprintf(hex + 3 * i, sizeof(hex) - 3 * i, "%02x ", bytes[i]);
		snprintf(buf, len, "illegal instruction: bytes %sdo not decode as an x86-64 instruction", hex);
		cs_close(&cs);
		return;
	}
	char groups[96], what[320];
	group_names(cs, in, groups, sizeof(groups));
	snprintf(what, sizeof(what), "`%s%s%s`%s%s%s", in->mnemonic, in->op_str[0] ? " " : "", in->op_str,
		 groups[0] ? " (" : "", groups, groups[0] ? ")" : "");
	const char *why;
	if (in->id == X86_INS_UD2 || in->id == X86_INS_UD0)
		why = "the program's own undefined instruction";
	else if (s->sigill_unreported)
		why = "pmusim's CPUID does not report AVX (Unicorn 2.0.1 would run the VEX form as its "
		      "legacy SSE instruction, with wrong results); the program did not check CPUID";
	else
		why = "Unicorn 2.0.1 cannot execute it (pmusim's CPUID does not report it either)";
	snprintf(buf, len, "illegal instruction %s: %s", what, why);
	s->sigill_unreported = 0;
	cs_free(in, 1);
	cs_close(&cs);
}
