/* Indirect branches in replacement code (profiler/dbr_emit.h), as the region set
 * describes them (profiler/region_set.h): a call not inlined that is a patch
 * point is done in the replacement (the original return address pushed, then a
 * jump through the call's own operand), and an indirect jump reaches the copies
 * of the targets the region links through a table of its own or by comparing
 * its target with theirs.
 *
 * A jump through an absolute jump table, "jmp [T + index*8]" (FF /4, mod 00, SIB
 * with no base and scale 8, T a disp32: what gcc emits for a dense switch in a
 * program below 2 GiB), is the same instruction reading a table T' placed after
 * the code: entry i is the copy of the linked target T[i] when T[i] is one, else
 * T[i]. T is read from the program's read-only segments (profiler/binary.h
 * binary_read_ro) up to its first entry that is no code address (at most
 * MAX_TABLE), which holds every index the program's own bounds check lets
 * through; every linked target must be among the entries. The jump costs what
 * the original's does (one load, one indirect jump the predictor sees as the
 * original), where a compare chain costs a dozen instructions; a rewriter reads
 * a read-only table ahead of time as static rewriters (BOLT) do, so a program
 * that makes its table writable and changes it would jump by the old one.
 *
 * Any other indirect jump "jmp r/m64" (FF /4) becomes, with S a scratch
 * register its operand does not use (r11, r10 or r9):
 *     lea rsp, [rsp-128]     stands for the jump; steps over the red zone, which a
 *                            leaf function may be using (System V x86-64 ABI 3.2.2)
 *     push S; pushfq         the scratch register and the flags the compares change
 *     mov S, r/m64           the target, from the jump's own operand
 *     cmp S, imm32; je Lk    per linked target Tk (imm32 sign-extended: Tk < 2^31)
 *     popfq; xchg S, [rsp]; ret 128
 *                            an unknown target: S and the flags restored, the target
 *                            where S was, and "ret imm16" (C2 iw) jumps there and
 *                            frees the 8 + 128 bytes in one instruction
 *     Lk: popfq; pop S; lea rsp, [rsp+128]; jmp Tk'
 * Every instruction after the first stands for none of the program's; each
 * carries how far below the program's RSP it runs (dbr_insn.sp_off: -128 to
 * -144), so that a sample inside the chain can show the program's stack. Where the
 * operand uses RSP (its value moved) or a target is 2 GiB or more up (no imm32
 * holds it), the jump is copied as it is and leaves the replacement. Encodings:
 * Intel SDM vol. 2 (MOV 8B /r, CMP 81 /7 id, XCHG 87 /r, PUSH 50+rd, POP 58+rd,
 * PUSHFQ 9C, POPFQ 9D, RET C2 iw, CALL FF /2, JMP FF /4; ModRM and SIB in 2.1). */
#include <inttypes.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "profiler/dbr_emit.h"

#define MAX_LINKED 64    /* linked targets compared at one jump */
#define MAX_TABLE 4096   /* entries of one jump table translated */
#define TABLE_BELOW 0x7f000000u /* replacement code from which a table still fits a disp32 */

/* The r/m operand of an FF /2 or FF /4 instruction. */
struct rm_form {
	size_t npfx;      /* legacy prefixes before it (kept) */
	uint8_t rex;      /* its REX byte, 0 when none */
	size_t modrm;     /* offset of the ModRM byte */
	uint8_t mod, reg, rm;
	int uses_rsp;     /* RSP is its base or its register */
	uint8_t sib;      /* its SIB byte (mod != 3, rm == 4), else 0 */
	int seg;          /* a segment (FS, GS) or address-size prefix is among them */
	unsigned regs;    /* bit r: register r (0..15) appears in the operand */
};

static int is_legacy_prefix(uint8_t b)
{
	return b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 || b == 0x3e ||
	       b == 0x26 || b == 0x64 || b == 0x65 || b == 0x66 || b == 0x67;
}

