/* Loads a static x86-64 ELF executable (ET_EXEC or static-pie ET_DYN) into the
 * guest and lays out the initial process stack as Linux's binfmt_elf does
 * (System V x86-64 psABI §3.4.1: argc, argv, envp, auxv; strings above). */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "sim/sim_internal.h"

static int read_file(const char *path, unsigned char **buf, size_t *len)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return PMUSIM_ERR_IO;
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		close(fd);
		return PMUSIM_ERR_IO;
	}
	*len = (size_t)st.st_size;
	*buf = malloc(*len ? *len : 1);
	if (!*buf) {
		close(fd);
		return PMUSIM_ERR_NOMEM;
	}
	size_t got = 0;
	while (got < *len) {
		ssize_t r = read(fd, *buf + got, *len - got);
		if (r <= 0) {
			free(*buf);
			close(fd);
			return PMUSIM_ERR_IO;
		}
		got += (size_t)r;
	}
	close(fd);
	return 0;
}

static int prot_of(uint32_t pf)
{
	return ((pf & PF_R) ? UC_PROT_READ : 0) | ((pf & PF_W) ? UC_PROT_WRITE : 0) |
	       ((pf & PF_X) ? UC_PROT_EXEC : 0);
}

/* Checks the ELF header and program headers; fills the load plan. */
static int check_elf(Elf *elf, size_t flen, GElf_Ehdr *eh, size_t *phnum, char *msg, size_t ml,
		     const char *path)
{
	if (elf_kind(elf) != ELF_K_ELF)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: not an ELF file", path);
	if (gelf_getclass(elf) != ELFCLASS64)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARCH, "%s: not a 64-bit ELF file", path);
	if (!gelf_getehdr(elf, eh))
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
				   "%s: truncated or corrupt ELF header", path);
	if (eh->e_machine != EM_X86_64)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ARCH, "%s: not an x86-64 program", path);
	if (eh->e_type != ET_EXEC && eh->e_type != ET_DYN)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: not an executable ELF file", path);
	if (elf_getphdrnum(elf, phnum) != 0 || *phnum == 0 || *phnum > 256 ||
	    eh->e_phentsize != sizeof(Elf64_Phdr) ||
	    eh->e_phoff > flen || *phnum * sizeof(Elf64_Phdr) > flen - eh->e_phoff)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
				   "%s: truncated or corrupt program headers", path);
	int loads = 0;
	for (size_t i = 0; i < *phnum; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph))
			return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
					   "%s: truncated or corrupt program header", path);
		if (ph.p_type == PT_INTERP)
			return pmusim_fail(msg, ml, PMUSIM_ERR_DYNAMIC,
					   "%s: dynamic programs are not supported yet "
					   "(it needs an interpreter); build it with -static",
					   path);
		if (ph.p_type != PT_LOAD)
			continue;
		loads++;
		if (ph.p_offset > flen || ph.p_filesz > flen - ph.p_offset)
			return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
					   "%s: truncated ELF file (segment past end of file)", path);
		if (ph.p_filesz > ph.p_memsz || ph.p_memsz > (1ULL << 36) ||
		    ph.p_vaddr + ph.p_memsz < ph.p_vaddr ||
		    (ph.p_align > 1 && (ph.p_vaddr % GUEST_PAGE) != (ph.p_offset % GUEST_PAGE)))
			return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
					   "%s: corrupt loadable segment", path);
	}
	if (loads == 0)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: no loadable segments", path);
	return 0;
}

static int map_segments(struct sim *s, Elf *elf, size_t phnum, const unsigned char *file,
			const GElf_Ehdr *eh, char *msg, size_t ml)
{
	uint64_t bias = s->load_bias, hi = 0;
	s->phdr = 0;
	/* first pass: map every segment's pages writable and fill them */
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		gelf_getphdr(elf, (int)i, &ph);
		if (ph.p_type == PT_PHDR)
			s->phdr = ph.p_vaddr + bias;
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		uint64_t va = ph.p_vaddr + bias;
		uint64_t start = PAGE_DOWN(va), end = PAGE_UP(va + ph.p_memsz);
		for (uint64_t p = start; p < end; p += GUEST_PAGE)
			if (!mem_is_mapped(s, p, GUEST_PAGE) && mem_map(s, p, GUEST_PAGE, UC_PROT_ALL) < 0)
				return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
						   "%s: segments overlap or lie outside user space",
						   s->opt.path);
		if (ph.p_filesz && mem_write(s, va, file + ph.p_offset, ph.p_filesz) < 0)
			return pmusim_fail(msg, ml, PMUSIM_ERR_EMU,
					   "%s: cannot write segment", s->opt.path);
		if (end > hi)
			hi = end;
		if (!s->phdr && eh->e_phoff >= ph.p_offset && eh->e_phoff < ph.p_offset + ph.p_filesz)
			s->phdr = va + (eh->e_phoff - ph.p_offset);
	}
	/* second pass: final permissions, later segments win on shared pages as with mmap */
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		gelf_getphdr(elf, (int)i, &ph);
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		uint64_t va = ph.p_vaddr + bias;
		mem_protect(s, PAGE_DOWN(va), PAGE_UP(va + ph.p_memsz) - PAGE_DOWN(va), prot_of(ph.p_flags));
		if ((ph.p_flags & PF_X) && s->nexec_maps < SIM_MAX_MAPPINGS)
			s->exec_maps[s->nexec_maps++] = (struct sim_mapping){
				.addr = PAGE_DOWN(va), .len = PAGE_UP(va + ph.p_memsz) - PAGE_DOWN(va),
				.pgoff = PAGE_DOWN(ph.p_offset), .path = s->exe_abs,
				.prot = ((ph.p_flags & PF_R) ? PROT_READ : 0) | ((ph.p_flags & PF_W) ? PROT_WRITE : 0) |
					PROT_EXEC,
			};
	}
	s->brk_start = s->brk_cur = hi;
	s->entry = eh->e_entry + bias;
	s->phnum = phnum;
	return 0;
}

