/* Names of PLT entries as perf gives them ("getenv@plt"): perf reads no symbol
 * for a PLT entry and makes one per .rela.plt relocation (perf 6.1
 * util/symbol-elf.c, dso__synthesize_plt_symbols): on x86-64 the entries are
 * 16 bytes each, in relocation order, after a 16-byte header in .plt, or from
 * the start of .plt.sec when the program has one (IBT); the name is the
 * relocation's dynamic symbol's, empty for R_X86_64_IRELATIVE, then "@plt".
 * Addresses here are file offsets, as the symbolizer places samples. */
#ifndef PMUSIM_PROFILER_PLT_NAMES_H
#define PMUSIM_PROFILER_PLT_NAMES_H

#include <stddef.h>
#include <stdint.h>

struct plt_names;

/* The PLT entries of the ELF file at path; an empty table when it has none or
 * cannot be read (the names are a convenience, never an error). NULL only when
 * out of memory. */
struct plt_names *plt_names_read(const char *path);
void plt_names_free(struct plt_names *p);

/* The name of the entry holding file offset off, or NULL. */
const char *plt_names_lookup(const struct plt_names *p, uint64_t off);

#endif
