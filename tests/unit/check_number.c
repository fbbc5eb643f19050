/* common/number: command-line numbers. Expected values are written out by hand
 * (decimal literals), never computed by the parser. */
#include <check.h>
#include <stdint.h>

#include "common/number.h"
#include "tests/unit/run_suite.h"

static const struct {
	int line;
	const char *text;
	int status;
	uint64_t value;
} rows[] = {
	{__LINE__, "0", NUMBER_OK, 0},
	{__LINE__, "10", NUMBER_OK, 10},
	{__LINE__, "010", NUMBER_OK, 10}, /* not octal */
	{__LINE__, "08", NUMBER_OK, 8},   /* strtoull(.., 0) refuses it */
	{__LINE__, "0009", NUMBER_OK, 9},
	{__LINE__, "100003", NUMBER_OK, 100003},
	{__LINE__, "100k", NUMBER_OK, 100000},
	{__LINE__, "100K", NUMBER_OK, 100000},
	{__LINE__, "2M", NUMBER_OK, 2000000},
	{__LINE__, "3G", NUMBER_OK, 3000000000ULL},
	{__LINE__, "1.5k", NUMBER_OK, 1500},
	{__LINE__, "0.5M", NUMBER_OK, 500000},
	{__LINE__, "1e6", NUMBER_OK, 1000000},
	{__LINE__, "1E6", NUMBER_OK, 1000000},
	{__LINE__, "2.5e3", NUMBER_OK, 2500},
	{__LINE__, "1e+3", NUMBER_OK, 1000},
	{__LINE__, "1000e-3", NUMBER_OK, 1},
	{__LINE__, "1e3k", NUMBER_OK, 1000000},
	{__LINE__, "1.10e17", NUMBER_OK, 110000000000000000ULL}, /* a double would not be exact here */
	{__LINE__, "18446744073709551615", NUMBER_OK, 18446744073709551615ULL},
	{__LINE__, "18446744073709551616", NUMBER_RANGE, 0},
	{__LINE__, "184467440737095516150", NUMBER_RANGE, 0},
	{__LINE__, "99999999999999999999", NUMBER_RANGE, 0},
	{__LINE__, "1e20", NUMBER_RANGE, 0},
	{__LINE__, "20G", NUMBER_OK, 20000000000ULL},
	{__LINE__, "18446744073709552k", NUMBER_RANGE, 0},
	{__LINE__, "1e999999", NUMBER_RANGE, 0},
	{__LINE__, "0e999", NUMBER_OK, 0},
	{__LINE__, "0x10", NUMBER_OK, 16},
	{__LINE__, "0XfF", NUMBER_OK, 255},
	{__LINE__, "0xffffffffffffffff", NUMBER_OK, 18446744073709551615ULL},
	{__LINE__, "0x10000000000000000", NUMBER_RANGE, 0},
	{__LINE__, "0x", NUMBER_SYNTAX, 0},
	{__LINE__, "0x1g", NUMBER_SYNTAX, 0},
	{__LINE__, "0x10k", NUMBER_SYNTAX, 0},
	{__LINE__, "1.5", NUMBER_FRACTION, 0},
	{__LINE__, "1e-3", NUMBER_FRACTION, 0},
	{__LINE__, "1.0001k", NUMBER_FRACTION, 0},
	{__LINE__, "-5", NUMBER_NEGATIVE, 0},
	{__LINE__, "-0", NUMBER_NEGATIVE, 0},
	{__LINE__, "", NUMBER_SYNTAX, 0},
	{__LINE__, "abc", NUMBER_SYNTAX, 0},
	{__LINE__, "+5", NUMBER_SYNTAX, 0},
	{__LINE__, " 5", NUMBER_SYNTAX, 0},
	{__LINE__, "5 ", NUMBER_SYNTAX, 0},
	{__LINE__, "10x", NUMBER_SYNTAX, 0},
	{__LINE__, "1kk", NUMBER_SYNTAX, 0},
	{__LINE__, "1m", NUMBER_SYNTAX, 0}, /* milli is not a multiplier */
	{__LINE__, "1T", NUMBER_SYNTAX, 0},
	{__LINE__, ".", NUMBER_SYNTAX, 0},
	{__LINE__, "e5", NUMBER_SYNTAX, 0},
	{__LINE__, "1e", NUMBER_SYNTAX, 0},
	{__LINE__, "1e+", NUMBER_SYNTAX, 0},
	{__LINE__, "k", NUMBER_SYNTAX, 0},
};