static int parse_rm(const uint8_t *b, size_t n, struct rm_form *f)
{
	size_t i = 0;
	memset(f, 0, sizeof(*f));
	while (i < n && is_legacy_prefix(b[i])) {
		f->seg |= b[i] == 0x64 || b[i] == 0x65 || b[i] == 0x67;
		if (b[i++] == 0x66)
			return -1; /* an operand-size prefix: not the 64-bit forms */
	}
	f->npfx = i;
	if (i < n && (b[i] & 0xf0) == 0x40)
		f->rex = b[i++];
	if (i + 1 >= n || b[i] != 0xff)
		return -1;
	f->modrm = i + 1;
	uint8_t m = b[i + 1];
	f->mod = m >> 6, f->reg = (m >> 3) & 7, f->rm = m & 7;
	unsigned rb = f->rex & 1 ? 8 : 0, rx = f->rex & 2 ? 8 : 0;
	if (f->mod == 3) {
		f->regs = 1u << (f->rm | rb);
		f->uses_rsp = (f->rm | rb) == 4;
	} else if (f->rm == 4) {
		if (i + 2 >= n)
			return -1;
		uint8_t sib = b[i + 2], base = sib & 7, index = (sib >> 3) & 7;
		f->sib = sib;
		if (!(f->mod == 0 && base == 5))
			f->regs |= 1u << (base | rb);
		if ((index | rx) != 4)
			f->regs |= 1u << (index | rx);
		f->uses_rsp = (base | rb) == 4 && !(f->mod == 0 && base == 5);
	} else if (!(f->mod == 0 && f->rm == 5)) {
		f->regs = 1u << (f->rm | rb);
	}
	return 0;
}

/* r11, r10 or r9, whichever the operand leaves alone. */
static unsigned scratch(const struct rm_form *f)
{
	for (unsigned r = 11; r >= 9; r--)
		if (!(f->regs & (1u << r)))
			return r;
	return 8;
}

/* The original instruction at addr with the ModRM reg field set to reg and,
 * opcode8b, "mov S, r/m64" (REX.W 8B /r) instead of FF; its RIP-relative disp32
 * (at disp in the original, 0: none) made to reach the same address from where
 * it is put. */
static int put_rm(struct em *e, uint64_t addr, size_t n, uint8_t disp, const struct rm_form *f, unsigned reg,
		  int opcode8b, int what, uint64_t orig)
{
	uint8_t src[MAX_INSN], out[MAX_INSN + 2];
	if (binary_read(e->code, addr, src, n) != n)
		return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_FORMAT,
				   "the instruction at %#" PRIx64 " cannot be read", addr);
	size_t k = 0;
	for (size_t i = 0; i < f->npfx; i++) /* a mov keeps segment and address-size prefixes only */
		if (!opcode8b || (src[i] != 0xf0 && src[i] != 0xf2 && src[i] != 0xf3))
			out[k++] = src[i];
	if (opcode8b) {
		out[k++] = (uint8_t)(0x48 | (reg & 8 ? 4 : 0) | (f->rex & 3));
		out[k++] = 0x8b;
	} else {
		if (f->rex)
			out[k++] = f->rex;
		out[k++] = 0xff;
	}
	size_t shift = k - f->modrm;
	out[k++] = (uint8_t)(f->mod << 6 | (reg & 7) << 3 | f->rm);
	memcpy(out + k, src + f->modrm + 1, n - f->modrm - 1);
	k += n - f->modrm - 1;
	if (disp) {
		uint64_t at = e->base + e->c->len;
		int64_t d = (int64_t)(int32_t)rd32(src + disp) + (int64_t)(addr + n) - (int64_t)(at + k);
		if (d < INT32_MIN || d > INT32_MAX)
			return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_UNSUPPORTED,
					   "the RIP-relative operand of the instruction at %#" PRIx64
					   " cannot reach its address from %#" PRIx64,
					   addr, at);
		wr32(out + disp + shift, (uint32_t)d);
	}
	return dbr_put(e, out, k, what, orig);
}

static int read_form(struct em *e, uint64_t addr, size_t n, struct rm_form *f)
{
	uint8_t b[MAX_INSN];
	return binary_read(e->code, addr, b, n) == n ? parse_rm(b, n, f) : -1;
}

int dbr_emit_ind_call(struct em *e, uint32_t b, uint64_t at, uint64_t end)
{
	const struct rset_block *rb = &e->r->block[b];
	size_t n = (size_t)(end - at);
	struct rm_form f;
	if (read_form(e, at, n, &f) < 0 || f.reg != 2 || f.uses_rsp) /* the push would move its operand */
		return 1;
	int err = dbr_put_push(e, at, end);
	uint8_t disp = e->ins[e->blk[b].first + rb->ninsns - 1].disp;
	return err ? err : put_rm(e, at, n, disp, &f, 4, 0, DBR_JUMP | DBR_CARRIES, at);
}

