/* Decode cache of guest code runs, built with Capstone 4 (x86-64, detail on).
 * Classifies each run's terminator (Intel SDM vol. 2 instruction semantics) and
 * each instruction's timing class, and lists the instructions that the machine
 * must hook one by one (REP string, rdtsc, rdrand, privileged). */
#include "common/decode.h"

#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"

#define FRONT_SIZE DCACHE_FRONT_SIZE

struct dentry {
	struct block_info bi;      /* first member: block_info pointers map back */
	struct dc_special *specials;
	uint32_t nspecials;
	uint8_t live;
};

struct dcache {
	csh cs;
	cs_insn *insn;
	dcache_read_fn read;
	void *ctx;
	struct dentry **slots;     /* open addressing by start address, live entries */
	size_t cap, used, tombs;
	struct dentry **all;       /* by id, live or not */
	uint32_t nall, capall;
	uint32_t *ids;             /* next id to hand out (shared between caches), or NULL */
	uint64_t lo, hi;           /* bounds of every live run, for cheap invalidation */
	const struct block_info *front[FRONT_SIZE]; /* direct-mapped cache in front of the table */
};

#define TOMB ((struct dentry *)1)


static size_t hash_addr(uint64_t a)
{
	a ^= a >> 33;
	a *= 0xff51afd7ed558ccdULL;
	a ^= a >> 33;
	return (size_t)a;
}

struct dcache *dcache_new(dcache_read_fn read, void *ctx)
{
	struct dcache *dc = calloc(1, sizeof(*dc));
	if (!dc)
		return NULL;
	if (cs_open(CS_ARCH_X86, CS_MODE_64, &dc->cs) != CS_ERR_OK) {
		free(dc);
		return NULL;
	}
	cs_option(dc->cs, CS_OPT_DETAIL, CS_OPT_ON);
	dc->insn = cs_malloc(dc->cs);
	dc->cap = 1024;
	dc->slots = calloc(dc->cap, sizeof(*dc->slots));
	dc->read = read;
	dc->ctx = ctx;
	dc->lo = UINT64_MAX;
	if (!dc->insn || !dc->slots) {
		dcache_free(dc);
		return NULL;
	}
	return dc;
}

void dcache_free(struct dcache *dc)
{
	if (!dc)
		return;
	for (uint32_t i = 0; i < dc->nall; i++) {
		free(dc->all[i]->specials);
		free(dc->all[i]);
	}
	free(dc->all);
	free(dc->slots);
	if (dc->insn)
		cs_free(dc->insn, 1);
	cs_close(&dc->cs);
	free(dc);
}

static int table_grow(struct dcache *dc)
{
	size_t ncap = dc->cap * 2;
	struct dentry **ns = calloc(ncap, sizeof(*ns));
	if (!ns)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < dc->cap; i++) {
		struct dentry *e = dc->slots[i];
		if (!e || e == TOMB)
			continue;
		size_t j = hash_addr(e->bi.start) & (ncap - 1);
		while (ns[j])
			j = (j + 1) & (ncap - 1);
		ns[j] = e;
	}
	free(dc->slots);
	dc->slots = ns;
	dc->cap = ncap;
	dc->tombs = 0;
	return 0;
}

static struct dentry *table_find(const struct dcache *dc, uint64_t addr)
{
	size_t mask = dc->cap - 1;
	for (size_t j = hash_addr(addr) & mask;; j = (j + 1) & mask) {
		struct dentry *e = dc->slots[j];
		if (!e)
			return NULL;
		if (e != TOMB && e->bi.start == addr)
			return e;
	}
}

static int table_insert(struct dcache *dc, struct dentry *e)
{
	if ((dc->used + dc->tombs + 1) * 2 > dc->cap && table_grow(dc) < 0)
		return PMUSIM_ERR_NOMEM;
	size_t mask = dc->cap - 1;
	size_t j = hash_addr(e->bi.start) & mask;
	while (dc->slots[j] && dc->slots[j] != TOMB)
		j = (j + 1) & mask;
	if (dc->slots[j] == TOMB)
		dc->tombs--;
	dc->slots[j] = e;
	dc->used++;
	return 0;
}

