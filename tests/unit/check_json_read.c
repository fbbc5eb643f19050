/* common/json_read: hand-written JSON texts, each with the tree, the bytes or
 * the one-line error (line, column) it must give written out by hand from
 * RFC 8259 and the UTF-8 encoding table (RFC 3629), never computed by the
 * parser. Every text is parsed from a heap copy of exactly its length, not
 * NUL-terminated, so that ASan sees any read past its end. */
#include <check.h>
#include <locale.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/json_read.h"
#include "common/rng.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/tmp_dir.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))
/* a literal and its length, NUL bytes inside included */
#define T(s) s, sizeof(s) - 1

static int parse(const char *text, size_t len, struct jv **out, char *msg, size_t msglen)
{
	char *copy = malloc(len ? len : 1);
	ck_assert_ptr_nonnull(copy);
	memcpy(copy, text, len);
	int rc = json_parse(copy, len, out, msg, msglen);
	free(copy);
	return rc;
}

static struct jv *parse_ok(const char *text, size_t len)
{
	struct jv *v = NULL;
	char msg[256] = "";
	int rc = parse(text, len, &v, msg, sizeof(msg));
	ck_assert_msg(rc == 0, "'%.*s': %d %s", (int)len, text, rc, msg);
	ck_assert_ptr_nonnull(v);
	return v;
}

/* ---- values ---- */

START_TEST(scalars)
{
	struct jv *v = parse_ok(T("null"));
	ck_assert_int_eq(v->type, JV_NULL);
	jv_free(v);
	v = parse_ok(T(" true "));
	ck_assert_int_eq(v->type, JV_BOOL);
	ck_assert_int_eq(v->b, 1);
	jv_free(v);
	v = parse_ok(T("\r\n\tfalse\n"));
	ck_assert_int_eq(v->type, JV_BOOL);
	ck_assert_int_eq(v->b, 0);
	jv_free(v);
	v = parse_ok(T("-12.5e-1"));
	ck_assert_int_eq(v->type, JV_NUM);
	ck_assert_str_eq(v->text, "-12.5e-1");
	ck_assert(v->num == -1.25);
	jv_free(v);
	v = parse_ok(T("0"));
	ck_assert_int_eq(v->type, JV_NUM);
	ck_assert_str_eq(v->text, "0");
	ck_assert(v->num == 0);
	jv_free(v);
	v = parse_ok(T("2E+3"));
	ck_assert_str_eq(v->text, "2E+3");
	ck_assert(v->num == 2000);
	jv_free(v);
	v = parse_ok(T("\"ab c\""));
	ck_assert_int_eq(v->type, JV_STR);
	ck_assert_str_eq(v->text, "ab c");
	ck_assert_uint_eq(v->len, 4);
	jv_free(v);
	v = parse_ok(T("\"\""));
	ck_assert_int_eq(v->type, JV_STR);
	ck_assert_str_eq(v->text, "");
	ck_assert_uint_eq(v->len, 0);
	jv_free(v);
}
END_TEST

START_TEST(text_is_not_read_past_len)
{
	/* "[1]" followed by bytes that are not part of the text */
	struct jv *v = parse_ok("[1]xyz", 3);
	ck_assert_int_eq(v->type, JV_ARR);
	ck_assert_uint_eq(v->n, 1);
	jv_free(v);
	v = parse_ok("123456", 2);
	ck_assert_str_eq(v->text, "12");
	jv_free(v);
	jv_free(NULL);
}
END_TEST

