/* Replacement code for one region of a region set (profiler/dbr_code.h): the
 * copied blocks' instructions relocated and their branches aimed at the
 * successors' copies, in the region's order or along Pettis–Hansen chains
 * (profiler/dbr_layout.h). Encodings from the Intel SDM vol. 2: JMP rel32
 * E9 cd, Jcc rel32 0F 80+cc cd (cc ^ 1 is the opposite condition, appendix
 * B.1.4.7), PUSH imm32 68 id, MOV r/m32, imm32 C7 /0 id, LEA 8D /r; ModRM and
 * RIP-relative addressing in 2.1 and 2.2.1.6. */
#include "profiler/dbr_code.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "profiler/dbr_emit.h"
#include "profiler/dbr_insn.h"
#include "profiler/dbr_layout.h"

static int grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	void *q = realloc(*p, n * size);
	if (!q)
		return PMUSIM_ERR_NOMEM;
	*p = q, *cap = n;
	return 0;
}

int dbr_nomem(struct em *e)
{
	return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_NOMEM, "out of memory");
}

/* Appends one instruction and its map entry. */
int dbr_put(struct em *e, const uint8_t *b, size_t n, int what, uint64_t orig)
{
	struct dbr_code *c = e->c;
	if (c->len + n > UINT32_MAX)
		return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_UNSUPPORTED,
		                   "replacement code over 4 GiB");
	if (grow((void **)&c->bytes, &e->cap, c->len + n, 1) < 0 ||
	    grow((void **)&c->insn, &e->icap, c->ninsn + 1, sizeof(*c->insn)) < 0)
		return dbr_nomem(e);
	memcpy(c->bytes + c->len, b, n);
	c->insn[c->ninsn++] = (struct dbr_insn){(uint32_t)c->len, (uint8_t)n, (uint8_t)(what & ~DBR_CARRIES), orig,
						(uint8_t)((what & DBR_CARRIES) != 0), e->sp_off};
	c->len += n;
	return 0;
}

int dbr_put_data(struct em *e, const uint8_t *b, size_t n)
{
	struct dbr_code *c = e->c;
	if (c->len + n > UINT32_MAX)
		return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_UNSUPPORTED,
		                   "replacement code over 4 GiB");
	if (grow((void **)&c->bytes, &e->cap, c->len + n, 1) < 0)
		return dbr_nomem(e);
	memcpy(c->bytes + c->len, b, n);
	c->len += n;
	return 0;
}

/* The rel32 from next (the end of the jump) to to, when it reaches. */
int dbr_rel32(struct em *e, uint64_t next, uint64_t to, uint32_t *out)
{
	int64_t d = (int64_t)(to - next);
	if (d < INT32_MIN || d > INT32_MAX)
		return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_UNSUPPORTED,
		                   "a jump ending at %#" PRIx64 " cannot reach %#" PRIx64
		                   " (more than 2 GiB away)",
		                   next, to);
	*out = (uint32_t)d;
	return 0;
}

/* Reads and decodes block b's instructions: each as long as the offsets say, a
 * branch only last and of the block's kind. */
static int decode_block(struct em *e, uint32_t b, uint32_t first)
{
	const struct rset_block *rb = &e->r->block[b];
	struct dblock *d = &e->blk[b];
	d->first = first, d->taken = d->fall = RSET_NONE;
	if (rb->ninsns == 0 || rb->off[0] != 0 || rb->clone > e->r->nclone || rb->kind >= BK_COUNT)
		return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_FORMAT,
		                   "block %u at %#" PRIx64 ": no instructions, a bad clone or kind",
		                   b, rb->start);
	for (uint32_t i = 0; i < rb->ninsns; i++) {
		uint64_t addr = rb->start + rb->off[i];
		size_t n = rb->off[i + 1] > rb->off[i] ? (size_t)(rb->off[i + 1] - rb->off[i]) : 0;
		uint8_t buf[MAX_INSN];
		struct dbr_orig o;
		if (n == 0 || n > MAX_INSN || binary_read(e->code, addr, buf, n) != n)
			return pmusim_fail(
			    e->msg, e->msglen, PMUSIM_ERR_FORMAT,
			    "block %u: no instruction of %zu bytes can be read at %#" PRIx64, b, n,
			    addr);
		int err = dbr_decode(e->dec, buf, n, addr, &o, e->msg, e->msglen);
		if (err)
			return err;
		int want = i + 1 < rb->ninsns || rb->kind > BK_RET ? BK_NONE : rb->kind;
		if (o.kind != want)
			return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_FORMAT,
			                   "block %u: the instruction at %#" PRIx64
			                   " (%s) is not what the block's kind \"%s\" says",
			                   b, addr, o.text, br_kind_name(rb->kind));
		e->ins[first + i] = (struct einsn){0, o.disp};
		if (i + 1 == rb->ninsns)
			d->target = o.target, d->pop = o.pop, d->cc = o.cc, d->loop = o.loop;
	}
	return 0;
}

