/* BOLT's fdata text ("<is_sym> <name> <hex offset> <is_sym> <name> <hex offset>
 * <mispreds> <count>", llvm-bolt's DataReader and perf2bolt output; bolt/docs),
 * written by the ground truth and the profiler alike, and read back for
 * validation. Addresses are named by the function that covers them as BOLT
 * names it ("name", "name/N" for locals); where no function does, "0 <dso>
 * <offset from the load bias>". */
#ifndef PMUSIM_COMMON_FDATA_H
#define PMUSIM_COMMON_FDATA_H

#include <stdint.h>
#include <stdio.h>

#include "common/symtab.h"

/* How fdata names addresses of one program. */
struct fdata_namer {
	const struct symtab *st;
	const char *dso;   /* file name of the program, for "0 dso off" */
	uint64_t bias;     /* load bias */
};

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
 * BOLT's "no_lbr"/"boltedcollection" headers give -1 too). */
int fdata_parse_line(const char *text, struct fdata_line *out);

#endif
