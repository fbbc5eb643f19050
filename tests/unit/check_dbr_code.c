/* Unit tests of profiler/dbr_code (replacement code of a region): small
 * functions hand-assembled below at ORIG, and the indirect jumps' compare chains
 * at IND_ORG (tests/unit/dbr_code_cases.h), hand-made regions over them, the
 * emitted bytes decoded again with Capstone and compared with listings
 * written out by hand from dbr_code.h's rules and profiler/dbr_indirect.c's
 * chain (every jump's destination named as a row of the listing or an original
 * address of the code below, never taken from the emitter's own bookkeeping);
 * then the same functions run on the host CPU, first as they are and then
 * patched into the replacement (the real processor as the reference: it shares
 * nothing with the emitter). */
#include <capstone/capstone.h>
#include <check.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/err.h"
#include "profiler/dbr_code.h"
#include "profiler/dbr_layout.h"
#include "tests/unit/dbr_code_cases.h"
#include "tests/unit/run_suite.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

/* Where the code runs natively: above ASan's high shadow (0x10007fff8000), and
 * with bit 31 set, so that a return address's push imm32 sign-extends to the
 * wrong high half unless "mov dword [rsp+4]" fixes it. */
#define ORIG 0x200080000000ULL
#define REPL (ORIG + 0x100000)
/* The same code below 2 GiB, as a non-PIE program's (under ASan's low application
 * memory's end, 0x7fff8000): the return address's push imm32 alone is all 8 bytes. */
#define LOW 0x30000000ULL
/* The same code with H1's call returning to 2^31 - 1, the last address whose push
 * imm32 sign-extends to itself, to 2^31, whose bit 31 would sign-extend into the
 * high half, and to 2^32 - 1; not page-aligned, and natively only outside ASan,
 * whose shadow lies there. */
#define EDGE_IN (0x7fffffffULL - 0x2c)
#define EDGE_OUT (0x80000000ULL - 0x2c)
#define EDGE_TOP (0xffffffffULL - 0x2c)

/* One instruction a line (clang-format would put one byte a line). */
/* clang-format off */
static const uint8_t code[0x140] = {
    /* A: sum over i < n (at least once) of i for odd i, 2i for even i */
    [0x00] = 0xb8, 0x00, 0x00, 0x00, 0x00, /* 00 A0 mov eax, 0         (point) */
    0x31, 0xc9,                            /* 05    xor ecx, ecx */
    0xf6, 0xc1, 0x01,                      /* 07 A1 test cl, 1 */
    0x74, 0x04,                            /* 0a    je 0x10 (A3) */
    0x01, 0xc8,                            /* 0c A2 add eax, ecx */
    0xeb, 0x03,                            /* 0e    jmp 0x13 (A4) */
    0x8d, 0x04, 0x48,                      /* 10 A3 lea eax, [rax+rcx*2] */
    0xff, 0xc1,                            /* 13 A4 inc ecx */
    0x39, 0xf9,                            /* 15    cmp ecx, edi */
    0x72, 0xee,                            /* 17    jb 0x07 (A1) */
    0xc3,                                  /* 19 A5 ret */
    /* H: n calls of a leaf that adds its return address and 1 to rax */
    [0x20] = 0xb9, 0x00, 0x00, 0x00, 0x00, /* 20 H0 mov ecx, 0         (point) */
    0x31, 0xc0,                            /* 25    xor eax, eax */
    0xe8, 0x14, 0x00, 0x00, 0x00,          /* 27 H1 call 0x40 (L0) */
    0xff, 0xc1,                            /* 2c H2 inc ecx */
    0x39, 0xf9,                            /* 2e    cmp ecx, edi */
    0x72, 0xf5,                            /* 30    jb 0x27 (H1) */
    0xc3,                                  /* 32 H3 ret */
    [0x40] = 0x48, 0x03, 0x04, 0x24,       /* 40 L0 add rax, [rsp] */
    0x48, 0xff, 0xc0,                      /* 44    inc rax */
    0xc3,                                  /* 47    ret */
    /* C: n + (n-1) + ... + 1 by loop, 0 when n is 0 (jecxz) */
    [0x50] = 0xb8, 0x00, 0x00, 0x00, 0x00, /* 50 C0 mov eax, 0         (point) */
    0x48, 0x89, 0xf9,                      /* 55    mov rcx, rdi */
    0x67, 0xe3, 0x04,                      /* 58 C1 jecxz 0x5f (C3) */
    0x01, 0xc8,                            /* 5b C2 add eax, ecx */
    0xe2, 0xfc,                            /* 5d    loop 0x5b (C2) */
    0xc3,                                  /* 5f C3 ret */
    /* D: RIP-relative operands, to K0 .. K3 */
    [0x60] = 0x8b, 0x05, 0x3a, 0x00, 0x00, 0x00,                /* 60 mov eax, [rip+0x3a] (a0) */
    0x48, 0x8d, 0x15, 0x37, 0x00, 0x00, 0x00,                   /* 66 lea rdx, [rip+0x37] (a4) */
    0x03, 0x02,                                                 /* 6d add eax, [rdx] */
    0xf3, 0x48, 0x0f, 0xb8, 0x0d, 0x30, 0x00, 0x00, 0x00,       /* 6f popcnt rcx, [rip+0x30] (a8) */
    0x01, 0xc8,                                                 /* 78 add eax, ecx */
    0x66, 0x0f, 0x3a, 0x0f, 0x05, 0x2c, 0x00, 0x00, 0x00, 0x08, /* 7a palignr xmm0, [rip+0x2c] (b0), 8 */
    0x66, 0x48, 0x0f, 0x7e, 0xc1,                               /* 84 movq rcx, xmm0 */
    0x01, 0xc8,                                                 /* 89 add eax, ecx */
    0xc3,                                                       /* 8b ret */
    [0xa0] = 0x78, 0x56, 0x34, 0x12,             /* K0: 0x12345678 */
    [0xa4] = 0x01, 0x01, 0x01, 0x01,             /* K1: 0x01010101 */
    [0xa8] = 0xff, 0x00, 0xff, 0x00, 0, 0, 0, 0, /* K2: 16 bits set */
    [0xb8] = 0x00, 0x01, 0, 0, 0, 0, 0, 0,       /* K3 at b0 (16-aligned): high qword 0x100 */
    /* V: VEX with a RIP-relative operand */
    [0xc0] = 0xc5, 0xf9, 0x6f, 0x05, 0x00, 0x00, 0x00, 0x00, /* c0 vmovdqa xmm0, [rip] */
    0xc3,                                                    /* c8 ret */
    /* J: indirect transfers through memory, a syscall, a REP */
    [0xd0] = 0xff, 0x15, 0x1a, 0x00, 0x00, 0x00, /* d0 J0 call [rip+0x1a] (f0) */
    0xff, 0x25, 0x14, 0x00, 0x00, 0x00,          /* d6 J1 jmp [rip+0x14] (f0) */
    0x0f, 0x05,                                  /* dc J2 syscall */
    0xf3, 0xa4,                                  /* de J3 rep movsb */
    /* M: C called */
    [0xe0] = 0xe8, 0x6b, 0xff, 0xff, 0xff,       /* e0 M0 call 0x50 (C0) */
    0xc3,                                        /* e5 M1 ret */
    /* G: a jump alone */
    [0xe8] = 0xe9, 0x26, 0xff, 0xff, 0xff,       /* e8 G0 jmp 0x13 (A4) */
    /* P, Q, R: indirect calls not inlined, to a leaf that returns its return address */
    [0x100] = 0x48, 0x8d, 0x05, 0x29, 0x00, 0x00, 0x00, /* 100 P0 lea rax, [rip+0x29] (130) */
    0xff, 0xd0,                                  /* 107    call rax */
    0xc3,                                        /* 109 P1 ret */
    [0x110] = 0xff, 0x15, 0x22, 0x00, 0x00, 0x00, /* 110 Q0 call [rip+0x22] (138) */
    0xc3,                                        /* 116 Q1 ret */
    [0x118] = 0x48, 0x8d, 0x05, 0x11, 0x00, 0x00, 0x00, /* 118 R0 lea rax, [rip+0x11] (130) */
    0x50,                                        /* 11f    push rax */
    0xff, 0x94, 0x24, 0x00, 0x00, 0x00, 0x00,    /* 120    call [rsp+0] (disp32) */
    0x59,                                        /* 127 R1 pop rcx */
    0xc3,                                        /* 128    ret */
    [0x130] = 0x48, 0x8b, 0x04, 0x24,            /* 130 L mov rax, [rsp] */
    0xc3,                                        /* 134   ret */
    [0x138] = LE8(ORIG + 0x130),                 /* 138 Q's slot: L */
};
/* clang-format on */
static const struct image main_image = {code, sizeof(code), ORIG, REPL, NULL, 0, 0};
/* ind_code without read-only bytes: no jump table can be read, the chains */
static const struct image ind_image = {ind_code, sizeof(ind_code), IND_ORG, IND_REPL, NULL, 0, 0};
/* ind_code read-only as a whole (an ELF's text segment is): its tables read */
static const struct image tab_image = {ind_code, sizeof(ind_code), IND_ORG, IND_REPL,
                                       ind_code, sizeof(ind_code), 0};
/* the replacement from where X's jump lands at 0x7effffff (a table) and at
 * 0x7f000000 (the chain: a table after the code might not fit a disp32) */
