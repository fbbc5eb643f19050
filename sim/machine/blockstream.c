/* Reconstructs exact retired blocks from translation-block entries (see
 * sim/machine/blockstream.h). Branch outcomes come from where control went next; when a
 * conditional branch's target equals its fall-through, from the condition
 * evaluated on RFLAGS/RCX (Intel SDM vol. 2, Jcc/LOOP/JrCXZ). REP iterations
 * are the count register's decrease (SDM vol. 2, REP/REPE/REPNE). */
#include "sim/machine/blockstream_fast.h"

#include <stdlib.h>

#include "common/err.h"


static void refresh_delivering(struct bstream *bs)
{
	int n = 0;
	for (int i = 0; bs->image_first && bs->image_on && i < bs->nimage_sinks; i++)
		bs->active[n++] = bs->image_sinks[i];
	for (int i = 0; i < bs->nsinks; i++)
		bs->active[n++] = bs->sinks[i];
	for (int i = 0; !bs->image_first && bs->image_on && i < bs->nimage_sinks; i++)
		bs->active[n++] = bs->image_sinks[i];
	bs->nactive = n;
	bs->deliver = n == 0 ? BS_DELIVER_NONE : BS_DELIVER_ALL;
	if (n == 1 && !bs->want_sp && bs->active[0].whole) {
		bs->one = bs->counted = bs->active[0];
		bs->deliver = bs->one.counts ? BS_DELIVER_COUNT : BS_DELIVER_ONE;
	}
	/* two independent consumers (the order between them does not matter: neither
	 * reads the other), one of which keeps counts with the stream */
	for (int i = 0; n == 2 && !bs->want_sp && i < 2; i++) {
		const struct block_sink *a = &bs->active[i], *b = &bs->active[1 - i];
		if (a->whole && !a->counts && b->whole && b->counts) {
			bs->one = *a;
			bs->counted = *b;
			bs->deliver = BS_DELIVER_ONE_COUNT;
		}
	}
}

/* Whether the next TB entry may take bstream_tb_fast (see struct bstream). */
static void refresh_plain(struct bstream *bs)
{
	bs->plain = bs->have_cur && bs->tb_end == bs->cur->end && bs->cur->kind != BK_REP &&
		    !(bs->cur->flags & BI_COND_EQ_FT) && !bs->sp_once && !bs->held.valid;
}

static const struct block_info *const no_front[DCACHE_FRONT_SIZE];

static void set_front(struct bstream *bs)
{
	bs->front = bs->dc ? dcache_front(bs->dc) : no_front;
}

struct bstream *bstream_new(struct dcache *dc, struct bstream_cpu cpu)
{
	struct bstream *bs = calloc(1, sizeof(*bs));
	if (!bs)
		return NULL;
	bs->dc = dc;
	set_front(bs);
	bs->cpu = cpu;
	bs->next_run_start = 1;
	bs->image_on = 1;
	return bs;
}

void bstream_free(struct bstream *bs)
{
	free(bs);
}

int bstream_add_sink(struct bstream *bs, struct block_sink sink)
{
	if (bs->nsinks == BSTREAM_MAX_SINKS)
		return PMUSIM_ERR_ARG;
	bs->sinks[bs->nsinks++] = sink;
	refresh_delivering(bs);
	return 0;
}

int bstream_add_image_sink(struct bstream *bs, struct block_sink sink)
{
	if (bs->nimage_sinks == BSTREAM_MAX_SINKS)
		return PMUSIM_ERR_ARG;
	bs->image_sinks[bs->nimage_sinks++] = sink;
	refresh_delivering(bs);
	return 0;
}

void bstream_want_sp(struct bstream *bs)
{
	bs->want_sp = 1;
	refresh_delivering(bs);
}

void bstream_image_first(struct bstream *bs)
{
	bs->image_first = 1;
	refresh_delivering(bs);
}

void bstream_sp_after_block(struct bstream *bs)
{
	bs->sp_once = 1;
	bs->plain = 0;
}

void bstream_set_image(struct bstream *bs, int on)
{
	bs->image_on = on;
	refresh_delivering(bs);
}

