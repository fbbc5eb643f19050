/* Command-line numbers (see number.h). Exact integer arithmetic throughout, so
 * that "1e6" and "1000000" and "1000k" are the same value bit for bit (strtod
 * would round 1.1e17). */
#include "common/number.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int hex_digit(int c)
{
	return isdigit(c) ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static int parse_hex(const char *s, uint64_t *out)
{
	uint64_t v = 0;
	if (!*s)
		return NUMBER_SYNTAX;
	for (; *s; s++) {
		int d = hex_digit((unsigned char)*s);
		if (d < 0)
			return NUMBER_SYNTAX;
		if (v >> 60)
			return NUMBER_RANGE;
		v = v << 4 | (uint64_t)d;
	}
	*out = v;
	return NUMBER_OK;
}

/* v * 10^e (e may be negative: then the digits dropped must be zeros). */
static int scale(uint64_t v, long e, uint64_t *out)
{
	for (; e < 0; e++) {
		if (v % 10)
			return NUMBER_FRACTION;
		v /= 10;
	}
	for (; e > 0 && v; e--)
		if (__builtin_mul_overflow(v, 10, &v))
			return NUMBER_RANGE;
	*out = v;
	return NUMBER_OK;
}

/* m = m * 10 + digit if that fits in 64 bits; 1 if it did. */
static int append_digit(uint64_t *m, char digit)
{
	uint64_t v;
	if (__builtin_mul_overflow(*m, 10, &v) || __builtin_add_overflow(v, (uint64_t)(digit - '0'), &v))
		return 0;
	*m = v;
	return 1;
}

int number_parse(const char *s, uint64_t *out)
{
	if (s[0] == '-')
		return NUMBER_NEGATIVE;
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X'))
		return parse_hex(s + 2, out);
	/* mantissa: digits, an optional fraction; digits that no longer fit in 64
	 * bits only move the exponent (and must be zeros to keep the value exact) */
	uint64_t m = 0;
	long e = 0;
	int digits = 0, nonzero_lost = 0;
	const char *p = s;
	for (; isdigit((unsigned char)*p); p++, digits++) {
		if (!append_digit(&m, *p))
			e++, nonzero_lost |= *p != '0';
	}
	if (*p == '.') {
		for (p++; isdigit((unsigned char)*p); p++, digits++) {
			if (append_digit(&m, *p))
				e--;
			else
				nonzero_lost |= *p != '0';
		}
	}
	if (digits == 0)
		return NUMBER_SYNTAX;
	if (*p == 'e' || *p == 'E') {
		const char *q = p + 1;
		int neg = *q == '-';
		q += *q == '-' || *q == '+';
		if (!isdigit((unsigned char)*q))
			return NUMBER_SYNTAX;
		long x = 0;
		for (; isdigit((unsigned char)*q); q++)
			if (x < 1000)
				x = x * 10 + (*q - '0');
		e += neg ? -x : x;
		p = q;
	}
	if (*p) {
		static const char units[] = "kKMG";
		static const int exps[] = {3, 3, 6, 9};
		const char *u = strchr(units, *p);
		if (!u || p[1])
			return NUMBER_SYNTAX;
		e += exps[u - units];
	}
	if (nonzero_lost && e <= 0)
		return NUMBER_FRACTION;
	if (nonzero_lost)
		return NUMBER_RANGE; /* 20 significant digits scaled up: past 2^64 */
	return scale(m, e, out);
}

int number_parse_real(const char *s, double *out)
{
	if (!*s || isspace((unsigned char)*s))
		return NUMBER_SYNTAX;
	char *end;
	errno = 0;
	double v = strtod(s, &end);
	if (end == s || *end)
		return NUMBER_SYNTAX;
	/* ERANGE also flags an underflow ("1e-999"), which is a finite 0 or denormal */
	if (!isfinite(v) || (errno == ERANGE && fabs(v) == HUGE_VAL))
		return NUMBER_NOT_FINITE;
	*out = v;
	return NUMBER_OK;
}

const char *number_strerror(int status)
{
	switch (status) {
	case NUMBER_OK: return "is a number";
	case NUMBER_NEGATIVE: return "is negative";
	case NUMBER_FRACTION: return "is not a whole number";
	case NUMBER_RANGE: return "is too large (above 2^64-1)";
	case NUMBER_NOT_FINITE: return "is not a finite number";
	default: return "is not a number";
	}
}
