/* ELF build-id note reader (see buildid.h). Note layout: ELF gABI "Note
 * Section"; NT_GNU_BUILD_ID = 3 with owner "GNU" (binutils ld --build-id). */
#include "common/buildid.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "common/err.h"
#include "common/infile.h"

static int note_build_id(Elf_Data *data, uint8_t *id)
{
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;
	while ((off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		if (nh.n_type == NT_GNU_BUILD_ID && nh.n_namesz == 4 &&
		    memcmp((char *)data->d_buf + name_off, "GNU", 4) == 0 && nh.n_descsz > 0) {
			size_t n = nh.n_descsz < BUILD_ID_MAX ? nh.n_descsz : BUILD_ID_MAX;
			memcpy(id, (char *)data->d_buf + desc_off, n);
			return (int)n;
		}
	}
	return 0;
}

int elf_build_id(const char *path, uint8_t *id)
{
	if (elf_version(EV_CURRENT) == EV_NONE)
		return PMUSIM_ERR_ELF;
	int fd = infile_open(path, NULL);
	if (fd < 0)
		return PMUSIM_ERR_IO;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int found = elf && elf_kind(elf) == ELF_K_ELF ? 0 : PMUSIM_ERR_ELF;
	Elf_Scn *scn = NULL;
	while (found == 0 && elf && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_NOTE)
			continue;
		Elf_Data *data = elf_getdata(scn, NULL);
		if (data && data->d_buf)
			found = note_build_id(data, id);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return found;
}

void build_id_hex(const uint8_t *id, size_t len, char *out)
{
	for (size_t i = 0; i < len; i++)
		sprintf(out + 2 * i, "%02x", id[i]);
	out[2 * len] = 0;
}