void bstream_set_dcache(struct bstream *bs, struct dcache *dc)
{
	bs->dc = dc;
	set_front(bs);
}

void bstream_set_tid(struct bstream *bs, uint32_t tid)
{
	bs->tid = tid;
}

int bstream_next_run_start(const struct bstream *bs)
{
	return bs->next_run_start;
}

void bstream_set_next_run_start(struct bstream *bs, int v)
{
	bs->next_run_start = v;
}

void bstream_new_context(struct bstream *bs)
{
	bs->new_context = 1;
}

int bstream_cond_taken(int cond, uint64_t f, uint64_t rcx)
{
	int cf = (f >> 0) & 1, pf = (f >> 2) & 1, zf = (f >> 6) & 1;
	int sf = (f >> 7) & 1, of = (f >> 11) & 1;
	switch (cond) {
	case CC_O: return of;
	case CC_NO: return !of;
	case CC_B: return cf;
	case CC_AE: return !cf;
	case CC_E: return zf;
	case CC_NE: return !zf;
	case CC_BE: return cf || zf;
	case CC_A: return !cf && !zf;
	case CC_S: return sf;
	case CC_NS: return !sf;
	case CC_P: return pf;
	case CC_NP: return !pf;
	case CC_L: return sf != of;
	case CC_GE: return sf == of;
	case CC_LE: return zf || sf != of;
	case CC_G: return !zf && sf == of;
	case CC_LOOP: return rcx != 0;
	case CC_LOOPE: return rcx != 0 && zf;
	case CC_LOOPNE: return rcx != 0 && !zf;
	case CC_JCXZ: return (rcx & 0xffff) == 0;
	case CC_JECXZ: return (rcx & 0xffffffffu) == 0;
	case CC_JRCXZ: return rcx == 0;
	}
	return 0;
}

static void emit(struct bstream *bs, struct retired_block *rb)
{
	rb->tid = bs->tid;
	rb->run_start = (uint8_t)bs->cur_run_start;
	rb->new_context = (uint8_t)bs->new_context;
	bs->new_context = 0;
	bs->insns += rb->ninsns;
	for (int i = 0; bs->image_first && bs->image_on && i < bs->nimage_sinks; i++)
		bs->image_sinks[i].retire(bs->image_sinks[i].ctx, rb);
	for (int i = 0; i < bs->nsinks; i++)
		bs->sinks[i].retire(bs->sinks[i].ctx, rb);
	for (int i = 0; !bs->image_first && bs->image_on && i < bs->nimage_sinks; i++)
		bs->image_sinks[i].retire(bs->image_sinks[i].ctx, rb);
}

static uint64_t count_mask(const struct block_info *bi, uint64_t rcx)
{
	return (bi->flags & BI_REP_ECX) ? (rcx & 0xffffffffu) : rcx;
}

/* The part of the REP execution in progress that ends now: the iterations since
 * the part began are the count register's decrease. */
static void rep_part(struct bstream *bs, const struct block_info *bi, struct retired_block *rb, int left)
{
	uint64_t c = count_mask(bi, bs->cpu.read_reg(bs->cpu.ctx, BS_RCX));
	rb->rep_part = (uint8_t)(RB_REP_RAN | (bs->rep_resumed ? RB_REP_RESUMED : 0) | (left ? RB_REP_LEFT : 0));
	rb->rep_count = bs->rep_requested;
	rb->rep_left = c;
	rb->rep_iters = bs->rep_part_count - c;
	bs->in_rep = 0;
	if (left)
		bs->held = (struct bstream_rep_held){bs->rep_addr, bs->rep_requested, 1};
}