static const struct image tab_in_image = {ind_code, sizeof(ind_code), IND_ORG, 0x7f000000 - 0x26,
                                          ind_code, sizeof(ind_code), 0};
static const struct image tab_out_image = {ind_code, sizeof(ind_code), IND_ORG, 0x7f000000 - 0x25,
                                           ind_code, sizeof(ind_code), 0};
/* X's table read only up to 4 bytes into entry 2: two entries, T2 not among them */
static const struct image cut_image = {ind_code, sizeof(ind_code), IND_ORG, IND_REPL,
                                       ind_code + 0x150, 0x14, 0x150};
/* C's table at IND_ORG + 0x10000: 4096 entries T0, entry 4096 T1 (filled by main) */
static uint8_t cap_table[4097 * 8];
static const struct image cap_image = {ind_code, sizeof(ind_code), IND_ORG, IND_REPL, cap_table,
                                       sizeof(cap_table), 0x10000};
static const struct image low_image = {code, sizeof(code), LOW, LOW + 0x100000, NULL, 0, 0};
static const struct image in_image = {code, sizeof(code), EDGE_IN, 0x80100000, NULL, 0, 0};
static const struct image out_image = {code, sizeof(code), EDGE_OUT, 0x80100000, NULL, 0, 0};
static const struct image top_image = {code, sizeof(code), EDGE_TOP, 0x100100000, NULL, 0, 0};

#define D_WANT (0x12345678u + 0x01010101u + 16u + 0x100u)
/* each call adds its return address (8 bytes read from [rsp]) + 1 */
#define H_WANT_AT(org, n) ((n) * ((org) + 0x2c) + (n))
#define H_WANT(n) H_WANT_AT(ORIG, n)

struct ecase {
	int line;
	const char *name;
	const struct tblock *b;
	int nb;
	int clone; /* clone 1 inlines 1: H1's call into L0 (block 4), 2: M0's into C0' (2) */
	int pblock, pinsn;
	int layout;
	const struct hot_branch *hot; /* offsets from the image's org in ip */
	int nhot;
	const struct xrow *row;
	int nrow;
	int prow;        /* the row the point's jump goes to */
	int blockrow[9]; /* each block's copy: its first row */
	int entry, nrun; /* native: the function's offset, runs */
	uint64_t arg[4], want[4];
	const struct image *img; /* the code and where it runs */
};

enum { NB = 9 };
static const struct tblock a_blocks[] = {
    {0x00, {5, 2}, BK_NONE, 0, {1, -1}, 1},        /* A0 */
    {0x07, {3, 2}, BK_COND, 0, {3, 2, -1}, 10},    /* A1: je A3, else A2 */
    {0x0c, {2, 2}, BK_JMP, 0, {4, -1}, 1},         /* A2 */
    {0x10, {3}, BK_NONE, 0, {4, -1}, 9},           /* A3 */
    {0x13, {2, 2, 2}, BK_COND, 0, {1, 5, -1}, 10}, /* A4: jb A1, else A5 */
    {0x19, {1}, BK_RET, 0, {-1}, 1},               /* A5 */
};
/* A with the hot side of je the fall-through */
static const struct tblock a_fall_blocks[] = {
    {0x00, {5, 2}, BK_NONE, 0, {1, -1}, 1},        {0x07, {3, 2}, BK_COND, 0, {3, 2, -1}, 10},
    {0x0c, {2, 2}, BK_JMP, 0, {4, -1}, 9},         {0x10, {3}, BK_NONE, 0, {4, -1}, 1},
    {0x13, {2, 2, 2}, BK_COND, 0, {1, 5, -1}, 10}, {0x19, {1}, BK_RET, 0, {-1}, 1},
};
/* A without A2: je's fall side leaves for the original 0x0c */
static const struct tblock a_exit_blocks[] = {
    {0x00, {5, 2}, BK_NONE, 0, {1, -1}, 1}, {0x07, {3, 2}, BK_COND, 0, {2, -1}, 10},
    {0x10, {3}, BK_NONE, 0, {3, -1}, 9},    {0x13, {2, 2, 2}, BK_COND, 0, {1, 4, -1}, 10},
    {0x19, {1}, BK_RET, 0, {-1}, 1},
};
static const struct tblock h_blocks[] = {
    {0x20, {5, 2}, BK_NONE, 0, {1, -1}, 1},        /* H0 */
    {0x27, {5}, BK_CALL, 0, {4, -1}, 10},          /* H1: into clone 1 */
    {0x2c, {2, 2, 2}, BK_COND, 0, {1, 3, -1}, 10}, /* H2: jb H1, else H3 */
    {0x32, {1}, BK_RET, 0, {-1}, 1},               /* H3 */
    {0x40, {4, 3, 1}, BK_RET, 1, {2, -1}, 10},     /* L0 in clone 1: back to H2 */
};
static const struct tblock h_call_blocks[] = {
    {0x20, {5, 2}, BK_NONE, 0, {1, -1}, 1},
    {0x27, {5}, BK_CALL, 0, {-1}, 10},
    {0x2c, {2, 2, 2}, BK_COND, 0, {1, 3, -1}, 10},
    {0x32, {1}, BK_RET, 0, {-1}, 1},
};
/* H from its call on, the call the patch point */
static const struct tblock h_point_blocks[] = {
    {0x27, {5}, BK_CALL, 0, {-1}, 10},             /* H1 */
    {0x2c, {2, 2, 2}, BK_COND, 0, {0, 2, -1}, 10}, /* H2: jb H1, else H3 */
    {0x32, {1}, BK_RET, 0, {-1}, 1},               /* H3 */
};
static const struct tblock c_blocks[] = {
    {0x50, {5, 3}, BK_NONE, 0, {1, -1}, 1},     /* C0 */
    {0x58, {3}, BK_COND, 0, {3, 2, -1}, 1},     /* C1: jecxz C3, else C2 */
    {0x5b, {2, 2}, BK_COND, 0, {2, 3, -1}, 10}, /* C2: loop C2, else C3 */
    {0x5f, {1}, BK_RET, 0, {-1}, 1},            /* C3 */
};
/* M's call to C inlined (clone 1: blocks 2-5), C's own copy beside it
 * (blocks 6-8, reached by nothing); each clone block also lists, last, the own
 * block at the same address, a link that is not its successor. */
static const struct tblock m_blocks[] = {
    {0xe0, {5}, BK_CALL, 0, {2, -1}, 1},           /* M0: into clone 1 */
    {0xe5, {1}, BK_RET, 0, {-1}, 1},               /* M1 */
    {0x50, {5, 3}, BK_NONE, 1, {3, 6, -1}, 1},     /* C0' */
    {0x58, {3}, BK_COND, 1, {5, 4, 8, -1}, 1},     /* C1' */
    {0x5b, {2, 2}, BK_COND, 1, {4, 5, 7, -1}, 10}, /* C2' */
    {0x5f, {1}, BK_RET, 1, {1, -1}, 1},            /* C3': back to M1 */
    {0x58, {3}, BK_COND, 0, {8, 7, -1}, 1},        /* C1 */
    {0x5b, {2, 2}, BK_COND, 0, {7, 8, -1}, 1},     /* C2 */
    {0x5f, {1}, BK_RET, 0, {-1}, 1},               /* C3 */
};
/* A jump alone in its block, its target laid out next (chains by heat). */
static const struct tblock g_blocks[] = {
    {0xe8, {5}, BK_JMP, 0, {1, -1}, 5},     /* G0 */
    {0x13, {2, 2, 2}, BK_COND, 0, {-1}, 1}, /* A4: both sides leave */
};
static const struct tblock d_blocks[] = {{0x60, {6, 7, 2, 9, 2, 10, 5, 2, 1}, BK_RET, 0, {-1}, 1}};
static const struct tblock j_blocks[] = {
    {0xd0, {6}, BK_CALL_IND, 0, {-1}, 1},
    {0xd6, {6}, BK_JMP_IND, 0, {-1}, 1},
    {0xdc, {2}, BK_SYSCALL, 0, {3, -1}, 1},
    {0xde, {2}, BK_REP, 0, {-1}, 1},
};
/* J1 linked to J2, which lies above 2^31: no imm32 holds it, J1 copied as it is */
static const struct tblock j_high_blocks[] = {
    {0xd0, {6}, BK_CALL_IND, 0, {-1}, 1},
    {0xd6, {6}, BK_JMP_IND, 0, {2, -1}, 1},
    {0xdc, {2}, BK_SYSCALL, 0, {3, -1}, 1},
    {0xde, {2}, BK_REP, 0, {-1}, 1},
};
static const struct tblock p_blocks[] = {{0x100, {7, 2}, BK_CALL_IND, 0, {-1}, 1}};
static const struct tblock q_blocks[] = {{0x110, {6}, BK_CALL_IND, 0, {-1}, 1}};
static const struct tblock r_blocks[] = {{0x118, {7, 1, 7}, BK_CALL_IND, 0, {-1}, 1}};

static const struct hot_branch hot_taken[] = {{0x0a, 90, 10}, {0x17, 90, 10}};
static const struct hot_branch hot_fall[] = {{0x0a, 10, 90}, {0x17, 90, 10}};
static const struct hot_branch hot_h[] = {{0x30, 90, 10}};