/* The successors of block b among its links (never by address over all
 * blocks: a clone's blocks copy the same addresses as others). */
static int pick_succ(struct em *e, uint32_t b)
{
	const struct rset_region *r = e->r;
	const struct rset_block *rb = &r->block[b];
	struct dblock *d = &e->blk[b];
	uint64_t at = rb->start + rb->off[rb->ninsns - 1], end = rb->start + rb->off[rb->ninsns];
	const struct rset_clone *own = rb->clone ? &r->clone[rb->clone - 1] : NULL;
	for (uint32_t k = 0; k < rb->nsucc; k++) {
		uint32_t s = rb->succ[k];
		if (s >= r->nblock)
			return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_FORMAT,
			                   "block %u: link %u out of range", b, s);
		const struct rset_block *t = &r->block[s];
		const struct rset_clone *cl = t->clone ? &r->clone[t->clone - 1] : NULL;
		int same = t->clone == rb->clone;
		switch (rb->kind) {
		case BK_CALL: /* into the clone that inlines this call */
			if (cl && cl->call == at && cl->entry == s && cl->parent == rb->clone)
				d->taken = s;
			break;
		case BK_RET: /* out of this clone, to its call's return point */
			if (own && t->clone == own->parent && t->start == own->ret)
				d->taken = s;
			break;
		case BK_COND:
		case BK_JMP:
			if (same && t->start == d->target)
				d->taken = s;
			if (same && t->start == end && rb->kind == BK_COND)
				d->fall = s;
			break;
		case BK_JMP_IND: /* their links: profiler/dbr_indirect.c */
		case BK_CALL_IND:
			break;
		default: /* BK_NONE, BK_SYSCALL, BK_REP, BK_TRAP: on to the next instruction */
			if (same && t->start == end)
				d->fall = s;
		}
	}
	return 0;
}