/* Retires the pending TB; control continues at next. */
static int retire(struct bstream *bs, uint64_t next)
{
	const struct block_info *bi = bs->cur;
	struct retired_block rb = {0};
	rb.info = bi;
	rb.next = next;
	if (bs->tb_end < bi->end) {
		/* TB stopped before the run's terminator: a plain cut, or a REP left in
		 * the middle (a fault in one of its iterations, the run stopped there) */
		int idx = block_insn_index(bi, bs->tb_end);
		if (idx < 0)
			return PMUSIM_ERR_INTERNAL;
		rb.ninsns = (uint32_t)idx;
		rb.kind = BK_NONE;
		rb.next = bs->tb_end;
		bs->next_run_start = 0;
		int left = bi->kind == BK_REP && bs->tb_end == bi->term && bs->in_rep && bs->rep_addr == bi->term;
		if (left)
			rep_part(bs, bi, &rb, 1);
		if (rb.ninsns || left)
			emit(bs, &rb);
		return 0;
	}
	rb.ninsns = bi->ninsns;
	rb.kind = bi->kind;
	if (bs->sp_once) {
		rb.sp = bs->cpu.read_reg(bs->cpu.ctx, BS_RSP);
		bs->sp_once = 0;
	}
	switch (bi->kind) {
	case BK_COND:
		if (bi->flags & BI_COND_EQ_FT) {
			uint64_t f = bs->cpu.read_reg(bs->cpu.ctx, BS_RFLAGS);
			uint64_t c = bs->cpu.read_reg(bs->cpu.ctx, BS_RCX);
			rb.taken = (uint8_t)bstream_cond_taken(bi->cond, f, c);
		} else {
			rb.taken = next == bi->target;
		}
		break;
	case BK_JMP_IND: case BK_CALL: case BK_CALL_IND: case BK_RET:
		if (bs->want_sp) /* the registers are those after the block */
			rb.sp = bs->cpu.read_reg(bs->cpu.ctx, BS_RSP);
		rb.taken = 1;
		break;
	case BK_JMP:
		rb.taken = 1;
		break;
	case BK_REP:
		if (bs->in_rep && bs->rep_addr == bi->term)
			rep_part(bs, bi, &rb, 0);
		bs->in_rep = 0;
		break;
	default:
		break;
	}
	bs->next_run_start = bi->kind != BK_NONE;
	emit(bs, &rb);
	return 0;
}

uint64_t bstream_no_count;

void bstream_retire_plain(struct bstream *bs, const struct block_info *bi, uint64_t next)
{
	int kind = bi->kind;
	unsigned taken = kind == BK_COND ? next == bi->target : br_kind_is_branch(kind);
	unsigned flags = taken | (bs->cur_run_start ? RB_WHOLE_RUN_START : 0) |
			 (bs->new_context ? RB_WHOLE_NEW_CONTEXT : 0);
	uint64_t sp = bs->want_sp && (kind == BK_JMP_IND || kind == BK_CALL || kind == BK_CALL_IND || kind == BK_RET)
			      ? bs->cpu.read_reg(bs->cpu.ctx, BS_RSP)
			      : 0;
	uint32_t tid = bs->tid;
	struct retired_block rb;
	int have_rb = 0;
	bs->new_context = 0;
	for (const struct block_sink *k = bs->active, *e = k + bs->nactive; k < e; k++) {
		if (k->counts && !(flags & RB_WHOLE_NEW_CONTEXT)) {
			/* a count the consumer keeps with the stream (block_counts): no call */
			const struct block_counts *bc = k->counts;
			uint64_t *slot = bi->id < bc->cap ? &bc->n[(size_t)bi->id * 4 + flags] : NULL;
			if ((bc->kinds >> kind & 1) && slot && *slot) {
				(*slot)++;
				continue;
			}
		}
		if (k->whole) {
			k->whole(k->ctx, bi, next, sp, tid, flags);
			continue;
		}
		if (!have_rb)
			retired_block_whole(&rb, bi, next, sp, tid, flags);
		have_rb = 1;
		k->retire(k->ctx, &rb);
	}
	bs->cur_run_start = bs->next_run_start = kind != BK_NONE;
}

int bstream_is_rep_continuation(const struct bstream *bs, uint64_t addr)
{
	return bs->have_cur && bs->in_rep && addr == bs->rep_addr && bs->cur->kind == BK_REP &&
	       bs->tb_end >= bs->cur->end;
}