/* The targets linked from block b (same clone), at most max; how many, or -1
 * when one does not fit an imm32. */
static int linked(const struct em *e, uint32_t b, uint32_t *to, int max)
{
	const struct rset_block *rb = &e->r->block[b];
	int n = 0;
	for (uint32_t k = 0; k < rb->nsucc && n < max; k++) {
		uint32_t s = rb->succ[k];
		if (s >= e->r->nblock || e->r->block[s].clone != rb->clone)
			continue;
		if (e->r->block[s].start >= 0x80000000u)
			return -1;
		to[n++] = s;
	}
	return n;
}

static int put_plain(struct em *e, const uint8_t *b, size_t n, uint64_t orig)
{
	return dbr_put(e, b, n, DBR_JUMP, orig);
}

/* push S / pop S (50+rd / 58+rd, REX.B for r8..r15). */
static int put_pushpop(struct em *e, uint8_t op, unsigned s, uint64_t orig)
{
	uint8_t b[2] = {0x41, (uint8_t)(op | (s & 7))};
	return s >= 8 ? put_plain(e, b, 2, orig) : put_plain(e, b + 1, 1, orig);
}

static int put_chain(struct em *e, unsigned s, const uint32_t *to, int nto, uint64_t at)
{
	static const uint8_t popf[] = {0x9d}, ret128[] = {0xc2, 0x80, 0x00},
			     lea_up[] = {0x48, 0x8d, 0xa4, 0x24, 0x80, 0x00, 0x00, 0x00};
	uint32_t je_at[MAX_LINKED];
	int err = 0;
	e->sp_off = -144; /* below the red zone, S and the flags */
	for (int k = 0; k < nto && !err; k++) {
		uint8_t cmp[7] = {(uint8_t)(0x48 | (s & 8 ? 1 : 0)), 0x81, (uint8_t)(0xf8 | (s & 7))};
		wr32(cmp + 3, (uint32_t)e->r->block[to[k]].start);
		uint8_t je[6] = {0x0f, 0x84};
		err = put_plain(e, cmp, 7, at);
		je_at[k] = (uint32_t)e->c->len + 2;
		err = err ? err : put_plain(e, je, 6, at);
	}
	uint8_t xchg[4] = {(uint8_t)(0x48 | (s & 8 ? 4 : 0)), 0x87, (uint8_t)(0x04 | (s & 7) << 3), 0x24};
	if (err || (err = put_plain(e, popf, 1, at)))
		return err;
	e->sp_off = -136;
	if ((err = put_plain(e, xchg, 4, at)) || (err = dbr_put(e, ret128, 3, DBR_JUMP | DBR_CARRIES, at)))
		return err;
	for (int k = 0; k < nto && !err; k++) {
		wr32(e->c->bytes + je_at[k], (uint32_t)(e->c->len - (je_at[k] + 4)));
		e->sp_off = -144;
		if ((err = put_plain(e, popf, 1, at)))
			return err;
		e->sp_off = -136;
		if ((err = put_pushpop(e, 0x58, s, at)))
			return err;
		e->sp_off = -128;
		if ((err = put_plain(e, lea_up, sizeof(lea_up), at)))
			return err;
		e->sp_off = 0;
		err = dbr_put_jump(e, -1, DBR_JUMP | DBR_CARRIES, at, to[k], 0);
	}
	return err;
}

/* The address of the absolute jump table "jmp [disp32 + index*8]" reads (FF /4,
 * mod 00, SIB with no base and scale 8, nothing after the disp32), or 0. */
static uint64_t table_of(const struct rm_form *f, const uint8_t *src, size_t n)
{
	uint8_t index = (uint8_t)(((f->sib >> 3) & 7) | (f->rex & 2 ? 8 : 0));
	if (f->seg || f->mod != 0 || f->rm != 4 || (f->sib & 7) != 5 || f->sib >> 6 != 3 ||
	    index == 4 || n != f->modrm + 6)
		return 0;
	int32_t d = (int32_t)rd32(src + f->modrm + 2);
	return d > 0 ? (uint64_t)d : 0;
}

/* The original entry k of table t, when it is an address of code; 0 when not. */
static uint64_t table_entry(const struct em *e, uint64_t t, uint32_t k)
{
	uint8_t v[8];
	if (binary_read_ro(e->code, t + 8ull * k, v, 8) != 8)
		return 0;
	uint64_t a = (uint64_t)rd32(v) | (uint64_t)rd32(v + 4) << 32;
	return binary_has_code(e->code, a) ? a : 0;
}

