/* Test data of check_dbr_map.c: small programs hand-assembled at ORIG and, for
 * each, replacement code laid out by hand at 0x300000.. as a dynamic binary
 * rewriter lays it out (profiler/dbr_code.h): relocated copies, added jumps,
 * an inverted jcc, a loop trampoline, an inlined call and return, calls sent
 * back to the original; the map entry of every emitted instruction and the
 * patch jump (E9, dest - (addr + 5)) written over its patch point. Encodings
 * from the Intel SDM vol. 2, checked with objdump. */
#ifndef PMUSIM_TESTS_UNIT_DBR_MAP_CODE_H
#define PMUSIM_TESTS_UNIT_DBR_MAP_CODE_H

#include <stddef.h>
#include <stdint.h>

#include "common/dbr_image.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

#define ORIG 0x401000u
#define ORIG_SIZE 0x200u

/* One instruction a line (clang-format would put one byte a line). */
/* clang-format off */

/* The programs, as their file has them. Each starts at a patch point
 * (an instruction of at least 5 bytes) unless said otherwise. */
static const uint8_t orig_code[ORIG_SIZE] = {
    /* P1: a loop of one block, run 4 times */
    [0x000] = 0xb9, 0x04, 0x00, 0x00, 0x00, /* 401000 mov ecx, 4         (point) */
    0x31, 0xc0,                             /* 401005 xor eax, eax */
    0x48, 0x83, 0xc0, 0x02,                 /* 401007 add rax, 2         (loop) */
    0xff, 0xc9,                             /* 40100b dec ecx */
    0x83, 0xf9, 0x00,                       /* 40100d cmp ecx, 0 */
    0x75, 0xf5,                             /* 401010 jne 0x401007 */
    0xb8, 0x3c, 0x00, 0x00, 0x00,           /* 401012 mov eax, 60 */
    0x0f, 0x05,                             /* 401017 syscall */
    /* P2: a loop entered at its test: body B falls into the test T (a split
     * point: A's jmp goes there), T's jne goes back to B */
    [0x040] = 0xb9, 0x03, 0x00, 0x00, 0x00, /* 401040 A mov ecx, 3       (point) */
    0x31, 0xc0,                             /* 401045   xor eax, eax */
    0xeb, 0x06,                             /* 401047   jmp 0x40104f (T) */
    0x48, 0x83, 0xc0, 0x02,                 /* 401049 B add rax, 2 */
    0xff, 0xc9,                             /* 40104d   dec ecx */
    0x83, 0xf9, 0x00,                       /* 40104f T cmp ecx, 0 */
    0x75, 0xf5,                             /* 401052   jne 0x401049 (B) */
    0xb8, 0x3c, 0x00, 0x00, 0x00,           /* 401054 X mov eax, 60 */
    0x0f, 0x05,                             /* 401059   syscall */
    /* P3: a call and the callee's return */
    [0x080] = 0xb8, 0x07, 0x00, 0x00, 0x00, /* 401080 mov eax, 7         (point) */
    0xe8, 0x16, 0x00, 0x00, 0x00,           /* 401085 call 0x4010a0 */
    0x48, 0x83, 0xc0, 0x01,                 /* 40108a add rax, 1 */
    0xb8, 0x3c, 0x00, 0x00, 0x00,           /* 40108e mov eax, 60 */
    0x0f, 0x05,                             /* 401093 syscall */
    [0x0a0] = 0x48, 0x01, 0xc0,             /* 4010a0 add rax, rax */
    0xc3,                                   /* 4010a3 ret */
    /* P4: a call, also a patch point itself (layout I4b) */
    [0x0c0] = 0x48, 0x05, 0x10, 0x00, 0x00, 0x00, /* 4010c0 add rax, 0x10 (point) */
    0xe8, 0x15, 0x00, 0x00, 0x00,                 /* 4010c6 call 0x4010e0 (point) */
    0xb8, 0x3c, 0x00, 0x00, 0x00,                 /* 4010cb mov eax, 60 */
    0x0f, 0x05,                                   /* 4010d0 syscall */
    [0x0e0] = 0x48, 0xff, 0xc0,                   /* 4010e0 inc rax */
    0xc3,                                         /* 4010e3 ret */
    /* P5: one run over a split point */
    [0x100] = 0xb8, 0x01, 0x00, 0x00, 0x00, /* 401100 mov eax, 1         (point) */
    0x48, 0x83, 0xc0, 0x05,                 /* 401105 add rax, 5         (a block starts) */
    0xb8, 0x3c, 0x00, 0x00, 0x00,           /* 401109 mov eax, 60 */
    0x0f, 0x05,                             /* 40110e syscall */
    /* P6: a direct jmp; the point is not the first instruction */
    [0x120] = 0x31, 0xd2,                   /* 401120 xor edx, edx */
    0xb8, 0x02, 0x00, 0x00, 0x00,           /* 401122 mov eax, 2         (point) */
    0xeb, 0x07,                             /* 401127 jmp 0x401130 */
    0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, 0xcc, /* 401129 int3 (never runs) */
    0x48, 0x83, 0xc0, 0x03,                 /* 401130 add rax, 3 */
    0xb8, 0x3c, 0x00, 0x00, 0x00,           /* 401134 mov eax, 60 */
    0x0f, 0x05,                             /* 401139 syscall */
    /* P7: a REP string instruction */
    [0x140] = 0xb9, 0x08, 0x00, 0x00, 0x00, /* 401140 mov ecx, 8         (point) */
    0xf3, 0xa4,                             /* 401145 rep movsb */
    0x48, 0x89, 0xc3,                       /* 401147 mov rbx, rax */
    0xb8, 0x3c, 0x00, 0x00, 0x00,           /* 40114a mov eax, 60 */
    0x0f, 0x05,                             /* 40114f syscall */
    /* a signal handler and its restorer */
    [0x180] = 0x48, 0xff, 0xc2,             /* 401180 inc rdx */
    0xc3,                                   /* 401183 ret (to the restorer) */
    [0x190] = 0xb8, 0x0f, 0x00, 0x00, 0x00, /* 401190 mov eax, 15 (rt_sigreturn) */
    0x0f, 0x05,                             /* 401195 syscall */
    /* P8: the loop instruction */
    [0x1a0] = 0xb9, 0x03, 0x00, 0x00, 0x00, /* 4011a0 mov ecx, 3         (point) */
    0x48, 0xff, 0xc0,                       /* 4011a5 inc rax */
    0xe2, 0xfb,                             /* 4011a8 loop 0x4011a5 */
    0xb8, 0x3c, 0x00, 0x00, 0x00,           /* 4011aa mov eax, 60 */
    0x0f, 0x05,                             /* 4011af syscall */
    /* P9: a jcc whose target is its own fall-through, taken */
    [0x1c0] = 0xb8, 0x00, 0x00, 0x00, 0x00, /* 4011c0 mov eax, 0         (point) */
    0x85, 0xc0,                             /* 4011c5 test eax, eax (ZF = 1) */
    0x74, 0x00,                             /* 4011c7 je 0x4011c9 */
    0xb8, 0x3c, 0x00, 0x00, 0x00,           /* 4011c9 mov eax, 60 */
    0x0f, 0x05,                             /* 4011ce syscall */
};