/* The listings, one emitted instruction a line: mnemonic, what, orig; where a
 * jump goes (a row of the listing, or an original offset); a RIP-relative
 * operand's original target; a pushed return address. */
/* clang-format off */
/* Identity: the blocks in order; je keeps its condition; A2's jmp stays. */
static const struct xrow a_id[] = {
    ROW("mov", DBR_COPY, 0x00),        /* 0 A0 */
    ROW("xor", DBR_COPY, 0x05),        /* 1 */
    ROW("test", DBR_COPY, 0x07),       /* 2 A1 */
    TO("je", DBR_COPY, 0x0a, 6),       /* 3 */
    ROW("add", DBR_COPY, 0x0c),        /* 4 A2 */
    TO("jmp", DBR_COPY, 0x0e, 7),      /* 5 */
    ROW("lea", DBR_COPY, 0x10),        /* 6 A3 */
    ROW("inc", DBR_COPY, 0x13),        /* 7 A4 */
    ROW("cmp", DBR_COPY, 0x15),        /* 8 */
    TO("jb", DBR_COPY, 0x17, 2),       /* 9 */
    ROW("ret", DBR_COPY, 0x19),        /* 10 A5 */
};
/* Hot paths, je mostly taken: chains A0 A1 A3 A4 A5, then A2; je inverted. */
static const struct xrow a_hot[] = {
    ROW("mov", DBR_COPY, 0x00),        /* 0 A0 */
    ROW("xor", DBR_COPY, 0x05),        /* 1 */
    ROW("test", DBR_COPY, 0x07),       /* 2 A1 */
    TO("jne", DBR_INVERTED, 0x0a, 9),  /* 3 */
    ROW("lea", DBR_COPY, 0x10),        /* 4 A3 */
    ROW("inc", DBR_COPY, 0x13),        /* 5 A4 */
    ROW("cmp", DBR_COPY, 0x15),        /* 6 */
    TO("jb", DBR_COPY, 0x17, 2),       /* 7 */
    ROW("ret", DBR_COPY, 0x19),        /* 8 A5 */
    ROW("add", DBR_COPY, 0x0c),        /* 9 A2 */
    TO("jmp", DBR_COPY, 0x0e, 5),      /* 10 */
};
/* Hot paths, je mostly not taken: A0 A1 A2 A4 A5, then A3 (BK_NONE) jumping
 * to A4; A2's jmp left out (A4 next). */
static const struct xrow a_cold[] = {
    ROW("mov", DBR_COPY, 0x00),        /* 0 A0 */
    ROW("xor", DBR_COPY, 0x05),        /* 1 */
    ROW("test", DBR_COPY, 0x07),       /* 2 A1 */
    TO("je", DBR_COPY, 0x0a, 9),       /* 3 */
    ROW("add", DBR_COPY, 0x0c),        /* 4 A2 */
    ROW("inc", DBR_COPY, 0x13),        /* 5 A4 */
    ROW("cmp", DBR_COPY, 0x15),        /* 6 */
    TO("jb", DBR_COPY, 0x17, 2),       /* 7 */
    ROW("ret", DBR_COPY, 0x19),        /* 8 A5 */
    ROW("lea", DBR_COPY, 0x10),        /* 9 A3 */
    TO("jmp", DBR_JUMP, 0x10, 5),      /* 10 */
};
/* Hot paths without hot: successor counts, A4 -> A1 (10) first: chains
 * A2 A4 A1 A3, A0, A5; jb and je both inverted, A3 and A0 jump on. */
static const struct xrow a_counts[] = {
    ROW("add", DBR_COPY, 0x0c),        /* 0 A2 */
    ROW("inc", DBR_COPY, 0x13),        /* 1 A4 */
    ROW("cmp", DBR_COPY, 0x15),        /* 2 */
    TO("jae", DBR_INVERTED, 0x17, 11), /* 3 */
    ROW("test", DBR_COPY, 0x07),       /* 4 A1 */
    TO("jne", DBR_INVERTED, 0x0a, 0),  /* 5 */
    ROW("lea", DBR_COPY, 0x10),        /* 6 A3 */
    TO("jmp", DBR_JUMP, 0x10, 1),      /* 7 */
    ROW("mov", DBR_COPY, 0x00),        /* 8 A0 */
    ROW("xor", DBR_COPY, 0x05),        /* 9 */
    TO("jmp", DBR_JUMP, 0x05, 4),      /* 10 */
    ROW("ret", DBR_COPY, 0x19),        /* 11 A5 */
};
/* An exit edge: je's fall side (A2) is not copied. */
static const struct xrow a_exit[] = {
    ROW("mov", DBR_COPY, 0x00),        /* 0 A0 */
    ROW("xor", DBR_COPY, 0x05),        /* 1 */
    ROW("test", DBR_COPY, 0x07),       /* 2 A1 */
    TO("je", DBR_COPY, 0x0a, 5),       /* 3 */
    OUT("jmp", DBR_JUMP, 0x0a, 0x0c),  /* 4: to the original A2 */
    ROW("lea", DBR_COPY, 0x10),        /* 5 A3 */
    ROW("inc", DBR_COPY, 0x13),        /* 6 A4 */
    ROW("cmp", DBR_COPY, 0x15),        /* 7 */
    TO("jb", DBR_COPY, 0x17, 2),       /* 8 */
    ROW("ret", DBR_COPY, 0x19),        /* 9 A5 */
};
/* The inlined call: return address pushed, the clone's ret a lea and a jump back. */
static const struct xrow h_id[] = {
    ROW("mov", DBR_COPY, 0x20),              /* 0 H0 */
    ROW("xor", DBR_COPY, 0x25),              /* 1 */
    PUSH("push", DBR_CALL_PUSH, 0x27, 0x2c), /* 2 H1 */
    PUSH("mov", DBR_CALL_HIGH, 0x27, 0x2c),  /* 3 */
    TO("jmp", DBR_JUMP, 0x27, 9),            /* 4 */
    ROW("inc", DBR_COPY, 0x2c),              /* 5 H2 */
    ROW("cmp", DBR_COPY, 0x2e),              /* 6 */
    TO("jb", DBR_COPY, 0x30, 2),             /* 7 */
    ROW("ret", DBR_COPY, 0x32),              /* 8 H3 */
    ROW("add", DBR_COPY, 0x40),              /* 9 L0 */
    ROW("inc", DBR_COPY, 0x44),              /* 10 */
    ROW("lea", DBR_RET_POP, 0x47),           /* 11 */
    TO("jmp", DBR_JUMP, 0x47, 5),            /* 12 */
};
/* The same on hot paths: H0 H1 L0 H2 H3, no jumps into or out of the clone. */
static const struct xrow h_hot[] = {
    ROW("mov", DBR_COPY, 0x20),              /* 0 H0 */
    ROW("xor", DBR_COPY, 0x25),              /* 1 */
    PUSH("push", DBR_CALL_PUSH, 0x27, 0x2c), /* 2 H1 */
    PUSH("mov", DBR_CALL_HIGH, 0x27, 0x2c),  /* 3 */
    ROW("add", DBR_COPY, 0x40),              /* 4 L0 */
    ROW("inc", DBR_COPY, 0x44),              /* 5 */
    ROW("lea", DBR_RET_POP, 0x47),           /* 6 */
    ROW("inc", DBR_COPY, 0x2c),              /* 7 H2 */
    ROW("cmp", DBR_COPY, 0x2e),              /* 8 */
    TO("jb", DBR_COPY, 0x30, 2),             /* 9 */
    ROW("ret", DBR_COPY, 0x32),              /* 10 H3 */
};
/* The call not inlined: done here, the original return address pushed, then
 * to the original callee, which returns to the original code. */
