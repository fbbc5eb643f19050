/* Data of tests/unit/check_dbr_code.c: the vocabulary of its tables (blocks,
 * listing rows) and the indirect jumps' cases, whose code runs below 2^31 (the
 * compare chain's "cmp S, imm32" holds only such targets, profiler/dbr_indirect.c).
 * Every byte below is assembled by hand from the Intel SDM vol. 2 (ModRM and SIB
 * in 2.1), every listing written out by hand from the chain and the jump table
 * that profiler/dbr_indirect.c describes (a table's address added up from the
 * instructions' lengths); nothing is taken from the emitter. Included once, by
 * check_dbr_code.c. */
#ifndef PMUSIM_TESTS_UNIT_DBR_CODE_CASES_H
#define PMUSIM_TESTS_UNIT_DBR_CODE_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/dbr_code.h"

/* A code image: its bytes, where they run natively, where their replacement goes;
 * read-only bytes the emitter may read ahead (binary_add_rodata, a jump table's
 * home) at org + ro_off, none when ro_len is 0. */
struct image {
	const uint8_t *bytes;
	size_t len;
	uint64_t org, repl;
	const uint8_t *ro;
	size_t ro_len;
	uint64_t ro_off;
};

/* A block: start offset, instruction lengths (0 ends), kind, clone, links (-1
 * ends), count. */
struct tblock {
	unsigned start;
	int len[10];
	int kind, clone;
	int succ[4];
	double count;
};

/* An expected instruction of the listing: Capstone's mnemonic, the map's what and
 * orig (offset from the image's org); a jump's destination as a row or an
 * original offset; a RIP-relative operand's original target; a pushed return
 * address; Capstone's operand text (NULL: not compared; ending in '*': a
 * prefix), which then stands for the bytes of a DBR_COPY row. */
struct xrow {
	int line;
	const char *mnem;
	int what;
	int orig, to_row, to_orig, rip, ret;
	const char *ops;
};
/* clang-format off */
#define ROW(m, w, o) {__LINE__, m, w, o, -1, -1, 0, 0, NULL}
#define TO(m, w, o, r) {__LINE__, m, w, o, r, -1, 0, 0, NULL}
#define OUT(m, w, o, x) {__LINE__, m, w, o, -1, x, 0, 0, NULL}
#define RIP(m, o, k) {__LINE__, m, DBR_COPY, o, -1, -1, k, 0, NULL}
#define RIPW(m, w, o, k, s) {__LINE__, m, w, o, -1, -1, k, 0, s}
#define PUSH(m, w, o, ret) {__LINE__, m, w, o, -1, -1, 0, ret, NULL}
#define OPS(m, w, o, s) {__LINE__, m, w, o, -1, -1, 0, 0, s}

/* Little-endian bytes of an address. */
#define LE8(x) (uint8_t)(x), (uint8_t)((x) >> 8), (uint8_t)((x) >> 16), (uint8_t)((x) >> 24), \
	(uint8_t)((uint64_t)(x) >> 32), (uint8_t)((uint64_t)(x) >> 40), \
	(uint8_t)((uint64_t)(x) >> 48), (uint8_t)((uint64_t)(x) >> 56)

/* Below 2^31 (ASan's low application memory ends at 0x7fff8000). */
#define IND_ORG 0x40000000ULL
#define IND_REPL (IND_ORG + 0x100000)

/* The four dispatchers X, Y, Z, W share a prologue that leaves live across their
 * indirect jump: two red-zone slots, r10, r11 and the flags of "add ecx, -2"
 * with ecx = the selector s in rdi (0..3). */
#define IND_PROLOGUE \
    0x48, 0xc7, 0x44, 0x24, 0xf8, 0x00, 0x10, 0x00, 0x00, /* +00 mov qword [rsp-8], 0x1000 */ \
    0x48, 0xc7, 0x44, 0x24, 0x80, 0x00, 0x00, 0x02, 0x00, /* +09 mov qword [rsp-0x80], 0x20000 */ \
    0x41, 0xba, 0x00, 0x00, 0x30, 0x00,                   /* +12 mov r10d, 0x300000 */ \
    0x41, 0xbb, 0x00, 0x00, 0x00, 0x04,                   /* +18 mov r11d, 0x4000000 */ \
    0x89, 0xf9,                                           /* +1e mov ecx, edi */ \
    0x83, 0xc1, 0xfe                                      /* +20 add ecx, -2 (flags) */
#define IND_PROLOGUE_LEN 9, 9, 6, 6, 2, 3
/* Target k (at 0xd0 + 0x20k): the flags first (lahf: AH = SF ZF 0 AF 0 PF 1 CF,
 * SDM LAHF), then both red-zone slots, r10, r11 and its own constant. */