/* Replacement code: one region's bytes at base, the map of each emitted
 * instruction, its patch point (npatch 0: none). */
struct layout {
	uint64_t base;
	const uint8_t *bytes;
	size_t len;
	const struct dbr_insn *insn;
	size_t ninsn;
	struct dbr_patch patch;
	size_t npatch;
};

/* I1: P1 as is (identity layout), left by an added jump; then bytes no entry names */
static const uint8_t i1_bytes[] = {
    0xb9, 0x04, 0x00, 0x00, 0x00,       /* 300000 mov ecx, 4 */
    0x31, 0xc0,                         /* 300005 xor eax, eax */
    0x48, 0x83, 0xc0, 0x02,             /* 300007 add rax, 2 */
    0xff, 0xc9,                         /* 30000b dec ecx */
    0x83, 0xf9, 0x00,                   /* 30000d cmp ecx, 0 */
    0x0f, 0x85, 0xf1, 0xff, 0xff, 0xff, /* 300010 jne 0x300007 */
    0xe9, 0xf7, 0x0f, 0x10, 0x00,       /* 300016 jmp 0x401012 */
    0x90, 0x90,                         /* 30001b nop; nop (unmapped) */
    0xe9, 0xf0, 0x0f, 0x10, 0x00,       /* 30001d jmp 0x401012 (unmapped) */
};
static const struct dbr_insn i1_map[] = {
    {0x00, 5, DBR_COPY, 0x401000, 0, 0}, {0x05, 2, DBR_COPY, 0x401005, 0, 0},
    {0x07, 4, DBR_COPY, 0x401007, 0, 0}, {0x0b, 2, DBR_COPY, 0x40100b, 0, 0},
    {0x0d, 3, DBR_COPY, 0x40100d, 0, 0}, {0x10, 6, DBR_COPY, 0x401010, 0, 0},
    {0x16, 5, DBR_JUMP, 0x401010, 0, 0},
};

