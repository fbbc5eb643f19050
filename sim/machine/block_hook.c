/* The block hook: every translation block the engine enters goes through
 * machine_block_hook, whose fast path (a run already decoded, no check due) is
 * the block stream's (sim/machine/blockstream_fast.h); the slow path decodes new
 * runs, hooks their special instructions, moves a REP patch, calls in the
 * scheduler and arms --max-insns. See docs/speed.md. */
#include <signal.h>

#include "common/err.h"
#include "sim/linux/linux.h"
#include "sim/machine/blockstream_fast.h"
#include "sim/machine/machine.h"
#include "sim/machine/mappings.h"
#include "sim/machine/rep_patch.h"
#include "sim/op_watch.h"
#include "sim/sim_state.h"
#include "sim/stacks.h"

static volatile int never_interrupted;

/* Instructions between two looks at the interrupt flag by the block hook's
 * slow path (a fraction of a second of a program under pmusim). */
#define INTERRUPT_POLL (1u << 24)

static void internal_error(struct sim *s, int err, const char *what, uint64_t addr)
{
	snprintf(s->res->message, sizeof(s->res->message), "%s at 0x%llx", what,
		 (unsigned long long)addr);
	sim_stop(s, SIM_END_ERROR, err);
}

/* Out of line, so that the fast path in hook_block saves no register. */
__attribute__((noinline)) static void hook_block_slow(uc_engine *uc, uint64_t addr, uint32_t size,
							 struct sim *s)
{
	if (*s->interrupt_flag) {
		sim_stop(s, SIM_END_SIGNAL, *s->interrupt_flag);
		return;
	}
	if (bstream_insns(s->bs) >= s->block_limit)
		machine_refresh_checks(s); /* the interrupt flag's poll, or attention, is due */
	if (s->poll_fn && bstream_insns(s->bs) >= s->poll_at) {
		s->poll_at = bstream_insns(s->bs) + INTERRUPT_POLL;
		s->poll_fn(s->poll_ctx, bstream_insns(s->bs));
	}
	/* a marked instruction that ended the last TB acts before its block retires */
	stacks_block_start(s, addr);
	int is_new;
	const struct block_info *bi = dcache_get(s->p->dc, addr, &is_new);
	if (!bi) {
		internal_error(s, PMUSIM_ERR_NOMEM, "out of memory decoding code", addr);
		return;
	}
	if (is_new) {
		if (s->code_listener)
			sim_announce_anon_code(s, bi);
		size_t n;
		dcache_specials(bi, &n);
		if (n) {
			/* the TB was translated before its hooks existed: translate it again */
			if (machine_hook_specials(s, bi) < 0) {
				internal_error(s, PMUSIM_ERR_EMU, "cannot hook instruction", addr);
				return;
			}
			uc_ctl_remove_cache(uc, bi->start, bi->end);
			s->restart = 1;
			s->restart_pc = addr;
			uc_emu_stop(uc);
			return;
		}
	}
	if (s->npatch && rep_patch_check(s, addr)) {
		/* the REP ahead changed: move the patch before going on */
		s->restart = 1;
		s->restart_pc = addr;
		uc_emu_stop(uc);
		return;
	}
	if ((bstream_insns(s->bs) >= s->attention_at ||
	     (s->cycle_slices && s->clock(s->clock_ctx) >= s->slice_end)) &&
	    !s->limit_armed && !bstream_is_rep_continuation(s->bs, addr)) {
		sched_tick(s, addr); /* a slice ended or a timer expired */
		return;
	}
	if (s->win_fn && bstream_insns(s->bs) >= s->win_at && !s->limit_armed &&
	    !bstream_is_rep_continuation(s->bs, addr)) {
		/* a window ended: its callback runs outside the engine, then this block */
		s->win_due = 1;
		s->restart = 1;
		s->restart_pc = addr;
		uc_emu_stop(uc);
		return;
	}
	if (s->opw && op_watch_block(s, bi, addr))
		return; /* to translate the block again, watched */
	if (s->opt.max_insns && !s->limit_armed) {
		uint64_t done = bstream_insns(s->bs) + bstream_pending_insns(s->bs, addr);
		int k = block_insn_index(bi, addr + size);
		if (!bstream_is_rep_continuation(s->bs, addr) && k > 0 &&
		    done + (uint64_t)k > s->opt.max_insns) {
			uint64_t allow = s->opt.max_insns > done ? s->opt.max_insns - done : 0;
			s->restart = 1;
			s->restart_pc = addr;
			s->restart_until = bi->start + bi->off[allow];
			s->limit_armed = 1;
			machine_refresh_checks(s);
			/* Unicorn checks the stop address when translating: translate again */
			uc_ctl_remove_cache(uc, bi->start, bi->end);
			uc_emu_stop(uc);
			return;
		}
	}
	int err = bstream_tb_run(s->bs, bi, size);
	if (err < 0)
		internal_error(s, err, "emulator block disagrees with decoded code", addr);
}

/* sim_options.empty_block_hook: the engine's own cost of a block hook */
void machine_block_hook_empty(uc_engine *uc, uint64_t addr, uint32_t size, void *ud)
{
	(void)uc, (void)addr, (void)size, (void)ud;
}

/* Every TB entry. The common case, a run already decoded entered while nothing
 * but the count needs the pending TB and no check is due, is a few loads and
 * stores; the rest is hook_block_slow. */
void machine_block_hook(uc_engine *uc, uint64_t addr, uint32_t size, void *ud)
{
	struct sim *s = ud;
	struct bstream *bs = s->bs;
	const struct block_info *bi = bstream_front_hit(bs, addr);
	if (bi && bs->insns < s->block_limit && bstream_tb_fast_ok(bs, bi, size)) {
		bstream_tb_fast(bs, bi);
		return;
	}
	hook_block_slow(uc, addr, size, s);
}

void sim_set_poll(struct sim *s, void (*fn)(void *ctx, uint64_t insns), void *ctx)
{
	s->poll_fn = fn;
	s->poll_ctx = ctx;
	s->poll_at = s->bs ? bstream_insns(s->bs) + INTERRUPT_POLL : INTERRUPT_POLL;
}

void sim_set_write_notice(struct sim *s, void (*fn)(void *ctx, int host_fd), void *ctx)
{
	s->write_notice = fn;
	s->write_notice_ctx = ctx;
}

void sim_set_window(struct sim *s, uint64_t every, void (*fn)(void *ctx), void *ctx)
{
	s->win_fn = every ? fn : NULL;
	s->win_ctx = ctx;
	s->win_every = every;
	s->win_at = (s->bs ? bstream_insns(s->bs) : 0) + every;
	machine_refresh_checks(s);
}

void sim_set_interrupt_flag(struct sim *s, volatile int *flag)
{
	s->interrupt_flag = flag ? flag : &never_interrupted;
}

void machine_refresh_checks(struct sim *s)
{
	s->block_checks = s->npatch || s->cycle_slices || (s->opt.max_insns && !s->limit_armed) ||
			  stacks_mark_armed(s);
	uint64_t poll = s->bs ? bstream_insns(s->bs) + INTERRUPT_POLL : 0;
	uint64_t at = s->attention_at < op_watch_at(s) ? s->attention_at : op_watch_at(s);
	if (s->win_fn && s->win_at < at)
		at = s->win_at;
	s->block_limit = s->block_checks ? 0 : poll < at ? poll : at;
}