static const struct xrow h_call[] = {
    ROW("mov", DBR_COPY, 0x20),              /* 0 H0 */
    ROW("xor", DBR_COPY, 0x25),              /* 1 */
    OUT("jmp", DBR_JUMP, 0x27, 0x27),        /* 2 H1: the original call */
    ROW("inc", DBR_COPY, 0x2c),              /* 3 H2 */
    ROW("cmp", DBR_COPY, 0x2e),              /* 4 */
    TO("jb", DBR_COPY, 0x30, 2),             /* 5 */
    ROW("ret", DBR_COPY, 0x32),              /* 6 H3 */
};
/* The call not inlined, but the patch point: done here, to the original callee. */
static const struct xrow h_point[] = {
    PUSH("push", DBR_CALL_PUSH, 0x27, 0x2c), /* 0 H1 */
    PUSH("mov", DBR_CALL_HIGH, 0x27, 0x2c),  /* 1 */
    OUT("jmp", DBR_JUMP, 0x27, 0x40),        /* 2 */
    ROW("inc", DBR_COPY, 0x2c),              /* 3 H2 */
    ROW("cmp", DBR_COPY, 0x2e),              /* 4 */
    TO("jb", DBR_COPY, 0x30, 0),             /* 5 */
    ROW("ret", DBR_COPY, 0x32),              /* 6 H3 */
};
/* The four above with the return address below 2^31: push imm32 alone, no mov. */
static const struct xrow h_id_low[] = {
    ROW("mov", DBR_COPY, 0x20),              /* 0 H0 */
    ROW("xor", DBR_COPY, 0x25),              /* 1 */
    PUSH("push", DBR_CALL_PUSH, 0x27, 0x2c), /* 2 H1 */
    TO("jmp", DBR_JUMP, 0x27, 8),            /* 3 */
    ROW("inc", DBR_COPY, 0x2c),              /* 4 H2 */
    ROW("cmp", DBR_COPY, 0x2e),              /* 5 */
    TO("jb", DBR_COPY, 0x30, 2),             /* 6 */
    ROW("ret", DBR_COPY, 0x32),              /* 7 H3 */
    ROW("add", DBR_COPY, 0x40),              /* 8 L0 */
    ROW("inc", DBR_COPY, 0x44),              /* 9 */
    ROW("lea", DBR_RET_POP, 0x47),           /* 10 */
    TO("jmp", DBR_JUMP, 0x47, 4),            /* 11 */
};
static const struct xrow h_hot_low[] = {
    ROW("mov", DBR_COPY, 0x20),              /* 0 H0 */
    ROW("xor", DBR_COPY, 0x25),              /* 1 */
    PUSH("push", DBR_CALL_PUSH, 0x27, 0x2c), /* 2 H1 */
    ROW("add", DBR_COPY, 0x40),              /* 3 L0 */
    ROW("inc", DBR_COPY, 0x44),              /* 4 */
    ROW("lea", DBR_RET_POP, 0x47),           /* 5 */
    ROW("inc", DBR_COPY, 0x2c),              /* 6 H2 */
    ROW("cmp", DBR_COPY, 0x2e),              /* 7 */
    TO("jb", DBR_COPY, 0x30, 2),             /* 8 */
    ROW("ret", DBR_COPY, 0x32),              /* 9 H3 */
};
static const struct xrow h_point_low[] = {
    PUSH("push", DBR_CALL_PUSH, 0x27, 0x2c), /* 0 H1 */
    OUT("jmp", DBR_JUMP, 0x27, 0x40),        /* 1 */
    ROW("inc", DBR_COPY, 0x2c),              /* 2 H2 */
    ROW("cmp", DBR_COPY, 0x2e),              /* 3 */
    TO("jb", DBR_COPY, 0x30, 0),             /* 4 */
    ROW("ret", DBR_COPY, 0x32),              /* 5 H3 */
};
/* Trampolines "jecxz L; jmp F'; L: jmp T'" and "loop L; jmp F'; L: jmp T'". */
static const struct xrow c_id[] = {
    ROW("mov", DBR_COPY, 0x50),        /* 0 C0 */
    ROW("mov", DBR_COPY, 0x55),        /* 1 */
    TO("jecxz", DBR_COPY, 0x58, 4),    /* 2 C1 */
    TO("jmp", DBR_JUMP, 0x58, 5),      /* 3: F' */
    TO("jmp", DBR_JUMP, 0x58, 9),      /* 4: T' */
    ROW("add", DBR_COPY, 0x5b),        /* 5 C2 */
    TO("loop", DBR_COPY, 0x5d, 8),     /* 6 */
    TO("jmp", DBR_JUMP, 0x5d, 9),      /* 7: F' */
    TO("jmp", DBR_JUMP, 0x5d, 5),      /* 8: T' */
    ROW("ret", DBR_COPY, 0x5f),        /* 9 C3 */
};
/* Hot paths (successor counts): C2 alone first (its self-link joins nothing),
 * then C0 C1 C3: jecxz's "jmp T'" left out, T' = C3 comes next. */
static const struct xrow c_hot[] = {
    ROW("add", DBR_COPY, 0x5b),        /* 0 C2 */
    TO("loop", DBR_COPY, 0x5d, 3),     /* 1 */
    TO("jmp", DBR_JUMP, 0x5d, 8),      /* 2: F' */
    TO("jmp", DBR_JUMP, 0x5d, 0),      /* 3: T' */
    ROW("mov", DBR_COPY, 0x50),        /* 4 C0 */
    ROW("mov", DBR_COPY, 0x55),        /* 5 */
    TO("jecxz", DBR_COPY, 0x58, 8),    /* 6 C1 */
    TO("jmp", DBR_JUMP, 0x58, 0),      /* 7: F' */
    ROW("ret", DBR_COPY, 0x5f),        /* 8 C3 = T' */
};
/* M's clone first, then C's own copy; no link crosses between them. */
static const struct xrow m_id[] = {
    PUSH("push", DBR_CALL_PUSH, 0xe0, 0xe5), /* 0 M0 */
    PUSH("mov", DBR_CALL_HIGH, 0xe0, 0xe5),  /* 1 */
    TO("jmp", DBR_JUMP, 0xe0, 4),            /* 2 */
    ROW("ret", DBR_COPY, 0xe5),              /* 3 M1 */
    ROW("mov", DBR_COPY, 0x50),              /* 4 C0' */
    ROW("mov", DBR_COPY, 0x55),              /* 5 */
    TO("jecxz", DBR_COPY, 0x58, 8),          /* 6 C1' */
    TO("jmp", DBR_JUMP, 0x58, 9),            /* 7 */
    TO("jmp", DBR_JUMP, 0x58, 13),           /* 8 */
    ROW("add", DBR_COPY, 0x5b),              /* 9 C2' */
    TO("loop", DBR_COPY, 0x5d, 12),          /* 10 */
    TO("jmp", DBR_JUMP, 0x5d, 13),           /* 11 */
    TO("jmp", DBR_JUMP, 0x5d, 9),            /* 12 */
    ROW("lea", DBR_RET_POP, 0x5f),           /* 13 C3' */
    TO("jmp", DBR_JUMP, 0x5f, 3),            /* 14 */
    TO("jecxz", DBR_COPY, 0x58, 17),         /* 15 C1 */
    TO("jmp", DBR_JUMP, 0x58, 18),           /* 16 */
    TO("jmp", DBR_JUMP, 0x58, 22),           /* 17 */
    ROW("add", DBR_COPY, 0x5b),              /* 18 C2 */
    TO("loop", DBR_COPY, 0x5d, 21),          /* 19 */
    TO("jmp", DBR_JUMP, 0x5d, 22),           /* 20 */
    TO("jmp", DBR_JUMP, 0x5d, 18),           /* 21 */
    ROW("ret", DBR_COPY, 0x5f),              /* 22 C3 */
};
/* G0 alone in its block keeps its jmp, though A4 comes next. */
static const struct xrow g_hot[] = {
    TO("jmp", DBR_COPY, 0xe8, 1),      /* 0 G0 */
    ROW("inc", DBR_COPY, 0x13),        /* 1 A4 */
    ROW("cmp", DBR_COPY, 0x15),        /* 2 */
    OUT("jb", DBR_COPY, 0x17, 0x07),   /* 3 */
    OUT("jmp", DBR_JUMP, 0x17, 0x19),  /* 4 */
};
static const struct xrow d_id[] = {
    RIP("mov", 0x60, 0xa0),
    RIP("lea", 0x66, 0xa4),
    ROW("add", DBR_COPY, 0x6d),
    RIP("popcnt", 0x6f, 0xa8),
    ROW("add", DBR_COPY, 0x78),
    RIP("palignr", 0x7a, 0xb0),
    ROW("movq", DBR_COPY, 0x84),
    ROW("add", DBR_COPY, 0x89),
    ROW("ret", DBR_COPY, 0x8b),
};
/* J0 done here: its return address pushed, then "jmp [rip+x]" (FF /4) through
 * its own operand, relocated; J1 without links copied as it is. */
static const struct xrow j_id[] = {
    OUT("jmp", DBR_JUMP, 0xd0, 0xd0),                    /* 0 J0: the original call */
    RIP("jmp", 0xd6, 0xf0),                              /* 1 J1 */
    ROW("syscall", DBR_COPY, 0xdc),                      /* 2 J2 */
    ROW("rep movsb", DBR_COPY, 0xde),                    /* 3 J3 */
    OUT("jmp", DBR_JUMP, 0xde, 0xe0),                    /* 4 */
};
/* an indirect call not inlined: back to the original call */
static const struct xrow p_id[] = {
    RIP("lea", 0x100, 0x130),                            /* 0 P0 */
    OUT("jmp", DBR_JUMP, 0x107, 0x107),                  /* 1 */
};
/* the call the patch point: done here, "call [rip+d]" re-encoded FF /4 */
static const struct xrow q_id[] = {
    PUSH("push", DBR_CALL_PUSH, 0x110, 0x116),           /* 0 Q0 */
    PUSH("mov", DBR_CALL_HIGH, 0x110, 0x116),            /* 1 */
    RIPW("jmp", DBR_JUMP, 0x110, 0x138, "qword ptr [rip *"), /* 2 */
};
/* "call [rsp+0]": the push would move its operand; back to the original call */
static const struct xrow r_id[] = {
    RIP("lea", 0x118, 0x130),                            /* 0 R0 */
    ROW("push", DBR_COPY, 0x11f),                        /* 1 */
    OUT("jmp", DBR_JUMP, 0x120, 0x120),                  /* 2 */
};

#define B(t) t, (int)N(t)
#define X(t) t, (int)N(t)
/* name, blocks, clone, point (block, insn), layout, hot, listing, the point's
 * row, each block's first row; native: entry, runs, arguments, results; image. */
