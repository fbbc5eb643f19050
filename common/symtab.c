/* ELF function-symbol table (System V gABI symbol table; libelf). */
#include "common/symtab.h"

#include <fcntl.h>
#include <stdio.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/arrays.h"
#include "common/buildid.h"
#include "common/err.h"
#include "common/infile.h"

struct symtab {
	struct sym *syms;
	size_t n;
	struct sym *alias; /* symbols dropped as aliases, sorted by address */
	size_t nalias;
};

struct symtab *symtab_new_empty(void)
{
	return calloc(1, sizeof(struct symtab));
}

void symtab_free(struct symtab *st)
{
	if (!st)
		return;
	for (size_t i = 0; i < st->n; i++)
		free((char *)st->syms[i].name);
	for (size_t i = 0; i < st->nalias; i++)
		free((char *)st->alias[i].name);
	free(st->syms);
	free(st->alias);
	free(st);
}

static int cmp_sym(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	/* prefer the sized, then the alphabetically first, symbol at one address */
	if ((x->size == 0) != (y->size == 0))
		return x->size == 0 ? 1 : -1;
	return strcmp(x->name, y->name);
}

static int read_section(Elf *elf, Elf_Scn *scn, GElf_Shdr *sh, struct symtab *st, uint64_t bias)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	if (!data || sh->sh_entsize == 0)
		return 0;
	size_t cnt = sh->sh_size / sh->sh_entsize;
	struct sym *ns = realloc(st->syms, (st->n + cnt) * sizeof(*ns));
	if (!ns && cnt)
		return PMUSIM_ERR_NOMEM;
	st->syms = ns;
	for (size_t i = 0; i < cnt; i++) {
		GElf_Sym s;
		if (!gelf_getsym(data, (int)i, &s))
			return PMUSIM_ERR_ELF;
		int type = GELF_ST_TYPE(s.st_info);
		if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
		    s.st_value == 0)
			continue;
		const char *name = elf_strptr(elf, sh->sh_link, s.st_name);
		if (!name || !*name)
			continue;
		char *dup = strdup(name);
		if (!dup)
			return PMUSIM_ERR_NOMEM;
		st->syms[st->n++] = (struct sym){s.st_value + bias, s.st_size, dup,
						 GELF_ST_BIND(s.st_info) == STB_LOCAL,
						 (uint8_t)GELF_ST_BIND(s.st_info), (uint32_t)i};
	}
	return 0;
}

static int cmp_name_addr(const void *a, const void *b)
{
	const struct sym *x = *(const struct sym *const *)a, *y = *(const struct sym *const *)b;
	int c = strcmp(x->name, y->name);
	if (c)
		return c;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Local functions sharing a name are numbered 1, 2, … by address. */
static void number_locals(struct symtab *st)
{
	struct sym **v = malloc((st->n + 1) * sizeof(*v));
	size_t k = 0;
	if (!v)
		return;
	for (size_t i = 0; i < st->n; i++)
		if (st->syms[i].local_index)
			v[k++] = &st->syms[i];
	if (k)
		arrays_sort(v, k, sizeof(*v), cmp_name_addr);
	for (size_t i = 0; i < k; i++)
		v[i]->local_index = (i > 0 && strcmp(v[i - 1]->name, v[i]->name) == 0)
					    ? v[i - 1]->local_index + 1 : 1;
	free(v);
}

void symtab_bolt_name(const struct sym *s, char *buf, size_t len)
{
	if (s->local_index)
		snprintf(buf, len, "%s/%u", s->name, s->local_index);
	else
		snprintf(buf, len, "%s", s->name);
}

/* The functions of path's sections of one type (SHT_SYMTAB, SHT_DYNSYM). */
static int read_symbols(const char *path, uint32_t type, struct symtab *st, uint64_t bias)
{
	int fd = infile_open(path, NULL);
	if (fd < 0)
		return PMUSIM_ERR_IO;
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	int err = !elf || elf_kind(elf) != ELF_K_ELF ? PMUSIM_ERR_ELF : 0;
	Elf_Scn *scn = NULL;
	while (!err && (scn = elf_nextscn(elf, scn)) != NULL) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh)) {
			err = PMUSIM_ERR_ELF;
			break;
		}
		if (sh.sh_type == type)
			err = read_section(elf, scn, &sh, st, bias);
	}
	if (elf)
		elf_end(elf);
	close(fd);
	return err;
}

/* The detached debugging symbols of a stripped file, where Debian's -dbg
 * packages put them and perf looks first: /usr/lib/debug/.build-id/xx/rest.debug
 * (gdb's "Separate Debug Files", build-id method). Addresses as in the file. */
static void read_debug_file(const char *path, struct symtab *st, uint64_t bias)
{
	uint8_t id[BUILD_ID_MAX];
	int n = elf_build_id(path, id);
	if (n < 2)
		return;
	char hex[2 * BUILD_ID_MAX + 1], dbg[128];
	build_id_hex(id, (size_t)n, hex);
	snprintf(dbg, sizeof(dbg), "/usr/lib/debug/.build-id/%.2s/%s.debug", hex, hex + 2);
	if (read_symbols(dbg, SHT_SYMTAB, st, bias) < 0) {
		for (size_t i = 0; i < st->n; i++) /* a damaged debug file: none of it */
			free((char *)st->syms[i].name);
		st->n = 0;
	}
}