uint64_t bstream_pending_insns(const struct bstream *bs, uint64_t next)
{
	if (!bs->have_cur || bstream_is_rep_continuation(bs, next))
		return 0;
	if (bs->tb_end >= bs->cur->end)
		return bs->cur->ninsns;
	int idx = block_insn_index(bs->cur, bs->tb_end);
	return idx > 0 ? (uint64_t)idx : 0;
}

int bstream_tb(struct bstream *bs, uint64_t addr, uint32_t size)
{
	const struct block_info *bi = dcache_get(bs->dc, addr, NULL);
	if (!bi)
		return PMUSIM_ERR_NOMEM;
	return bstream_tb_run(bs, bi, size);
}

int bstream_tb_run(struct bstream *bs, const struct block_info *bi, uint32_t size)
{
	uint64_t addr = bi->start;
	if (bs->held.valid && addr != bs->held.site)
		bs->held.valid = 0; /* the thread went on elsewhere */
	if (bs->have_cur) {
		/* a further iteration of the REP that ends the pending run */
		if (bstream_is_rep_continuation(bs, addr))
			return 0;
		int err = retire(bs, addr);
		if (err < 0)
			return err;
	}
	bs->cur = bi;
	bs->sp_once = 0;
	bs->tb_end = addr + size;
	if (bs->tb_end > bi->end)
		return PMUSIM_ERR_INTERNAL; /* the emulator ran past a terminator */
	bs->have_cur = 1;
	bs->cur_run_start = bs->next_run_start;
	refresh_plain(bs);
	return 0;
}

void bstream_rep(struct bstream *bs, uint64_t addr, uint64_t rcx)
{
	bs->plain = 0;
	if (bs->in_rep && bs->rep_addr == addr)
		return; /* a further iteration */
	uint64_t c = bs->cur ? count_mask(bs->cur, rcx) : rcx;
	bs->in_rep = 1;
	bs->rep_addr = addr;
	bs->rep_part_count = c;
	bs->rep_resumed = bs->held.valid && bs->held.site == addr;
	bs->rep_requested = bs->rep_resumed ? bs->held.requested : c;
	bs->held.valid = 0;
}

struct bstream_rep_held bstream_rep_take(struct bstream *bs, uint64_t pc)
{
	struct bstream_rep_held h = bs->held;
	bs->held.valid = 0;
	if (h.site != pc)
		h.valid = 0;
	return h;
}

void bstream_rep_give(struct bstream *bs, struct bstream_rep_held h)
{
	bs->held = h;
	bs->plain = 0;
}

int bstream_rep_resuming(const struct bstream *bs, uint64_t addr)
{
	return bs->held.valid && bs->held.site == addr;
}

void bstream_cut(struct bstream *bs, uint64_t resume)
{
	if (bs->have_cur && resume > bs->cur->start && resume < bs->tb_end)
		bs->tb_end = resume;
	bs->plain = 0;
}

void bstream_finish(struct bstream *bs, uint64_t rip, int faulted)
{
	bs->plain = 0;
	if (!bs->have_cur)
		return;
	const struct block_info *bi = bs->cur;
	/* stopped at a REP in progress: it did not retire, whether it faulted or not */
	int in_rep = bi->kind == BK_REP && rip == bi->term && bs->in_rep && bs->rep_addr == rip;
	if ((faulted || in_rep) && rip >= bi->start && rip < bs->tb_end) {
		bs->tb_end = rip;
		if (rip == bi->start && !in_rep) {
			bs->have_cur = 0;
			return;
		}
		retire(bs, rip);
	} else {
		retire(bs, rip);
	}
	bs->have_cur = 0;
}

uint64_t bstream_insns(const struct bstream *bs)
{
	return bs->insns;
}

uint64_t bstream_insns_before(const struct bstream *bs, uint64_t addr)
{
	if (!bs->have_cur)
		return bs->insns;
	int idx = block_insn_index(bs->cur, addr);
	return bs->insns + (idx > 0 ? (uint64_t)idx : 0);
}

int bstream_current(const struct bstream *bs, const struct block_info **bi, uint64_t *tb_end)
{
	if (!bs->have_cur)
		return 0;
	*bi = bs->cur;
	*tb_end = bs->tb_end;
	return 1;
}
