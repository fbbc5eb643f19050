/* The machine: Unicorn engine, hooks and the run loop (see sim/sim.h).
 * Execution reaches the block stream through one UC_HOOK_BLOCK hook; only the
 * instructions that need it (REP string, rdtsc, rdrand, privileged) get a
 * UC_HOOK_CODE hook of their own, installed the first time their code run is
 * seen, after which emulation restarts at that TB so the hook is translated in. */
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/bmi2_fix.h"
#include "sim/machine/fault.h"
#include "sim/linux/linux.h"
#include "sim/linux/proc_self.h"
#include "sim/machine/cpuid.h"
#include "sim/machine/machine.h"
#include "sim/machine/mappings.h"
#include "sim/machine/memory.h"
#include "sim/machine/rep_patch.h"
#include "sim/rep_ref.h"
#include "sim/op_watch.h"
#include "sim/dbr.h"
#include "sim/sim_state.h"
#include "sim/stacks.h"
#include "sim/linux/syscall_names.h"

#define UNTIL_NEVER UINT64_MAX

size_t machine_read_code(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct sim *s = ctx;
	size_t got = dbr_read_code(s, addr, buf, len);
	if (got)
		return got; /* replacement code, in no area of the program's */
	while (got < len) {
		const struct vma *v = mem_find(s, addr + got);
		if (!v || !(v->prot & UC_PROT_EXEC))
			break;
		size_t n = len - got;
		if (v->end - (addr + got) < n)
			n = (size_t)(v->end - (addr + got));
		if (uc_mem_read(s->p->uc, addr + got, (char *)buf + got, n) != UC_ERR_OK)
			break;
		got += n;
	}
	return got;
}

static uint64_t read_reg(void *ctx, enum bs_reg r)
{
	struct sim *s = ctx;
	uint64_t v = 0;
	uc_reg_read(s->p->uc, r == BS_RFLAGS ? UC_X86_REG_RFLAGS : r == BS_RCX ? UC_X86_REG_RCX : UC_X86_REG_RSP, &v);
	return v;
}

void sim_stop(struct sim *s, enum sim_end end, int code)
{
	if (s->stop_reason)
		return;
	s->res->end = end;
	if (end == SIM_END_EXIT)
		s->res->status = code;
	else if (end == SIM_END_SIGNAL)
		s->res->signo = code;
	else if (end == SIM_END_ERROR)
		s->res->err = code;
	s->stop_reason = (int)end + 1;
	uc_emu_stop(s->p->uc);
}

uint64_t sim_now_ns(struct sim *s)
{
	return bstream_insns_before(s->bs, s->syscall_pc) + 1 + s->time_offset_ns;
}

/* Lines for unsupported system calls that the bitmap cannot remember (numbers
 * below 0 or above 511), before one line saying the rest go unreported. */
#define UNSUPPORTED_ODD_LINES 3u

void sim_warn_unsupported(struct sim *s, long nr)
{
	const char *name = syscall_name(nr);
	char buf[32];
	if (!name) {
		snprintf(buf, sizeof(buf), "syscall_%ld", nr);
		name = buf;
	}
	if (s->opt.strict) {
		snprintf(s->res->message, sizeof(s->res->message),
			 "unsupported system call %s (%ld) (--strict)", name, nr);
		sim_stop(s, SIM_END_ERROR, PMUSIM_ERR_UNSUPPORTED);
		return;
	}
	if (nr >= 0 && nr < 512) {
		if (s->unsupported_seen[nr / 64] & (1ULL << (nr % 64)))
			return;
		s->unsupported_seen[nr / 64] |= 1ULL << (nr % 64);
	} else {
		/* no bitmap holds these: a program that probes numbers at random, or
		 * loops on a bad one, would print a line per call */
		if (s->unsupported_odd > UNSUPPORTED_ODD_LINES)
			return;
		if (s->unsupported_odd++ == UNSUPPORTED_ODD_LINES) {
			fprintf(s->opt.log, "pmusim: further unsupported system calls numbered below 0 or "
				"above 511 are not reported\n");
			return;
		}
	}
	fprintf(s->opt.log, "pmusim: unsupported system call %s (%ld) returns ENOSYS\n", name, nr);
}

