/* Decode cache: code runs (pmu_model/block.h) decoded once with Capstone. Shared by
 * the machine (sim/, guest memory) and the profiler (profiler/, a binary's file
 * bytes), so both classify instructions and branches the same way.
 *
 * A run starts at any address and ends at its first terminator (control
 * transfer, REP string instruction, SYSCALL, trap) or after DECODE_MAX_INSNS.
 * The cache does not know Unicorn: it reads guest bytes through a callback, so
 * it can be tested on hand-made byte arrays.
 *
 * Runs are never freed before the cache: an invalidated run (self-modifying code,
 * munmap, mprotect) is only unlinked, so block_info pointers and ids handed out
 * stay valid and unique for the cache's lifetime. */
#ifndef PMUSIM_COMMON_DECODE_H
#define PMUSIM_COMMON_DECODE_H

#include <stddef.h>
#include <stdint.h>

#include "pmu_model/block.h"

#define DECODE_MAX_INSNS 1024

/* Reads up to len guest bytes at addr into buf; returns how many bytes could be
 * read (fewer at the end of mapped executable memory, 0 if none). */
typedef size_t (*dcache_read_fn)(void *ctx, uint64_t addr, void *buf, size_t len);

/* Instructions inside a run that the machine must hook individually. */
enum dc_special_kind {
	DS_REP = 1,   /* REP string instruction (the run's terminator) */
	DS_RDTSC,     /* rdtsc: result comes from the simulated clock */
	DS_RDTSCP,
	DS_RDRAND,    /* rdrand/rdseed: result comes from the seeded generator */
	DS_PRIV,      /* privileged in user mode (hlt, in/out, cli/sti, msr…): SIGSEGV as Linux */
	DS_BMI2_FIX,  /* pdep/pext: Unicorn 2.0.1 swaps source and mask; computed by pmusim */
	DS_UNREPORTED, /* VEX/EVEX/XOP-encoded, not BMI1/BMI2: CPUID reports no AVX, so SIGILL
	                * (Unicorn 2.0.1 would run it as its legacy SSE form: wrong results) */
};

struct dc_special {
	uint64_t addr;
	uint8_t kind;  /* enum dc_special_kind */
	uint8_t len;   /* instruction length */
	uint8_t reg;   /* rdrand/rdseed: destination register (Capstone id, low byte) */
	uint8_t size;  /* rdrand/rdseed: operand size in bytes */
	uint16_t cs_reg; /* rdrand/rdseed: full Capstone register id */
};

struct dcache;

/* New empty cache; NULL when out of memory or Capstone cannot be opened. */
struct dcache *dcache_new(dcache_read_fn read, void *ctx);
void dcache_free(struct dcache *dc);

/* The run starting at addr, decoded on a miss (then *is_new = 1). Bytes that do
 * not decode end the run with a one-instruction BK_TRAP terminator (ninsns = 0
 * plus the trap). NULL only when out of memory. */
const struct block_info *dcache_get(struct dcache *dc, uint64_t addr, int *is_new);

/* The direct-mapped table in front of the cache, for callers that look up a run
 * per executed block: front[dcache_front_slot(addr)] is addr's run when its start
 * is addr (else ask dcache_get). The table lives as long as the cache. */
#define DCACHE_FRONT_SIZE 4096
const struct block_info *const *dcache_front(const struct dcache *dc);
static inline size_t dcache_front_slot(uint64_t a)
{
	return (size_t)((a ^ (a >> 12)) & (DCACHE_FRONT_SIZE - 1));
}
static inline const struct block_info *dcache_front_hit(const struct block_info *const *front, uint64_t a)
{
	const struct block_info *bi = front[dcache_front_slot(a)];
	return bi && bi->start == a ? bi : NULL;
}

/* Special instructions of a run (see enum dc_special_kind), n set to their count. */
const struct dc_special *dcache_specials(const struct block_info *bi, size_t *n);

/* Index of the instruction starting at addr inside bi, or -1 if no instruction
 * of bi starts there. addr == bi->end gives bi->ninsns. */
int block_insn_index(const struct block_info *bi, uint64_t addr);

/* Unlinks every run that overlaps [addr, addr+len). Returns how many. */
size_t dcache_invalidate(struct dcache *dc, uint64_t addr, uint64_t len);

/* Makes dc take run ids from *next_id (before its first run), so that caches of
 * several address spaces feeding one consumer hand out distinct ids. */
void dcache_share_ids(struct dcache *dc, uint32_t *next_id);
/* Number of ids handed out so far (ids are 0 .. count-1 for a cache of its own). */
uint32_t dcache_id_count(const struct dcache *dc);
/* The run with that id, live or invalidated; NULL if it is not one of dc's. */
const struct block_info *dcache_by_id(const struct dcache *dc, uint32_t id);

/* Disassembles the instruction at addr into text ("mov rax, rbx"); returns 0 and
 * fills out, or a negative pmusim_err. For diagnostics, not the hot path. */
int dcache_disasm(struct dcache *dc, uint64_t addr, char *out, size_t outlen);

#endif
