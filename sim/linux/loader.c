/* Loads an x86-64 ELF executable (ET_EXEC, or ET_DYN at PIE_BASE) and, for a
 * dynamic program, its interpreter (PT_INTERP, ld.so) into the guest, and lays
 * out the initial process stack as Linux's binfmt_elf does (System V x86-64
 * psABI §3.4.1: argc, argv, envp, auxv with AT_BASE the interpreter's bias and
 * AT_ENTRY the program's entry; strings above). */
#include "sim/linux/loader.h"

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/infile.h"
#include "sim/linux/elf_plan.h"
#include "sim/machine/cpuid.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

_Static_assert(ELF_PLAN_PAGE == GUEST_PAGE, "the plan rounds to the guest's pages");

/* 0, or a negative pmusim_err with *why (PMUSIM_ERR_IO) for the message. */
static int read_file(const char *path, unsigned char **buf, size_t *len, const char **why)
{
	/* the kernel executes nothing but a regular file; a FIFO must not block */
	int fd = infile_open(path, why);
	if (fd < 0)
		return PMUSIM_ERR_IO;
	struct stat st;
	if (fstat(fd, &st) < 0) {
		*why = strerror(errno);
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
			*why = strerror(r < 0 ? errno : EIO); /* EIO: shorter than it said */
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

/* One ELF file placed in the guest: the program or its interpreter. */
struct image {
	const char *path;       /* as given, for messages */
	const char *abs;        /* absolute path, for the mappings */
	uint64_t bias, entry, phdr, phnum, hi;
	char interp[PATH_MAX];  /* PT_INTERP, "" when there is none */
};

static void add_exec_map(struct sim *s, const struct image *im, const struct elf_seg *sg)
{
	uint64_t va = sg->vaddr + im->bias;
	if (!(sg->flags & PF_X) || s->p->nexec_maps >= SIM_MAX_MAPPINGS)
		return;
	s->p->exec_maps[s->p->nexec_maps++] = (struct sim_mapping){
		.addr = PAGE_DOWN(va), .len = PAGE_UP(va + sg->memsz) - PAGE_DOWN(va),
		.pgoff = PAGE_DOWN(sg->offset), .path = im->abs, .pid = s->p->pid,
		.prot = ((sg->flags & PF_R) ? PROT_READ : 0) | ((sg->flags & PF_W) ? PROT_WRITE : 0) |
			PROT_EXEC,
	};
}

static int map_segments(struct sim *s, const struct elf_plan *pl, const unsigned char *file,
			struct image *im, char *msg, size_t ml)
{
	uint64_t bias = im->bias, hi = 0;
	/* the plan keeps segments below 2^64 - a page; the bias must not wrap them */
	if (pl->nseg && bias + pl->hi < bias)
		return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
				   "%s: segments overlap or lie outside user space", im->path);
	/* first pass: map every segment's pages writable and fill them */
	for (size_t i = 0; i < pl->nseg; i++) {
		const struct elf_seg *sg = &pl->seg[i];
		uint64_t va = sg->vaddr + bias;
		uint64_t start = PAGE_DOWN(va), end = PAGE_UP(va + sg->memsz);
		/* one area per run of pages not mapped yet (a page may be shared with
		 * the segment before): Unicorn holds only so many areas */
		for (uint64_t p = start; p < end;) { /* by areas, not pages: p_memsz may be huge */
			const struct vma *v = mem_find(s, p);
			if (v) {
				p = v->end;
				continue;
			}
			uint64_t q = mem_next_area(s, p);
			if (q > end)
				q = end;
			if (mem_map(s, p, q - p, UC_PROT_ALL) < 0)
				return pmusim_fail(msg, ml, PMUSIM_ERR_ELF,
						   "%s: segments overlap or lie outside user space", im->path);
			p = q;
		}
		if (sg->filesz && mem_write(s, va, file + sg->offset, sg->filesz) < 0)
			return pmusim_fail(msg, ml, PMUSIM_ERR_EMU, "%s: cannot write segment", im->path);
		if (end > hi)
			hi = end;
	}
	/* second pass: final permissions, later segments win on shared pages as with mmap */
	for (size_t i = 0; i < pl->nseg; i++) {
		const struct elf_seg *sg = &pl->seg[i];
		uint64_t va = sg->vaddr + bias;
		mem_protect(s, PAGE_DOWN(va), PAGE_UP(va + sg->memsz) - PAGE_DOWN(va), prot_of(sg->flags));
		add_exec_map(s, im, sg);
	}
	im->phdr = pl->has_phdr ? pl->phdr + bias : 0;
	im->hi = hi;
	im->entry = pl->entry + bias;
	im->phnum = pl->phnum;
	return 0;
}

/* Reads, checks and maps one ELF file. The program goes to its own addresses
 * (ET_EXEC) or PIE_BASE (ET_DYN); the interpreter, which must be ET_DYN without
 * an interpreter of its own, to the highest free area below MMAP_TOP. */
static int load_image(struct sim *s, struct image *im, int is_interp, char *msg, size_t ml)
{
	unsigned char *file = NULL;
	size_t flen = 0;
	const char *why = "";
	int err = read_file(im->path, &file, &flen, &why);
	if (err < 0)
		return pmusim_fail(msg, ml, err, "%s: cannot read %s: %s", im->path,
				   is_interp ? "the interpreter" : "program",
				   err == PMUSIM_ERR_NOMEM ? "out of memory" : why);
	/* on the heap: a plan holds 256 segments and a path, about 14 KB */
	struct elf_plan *pl = malloc(sizeof(*pl));
	if (!pl) {
		free(file);
		return pmusim_fail(msg, ml, PMUSIM_ERR_NOMEM, "%s: out of memory", im->path);
	}
	err = elf_plan_read(file, flen, im->path, pl, msg, ml);
	if (err)
		im->interp[0] = 0;
	else
		memcpy(im->interp, pl->interp, sizeof(im->interp));
	if (!err && is_interp && (pl->type != ET_DYN || im->interp[0]))
		err = pmusim_fail(msg, ml, PMUSIM_ERR_ELF, "%s: not a usable program interpreter", im->path);
	if (!err) {
		if (!is_interp)
			im->bias = pl->type == ET_DYN ? PIE_BASE : 0;
		else if (!(im->bias = mem_find_free(s, pl->hi - pl->lo)))
			err = pmusim_fail(msg, ml, PMUSIM_ERR_NOMEM, "%s: no room for the interpreter", im->path);
		else
			im->bias -= pl->lo;
	}
	if (!err)
		err = map_segments(s, pl, file, im, msg, ml);
	free(pl);
	free(file);
	return err;
}

/* The interpreter to load: --interp, else the program's PT_INTERP, else (when
 * that file does not exist here, e.g. a program built on another distribution)
 * the system's, with a note. */
static const char *choose_interp(struct sim *s, const char *wanted)
{
	static const char fallback[] = "/lib64/ld-linux-x86-64.so.2";
	if (s->opt.interp && s->p->image == 0) /* --interp is for the program pmusim starts */
		return s->opt.interp;
	if (access(wanted, R_OK) == 0 || access(fallback, R_OK) != 0)
		return wanted;
	fprintf(s->opt.log, "pmusim: note: interpreter %s not found; using %s (--interp PATH chooses one)\n",
		wanted, fallback);
	return fallback;
}

int loader_load(struct sim *s, char *msg, size_t ml)
{
	struct image prog = {.path = s->p->image ? s->p->exe_abs : s->p->path, .abs = s->p->exe_abs};
	int err = load_image(s, &prog, 0, msg, ml);
	if (err < 0)
		return err;
	s->p->load_bias = prog.bias;
	s->p->phdr = prog.phdr;
	s->p->phnum = prog.phnum;
	s->p->prog_entry = s->p->entry = prog.entry;
	s->p->brk_start = s->p->brk_cur = prog.hi;
	if (!prog.interp[0])
		return 0;
	char abs[PATH_MAX];
	const char *ip = choose_interp(s, prog.interp);
	free(s->p->interp_abs);
	s->p->interp_abs = strdup(realpath(ip, abs) ? abs : ip);
	if (!s->p->interp_abs)
		return pmusim_fail(msg, ml, PMUSIM_ERR_NOMEM, "out of memory");
	struct image in = {.path = ip, .abs = s->p->interp_abs};
	if ((err = load_image(s, &in, 1, msg, ml)) < 0)
		return err;
	s->p->interp_bias = in.bias;
	s->p->entry = in.entry;
	return 0;
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

/* What /proc/self shows of the start (proc_self.c): Linux keeps auxv and the
 * bounds of the argument and environment strings in the mm, not on the stack. */
static void keep_self_info(struct proc *p, char *const *argv, size_t argc, const uint64_t *argp,
			   char *const *envp, size_t envc, const uint64_t *envpp, const uint64_t (*auxv)[2],
			   size_t nauxv, uint64_t sp)
{
	struct proc_self_info *in = &p->self_info;
	free(in->cmdline);
	free(in->environ);
	memset(in, 0, sizeof(*in));
	for (size_t i = 0; i < nauxv && i < sizeof(in->auxv) / sizeof(in->auxv[0]); i++, in->nauxv++)
		in->auxv[i][0] = auxv[i][0], in->auxv[i][1] = auxv[i][1];
	in->start_stack = sp;
	if (argc)
		in->arg_start = argp[0], in->arg_end = argp[argc - 1] + strlen(argv[argc - 1]) + 1;
	if (envc)
		in->env_start = envpp[0], in->env_end = envpp[envc - 1] + strlen(envp[envc - 1]) + 1;
	size_t n = 0;
	for (size_t i = 0; i < argc; i++)
		n += strlen(argv[i]) + 1;
	if ((in->cmdline = malloc(n + 1)))
		for (size_t i = 0; i < argc; i++) {
			memcpy(in->cmdline + in->cmdline_len, argv[i], strlen(argv[i]) + 1);
			in->cmdline_len += strlen(argv[i]) + 1;
		}
	n = 0;
	for (size_t i = 0; i < envc; i++)
		n += strlen(envp[i]) + 1;
	if ((in->environ = malloc(n + 1)))
		for (size_t i = 0; i < envc; i++) {
			memcpy(in->environ + in->environ_len, envp[i], strlen(envp[i]) + 1);
			in->environ_len += strlen(envp[i]) + 1;
		}
}

int loader_setup_stack(struct sim *s, uint64_t *sp_out)
{
	struct stk k = {s, STACK_TOP, 0};
	char *const *argv = s->p->argv ? s->p->argv : s->opt.argv;
	char *const *envp = s->p->envp ? s->p->envp : s->opt.envp;
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
	uint64_t execfn = push_bytes(&k, s->p->path, strlen(s->p->path) + 1);
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
		{AT_PHDR, s->p->phdr}, {AT_PHENT, sizeof(Elf64_Phdr)}, {AT_PHNUM, s->p->phnum},
		{AT_PAGESZ, GUEST_PAGE}, {AT_BASE, s->p->interp_bias}, {AT_FLAGS, 0}, {AT_ENTRY, s->p->prog_entry},
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
	keep_self_info(s->p, argv, argc, argp, envp, envc, envpp, auxv, sizeof(auxv) / sizeof(auxv[0]), k.sp);
	free(argp);
	free(envpp);
	*sp_out = k.sp;
	return k.err;
}
