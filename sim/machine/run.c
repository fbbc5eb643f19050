/* The run loop: starts Unicorn, restarts it where hooks asked for a fresh
 * translation, and turns the way emulation ended into a sim_result (exit,
 * signal with the faulting instruction, instruction limit, or pmusim error). */
#include <signal.h>
#include <string.h>

#include "common/err.h"
#include "sim/linux/linux.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/fault.h"
#include "sim/machine/machine.h"
#include "sim/machine/rep_patch.h"
#include "sim/machine/sigill.h"
#include "sim/rep_ref.h"
#include "sim/dbr.h"
#include "sim/sim_state.h"

#define UNTIL_NEVER UINT64_MAX

/* "0xPC (symbol+0xoff)", and the file and its offset when pc is in a library (or the
 * program, for a position-independent one). */
static void describe_pc(struct sim *s, uint64_t pc, char *buf, size_t len)
{
	const struct sym *sym = symtab_lookup(s->p->syms, pc);
	char file[320] = "";
	for (size_t i = 0; i < s->p->nexec_maps; i++) {
		const struct sim_mapping *m = &s->p->exec_maps[i];
		if (pc >= m->addr && pc < m->addr + m->len) {
			snprintf(file, sizeof(file), " in %s+0x%llx", m->path,
				 (unsigned long long)(pc - m->addr + m->pgoff));
			break;
		}
	}
	if (sym)
		snprintf(buf, len, "0x%llx (%s+0x%llx)%s", (unsigned long long)pc, sym->name,
			 (unsigned long long)(pc - sym->addr), file);
	else
		snprintf(buf, len, "0x%llx%s", (unsigned long long)pc, file);
}

static void signal_message(struct sim *s, struct sim_result *res)
{
	char where[600];
	describe_pc(s, res->fault_pc, where, sizeof(where));
	const char *name = sigabbrev_np(res->signo);
	if (!res->fault && s->interrupt_flag && *s->interrupt_flag && res->signo == *s->interrupt_flag) {
		snprintf(res->message, sizeof(res->message), "interrupted (SIG%s) after %llu instructions",
			 name ? name : "?", (unsigned long long)res->insns);
		return;
	}
	if (!res->fault) {
		snprintf(res->message, sizeof(res->message), "program terminated by SIG%s (raised by the program)",
			 name ? name : "?");
		return;
	}
	const char *what = "";
	char extra[96] = "";
	if (s->mem_fault_type) {
		switch (s->mem_fault_type) {
		case UC_MEM_READ_UNMAPPED: what = "read of unmapped address"; break;
		case UC_MEM_WRITE_UNMAPPED: what = "write to unmapped address"; break;
		case UC_MEM_FETCH_UNMAPPED: what = "jump to unmapped address"; break;
		case UC_MEM_WRITE_PROT: what = "write to read-only address"; break;
		case UC_MEM_READ_PROT: what = "read of protected address"; break;
		case UC_MEM_FETCH_PROT: what = "jump to non-executable address"; break;
		default: what = "invalid access to"; break;
		}
		snprintf(extra, sizeof(extra), ": %s 0x%llx", what, (unsigned long long)res->fault_addr);
	} else if (res->signo == SIGILL) {
		char what_insn[400];
		sigill_describe(s, res->fault_pc, what_insn, sizeof(what_insn));
		snprintf(res->message, sizeof(res->message), "program terminated by SIGILL at %.500s: %.400s", where,
			 what_insn);
		return;
	} else if (res->signo == SIGFPE) {
		snprintf(extra, sizeof(extra), ": arithmetic exception");
	} else if (res->signo == SIGSEGV) {
		snprintf(extra, sizeof(extra), ": privileged instruction or general protection fault");
	}
	snprintf(res->message, sizeof(res->message), "program terminated by SIG%s at %.600s%s",
		 name ? name : "?", where, extra);
}

/* Maps a Unicorn error that ended emulation to a guest signal. */
static void emu_error(struct sim *s, uc_err e, uint64_t rip, struct sim_result *res)
{
	const struct block_info *bi;
	uint64_t tb_end;
	res->end = SIM_END_SIGNAL;
	res->fault = 1;
	switch (e) {
	case UC_ERR_READ_UNMAPPED: case UC_ERR_WRITE_UNMAPPED: case UC_ERR_READ_PROT:
	case UC_ERR_WRITE_PROT:
		res->signo = SIGSEGV;
		res->fault_addr = s->mem_fault_addr;
		res->fault_pc = bstream_current(s->bs, &bi, &tb_end)
					? fault_locate(s, bi, tb_end, s->mem_fault_addr, bi->start)
					: rip;
		break;
	case UC_ERR_FETCH_UNMAPPED: case UC_ERR_FETCH_PROT:
		res->signo = SIGSEGV;
		res->fault_addr = s->mem_fault_addr;
		res->fault_pc = s->mem_fault_addr;
		break;
	case UC_ERR_INSN_INVALID:
		res->signo = SIGILL;
		res->fault_pc = rip;
		break;
	default:
		res->end = SIM_END_ERROR;
		res->err = PMUSIM_ERR_EMU;
		snprintf(res->message, sizeof(res->message), "emulator stopped at 0x%llx: %s",
			 (unsigned long long)rip, uc_strerror(e));
		break;
	}
}