#define IND_TARGET(k) \
    0x9f,                                 /* +00 lahf */ \
    0x0f, 0xb6, 0xc4,                     /* +01 movzx eax, ah */ \
    0x48, 0x03, 0x44, 0x24, 0xf8,         /* +04 add rax, [rsp-8] */ \
    0x48, 0x03, 0x44, 0x24, 0x80,         /* +09 add rax, [rsp-0x80] */ \
    0x4c, 0x01, 0xd0,                     /* +0e add rax, r10 */ \
    0x4c, 0x01, 0xd8,                     /* +11 add rax, r11 */ \
    0x48, 0x05, 0, 0, 0, (k + 1) * 0x10,  /* +14 add rax, (k+1) << 28 */ \
    0xc3                                  /* +1a ret */
#define IND_TARGET_LEN 1, 3, 5, 5, 3, 3, 6, 1
#define T(k) (0xd0 + 0x20 * (k))

#define IND_LEN 0x320 /* IND_ORG + IND_LEN: the first address past the code */
static const uint8_t ind_code[IND_LEN] = {
    /* X: jmp [table + rax*8] (SIB, no base, disp32) */
    [0x00] = IND_PROLOGUE,
    0x89, 0xf8,                                     /* 23 mov eax, edi */
    0xff, 0x24, 0xc5, 0x50, 0x01, 0x00, 0x40,       /* 25 jmp [rax*8 + 0x40000150] */
    /* Y: jmp rax */
    [0x30] = IND_PROLOGUE,
    0x48, 0x8b, 0x04, 0xfd, 0x50, 0x01, 0x00, 0x40, /* 53 mov rax, [rdi*8 + 0x40000150] */
    0xff, 0xe0,                                     /* 5b jmp rax */
    /* Z: jmp [rip+x], through a slot it writes */
    [0x60] = IND_PROLOGUE,
    0x48, 0x8b, 0x04, 0xfd, 0x50, 0x01, 0x00, 0x40, /* 83 mov rax, [rdi*8 + 0x40000150] */
    0x48, 0x89, 0x05, 0xde, 0x00, 0x00, 0x00,       /* 8b mov [rip+0xde], rax (170) */
    0xff, 0x25, 0xd8, 0x00, 0x00, 0x00,             /* 92 jmp [rip+0xd8] (170) */
    /* W: jmp r11, so the scratch is r10 */
    [0xa0] = IND_PROLOGUE,
    0x4c, 0x8b, 0x1c, 0xfd, 0x50, 0x01, 0x00, 0x40, /* c3 mov r11, [rdi*8 + 0x40000150] */
    0x41, 0xff, 0xe3,                               /* cb jmp r11 */
    [T(0)] = IND_TARGET(0),
    [T(1)] = IND_TARGET(1),
    [T(2)] = IND_TARGET(2),
    [T(3)] = IND_TARGET(3),
    [0x150] = LE8(IND_ORG + T(0)), LE8(IND_ORG + T(1)), /* the table */
    LE8(IND_ORG + T(2)), LE8(IND_ORG + T(3)),
    [0x170] = 0, 0, 0, 0, 0, 0, 0, 0,               /* Z's slot */
    /* V: jmp [r11 + r10*8], so the scratch is r9 */
    [0x180] = 0xb8, 0x00, 0x00, 0x00, 0x00,         /* 180 mov eax, 0 (point) */
    0x43, 0xff, 0x24, 0xd3,                         /* 185 jmp [r11 + r10*8] */
    /* U: jmp [rsp+8], its operand moved by any push: copied as it is */
    [0x190] = 0xb8, 0x00, 0x00, 0x00, 0x00,         /* 190 mov eax, 0 (point) */
    0xff, 0x64, 0x24, 0x08,                         /* 195 jmp [rsp+8] */
    /* T4: a target that is in no table */
    [0x1a0] = IND_TARGET(4),
    /* B: jmp [rdx + rax*8 + the table], a base register (rdx 0: the same entries;
     * rdx, not rbx, which the caller keeps) */
    [0x1c0] = IND_PROLOGUE,
    0x89, 0xf8,                                     /* 1e3 mov eax, edi */
    0xba, 0x00, 0x00, 0x00, 0x00,                   /* 1e5 mov edx, 0 (flags kept) */
    0xff, 0xa4, 0xc2, 0x50, 0x01, 0x00, 0x40,       /* 1ea jmp [rdx + rax*8 + 0x40000150] */
    /* S: jmp [rax*4 + the table], scale 4, rax = 2s */
    [0x200] = IND_PROLOGUE,
    0x8d, 0x04, 0x3f,                               /* 223 lea eax, [rdi + rdi] (flags kept) */
    0xff, 0x24, 0x85, 0x50, 0x01, 0x00, 0x40,       /* 226 jmp [rax*4 + 0x40000150] */
    /* A: an address-size prefix, jmp [eax*8 + the table] */
    [0x230] = IND_PROLOGUE,
    0x89, 0xf8,                                     /* 253 mov eax, edi */
    0x67, 0xff, 0x24, 0xc5, 0x50, 0x01, 0x00, 0x40, /* 255 jmp [eax*8 + 0x40000150] */
    /* N: "notrack jmp" (3E, what gcc -fcf-protection emits for a switch) */
    [0x260] = IND_PROLOGUE,
    0x89, 0xf8,                                     /* 283 mov eax, edi */
    0x3e, 0xff, 0x24, 0xc5, 0x50, 0x01, 0x00, 0x40, /* 285 notrack jmp [rax*8 + 0x40000150] */
    /* H: jmp [rax*8 + 0x400002e0], a table whose entry 2 is no code address */
    [0x290] = IND_PROLOGUE,
    0x89, 0xf8,                                     /* 2b3 mov eax, edi */
    0xff, 0x24, 0xc5, 0xe0, 0x02, 0x00, 0x40,       /* 2b5 jmp [rax*8 + 0x400002e0] */
    /* C: jmp [rax*8 + 0x40010000], a table of 4097 entries outside the code */
    [0x2c0] = 0xb8, 0x00, 0x00, 0x00, 0x00,         /* 2c0 mov eax, 0 (point) */
    0xff, 0x24, 0xc5, 0x00, 0x00, 0x01, 0x40,       /* 2c5 jmp [rax*8 + 0x40010000] */
    /* F: an FS prefix, jmp fs:[rax*8 + the table] */
    [0x2d0] = 0xb8, 0x00, 0x00, 0x00, 0x00,         /* 2d0 mov eax, 0 (point) */
    0x64, 0xff, 0x24, 0xc5, 0x50, 0x01, 0x00, 0x40, /* 2d5 jmp fs:[rax*8 + 0x40000150] */
    [0x2e0] = LE8(IND_ORG + T(0)), LE8(IND_ORG + T(1)), /* H's table */
    LE8(IND_ORG + IND_LEN), LE8(IND_ORG + T(3)),     /* entry 2: past the code */
    /* R: jmp [rbp + rax*8 + the table], mod 10 with SIB base 101: rbp, not "no
     * base" (that is mod 00 only); its length that of the table form */
    [0x300] = 0xb8, 0x00, 0x00, 0x00, 0x00,         /* 300 mov eax, 0 (point) */
    0xff, 0xa4, 0xc5, 0x50, 0x01, 0x00, 0x40,       /* 305 jmp [rbp + rax*8 + 0x40000150] */
    /* Q: SIB index 100 (none), scale 8: jmp [0x40000150], one slot, no table */
    [0x310] = 0xb8, 0x00, 0x00, 0x00, 0x00,         /* 310 mov eax, 0 (point) */
    0xff, 0x24, 0xe5, 0x50, 0x01, 0x00, 0x40,       /* 315 jmp [0x40000150] */
};