/* Condition code of a conditional branch, or -1. */
static int cond_of(unsigned id)
{
	switch (id) {
	case X86_INS_JO: return CC_O;
	case X86_INS_JNO: return CC_NO;
	case X86_INS_JB: return CC_B;
	case X86_INS_JAE: return CC_AE;
	case X86_INS_JE: return CC_E;
	case X86_INS_JNE: return CC_NE;
	case X86_INS_JBE: return CC_BE;
	case X86_INS_JA: return CC_A;
	case X86_INS_JS: return CC_S;
	case X86_INS_JNS: return CC_NS;
	case X86_INS_JP: return CC_P;
	case X86_INS_JNP: return CC_NP;
	case X86_INS_JL: return CC_L;
	case X86_INS_JGE: return CC_GE;
	case X86_INS_JLE: return CC_LE;
	case X86_INS_JG: return CC_G;
	case X86_INS_LOOP: return CC_LOOP;
	case X86_INS_LOOPE: return CC_LOOPE;
	case X86_INS_LOOPNE: return CC_LOOPNE;
	case X86_INS_JCXZ: return CC_JCXZ;
	case X86_INS_JECXZ: return CC_JECXZ;
	case X86_INS_JRCXZ: return CC_JRCXZ;
	}
	return -1;
}

static int is_string_opcode(const cs_x86 *x)
{
	uint8_t op = x->opcode[0];
	if (x->opcode[1] != 0)
		return 0;
	return (op >= 0xa4 && op <= 0xa7) || (op >= 0xaa && op <= 0xaf) ||
	       (op >= 0x6c && op <= 0x6f);
}

static int has_group(const cs_detail *d, uint8_t g)
{
	for (int i = 0; i < d->groups_count; i++)
		if (d->groups[i] == g)
			return 1;
	return 0;
}

static int direct_target(const cs_x86 *x, uint64_t *t)
{
	if (x->op_count == 1 && x->operands[0].type == X86_OP_IMM) {
		*t = (uint64_t)x->operands[0].imm;
		return 1;
	}
	return 0;
}

/* Terminator kind of one instruction, BK_NONE for ordinary ones. */
static int kind_of(const cs_insn *in, uint8_t *cond, uint64_t *target, uint8_t *flags)
{
	const cs_detail *d = in->detail;
	const cs_x86 *x = &d->x86;
	int c = cond_of(in->id);
	if (c >= 0) {
		*cond = (uint8_t)c;
		direct_target(x, target);
		return BK_COND;
	}
	switch (in->id) {
	case X86_INS_JMP:
		return direct_target(x, target) ? BK_JMP : BK_JMP_IND;
	case X86_INS_CALL:
		return direct_target(x, target) ? BK_CALL : BK_CALL_IND;
	case X86_INS_RET:
		return BK_RET;
	case X86_INS_LJMP: case X86_INS_LCALL: case X86_INS_RETF: case X86_INS_RETFQ:
	case X86_INS_IRET: case X86_INS_IRETD: case X86_INS_IRETQ:
	case X86_INS_INT3: case X86_INS_INT: case X86_INS_INTO: case X86_INS_INT1:
	case X86_INS_UD2: case X86_INS_UD2B: case X86_INS_UD0: case X86_INS_HLT:
	case X86_INS_SYSENTER: case X86_INS_SYSEXIT: case X86_INS_SYSRET:
		return BK_TRAP;
	case X86_INS_SYSCALL:
		return BK_SYSCALL;
	}
	if ((x->prefix[0] == X86_PREFIX_REP || x->prefix[0] == X86_PREFIX_REPNE) &&
	    is_string_opcode(x)) {
		uint8_t op = x->opcode[0];
		if (x->prefix[3] == X86_PREFIX_ADDRSIZE)
			*flags |= BI_REP_ECX;
		if (op == 0xa6 || op == 0xa7 || op == 0xae || op == 0xaf)
			*flags |= BI_REP_COND;
		return BK_REP;
	}
	return BK_NONE;
}

