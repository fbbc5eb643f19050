/* Load bias of a mapped ELF file (see elf_bias.h), from its program headers
 * (System V gABI, "Program Header"; libelf). */
#include "common/elf_bias.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <unistd.h>

#include "common/infile.h"

static Elf *open_elf(const char *path, int *fd)
{
	*fd = infile_open(path, NULL);
	if (*fd < 0)
		return NULL;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		close(*fd);
		*fd = -1;
		return NULL;
	}
	return elf_begin(*fd, ELF_C_READ, NULL);
}

size_t elf_load_segments(const char *path, struct elf_segment *out, size_t max)
{
	int fd;
	Elf *elf = open_elf(path, &fd);
	size_t n = 0, k = 0;
	if (elf && elf_getphdrnum(elf, &n) == 0)
		for (size_t i = 0; i < n && k < max; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
				out[k++] = (struct elf_segment){ph.p_vaddr, ph.p_filesz, ph.p_offset, ph.p_flags};
		}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return k;
}

uint64_t elf_mapping_bias(const char *path, uint64_t addr, uint64_t pgoff)
{
	uint64_t bias = 0;
	int fd, found = 0;
	Elf *elf = open_elf(path, &fd);
	if (fd < 0)
		return 0;
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

