/* PLT entry names (profiler/plt_names.h), from the section headers, .rela.plt
 * and the dynamic symbols it links to, read with libelf. */
#include "profiler/plt_names.h"

#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/infile.h"

#define PLT_ENTRY 16u /* x86-64 lazy PLT and IBT .plt.sec entries */

struct plt_entry {
	uint64_t off;
	char *name;
};

struct plt_names {
	struct plt_entry *e;
	size_t n;
};

static Elf_Scn *section_named(Elf *elf, size_t shstrndx, const char *name, GElf_Shdr *sh)
{
	for (Elf_Scn *s = elf_nextscn(elf, NULL); s; s = elf_nextscn(elf, s)) {
		const char *n = gelf_getshdr(s, sh) ? elf_strptr(elf, shstrndx, sh->sh_name) : NULL;
		if (n && strcmp(n, name) == 0)
			return s;
	}
	return NULL;
}

/* The entries of rela (linked to its dynamic symbols) starting at file offset first. */
static int add_entries(struct plt_names *p, Elf *elf, Elf_Scn *rela, const GElf_Shdr *rsh,
                       uint64_t first)
{
	Elf_Data *d = elf_getdata(rela, NULL);
	Elf_Scn *dyn = elf_getscn(elf, rsh->sh_link);
	GElf_Shdr dsh;
	Elf_Data *dd = dyn ? elf_getdata(dyn, NULL) : NULL;
	if (!d || !dd || !gelf_getshdr(dyn, &dsh) || rsh->sh_entsize == 0)
		return 0;
	size_t n = rsh->sh_size / rsh->sh_entsize;
	if (!(p->e = calloc(n + 1, sizeof(*p->e))))
		return -1;
	for (size_t i = 0; i < n; i++) {
		GElf_Rela r;
		GElf_Sym s;
		const char *name = "";
		if (!gelf_getrela(d, (int)i, &r))
			break;
		if (GELF_R_SYM(r.r_info) && gelf_getsym(dd, (int)GELF_R_SYM(r.r_info), &s))
			name = elf_strptr(elf, dsh.sh_link, s.st_name);
		size_t len = strlen(name ? name : "") + sizeof("@plt");
		char *t = malloc(len);
		if (!t)
			return -1;
		snprintf(t, len, "%s@plt", name ? name : "");
		p->e[p->n++] = (struct plt_entry){first + i * PLT_ENTRY, t};
	}
	return 0;
}

struct plt_names *plt_names_read(const char *path)
{
	struct plt_names *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	elf_version(EV_CURRENT);
	int fd = infile_open(path, NULL);
	Elf *elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL;
	size_t shstrndx;
	GElf_Shdr plt, sec, rsh;
	Elf_Scn *rela;
	int err = 0;
	if (elf && elf_getshdrstrndx(elf, &shstrndx) == 0 &&
	    (rela = section_named(elf, shstrndx, ".rela.plt", &rsh)) && rsh.sh_type == SHT_RELA) {
		if (section_named(elf, shstrndx, ".plt.sec", &sec))
			err = add_entries(p, elf, rela, &rsh, sec.sh_offset);
		else if (section_named(elf, shstrndx, ".plt", &plt))
			err = add_entries(p, elf, rela, &rsh, plt.sh_offset + PLT_ENTRY);
	}
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	if (err < 0) {
		plt_names_free(p);
		return NULL;
	}
	return p;
}

void plt_names_free(struct plt_names *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->n; i++)
		free(p->e[i].name);
	free(p->e);
	free(p);
}

const char *plt_names_lookup(const struct plt_names *p, uint64_t off)
{
	size_t lo = 0, hi = p->n;
	while (lo < hi) { /* entries ascend by offset */
		size_t mid = (lo + hi) / 2;
		if (p->e[mid].off + PLT_ENTRY <= off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < p->n && off >= p->e[lo].off ? p->e[lo].name : NULL;
}