int loader_load(struct sim *s, char *msg, size_t ml)
{
	unsigned char *file = NULL;
	size_t flen = 0;
	int err = read_file(s->opt.path, &file, &flen);
	if (err < 0)
		return pmusim_fail(msg, ml, err, "%s: cannot read program", s->opt.path);
	if (flen < EI_NIDENT || memcmp(file, ELFMAG, SELFMAG) != 0) {
		free(file);
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: not an ELF file", s->opt.path);
	}
	elf_version(EV_CURRENT);
	Elf *elf = elf_memory((char *)file, flen);
	GElf_Ehdr eh;
	size_t phnum = 0;
	if (!elf)
		err = pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
				  "%s: truncated or corrupt ELF file", s->opt.path);
	else
		err = check_elf(elf, flen, &eh, &phnum, msg, ml, s->opt.path);
	if (!err) {
		s->load_bias = eh.e_type == ET_DYN ? PIE_BASE : 0;
		err = map_segments(s, elf, phnum, file, &eh, msg, ml);
	}
	if (elf)
		elf_end(elf);
	free(file);
	return err;
}

/* --- initial stack ---------------------------------------------------------- */

struct stk {
	struct sim *s;
	uint64_t sp;
	int err;
};

static uint64_t push_bytes(struct stk *k, const void *data, size_t len)
{
	k->sp -= len;
	if (mem_write(k->s, k->sp, data, len) < 0)
		k->err = PMUSIM_ERR_EMU;
	return k->sp;
}

static void push_u64(struct stk *k, uint64_t v)
{
	push_bytes(k, &v, sizeof(v));
}

int loader_setup_stack(struct sim *s, uint64_t *sp_out)
{
	struct stk k = {s, STACK_TOP, 0};
	char *const *argv = s->opt.argv, *const *envp = s->opt.envp;
	size_t argc = 0, envc = 0;
	while (argv[argc])
		argc++;
	while (envp && envp[envc])
		envc++;
	if (mem_map(s, STACK_TOP - STACK_SIZE, STACK_SIZE, UC_PROT_READ | UC_PROT_WRITE) < 0)
		return PMUSIM_ERR_EMU;
	uint64_t *argp = calloc(argc + 1, sizeof(uint64_t));
	uint64_t *envpp = calloc(envc + 1, sizeof(uint64_t));
	if (!argp || !envpp) {
		free(argp);
		free(envpp);
		return PMUSIM_ERR_NOMEM;
	}
	push_u64(&k, 0); /* end marker */
	uint64_t execfn = push_bytes(&k, s->opt.path, strlen(s->opt.path) + 1);
	for (size_t i = envc; i-- > 0;)
		envpp[i] = push_bytes(&k, envp[i], strlen(envp[i]) + 1);
	for (size_t i = argc; i-- > 0;)
		argp[i] = push_bytes(&k, argv[i], strlen(argv[i]) + 1);
	uint64_t platform = push_bytes(&k, "x86_64", 7);
	unsigned char rnd[16];
	rng_fill(&s->rng, rnd, sizeof(rnd));
	uint64_t random = push_bytes(&k, rnd, sizeof(rnd));
	uint32_t c1[4];
	cpuid_query(1, 0, c1);
	uint64_t auxv[][2] = {
		{AT_PHDR, s->phdr}, {AT_PHENT, sizeof(Elf64_Phdr)}, {AT_PHNUM, s->phnum},
		{AT_PAGESZ, GUEST_PAGE}, {AT_BASE, 0}, {AT_FLAGS, 0}, {AT_ENTRY, s->entry},
		{AT_UID, (uint64_t)getuid()}, {AT_EUID, (uint64_t)geteuid()},
		{AT_GID, (uint64_t)getgid()}, {AT_EGID, (uint64_t)getegid()},
		{AT_SECURE, 0}, {AT_CLKTCK, 100}, {AT_HWCAP, c1[3]}, {AT_HWCAP2, 0},
		{AT_RANDOM, random}, {AT_EXECFN, execfn}, {AT_PLATFORM, platform},
		{AT_NULL, 0},
	};
	size_t nwords = 1 + (argc + 1) + (envc + 1) + 2 * (sizeof(auxv) / sizeof(auxv[0]));
	k.sp = (k.sp - nwords * 8) & ~15ULL; /* rsp 16-byte aligned at entry */
	uint64_t p = k.sp;
	uint64_t v = argc;
	mem_write(s, p, &v, 8), p += 8;
	for (size_t i = 0; i <= argc; i++, p += 8)
		mem_write(s, p, i < argc ? &argp[i] : &(uint64_t){0}, 8);
	for (size_t i = 0; i <= envc; i++, p += 8)
		mem_write(s, p, i < envc ? &envpp[i] : &(uint64_t){0}, 8);
	for (size_t i = 0; i < sizeof(auxv) / sizeof(auxv[0]); i++, p += 16)
		mem_write(s, p, auxv[i], 16);
	free(argp);
	free(envpp);
	*sp_out = k.sp;
	return k.err;
}
