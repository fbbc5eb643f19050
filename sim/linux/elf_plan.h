/* The load plan of an x86-64 ELF executable: what the loader (loader.c) maps,
 * read from the file's bytes alone. It checks the ELF and program headers as
 * Linux's binfmt_elf refuses a file (not ELF, not x86-64, not ET_EXEC/ET_DYN,
 * program headers or segments past the end, a segment whose memory is smaller
 * than its file part or whose address and offset disagree modulo the page) and
 * lists the PT_LOAD segments in file order with PT_INTERP and PT_PHDR. No
 * Unicorn and no guest: the planning can be tested and fuzzed alone. */
#ifndef PMUSIM_SIM_LINUX_ELF_PLAN_H
#define PMUSIM_SIM_LINUX_ELF_PLAN_H

#include <limits.h>
#include <stddef.h>
#include <stdint.h>

#define ELF_PLAN_PAGE 4096ull     /* the guest's page (sim/machine/memory.h GUEST_PAGE) */
#define ELF_PLAN_MAX_PHDRS 256    /* more program headers than any linker writes */
#define ELF_PLAN_MAX_SEGMENT (1ull << 36) /* larger PT_LOAD memory is refused as corrupt */

/* One PT_LOAD segment with p_memsz > 0 (ELF addresses, before the load bias). */
struct elf_seg {
	uint64_t vaddr, memsz, offset, filesz;
	uint32_t flags; /* PF_R, PF_W, PF_X */
};

struct elf_plan {
	uint16_t type;        /* ET_EXEC or ET_DYN */
	uint64_t entry;       /* e_entry */
	uint64_t phnum;       /* program headers, for AT_PHNUM */
	/* where the program headers are in memory (AT_PHDR, before the bias): the last
	 * PT_PHDR's p_vaddr, else the first PT_LOAD that holds e_phoff; has_phdr 0 when
	 * neither says */
	uint64_t phdr;
	int has_phdr;
	uint64_t lo, hi;      /* first and past-the-last page of the segments */
	struct elf_seg seg[ELF_PLAN_MAX_PHDRS];
	size_t nseg;          /* >= 1 */
	char interp[PATH_MAX]; /* PT_INTERP (NUL-terminated in the file), "" when none */
};

/* Plans the load of the ELF file file[0..flen) named path (for messages only).
 * 0 with *out filled, or a negative pmusim_err (PMUSIM_ERR_ELF: not an ELF file
 * or a corrupt one; PMUSIM_ERR_ARCH: not a 64-bit x86-64 program) with one line
 * in msg that names path. file is only read, and not kept. */
int elf_plan_read(const unsigned char *file, size_t flen, const char *path, struct elf_plan *out,
		  char *msg, size_t msglen);

#endif
