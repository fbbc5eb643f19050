/* The CPI options shared by `pmusim report --cpi` and `pmusim validate --cpi`
 * (profiler/cpi.h): which unit, where instruction frequencies and cycles come
 * from, a second recording for the cycles, and the per-sample correction. */
#ifndef PMUSIM_CLI_CPI_ARGS_H
#define PMUSIM_CLI_CPI_ARGS_H

#include "cli/profile_args.h"
#include "profiler/cpi.h"

enum { CPI_O_BY = 400, CPI_O_INSNS_FROM, CPI_O_CYCLES_FROM, CPI_O_CYCLES_INPUT, CPI_O_REFILL, CPI_O_SKID };

#define CPI_LONG_OPTIONS                                                                            \
	{"by", required_argument, 0, CPI_O_BY}, {"insns-from", required_argument, 0, CPI_O_INSNS_FROM}, \
	{"cycles-from", required_argument, 0, CPI_O_CYCLES_FROM},                                      \
	{"cycles-input", required_argument, 0, CPI_O_CYCLES_INPUT},                                    \
	{"refill", required_argument, 0, CPI_O_REFILL}, {"skid-cycles", required_argument, 0, CPI_O_SKID}

#define CPI_OPTIONS_HELP                                                                            \
	"  --by UNIT            function (default), block (a code run, by its address\n"              \
	"                       range) or insn (each instruction with its disassembly)\n"            \
	"  --insns-from SRC     lbr (default): every instruction of the LBR ranges of the\n"         \
	"                       taken-branch samples (br_inst_retired.near_taken -b), each\n"       \
	"                       weighted period/(entries-1); ip: the instructions event's\n"         \
	"                       sample IPs, each weighted by its period (the traditional\n"         \
	"                       method)\n"                                                              \
	"  --cycles-from SRC    period (default): the cycles event's sample IPs, each its\n"         \
	"                       period (with --delta: P+R) corrected by --refill and\n"               \
	"                       --skid-cycles; lbr: the LBR entries' cycle counts (perf's\n"         \
	"                       method), spread over the range's instructions\n"                     \
	"  --cycles-input FILE  the cycles samples from FILE (a second run of the same\n"           \
	"                       program) instead of from -i\n"                                        \
	"  --refill A           cycles the counter counted per sample that were not the\n"           \
	"                       program's (the recording's --refill): subtracted\n"                  \
	"  --skid-cycles S      cycles per sample the counter did not count (mean skid, with\n"     \
	"                       record --reload interrupt): added\n"

struct cpi_args {
	int on;               /* --cpi */
	enum cpi_unit by;
	struct cpi_opts o;
	const char *cycles_input;
	double refill, skid;
	int given;            /* a CPI option was on the command line */
};

/* Handles a CPI option: 0 handled, -1 bad value (message printed), 1 not one. */
int cpi_args_option(struct cpi_args *a, int code, const char *arg, const char *cmd);

/* Reads -i (and --cycles-input) into *out; *bin (and *bin2, the second
 * recording's; may be NULL) get the binaries, freed by the caller. 0; 1 when the
 * recordings hold nothing the sources need (a line says what to record);
 * -1 on errors (message printed). */
int cpi_args_load(struct cpi_args *a, const struct profile_args *pa, struct cpi **out, struct binary **bin,
		  struct binary **bin2, const char *cmd);

#endif
