/* Function symbols of an ELF file (libelf), for symbolising addresses.
 * Used by sim/ (ground truth, fault reports) and profiler/ alike. */
#ifndef PMUSIM_COMMON_SYMTAB_H
#define PMUSIM_COMMON_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

struct sym {
	uint64_t addr;     /* run-time address (symbol value + load bias) */
	uint64_t size;     /* 0 when the ELF gives none */
	const char *name;
	uint32_t local_index; /* 0 for global symbols; N >= 1 for the Nth local
	                       * function of that name by address, as BOLT names
	                       * locals "name/N" (bolt RewriteInstance, NameResolver) */
	uint8_t bind;         /* STB_LOCAL, STB_GLOBAL or STB_WEAK */
	uint32_t elf_index;   /* index in the ELF symbol table */
};

struct symtab;

/* Reads STT_FUNC (and STT_GNU_IFUNC) symbols of path from .symtab; for a
 * stripped file from the .symtab of its detached debugging symbols when they
 * are installed (/usr/lib/debug/.build-id/xx/rest.debug, as perf and gdb find
 * them by build id); else from .dynsym; adding bias to every value. A file without symbols
 * gives an empty table. Returns 0 or a negative pmusim_err. */
int symtab_load(const char *path, uint64_t bias, struct symtab **out);
/* Adds the functions of another file (a shared library mapped at bias) to st;
 * local functions keep the numbering of their own file. Earlier results of
 * symtab_lookup/symtab_at are invalid afterwards. 0 or a negative pmusim_err. */
int symtab_add_file(struct symtab *st, const char *path, uint64_t bias);

/* An empty table (never fails except for memory). */
struct symtab *symtab_new_empty(void);
void symtab_free(struct symtab *st);

/* The function containing addr: the nearest symbol at or below addr whose
 * [addr, addr+size) covers it (a size-0 symbol covers up to the next symbol,
 * at most 64 KiB).
 * NULL when none does. */
const struct sym *symtab_lookup(const struct symtab *st, uint64_t addr);

/* Aliases (other function symbols at one address) are kept apart: lookups and
 * symtab_at see one symbol per address; symtab_perf_alias sees them all.
 * Among the symbols at s's address, the one perf names the address by (perf's
 * symbol.c choose_best_symbol: sized over unsized, non-weak over weak, global
 * over local, fewer leading underscores, then the longest name). */
const struct sym *symtab_perf_alias(const struct symtab *st, const struct sym *s);

/* The name BOLT gives the function: "name" or "name/N" for locals. */
void symtab_bolt_name(const struct sym *s, char *buf, size_t len);

size_t symtab_count(const struct symtab *st);
const struct sym *symtab_at(const struct symtab *st, size_t i);

#endif