static uint8_t class_of(const cs_insn *in)
{
	const cs_detail *d = in->detail;
	const cs_x86 *x = &d->x86;
	if (has_group(d, X86_GRP_JUMP) || has_group(d, X86_GRP_CALL) ||
	    has_group(d, X86_GRP_RET) || has_group(d, X86_GRP_BRANCH_RELATIVE))
		return IC_BRANCH;
	switch (in->id) {
	case X86_INS_NOP: case X86_INS_ENDBR64: case X86_INS_ENDBR32: case X86_INS_PAUSE:
		return IC_NOP;
	case X86_INS_MUL: case X86_INS_IMUL: case X86_INS_MULX:
		return IC_MUL;
	case X86_INS_DIV: case X86_INS_IDIV:
		return IC_DIV;
	case X86_INS_SYSCALL:
		return IC_SYSCALL;
	case X86_INS_CPUID: case X86_INS_RDTSC: case X86_INS_RDTSCP: case X86_INS_LFENCE:
	case X86_INS_MFENCE: case X86_INS_SFENCE: case X86_INS_RDRAND: case X86_INS_RDSEED:
		return IC_OTHER;
	case X86_INS_LEA:
		return IC_ALU;
	case X86_INS_PUSH:
		return IC_STORE;
	case X86_INS_POP:
		return IC_LOAD;
	}
	if (is_string_opcode(x) && x->opcode[0] != 0x0f)
		return IC_STRING;
	if (has_group(d, X86_GRP_SSE1) || has_group(d, X86_GRP_SSE2) ||
	    has_group(d, X86_GRP_SSE3) || has_group(d, X86_GRP_SSSE3) ||
	    has_group(d, X86_GRP_SSE41) || has_group(d, X86_GRP_SSE42) ||
	    has_group(d, X86_GRP_FPU) || has_group(d, X86_GRP_MMX) ||
	    has_group(d, X86_GRP_AVX) || has_group(d, X86_GRP_AVX2) ||
	    has_group(d, X86_GRP_AES) || has_group(d, X86_GRP_PCLMUL))
		return IC_SIMD;
	int rd = 0, wr = 0;
	for (int i = 0; i < x->op_count; i++) {
		if (x->operands[i].type != X86_OP_MEM)
			continue;
		if (x->operands[i].access & CS_AC_WRITE)
			wr = 1;
		if (x->operands[i].access & CS_AC_READ)
			rd = 1;
	}
	if (wr)
		return IC_STORE;
	if (rd)
		return IC_LOAD;
	return IC_ALU;
}

/* Whether the instruction has a VEX (C4/C5), EVEX (62) or XOP (8F with ModRM.reg != 0)
 * prefix after its legacy prefixes (Intel SDM vol. 2A 2.3, 2.7; AMD APM vol. 3 1.8). */
static int vex_encoded(const cs_insn *in)
{
	size_t i = 0;
	while (i < in->size && (in->bytes[i] == 0x26 || in->bytes[i] == 0x2e || in->bytes[i] == 0x36 ||
	                        in->bytes[i] == 0x3e || in->bytes[i] == 0x64 || in->bytes[i] == 0x65 ||
	                        in->bytes[i] == 0x66 || in->bytes[i] == 0x67 || in->bytes[i] == 0xf0 ||
	                        in->bytes[i] == 0xf2 || in->bytes[i] == 0xf3))
		i++;
	if (i + 1 >= in->size)
		return 0;
	uint8_t b = in->bytes[i];
	return b == 0xc4 || b == 0xc5 || b == 0x62 || (b == 0x8f && (in->bytes[i + 1] & 0x38) != 0);
}

static int special_of(const cs_insn *in, int kind, struct dc_special *sp)
{
	memset(sp, 0, sizeof(*sp));
	sp->addr = in->address;
	sp->len = (uint8_t)in->size;
	if (kind == BK_REP) {
		sp->kind = DS_REP;
		return 1;
	}
	switch (in->id) {
	case X86_INS_RDTSC: sp->kind = DS_RDTSC; return 1;
	case X86_INS_RDTSCP: sp->kind = DS_RDTSCP; return 1;
	case X86_INS_RDRAND: case X86_INS_RDSEED: {
		const cs_x86 *x = &in->detail->x86;
		sp->kind = DS_RDRAND;
		if (x->op_count >= 1 && x->operands[0].type == X86_OP_REG) {
			sp->cs_reg = (uint16_t)x->operands[0].reg;
			sp->size = x->operands[0].size;
		}
		return 1;
	}
	case X86_INS_IN: case X86_INS_OUT: case X86_INS_INSB: case X86_INS_INSW:
	case X86_INS_INSD: case X86_INS_OUTSB: case X86_INS_OUTSW: case X86_INS_OUTSD:
	case X86_INS_CLI: case X86_INS_STI: case X86_INS_LGDT: case X86_INS_LIDT:
	case X86_INS_WRMSR: case X86_INS_RDMSR: case X86_INS_INVD: case X86_INS_WBINVD:
	case X86_INS_HLT:
		sp->kind = DS_PRIV;
		return 1;
	case X86_INS_PDEP: case X86_INS_PEXT:
		sp->kind = DS_BMI2_FIX;
		return 1;
	}
	if (vex_encoded(in) && !has_group(in->detail, X86_GRP_BMI) && !has_group(in->detail, X86_GRP_BMI2)) {
		sp->kind = DS_UNREPORTED;
		return 1;
	}
	return 0;
}