void sim_note_once(struct sim *s, enum sim_note id, const char *msg)
{
	if (s->notes_seen & (1u << id))
		return;
	s->notes_seen |= 1u << id;
	fprintf(s->opt.log, "pmusim: note: %s\n", msg);
}

/* --- special-instruction hooks ------------------------------------------- */

static const struct hooked_site *site_find(const struct sim *s, uint64_t addr)
{
	size_t lo = 0, hi = s->p->nhooked;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->p->hooked[mid].sp.addr < addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < s->p->nhooked && s->p->hooked[lo].sp.addr == addr ? &s->p->hooked[lo] : NULL;
}

static void skip_insn(struct sim *s, uint64_t addr, uint8_t len)
{
	uint64_t next = addr + len;
	uc_reg_write(s->p->uc, UC_X86_REG_RIP, &next);
	bstream_cut(s->bs, next);
}

static void hook_special(uc_engine *uc, uint64_t addr, uint32_t size, void *ud)
{
	struct sim *s = ud;
	const struct hooked_site *h = site_find(s, addr);
	(void)size;
	if (!h)
		return;
	switch (h->sp.kind) {
	case DS_REP: {
		uint64_t rcx;
		uc_reg_read(uc, UC_X86_REG_RCX, &rcx);
		bstream_rep(s->bs, addr, rcx);
		break;
	}
	case DS_RDTSC:
	case DS_RDTSCP: {
		uint64_t t = bstream_insns_before(s->bs, addr) + s->time_offset_ns;
		uint64_t lo = t & 0xffffffffu, hi = t >> 32, zero = 0;
		uc_reg_write(uc, UC_X86_REG_RAX, &lo);
		uc_reg_write(uc, UC_X86_REG_RDX, &hi);
		if (h->sp.kind == DS_RDTSCP)
			uc_reg_write(uc, UC_X86_REG_RCX, &zero);
		skip_insn(s, addr, h->sp.len);
		break;
	}
	case DS_RDRAND: {
		int sz = 8;
		int r = fault_uc_reg(h->sp.cs_reg, &sz);
		uint64_t v = rng_next(&s->rng), f;
		if (sz < 8)
			v &= (1ULL << (sz * 8)) - 1;
		if (r >= 0)
			uc_reg_write(uc, r, &v);
		uc_reg_read(uc, UC_X86_REG_RFLAGS, &f);
		f = (f & ~0x8d5ULL) | 1; /* CF=1, OF SF ZF AF PF = 0 */
		uc_reg_write(uc, UC_X86_REG_RFLAGS, &f);
		skip_insn(s, addr, h->sp.len);
		break;
	}
	case DS_PRIV:
		s->res->fault_pc = addr;
		s->fault_signo = SIGSEGV;
		uc_emu_stop(uc);
		break;
	case DS_BMI2_FIX: {
		uint64_t fault_addr;
		if (bmi2_fix_execute(s, addr, h->sp.len, &fault_addr) == 0) {
			skip_insn(s, addr, h->sp.len);
		} else { /* its memory operand is not readable: the fault it would raise */
			s->res->fault_pc = addr;
			s->res->fault_addr = fault_addr;
			s->mem_fault_type = UC_MEM_READ_UNMAPPED;
			s->fault_signo = SIGSEGV;
			uc_emu_stop(uc);
		}
		break;
	}
	case DS_UNREPORTED:
		s->res->fault_pc = addr;
		s->fault_signo = SIGILL;
		s->sigill_unreported = 1;
		uc_emu_stop(uc);
		break;
	}
}

