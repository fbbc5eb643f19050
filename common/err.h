/* pmusim error codes: one enum for every layer, negative values, 0 is success.
 * Library code returns these and never exits; the CLI maps them to messages and
 * exit statuses (see pmusim_strerror). */
#ifndef PMUSIM_COMMON_ERR_H
#define PMUSIM_COMMON_ERR_H

#include <stddef.h>

enum pmusim_err {
	PMUSIM_OK = 0,
	PMUSIM_ERR_NOMEM = -1,      /* out of host memory */
	PMUSIM_ERR_IO = -2,         /* host file could not be opened/read/written */
	PMUSIM_ERR_ELF = -3,        /* not an ELF file, truncated or corrupt */
	PMUSIM_ERR_ARCH = -4,       /* ELF for another machine or class */
	PMUSIM_ERR_DYNAMIC = -5,    /* program needs an interpreter (dynamic) */
	PMUSIM_ERR_UNSUPPORTED = -6,/* feature not implemented */
	PMUSIM_ERR_ARG = -7,        /* bad argument or option */
	PMUSIM_ERR_EMU = -8,        /* the emulator (Unicorn) failed */
	PMUSIM_ERR_DECODE = -9,     /* guest code could not be decoded */
	PMUSIM_ERR_INTERNAL = -10,  /* an invariant of pmusim broke */
	PMUSIM_ERR_FORMAT = -11,    /* input file of a known format is malformed */
};

/* Static, never-NULL text for an error code (unknown codes get a generic text). */
const char *pmusim_strerror(int err);

/* Writes a one-line message, formatted as by printf, into msg when msg is given and
 * msglen is not 0 (truncated to fit, always NUL-terminated; control characters,
 * a newline in a file name among them, written as \n, \t, \r or \xHH), and returns err; for
 * `return pmusim_fail(msg, msglen, PMUSIM_ERR_..., "...", ...);` on error paths. */
int pmusim_fail(char *msg, size_t msglen, int err, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));

/* msg (a NUL-terminated message in a buffer of msglen bytes) made one line in
 * place: control characters become \n, \t, \r or \xHH, cut to fit. For
 * messages made without pmusim_fail (a sim_result's). */
void pmusim_one_line(char *msg, size_t msglen);

#endif
