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
};

/* Parses s whole into *out; NUMBER_OK or one of the errors (*out untouched). */
int number_parse(const char *s, uint64_t *out);

/* A short phrase for an error ("is not a number", "is negative" ...). */
const char *number_strerror(int status);

#endif