/* Hooks every special instruction of bi not hooked yet; returns how many. */
int machine_hook_specials(struct sim *s, const struct block_info *bi)
{
	size_t n;
	const struct dc_special *sp = dcache_specials(bi, &n);
	int added = 0;
	for (size_t i = 0; i < n; i++) {
		if (site_find(s, sp[i].addr))
			continue;
		if (s->p->nhooked == s->p->caphooked) {
			size_t nc = s->p->caphooked ? s->p->caphooked * 2 : 64;
			struct hooked_site *nh = realloc(s->p->hooked, nc * sizeof(*nh));
			if (!nh)
				return PMUSIM_ERR_NOMEM;
			s->p->hooked = nh;
			s->p->caphooked = nc;
		}
		size_t j = s->p->nhooked;
		while (j > 0 && s->p->hooked[j - 1].sp.addr > sp[i].addr) {
			s->p->hooked[j] = s->p->hooked[j - 1];
			j--;
		}
		s->p->hooked[j].sp = sp[i];
		if (uc_hook_add(s->p->uc, &s->p->hooked[j].hook, UC_HOOK_CODE, (void *)hook_special, s,
				sp[i].addr, sp[i].addr) != UC_ERR_OK)
			return PMUSIM_ERR_EMU;
		s->p->nhooked++;
		added++;
		int err = sp[i].kind == DS_REP ? rep_ref_watch(s, sp[i].addr) : 0;
		if (err < 0)
			return err;
	}
	return added;
}

void code_invalidate(struct sim *s, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len;
	size_t w = 0;
	int dropped = 0;
	for (size_t i = 0; i < s->p->nhooked; i++) {
		if (s->p->hooked[i].sp.addr >= addr && s->p->hooked[i].sp.addr < end) {
			uc_hook_del(s->p->uc, s->p->hooked[i].hook);
			dropped = 1;
			continue;
		}
		s->p->hooked[w++] = s->p->hooked[i];
	}
	s->p->nhooked = w;
	rep_ref_invalidate(s, addr, len);
	dbr_code_changed(s, addr, len);
	if (dcache_invalidate(s->p->dc, addr, len) || dropped)
		uc_ctl_remove_cache(s->p->uc, addr, end);
}

static void hook_code_write(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
			    int64_t value, void *ud)
{
	(void)uc, (void)type, (void)value;
	code_invalidate(ud, addr, (uint64_t)size);
}

void code_watch_refresh(struct sim *s)
{
	size_t want = 0;
	for (size_t i = 0; i < s->p->nvmas; i++)
		if ((s->p->vmas[i].prot & (UC_PROT_WRITE | UC_PROT_EXEC)) == (UC_PROT_WRITE | UC_PROT_EXEC))
			want++;
	if (want == 0 && s->p->nwx == 0)
		return;
	for (size_t i = 0; i < s->p->nwx; i++)
		uc_hook_del(s->p->uc, s->p->wx_hooks[i]);
	s->p->nwx = 0;
	free(s->p->wx_hooks);
	s->p->wx_hooks = want ? calloc(want, sizeof(uc_hook)) : NULL;
	if (!s->p->wx_hooks)
		return;
	for (size_t i = 0; i < s->p->nvmas; i++) {
		const struct vma *v = &s->p->vmas[i];
		if ((v->prot & (UC_PROT_WRITE | UC_PROT_EXEC)) != (UC_PROT_WRITE | UC_PROT_EXEC))
			continue;
		if (uc_hook_add(s->p->uc, &s->p->wx_hooks[s->p->nwx], UC_HOOK_MEM_WRITE, (void *)hook_code_write, s,
				v->start, v->end - 1) == UC_ERR_OK)
			s->p->nwx++;
	}
}

static void hook_syscall(uc_engine *uc, void *ud)
{
	(void)uc;
	syscall_dispatch(ud);
}

