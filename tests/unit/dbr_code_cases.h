/* Data of tests/unit/check_dbr_code.c: the vocabulary of its tables (blocks,
 * listing rows) and the indirect jumps' cases, whose code runs below 2^31 (the
 * compare chain's "cmp S, imm32" holds only such targets, profiler/dbr_indirect.c).
 * Every byte below is assembled by hand from the Intel SDM vol. 2 (ModRM and SIB
 * in 2.1), every listing written out by hand from the chain that
 * profiler/dbr_indirect.c describes; nothing is taken from the emitter. Included
 * once, by check_dbr_code.c. */
#ifndef PMUSIM_TESTS_UNIT_DBR_CODE_CASES_H
#define PMUSIM_TESTS_UNIT_DBR_CODE_CASES_H

#include <stddef.h>
#include <stdint.h>

#include "profiler/dbr_code.h"

/* A code image: its bytes, where they run natively, where their replacement goes. */
struct image {
	const uint8_t *bytes;
	size_t len;
	uint64_t org, repl;
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

static const uint8_t ind_code[0x1a0] = {
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
/* clang-format on */

#endif