static const struct ecase cases[] = {
    {__LINE__, "loop identity", B(a_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(a_id), 0,
     {0, 2, 4, 6, 7, 10}, 0x00, 1, {10}, {65}, &main_image},
    {__LINE__, "hot taken", B(a_blocks), 0, 0, 0, DBR_HOT_PATHS, X(hot_taken), X(a_hot), 0,
     {0, 2, 9, 4, 5, 8}, 0x00, 1, {10}, {65}, &main_image},
    {__LINE__, "hot fall", B(a_fall_blocks), 0, 0, 0, DBR_HOT_PATHS, X(hot_fall), X(a_cold), 0,
     {0, 2, 4, 9, 5, 8}, 0x00, 1, {10}, {65}, &main_image},
    {__LINE__, "hot counts", B(a_blocks), 0, 0, 0, DBR_HOT_PATHS, NULL, 0, X(a_counts), 8,
     {8, 4, 0, 6, 1, 11}, 0x00, 1, {10}, {65}, &main_image},
    {__LINE__, "exit edge", B(a_exit_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(a_exit), 0,
     {0, 2, 5, 6, 9}, 0x00, 1, {10}, {65}, &main_image},
    {__LINE__, "inlined call", B(h_blocks), 1, 0, 0, DBR_IDENTITY, NULL, 0, X(h_id), 0,
     {0, 2, 5, 8, 9}, 0x20, 1, {10}, {H_WANT(10)}, &main_image},
    {__LINE__, "inlined hot", B(h_blocks), 1, 0, 0, DBR_HOT_PATHS, X(hot_h), X(h_hot), 0,
     {0, 2, 7, 10, 4}, 0x20, 1, {10}, {H_WANT(10)}, &main_image},
    {__LINE__, "call kept", B(h_call_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(h_call), 0,
     {0, 2, 3, 6}, 0x20, 1, {10}, {H_WANT(10)}, &main_image},
    {__LINE__, "call at point", B(h_point_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(h_point), 0,
     {0, 3, 6}, 0x20, 1, {10}, {H_WANT(10)}, &main_image},
    {__LINE__, "loop insns", B(c_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(c_id), 0,
     {0, 2, 5, 9}, 0x50, 2, {10, 0}, {55, 0}, &main_image},
    {__LINE__, "loop insns hot", B(c_blocks), 0, 0, 0, DBR_HOT_PATHS, NULL, 0, X(c_hot), 4,
     {4, 6, 0, 8}, 0x50, 2, {10, 0}, {55, 0}, &main_image},
    {__LINE__, "clone beside own", B(m_blocks), 2, 0, 0, DBR_IDENTITY, NULL, 0, X(m_id), 0,
     {0, 3, 4, 6, 9, 13, 15, 18, 22}, 0xe0, 2, {10, 0}, {55, 0}, &main_image},
    {__LINE__, "jump alone", B(g_blocks), 0, 0, 0, DBR_HOT_PATHS, NULL, 0, X(g_hot), 0,
     {0, 1}, 0, 0, {0}, {0}, &main_image},
    {__LINE__, "rip-relative", B(d_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(d_id), 0,
     {0}, 0x60, 1, {0}, {D_WANT}, &main_image},
    {__LINE__, "indirect", B(j_blocks), 0, 1, 0, DBR_IDENTITY, NULL, 0, X(j_id), 1,
     {0, 1, 2, 3}, 0, 0, {0}, {0}, &main_image},
    {__LINE__, "indirect high", B(j_high_blocks), 0, 1, 0, DBR_IDENTITY, NULL, 0, X(j_id), 1,
     {0, 1, 2, 3}, 0, 0, {0}, {0}, &main_image},
    {__LINE__, "call rax", B(p_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(p_id), 0,
     {0}, 0x100, 1, {0}, {ORIG + 0x109}, &main_image},
    {__LINE__, "call [rip]", B(q_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(q_id), 0,
     {0}, 0x110, 1, {0}, {ORIG + 0x116}, &main_image},
    {__LINE__, "call [rsp]", B(r_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(r_id), 0,
     {0}, 0x118, 1, {0}, {ORIG + 0x127}, &main_image},
    /* the compare chain (tests/unit/dbr_code_cases.h), below 2^31 */
    {__LINE__, "chain table", B(x_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(x_id), 0,
     {0, 32, 40, 48}, 0x00, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &ind_image},
    {__LINE__, "chain rax", B(y_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(y_id), 0,
     {0, 26, 34}, 0x30, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &ind_image},
    {__LINE__, "chain rip", B(z_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(z_id), 0,
     {0, 27, 35}, 0x60, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &ind_image},
    {__LINE__, "chain r11", B(w_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(w_id), 0,
     {0, 32, 40, 48}, 0xa0, 4, {0, 1, 2, 3}, W_WANTS, &ind_image},
    {__LINE__, "chain r11 r10", B(v_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(v_id), 0,
     {0, 20, 28}, 0, 0, {0}, {0}, &ind_image},
    {__LINE__, "chain rsp", B(u_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(u_id), 0,
     {0, 2}, 0, 0, {0}, {0}, &ind_image},
    /* jump tables read (tab_image): the jump copied, aimed at a table of copies */
    {__LINE__, "table", B(x_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(x_tab), 0,
     {0, 8, 16, 24}, 0x00, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    {__LINE__, "table notrack", B(n_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(n_tab), 0,
     {0, 8, 16, 24}, 0x260, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    {__LINE__, "two tables", B(xn_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(xn_tab), 0,
     {0, 8, 16, 24, 32}, 0x00, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    /* H's table ends at entry 2: selectors 0, 1 only (2 reads past the copy's) */
    {__LINE__, "table to a non-code entry", B(h01_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0,
     X(h01_tab), 0, {0, 8, 16}, 0x290, 2, {0, 1}, {IND_WANT(0, IND_R11), IND_WANT(1, IND_R11)},
     &tab_image},
    {__LINE__, "table of 4096", B(c0_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(c0_tab), 0,
     {0, 2}, 0, 0, {0}, {0}, &cap_image},
    {__LINE__, "table just below", B(x_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(x_tab_in), 0,
     {0, 8, 16, 24}, 0, 0, {0}, {0}, &tab_in_image},
    /* the chain after all: a linked target in no table, past the table's end or its
     * cap, a table cut short, not the form, the jump at 0x7f000000 */
    {__LINE__, "table without T4", B(x4_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(x4_id), 0,
     {0, 26, 34}, 0x00, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    {__LINE__, "table ends before T3", B(h03_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(h03_id), 0,
     {0, 26, 34}, 0x290, 3, {0, 1, 3},
     {IND_WANT(0, IND_R11), IND_WANT(1, IND_R11), IND_WANT(3, IND_R11)}, &tab_image},
    {__LINE__, "table past 4096", B(c01_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(c01_id), 0,
     {0, 20, 28}, 0, 0, {0}, {0}, &cap_image},
    {__LINE__, "table cut", B(x_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(x_id), 0,
     {0, 32, 40, 48}, 0x00, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &cut_image},
    {__LINE__, "table base reg", B(b_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(b_id), 0,
     {0, 33, 41, 49}, 0x1c0, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    {__LINE__, "table rbp disp32", B(rbp_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(rbp_id), 0,
     {0, 26, 34, 42}, 0, 0, {0}, {0}, &tab_image},
    {__LINE__, "table no index", B(q_slot_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(q_slot_id),
     0, {0, 14}, 0, 0, {0}, {0}, &tab_image},
    {__LINE__, "table scale 4", B(s_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(s_id), 0,
     {0, 32, 40, 48}, 0x200, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    {__LINE__, "table addr32", B(a67_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(a67_id), 0,
     {0, 32, 40, 48}, 0x230, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    {__LINE__, "table fs", B(f_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(f_id), 0,
     {0, 26, 34, 42}, 0, 0, {0}, {0}, &tab_image},
    {__LINE__, "table rax", B(y_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(y_id), 0,
     {0, 26, 34}, 0x30, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    {__LINE__, "table rip", B(z_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(z_id), 0,
     {0, 27, 35}, 0x60, 4, {0, 1, 2, 3}, IND_WANTS(IND_R11), &tab_image},
    {__LINE__, "table just above", B(x_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(x_id), 0,
     {0, 32, 40, 48}, 0, 0, {0}, {0}, &tab_out_image},
    /* H below 2 GiB: the calls' return addresses pushed by push imm32 alone; L0
     * adds all 8 bytes at [rsp] to the result */
    {__LINE__, "inlined call low", B(h_blocks), 1, 0, 0, DBR_IDENTITY, NULL, 0, X(h_id_low), 0,
     {0, 2, 4, 7, 8}, 0x20, 1, {10}, {H_WANT_AT(LOW, 10)}, &low_image},
    {__LINE__, "inlined hot low", B(h_blocks), 1, 0, 0, DBR_HOT_PATHS, X(hot_h), X(h_hot_low), 0,
     {0, 2, 6, 9, 3}, 0x20, 1, {10}, {H_WANT_AT(LOW, 10)}, &low_image},
    {__LINE__, "call kept low", B(h_call_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(h_call), 0,
     {0, 2, 3, 6}, 0x20, 1, {10}, {H_WANT_AT(LOW, 10)}, &low_image},
    {__LINE__, "call at point low", B(h_point_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0,
     X(h_point_low), 0, {0, 2, 5}, 0x20, 1, {10}, {H_WANT_AT(LOW, 10)}, &low_image},
    /* the edge: returning to 2^31 - 1, push alone; to 2^31 and 2^32 - 1, push and mov */
    {__LINE__, "inlined call 2^31-1", B(h_blocks), 1, 0, 0, DBR_IDENTITY, NULL, 0, X(h_id_low), 0,
     {0, 2, 4, 7, 8}, 0x20, 1, {10}, {H_WANT_AT(EDGE_IN, 10)}, &in_image},
    {__LINE__, "inlined call 2^31", B(h_blocks), 1, 0, 0, DBR_IDENTITY, NULL, 0, X(h_id), 0,
     {0, 2, 5, 8, 9}, 0x20, 1, {10}, {H_WANT_AT(EDGE_OUT, 10)}, &out_image},
    {__LINE__, "inlined call 2^32-1", B(h_blocks), 1, 0, 0, DBR_IDENTITY, NULL, 0, X(h_id), 0,
     {0, 2, 5, 8, 9}, 0x20, 1, {10}, {H_WANT_AT(EDGE_TOP, 10)}, &top_image},
    {__LINE__, "call kept 2^31-1", B(h_call_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0,
     X(h_call), 0, {0, 2, 3, 6}, 0x20, 1, {10}, {H_WANT_AT(EDGE_IN, 10)}, &in_image},
    {__LINE__, "call kept 2^31", B(h_call_blocks), 0, 0, 0, DBR_IDENTITY, NULL, 0, X(h_call), 0,
     {0, 2, 3, 6}, 0x20, 1, {10}, {H_WANT_AT(EDGE_OUT, 10)}, &out_image},
};
/* Each instruction's offset in the replacement, and its length, added up by hand
 * from the encodings (mov ecx 5, xor 2, push imm32 5, mov dword [rsp+4] 8, jmp
 * rel32 5, inc ecx 2, cmp 2, jb rel32 6, ret 1, add rax, [rsp] 4, inc rax 3, lea
 * rsp 5): without the mov, everything after the push 8 bytes earlier. */
static const struct {
	const struct xrow *row;
	uint32_t off[32], len;
} offs[] = {
    {h_id, {0, 5, 7, 12, 20, 25, 27, 29, 35, 36, 40, 43, 48}, 53},
    {h_id_low, {0, 5, 7, 12, 17, 19, 21, 27, 28, 32, 35, 40}, 45},
    {h_hot, {0, 5, 7, 12, 20, 24, 27, 32, 34, 36, 42}, 43},
    {h_hot_low, {0, 5, 7, 12, 16, 19, 24, 26, 28, 34}, 35},
    {h_call, {0, 5, 7, 12, 14, 16, 22}, 23},
    {h_point, {0, 5, 13, 18, 20, 22, 28}, 29},
    {h_point_low, {0, 5, 10, 12, 14, 20}, 21},
    /* X's table: prologue 9 9 6 6 2 3, mov 2, jmp 7, each target lahf 1, movzx 3,
     * add 5 5 3 3 6, ret 1; the code's end 0x7d, the table 0x80 .. 0xa0 */
    {x_tab, {0x00, 0x09, 0x12, 0x18, 0x1e, 0x20, 0x23, 0x25,
             0x2c, 0x2d, 0x30, 0x35, 0x3a, 0x3d, 0x40, 0x46,
             0x47, 0x48, 0x4b, 0x50, 0x55, 0x58, 0x5b, 0x61,
             0x62, 0x63, 0x66, 0x6b, 0x70, 0x73, 0x76, 0x7c}, 0xa0},
};
/* The data after the code (the translated jump tables), added up by hand: the
 * code's length, where the first table starts (0xcc up to it), all bytes, and
 * the entries (the copies' addresses for linked targets, the original entry
 * otherwise), little-endian 8 bytes each; past the last given, it repeats. */
static const struct {
	const struct xrow *row;
	uint32_t code, at, len;
	uint64_t word[8];
} tabs[] = {
    {x_tab, 0x7d, 0x80, 0xa0,
     {IND_REPL + 0x2c, IND_REPL + 0x47, IND_REPL + 0x62, IND_ORG + T(3)}},
    {x_tab_in, 0x7d, 0x80, 0xa0,
     {0x7f000006, 0x7f000021, 0x7f00003c, IND_ORG + T(3)}},
    {n_tab, 0x7e, 0x80, 0xa0,
     {IND_REPL + 0x2d, IND_REPL + 0x48, IND_REPL + 0x63, IND_ORG + T(3)}},
    {h01_tab, 0x62, 0x68, 0x78, {IND_REPL + 0x2c, IND_REPL + 0x47}},
    {c0_tab, 0x27, 0x28, 0x28 + 4096 * 8, {IND_REPL + 0x0c}},
    {xn_tab, 0xaa, 0xb0, 0xf0,
     {IND_REPL + 0x59, IND_REPL + 0x74, IND_REPL + 0x8f, IND_ORG + T(3), /* X's */
      IND_REPL + 0x59, IND_ORG + T(1), IND_ORG + T(2), IND_ORG + T(3)}}, /* N's */
};
/* clang-format on */

/* A region over code, built from a table into fixed storage. */
struct built {
	struct rset_region r;
	struct rset_block blk[NB];
	uint16_t off[NB][11];
	uint32_t succ[NB][4];
	struct rset_clone cl;
	struct rset_point pt;
	struct hot_branch hb[4];
	struct hot_code hot;
};

static void build(struct built *w, const struct tblock *tb, int nb, uint64_t org, int clone, int pb,
                  int pi)
{
	memset(w, 0, sizeof(*w));
	ck_assert_int_le(nb, NB);
	for (int i = 0; i < nb; i++) {
		struct rset_block *b = &w->blk[i];
		b->start = org + tb[i].start, b->off = w->off[i], b->succ = w->succ[i];
		while (tb[i].len[b->ninsns])
			w->off[i][b->ninsns + 1] =
			    (uint16_t)(w->off[i][b->ninsns] + tb[i].len[b->ninsns]),
			                      b->ninsns++;
		while (tb[i].succ[b->nsucc] >= 0)
			w->succ[i][b->nsucc] = (uint32_t)tb[i].succ[b->nsucc], b->nsucc++;
		b->clone = (uint32_t)tb[i].clone, b->kind = (uint8_t)tb[i].kind;
		b->count = tb[i].count;
	}
	w->r = (struct rset_region){.start = org, .block = w->blk, .nblock = (uint32_t)nb};
	if (clone == 1) /* H1's call at 0x27 inlined: L0 (block 4) */
		w->cl = (struct rset_clone){org + 0x27, org + 0x2c, org + 0x40, 0, 4, 1};
	if (clone == 2) /* M0's call at 0xe0 inlined: C0' (block 2) */
		w->cl = (struct rset_clone){org + 0xe0, org + 0xe5, org + 0x50, 0, 2, 1};
	if (clone)
		w->r.clone = &w->cl, w->r.nclone = 1;
	const struct rset_block *b = &w->blk[pb];
	w->pt = (struct rset_point){b->start + b->off[pi], (uint32_t)pb, (uint32_t)pi,
	                            (uint8_t)(b->off[pi + 1] - b->off[pi])};
	w->r.point = &w->pt, w->r.npoint = 1;
}

static const struct hot_code *make_hot(struct built *w, const struct ecase *c)
{
	if (!c->hot)
		return NULL;
	for (int i = 0; i < c->nhot; i++)
		w->hb[i] = c->hot[i], w->hb[i].ip += c->img->org;
	w->hot.branch = w->hb, w->hot.nbranch = (size_t)c->nhot;
	return &w->hot;
}

static struct dbr_code *emit_case(const struct ecase *c, uint64_t base)
{
	const struct image *im = c->img;
	struct built w;
	struct binary *bin;
	build(&w, c->b, c->nb, im->org, c->clone, c->pblock, c->pinsn);
	ck_assert_int_eq(binary_from_code(im->bytes, im->len, im->org, &bin), 0);
	if (im->ro_len)
		ck_assert_int_eq(binary_add_rodata(bin, im->org + im->ro_off, im->ro, im->ro_len), 0);
	struct dbr_code *out = NULL;
	char msg[256] = "";
	int err = dbr_code_emit(&w.r, bin, make_hot(&w, c), (enum dbr_layout)c->layout, base, &out,
	                        msg, sizeof(msg));
	ck_assert_msg(err == 0 && out, "line %d %s: %d %s", c->line, c->name, err, msg);
	binary_free(bin);
	return out;
}

static uint32_t rd32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* Capstone's operand text against a row's: exact, or a prefix when it ends in '*'. */
static int ops_match(const char *got, const char *want)
{
	size_t n = strlen(want);
	return n && want[n - 1] == '*' ? !strncmp(got, want, n - 1) : !strcmp(got, want);
}

/* One decoded row against its expectation. */
static void check_row(const struct ecase *c, const struct dbr_code *d, const cs_insn *in, size_t k)
{
	const struct image *im = c->img;
	const struct xrow *x = &c->row[k];
	const cs_x86 *o = &in[k].detail->x86;
	const struct dbr_insn *m = &d->insn[k];
	int line = x->line;
	ck_assert_msg(!strcmp(in[k].mnemonic, x->mnem), "row line %d: %s %s", line, in[k].mnemonic,
	              in[k].op_str);
	ck_assert_msg(!x->ops || ops_match(in[k].op_str, x->ops), "row line %d: %s %s, want %s",
	              line, in[k].mnemonic, in[k].op_str, x->ops);
	ck_assert_msg(m->off == in[k].address - im->repl && m->len == in[k].size, "row line %d",
	              line);
	ck_assert_msg(m->what == x->what && m->orig == im->org + (unsigned)x->orig,
	              "row line %d: what %d orig %#llx", line, m->what,
	              (unsigned long long)m->orig);
	ck_assert_ptr_eq(dbr_code_insn(d, in[k].address), m);
	if (in[k].size > 1)
		ck_assert_ptr_null(dbr_code_insn(d, in[k].address + 1));
	int direct = o->op_count == 1 && o->operands[0].type == X86_OP_IMM;
	int branch = in[k].mnemonic[0] == 'j' || !strcmp(in[k].mnemonic, "loop");
	if (x->to_row >= 0)
		ck_assert_msg(direct && (uint64_t)o->operands[0].imm == in[x->to_row].address,
		              "row line %d: goes to %#llx", line,
		              (unsigned long long)o->operands[0].imm);
	else if (x->to_orig >= 0)
		ck_assert_msg(
		    direct && (uint64_t)o->operands[0].imm == im->org + (unsigned)x->to_orig,
		    "row line %d: goes to %#llx", line, (unsigned long long)o->operands[0].imm);
	else
		ck_assert_msg(!(branch && direct), "row line %d: a jump nobody expects", line);
	if (x->rip) {
		int j = 0;
		while (j < o->op_count && !(o->operands[j].type == X86_OP_MEM &&
		                            o->operands[j].mem.base == X86_REG_RIP))
			j++;
		ck_assert_msg(j < o->op_count, "row line %d: no RIP operand", line);
		/* new next ip + new disp == the original's next ip + old disp */
		ck_assert_msg(
		    in[k].address + in[k].size + (uint64_t)o->operands[j].mem.disp ==
		        im->org + (unsigned)x->rip,
		    "row line %d: reaches %#llx", line,
		    (unsigned long long)(in[k].address + in[k].size + o->operands[j].mem.disp));
	} else if (x->ret && x->what == DBR_CALL_PUSH) {
		ck_assert(direct && (uint32_t)o->operands[0].imm == (uint32_t)(im->org + x->ret));
		/* what it pushes (Capstone's imm: sign-extended) is all the return
		 * address exactly when no mov of the high half is to follow */
		int high = k + 1 < (size_t)c->nrow && c->row[k + 1].what == DBR_CALL_HIGH;
		ck_assert_msg(((uint64_t)o->operands[0].imm == im->org + (unsigned)x->ret) == !high,
		              "row line %d: push %#llx, the return address %#llx", line,
		              (unsigned long long)o->operands[0].imm,
		              (unsigned long long)(im->org + (unsigned)x->ret));
	} else if (x->ret) { /* mov dword [rsp+4], high half */
		ck_assert(o->op_count == 2 && o->operands[0].mem.base == X86_REG_RSP &&
		          o->operands[0].mem.disp == 4 && o->operands[0].size == 4);
		ck_assert_uint_eq((uint64_t)o->operands[1].imm, (im->org + x->ret) >> 32);
	} else if (x->what == DBR_RET_POP) {
		static const uint8_t lea[] = {0x48, 0x8d, 0x64, 0x24, 0x08};
		ck_assert(in[k].size == 5 && !memcmp(in[k].bytes, lea, 5));
	} else if (x->what == DBR_COPY && !x->ops && !(branch && direct)) { /* byte for byte */
		ck_assert_msg(!memcmp(in[k].bytes, im->bytes + x->orig, in[k].size), "row line %d",
		              line);
	}
}

static uint64_t rd64(const uint8_t *p)
{
	return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

/* The bytes after the code: 0xcc up to the first table, then the entries; no
 * map entry starts among them. */
static void check_tables(const struct ecase *c, const struct dbr_code *d, size_t t)
{
	ck_assert_msg(d->len == tabs[t].len, "line %d %s: %zu bytes, want %u", c->line, c->name,
	              d->len, tabs[t].len);
	for (uint32_t k = tabs[t].code; k < tabs[t].at; k++)
		ck_assert_msg(d->bytes[k] == 0xcc, "line %d %s: byte %#x is %#x", c->line, c->name, k,
		              d->bytes[k]);
	uint64_t want = 0;
	for (uint32_t k = 0; tabs[t].at + 8 * k < tabs[t].len; k++) {
		if (k < N(tabs[t].word) && tabs[t].word[k])
			want = tabs[t].word[k];
		uint64_t got = rd64(d->bytes + tabs[t].at + 8 * k);
		ck_assert_msg(got == want, "line %d %s: entry %u is %#llx, want %#llx", c->line,
		              c->name, k, (unsigned long long)got, (unsigned long long)want);
	}
	for (uint32_t k = tabs[t].code; k < tabs[t].len; k++)
		ck_assert_ptr_null(dbr_code_insn(d, d->base + k));
}

/* 1-4: the listing, its jumps, the map, copy_of_block and the patch bytes; the
 * jump tables after the code. */
/* What an added instruction (or a chain's head, the copy "lea rsp, [rsp-0x80]"
 * standing for its jump) does to RSP, read by capstone: lea rsp, [rsp +- d],
 * push, pushfq, pop, popfq; the program's own instructions move the program's
 * RSP, not the offset. */
static int64_t sp_effect(const cs_insn *in, const struct dbr_insn *m)
{
	const char *mn = in->mnemonic;
	int64_t d;
	int head = m->what == DBR_COPY && !strcmp(mn, "lea") && !strncmp(in->op_str, "rsp, [rsp - ", 12);
	if (m->what != DBR_JUMP && !head)
		return 0;
	if (!strcmp(mn, "lea") && sscanf(in->op_str, "rsp, [rsp + %" SCNi64 "]", &d) == 1)
		return d;
	if (!strcmp(mn, "lea") && sscanf(in->op_str, "rsp, [rsp - %" SCNi64 "]", &d) == 1)
		return -d;
	if (!strcmp(mn, "push") || !strcmp(mn, "pushfq"))
		return -8;
	if (!strcmp(mn, "pop") || !strcmp(mn, "popfq"))
		return 8;
	return 0;
}

/* Each instruction's sp_off against the stack the code itself moves, walked in
 * layout order from 0: a je's target starts from the je's depth, and after a
 * jmp or ret the next instruction from the depth a je to it gave (0: none). */
static void check_sp_offsets(const struct ecase *c, const struct dbr_code *d, const cs_insn *in, size_t n)
{
	int64_t depth = 0, at_row[512];
	int known[512] = {0};
	ck_assert_uint_le(n, 512);
	for (size_t k = 0; k < n; k++) {
		const char *mn = in[k].mnemonic;
		if (k > 0 && (!strcmp(in[k - 1].mnemonic, "jmp") || !strcmp(in[k - 1].mnemonic, "ret")))
			depth = known[k] ? at_row[k] : 0;
		else if (known[k])
			ck_assert_msg(at_row[k] == depth, "line %d %s: row %zu reached at %" PRId64 " and %" PRId64,
			              c->line, c->name, k, at_row[k], depth);
		ck_assert_msg(d->insn[k].sp_off == depth, "line %d %s: row %zu (%s %s) sp_off %d, the code's %" PRId64,
		              c->line, c->name, k, mn, in[k].op_str, d->insn[k].sp_off, depth);
		if (!strcmp(mn, "je"))
			for (size_t t = 0; t < n; t++)
				if (in[t].address == (uint64_t)in[k].detail->x86.operands[0].imm)
					at_row[t] = depth, known[t] = 1;
		depth += sp_effect(&in[k], &d->insn[k]);
	}
}

START_TEST(emitted)
{
	const struct ecase *c = &cases[_i];
	const struct image *im = c->img;
	struct dbr_code *d = emit_case(c, im->repl);
	csh cs;
	cs_insn *in;
	size_t code_len = d->len, tab = N(tabs);
	for (size_t t = 0; t < N(tabs); t++)
		if (tabs[t].row == c->row)
			tab = t, code_len = tabs[t].code;
	ck_assert_int_eq(cs_open(CS_ARCH_X86, CS_MODE_64, &cs), CS_ERR_OK);
	cs_option(cs, CS_OPT_DETAIL, CS_OPT_ON);
	ck_assert_uint_le(code_len, d->len);
	size_t n = cs_disasm(cs, d->bytes, code_len, im->repl, 0, &in);
	ck_assert_msg(n == (size_t)c->nrow && d->ninsn == n,
	              "line %d %s: %zu instructions, %zu mapped", c->line, c->name, n, d->ninsn);
	ck_assert_uint_eq(in[n - 1].address + in[n - 1].size, im->repl + code_len);
	if (tab < N(tabs))
		check_tables(c, d, tab);
	for (size_t k = 0; k < n; k++)
		check_row(c, d, in, k);
	check_sp_offsets(c, d, in, n);
	for (size_t t = 0; t < N(offs); t++) {
		if (offs[t].row != c->row)
			continue;
		for (size_t k = 0; k < n; k++)
			ck_assert_msg(d->insn[k].off == offs[t].off[k] &&
			                  in[k].address == im->repl + offs[t].off[k],
			              "line %d %s: row %zu at %u, want %u", c->line, c->name, k,
			              d->insn[k].off, offs[t].off[k]);
		ck_assert_msg(d->len == offs[t].len, "line %d %s: %u bytes, want %u", c->line,
		              c->name, (unsigned)d->len, offs[t].len);
	}
	for (int b = 0; b < c->nb; b++)
		if (c->blockrow[b] >= 0)
			ck_assert_msg(d->copy_of_block[b] == in[c->blockrow[b]].address,
			              "line %d block %d", c->line, b);
	const struct tblock *pb = &c->b[c->pblock];
	unsigned at = pb->start;
	for (int i = 0; i < c->pinsn; i++)
		at += (unsigned)pb->len[i];
	ck_assert_uint_eq(d->npatch, 1);
	const struct dbr_patch *p = &d->patch[0];
	ck_assert_uint_eq(p->addr, im->org + at);
	ck_assert_uint_eq(p->dest, in[c->prow].address);
	ck_assert_uint_eq(p->jmp[0], 0xe9);
	ck_assert_uint_eq(rd32(p->jmp + 1), (uint32_t)(in[c->prow].address - (im->org + at + 5)));
	ck_assert(!memcmp(p->orig, im->bytes + at, 5));
	cs_free(in, n);
	cs_close(&cs);
	dbr_code_free(d);
}
END_TEST

static uint8_t *map_at(uint64_t addr, size_t len)
{
	void *p = mmap((void *)(uintptr_t)addr, len, PROT_READ | PROT_WRITE | PROT_EXEC,
	               MAP_PRIVATE | MAP_ANONYMOUS | MAP_FIXED_NOREPLACE, -1, 0);
	if (p == MAP_FAILED)
		return NULL;
	if ((uintptr_t)p != addr) { /* a kernel without MAP_FIXED_NOREPLACE took it as a hint */
		munmap(p, len);
		return NULL;
	}
	return p;
}

typedef uint64_t (*entry_fn)(uint64_t);

/* 5: the function on the host CPU, as it is and then patched into its
 * replacement; the same results, which are also the hand-computed ones. */
START_TEST(native)
{
	const struct ecase *c = &cases[_i];
	const struct image *im = c->img;
	if (!c->nrun)
		return;
	/* the pages the code lies on (EDGE_IN and the others start inside a page) */
	uint64_t page = im->org & ~0xfffULL;
	size_t olen = (size_t)((im->org - page + im->len + 0xfff) & ~0xfffULL);
	uint8_t *m = map_at(page, olen), *r = map_at(im->repl, 0x10000);
	if (!m || !r) {
		printf("native %s: skipped: the host refused memory at %#llx or %#llx\n", c->name,
		       (unsigned long long)im->org, (unsigned long long)im->repl);
		return;
	}
	uint8_t *o = m + (im->org - page);
	memcpy(o, im->bytes, im->len);
	entry_fn f = (entry_fn)(uintptr_t)(im->org + (unsigned)c->entry);
	for (int k = 0; k < c->nrun; k++) {
		uint64_t got = f(c->arg[k]);
		ck_assert_msg(got == c->want[k],
		              "line %d %s: unpatched f(%llu) = %#llx, want %#llx", c->line, c->name,
		              (unsigned long long)c->arg[k], (unsigned long long)got,
		              (unsigned long long)c->want[k]);
	}
	struct dbr_code *d = emit_case(c, im->repl);
	ck_assert_uint_le(d->len, 0x10000);
	memcpy(r, d->bytes, d->len);
	for (size_t k = 0; k < d->npatch; k++)
		memcpy(o + (d->patch[k].addr - im->org), d->patch[k].jmp, 5);
	/* an indirect jump's linked targets are reached inside (profiler/region_set.h):
	 * their originals become int3, which traps should the jump leave for them */
	for (int b = 0; b < c->nb; b++)
		for (int s = 0; c->b[b].kind == BK_JMP_IND && c->b[b].succ[s] >= 0; s++)
			o[c->b[c->b[b].succ[s]].start] = 0xcc;
	for (int k = 0; k < c->nrun; k++) {
		uint64_t got = f(c->arg[k]);
		ck_assert_msg(got == c->want[k], "line %d %s: patched f(%llu) = %#llx, want %#llx",
		              c->line, c->name, (unsigned long long)c->arg[k],
		              (unsigned long long)got, (unsigned long long)c->want[k]);
	}
	dbr_code_free(d);
	munmap(m, olen), munmap(r, 0x10000);
}
END_TEST

/* 6: refusals, each with its reason. */
static const struct tblock bad_off[] = {{0x00, {4, 3}, BK_NONE, 0, {-1}, 1}};
static const struct tblock bad_kind[] = {{0x19, {1}, BK_JMP, 0, {-1}, 1}};
static const struct tblock bad_mid[] = {{0x07, {3, 2, 2, 2}, BK_JMP, 0, {-1}, 1}};
static const struct tblock bad_vex[] = {{0xc0, {8, 1}, BK_RET, 0, {-1}, 1}};
static const struct tblock bad_addr[] = {{0x200, {5}, BK_NONE, 0, {-1}, 1}};
static const struct tblock bad_link[] = {{0x00, {5, 2}, BK_NONE, 0, {5, -1}, 1}};
static const struct tblock bad_ind[] = {{0x120, {7}, BK_CALL_IND, 0, {-1}, 1}}; /* [rsp+0] */

static const struct {
	int line;
	const struct tblock *b;
	int nb, pinsn;
	uint64_t base;
	int err;
	const char *says;
} bads[] = {
    {__LINE__, B(a_exit_blocks), 0, ORIG + 0x90000000ULL, PMUSIM_ERR_UNSUPPORTED, "cannot reach"},
    {__LINE__, B(d_blocks), 0, ORIG - 0x90000000ULL, PMUSIM_ERR_UNSUPPORTED, "cannot reach"},
    {__LINE__, B(bad_off), 0, REPL, PMUSIM_ERR_FORMAT, "not one instruction of 4 bytes"},
    {__LINE__, B(bad_kind), 0, REPL, PMUSIM_ERR_FORMAT, "kind \"jmp\""},
    {__LINE__, B(bad_mid), 0, REPL, PMUSIM_ERR_FORMAT, "(je "},
    {__LINE__, B(bad_vex), 0, REPL, PMUSIM_ERR_UNSUPPORTED, "cannot be relocated"},
    {__LINE__, B(bad_addr), 0, REPL, PMUSIM_ERR_FORMAT, "can be read"},
    {__LINE__, B(bad_link), 0, REPL, PMUSIM_ERR_FORMAT, "out of range"},
    {__LINE__, B(bad_ind), 0, REPL, PMUSIM_ERR_UNSUPPORTED, "indirect call"},
    {__LINE__, B(a_blocks), 1, REPL, PMUSIM_ERR_FORMAT, "5 bytes"}, /* xor: 2 bytes */
};

START_TEST(refused)
{
	struct built w;
	struct binary *bin;
	build(&w, bads[_i].b, bads[_i].nb, ORIG, 0, 0, bads[_i].pinsn);
	ck_assert_int_eq(binary_from_code(code, sizeof(code), ORIG, &bin), 0);
	struct dbr_code *out = (struct dbr_code *)&w;
	char msg[256] = "";
	int err =
	    dbr_code_emit(&w.r, bin, NULL, DBR_IDENTITY, bads[_i].base, &out, msg, sizeof(msg));
	ck_assert_msg(err == bads[_i].err && !out, "line %d: %d", bads[_i].line, err);
	ck_assert_msg(strstr(msg, bads[_i].says), "line %d: %s", bads[_i].line, msg);
	printf("refused (line %d): %s\n", bads[_i].line, msg);
	binary_free(bin);
}
END_TEST

/* The chains alone: 0 -> 1 -> 2 -> 0 is a cycle the hottest links would
 * close: 1 -> 2 (8) first, then of the ties at 7 0 -> 1 (the lower from),
 * so 2 -> 0 is dropped (taken first, it would make the chain 1 2 0); 3 -> 3
 * joins nothing; 0 -> 4 finds 0 taken; block 3 (heat 5) goes between the
 * chain of heat 9 and block 4 (heat 1). */
START_TEST(chains)
{
	struct dbr_link l[] = {{2, 0, 7}, {0, 1, 7}, {1, 2, 8}, {3, 3, 9}, {0, 4, 1}};
	const double heat[] = {9, 2, 2, 5, 1};
	uint32_t order[5];
	static const uint32_t want[] = {0, 1, 2, 3, 4};
	ck_assert_int_eq(dbr_layout_chains(5, heat, l, N(l), order), 0);
	for (size_t i = 0; i < N(want); i++)
		ck_assert_uint_eq(order[i], want[i]);
}
END_TEST

int main(void)
{
	for (size_t k = 0; k < 4097; k++) { /* cap_table: T0 4096 times, then T1 */
		uint64_t v = IND_ORG + (k < 4096 ? T(0) : T(1));
		for (int i = 0; i < 8; i++)
			cap_table[8 * k + (size_t)i] = (uint8_t)(v >> (8 * i));
	}
	Suite *s = suite_create("dbr_code");
	TCase *tc = tcase_create("hand_made");
	tcase_add_loop_test(tc, emitted, 0, (int)N(cases));
	tcase_add_loop_test(tc, native, 0, (int)N(cases));
	tcase_add_loop_test(tc, refused, 0, (int)N(bads));
	tcase_add_test(tc, chains);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