/* The entries of table t: up to its first that is no code address (MAX_TABLE at
 * most); 0 unless every linked target to[] is among them. */
static uint32_t table_len(const struct em *e, uint64_t t, const uint32_t *to, int nto)
{
	uint32_t n = 0;
	while (n < MAX_TABLE && table_entry(e, t, n))
		n++;
	for (int k = 0; k < nto; k++) {
		uint32_t i = 0;
		while (i < n && table_entry(e, t, i) != e->r->block[to[k]].start)
			i++;
		if (i == n)
			return 0;
	}
	return n;
}

/* Block b's jump through table t of n entries: the same instruction reading a
 * table of the replacement's own, placed by dbr_put_tables. */
static int put_table_jump(struct em *e, uint32_t b, uint64_t at, const uint8_t *src, size_t len,
                          const struct rm_form *f, uint64_t t, uint32_t n)
{
	struct jtab *jt = grow_array(e->jt, &e->jtcap, e->njt + 1, sizeof(*e->jt));
	if (!jt)
		return dbr_nomem(e);
	e->jt = jt;
	e->jt[e->njt++] = (struct jtab){(uint32_t)(e->c->len + f->modrm + 2), b, n, t};
	return dbr_put(e, src, len, DBR_COPY, at);
}

int dbr_put_tables(struct em *e)
{
	static const uint8_t pad[8] = {0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc};
	int err = 0;
	if (e->njt && (e->c->len & 7))
		err = dbr_put_data(e, pad, 8 - (e->c->len & 7));
	for (size_t j = 0; !err && j < e->njt; j++) {
		const struct jtab *jt = &e->jt[j];
		uint32_t to[MAX_LINKED];
		int nto = linked(e, jt->block, to, MAX_LINKED);
		uint64_t at = e->base + e->c->len;
		if (at + 8ull * jt->n > INT32_MAX)
			return pmusim_fail(e->msg, e->msglen, PMUSIM_ERR_UNSUPPORTED,
			                   "a jump table at %#" PRIx64 " lies 2 GiB or more up", at);
		wr32(e->c->bytes + jt->disp_at, (uint32_t)at);
		for (uint32_t i = 0; !err && i < jt->n; i++) {
			uint64_t v = table_entry(e, jt->table, i);
			for (int k = 0; k < nto; k++)
				if (e->r->block[to[k]].start == v)
					v = e->c->copy_of_block[to[k]];
			uint8_t w[8];
			wr32(w, (uint32_t)v), wr32(w + 4, (uint32_t)(v >> 32));
			err = dbr_put_data(e, w, 8);
		}
	}
	return err;
}

int dbr_emit_ind_jump(struct em *e, uint32_t b, uint64_t at)
{
	const struct rset_block *rb = &e->r->block[b];
	size_t n = (size_t)(rb->start + rb->off[rb->ninsns] - at);
	uint8_t disp = e->ins[e->blk[b].first + rb->ninsns - 1].disp;
	uint32_t to[MAX_LINKED];
	struct rm_form f;
	int nto = linked(e, b, to, MAX_LINKED);
	uint8_t src[MAX_INSN];
	if (nto <= 0 || n > MAX_INSN || binary_read(e->code, at, src, n) != n || parse_rm(src, n, &f) < 0 ||
	    f.reg != 4)
		return 1; /* copied as it is */
	uint64_t t = table_of(&f, src, n);
	uint32_t tn = t && e->base + e->c->len < TABLE_BELOW ? table_len(e, t, to, nto) : 0;
	if (tn)
		return put_table_jump(e, b, at, src, n, &f, t, tn);
	if (f.uses_rsp)
		return 1;
	static const uint8_t lea_down[] = {0x48, 0x8d, 0x64, 0x24, 0x80}, pushf[] = {0x9c};
	unsigned s = scratch(&f);
	int err = dbr_put(e, lea_down, sizeof(lea_down), DBR_COPY, at);
	e->sp_off = -128;
	if (err || (err = put_pushpop(e, 0x50, s, at)))
		goto out;
	e->sp_off = -136;
	if ((err = put_plain(e, pushf, 1, at)))
		goto out;
	e->sp_off = -144;
	if (!(err = put_rm(e, at, n, disp, &f, s, 1, DBR_JUMP, at)))
		err = put_chain(e, s, to, nto, at);
out:
	e->sp_off = 0;
	return err;
}