START_TEST(nested)
{
	struct jv *v = parse_ok(T("{\"a\": [1, {\"b\": null, \"c\": [true, \"x\"]}],\n \"d\": {}, "
	                          "\"e\": [], \"f\": [[[]]]}"));
	ck_assert_int_eq(v->type, JV_OBJ);
	ck_assert_uint_eq(v->n, 4);
	ck_assert_str_eq(v->key[0], "a");
	ck_assert_str_eq(v->key[1], "d");
	ck_assert_str_eq(v->key[2], "e");
	ck_assert_str_eq(v->key[3], "f");
	const struct jv *a = jv_get(v, "a");
	ck_assert_ptr_eq(a, &v->item[0]);
	ck_assert_int_eq(a->type, JV_ARR);
	ck_assert_uint_eq(a->n, 2);
	ck_assert_str_eq(a->item[0].text, "1");
	const struct jv *o = &a->item[1];
	ck_assert_int_eq(o->type, JV_OBJ);
	ck_assert_uint_eq(o->n, 2);
	ck_assert_int_eq(jv_get(o, "b")->type, JV_NULL);
	const struct jv *c = jv_get(o, "c");
	ck_assert_int_eq(c->type, JV_ARR);
	ck_assert_uint_eq(c->n, 2);
	ck_assert_int_eq(c->item[0].type, JV_BOOL);
	ck_assert_int_eq(c->item[0].b, 1);
	ck_assert_str_eq(c->item[1].text, "x");
	const struct jv *d = jv_get(v, "d");
	ck_assert_int_eq(d->type, JV_OBJ);
	ck_assert_uint_eq(d->n, 0);
	const struct jv *e = jv_get(v, "e");
	ck_assert_int_eq(e->type, JV_ARR);
	ck_assert_uint_eq(e->n, 0);
	const struct jv *f = jv_get(v, "f");
	ck_assert_uint_eq(f->n, 1);
	ck_assert_uint_eq(f->item[0].n, 1);
	ck_assert_int_eq(f->item[0].item[0].type, JV_ARR);
	ck_assert_uint_eq(f->item[0].item[0].n, 0);
	ck_assert_ptr_null(jv_get(v, "b")); /* not at the top */
	ck_assert_ptr_null(jv_get(v, "A"));
	ck_assert_ptr_null(jv_get(a, "a")); /* an array */
	ck_assert_ptr_null(jv_get(NULL, "a"));
	jv_free(v);
}
END_TEST

START_TEST(repeated_keys)
{
	struct jv *v = parse_ok(T("{\"a\":1,\"b\":2,\"a\":3}"));
	ck_assert_uint_eq(v->n, 3); /* all kept */
	ck_assert_str_eq(jv_get(v, "a")->text, "1");
	ck_assert_str_eq(v->key[2], "a");
	ck_assert_str_eq(v->item[2].text, "3");
	jv_free(v);
}
END_TEST

/* ---- strings ---- */

static const struct {
	int line;
	const char *json;
	size_t jlen;
	const char *bytes;
	size_t len;
} strings[] = {
    {__LINE__, T("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\""), T("\"\\/\b\f\n\r\t")},
    {__LINE__, T("\"a\\u0062c\""), T("abc")},
    {__LINE__, T("\"\\u0041\""), T("A")},
    {__LINE__, T("\"\\u007f\""), T("\x7f")},
    {__LINE__, T("\"\\u0080\""), T("\xc2\x80")},
    {__LINE__, T("\"\\u00e9\""), T("\xc3\xa9")},
    {__LINE__, T("\"\\u00E9\""), T("\xc3\xa9")},
    {__LINE__, T("\"\\u07ff\""), T("\xdf\xbf")},
    {__LINE__, T("\"\\u0800\""), T("\xe0\xa0\x80")},
    {__LINE__, T("\"\\u20ac\""), T("\xe2\x82\xac")}, /* euro sign */
    {__LINE__, T("\"\\uffff\""), T("\xef\xbf\xbf")},
    {__LINE__, T("\"\\ud83d\\ude00\""), T("\xf0\x9f\x98\x80")}, /* U+1F600 */
    {__LINE__, T("\"\\uD83D\\uDE00\""), T("\xf0\x9f\x98\x80")},
    {__LINE__, T("\"\\ud800\\udc00\""), T("\xf0\x90\x80\x80")}, /* U+10000 */
    {__LINE__, T("\"\\udbff\\udfff\""), T("\xf4\x8f\xbf\xbf")}, /* U+10FFFF */
    {__LINE__, T("\"x\\ud83d\\ude00y\\n\""), T("x\xf0\x9f\x98\x80y\n")},
    {__LINE__, T("\"caf\xc3\xa9\""), T("caf\xc3\xa9")},   /* raw UTF-8 as it is */
    {__LINE__, T("\"\xff\xfe\x7f\""), T("\xff\xfe\x7f")}, /* not UTF-8: as it is too */
};

START_TEST(string_rows)
{
	struct jv *v = NULL;
	char msg[256] = "";
	int rc = parse(strings[_i].json, strings[_i].jlen, &v, msg, sizeof(msg));
	ck_assert_msg(rc == 0, "line %d: %s", strings[_i].line, msg);
	ck_assert_int_eq(v->type, JV_STR);
	ck_assert_msg(v->len == strings[_i].len && memcmp(v->text, strings[_i].bytes, v->len) == 0,
	              "line %d: %zu bytes", strings[_i].line, v->len);
	ck_assert_msg(v->text[v->len] == 0, "line %d: not NUL-terminated", strings[_i].line);
	jv_free(v);
}
END_TEST

