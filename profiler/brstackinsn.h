/* `perf script -F brstackinsn`: the instructions a sample's branch stack says
 * retired, oldest first, laid out as perf 6.1 prints them (tools/perf/
 * builtin-script.c: perf_sample__fprintf_brstackinsn, ip__fprintf_jump,
 * ip__fprintf_sym, grab_bb; util/intel-pt-decoder's dump_insn):
 *
 *     (a newline ends the sample's other fields)
 *     \tFUNC[+OFF]:                          where the function changes
 *     \t%016lx\tinsn: 48 89 e5               an instruction of a range
 *     \t%016lx\t%-30s\t# PRED 3 cycles [12] 2.33 IPC
 *                                           the branch of an LBR entry
 *
 * The oldest entry's branch comes first (its range is unknown: no IPC); then,
 * per entry e(k) from the second oldest to the newest, the range from e(k+1).to
 * through e(k).from, its last line the branch of e(k) with "# PRED" or
 * "# MISPRED", and when e(k).cycles is not 0 " N cycles [T]" (T: the cycles of
 * the branch lines printed so far in this sample) and " %.2f IPC" of the
 * range's instruction count, branch included, over N — the count being
 * lbr_range_walk's, the one the CPI report uses (profiler/cpi.c), and the
 * division perf's ((float)insns / cycles). Last, unless the sample's IP is the
 * newest entry's branch, the instructions from its target up to the sample's
 * IP (no cycles), stopping with "\t... not reaching sample ..." at a branch or
 * system call before the IP.
 *
 * perf's rules of what it cannot print, kept: a range with an address 0, one
 * whose end lies before its start or more than 16,369 bytes after it (MAXBB −
 * MAXINSN), and one that starts outside the process's file-backed code print
 * nothing (their cycles are not added to T); a range from user to kernel code
 * is extended to the next entry (perf's ring-filter patch-up). pmusim's own:
 * a range lbr_range_walk refuses (an unconditional transfer inside, an end
 * that is not a branch instruction, undecodable code) prints its first
 * address, its end, the reason and the entry's cycles on a line
 *     \t# pmusim: range 0x…-0x… not walked (REASON) N cycles [T]
 * where perf would print its bytes read straight through (and count N in T).
 *
 * Instructions are printed as perf does without its xed disassembler: "insn: "
 * and each byte "%02x " (that text is what `perf script --xed` pipes to xed);
 * with disasm set, Capstone's text instead (Intel syntax; perf's own capstone
 * output, -F brstackdisasm of later perfs, is AT&T). */
#ifndef PMUSIM_PROFILER_BRSTACKINSN_H
#define PMUSIM_PROFILER_BRSTACKINSN_H

#include <stdint.h>
#include <stdio.h>

#include "common/symtab.h"
#include "profiler/binary.h"
#include "profiler/perfdata.h"

/* Where a sample's code and names come from. */
struct brstackinsn_src {
	struct binary *bin; /* the file-backed code of the sample's process; NULL: none */
	/* the function holding addr as perf names it, NULL when none (may be NULL) */
	const struct sym *(*sym)(void *ctx, uint64_t addr);
	void *ctx;
	int disasm; /* 1: Capstone's text instead of "insn: " and the bytes */
};

/* Prints s's branch stack (nothing when it has no entries) to f. Returns 0, or
 * a negative pmusim_err (out of memory while decoding). */
int brstackinsn_print(FILE *f, const struct perf_sample *s, const struct brstackinsn_src *src);

/* perf's IPC of a range: insns over cycles, divided in single precision as
 * perf 6.1 does, for printing with "%.2f" (cycles != 0). */
float brstackinsn_ipc(int64_t insns, unsigned cycles);

#endif