/* Growable scratch arrays used while decoding one run. */
struct scratch {
	uint16_t off[DECODE_MAX_INSNS + 1];
	uint8_t cls[DECODE_MAX_INSNS];
	struct dc_special sp[DECODE_MAX_INSNS];
};

static struct dentry *finish_entry(struct dcache *dc, struct scratch *s, struct block_info *bi,
				   uint32_t nsp)
{
	size_t n = bi->ninsns;
	size_t sz = sizeof(struct dentry) + (n + 1) * sizeof(uint16_t) + n;
	struct dentry *e = calloc(1, sz);
	if (!e)
		return NULL;
	uint16_t *off = (uint16_t *)(e + 1);
	uint8_t *cls = (uint8_t *)(off + n + 1);
	memcpy(off, s->off, (n + 1) * sizeof(uint16_t));
	memcpy(cls, s->cls, n);
	e->bi = *bi;
	e->bi.off = off;
	e->bi.cls = cls;
	if (nsp) {
		e->specials = malloc(nsp * sizeof(*e->specials));
		if (!e->specials) {
			free(e);
			return NULL;
		}
		arrays_copy(e->specials, s->sp, nsp, sizeof(*e->specials));
		e->nspecials = nsp;
	}
	if (dc->nall == dc->capall) {
		uint32_t nc = dc->capall ? dc->capall * 2 : 1024;
		struct dentry **na = realloc(dc->all, nc * sizeof(*na));
		if (!na) {
			free(e->specials);
			free(e);
			return NULL;
		}
		dc->all = na;
		dc->capall = nc;
	}
	e->bi.id = dc->ids ? (*dc->ids)++ : dc->nall;
	dc->all[dc->nall++] = e;
	e->live = 1;
	if (table_insert(dc, e) < 0) {
		e->live = 0;
		return NULL;
	}
	if (e->bi.start < dc->lo)
		dc->lo = e->bi.start;
	if (e->bi.end > dc->hi)
		dc->hi = e->bi.end;
	return e;
}

static struct dentry *decode_run(struct dcache *dc, uint64_t start)
{
	static _Thread_local struct scratch s;
	uint8_t buf[4096 + 16];
	struct block_info bi = {0};
	uint32_t nsp = 0;
	uint64_t pc = start;
	size_t have = 0, pos = 0; /* bytes in buf starting at address start+base */
	uint64_t base = start;

	bi.start = start;
	bi.kind = BK_NONE;
	for (;;) {
		if (bi.ninsns == DECODE_MAX_INSNS)
			break;
		/* keep at least 16 bytes ahead of pc in buf (max insn length 15) */
		if (have - pos < 16) {
			memmove(buf, buf + pos, have - pos);
			have -= pos;
			base += pos;
			pos = 0;
			have += dc->read(dc->ctx, base + have, buf + have, sizeof(buf) - have);
		}
		const uint8_t *code = buf + pos;
		size_t size = have - pos;
		uint64_t addr = pc;
		if (size == 0 || !cs_disasm_iter(dc->cs, &code, &size, &addr, dc->insn)) {
			/* undecodable or unreadable: a trap the emulator will raise */
			s.off[bi.ninsns] = (uint16_t)(pc - start);
			s.cls[bi.ninsns] = IC_OTHER;
			bi.ninsns++;
			bi.term = pc;
			bi.term_len = 1;
			pc += 1;
			bi.kind = BK_TRAP;
			break;
		}
		const cs_insn *in = dc->insn;
		uint8_t cond = 0, flags = 0;
		uint64_t target = 0;
		int kind = kind_of(in, &cond, &target, &flags);
		s.off[bi.ninsns] = (uint16_t)(pc - start);
		s.cls[bi.ninsns] = class_of(in);
		if (kind == BK_REP)
			s.cls[bi.ninsns] = IC_STRING;
		if (special_of(in, kind, &s.sp[nsp]))
			nsp++;
		bi.ninsns++;
		pos += in->size;
		pc += in->size;
		if (kind != BK_NONE) {
			bi.kind = (uint8_t)kind;
			bi.cond = cond;
			bi.flags = flags;
			bi.target = target;
			bi.term = in->address;
			bi.term_len = (uint8_t)in->size;
			break;
		}
	}
	bi.end = pc;
	if (bi.kind == BK_NONE)
		bi.term = start + s.off[bi.ninsns - 1];
	if (bi.kind == BK_COND && bi.target == bi.end)
		bi.flags |= BI_COND_EQ_FT;
	s.off[bi.ninsns] = (uint16_t)(pc - start);
	return finish_entry(dc, &s, &bi, nsp);
}