START_TEST(keys_are_unescaped)
{
	struct jv *v = parse_ok(T("{\"\\u00e9t\\u00e9\": 1, \"a\\\"b\": 2}"));
	ck_assert_str_eq(v->key[0], "\xc3\xa9t\xc3\xa9");
	ck_assert_str_eq(v->key[1], "a\"b");
	ck_assert_str_eq(jv_get(v, "a\"b")->text, "2");
	jv_free(v);
}
END_TEST

/* ---- jv_u64, jv_num ---- */

static const struct {
	int line;
	const char *json;
	int rc;
	uint64_t value;
} u64s[] = {
    {__LINE__, "0", 0, 0},
    {__LINE__, "7", 0, 7},
    {__LINE__, "4294967296", 0, 4294967296ULL},
    {__LINE__, "9007199254740993", 0, 9007199254740993ULL}, /* 2^53 + 1: no double has it */
    {__LINE__, "18446744073709551615", 0, 18446744073709551615ULL},
    {__LINE__, "18446744073709551616", -1, 0},
    {__LINE__, "99999999999999999999", -1, 0},
    {__LINE__, "1.0", -1, 0},
    {__LINE__, "-1", -1, 0},
    {__LINE__, "-0", -1, 0},
    {__LINE__, "1e3", -1, 0},
    {__LINE__, "1E3", -1, 0},
    {__LINE__, "\"0xffffffffffffffff\"", 0, 18446744073709551615ULL},
    {__LINE__, "\"0x401000\"", 0, 0x401000},
    {__LINE__, "\"0xABCdef\"", 0, 11259375},
    {__LINE__, "\"0x0\"", 0, 0},
    {__LINE__, "\"0x0000000000000001\"", 0, 1},   /* 16 digits */
    {__LINE__, "\"0x00000000000000001\"", -1, 0}, /* 17 */
    {__LINE__, "\"0x10000000000000000\"", -1, 0},
    {__LINE__, "\"0x\"", -1, 0},
    {__LINE__, "\"0X10\"", -1, 0},
    {__LINE__, "\"0x1g\"", -1, 0},
    {__LINE__, "\"0x-1\"", -1, 0},
    {__LINE__, "\" 0x1\"", -1, 0},
    {__LINE__, "\"0x1 \"", -1, 0},
    {__LINE__, "\"12\"", -1, 0},
    {__LINE__, "\"\"", -1, 0},
    {__LINE__, "true", -1, 0},
    {__LINE__, "null", -1, 0},
    {__LINE__, "[1]", -1, 0},
    {__LINE__, "{\"a\":1}", -1, 0},
};

START_TEST(u64_rows)
{
	struct jv *v = parse_ok(u64s[_i].json, strlen(u64s[_i].json));
	uint64_t x = 12345;
	int rc = jv_u64(v, &x);
	ck_assert_msg(rc == u64s[_i].rc, "line %d: %s gave %d", u64s[_i].line, u64s[_i].json, rc);
	ck_assert_msg(x == (rc ? 12345 : u64s[_i].value), "line %d: %s gave %llu", u64s[_i].line,
	              u64s[_i].json, (unsigned long long)x);
	jv_free(v);
}
END_TEST

START_TEST(num)
{
	struct jv *v = parse_ok(T("[2.5, null, \"2.5\", 1e999, -0, 1e-400, 0.1]"));
	double d = 7;
	ck_assert_int_eq(jv_num(&v->item[0], &d), 0);
	ck_assert(d == 2.5);
	d = 7;
	ck_assert_int_eq(jv_num(&v->item[1], &d), -1);
	ck_assert_int_eq(jv_num(&v->item[2], &d), -1);
	ck_assert_int_eq(jv_num(v, &d), -1);
	ck_assert_int_eq(jv_num(NULL, &d), -1);
	ck_assert(d == 7);
	/* beyond a double: no number (not inf), the text exact */
	ck_assert_int_eq(jv_num(&v->item[3], &d), -1);
	ck_assert(d == 7);
	ck_assert_str_eq(v->item[3].text, "1e999");
	ck_assert_int_eq(jv_num(&v->item[4], &d), 0);
	ck_assert(d == 0 && signbit(d));
	ck_assert_int_eq(jv_num(&v->item[5], &d), 0);
	ck_assert(d == 0);
	ck_assert_int_eq(jv_num(&v->item[6], &d), 0);
	ck_assert(d == 0.1);
	uint64_t x;
	ck_assert_int_eq(jv_u64(NULL, &x), -1);
	jv_free(v);
}
END_TEST

/* The process's locale must not matter: a locale whose decimal point is ','
 * (made with localedef, so that glibc's own strtod shows it in effect). */