/* I2h: P2 under hot paths: A T B, A's jmp left out (T is next), T's jne
 * inverted (its taken side B is next), B jumps back to T */
static const uint8_t i2h_bytes[] = {
    0xb9, 0x03, 0x00, 0x00, 0x00,       /* 300100 A' mov ecx, 3 */
    0x31, 0xc0,                         /* 300105    xor eax, eax */
    0x83, 0xf9, 0x00,                   /* 300107 T' cmp ecx, 0 */
    0x0f, 0x84, 0x44, 0x0f, 0x10, 0x00, /* 30010a    je 0x401054 (X, original) */
    0x48, 0x83, 0xc0, 0x02,             /* 300110 B' add rax, 2 */
    0xff, 0xc9,                         /* 300114    dec ecx */
    0xe9, 0xec, 0xff, 0xff, 0xff,       /* 300116    jmp 0x300107 (T') */
};
static const struct dbr_insn i2h_map[] = {
    {0x00, 5, DBR_COPY, 0x401040, 0, 0},     {0x05, 2, DBR_COPY, 0x401045, 0, 0},
    {0x07, 3, DBR_COPY, 0x40104f, 0, 0},     {0x0a, 6, DBR_INVERTED, 0x401052, 0, 0},
    {0x10, 4, DBR_COPY, 0x401049, 0, 0},     {0x14, 2, DBR_COPY, 0x40104d, 0, 0},
    {0x16, 5, DBR_JUMP, 0x40104d, 0, 0},
};

/* I2i: P2 under the identity layout: A B T, A's jmp widened, then the exit */
static const uint8_t i2i_bytes[] = {
    0xb9, 0x03, 0x00, 0x00, 0x00,       /* 300200 A' mov ecx, 3 */
    0x31, 0xc0,                         /* 300205    xor eax, eax */
    0xe9, 0x06, 0x00, 0x00, 0x00,       /* 300207    jmp 0x300212 (T') */
    0x48, 0x83, 0xc0, 0x02,             /* 30020c B' add rax, 2 */
    0xff, 0xc9,                         /* 300210    dec ecx */
    0x83, 0xf9, 0x00,                   /* 300212 T' cmp ecx, 0 */
    0x0f, 0x85, 0xf1, 0xff, 0xff, 0xff, /* 300215    jne 0x30020c (B') */
    0xe9, 0x34, 0x0e, 0x10, 0x00,       /* 30021b    jmp 0x401054 (X) */
};
static const struct dbr_insn i2i_map[] = {
    {0x00, 5, DBR_COPY, 0x401040, 0, 0}, {0x05, 2, DBR_COPY, 0x401045, 0, 0},
    {0x07, 5, DBR_COPY, 0x401047, 0, 0}, {0x0c, 4, DBR_COPY, 0x401049, 0, 0},
    {0x10, 2, DBR_COPY, 0x40104d, 0, 0}, {0x12, 3, DBR_COPY, 0x40104f, 0, 0},
    {0x15, 6, DBR_COPY, 0x401052, 0, 0}, {0x1b, 5, DBR_JUMP, 0x401052, 0, 0},
};