static int hook_cpuid(uc_engine *uc, void *ud)
{
	uint64_t a, c;
	uint32_t r[4];
	(void)ud;
	uc_reg_read(uc, UC_X86_REG_RAX, &a);
	uc_reg_read(uc, UC_X86_REG_RCX, &c);
	cpuid_query((uint32_t)a, (uint32_t)c, r);
	static const int regs[4] = {UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX};
	for (int i = 0; i < 4; i++) {
		uint64_t v = r[i];
		uc_reg_write(uc, regs[i], &v);
	}
	return 1; /* skip Unicorn's own CPUID */
}

static void hook_intr(uc_engine *uc, uint32_t intno, void *ud)
{
	struct sim *s = ud;
	uint64_t rip;
	uc_reg_read(uc, UC_X86_REG_RIP, &rip);
	int sig = SIGSEGV;
	uint64_t pc = rip;
	if (intno == 3 && rep_patch_is_trap(s, rip - 1)) {
		s->patch_hit = 1; /* the REP tracer's, not the program's */
		uc_emu_stop(uc);
		return;
	}
	switch (intno) {
	case 0: sig = SIGFPE; break;          /* #DE: RIP at the divide */
	case 1: case 3: sig = SIGTRAP; pc = rip - (intno == 3); break;
	case 6: sig = SIGILL; break;
	case 16: case 19: sig = SIGFPE; break;
	default: break;                       /* #GP, int n: SIGSEGV as Linux */
	}
	s->res->fault_pc = pc;
	s->intr_rip = rip;
	s->fault_signo = sig;
	uc_emu_stop(uc);
}

static bool hook_mem_invalid(uc_engine *uc, uc_mem_type type, uint64_t addr, int size,
			     int64_t value, void *ud)
{
	struct sim *s = ud;
	(void)uc, (void)size, (void)value;
	if (addr >= AREAS_BASE && addr < AREAS_END) /* work areas: to the program, nothing is there */
		type = type == UC_MEM_WRITE_PROT ? UC_MEM_WRITE_UNMAPPED
		     : type == UC_MEM_FETCH_PROT ? UC_MEM_FETCH_UNMAPPED
		     : type == UC_MEM_READ_PROT ? UC_MEM_READ_UNMAPPED : type;
	else if (mem_find(s, addr)) /* a PROT_NONE reservation the engine has not mapped */
		type = type == UC_MEM_WRITE_UNMAPPED ? UC_MEM_WRITE_PROT
		     : type == UC_MEM_FETCH_UNMAPPED ? UC_MEM_FETCH_PROT
		     : type == UC_MEM_READ_UNMAPPED ? UC_MEM_READ_PROT : type;
	s->mem_fault_type = type;
	s->mem_fault_addr = addr;
	return false;
}

/* --- construction ---------------------------------------------------------- */

int machine_add_hooks(struct sim *s, struct proc *p)
{
	uc_hook h;
	void *block = s->opt.empty_block_hook ? (void *)machine_block_hook_empty : (void *)machine_block_hook;
	if (uc_hook_add(p->uc, &h, UC_HOOK_BLOCK, block, s, 1, 0) ||
	    uc_hook_add(p->uc, &h, UC_HOOK_INSN, (void *)hook_syscall, s, 1, 0, UC_X86_INS_SYSCALL) ||
	    uc_hook_add(p->uc, &h, UC_HOOK_INSN, (void *)hook_cpuid, s, 1, 0, UC_X86_INS_CPUID) ||
	    uc_hook_add(p->uc, &h, UC_HOOK_INTR, (void *)hook_intr, s, 1, 0) ||
	    uc_hook_add(p->uc, &h, UC_HOOK_MEM_INVALID, (void *)hook_mem_invalid, s, 1, 0) ||
	    stacks_add_hooks(s, p) < 0)
		return PMUSIM_ERR_EMU;
	return 0;
}