START_TEST(numbers_ignore_the_locale)
{
	char dir[512], cmd[1200];
	tmp_dir_make(dir, sizeof(dir), "check_json_read");
	ck_assert(dir[0]);
	snprintf(cmd, sizeof(cmd), "%s/comma.src", dir);
	FILE *f = fopen(cmd, "w");
	ck_assert_ptr_nonnull(f);
	fputs("LC_NUMERIC\ndecimal_point \"<U002C>\"\nthousands_sep \"<U002E>\"\n"
	      "grouping 3;3\nEND LC_NUMERIC\n",
	      f);
	fclose(f);
	/* exit status 1: warnings for the categories it does not define */
	snprintf(cmd, sizeof(cmd),
	         "localedef -c -i %s/comma.src -f ANSI_X3.4-1968 %s/comma 2>/dev/null", dir, dir);
	int st = system(cmd);
	setenv("LOCPATH", dir, 1);
	const char *loc = setlocale(LC_NUMERIC, "comma");
	ck_assert_msg(loc != NULL, "localedef gave %d", st);
	ck_assert(strtod("1.5", NULL) == 1); /* the locale is in effect */
	struct jv *v = parse_ok(T("[1.5, 2.5e-1, 3]"));
	ck_assert(v->item[0].num == 1.5);
	ck_assert(v->item[1].num == 0.25);
	ck_assert(v->item[2].num == 3);
	jv_free(v);
	setlocale(LC_NUMERIC, "C");
	tmp_dir_remove(dir);
}
END_TEST

/* ---- errors ---- */