/* I3: P3 with the call inlined: M' R' F' */
static const uint8_t i3_bytes[] = {
    0xb8, 0x07, 0x00, 0x00, 0x00,             /* 300300 M' mov eax, 7 */
    0x68, 0x8a, 0x10, 0x40, 0x00,             /* 300305    push 0x40108a */
    0xc7, 0x44, 0x24, 0x04, 0, 0, 0, 0,       /* 30030a    mov dword [rsp+4], 0 */
    0xe9, 0x10, 0x00, 0x00, 0x00,             /* 300312    jmp 0x300327 (F') */
    0x48, 0x83, 0xc0, 0x01,                   /* 300317 R' add rax, 1 */
    0xb8, 0x3c, 0x00, 0x00, 0x00,             /* 30031b    mov eax, 60 */
    0x0f, 0x05,                               /* 300320    syscall */
    0xe9, 0x6e, 0x0d, 0x10, 0x00,             /* 300322    jmp 0x401095 (its fall-through) */
    0x48, 0x01, 0xc0,                         /* 300327 F' add rax, rax */
    0x48, 0x8d, 0x64, 0x24, 0x08,             /* 30032a    lea rsp, [rsp+8] */
    0xe9, 0xe3, 0xff, 0xff, 0xff,             /* 30032f    jmp 0x300317 (R') */
};
static const struct dbr_insn i3_map[] = {
    {0x00, 5, DBR_COPY, 0x401080, 0, 0},      {0x05, 5, DBR_CALL_PUSH, 0x401085, 0, 0},
    {0x0a, 8, DBR_CALL_HIGH, 0x401085, 0, 0}, {0x12, 5, DBR_JUMP, 0x401085, 0, 0},
    {0x17, 4, DBR_COPY, 0x40108a, 0, 0},      {0x1b, 5, DBR_COPY, 0x40108e, 0, 0},
    {0x20, 2, DBR_COPY, 0x401093, 0, 0},      {0x22, 5, DBR_JUMP, 0x401093, 0, 0},
    {0x27, 3, DBR_COPY, 0x4010a0, 0, 0},      {0x2a, 5, DBR_RET_POP, 0x4010a3, 0, 0},
    {0x2f, 5, DBR_JUMP, 0x4010a3, 0, 0},
};

/* I4: P4's first block; its call not inlined: a jump back to it */
static const uint8_t i4_bytes[] = {
    0x48, 0x05, 0x10, 0x00, 0x00, 0x00, /* 300400 add rax, 0x10 */
    0xe9, 0xbb, 0x0c, 0x10, 0x00,       /* 300406 jmp 0x4010c6 (the call) */
};
static const struct dbr_insn i4_map[] = {
    {0x00, 6, DBR_COPY, 0x4010c0, 0, 0},
    {0x06, 5, DBR_JUMP, 0x4010c6, 0, 0},
};

/* I4b: P4's call as a patch point: done here, to the original callee */
static const uint8_t i4b_bytes[] = {
    0x68, 0xcb, 0x10, 0x40, 0x00,       /* 300900 push 0x4010cb */
    0xc7, 0x44, 0x24, 0x04, 0, 0, 0, 0, /* 300905 mov dword [rsp+4], 0 */
    0xe9, 0xce, 0x07, 0x10, 0x00,       /* 30090d jmp 0x4010e0 */
};
static const struct dbr_insn i4b_map[] = {
    {0x00, 5, DBR_CALL_PUSH, 0x4010c6, 0, 0},
    {0x05, 8, DBR_CALL_HIGH, 0x4010c6, 0, 0},
    {0x0d, 5, DBR_JUMP, 0x4010c6, 0, 0},
};

/* I5: P5's two blocks, the one after the split point laid out first */
static const uint8_t i5_bytes[] = {
    0x48, 0x83, 0xc0, 0x05,       /* 300500 add rax, 5 */
    0xb8, 0x3c, 0x00, 0x00, 0x00, /* 300504 mov eax, 60 */
    0x0f, 0x05,                   /* 300509 syscall */
    0xe9, 0x00, 0x0c, 0x10, 0x00, /* 30050b jmp 0x401110 (its fall-through) */
    0xb8, 0x01, 0x00, 0x00, 0x00, /* 300510 mov eax, 1 (the point's copy) */
    0xe9, 0xe6, 0xff, 0xff, 0xff, /* 300515 jmp 0x300500 */
};
static const struct dbr_insn i5_map[] = {
    {0x00, 4, DBR_COPY, 0x401105, 0, 0}, {0x04, 5, DBR_COPY, 0x401109, 0, 0},
    {0x09, 2, DBR_COPY, 0x40110e, 0, 0}, {0x0b, 5, DBR_JUMP, 0x40110e, 0, 0},
    {0x10, 5, DBR_COPY, 0x401100, 0, 0}, {0x15, 5, DBR_JUMP, 0x401100, 0, 0},
};