const struct block_info *dcache_get(struct dcache *dc, uint64_t addr, int *is_new)
{
	const struct block_info **fr = &dc->front[dcache_front_slot(addr)];
	if (*fr && (*fr)->start == addr) {
		if (is_new)
			*is_new = 0;
		return *fr;
	}
	struct dentry *e = table_find(dc, addr);
	if (e) {
		*fr = &e->bi;
		if (is_new)
			*is_new = 0;
		return &e->bi;
	}
	e = decode_run(dc, addr);
	if (is_new)
		*is_new = 1;
	if (e)
		*fr = &e->bi;
	return e ? &e->bi : NULL;
}

const struct dc_special *dcache_specials(const struct block_info *bi, size_t *n)
{
	const struct dentry *e = (const struct dentry *)bi;
	*n = e->nspecials;
	return e->specials;
}

const struct block_info *const *dcache_front(const struct dcache *dc)
{
	return dc->front;
}

int block_insn_index(const struct block_info *bi, uint64_t addr)
{
	if (addr < bi->start || addr > bi->end)
		return -1;
	uint64_t o = addr - bi->start;
	int lo = 0, hi = bi->ninsns;
	while (lo <= hi) {
		int mid = (lo + hi) / 2;
		if (bi->off[mid] == o)
			return mid;
		if (bi->off[mid] < o)
			lo = mid + 1;
		else
			hi = mid - 1;
	}
	return -1;
}

size_t dcache_invalidate(struct dcache *dc, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len;
	size_t n = 0;
	if (dc->used == 0 || end <= dc->lo || addr >= dc->hi)
		return 0;
	for (size_t i = 0; i < FRONT_SIZE; i++)
		if (dc->front[i] && dc->front[i]->start < end && dc->front[i]->end > addr)
			dc->front[i] = NULL;
	for (size_t i = 0; i < dc->cap; i++) {
		struct dentry *e = dc->slots[i];
		if (!e || e == TOMB)
			continue;
		if (e->bi.start < end && e->bi.end > addr) {
			e->live = 0;
			dc->slots[i] = TOMB;
			dc->used--;
			dc->tombs++;
			n++;
		}
	}
	return n;
}

uint32_t dcache_id_count(const struct dcache *dc)
{
	return dc->nall;
}

const struct block_info *dcache_by_id(const struct dcache *dc, uint32_t id)
{
	if (!dc->ids)
		return id < dc->nall ? &dc->all[id]->bi : NULL;
	uint32_t lo = 0, hi = dc->nall; /* ids grow with the index */
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (dc->all[mid]->bi.id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < dc->nall && dc->all[lo]->bi.id == id ? &dc->all[lo]->bi : NULL;
}

void dcache_share_ids(struct dcache *dc, uint32_t *next_id)
{
	dc->ids = next_id;
}

int dcache_disasm(struct dcache *dc, uint64_t addr, char *out, size_t outlen)
{
	uint8_t buf[16];
	size_t n = dc->read(dc->ctx, addr, buf, sizeof(buf));
	const uint8_t *code = buf;
	uint64_t a = addr;
	if (n == 0 || !cs_disasm_iter(dc->cs, &code, &n, &a, dc->insn))
		return PMUSIM_ERR_DECODE;
	snprintf(out, outlen, "%s %s", dc->insn->mnemonic, dc->insn->op_str);
	return 0;
}