static const struct {
	int line;
	const char *json;
	size_t len;
	const char *msg;
} bad[] = {
    {__LINE__, T(""), "line 1, column 1: expected a value, found end of input"},
    {__LINE__, T(" \n\t"), "line 2, column 2: expected a value, found end of input"},
    {__LINE__, T("1 2"), "line 1, column 3: expected end of input after the value, found '2'"},
    {__LINE__, T("{}x"), "line 1, column 3: expected end of input after the value, found 'x'"},
    {__LINE__, T("[1]]"), "line 1, column 4: expected end of input after the value, found ']'"},
    {__LINE__, T("[1]\r\n\r\nx"),
     "line 3, column 1: expected end of input after the value, found 'x'"},
    {__LINE__, T("\xef\xbb\xbf{}"),
     "line 1, column 1: expected a value, found byte 0xef"}, /* BOM */
    {__LINE__, T("[1,\0]"), "line 1, column 4: expected a value, found byte 0x00"},
    {__LINE__, T("[1,]"), "line 1, column 4: expected a value, found ']'"},
    {__LINE__, T("[,1]"), "line 1, column 2: expected a value, found ','"},
    {__LINE__, T("[1 2]"), "line 1, column 4: expected ',' or ']', found '2'"},
    {__LINE__, T("[1}"), "line 1, column 3: expected ',' or ']', found '}'"},
    {__LINE__, T("[1,\n  2,\n  x]"), "line 3, column 3: expected a value, found 'x'"},
    {__LINE__, T("{,}"), "line 1, column 2: expected a string key or '}', found ','"},
    {__LINE__, T("{1:2}"), "line 1, column 2: expected a string key or '}', found '1'"},
    {__LINE__, T("{\"a\":1,}"), "line 1, column 8: expected a string key, found '}'"},
    {__LINE__, T("{\"a\" 1}"), "line 1, column 6: expected ':' after the key, found '1'"},
    {__LINE__, T("{\"a\"}"), "line 1, column 5: expected ':' after the key, found '}'"},
    {__LINE__, T("{\"a\":}"), "line 1, column 6: expected a value, found '}'"},
    {__LINE__, T("{\"a\":1 \"b\":2}"), "line 1, column 8: expected ',' or '}', found '\"'"},
    {__LINE__, T("{\"a\":1]"), "line 1, column 7: expected ',' or '}', found ']'"},
    {__LINE__, T("\"abc"),
     "line 1, column 5: expected '\"' closing the string, found end of input"},
    {__LINE__, T("\"a\\xb\""),
     "line 1, column 4: expected an escape (\" \\ / b f n r t u) after '\\', found 'x'"},
    {__LINE__, T("\"\\'\""),
     "line 1, column 3: expected an escape (\" \\ / b f n r t u) after '\\', found '''"},
    {__LINE__, T("\"\\U0041\""),
     "line 1, column 3: expected an escape (\" \\ / b f n r t u) after '\\', found 'U'"},
    {__LINE__, T("\"\\u12g4\""),
     "line 1, column 6: expected a hexadecimal digit of \\uXXXX, found 'g'"},
    {__LINE__, T("\"\\u12\""),
     "line 1, column 6: expected a hexadecimal digit of \\uXXXX, found '\"'"},
    {__LINE__, T("\"\\ud800\""),
     "line 1, column 2: lone high surrogate \\ud800 (no \\uDC00-\\uDFFF after it)"},
    {__LINE__, T("\"\\ud800\\n\""),
     "line 1, column 2: lone high surrogate \\ud800 (no \\uDC00-\\uDFFF after it)"},
    {__LINE__, T("\"\\ud800\\u0041\""),
     "line 1, column 2: lone high surrogate \\ud800 (\\u0041 after it)"},
    {__LINE__, T("\"\\ud800\\ud800\""),
     "line 1, column 2: lone high surrogate \\ud800 (\\ud800 after it)"},
    {__LINE__, T("\"\\ud800\\u00x0\""),
     "line 1, column 12: expected a hexadecimal digit of \\uXXXX, found 'x'"},
    {__LINE__, T("\"ab\\udc00\""), "line 1, column 4: lone low surrogate \\udc00"},
    {__LINE__, T("\"a\\u0000b\""), "line 1, column 3: \\u0000 is not allowed in a string"},
    {__LINE__, T("\"a\tb\""),
     "line 1, column 3: control character 0x09 in a string (must be escaped)"},
    {__LINE__, T("[\"a\nb\"]"),
     "line 1, column 4: control character 0x0a in a string (must be escaped)"},
    {__LINE__, T("\"a\0b\""),
     "line 1, column 3: control character 0x00 in a string (must be escaped)"},
    {__LINE__, T("01"), "line 1, column 2: a number may not have leading zeros"},
    {__LINE__, T("-01"), "line 1, column 3: a number may not have leading zeros"},
    {__LINE__, T("[00]"), "line 1, column 3: a number may not have leading zeros"},
    {__LINE__, T("+1"), "line 1, column 1: expected a value, found '+'"},
    {__LINE__, T(".5"), "line 1, column 1: expected a value, found '.'"},
    {__LINE__, T("1."), "line 1, column 3: expected a digit after '.', found end of input"},
    {__LINE__, T("1.e3"), "line 1, column 3: expected a digit after '.', found 'e'"},
    {__LINE__, T("1e"), "line 1, column 3: expected a digit of the exponent, found end of input"},
    {__LINE__, T("1e+"), "line 1, column 4: expected a digit of the exponent, found end of input"},
    {__LINE__, T("1e+-1"), "line 1, column 4: expected a digit of the exponent, found '-'"},
    {__LINE__, T("-"), "line 1, column 2: expected a digit, found end of input"},
    {__LINE__, T("--1"), "line 1, column 2: expected a digit, found '-'"},
    {__LINE__, T("NaN"), "line 1, column 1: expected a value, found 'N'"},
    {__LINE__, T("Infinity"), "line 1, column 1: expected a value, found 'I'"},
    {__LINE__, T("-Infinity"), "line 1, column 2: expected a digit, found 'I'"},
    {__LINE__, T("0x10"), "line 1, column 2: expected end of input after the value, found 'x'"},
    {__LINE__, T("1,5"), "line 1, column 2: expected end of input after the value, found ','"},
    {__LINE__, T("tru"), "line 1, column 4: expected 'e' of 'true', found end of input"},
    {__LINE__, T("nul1"), "line 1, column 4: expected 'l' of 'null', found '1'"},
    {__LINE__, T("fals"), "line 1, column 5: expected 'e' of 'false', found end of input"},
    {__LINE__, T("True"), "line 1, column 1: expected a value, found 'T'"},
    {__LINE__, T("falsey"), "line 1, column 6: expected end of input after the value, found 'y'"},
    {__LINE__, T("'a'"), "line 1, column 1: expected a value, found '''"},
    {__LINE__, T("[1] // c"), "line 1, column 5: expected end of input after the value, found '/'"},
    {__LINE__,
     T("\x0c"
       "1"),
     "line 1, column 1: expected a value, found byte 0x0c"}, /* form feed */
};

START_TEST(bad_rows)
{
	static struct jv sentinel;
	struct jv *v = &sentinel; /* must become NULL */
	char msg[256] = "";
	int rc = parse(bad[_i].json, bad[_i].len, &v, msg, sizeof(msg));
	ck_assert_msg(rc == PMUSIM_ERR_FORMAT, "line %d: gave %d", bad[_i].line, rc);
	ck_assert_msg(v == NULL, "line %d: *out set on an error", bad[_i].line);
	ck_assert_msg(strcmp(msg, bad[_i].msg) == 0, "line %d: gave \"%s\"", bad[_i].line, msg);
}
END_TEST