/* What target k returns for selector s: AH from "add ecx, -2" with ecx = s
 * (0: fffffffe SF; 1: ffffffff SF PF; 2: 0 ZF AF PF CF; 3: 1 AF CF; bit 1 always
 * set), the slots, r10, r11 as the dispatcher leaves it, (k+1) << 28. */
#define IND_AH(s) ((s) == 0 ? 0x82u : (s) == 1 ? 0x86u : (s) == 2 ? 0x57u : 0x13u)
#define IND_WANT(s, r11) \
	(IND_AH(s) + 0x1000u + 0x20000u + 0x300000u + (uint64_t)(r11) + 0x10000000ULL * ((s) + 1))
#define IND_WANTS(r11) \
	{IND_WANT(0, r11), IND_WANT(1, r11), IND_WANT(2, r11), IND_WANT(3, r11)}
#define IND_R11 0x4000000u
/* W leaves in r11 the target itself */
#define W_WANTS \
	{IND_WANT(0, IND_ORG + T(0)), IND_WANT(1, IND_ORG + T(1)), \
	 IND_WANT(2, IND_ORG + T(2)), IND_WANT(3, IND_ORG + T(3))}

#define TB(k) {T(k), {IND_TARGET_LEN}, BK_RET, 0, {-1}, 1}
/* Linked: X T0 T1 T2; Y T2, T0 (the chain in link order); Z T1, T3; W T0 T1 T2.
 * Selector 3 (X, Y, W) and 0, 2 (Z) reach unlinked targets: through "ret 128". */
static const struct tblock x_blocks[] = {
    {0x00, {IND_PROLOGUE_LEN, 2, 7}, BK_JMP_IND, 0, {1, 2, 3, -1}, 1}, TB(0), TB(1), TB(2)};
static const struct tblock y_blocks[] = {
    {0x30, {IND_PROLOGUE_LEN, 8, 2}, BK_JMP_IND, 0, {2, 1, -1}, 1}, TB(0), TB(2)};
static const struct tblock z_blocks[] = {
    {0x60, {IND_PROLOGUE_LEN, 8, 7, 6}, BK_JMP_IND, 0, {1, 2, -1}, 1}, TB(1), TB(3)};
