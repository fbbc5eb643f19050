/* Load plans of ELF executables (elf_plan.h) through libelf's gelf interface;
 * the refusals follow Linux fs/binfmt_elf.c load_elf_binary (elf_check_arch,
 * e_type, e_phentsize, the PT_LOAD checks of elf_map and the page congruence
 * of p_vaddr and p_offset). */
#include "sim/linux/elf_plan.h"

#include <elf.h>
#include <gelf.h>
#include <libelf.h>
#include <stddef.h>
#include <string.h>

#include "common/err.h"

#define PLAN_PAGE_DOWN(x) ((x) & ~(ELF_PLAN_PAGE - 1))
#define PLAN_PAGE_UP(x) (((x) + ELF_PLAN_PAGE - 1) & ~(ELF_PLAN_PAGE - 1))

static int check_header(Elf *elf, size_t flen, GElf_Ehdr *eh, size_t *phnum, char *msg, size_t ml,
			const char *path)
{
	if (elf_kind(elf) != ELF_K_ELF)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: not an ELF file", path);
	if (gelf_getclass(elf) != ELFCLASS64)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARCH, "%s: not a 64-bit ELF file", path);
	if (!gelf_getehdr(elf, eh))
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: truncated or corrupt ELF header", path);
	if (eh->e_machine != EM_X86_64)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARCH, "%s: not an x86-64 program", path);
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: not an executable ELF file", path);
	if (elf_getphdrnum(elf, phnum) != 0 || *phnum == 0 || *phnum > ELF_PLAN_MAX_PHDRS ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) || eh->e_phoff > flen ||
	    *phnum * sizeof(Elf64_Phdr) > flen - eh->e_phoff)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: truncated or corrupt program headers",
				   path);
	return 0;
}

/* One program header into the plan. */
static int plan_phdr(const GElf_Phdr *ph, const unsigned char *file, size_t flen, struct elf_plan *p,
		     char *msg, size_t ml, const char *path)
{
	if (ph->p_type == PT_INTERP) {
		if (ph->p_offset > flen || ph->p_filesz > flen - ph->p_offset || ph->p_filesz == 0 ||
		    ph->p_filesz >= sizeof(p->interp) || file[ph->p_offset + ph->p_filesz - 1] != 0)
			return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: corrupt interpreter path", path);
		memcpy(p->interp, file + ph->p_offset, ph->p_filesz);
	}
	if (ph->p_type == PT_PHDR)
		p->phdr = ph->p_vaddr, p->has_phdr = 2; /* 2: PT_PHDR's, which a later load keeps */
	if (ph->p_type != PT_LOAD)
		return 0;
	if (ph->p_offset > flen || ph->p_filesz > flen - ph->p_offset)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
				   "%s: truncated ELF file (segment past end of file)", path);
	/* the end rounded up to a page must not wrap either: the loader maps whole pages */
	if (ph->p_filesz > ph->p_memsz || ph->p_memsz > ELF_PLAN_MAX_SEGMENT ||
	    ph->p_vaddr + ph->p_memsz < ph->p_vaddr ||
	    ph->p_vaddr + ph->p_memsz > UINT64_MAX - ELF_PLAN_PAGE ||
	    (ph->p_align > 1 && (ph->p_vaddr % ELF_PLAN_PAGE) != (ph->p_offset % ELF_PLAN_PAGE)))
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: corrupt loadable segment", path);
	if (ph->p_memsz == 0)
		return 0;
	p->seg[p->nseg++] = (struct elf_seg){.vaddr = ph->p_vaddr, .memsz = ph->p_memsz,
					     .offset = ph->p_offset, .filesz = ph->p_filesz,
					     .flags = ph->p_flags};
	if (PLAN_PAGE_DOWN(ph->p_vaddr) < p->lo)
		p->lo = PLAN_PAGE_DOWN(ph->p_vaddr);
	if (PLAN_PAGE_UP(ph->p_vaddr + ph->p_memsz) > p->hi)
		p->hi = PLAN_PAGE_UP(ph->p_vaddr + ph->p_memsz);
	return 0;
}

int elf_plan_read(const unsigned char *file, size_t flen, const char *path, struct elf_plan *p,
		  char *msg, size_t ml)
{
	memset(p, 0, offsetof(struct elf_plan, seg));
	p->nseg = 0;
	p->interp[0] = 0;
	p->lo = UINT64_MAX;
	if (flen < EI_NIDENT || memcmp(file, ELFMAG, SELFMAG) != 0)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: not an ELF file", path);
	elf_version(EV_CURRENT);
	/* libelf reads the buffer in place (ELF_C_READ_MMAP semantics) and never writes it */
	Elf *elf = elf_memory((char *)file, flen);
	if (!elf)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: truncated or corrupt ELF file", path);
	GElf_Ehdr eh;
	size_t phnum = 0;
	int err = check_header(elf, flen, &eh, &phnum, msg, ml, path);
	int loads = 0;
	for (size_t i = 0; !err && i < phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph)) {
			err = pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
					  "%s: truncated or corrupt program header", path);
			break;
		}
		int rc = plan_phdr(&ph, file, flen, p, msg, ml, path);
		if (rc < 0)
			err = rc;
		loads += ph.p_type == PT_LOAD;
		/* AT_PHDR without PT_PHDR: the first non-empty load that holds the headers */
		if (!err && ph.p_type == PT_LOAD && ph.p_memsz && !p->has_phdr &&
		    eh.e_phoff >= ph.p_offset && eh.e_phoff < ph.p_offset + ph.p_filesz)
			p->phdr = ph.p_vaddr + (eh.e_phoff - ph.p_offset), p->has_phdr = 1;
	}
	elf_end(elf);
	if (!err && loads == 0)
		err = pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: no loadable segments", path);
	if (err)
		return err;
	p->type = eh.e_type;
	p->entry = eh.e_entry;
	p->phnum = phnum;
	if (!p->nseg) /* loads, all empty: nothing to map */
		p->lo = p->hi = 0;
	p->has_phdr = p->has_phdr != 0;
	return 0;
}