static const struct hot_branch *hot_branch_at(const struct hot_code *h, uint64_t ip)
{
	size_t lo = 0, hi = h ? h->nbranch : 0;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (h->branch[mid].ip < ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	return h && lo < h->nbranch && h->branch[lo].ip == ip ? &h->branch[lo] : NULL;
}

static void add_link(struct dbr_link *l, size_t *n, uint32_t from, uint32_t to, double w)
{
	if (to != RSET_NONE)
		l[(*n)++] = (struct dbr_link){from, to, w};
}

/* The links the layout can make fall-throughs, weighed as dbr_code.h says. */
static size_t make_links(const struct em *e, const struct hot_code *hot, struct dbr_link *l)
{
	const struct rset_region *r = e->r;
	size_t n = 0;
	for (uint32_t b = 0; b < r->nblock; b++) {
		const struct rset_block *rb = &r->block[b];
		const struct dblock *d = &e->blk[b];
		double c = rb->count;
		switch (rb->kind) {
		case BK_COND: {
			if (d->taken == d->fall) { /* a jcc to its own fall-through: one link */
				add_link(l, &n, b, d->taken, c);
				break;
			}
			const struct hot_branch *h =
			    hot_branch_at(hot, rb->start + rb->off[rb->ninsns - 1]);
			double all = h ? h->taken + h->fall : 0;
			double wt = all > 0                 ? c * h->taken / all
			            : d->taken != RSET_NONE ? r->block[d->taken].count
			                                    : 0;
			double wf = all > 0                ? c * h->fall / all
			            : d->fall != RSET_NONE ? r->block[d->fall].count
			                                   : 0;
			add_link(l, &n, b, d->taken, wt);
			if (!d->loop) /* a trampoline's "jmp F'" stays whatever comes next */
				add_link(l, &n, b, d->fall, wf);
			break;
		}
		case BK_JMP: /* one alone in its block stays: no fall-through to gain */
			if (rb->ninsns > 1)
				add_link(l, &n, b, d->taken, c);
			break;
		case BK_CALL:
		case BK_RET:
			add_link(l, &n, b, d->taken, c);
			break;
		case BK_JMP_IND:
		case BK_CALL_IND:
			break;
		default:
			add_link(l, &n, b, d->fall, c);
		}
	}
	return n;
}

static int lay_out(struct em *e, const struct hot_code *hot)
{
	uint32_t n = e->r->nblock;
	int err = 0;
	if (e->layout == DBR_HOT_PATHS) {
		struct dbr_link *l = malloc((2 * (size_t)n + 1) * sizeof(*l));
		double *heat = malloc(((size_t)n + 1) * sizeof(*heat));
		if (l && heat) {
			for (uint32_t b = 0; b < n; b++)
				heat[b] = e->r->block[b].count;
			err = dbr_layout_chains(n, heat, l, make_links(e, hot, l), e->order);
		}
		err = l && heat ? err : PMUSIM_ERR_NOMEM;
		free(l), free(heat);
		if (err)
			return dbr_nomem(e);
	} else {
		for (uint32_t b = 0; b < n; b++)
			e->order[b] = b;
	}
	for (uint32_t k = 0; k < n; k++)
		e->pos[e->order[k]] = k;
	return 0;
}

/* 1 when block to's copy comes right after block b's. */
static int next_is(const struct em *e, uint32_t b, uint32_t to)
{
	return to != RSET_NONE && e->pos[b] + 1 < e->r->nblock && e->order[e->pos[b] + 1] == to;
}

/* "jmp rel32" (E9 cd) or, cc >= 0, "jcc rel32" (0F 80+cc cd) to block to's
 * copy (aimed once every copy has its place) or, to RSET_NONE, to addr. */
int dbr_put_jump(struct em *e, int cc, int what, uint64_t orig, uint32_t to, uint64_t addr)
{
	uint8_t b[6];
	size_t n = 0;
	if (cc < 0)
		b[n++] = 0xe9;
	else
		b[n++] = 0x0f, b[n++] = (uint8_t)(0x80 | cc);
	uint32_t rel = 0;
	if (to == RSET_NONE) {
		int err = dbr_rel32(e, e->base + e->c->len + n + 4, addr, &rel);
		if (err)
			return err;
	} else {
		if (grow((void **)&e->fix, &e->fcap, e->nfix + 1, sizeof(*e->fix)) < 0)
			return dbr_nomem(e);
		e->fix[e->nfix++] = (struct fix){(uint32_t)(e->c->len + n), to};
	}
	wr32(b + n, rel);
	return dbr_put(e, b, n + 4, what, orig);
}

/* Control going on at successor to (RSET_NONE: at the original addr) after
 * block b: nothing when elide allows and to's copy comes next. */
static int go_on(struct em *e, uint32_t b, uint32_t to, uint64_t addr, int what, uint64_t orig,
                 int elide)
{
	if (elide && next_is(e, b, to))
		return 0;
	return dbr_put_jump(e, -1, what, orig, to, addr);
}

/* Instruction i of block b, copied; its RIP-relative disp32 made to reach the
 * same address from the copy (same length, so the same distance to its end). */
static int put_copy(struct em *e, uint32_t b, uint32_t i)
{
	const struct rset_block *rb = &e->r->block[b];
	const struct einsn *in = &e->ins[e->blk[b].first + i];
	uint64_t addr = rb->start + rb->off[i], at = e->base + e->c->len;
	size_t n = (size_t)(rb->off[i + 1] - rb->off[i]);
	uint8_t buf[MAX_INSN];
	if (binary_read(e->code, addr, buf, n) != n)
		return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_FORMAT,
		                   "the instruction at %#" PRIx64 " cannot be read", addr);
	if (in->disp) {
		int64_t d = (int64_t)(int32_t)rd32(buf + in->disp) + (int64_t)(addr - at);
		if (d < INT32_MIN || d > INT32_MAX)
			return pmusim_fail(
			    e->msg, e->msglen, PMUSIM_ERR_UNSUPPORTED,
			    "the RIP-relative operand of the instruction at %#" PRIx64
			    " cannot reach its address from %#" PRIx64,
			    addr, at);
		wr32(buf + in->disp, (uint32_t)d);
	}
	return dbr_put(e, buf, n, DBR_COPY, addr);
}