static const struct tblock w_blocks[] = {
    {0xa0, {IND_PROLOGUE_LEN, 8, 3}, BK_JMP_IND, 0, {1, 2, 3, -1}, 1}, TB(0), TB(1), TB(2)};
static const struct tblock v_blocks[] = {
    {0x180, {5, 4}, BK_JMP_IND, 0, {1, 2, -1}, 1}, TB(0), TB(1)};
static const struct tblock u_blocks[] = {{0x190, {5, 4}, BK_JMP_IND, 0, {1, -1}, 1}, TB(0)};
/* Jump tables: X, N, H, C through their tables when the emitter can read them
 * (X, N, H: check_dbr_code.c's tab_image, all of ind_code read-only as an ELF's
 * text segment is; C: cap_image, a table of its own). */
#define TB4 {0x1a0, {IND_TARGET_LEN}, BK_RET, 0, {-1}, 1}
#define X_BLOCK(l0, l1, l2) {0x00, {IND_PROLOGUE_LEN, 2, 7}, BK_JMP_IND, 0, {l0, l1, l2, -1}, 1}
#define N_BLOCK(l0, l1, l2) {0x260, {IND_PROLOGUE_LEN, 2, 8}, BK_JMP_IND, 0, {l0, l1, l2, -1}, 1}
/* X linked to T0 and T4, which is in no table: the chain */
static const struct tblock x4_blocks[] = {X_BLOCK(1, 2, -1), TB(0), TB4};
/* B, R, Q, S, A, F: not the table form (a base, rbp with disp32, no index, scale
 * 4, 67, FS): the chain (R, Q, F listed only: rbp is the caller's, Q's target
 * reads what no prologue set, FS is the thread's) */
static const struct tblock b_blocks[] = {
    {0x1c0, {IND_PROLOGUE_LEN, 2, 5, 7}, BK_JMP_IND, 0, {1, 2, 3, -1}, 1}, TB(0), TB(1), TB(2)};
static const struct tblock s_blocks[] = {
    {0x200, {IND_PROLOGUE_LEN, 3, 7}, BK_JMP_IND, 0, {1, 2, 3, -1}, 1}, TB(0), TB(1), TB(2)};
static const struct tblock a67_blocks[] = {
    {0x230, {IND_PROLOGUE_LEN, 2, 8}, BK_JMP_IND, 0, {1, 2, 3, -1}, 1}, TB(0), TB(1), TB(2)};
static const struct tblock rbp_blocks[] = {
    {0x300, {5, 7}, BK_JMP_IND, 0, {1, 2, 3, -1}, 1}, TB(0), TB(1), TB(2)};
static const struct tblock q_slot_blocks[] = {{0x310, {5, 7}, BK_JMP_IND, 0, {1, -1}, 1}, TB(0)};
static const struct tblock f_blocks[] = {
    {0x2d0, {5, 8}, BK_JMP_IND, 0, {1, 2, 3, -1}, 1}, TB(0), TB(1), TB(2)};
/* N: the table form behind a notrack prefix */
static const struct tblock n_blocks[] = {N_BLOCK(1, 2, 3), TB(0), TB(1), TB(2)};
/* H's table ends at entry 2 (no code address): T0 T1 within, T3 beyond */
static const struct tblock h01_blocks[] = {
    {0x290, {IND_PROLOGUE_LEN, 2, 7}, BK_JMP_IND, 0, {1, 2, -1}, 1}, TB(0), TB(1)};
static const struct tblock h03_blocks[] = {
    {0x290, {IND_PROLOGUE_LEN, 2, 7}, BK_JMP_IND, 0, {1, 2, -1}, 1}, TB(0), TB(3)};
/* C's table: 4096 entries T0, then T1 (entry 4096, past the cap) */
static const struct tblock c0_blocks[] = {{0x2c0, {5, 7}, BK_JMP_IND, 0, {1, -1}, 1}, TB(0)};
static const struct tblock c01_blocks[] = {
    {0x2c0, {5, 7}, BK_JMP_IND, 0, {1, 2, -1}, 1}, TB(0), TB(1)};
/* X (T0 T1 T2) and N (T0) in one region: two tables, one after the other */
static const struct tblock xn_blocks[] = {X_BLOCK(2, 3, 4), N_BLOCK(2, -1, -1), TB(0), TB(1),
                                          TB(2)};

/* The prologue's copies, from p; a target's copy, from T(k). */
#define P_ROWS(p) \
    ROW("mov", DBR_COPY, (p) + 0x00), ROW("mov", DBR_COPY, (p) + 0x09), \
    ROW("mov", DBR_COPY, (p) + 0x12), ROW("mov", DBR_COPY, (p) + 0x18), \
    ROW("mov", DBR_COPY, (p) + 0x1e), ROW("add", DBR_COPY, (p) + 0x20)