/* si_code of a fault (uapi/asm-generic/siginfo.h). */
static int fault_code(const struct sim *s, const struct sim_result *res)
{
	switch (res->signo) {
	case SIGSEGV:
		if (!s->mem_fault_type)
			return 0x80; /* SI_KERNEL: general protection */
		return (s->mem_fault_type == UC_MEM_READ_UNMAPPED || s->mem_fault_type == UC_MEM_WRITE_UNMAPPED ||
			s->mem_fault_type == UC_MEM_FETCH_UNMAPPED) ? 1 /* SEGV_MAPERR */ : 2 /* SEGV_ACCERR */;
	case SIGFPE: return 1;  /* FPE_INTDIV */
	case SIGILL: return 2;  /* ILL_ILLOPN */
	case SIGTRAP: return 0x80;
	}
	return 0;
}

/* A fault or signal ends a child process (the others go on): 1 and the PC to
 * resume at when the run goes on, 0 when it ended. */
static int child_dies(struct sim *s, struct sim_result *res, int sig, uint64_t *pc)
{
	memset(res, 0, sizeof(*res));
	proc_end(s, sig);
	*pc = sched_attend(s);
	return !s->stop_reason;
}

int sim_run(struct sim *s, struct sim_result *res)
{
	memset(res, 0, sizeof(*res));
	s->res = res;
	uint64_t pc = s->p->entry, until = UNTIL_NEVER;
	s->slice_end = (s->opt.quantum_cycles && s->clock ? s->clock(s->clock_ctx) : 0) + s->quantum;
	sched_update_attention(s);
	for (;;) {
		s->restart = 0;
		s->attention = 0;
		s->mem_fault_type = 0;
		uc_err e = uc_emu_start(s->p->uc, pc, until, 0, 0);
		if (s->patch_hit && !s->stop_reason) {
			s->patch_hit = 0;
			pc = rep_patch_trap(s);
			continue;
		}
		if (s->restart && !s->stop_reason) {
			if (s->patch_pending && s->p == s->procs[0])
				rep_patch_arm(s);
			if (s->win_due) {
				s->win_due = 0;
				s->win_at = bstream_insns(s->bs) + s->win_every;
				machine_refresh_checks(s);
				s->win_fn(s->win_ctx);
			}
			pc = s->restart_pc;
			if (s->restart_until)
				until = s->restart_until;
			s->restart_until = 0;
			continue;
		}
		if (s->attention && !s->stop_reason) {
			pc = sched_attend(s);
			if (!s->stop_reason)
				continue;
		}
		if (s->fault_signo && !s->stop_reason) {
			/* an exception seen by a hook (#DE, #UD, int3, privileged instruction) */
			int sig = s->fault_signo;
			s->fault_signo = 0;
			/* the faulting instruction did not retire, except a trap (int3) */
			uint64_t at = sig == SIGTRAP ? s->intr_rip : res->fault_pc;
			bstream_finish(s->bs, at, sig != SIGTRAP);
			res->signo = sig;
			res->fault = 1;
			if (signal_fault(s, sig, fault_code(s, res), at, 0, &pc)) {
				memset(res, 0, sizeof(*res));
				s->sigill_unreported = 0; /* the program's handler has it */
				sched_update_attention(s);
				continue;
			}
			if (s->p->pid != GUEST_PID && !s->stop_reason) {
				if (child_dies(s, res, sig, &pc))
					continue;
				break;
			}
			if (!s->stop_reason)
				sim_stop(s, SIM_END_SIGNAL, sig);
			break;
		}
		uint64_t rip;
		uc_reg_read(s->p->uc, UC_X86_REG_RIP, &rip);
		if (s->stop_reason) {
			if (res->end == SIM_END_SIGNAL && res->fault_pc) {
				bstream_finish(s->bs, res->fault_pc, 1);
			} else {
				bstream_finish(s->bs, s->attention ? s->resume_pc : rip, 0);
			}
		} else if (e == UC_ERR_OK && s->limit_armed && rip == until) {
			res->end = SIM_END_LIMIT;
			bstream_finish(s->bs, rip, 1);
		} else if (e == UC_ERR_OK) {
			/* emulation ended by itself (e.g. hlt): Linux would fault */
			res->end = SIM_END_SIGNAL;
			res->signo = SIGSEGV;
			res->fault = 1;
			res->fault_pc = rip;
			bstream_finish(s->bs, rip, 1);
		} else {
			emu_error(s, e, rip, res);
			uint64_t at = res->end == SIM_END_SIGNAL ? res->fault_pc : rip;
			bstream_finish(s->bs, at, 1);
			if (res->end == SIM_END_SIGNAL &&
			    signal_fault(s, res->signo, fault_code(s, res), res->fault_pc, res->fault_addr, &pc)) {
				/* the program handles it: go on in its handler */
				memset(res, 0, sizeof(*res));
				sched_update_attention(s);
				continue;
			}
			if (res->end == SIM_END_SIGNAL && s->p->pid != GUEST_PID && child_dies(s, res, res->signo, &pc))
				continue;
		}
		break;
	}
	res->insns = bstream_insns(s->bs);
	rep_ref_run_end(s);
	dbr_run_end(s);
	if (res->end == SIM_END_SIGNAL)
		signal_message(s, res);
	else if (res->end == SIM_END_LIMIT)
		snprintf(res->message, sizeof(res->message), "stopped after %llu instructions (--max-insns)",
			 (unsigned long long)res->insns);
	/* the program's and its libraries' file names are in it */
	pmusim_one_line(res->message, sizeof(res->message));
	return res->end == SIM_END_ERROR ? (res->err ? res->err : PMUSIM_ERR_INTERNAL) : 0;
}
