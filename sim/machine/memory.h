/* The guest address space (memory.c): a sorted list of areas with Linux's
 * mmap/munmap/mprotect semantics at page granularity, mirrored in the running
 * process's Unicorn memory map, and the fixed layout that keeps runs reproducible. */
#ifndef PMUSIM_SIM_MACHINE_MEMORY_H
#define PMUSIM_SIM_MACHINE_MEMORY_H

#include <stddef.h>
#include <stdint.h>

struct sim;

#define GUEST_PAGE 4096ULL
#define PAGE_DOWN(x) ((x) & ~(GUEST_PAGE - 1))
#define PAGE_UP(x) (((x) + GUEST_PAGE - 1) & ~(GUEST_PAGE - 1))

/* Layout of the guest address space (fixed, so runs are reproducible). */
#define STACK_TOP     0x7ffffffff000ULL
#define STACK_SIZE    (8ULL << 20)
#define MMAP_TOP      0x7ffff7fff000ULL   /* mmap areas grow down from here */
#define PIE_BASE      0x555555554000ULL   /* where ET_DYN programs are placed */
#define AREAS_BASE    0x7e0000000000ULL   /* reserved for the thread-stack unit's work */
#define AREAS_END     0x7f0000000000ULL   /* areas (stacks.c): mmap never gives it out */

/* One area of the running process (struct proc.vmas). */
struct vma {
	uint64_t start, end;
	int prot;                /* PROT_* of the guest */
	int unbacked;            /* reserved (PROT_NONE, anonymous), not in the engine's map yet */
};

int mem_map(struct sim *s, uint64_t addr, uint64_t len, int prot);
int mem_unmap(struct sim *s, uint64_t addr, uint64_t len);
int mem_protect(struct sim *s, uint64_t addr, uint64_t len, int prot);
/* Lowest-address-first search is not Linux's; we search top-down below MMAP_TOP. */
uint64_t mem_find_free(struct sim *s, uint64_t len);
int mem_is_mapped(const struct sim *s, uint64_t addr, uint64_t len);
int mem_read(struct sim *s, uint64_t addr, void *buf, size_t len);   /* 0 or -EFAULT */
int mem_write(struct sim *s, uint64_t addr, const void *buf, size_t len);
int mem_read_str(struct sim *s, uint64_t addr, char *buf, size_t len); /* 0, -EFAULT, -ENAMETOOLONG */
const struct vma *mem_find(const struct sim *s, uint64_t addr);
/* Reserves [addr, addr + len) as PROT_NONE anonymous memory without backing it: the
 * engine maps a part only when mem_protect makes it accessible (a runtime's terabyte
 * reservation costs nothing). 0 or -errno. */
int mem_reserve(struct sim *s, uint64_t addr, uint64_t len);
/* Whether any area overlaps [addr, addr + len) (one pass over the areas, whatever len). */
int mem_overlaps(const struct sim *s, uint64_t addr, uint64_t len);
/* The start of the first area at or above addr, or UINT64_MAX. */
uint64_t mem_next_area(const struct sim *s, uint64_t addr);
/* The highest free range of len bytes ending at or below limit (mmap's MAP_32BIT), or 0. */
uint64_t mem_find_free_below(struct sim *s, uint64_t len, uint64_t limit);

#endif