/* "push imm32" (68 id: the low half, sign-extended to 64 bits) then, unless the
 * sign extension already gives it (a return address below 2 GiB, as a non-PIE
 * program's), "mov dword [rsp+4], imm32" (C7 44 24 04 id: the high half): the 8
 * bytes a call at orig would push, ret, with the flags untouched. */
int dbr_put_push(struct em *e, uint64_t orig, uint64_t ret)
{
	uint8_t push[5] = {0x68}, high[8] = {0xc7, 0x44, 0x24, 0x04};
	wr32(push + 1, (uint32_t)ret);
	wr32(high + 4, (uint32_t)(ret >> 32));
	int err = dbr_put(e, push, sizeof(push), DBR_CALL_PUSH, orig);
	if (err || (uint64_t)(int64_t)(int32_t)(uint32_t)ret == ret)
		return err;
	return dbr_put(e, high, sizeof(high), DBR_CALL_HIGH, orig);
}

/* "lea rsp, [rsp+8+pop]" (REX.W 8D /r, ModRM 64 or A4, SIB 24: disp8 or
 * disp32): the stack as the return at orig leaves it, flags untouched. */
static int put_pop(struct em *e, uint64_t orig, uint16_t pop)
{
	uint32_t n = 8u + pop;
	uint8_t b[8] = {0x48, 0x8d, 0x64, 0x24, (uint8_t)n};
	if (n <= 127)
		return dbr_put(e, b, 5, DBR_RET_POP, orig);
	b[2] = 0xa4;
	wr32(b + 4, n);
	return dbr_put(e, b, 8, DBR_RET_POP, orig);
}

static int is_point(const struct em *e, uint64_t addr)
{
	for (uint32_t k = 0; k < e->r->npoint; k++)
		if (e->r->point[k].addr == addr)
			return 1;
	return 0;
}

static int emit_cond(struct em *e, uint32_t b, uint64_t at, uint64_t end)
{
	const struct dblock *d = &e->blk[b];
	int hot = e->layout == DBR_HOT_PATHS, err;
	if (d->loop) {
		/* "loop L; jmp F'; L: jmp T'": the rel8 (the last byte) skips the jmp */
		uint8_t buf[MAX_INSN];
		size_t n = (size_t)(end - at);
		if (binary_read(e->code, at, buf, n) != n)
			return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_FORMAT,
			                   "the instruction at %#" PRIx64 " cannot be read", at);
		buf[n - 1] = 5;
		if ((err = dbr_put(e, buf, n, DBR_COPY, at)) < 0 ||
		    (err = dbr_put_jump(e, -1, DBR_JUMP, at, d->fall, end)) < 0)
			return err;
		return go_on(e, b, d->taken, d->target, DBR_JUMP | DBR_CARRIES, at, hot);
	}
	if (hot && next_is(e, b, d->taken) && !next_is(e, b, d->fall))
		return dbr_put_jump(e, d->cc ^ 1, DBR_INVERTED, at, d->fall, end);
	if ((err = dbr_put_jump(e, d->cc, DBR_COPY, at, d->taken, d->target)) < 0)
		return err;
	return go_on(e, b, d->fall, end, DBR_JUMP, at, 1);
}

/* A call not inlined leaves the replacement for the original call at at: the
 * program's own call pushes its return address, so that the return stack
 * buffer predicts the callee's return (a pushed address and a jump would leave
 * it one entry short, and every return above mispredicted). */
static int leave_for_call(struct em *e, uint64_t at)
{
	return dbr_put_jump(e, -1, DBR_JUMP, at, RSET_NONE, at);
}

