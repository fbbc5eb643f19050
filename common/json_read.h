/* JSON reader: one whole JSON text (RFC 8259) parsed into a tree of values, for
 * the inputs pmusim reads back (the hot regions `pmusim report --regions --format
 * json` writes and `pmusim run --dbr-regions` reads). Input may be large, corrupt
 * or hostile: it is refused with one line naming its line and column, never with
 * a crash, a hang or unbounded recursion. The writer side is common/json.h. */
#ifndef PMUSIM_COMMON_JSON_READ_H
#define PMUSIM_COMMON_JSON_READ_H

#include <stddef.h>
#include <stdint.h>

/* The deepest nesting of arrays and objects accepted ("[[1]]" is 2 levels,
 * a lone scalar 0); deeper input is refused as malformed, not parsed. */
#define JSON_READ_MAX_DEPTH 256

enum jv_type { JV_NULL = 0, JV_BOOL, JV_NUM, JV_STR, JV_ARR, JV_OBJ };

/* One JSON value: a plain record. Every pointer in it points into the document
 * json_parse made and stays valid until jv_free of that document; fields that
 * do not belong to its type are 0 or NULL. */
struct jv {
	uint8_t type; /* enum jv_type */
	int b;        /* JV_BOOL: 0 or 1 */
	/* JV_NUM: strtod of text in the "C" locale, whatever the process locale is
	 * (strtod_l); beyond the range of a double it is strtod's result as well
	 * (+-HUGE_VAL, or 0 or a subnormal), the exact value staying in text */
	double num;
	/* JV_NUM: the number's own text as written, NUL-terminated (exact integers
	 * come from it, see jv_u64); JV_STR: the string unescaped, NUL-terminated
	 * (a string containing \u0000 is refused, so that strlen(text) == len) */
	const char *text;
	size_t len;       /* JV_STR: its length in bytes */
	size_t n;         /* JV_ARR, JV_OBJ: number of items */
	struct jv *item;  /* JV_ARR, JV_OBJ: the items (elements, values) in document
	                   * order; NULL when n is 0 */
	const char **key; /* JV_OBJ: key[i] (unescaped, NUL-terminated) of item[i];
	                   * repeated keys are all kept */
};

/* Parses the whole of text[0..len): one JSON value per RFC 8259 with optional
 * whitespace (space, tab, CR, LF) around it and nothing else after it; text need
 * not be NUL-terminated and may hold any bytes (it may be NULL when len is 0).
 * Grammar: numbers exactly as RFC 8259 section 6 (no '+', no leading zeros, no
 * ".5", "1.", NaN or Infinity); strings with the escapes \" \\ \/ \b \f \n \r \t
 * and \uXXXX (a surrogate pair joined into one code point, written as UTF-8; a
 * lone surrogate and \u0000 refused), raw bytes below 0x20 refused, every other
 * byte copied as it is (UTF-8 is not validated); the literals true, false, null.
 * Returns 0 with *out (free it with jv_free), or with *out = NULL:
 * PMUSIM_ERR_FORMAT with msg = one line "line L, column C: expected ..., found
 * ..." (1-based; lines end at LF; columns count bytes; at the first byte that
 * does not fit, or one past the last byte when the text ends too early), which
 * includes nesting deeper than JSON_READ_MAX_DEPTH; PMUSIM_ERR_NOMEM.
 * Time and memory are linear in len. msg may be NULL or msglen 0 (no message). */
int json_parse(const char *text, size_t len, struct jv **out, char *msg, size_t msglen);

/* Reads the file at path whole (any kind of file: a pipe or /dev/stdin as well)
 * and parses it as json_parse does. The message does not name the file: the
 * caller prefixes the path. Errors as json_parse's, plus PMUSIM_ERR_IO with
 * msg = strerror's text ("No such file or directory"). */
int json_parse_file(const char *path, struct jv **out, char *msg, size_t msglen);

/* Frees a document: v must be what json_parse or json_parse_file gave (not a
 * value inside it), or NULL. */
void jv_free(struct jv *v);

/* The value of key in object o (the first one when the key is repeated); NULL
 * when o is NULL, no object, or has no such key. A linear search. */
const struct jv *jv_get(const struct jv *o, const char *key);

/* An unsigned 64-bit integer, exact (from the text, never the double), from
 * - a JSON number written as a non-negative integer: digits only, no sign (so
 *   "-0" too is refused), no fraction, no exponent ("1.0" and "1e3" refused),
 *   at most 18446744073709551615;
 * - a JSON string "0x" followed by 1 to 16 hexadecimal digits of either case and
 *   nothing else (addresses, as the code base writes them).
 * Returns 0 with *out, or -1 (*out untouched) for another type, a number that is
 * not such an integer, or a value out of range. v may be NULL (-1). */
int jv_u64(const struct jv *v, uint64_t *out);

/* *out = v->num for a JSON number: 0; -1 (*out untouched) for any other type,
 * null included, a NULL v, or a number beyond a double's range (1e999: strtod
 * gives inf, which no count, share or time can be). */
int jv_num(const struct jv *v, double *out);

#endif
