/* Load bias of a mapped ELF file (see elf_bias.h), from its program headers
 * (System V gABI, "Program Header"; libelf). */
#include "common/elf_bias.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

uint64_t elf_mapping_bias(const char *path, uint64_t addr, uint64_t pgoff)
{
	uint64_t bias = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), found = 0;
	if (fd < 0 || elf_version(EV_CURRENT) == EV_NONE)
		return fd >= 0 ? (close(fd), 0) : 0;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	/* the segment whose first page is the mapped one; an executable segment wins,
	 * as several small segments may share that page */
	if (elf && elf_getphdrnum(elf, &n) == 0)
		for (size_t i = 0; i < n; i++) {
			GElf_Phdr ph;
			if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
			    (ph.p_offset & ~0xfffULL) != pgoff || (found && !(ph.p_flags & PF_X)))
				continue;
			bias = addr - (ph.p_vaddr & ~0xfffULL);
			found = 1;
			if (ph.p_flags & PF_X)
				break;
		}
	if (elf)
		elf_end(elf);
	close(fd);
	return bias;
}