#define T_ROWS(k) \
    ROW("lahf", DBR_COPY, T(k)), ROW("movzx", DBR_COPY, T(k) + 0x01), \
    ROW("add", DBR_COPY, T(k) + 0x04), ROW("add", DBR_COPY, T(k) + 0x09), \
    ROW("add", DBR_COPY, T(k) + 0x0e), ROW("add", DBR_COPY, T(k) + 0x11), \
    ROW("add", DBR_COPY, T(k) + 0x14), ROW("ret", DBR_COPY, T(k) + 0x1a)
/* The chain at jump j with scratch s: its head (stands for the jump), per
 * target "cmp s, T; je L", the unknown target's exit, and stub L to row r. */
#define CH_HEAD(j, s) \
    OPS("lea", DBR_COPY, j, "rsp, [rsp - 0x80]"), OPS("push", DBR_JUMP, j, s), \
    OPS("pushfq", DBR_JUMP, j, "")
#define CH_CMP(j, s, t, l) OPS("cmp", DBR_JUMP, j, s ", " t), TO("je", DBR_JUMP, j, l)
#define CH_EXIT(j, s) \
    OPS("popfq", DBR_JUMP, j, ""), OPS("xchg", DBR_JUMP, j, "qword ptr [rsp], " s), \
    OPS("ret", DBR_JUMP, j, "0x80")
#define CH_STUB(j, s, r) \
    OPS("popfq", DBR_JUMP, j, ""), OPS("pop", DBR_JUMP, j, s), \
    OPS("lea", DBR_JUMP, j, "rsp, [rsp + 0x80]"), TO("jmp", DBR_JUMP, j, r)

static const struct xrow x_id[] = {
    P_ROWS(0x00),                                                         /* 0-5 */
    ROW("mov", DBR_COPY, 0x23),                                           /* 6 */
    CH_HEAD(0x25, "r11"),                                                 /* 7-9 */
    OPS("mov", DBR_JUMP, 0x25, "r11, qword ptr [rax*8 + 0x40000150]"),    /* 10 */
    CH_CMP(0x25, "r11", "0x400000d0", 20),                                /* 11-12 */
    CH_CMP(0x25, "r11", "0x400000f0", 24),                                /* 13-14 */
    CH_CMP(0x25, "r11", "0x40000110", 28),                                /* 15-16 */
    CH_EXIT(0x25, "r11"),                                                 /* 17-19 */
    CH_STUB(0x25, "r11", 32),                                             /* 20-23: T0' */
    CH_STUB(0x25, "r11", 40),                                             /* 24-27: T1' */
    CH_STUB(0x25, "r11", 48),                                             /* 28-31: T2' */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 32, 40, 48 */
};
static const struct xrow y_id[] = {
    P_ROWS(0x30),                                                         /* 0-5 */
    ROW("mov", DBR_COPY, 0x53),                                           /* 6 */
    CH_HEAD(0x5b, "r11"),                                                 /* 7-9 */
    OPS("mov", DBR_JUMP, 0x5b, "r11, rax"),                               /* 10 */
    CH_CMP(0x5b, "r11", "0x40000110", 18),                                /* 11-12: T2 */
    CH_CMP(0x5b, "r11", "0x400000d0", 22),                                /* 13-14: T0 */
    CH_EXIT(0x5b, "r11"),                                                 /* 15-17 */
    CH_STUB(0x5b, "r11", 34),                                             /* 18-21: T2' */
    CH_STUB(0x5b, "r11", 26),                                             /* 22-25: T0' */
    T_ROWS(0), T_ROWS(2),                                                 /* 26, 34 */
};
static const struct xrow z_id[] = {
    P_ROWS(0x60),                                                         /* 0-5 */
    ROW("mov", DBR_COPY, 0x83),                                           /* 6 */
    RIP("mov", 0x8b, 0x170),                                              /* 7 */
    CH_HEAD(0x92, "r11"),                                                 /* 8-10 */
    RIPW("mov", DBR_JUMP, 0x92, 0x170, "r11, qword ptr [rip *"),        /* 11 */
    CH_CMP(0x92, "r11", "0x400000f0", 19),                                /* 12-13: T1 */
    CH_CMP(0x92, "r11", "0x40000130", 23),                                /* 14-15: T3 */
    CH_EXIT(0x92, "r11"),                                                 /* 16-18 */
    CH_STUB(0x92, "r11", 27),                                             /* 19-22: T1' */
    CH_STUB(0x92, "r11", 35),                                             /* 23-26: T3' */
    T_ROWS(1), T_ROWS(3),                                                 /* 27, 35 */
};
static const struct xrow w_id[] = {
    P_ROWS(0xa0),                                                         /* 0-5 */
    ROW("mov", DBR_COPY, 0xc3),                                           /* 6 */
    CH_HEAD(0xcb, "r10"),                                                 /* 7-9 */
    OPS("mov", DBR_JUMP, 0xcb, "r10, r11"),                               /* 10 */
    CH_CMP(0xcb, "r10", "0x400000d0", 20),                                /* 11-12 */
    CH_CMP(0xcb, "r10", "0x400000f0", 24),                                /* 13-14 */
    CH_CMP(0xcb, "r10", "0x40000110", 28),                                /* 15-16 */
    CH_EXIT(0xcb, "r10"),                                                 /* 17-19 */
    CH_STUB(0xcb, "r10", 32),                                             /* 20-23 */
    CH_STUB(0xcb, "r10", 40),                                             /* 24-27 */
    CH_STUB(0xcb, "r10", 48),                                             /* 28-31 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 32, 40, 48 */
};
static const struct xrow v_id[] = {
    ROW("mov", DBR_COPY, 0x180),                                          /* 0 */
    CH_HEAD(0x185, "r9"),                                                 /* 1-3 */
    OPS("mov", DBR_JUMP, 0x185, "r9, qword ptr [r11 + r10*8]"),           /* 4 */
    CH_CMP(0x185, "r9", "0x400000d0", 12),                                /* 5-6 */
    CH_CMP(0x185, "r9", "0x400000f0", 16),                                /* 7-8 */
    CH_EXIT(0x185, "r9"),                                                 /* 9-11 */
    CH_STUB(0x185, "r9", 20),                                             /* 12-15 */
    CH_STUB(0x185, "r9", 28),                                             /* 16-19 */
    T_ROWS(0), T_ROWS(1),                                                 /* 20, 28 */
};
static const struct xrow u_id[] = {
    ROW("mov", DBR_COPY, 0x190),                                          /* 0 */
    ROW("jmp", DBR_COPY, 0x195),                                          /* 1: as it is */
    T_ROWS(0),                                                            /* 2 */
};
/* A target at offset a (T4's rows). */
#define AT_ROWS(a) \
    ROW("lahf", DBR_COPY, (a)), ROW("movzx", DBR_COPY, (a) + 0x01), \
    ROW("add", DBR_COPY, (a) + 0x04), ROW("add", DBR_COPY, (a) + 0x09), \
    ROW("add", DBR_COPY, (a) + 0x0e), ROW("add", DBR_COPY, (a) + 0x11), \
    ROW("add", DBR_COPY, (a) + 0x14), ROW("ret", DBR_COPY, (a) + 0x1a)
