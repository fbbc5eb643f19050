/* The thread-stack unit's reference: perf's own DWARF unwinder, as `perf
 * script` prints a --tstack-dwarf recording, against the unit's callchains of
 * the same run (tests/e2e/check_tstack_dwarf.c). The facts the comparison
 * needs come from binutils, never from pmusim: the binary's FDEs and their
 * CIEs' augmentation (readelf), symbols (nm), get-PC calls (objdump).
 *
 * How perf prints a frame (libdw's dwfl_frame_pc, which perf's unwinder
 * follows): the sample IP as it is; a caller's return address minus one, so
 * that it names the call; but right after a signal frame (unwound through an
 * FDE whose CIE has the 'S' augmentation: glibc's __restore_rt) the address
 * where the interrupted code goes on, as it is. So the unit's frame f is
 * perf's plus one, or perf's itself after a signal frame.
 *
 * Where perf's unwinding cannot be the reference, the comparison names the
 * case, checks that it is that case, and counts it with the unit's frames it
 * leaves uncompared:
 *  - no_cfi: perf's frames are the unit's up to code no FDE covers: the
 *    .plt stubs through which a static program calls its IFUNCs, crtstuff's
 *    register_tm_clones, hand-written assembly without .cfi directives, and
 *    the instructions after clone3's syscall, where glibc ends the CFI so
 *    that a new thread's stack has no caller (a thread that has not run yet
 *    stands there). Past it perf stops, or guesses by the frame pointer
 *    (libdw's fallback for x86-64): the guess skips the caller of an assembly
 *    function that keeps no frame pointer, and at a new thread reads one word
 *    off the new stack, no code (perf names it [unknown]), where the unit,
 *    rightly, has no frame;
 *  - alt_stack: a handler running on an alternate stack: the dump starts at
 *    RSP there, so perf reads the interrupted IP from the signal frame but not
 *    the interrupted code's frames on the thread's stack; perf ends at that
 *    IP, and RSP lies in the program's alternate stack;
 *  - getpc_call: between "call 1f" and "1: pop %reg" the call's return
 *    address is on the stack (the unit and the machine's truth have its
 *    frame), while the CFI describes the function's frame: the unit's first
 *    return address is the IP itself, the pop's address, and the rest agree.
 * Anything else that differs is a mismatch. */
#ifndef PMUSIM_TESTS_E2E_STACK_REF_H
#define PMUSIM_TESTS_E2E_STACK_REF_H

#include <stddef.h>
#include <stdint.h>

struct fde {
	uint64_t lo, hi;
	int signal; /* its CIE's augmentation has 'S' */
};

struct facts {
	struct fde *fde;
	size_t nfde;
	uint64_t getpc[16]; /* addresses X with "call X" right before X */
	size_t ngetpc;
	uint64_t alt_lo, alt_hi; /* the alternate signal stack, if named */
};

/* The facts of program prog; alt: the symbol of its alternate signal stack,
 * or NULL. Fails the running check when a tool fails. */
void facts_read(const char *prog, const char *alt, struct facts *f);
void facts_free(struct facts *f);
/* The FDE covering code address a, or NULL. */
const struct fde *fde_of(const struct facts *f, uint64_t a);
/* nm -S: a symbol's [address, address + size); 0 when there is none. */
int symbol_range(const char *prog, const char *name, uint64_t *lo, uint64_t *hi);

struct snap {
	unsigned tid;
	size_t first, n; /* frames: addr[first..first+n) */
	uint64_t ip, sp; /* from the registers (the DWARF recording) */
};

struct snaps {
	struct snap *s;
	size_t n, cap;
	uint64_t *addr;
	char *unknown; /* perf named the frame [unknown] */
	size_t na, capa;
};

/* perf script's pmusim_tstack samples of data, with the registers (RSP and IP)
 * when regs (a --tstack-dwarf recording). */
void perf_snaps(const char *data, int regs, struct snaps *ss);
/* The same for the samples of another event (record -g's). */
void perf_snaps_of(const char *data, int regs, const char *event, struct snaps *ss);
void snaps_free(struct snaps *ss);

enum exc { EXC_NO_CFI, EXC_ALT_STACK, EXC_GETPC_CALL, EXC_COUNT };
extern const char *const exc_name[EXC_COUNT];

struct tally {
	long snapshots, frames, signal_frames, mismatches;
	long exc[EXC_COUNT], exc_frames[EXC_COUNT];
	char first[512];
};

/* One snapshot's frames: the unit's (u, nu) and perf's (d, nd). */
struct pair {
	const uint64_t *u, *d;
	const char *d_unknown;
	size_t nu, nd;
	uint64_t ip, sp, delta; /* delta: perf's printed address + delta = the address */
};

/* Snapshot i of thread tid (unit and perf's IP already equal) into t. */
void compare_one(const struct pair *p, const struct facts *fa, struct tally *t, size_t i,
                 unsigned tid);
/* Every snapshot of the two recordings (the same count, the same threads). */
void compare(const struct snaps *unit, const struct snaps *dw, const struct facts *fa,
             struct tally *t);

#endif
