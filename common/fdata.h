/* BOLT's fdata text ("<is_sym> <name> <hex offset> <is_sym> <name> <hex offset>
 * <mispreds> <count>", llvm-bolt's DataReader and perf2bolt output; bolt/docs),
 * written by the ground truth and the profiler alike, and read back for
 * validation. Addresses are named by the function that covers them as BOLT
 * names it ("name", "name/N" for locals); where no function does, "0 <dso>
 * <offset from the load bias>" of the mapping that holds the address (the
 * program, a shared library, or "//anon" memory; struct fdata_region). */
#ifndef PMUSIM_COMMON_FDATA_H
#define PMUSIM_COMMON_FDATA_H

#include <stdint.h>
#include <stdio.h>

#include "common/symtab.h"

/* A mapping named in "0 <name> <offset>" lines: the addresses [start, end) are
 * written as offsets from bias. Shared libraries: their file name and load bias
 * (offsets are the library's own addresses, e.g. of its PLT); anonymous
 * executable memory (code written at run time): "//anon", as perf names it,
 * and bias 0 (offsets are addresses, as perf shows them). */
struct fdata_region {
	uint64_t start, end, bias;
	const char *name;
};

/* How fdata names addresses of one program. */
struct fdata_namer {
	const struct symtab *st;
	const char *dso;   /* file name of the program, for "0 dso off" */
	uint64_t bias;     /* load bias */
	const struct fdata_region *regions; /* other mappings, newest last; may be NULL */
	size_t nregions;
};

/* The address named "0 <name> <off>" by one of the regions (the newest of that
 * name that contains it, else the newest of that name): 1 and *addr, or 0 when
 * no region has that name. */
int fdata_region_resolve(const struct fdata_region *r, size_t n, const char *name, uint64_t off,
			 uint64_t *addr);

/* Writes "<1|0> <name> <hexoff>" for addr. */
void fdata_write_loc(FILE *f, const struct fdata_namer *nm, uint64_t addr);
/* Writes one line: from, to, mispredicts, count. */
void fdata_write_line(FILE *f, const struct fdata_namer *nm, uint64_t from, uint64_t to,
		      uint64_t mispreds, uint64_t count);
/* The location text of addr ("1 main 1f") into buf. */
void fdata_loc_text(const struct fdata_namer *nm, uint64_t addr, char *buf, size_t len);

/* One parsed line: key is the six location fields joined by single spaces. */
struct fdata_line {
	char key[1024];
	uint64_t mispreds;
	double count;
};
/* Parses one line; 0, or -1 when it is not an fdata edge line (blank lines and
 * BOLT's "no_lbr"/"boltedcollection" headers give -1 too, and so does a count
 * that is negative or not finite: nan, inf, "1e999"). */
int fdata_parse_line(const char *text, struct fdata_line *out);

#endif