/* I6: P6 from the point, the jmp left out (its target's copy is next) */
static const uint8_t i6_bytes[] = {
    0xb8, 0x02, 0x00, 0x00, 0x00, /* 300600 mov eax, 2 */
    0x48, 0x83, 0xc0, 0x03,       /* 300605 add rax, 3 */
    0xb8, 0x3c, 0x00, 0x00, 0x00, /* 300609 mov eax, 60 */
    0x0f, 0x05,                   /* 30060e syscall */
    0xe9, 0x26, 0x0b, 0x10, 0x00, /* 300610 jmp 0x40113b (its fall-through) */
};
static const struct dbr_insn i6_map[] = {
    {0x00, 5, DBR_COPY, 0x401122, 0, 0}, {0x05, 4, DBR_COPY, 0x401130, 0, 0},
    {0x09, 5, DBR_COPY, 0x401134, 0, 0}, {0x0e, 2, DBR_COPY, 0x401139, 0, 0},
    {0x10, 5, DBR_JUMP, 0x401139, 0, 0},
};

/* I7: P7's first block, back to the original after the REP */
static const uint8_t i7_bytes[] = {
    0xb9, 0x08, 0x00, 0x00, 0x00, /* 300700 mov ecx, 8 */
    0xf3, 0xa4,                   /* 300705 rep movsb */
    0xe9, 0x3b, 0x0a, 0x10, 0x00, /* 300707 jmp 0x401147 */
};
static const struct dbr_insn i7_map[] = {
    {0x00, 5, DBR_COPY, 0x401140, 0, 0},
    {0x05, 2, DBR_COPY, 0x401145, 0, 0},
    {0x07, 5, DBR_JUMP, 0x401145, 0, 0},
};

/* I7b: P7 with the REP laid out first (a block starts there), its first
 * block after it */
static const uint8_t i7b_bytes[] = {
    0xf3, 0xa4,                   /* 300c00 rep movsb */
    0xe9, 0x40, 0x05, 0x10, 0x00, /* 300c02 jmp 0x401147 */
    0xb9, 0x08, 0x00, 0x00, 0x00, /* 300c07 mov ecx, 8 (the point's copy) */
    0xe9, 0xef, 0xff, 0xff, 0xff, /* 300c0c jmp 0x300c00 */
};
static const struct dbr_insn i7b_map[] = {
    {0x00, 2, DBR_COPY, 0x401145, 0, 0},
    {0x02, 5, DBR_JUMP, 0x401145, 0, 0},
    {0x07, 5, DBR_COPY, 0x401140, 0, 0},
    {0x0c, 5, DBR_JUMP, 0x401140, 0, 0},
};

/* I8: an added jump to itself (a map that never reaches an original) */
static const uint8_t i8_bytes[] = {
    0xe9, 0xfb, 0xff, 0xff, 0xff, /* 300800 jmp 0x300800 */
};
static const struct dbr_insn i8_map[] = {
    {0x00, 5, DBR_JUMP, 0x401000, 0, 0},
};

/* I9: P8 with the loop's trampoline: "loop L; jmp F; L: jmp T" */
static const uint8_t i9_bytes[] = {
    0xb9, 0x03, 0x00, 0x00, 0x00, /* 300a00 mov ecx, 3 */
    0x48, 0xff, 0xc0,             /* 300a05 inc rax */
    0xe2, 0x05,                   /* 300a08 loop 0x300a0f */
    0xe9, 0x9b, 0x07, 0x10, 0x00, /* 300a0a jmp 0x4011aa (fall side, original) */
    0xe9, 0xf1, 0xff, 0xff, 0xff, /* 300a0f jmp 0x300a05 (taken side) */
};
static const struct dbr_insn i9_map[] = {
    {0x00, 5, DBR_COPY, 0x4011a0, 0, 0}, {0x05, 3, DBR_COPY, 0x4011a5, 0, 0},
    {0x08, 2, DBR_COPY, 0x4011a8, 0, 0}, {0x0a, 5, DBR_JUMP, 0x4011a8, 0, 0},
    {0x0f, 5, DBR_JUMP, 0x4011a8, 0, 0},
};

/* I10: P9's block, both sides of its je back to the original */
static const uint8_t i10_bytes[] = {
    0xb8, 0x00, 0x00, 0x00, 0x00,       /* 300b00 mov eax, 0 */
    0x85, 0xc0,                         /* 300b05 test eax, eax */
    0x0f, 0x84, 0xbc, 0x06, 0x10, 0x00, /* 300b07 je 0x4011c9 */
    0xe9, 0xb7, 0x06, 0x10, 0x00,       /* 300b0d jmp 0x4011c9 */
};
static const struct dbr_insn i10_map[] = {
    {0x00, 5, DBR_COPY, 0x4011c0, 0, 0},
    {0x05, 2, DBR_COPY, 0x4011c5, 0, 0},
    {0x07, 6, DBR_COPY, 0x4011c7, 0, 0},
    {0x0d, 5, DBR_JUMP, 0x4011c7, 0, 0},
};