/* The jump tables. Lengths: the prologue 0x23, mov eax, edi 2, jmp [T + rax*8] 7
 * (8 with a prefix), mov eax, imm32 5, a target 0x1b; the table after the code
 * at the next multiple of 8. X: the jump at 0x25, T0' 0x2c, T1' 0x47, T2' 0x62,
 * the code's end 0x7d, three bytes of padding, the table at 0x80. */
static const struct xrow x_tab[] = {
    P_ROWS(0x00),                                                         /* 0-5 */
    ROW("mov", DBR_COPY, 0x23),                                           /* 6 */
    OPS("jmp", DBR_COPY, 0x25, "qword ptr [rax*8 + 0x40100080]"),         /* 7 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 8, 16, 24 */
};
/* the same from 0x7f000000 - 0x26: the jump at 0x7effffff, the table at
 * 0x7effffda + 0x80 (8-aligned in the replacement, not in the address space) */
static const struct xrow x_tab_in[] = {
    P_ROWS(0x00),                                                         /* 0-5 */
    ROW("mov", DBR_COPY, 0x23),                                           /* 6 */
    OPS("jmp", DBR_COPY, 0x25, "qword ptr [rax*8 + 0x7f00005a]"),         /* 7 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 8, 16, 24 */
};
/* N: the jump 8 bytes at 0x25 (DS prefix kept), T0' 0x2d, T1' 0x48, T2' 0x63,
 * the end 0x7e, two bytes of padding, the table at 0x80 */
static const struct xrow n_tab[] = {
    P_ROWS(0x260),                                                        /* 0-5 */
    ROW("mov", DBR_COPY, 0x283),                                          /* 6 */
    OPS("jmp", DBR_COPY, 0x285, "qword ptr ds:[rax*8 + 0x40100080]"),     /* 7 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 8, 16, 24 */
};
/* H over T0 T1: T0' 0x2c, T1' 0x47, the end 0x62, six bytes, the table (two
 * entries) at 0x68 */
static const struct xrow h01_tab[] = {
    P_ROWS(0x290),                                                        /* 0-5 */
    ROW("mov", DBR_COPY, 0x2b3),                                          /* 6 */
    OPS("jmp", DBR_COPY, 0x2b5, "qword ptr [rax*8 + 0x40100068]"),        /* 7 */
    T_ROWS(0), T_ROWS(1),                                                 /* 8, 16 */
};
/* C over T0: the jump at 5, T0' 0xc, the end 0x27, one byte, the table at 0x28 */
static const struct xrow c0_tab[] = {
    ROW("mov", DBR_COPY, 0x2c0),                                          /* 0 */
    OPS("jmp", DBR_COPY, 0x2c5, "qword ptr [rax*8 + 0x40100028]"),        /* 1 */
    T_ROWS(0),                                                            /* 2 */
};
/* X then N: X's jump at 0x25, N's at 0x2c + 0x25 = 0x51, T0' 0x59, T1' 0x74,
 * T2' 0x8f, the end 0xaa, six bytes, X's table at 0xb0, N's at 0xd0 */
