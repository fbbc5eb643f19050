/* Addresses of a recording -> functions, as perf names them: each process's
 * executable mappings come from the recording's MMAP and MMAP2 records (a
 * FORK copies the parent's mappings to a new process, a COMM with
 * PERF_RECORD_MISC_COMM_EXEC drops them, as perf's thread maps do), and the
 * functions from the mapped files' ELF symbols (common/symtab.h: .symtab, else
 * .dynsym), read once per file and load bias when first needed and only when
 * the file exists on this host. A later mapping over the same addresses wins.
 *
 * Used by the REP report (profiler/rep_report.h) and the stack report
 * (profiler/stacks.h). */
#ifndef PMUSIM_PROFILER_SYMBOLIZE_H
#define PMUSIM_PROFILER_SYMBOLIZE_H

#include <stddef.h>
#include <stdint.h>

#include "common/symtab.h"
#include "profiler/perfdata.h"

/* symbolizer_place's pid for "any process": the mappings of every process,
 * oldest first (for recordings of one program). */
#define SYMBOLIZE_ANY_PID UINT32_MAX

struct symbolizer;

/* Where an address is. */
struct sym_place {
	const char *path;        /* the mapped file as the record names it; NULL: no mapping */
	uint64_t file_off;       /* offset of the address in that file */
	const struct symtab *st; /* the file's functions; NULL when the file is not here */
	const struct sym *sym;   /* the function containing the address; NULL when unknown */
};

/* An empty symbolizer; NULL when out of memory. */
struct symbolizer *symbolizer_new(void);
void symbolizer_free(struct symbolizer *z);

/* Looks the recording's files up under dir (perf's --symfs): /a/b is read as
 * dir/a/b. Set before the first record. 0 or PMUSIM_ERR_NOMEM. */
int symbolizer_set_symfs(struct symbolizer *z, const char *dir);

/* Takes a record read by perfdata_next: MMAP (unless a data mapping) and MMAP2
 * with PROT_EXEC add a mapping to their pid, FORK of a new process copies its
 * parent's, COMM_EXEC drops the pid's; other records are ignored. 0, or
 * PMUSIM_ERR_NOMEM (the symbolizer stays usable, the mapping is lost). */
int symbolizer_record(struct symbolizer *z, const struct perf_record *r);

/* Fills *p for addr in process pid (or SYMBOLIZE_ANY_PID); 1 when a mapping
 * covers addr, 0 when none does (*p then all NULL and 0). Pointers stay valid
 * until the next symbolizer_record or symbolizer_free. */
int symbolizer_place(struct symbolizer *z, uint32_t pid, uint64_t addr, struct sym_place *p);

/* A file a process maps executable, placed where its first mapping puts it. */
struct sym_file {
	const char *path; /* where this host reads it (under the symfs directory) */
	uint64_t bias;    /* its load bias (common/elf_bias.h) */
};

/* The files process pid maps executable, oldest first, each once, those that
 * exist on this host only (no anonymous memory, no "[vdso]"): up to max of them
 * into out. Returns how many there are (may exceed max). *version, when not
 * NULL, gets a number that changes whenever pid's mappings change (0: none
 * known). Pointers stay valid until symbolizer_free. */
size_t symbolizer_files(struct symbolizer *z, uint32_t pid, struct sym_file *out, size_t max,
                        uint64_t *version);

/* "name+0xoff" (the symbol's own name, as symtab_lookup gives it), else
 * "file+0xoff" (the mapped file's base name and the offset in the file),
 * else "?" — for addr as placed by symbolizer_place. */
void sym_place_text(const struct sym_place *p, uint64_t addr, char *buf, size_t len);

#endif