/* A document with a value of every kind; no proper prefix of it is JSON. */
static const char doc[] =
    "{\"k\":[0,-1.5e+2,\"a\\u00e9\\ud83d\\ude00\\\\\",true,false,null,{\"x\":{}}],\"z\":[ ]}";

START_TEST(every_prefix_is_refused)
{
	size_t len = sizeof(doc) - 1;
	for (size_t i = 0; i < len; i++) {
		struct jv *v = NULL;
		char msg[256] = "", want[64];
		int rc = parse(doc, i, &v, msg, sizeof(msg));
		ck_assert_msg(rc == PMUSIM_ERR_FORMAT, "prefix %zu gave %d", i, rc);
		/* each stops at the end of the text, column i + 1 */
		snprintf(want, sizeof(want), "line 1, column %zu: ", i + 1);
		ck_assert_msg(strncmp(msg, want, strlen(want)) == 0, "prefix %zu: %s", i, msg);
		ck_assert_msg(strstr(msg, "found end of input"), "prefix %zu: %s", i, msg);
	}
	struct jv *v = parse_ok(doc, len);
	const struct jv *k = jv_get(v, "k");
	ck_assert_uint_eq(k->n, 7);
	ck_assert(k->item[1].num == -150);
	ck_assert_uint_eq(k->item[2].len, 8);
	ck_assert(memcmp(k->item[2].text, "a\xc3\xa9\xf0\x9f\x98\x80\\", 8) == 0);
	ck_assert_int_eq(k->item[6].type, JV_OBJ);
	ck_assert_int_eq(jv_get(&k->item[6], "x")->type, JV_OBJ);
	ck_assert_uint_eq(jv_get(v, "z")->n, 0);
	jv_free(v);
}
END_TEST

/* Seeded mutations of the document: bytes replaced by JSON's own punctuation
 * or by any byte, inserted, dropped. Each result is parsed whole or refused
 * with one "line L, column C: " line; under ASan, neither reads outside. */
START_TEST(mutations)
{
	static const char alphabet[] = "{}[]\",:\\u0eE.-+ \n";
	size_t len = sizeof(doc) - 1;
	char buf[sizeof(doc) + 8], msg[256];
	struct rng r;
	rng_init(&r, 20240611);
	int parsed = 0, refused = 0;
	for (int i = 0; i < 20000; i++) {
		size_t n = len;
		memcpy(buf, doc, len);
		for (int k = (int)rng_uniform(&r, 2); k >= 0; k--) {
			size_t at = rng_uniform(&r, n - 1);
			char c = rng_uniform(&r, 1)
			             ? alphabet[rng_uniform(&r, sizeof(alphabet) - 2)]
			             : (char)rng_uniform(&r, 255);
			switch (rng_uniform(&r, 2)) {
			case 0:
				buf[at] = c;
				break;
			case 1: /* insert */
				memmove(buf + at + 1, buf + at, n - at);
				buf[at] = c;
				n++;
				break;
			default: /* drop */
				memmove(buf + at, buf + at + 1, n - at - 1);
				n--;
			}
		}
		struct jv *v = NULL;
		msg[0] = 0;
		int rc = parse(buf, n, &v, msg, sizeof(msg));
		ck_assert_msg(rc == 0 || rc == PMUSIM_ERR_FORMAT, "mutation %d gave %d", i, rc);
		if (rc == 0) {
			parsed++;
			jv_free(v);
		} else {
			refused++;
			ck_assert_msg(strncmp(msg, "line 1, column ", 15) == 0 ||
			                  strncmp(msg, "line 2, column ", 15) == 0 ||
			                  strncmp(msg, "line 3, column ", 15) == 0 ||
			                  strncmp(msg, "line 4, column ", 15) == 0,
			              "mutation %d: %s", i, msg);
			ck_assert_msg(!strchr(msg, '\n'), "mutation %d: %s", i, msg);
		}
	}
	/* both outcomes occur: the mutations reach past the first byte */
	ck_assert_int_gt(parsed, 100);
	ck_assert_int_gt(refused, 10000);
}
END_TEST

static char *repeat(const char *open, int n, const char *close)
{
	size_t lo = strlen(open), lc = strlen(close);
	char *s = malloc((size_t)n * (lo + lc) + 2);
	ck_assert_ptr_nonnull(s);
	char *p = s;
	for (int i = 0; i < n; i++, p += lo)
		memcpy(p, open, lo);
	*p++ = '1';
	for (int i = 0; i < n; i++, p += lc)
		memcpy(p, close, lc);
	*p = 0;
	return s;
}