static const struct xrow xn_tab[] = {
    P_ROWS(0x00),                                                         /* 0-5 */
    ROW("mov", DBR_COPY, 0x23),                                           /* 6 */
    OPS("jmp", DBR_COPY, 0x25, "qword ptr [rax*8 + 0x401000b0]"),         /* 7 */
    P_ROWS(0x260),                                                        /* 8-13 */
    ROW("mov", DBR_COPY, 0x283),                                          /* 14 */
    OPS("jmp", DBR_COPY, 0x285, "qword ptr ds:[rax*8 + 0x401000d0]"),     /* 15 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 16, 24, 32 */
};
/* The chains instead of a table. */
static const struct xrow x4_id[] = {
    P_ROWS(0x00),                                                         /* 0-5 */
    ROW("mov", DBR_COPY, 0x23),                                           /* 6 */
    CH_HEAD(0x25, "r11"),                                                 /* 7-9 */
    OPS("mov", DBR_JUMP, 0x25, "r11, qword ptr [rax*8 + 0x40000150]"),    /* 10 */
    CH_CMP(0x25, "r11", "0x400000d0", 18),                                /* 11-12: T0 */
    CH_CMP(0x25, "r11", "0x400001a0", 22),                                /* 13-14: T4 */
    CH_EXIT(0x25, "r11"),                                                 /* 15-17 */
    CH_STUB(0x25, "r11", 26),                                             /* 18-21: T0' */
    CH_STUB(0x25, "r11", 34),                                             /* 22-25: T4' */
    T_ROWS(0), AT_ROWS(0x1a0),                                            /* 26, 34 */
};
static const struct xrow b_id[] = {
    P_ROWS(0x1c0),                                                        /* 0-5 */
    ROW("mov", DBR_COPY, 0x1e3),                                          /* 6 */
    ROW("mov", DBR_COPY, 0x1e5),                                          /* 7 */
    CH_HEAD(0x1ea, "r11"),                                                /* 8-10 */
    OPS("mov", DBR_JUMP, 0x1ea, "r11, qword ptr [rdx + rax*8 + 0x40000150]"), /* 11 */
    CH_CMP(0x1ea, "r11", "0x400000d0", 21),                               /* 12-13 */
    CH_CMP(0x1ea, "r11", "0x400000f0", 25),                               /* 14-15 */
    CH_CMP(0x1ea, "r11", "0x40000110", 29),                               /* 16-17 */
    CH_EXIT(0x1ea, "r11"),                                                /* 18-20 */
    CH_STUB(0x1ea, "r11", 33),                                            /* 21-24 */
    CH_STUB(0x1ea, "r11", 41),                                            /* 25-28 */
    CH_STUB(0x1ea, "r11", 49),                                            /* 29-32 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 33, 41, 49 */
};
static const struct xrow s_id[] = {
    P_ROWS(0x200),                                                        /* 0-5 */
    ROW("lea", DBR_COPY, 0x223),                                          /* 6 */
    CH_HEAD(0x226, "r11"),                                                /* 7-9 */
    OPS("mov", DBR_JUMP, 0x226, "r11, qword ptr [rax*4 + 0x40000150]"),   /* 10 */
    CH_CMP(0x226, "r11", "0x400000d0", 20),                               /* 11-12 */
    CH_CMP(0x226, "r11", "0x400000f0", 24),                               /* 13-14 */
    CH_CMP(0x226, "r11", "0x40000110", 28),                               /* 15-16 */
    CH_EXIT(0x226, "r11"),                                                /* 17-19 */
    CH_STUB(0x226, "r11", 32),                                            /* 20-23 */
    CH_STUB(0x226, "r11", 40),                                            /* 24-27 */
    CH_STUB(0x226, "r11", 48),                                            /* 28-31 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 32, 40, 48 */
};
static const struct xrow a67_id[] = {
    P_ROWS(0x230),                                                        /* 0-5 */
    ROW("mov", DBR_COPY, 0x253),                                          /* 6 */
    CH_HEAD(0x255, "r11"),                                                /* 7-9 */
    OPS("mov", DBR_JUMP, 0x255, "r11, qword ptr [eax*8 + 0x40000150]"),   /* 10: 67 kept */
    CH_CMP(0x255, "r11", "0x400000d0", 20),                               /* 11-12 */
    CH_CMP(0x255, "r11", "0x400000f0", 24),                               /* 13-14 */
    CH_CMP(0x255, "r11", "0x40000110", 28),                               /* 15-16 */
    CH_EXIT(0x255, "r11"),                                                /* 17-19 */
    CH_STUB(0x255, "r11", 32),                                            /* 20-23 */
    CH_STUB(0x255, "r11", 40),                                            /* 24-27 */
    CH_STUB(0x255, "r11", 48),                                            /* 28-31 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 32, 40, 48 */
};
static const struct xrow f_id[] = {
    ROW("mov", DBR_COPY, 0x2d0),                                          /* 0 */
    CH_HEAD(0x2d5, "r11"),                                                /* 1-3 */
    OPS("mov", DBR_JUMP, 0x2d5, "r11, qword ptr fs:[rax*8 + 0x40000150]"), /* 4 */
    CH_CMP(0x2d5, "r11", "0x400000d0", 14),                               /* 5-6 */
    CH_CMP(0x2d5, "r11", "0x400000f0", 18),                               /* 7-8 */
    CH_CMP(0x2d5, "r11", "0x40000110", 22),                               /* 9-10 */
    CH_EXIT(0x2d5, "r11"),                                                /* 11-13 */
    CH_STUB(0x2d5, "r11", 26),                                            /* 14-17 */
    CH_STUB(0x2d5, "r11", 34),                                            /* 18-21 */
    CH_STUB(0x2d5, "r11", 42),                                            /* 22-25 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 26, 34, 42 */
};
static const struct xrow rbp_id[] = {
    ROW("mov", DBR_COPY, 0x300),                                          /* 0 */
    CH_HEAD(0x305, "r11"),                                                /* 1-3 */
    OPS("mov", DBR_JUMP, 0x305, "r11, qword ptr [rbp + rax*8 + 0x40000150]"), /* 4 */
    CH_CMP(0x305, "r11", "0x400000d0", 14),                               /* 5-6 */
    CH_CMP(0x305, "r11", "0x400000f0", 18),                               /* 7-8 */
    CH_CMP(0x305, "r11", "0x40000110", 22),                               /* 9-10 */
    CH_EXIT(0x305, "r11"),                                                /* 11-13 */
    CH_STUB(0x305, "r11", 26),                                            /* 14-17 */
    CH_STUB(0x305, "r11", 34),                                            /* 18-21 */
    CH_STUB(0x305, "r11", 42),                                            /* 22-25 */
    T_ROWS(0), T_ROWS(1), T_ROWS(2),                                      /* 26, 34, 42 */
};
static const struct xrow q_slot_id[] = {
    ROW("mov", DBR_COPY, 0x310),                                          /* 0 */
    CH_HEAD(0x315, "r11"),                                                /* 1-3 */
    OPS("mov", DBR_JUMP, 0x315, "r11, qword ptr [0x40000150]"),           /* 4 */
    CH_CMP(0x315, "r11", "0x400000d0", 10),                               /* 5-6 */
    CH_EXIT(0x315, "r11"),                                                /* 7-9 */
    CH_STUB(0x315, "r11", 14),                                            /* 10-13 */
    T_ROWS(0),                                                            /* 14 */
};
/* H over T0 T3: T3 lies past the table's end (entry 2) */
static const struct xrow h03_id[] = {
    P_ROWS(0x290),                                                        /* 0-5 */
    ROW("mov", DBR_COPY, 0x2b3),                                          /* 6 */
    CH_HEAD(0x2b5, "r11"),                                                /* 7-9 */
    OPS("mov", DBR_JUMP, 0x2b5, "r11, qword ptr [rax*8 + 0x400002e0]"),   /* 10 */
    CH_CMP(0x2b5, "r11", "0x400000d0", 18),                               /* 11-12: T0 */
    CH_CMP(0x2b5, "r11", "0x40000130", 22),                               /* 13-14: T3 */
    CH_EXIT(0x2b5, "r11"),                                                /* 15-17 */
    CH_STUB(0x2b5, "r11", 26),                                            /* 18-21 */
    CH_STUB(0x2b5, "r11", 34),                                            /* 22-25 */
    T_ROWS(0), T_ROWS(3),                                                 /* 26, 34 */
};
/* C over T0 T1: T1 only at entry 4096, past the 4096 read */
static const struct xrow c01_id[] = {
    ROW("mov", DBR_COPY, 0x2c0),                                          /* 0 */
    CH_HEAD(0x2c5, "r11"),                                                /* 1-3 */
    OPS("mov", DBR_JUMP, 0x2c5, "r11, qword ptr [rax*8 + 0x40010000]"),   /* 4 */
    CH_CMP(0x2c5, "r11", "0x400000d0", 12),                               /* 5-6 */
    CH_CMP(0x2c5, "r11", "0x400000f0", 16),                               /* 7-8 */
    CH_EXIT(0x2c5, "r11"),                                                /* 9-11 */
    CH_STUB(0x2c5, "r11", 20),                                            /* 12-15 */
    CH_STUB(0x2c5, "r11", 28),                                            /* 16-19 */
    T_ROWS(0), T_ROWS(1),                                                 /* 20, 28 */
};
/* clang-format on */

#endif