static int emit_call(struct em *e, uint32_t b, uint64_t at, uint64_t end)
{
	const struct dblock *d = &e->blk[b];
	if (d->taken == RSET_NONE && !is_point(e, at))
		return leave_for_call(e, at);
	/* inlined, or a patch point's call done here (the original return address
	 * pushed), to its clone or to the original callee (profiler/region_set.h) */
	int err = dbr_put_push(e, at, end);
	if (err)
		return err;
	if (d->taken == RSET_NONE)
		return dbr_put_jump(e, -1, DBR_JUMP | DBR_CARRIES, at, RSET_NONE, d->target);
	return go_on(e, b, d->taken, 0, DBR_JUMP | DBR_CARRIES, at, e->layout == DBR_HOT_PATHS);
}

/* Block b's copy. Under DBR_IDENTITY only a fall side's jump is left out for
 * the next block; under DBR_HOT_PATHS every jump to it. */
static int emit_block(struct em *e, uint32_t b)
{
	const struct rset_block *rb = &e->r->block[b];
	const struct dblock *d = &e->blk[b];
	uint32_t last = rb->ninsns - 1;
	uint64_t at = rb->start + rb->off[last], end = rb->start + rb->off[rb->ninsns];
	int hot = e->layout == DBR_HOT_PATHS, err;
	e->c->copy_of_block[b] = e->base + e->c->len;
	for (uint32_t i = 0; i < last; i++) {
		e->ins[d->first + i].copy = (uint32_t)e->c->len;
		if ((err = put_copy(e, b, i)) < 0)
			return err;
	}
	e->ins[d->first + last].copy = (uint32_t)e->c->len;
	switch (rb->kind) {
	case BK_COND:
		return emit_cond(e, b, at, end);
	case BK_JMP: /* kept when alone: a copy holds an instruction that stands for
	              * the original, so that the map sees the block run */
		return go_on(e, b, d->taken, d->target, DBR_COPY, at, hot && rb->ninsns > 1);
	case BK_CALL:
		return emit_call(e, b, at, end);
	case BK_CALL_IND:
		if (!is_point(e, at))
			return leave_for_call(e, at);
		if ((err = dbr_emit_ind_call(e, b, at, end)) != 1)
			return err;
		if (is_point(e, at)) /* a jump back to a patched call would loop */
			return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_UNSUPPORTED,
			                   "an indirect call at patch point %#" PRIx64
			                   " whose operand uses RSP",
			                   at);
		return dbr_put_jump(e, -1, DBR_JUMP, at, RSET_NONE, at);
	case BK_RET:
		if (d->taken == RSET_NONE)
			return put_copy(e, b, last);
		if ((err = put_pop(e, at, d->pop)) < 0)
			return err;
		return go_on(e, b, d->taken, 0, DBR_JUMP | DBR_CARRIES, at, hot);
	case BK_JMP_IND:
		if ((err = dbr_emit_ind_jump(e, b, at)) != 1)
			return err;
		return put_copy(e, b, last);
	default: /* BK_NONE, BK_SYSCALL, BK_REP, BK_TRAP */
		if ((err = put_copy(e, b, last)) < 0)
			return err;
		return go_on(e, b, d->fall, end, DBR_JUMP, at, 1);
	}
}

static int patch_cmp(const void *a, const void *b)
{
	const struct dbr_patch *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int make_patches(struct em *e)
{
	const struct rset_region *r = e->r;
	struct dbr_code *c = e->c;
	c->patch = calloc((size_t)r->npoint + 1, sizeof(*c->patch));
	if (!c->patch)
		return dbr_nomem(e);
	for (uint32_t k = 0; k < r->npoint; k++) {
		const struct rset_point *p = &r->point[k];
		const struct rset_block *rb = p->block < r->nblock ? &r->block[p->block] : NULL;
		if (!rb || p->insn >= rb->ninsns || rb->start + rb->off[p->insn] != p->addr ||
		    rb->off[p->insn + 1] - rb->off[p->insn] < 5)
			return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_FORMAT,
			                   "point %#" PRIx64
			                   " is not an instruction of 5 bytes or more of its block",
			                   p->addr);
		struct dbr_patch *o = &c->patch[c->npatch++];
		o->addr = p->addr;
		o->dest = e->base + e->ins[e->blk[p->block].first + p->insn].copy;
		uint32_t rel = 0;
		int err = dbr_rel32(e, o->addr + 5, o->dest, &rel);
		if (err)
			return err;
		o->jmp[0] = 0xe9;
		wr32(o->jmp + 1, rel);
		if (binary_read(e->code, o->addr, o->orig, 5) != 5)
			return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_FORMAT,
			                   "point %#" PRIx64 ": its bytes cannot be read", o->addr);
	}
	arrays_sort(c->patch, c->npatch, sizeof(*c->patch), patch_cmp);
	return 0;
}