int sim_new(const struct sim_options *opt, struct sim **out, char *msg, size_t msglen)
{
	*out = NULL;
	struct sim *s = calloc(1, sizeof(*s));
	if (!s)
		return PMUSIM_ERR_NOMEM;
	s->opt = *opt;
	sim_set_interrupt_flag(s, NULL);
	machine_refresh_checks(s);
	if (!s->opt.log)
		s->opt.log = stderr;
	rng_init(&s->rng, opt->seed);
	s->realtime_base_ns = (opt->clock_start_given ? opt->clock_start : SIM_CLOCK_START_DEFAULT) * 1000000000ULL;
	s->next_tid = GUEST_PID + 1;
	int err = PMUSIM_ERR_NOMEM;
	struct proc *p = proc_alloc(s);
	if (!p) {
		snprintf(msg, msglen, "out of memory");
		goto fail;
	}
	s->p = p;
	p->ppid = 1;
	/* started as a shell starts a command it does not put in a job of its own: in its
	 * parent's group and session, not a leader (setsid works) */
	p->pgid = p->sid = 1;
	p->cwd_fd = open(".", O_PATH | O_DIRECTORY | O_CLOEXEC);
	p->umask = umask(0);
	umask(p->umask);
	p->uid[0] = (uint32_t)getuid(), p->uid[1] = p->uid[2] = (uint32_t)geteuid();
	p->gid[0] = (uint32_t)getgid(), p->gid[1] = p->gid[2] = (uint32_t)getegid();
	p->path = (char *)opt->path;
	err = proc_image_open(s, p, msg, msglen);
	if (err < 0)
		goto fail;
	s->main_syms = p->syms;
	s->main_load_bias = p->load_bias;
	s->bs = bstream_new(p->dc, (struct bstream_cpu){read_reg, s});
	if (!s->bs) {
		err = PMUSIM_ERR_NOMEM;
		snprintf(msg, msglen, "out of memory");
		goto fail;
	}
	proc_enter(s, p);
	if (opt->dbr && (err = dbr_setup(s, msg, msglen)) < 0)
		goto fail;
	syscall_init_fds(s);
	bstream_set_tid(s->bs, GUEST_PID);
	if (sched_init(s) < 0) {
		err = PMUSIM_ERR_NOMEM;
		snprintf(msg, msglen, "out of memory");
		goto fail;
	}
	*out = s;
	return 0;
fail:
	sim_free(s);
	return err;
}

void sim_free(struct sim *s)
{
	if (!s)
		return;
	stacks_free(s);
	dbr_free(s);
	sched_free(s);
	signalfd_free(s);
	for (size_t i = 0; i < s->nprocs; i++)
		proc_free(s, s->procs[i]);
	proc_self_free(s);
	bstream_free(s->bs);
	rep_ref_free(s->rep_ref);
	op_watch_free(s);
	for (size_t i = 0; i < s->nold_dcs; i++)
		dcache_free(s->old_dcs[i]);
	symtab_free(s->main_syms);
	free(s->patch_sites);
	free(s->patch_ecx);
	free(s);
}

int sim_add_sink(struct sim *s, struct block_sink sink)
{
	return bstream_add_sink(s->bs, sink);
}

int sim_add_image_sink(struct sim *s, struct block_sink sink)
{
	if (s->dbr)
		return dbr_add_image_sink(s, sink);
	return bstream_add_image_sink(s->bs, sink);
}

void sim_set_clock(struct sim *s, uint64_t (*cycles)(void *ctx), void *ctx)
{
	s->clock = cycles;
	s->clock_ctx = ctx;
}

struct dcache *sim_dcache(struct sim *s)
{
	return s->procs[0]->dc;
}

const struct symtab *sim_symtab(const struct sim *s)
{
	return s->main_syms;
}

uint64_t sim_load_bias(const struct sim *s)
{
	return s->main_load_bias;
}

const char *sim_exe_path(const struct sim *s)
{
	return s->procs[0]->exe_abs;
}

uint32_t sim_pid(const struct sim *s)
{
	(void)s;
	return GUEST_PID;
}

void sim_set_task_listener(struct sim *s, const struct sim_task_listener *l)
{
	s->task = *l;
}