START_TEST(depth)
{
	char *s = repeat("[", 256, "]");
	struct jv *v = parse_ok(s, strlen(s));
	const struct jv *w = v;
	for (int i = 0; i < 256; i++) {
		ck_assert_int_eq(w->type, JV_ARR);
		ck_assert_uint_eq(w->n, 1);
		w = &w->item[0];
	}
	ck_assert_str_eq(w->text, "1");
	jv_free(v);
	free(s);

	s = repeat("{\"a\":", 256, "}");
	v = parse_ok(s, strlen(s));
	jv_free(v);
	free(s);

	char msg[256];
	s = repeat("[", 257, "]");
	ck_assert_int_eq(parse(s, strlen(s), &v, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(msg, "line 1, column 257: nesting deeper than 256 arrays and objects");
	free(s);

	s = repeat("{\"a\":[", 129, "]}"); /* the 257th level is an object at column 6 * 128 + 1 */
	ck_assert_int_eq(parse(s, strlen(s), &v, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(msg, "line 1, column 769: nesting deeper than 256 arrays and objects");
	free(s);

	/* a megabyte of '[': refused at once, its half-built tree freed */
	size_t n = (size_t)1 << 20;
	s = malloc(n);
	memset(s, '[', n);
	ck_assert_int_eq(parse(s, n, &v, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(msg, "line 1, column 257: nesting deeper than 256 arrays and objects");
	free(s);
}
END_TEST

START_TEST(errors_free_what_was_built)
{
	/* under ASan (LeakSanitizer), a leak here fails the test */
	char msg[256];
	struct jv *v;
	ck_assert_int_eq(parse(T("{\"a\":[1,\"xy\",{\"b\":[true,{\"c\":\"d\"}]},[[2]]],\"e\":x"),
	                       &v, msg, sizeof(msg)),
	                 PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(msg, "line 1, column 48: expected a value, found 'x'");
	/* msg may be absent */
	ck_assert_int_eq(parse(T("[1,"), &v, NULL, 0), PMUSIM_ERR_FORMAT);
	ck_assert_ptr_null(v);
	/* a short msg is cut, still one NUL-terminated line */
	char small[12];
	ck_assert_int_eq(parse(T("[1,"), &v, small, sizeof(small)), PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(small, "line 1, col");
}
END_TEST

/* ---- size ---- */

START_TEST(ten_megabytes_of_numbers)
{
	/* 1310720 numbers of 7 digits and a comma: "[1000000,1000001,...,2310719]" */
	size_t count = 1310720, len = count * 8 + 1;
	char *s = malloc(len + 1);
	ck_assert_ptr_nonnull(s);
	s[0] = '[';
	for (size_t i = 0; i < count; i++)
		snprintf(s + 1 + i * 8, 9, "%zu,", 1000000 + i);
	s[len - 1] = ']';
	struct jv *v = parse_ok(s, len);
	ck_assert_uint_eq(v->n, 1310720);
	ck_assert_str_eq(v->item[0].text, "1000000");
	ck_assert(v->item[0].num == 1000000);
	ck_assert_str_eq(v->item[654321].text, "1654321");
	uint64_t x;
	ck_assert_int_eq(jv_u64(&v->item[1310719], &x), 0);
	ck_assert_uint_eq(x, 2310719);
	jv_free(v);
	free(s);
}
END_TEST

START_TEST(long_strings_and_many_objects)
{
	/* a 4 MiB string of "ab\n" escaped: "ab\\n" 4 bytes in, 3 out */
	size_t reps = (size_t)1 << 20, len = reps * 4 + 2;
	char *s = malloc(len);
	ck_assert_ptr_nonnull(s);
	s[0] = '"';
	for (size_t i = 0; i < reps; i++)
		memcpy(s + 1 + i * 4, "ab\\n", 4);
	s[len - 1] = '"';
	struct jv *v = parse_ok(s, len);
	ck_assert_uint_eq(v->len, 3145728);
	ck_assert(memcmp(v->text + 3145725, "ab\n", 4) == 0); /* and its NUL */
	jv_free(v);
	free(s);

	/* 200000 small objects, as a regions file has them */
	const char *o = "{\"start\":\"0x401000\",\"n\":3},";
	size_t lo = strlen(o), k = 200000;
	len = k * lo + 1;
	s = malloc(len);
	s[0] = '[';
	for (size_t i = 0; i < k; i++)
		memcpy(s + 1 + i * lo, o, lo);
	s[len - 1] = ']';
	v = parse_ok(s, len);
	ck_assert_uint_eq(v->n, 200000);
	uint64_t x;
	ck_assert_int_eq(jv_u64(jv_get(&v->item[199999], "start"), &x), 0);
	ck_assert_uint_eq(x, 0x401000);
	jv_free(v);
	free(s);
}
END_TEST

/* ---- files ---- */

static void write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(files)
{
	char dir[512], path[600], msg[256];
	struct jv *v;
	tmp_dir_make(dir, sizeof(dir), "check_json_read");
	ck_assert(dir[0]);

	snprintf(path, sizeof(path), "%s/r.json", dir);
	write_file(path, "{\"regions\": [{\"start\": \"0x401000\", \"count\": 3}]}\n");
	ck_assert_int_eq(json_parse_file(path, &v, msg, sizeof(msg)), 0);
	const struct jv *r = jv_get(v, "regions");
	ck_assert_uint_eq(r->n, 1);
	ck_assert_str_eq(jv_get(&r->item[0], "start")->text, "0x401000");
	jv_free(v);

	snprintf(path, sizeof(path), "%s/bad.json", dir);
	write_file(path, "{\"regions\": [\n  {\"start\": 0x401000}\n]}\n");
	ck_assert_int_eq(json_parse_file(path, &v, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(msg, "line 2, column 14: expected ',' or '}', found 'x'");

	snprintf(path, sizeof(path), "%s/empty.json", dir);
	write_file(path, "");
	ck_assert_int_eq(json_parse_file(path, &v, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(msg, "line 1, column 1: expected a value, found end of input");
	ck_assert_ptr_null(v);

	snprintf(path, sizeof(path), "%s/missing.json", dir);
	ck_assert_int_eq(json_parse_file(path, &v, msg, sizeof(msg)), PMUSIM_ERR_IO);
	ck_assert_str_eq(msg, "No such file or directory");
	ck_assert_ptr_null(v);

	ck_assert_int_eq(json_parse_file(dir, &v, msg, sizeof(msg)), PMUSIM_ERR_IO);
	ck_assert_str_eq(msg, "not a regular file or pipe");
	ck_assert_int_eq(json_parse_file("/dev/zero", &v, msg, sizeof(msg)), PMUSIM_ERR_IO);
	ck_assert_str_eq(msg, "not a regular file or pipe");
	/* a FIFO nobody writes: empty at once, not a wait for a writer */
	snprintf(path, sizeof(path), "%s/fifo", dir);
	ck_assert_int_eq(mkfifo(path, 0600), 0);
	ck_assert_int_eq(json_parse_file(path, &v, msg, sizeof(msg)), PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(msg, "line 1, column 1: expected a value, found end of input");
	tmp_dir_remove(dir);
}
END_TEST

START_TEST(a_pipe)
{
	/* not a regular file: read in steps, its size unknown beforehand */
	int fd[2];
	ck_assert_int_eq(pipe(fd), 0);
	const char text[] = "[1, 2, 3]";
	ck_assert_int_eq(write(fd[1], text, sizeof(text) - 1), (int)sizeof(text) - 1);
	close(fd[1]);
	char path[64], msg[256];
	snprintf(path, sizeof(path), "/dev/fd/%d", fd[0]);
	struct jv *v;
	ck_assert_int_eq(json_parse_file(path, &v, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(v->n, 3);
	ck_assert_str_eq(v->item[2].text, "3");
	jv_free(v);
	close(fd[0]);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("json_read");
	TCase *tc = tcase_create("values");
	tcase_add_test(tc, scalars);
	tcase_add_test(tc, text_is_not_read_past_len);
	tcase_add_test(tc, nested);
	tcase_add_test(tc, repeated_keys);
	tcase_add_loop_test(tc, string_rows, 0, (int)N(strings));
	tcase_add_test(tc, keys_are_unescaped);
	tcase_add_loop_test(tc, u64_rows, 0, (int)N(u64s));
	tcase_add_test(tc, num);
	tcase_add_test(tc, numbers_ignore_the_locale);
	suite_add_tcase(s, tc);

	tc = tcase_create("errors");
	tcase_add_loop_test(tc, bad_rows, 0, (int)N(bad));
	tcase_add_test(tc, every_prefix_is_refused);
	tcase_add_test(tc, mutations);
	tcase_add_test(tc, depth);
	tcase_add_test(tc, errors_free_what_was_built);
	suite_add_tcase(s, tc);

	tc = tcase_create("size");
	/* ASan's memory checks slow the 10 MB parse several times over */
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, ten_megabytes_of_numbers);
	tcase_add_test(tc, long_strings_and_many_objects);
	suite_add_tcase(s, tc);

	tc = tcase_create("files");
	tcase_add_test(tc, files);
	tcase_add_test(tc, a_pipe);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