int symtab_load(const char *path, uint64_t bias, struct symtab **out)
{
	*out = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE)
		return PMUSIM_ERR_ELF;
	struct symtab *st = symtab_new_empty();
	int err = st ? read_symbols(path, SHT_SYMTAB, st, bias) : PMUSIM_ERR_NOMEM;
	if (!err && st->n == 0) /* stripped: its debug file, else the dynamic symbols */
		read_debug_file(path, st, bias);
	if (!err && st->n == 0)
		err = read_symbols(path, SHT_DYNSYM, st, bias);
	if (err) {
		symtab_free(st);
		return err;
	}
	if (st->n)
		arrays_sort(st->syms, st->n, sizeof(*st->syms), cmp_sym);
	/* aliases: keep the first symbol at each address, set the others apart */
	size_t w = 0;
	st->alias = malloc((st->n + 1) * sizeof(*st->alias));
	if (!st->alias) {
		symtab_free(st);
		return PMUSIM_ERR_NOMEM;
	}
	for (size_t i = 0; i < st->n; i++) {
		if (w && st->syms[w - 1].addr == st->syms[i].addr)
			st->alias[st->nalias++] = st->syms[i];
		else
			st->syms[w++] = st->syms[i];
	}
	st->n = w;
	number_locals(st);
	*out = st;
	return 0;
}

static int cmp_addr_only(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

static int append(struct sym **dst, size_t *n, struct sym *src, size_t m)
{
	struct sym *v = realloc(*dst, (*n + m + 1) * sizeof(*v));
	if (!v)
		return PMUSIM_ERR_NOMEM;
	arrays_copy(v + *n, src, m, sizeof(*v));
	*dst = v;
	*n += m;
	return 0;
}

int symtab_add_file(struct symtab *st, const char *path, uint64_t bias)
{
	struct symtab *o;
	int err = symtab_load(path, bias, &o);
	if (err < 0)
		return err;
	/* names move over; locals keep the numbers of their own file */
	if ((err = append(&st->syms, &st->n, o->syms, o->n)) == 0 &&
	    (err = append(&st->alias, &st->nalias, o->alias, o->nalias)) == 0) {
		o->n = o->nalias = 0;
		arrays_sort(st->syms, st->n, sizeof(*st->syms), cmp_sym);
		arrays_sort(st->alias, st->nalias, sizeof(*st->alias), cmp_addr_only);
	}
	symtab_free(o);
	return err;
}

const struct sym *symtab_lookup(const struct symtab *st, uint64_t addr)
{
	if (!st || st->n == 0 || addr < st->syms[0].addr)
		return NULL;
	size_t lo = 0, hi = st->n;
	while (hi - lo > 1) {
		size_t mid = (lo + hi) / 2;
		if (st->syms[mid].addr <= addr)
			lo = mid;
		else
			hi = mid;
	}
	const struct sym *s = &st->syms[lo];
	if (s->size)
		return addr < s->addr + s->size ? s : NULL;
	/* no size (assembly, _init/_fini): up to the next symbol, at most 64 KiB */
	uint64_t limit = s->addr + 0x10000;
	if (lo + 1 < st->n && st->syms[lo + 1].addr < limit)
		limit = st->syms[lo + 1].addr;
	return addr < limit ? s : NULL;
}

static size_t underscores(const char *name)
{
	size_t n = 0;
	while (name[n] == '_')
		n++;
	return n;
}

/* 1 when perf prefers a over b. */
static int perf_prefers(const struct sym *a, const struct sym *b)
{
	if ((a->size != 0) != (b->size != 0))
		return a->size != 0;
	if ((a->bind == STB_WEAK) != (b->bind == STB_WEAK))
		return b->bind == STB_WEAK;
	if ((a->bind == STB_GLOBAL) != (b->bind == STB_GLOBAL))
		return a->bind == STB_GLOBAL;
	if (underscores(a->name) != underscores(b->name))
		return underscores(a->name) < underscores(b->name);
	if (strlen(a->name) != strlen(b->name))
		return strlen(a->name) > strlen(b->name);
	return a->elf_index < b->elf_index; /* the first inserted stays */
}

const struct sym *symtab_perf_alias(const struct symtab *st, const struct sym *s)
{
	if (!s)
		return NULL;
	size_t lo = 0, hi = st->nalias;
	while (lo < hi) { /* first alias at or above s->addr */
		size_t mid = (lo + hi) / 2;
		if (st->alias[mid].addr < s->addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	const struct sym *best = s;
	for (; lo < st->nalias && st->alias[lo].addr == s->addr; lo++)
		if (perf_prefers(&st->alias[lo], best))
			best = &st->alias[lo];
	return best;
}

size_t symtab_count(const struct symtab *st)
{
	return st ? st->n : 0;
}

const struct sym *symtab_at(const struct symtab *st, size_t i)
{
	return i < st->n ? &st->syms[i] : NULL;
}