/* Each layout with its patch point: addr, dest, the jump written there (E9 and
 * dest - (addr + 5)), the bytes it replaces. */
#define BYTES5(a, b, c, d, e) {a, b, c, d, e}
#define DBR_LAYOUT(base, b, m, addr, dest, jmp, orig)                                              \
	{base, b, sizeof(b), m, N(m), {addr, dest, jmp, orig}, 1}
static const struct layout l1 = DBR_LAYOUT(0x300000, i1_bytes, i1_map, 0x401000, 0x300000,
	BYTES5(0xe9, 0xfb, 0xef, 0xef, 0xff), BYTES5(0xb9, 0x04, 0x00, 0x00, 0x00));
static const struct layout l2h = DBR_LAYOUT(0x300100, i2h_bytes, i2h_map, 0x401040, 0x300100,
	BYTES5(0xe9, 0xbb, 0xf0, 0xef, 0xff), BYTES5(0xb9, 0x03, 0x00, 0x00, 0x00));
static const struct layout l2i = DBR_LAYOUT(0x300200, i2i_bytes, i2i_map, 0x401040, 0x300200,
	BYTES5(0xe9, 0xbb, 0xf1, 0xef, 0xff), BYTES5(0xb9, 0x03, 0x00, 0x00, 0x00));
static const struct layout l3 = DBR_LAYOUT(0x300300, i3_bytes, i3_map, 0x401080, 0x300300,
	BYTES5(0xe9, 0x7b, 0xf2, 0xef, 0xff), BYTES5(0xb8, 0x07, 0x00, 0x00, 0x00));
static const struct layout l4 = DBR_LAYOUT(0x300400, i4_bytes, i4_map, 0x4010c0, 0x300400,
	BYTES5(0xe9, 0x3b, 0xf3, 0xef, 0xff), BYTES5(0x48, 0x05, 0x10, 0x00, 0x00));
static const struct layout l4b = DBR_LAYOUT(0x300900, i4b_bytes, i4b_map, 0x4010c6, 0x300900,
	BYTES5(0xe9, 0x35, 0xf8, 0xef, 0xff), BYTES5(0xe8, 0x15, 0x00, 0x00, 0x00));
static const struct layout l5 = DBR_LAYOUT(0x300500, i5_bytes, i5_map, 0x401100, 0x300510,
	BYTES5(0xe9, 0x0b, 0xf4, 0xef, 0xff), BYTES5(0xb8, 0x01, 0x00, 0x00, 0x00));
static const struct layout l6 = DBR_LAYOUT(0x300600, i6_bytes, i6_map, 0x401122, 0x300600,
	BYTES5(0xe9, 0xd9, 0xf4, 0xef, 0xff), BYTES5(0xb8, 0x02, 0x00, 0x00, 0x00));
static const struct layout l7 = DBR_LAYOUT(0x300700, i7_bytes, i7_map, 0x401140, 0x300700,
	BYTES5(0xe9, 0xbb, 0xf5, 0xef, 0xff), BYTES5(0xb9, 0x08, 0x00, 0x00, 0x00));
static const struct layout l7b = DBR_LAYOUT(0x300c00, i7b_bytes, i7b_map, 0x401140, 0x300c07,
	BYTES5(0xe9, 0xc2, 0xfa, 0xef, 0xff), BYTES5(0xb9, 0x08, 0x00, 0x00, 0x00));
static const struct layout l8 = {0x300800, i8_bytes, sizeof(i8_bytes), i8_map, N(i8_map), {0}, 0};
static const struct layout l9 = DBR_LAYOUT(0x300a00, i9_bytes, i9_map, 0x4011a0, 0x300a00,
	BYTES5(0xe9, 0x5b, 0xf8, 0xef, 0xff), BYTES5(0xb9, 0x03, 0x00, 0x00, 0x00));
static const struct layout l10 = DBR_LAYOUT(0x300b00, i10_bytes, i10_map, 0x4011c0, 0x300b00,
	BYTES5(0xe9, 0x3b, 0xf9, 0xef, 0xff), BYTES5(0xb8, 0x00, 0x00, 0x00, 0x00));
/* clang-format on */

#endif
