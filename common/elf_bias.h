/* Where an ELF file's code lands when a part of it is mapped: the load bias
 * (run-time address minus ELF virtual address) implied by a mapping of the file
 * at addr from file offset pgoff, as MMAP2 records and mmap calls describe it. */
#ifndef PMUSIM_COMMON_ELF_BIAS_H
#define PMUSIM_COMMON_ELF_BIAS_H

#include <stdint.h>

/* The bias that puts the PT_LOAD segment whose first page is at file offset
 * pgoff at addr (an executable segment wins when several share that page);
 * 0 when the file is not ELF or no segment starts in that page. */
uint64_t elf_mapping_bias(const char *path, uint64_t addr, uint64_t pgoff);

#endif
