/* Where an ELF file's code lands when a part of it is mapped: the load bias
 * (run-time address minus ELF virtual address) implied by a mapping of the file
 * at addr from file offset pgoff, as MMAP2 records and mmap calls describe it. */
#ifndef PMUSIM_COMMON_ELF_BIAS_H
#define PMUSIM_COMMON_ELF_BIAS_H

#include <stddef.h>
#include <stdint.h>

/* The bias that puts the PT_LOAD segment whose first page is at file offset
 * pgoff at addr (an executable segment wins when several share that page);
 * 0 when the file is not ELF or no segment starts in that page. */
uint64_t elf_mapping_bias(const char *path, uint64_t addr, uint64_t pgoff);

/* The PT_LOAD segments of an ELF file: up to max of them, in file order; the
 * count, 0 when the file is not ELF. */
struct elf_segment {
	uint64_t vaddr, filesz, offset;
	uint32_t flags;       /* PF_R, PF_W, PF_X */
};
size_t elf_load_segments(const char *path, struct elf_segment *out, size_t max);

#endif