static int start(struct em *e)
{
	const struct rset_region *r = e->r;
	size_t n = r->nblock, ni = 0;
	for (size_t b = 0; b < n; b++)
		ni += r->block[b].ninsns;
	e->c = calloc(1, sizeof(*e->c));
	if (e->c)
		e->c->copy_of_block = calloc(n + 1, sizeof(uint64_t));
	e->blk = calloc(n + 1, sizeof(*e->blk));
	e->ins = calloc(ni + 1, sizeof(*e->ins));
	e->order = calloc(n + 1, sizeof(uint32_t));
	e->pos = calloc(n + 1, sizeof(uint32_t));
	if (!e->c || !e->c->copy_of_block || !e->blk || !e->ins || !e->order || !e->pos)
		return dbr_nomem(e);
	e->c->base = e->base;
	return dbr_decoder_new(&e->dec, e->msg, e->msglen);
}

static int emit_all(struct em *e, const struct hot_code *hot)
{
	const struct rset_region *r = e->r;
	int err = start(e);
	uint32_t first = 0;
	for (uint32_t b = 0; !err && b < r->nblock; b++) {
		err = decode_block(e, b, first);
		first += r->block[b].ninsns;
	}
	for (uint32_t b = 0; !err && b < r->nblock; b++)
		err = pick_succ(e, b);
	if (!err)
		err = lay_out(e, hot);
	for (uint32_t k = 0; !err && k < r->nblock; k++)
		err = emit_block(e, e->order[k]);
	if (!err)
		err = dbr_put_tables(e);
	for (size_t k = 0; !err && k < e->nfix; k++) {
		uint32_t rel = 0;
		const struct fix *f = &e->fix[k];
		err = dbr_rel32(e, e->base + f->at + 4, e->c->copy_of_block[f->block], &rel);
		if (!err)
			wr32(e->c->bytes + f->at, rel);
	}
	return err ? err : make_patches(e);
}

int dbr_code_emit(const struct rset_region *r, struct binary *code, const struct hot_code *hot,
                  enum dbr_layout layout, uint64_t base, struct dbr_code **out, char *msg,
                  size_t msglen)
{
	*out = NULL;
	if (!r || !code)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG, "no region or no code");
	struct em e = {
	    .r = r, .code = code, .layout = layout, .base = base, .msg = msg, .msglen = msglen};
	int err = emit_all(&e, hot);
	dbr_decoder_free(e.dec);
	free(e.blk), free(e.ins), free(e.order), free(e.pos), free(e.fix), free(e.jt);
	if (err) {
		dbr_code_free(e.c);
		return err;
	}
	*out = e.c;
	return 0;
}

void dbr_code_free(struct dbr_code *c)
{
	if (!c)
		return;
	free(c->bytes), free(c->insn), free(c->patch), free(c->copy_of_block);
	free(c);
}

const struct dbr_insn *dbr_code_insn(const struct dbr_code *c, uint64_t addr)
{
	if (!c || addr < c->base || addr - c->base >= c->len)
		return NULL;
	uint64_t off = addr - c->base;
	size_t lo = 0, hi = c->ninsn;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (c->insn[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < c->ninsn && c->insn[lo].off == off ? &c->insn[lo] : NULL;
}

struct dbr_image dbr_code_image(const struct dbr_code *c)
{
	return (struct dbr_image){c->base, c->bytes, c->len, c->insn, c->ninsn, c->patch, c->npatch};
}

int dbr_region_in(const struct rset_region *r, const struct binary *code)
{
	for (uint32_t i = 0; i < r->nblock; i++)
		if (!binary_has_code(code, r->block[i].start))
			return 0;
	return 1;
}
