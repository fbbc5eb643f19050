/* The software REP tracer of the seed (see sim_rep_patch in sim.h). The REP
 * string instructions of the program are found by a linear sweep of its code;
 * one at a time is patched with an INT3 (0xCC over its prefix byte) in guest
 * memory: the next one in address order from where execution is. When the
 * patched one is about to execute, the trap reaches pmusim, not the program:
 * the count register is recorded, the original byte is put back and the REP
 * runs. When a taken branch passes the patched one (execution continues at a
 * point after which another REP comes first), the patch moves to that one;
 * after a trapped REP has run, to the next after it. The INT3 never retires:
 * the program's instruction stream, output and ground truth are those of an
 * unpatched run. Code outside the program (libraries) leaves the patch where
 * it is. The count register is ECX under an address-size prefix (0x67: Intel SDM
 * vol. 2, REP/REPE/REPNE), RCX otherwise. A trap at a REP that a signal handler
 * returns into is no new execution (pmu_model/rep.h): nothing is recorded. */
#include "sim/machine/rep_patch.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "sim/linux/linux.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

static int is_rep_string(const cs_insn *in)
{
	static const char *const ops[] = {"movs", "stos", "cmps", "scas", "lods", "ins", "outs"};
	if (strncmp(in->mnemonic, "rep", 3) != 0)
		return 0;
	const char *op = strchr(in->mnemonic, ' ');
	for (size_t i = 0; op && i < sizeof(ops) / sizeof(ops[0]); i++)
		if (strncmp(op + 1, ops[i], strlen(ops[i])) == 0)
			return 1;
	return 0;
}

/* 1 when the instruction's prefixes (before its one-byte string opcode) hold the
 * address-size prefix 0x67. */
static int has_addr32(const cs_insn *in)
{
	for (uint16_t i = 0; i + 1 < in->size; i++)
		if (in->bytes[i] == 0x67)
			return 1;
	return 0;
}

/* Linear sweep of the program's executable segments (not its libraries). */
static int find_sites(struct sim *s)
{
	csh cs;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &cs) != CS_ERR_OK)
		return PMUSIM_ERR_INTERNAL;
	cs_option(cs, CS_OPT_SKIPDATA, CS_OPT_ON);
	struct proc *p = s->procs[0];
	int err = 0;
	for (size_t m = 0; m < p->nexec_maps && !err; m++) {
		const struct sim_mapping *mp = &p->exec_maps[m];
		if (mp->path != p->exe_abs)
			continue;
		uint8_t *code = malloc(mp->len);
		if (!code || mem_read(s, mp->addr, code, mp->len) < 0) {
			free(code);
			continue;
		}
		cs_insn *in;
		size_t n = cs_disasm(cs, code, mp->len, mp->addr, 0, &in);
		for (size_t i = 0; i < n; i++) {
			if (!is_rep_string(&in[i]))
				continue;
			uint64_t *ns = realloc(s->patch_sites, (s->npatch + 1) * sizeof(*ns));
			uint8_t *ne = ns ? realloc(s->patch_ecx, s->npatch + 1) : NULL;
			if (ns)
				s->patch_sites = ns;
			if (!ne) {
				err = PMUSIM_ERR_NOMEM;
				break;
			}
			s->patch_ecx = ne;
			s->patch_ecx[s->npatch] = (uint8_t)has_addr32(&in[i]);
			s->patch_sites[s->npatch++] = in[i].address;
		}
		if (n)
			cs_free(in, n);
		free(code);
	}
	cs_close(&cs);
	return err;
}

static void write_byte(struct sim *s, uint64_t addr, uint8_t b)
{
	uc_mem_write(s->procs[0]->uc, addr, &b, 1);
	struct proc *cur = s->p;
	s->p = s->procs[0];
	code_invalidate(s, addr, 1);
	s->p = cur;
}

/* Patches site patch_want instead of the one patched now (if any). */
void rep_patch_arm(struct sim *s)
{
	if (s->patch_armed)
		write_byte(s, s->patch_sites[s->patch_cur], s->patch_orig);
	s->patch_armed = 0;
	s->patch_cur = s->patch_want;
	s->patch_pending = 0;
	uint64_t site = s->patch_sites[s->patch_cur];
	if (uc_mem_read(s->procs[0]->uc, site, &s->patch_orig, 1) != UC_ERR_OK)
		return;
	write_byte(s, site, 0xcc);
	s->patch_armed = 1;
}

/* Index of the first REP site at or after addr (after it when skip), wrapping. */
static size_t site_after(const struct sim *s, uint64_t addr, int skip)
{
	size_t lo = 0, hi = s->npatch;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->patch_sites[mid] < addr + (skip ? 1 : 0))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo == s->npatch ? 0 : lo;
}

int rep_patch_check(struct sim *s, uint64_t addr)
{
	if (s->p != s->procs[0] || s->p->image != 0 || addr < s->patch_lo || addr >= s->patch_hi)
		return 0; /* not the program's code */
	int skip = addr == s->patch_skip; /* the trapped REP itself, iterating */
	if (!skip)
		s->patch_skip = 0;
	size_t want = site_after(s, addr, skip);
	if (s->patch_armed && want == s->patch_cur)
		return 0;
	s->patch_want = want;
	s->patch_pending = 1;
	return 1;
}

int sim_rep_patch(struct sim *s, void (*fn)(void *ctx, uint64_t site, uint64_t count, uint32_t tid), void *ctx)
{
	int err = find_sites(s);
	if (err < 0)
		return err;
	s->patch_fn = fn;
	s->patch_ctx = ctx;
	struct proc *p = s->procs[0];
	s->patch_lo = UINT64_MAX;
	for (size_t m = 0; m < p->nexec_maps; m++)
		if (p->exec_maps[m].path == p->exe_abs) {
			if (p->exec_maps[m].addr < s->patch_lo)
				s->patch_lo = p->exec_maps[m].addr;
			if (p->exec_maps[m].addr + p->exec_maps[m].len > s->patch_hi)
				s->patch_hi = p->exec_maps[m].addr + p->exec_maps[m].len;
		}
	machine_refresh_checks(s);
	return (int)s->npatch;
}

int rep_patch_is_trap(const struct sim *s, uint64_t int3_addr)
{
	return s->patch_armed && s->p == s->procs[0] && s->p->image == 0 &&
	       int3_addr == s->patch_sites[s->patch_cur];
}

uint64_t rep_patch_trap(struct sim *s)
{
	uint64_t site = s->patch_sites[s->patch_cur], rcx;
	bstream_finish(s->bs, site, 1); /* the INT3 does not retire */
	uc_reg_read(s->p->uc, UC_X86_REG_RCX, &rcx);
	uc_reg_write(s->p->uc, UC_X86_REG_RIP, &site);
	if (s->patch_ecx[s->patch_cur])
		rcx &= 0xffffffffu;
	if (!bstream_rep_resuming(s->bs, site))
		s->patch_fn(s->patch_ctx, site, rcx, sched_cur_tid(s));
	write_byte(s, site, s->patch_orig);
	s->patch_armed = 0;
	s->patch_skip = site; /* it runs now; the patch moves on once it is left */
	return site;
}

void rep_patch_restore_in(struct sim *s, struct proc *child)
{
	if (s->patch_armed)
		uc_mem_write(child->uc, s->patch_sites[s->patch_cur], &s->patch_orig, 1);
}
