/* Watching ahead for op sampling's data addresses (see op_watch.h). Effective
 * addresses: Intel SDM vol. 1 §3.7.5 (sim/machine/fault.c computes them);
 * the implicit stack accesses of push, pop, call and ret: SDM vol. 2 (PUSH
 * stores at RSP - size, POP and RET load at RSP, CALL stores the return
 * address at RSP - 8). */
#include "sim/op_watch.h"

#include <capstone/capstone.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/fault.h"
#include "sim/machine/machine.h"
#include "sim/sim.h"
#include "sim/sim_state.h"

/* Guest instructions the watches may have had translated again (twice per watch: with
 * the hook, and without it once unwatched) before the translation cache is emptied from
 * outside emulation (op_watch_restarting). Unicorn 2.0.1 empties a full cache (1 GB of
 * host code) by itself in the middle of emulation, and its next uc_ctl_remove_cache
 * then faults in page_collection_lock (measured: record -e ibs_op// -c 160 of ibs_ops
 * 250000 died so after 1.08 million watches, at 1.17 GB); emptied at a restart, it
 * does not (the same run completes). About 230 bytes of host code per hooked
 * instruction were measured; 2^19 of them stay far below the 1 GB. */
#define RETRANSLATE_BUDGET (1u << 19)

/* Instructions noted and not yet asked for: a block's worth and more. */
#define NOTES 4096
/* Watched ranges at once (normally one or two blocks). */
#define MAX_WATCHES 16

struct note {
	uint64_t insn, ip;
	struct pmu_op_mem m;
};

struct watch {
	uint64_t lo, hi; /* first and last instruction address hooked */
	uc_hook hook;
};

struct op_watch {
	const struct pmu *pmu;
	uint64_t at;          /* instruction count from which the slow path looks */
	uint32_t max_run;     /* most instructions of a run seen: a TB pending and the next */
	uint64_t retranslated; /* instructions translated again since the cache was emptied */
	csh cs;
	cs_insn *insn;
	uc_engine *uc;        /* the engine the watches are in */
	struct watch w[MAX_WATCHES];
	size_t nw;
	struct note notes[NOTES];
	size_t nnotes;        /* ring: the newest at (nnotes - 1) % NOTES */
};

static uint64_t reg(struct sim *s, int r)
{
	uint64_t v = 0;
	uc_reg_read(s->p->uc, r, &v);
	return v;
}

/* What the instruction at ip, about to run, will access (one address: an
 * explicit memory operand's first, else the implicit stack slot's; load and
 * store say every access the instruction makes). */
static void note_access(struct sim *s, struct op_watch *o, uint64_t ip, struct pmu_op_mem *m)
{
	memset(m, 0, sizeof(*m));
	uint8_t b[16];
	size_t n = machine_read_code(s, ip, b, sizeof(b));
	const uint8_t *code = b;
	uint64_t a = ip;
	if (!n || !cs_disasm_iter(o->cs, &code, &n, &a, o->insn))
		return;
	const cs_insn *in = o->insn;
	const cs_x86 *x = &in->detail->x86;
	uint64_t next = ip + in->size;
	if (in->id == X86_INS_LEA || in->id == X86_INS_NOP)
		return; /* an address computed, nothing accessed */
	int rep = x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE;
	for (int i = 0; i < x->op_count; i++) {
		const cs_x86_op *op = &x->operands[i];
		if (op->type != X86_OP_MEM)
			continue;
		m->load = (op->access & CS_AC_READ) != 0;
		m->store = (op->access & CS_AC_WRITE) != 0;
		if (!m->load && !m->store) /* Capstone without access flags for it: unknown */
			return;
		m->width = op->size;
		if (rep && x->opcode[1] == 0 && ((x->opcode[0] >= 0xa4 && x->opcode[0] <= 0xaf) ||
						 (x->opcode[0] >= 0x6c && x->opcode[0] <= 0x6f)))
			return; /* a REP string op: many addresses, none of them the op's */
		uint64_t ea = fault_operand_address(s, op, next);
		if (x->addr_size == 4)
			ea &= 0xffffffffu;
		m->addr = ea;
		m->addr_valid = 1;
		/* the implicit stack access besides the operand's: call [mem] and push [mem]
		 * also store to the stack, pop [mem] also loads from it (SDM vol. 2); the
		 * address stays the operand's */
		if (in->id == X86_INS_CALL || in->id == X86_INS_PUSH)
			m->store = 1;
		else if (in->id == X86_INS_POP)
			m->load = 1;
		return;
	}
	uint64_t sp = reg(s, UC_X86_REG_RSP);
	switch (in->id) {
	case X86_INS_PUSH:
	case X86_INS_PUSHFQ: {
		uint8_t sz = x->prefix[2] == 0x66 ? 2 : 8;
		*m = (struct pmu_op_mem){.store = 1, .width = sz, .addr_valid = 1, .addr = sp - sz};
		return;
	}
	case X86_INS_CALL:
		*m = (struct pmu_op_mem){.store = 1, .width = 8, .addr_valid = 1, .addr = sp - 8};
		return;
	case X86_INS_POP:
	case X86_INS_POPFQ:
		*m = (struct pmu_op_mem){.load = 1, .width = x->prefix[2] == 0x66 ? 2 : 8, .addr_valid = 1, .addr = sp};
		return;
	case X86_INS_RET:
		*m = (struct pmu_op_mem){.load = 1, .width = 8, .addr_valid = 1, .addr = sp};
		return;
	case X86_INS_LEAVE: /* mov rsp, rbp; pop rbp: loads at RBP */
		*m = (struct pmu_op_mem){.load = 1, .width = 8, .addr_valid = 1, .addr = reg(s, UC_X86_REG_RBP)};
		return;
	default:
		return;
	}
}