START_TEST(number_rows)
{
	uint64_t v = 12345;
	int st = number_parse(rows[_i].text, &v);
	ck_assert_msg(st == rows[_i].status, "line %d: '%s' gave status %d, expected %d", rows[_i].line,
		      rows[_i].text, st, rows[_i].status);
	if (st == NUMBER_OK)
		ck_assert_msg(v == rows[_i].value, "line %d: '%s' gave %llu", rows[_i].line, rows[_i].text,
			      (unsigned long long)v);
	else
		ck_assert_msg(v == 12345, "line %d: '%s' wrote *out on an error", rows[_i].line, rows[_i].text);
}
END_TEST

/* Real numbers: what strtod reads, whole, and finite. */
static const struct {
	int line;
	const char *text;
	int status;
	double value;
} reals[] = {
	{__LINE__, "0", NUMBER_OK, 0},
	{__LINE__, "0.5", NUMBER_OK, 0.5},
	{__LINE__, "1", NUMBER_OK, 1},
	{__LINE__, "2.5e3", NUMBER_OK, 2500},
	{__LINE__, "-100", NUMBER_OK, -100},
	{__LINE__, "1e-999", NUMBER_OK, 0}, /* underflow: a finite 0 */
	{__LINE__, "1e308", NUMBER_OK, 1e308},
	{__LINE__, "nan", NUMBER_NOT_FINITE, 0},
	{__LINE__, "NaN", NUMBER_NOT_FINITE, 0},
	{__LINE__, "-nan", NUMBER_NOT_FINITE, 0},
	{__LINE__, "inf", NUMBER_NOT_FINITE, 0},
	{__LINE__, "-inf", NUMBER_NOT_FINITE, 0},
	{__LINE__, "Infinity", NUMBER_NOT_FINITE, 0},
	{__LINE__, "1e999", NUMBER_NOT_FINITE, 0},
	{__LINE__, "-1e999", NUMBER_NOT_FINITE, 0},
	{__LINE__, "", NUMBER_SYNTAX, 0},
	{__LINE__, " 1", NUMBER_SYNTAX, 0},
	{__LINE__, "1 ", NUMBER_SYNTAX, 0},
	{__LINE__, "0.5x", NUMBER_SYNTAX, 0},
	{__LINE__, "nanx", NUMBER_SYNTAX, 0},
	{__LINE__, "x", NUMBER_SYNTAX, 0},
};

START_TEST(real_rows)
{
	double v = 12345;
	int st = number_parse_real(reals[_i].text, &v);
	ck_assert_msg(st == reals[_i].status, "line %d: '%s' gave status %d, expected %d", reals[_i].line,
		      reals[_i].text, st, reals[_i].status);
	if (st == NUMBER_OK)
		ck_assert_msg(v == reals[_i].value, "line %d: '%s' gave %g", reals[_i].line, reals[_i].text, v);
	else
		ck_assert_msg(v == 12345, "line %d: '%s' wrote *out on an error", reals[_i].line, reals[_i].text);
}
END_TEST

START_TEST(every_error_has_a_phrase)
{
	ck_assert_str_eq(number_strerror(NUMBER_NEGATIVE), "is negative");
	ck_assert_str_eq(number_strerror(NUMBER_SYNTAX), "is not a number");
	ck_assert_str_eq(number_strerror(NUMBER_FRACTION), "is not a whole number");
	ck_assert_str_eq(number_strerror(NUMBER_RANGE), "is too large (above 2^64-1)");
	ck_assert_str_eq(number_strerror(NUMBER_NOT_FINITE), "is not a finite number");
}
END_TEST

int main(void)
{
	Suite *s = suite_create("number");
	TCase *tc = tcase_create("parse");
	tcase_add_loop_test(tc, number_rows, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_loop_test(tc, real_rows, 0, (int)(sizeof(reals) / sizeof(reals[0])));
	tcase_add_test(tc, every_error_has_a_phrase);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
