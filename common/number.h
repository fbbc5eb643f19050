/* Numbers on the command line, read as a person writes them: decimal (a leading
 * zero is not octal: "010" is ten), with an optional SI multiplier (k or K = 1000,
 * M = 10^6, G = 10^9, decimal as the SI prefixes are) or exponent ("1e6",
 * "2.5e3", "1.5k": any form whose value is a whole number), or hexadecimal with
 * 0x (addresses, raw encodings). No sign, no spaces. */
#ifndef PMUSIM_COMMON_NUMBER_H
#define PMUSIM_COMMON_NUMBER_H

#include <stdint.h>

enum number_status {
	NUMBER_OK = 0,
	NUMBER_SYNTAX = -1,   /* not a number of the forms above */
	NUMBER_NEGATIVE = -2, /* starts with '-' */
	NUMBER_FRACTION = -3, /* a valid number that is not whole ("1.5", "1e-3") */
	NUMBER_RANGE = -4,    /* above 2^64 - 1 */
	NUMBER_NOT_FINITE = -5, /* nan, inf, or beyond a double's range ("1e999") */
};

/* Parses s whole into *out; NUMBER_OK or one of the errors (*out untouched). */
int number_parse(const char *s, uint64_t *out);

/* A real number ("0.5", "2e-3", "-1", as strtod reads it) whole into *out:
 * NUMBER_OK, NUMBER_SYNTAX (empty, leading space, anything after the number)
 * or NUMBER_NOT_FINITE (*out untouched). Every option and input that takes a
 * fraction, a share or a count with a decimal point goes through here, so a nan
 * never passes a range check (every comparison with it is false) and an inf
 * never reaches an output. */
int number_parse_real(const char *s, double *out);

/* A short phrase for an error ("is not a number", "is negative" ...). */
const char *number_strerror(int status);

#endif