static void on_code(uc_engine *uc, uint64_t addr, uint32_t size, void *ud)
{
	struct sim *s = ud;
	struct op_watch *o = s->opw;
	(void)uc, (void)size;
	uint64_t insn = bstream_insns_before(s->bs, addr) + 1;
	/* a REP's iterations enter it again: its first entry's note stands */
	const struct note *last = o->nnotes ? &o->notes[(o->nnotes - 1) % NOTES] : NULL;
	if (last && last->insn == insn && last->ip == addr)
		return;
	struct note *nt = &o->notes[o->nnotes++ % NOTES];
	nt->insn = insn;
	nt->ip = addr;
	note_access(s, o, addr, &nt->m);
}

/* 1 when the engine of the watches still runs a process (an exit or an
 * execve closes engines: their hooks went with them). */
static int engine_alive(const struct sim *s, const uc_engine *uc)
{
	for (size_t i = 0; i < s->nprocs; i++)
		if (s->procs[i]->state == PROC_LIVE && s->procs[i]->uc == uc)
			return 1;
	return 0;
}

/* Takes the watches away, but one over the block about to run (its TB was
 * translated with the hook; it stays till the next time). */
static void unwatch(struct sim *s, struct op_watch *o, uint64_t keep)
{
	if (o->nw && !engine_alive(s, o->uc))
		o->nw = 0;
	size_t k = 0;
	for (size_t i = 0; i < o->nw; i++) {
		if (keep >= o->w[i].lo && keep <= o->w[i].hi) {
			o->w[k++] = o->w[i];
			continue;
		}
		uc_hook_del(o->uc, o->w[i].hook);
		uc_ctl_remove_cache(o->uc, o->w[i].lo, o->w[i].hi + 1);
	}
	o->nw = k;
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
		unwatch(s, o, addr);
		set_at(s, o, nm);
		return 0;
	}
	/* near: the PMU tells, block by block, whether the tag can fall in it */
	const struct block_info *pend = NULL;
	uint64_t tb_end;
	if (!pend_n || !bstream_current(s->bs, &pend, &tb_end))
		pend = NULL, pend_n = 0;
	uint32_t k;
	if (!pmu_op_may_tag(o->pmu, pend, pend_n, bi, &k)) {
		unwatch(s, o, addr);
		return 0;
	}
	uint64_t lo = bi->start + bi->off[k], hi = bi->term;
	if (o->nw && o->uc != s->p->uc)
		unwatch(s, o, 0);
	for (size_t i = 0; i < o->nw; i++)
		if (lo >= o->w[i].lo && hi <= o->w[i].hi)
			return 0; /* watched already: this TB has the hook */
	if (o->nw == MAX_WATCHES)
		unwatch(s, o, 0);
	struct watch *w = &o->w[o->nw];
	if (uc_hook_add(s->p->uc, &w->hook, UC_HOOK_CODE, (void *)on_code, s, lo, hi) != UC_ERR_OK)
		return 0; /* unwatched: the addresses are reported unknown */
	w->lo = lo, w->hi = hi;
	o->uc = s->p->uc;
	o->nw++;
	o->retranslated += 2 * (uint64_t)o->max_run; /* the TB is at most the longest run */
	/* the TB was translated before the hook existed: translate it again */
	uc_ctl_remove_cache(s->p->uc, lo, hi + 1);
	s->restart = 1;
	s->restart_pc = addr;
	uc_emu_stop(s->p->uc);
	return 1;
}

void op_watch_restarting(struct sim *s)
{
	struct op_watch *o = s->opw;
	if (!o || o->retranslated < RETRANSLATE_BUDGET)
		return;
	uc_ctl(s->p->uc, UC_CTL_WRITE(UC_CTL_TB_FLUSH, 0)); /* hooks stay: they are not TBs */
	o->retranslated = 0;
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
