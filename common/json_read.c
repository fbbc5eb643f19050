/* JSON reader (see json_read.h): RFC 8259 (sections 2-7) parsed iteratively,
 * the open containers on an explicit stack of at most JSON_READ_MAX_DEPTH frames,
 * so that no input reaches the C stack. Each container's items grow in an array
 * of their own (grow_array: doubling, so linear in their number; realloc moves
 * large blocks by remapping); strings, keys and number texts go to one arena per
 * document. The tree is complete at every step (an item is counted before it is
 * parsed, as a null), so an error frees it as jv_free does. */
#include "common/json_read.h"

#include <errno.h>
#include <fcntl.h>
#include <locale.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/infile.h"

/* The arena: chars only (no alignment), in chunks that double from 64 KiB to
 * 4 MiB; a text larger than the next chunk gets a chunk of its own. */
#define ARENA_CHUNK_MIN ((size_t)64 << 10)
#define ARENA_CHUNK_MAX ((size_t)4 << 20)

struct chunk {
	struct chunk *next;
	size_t size, used;
	char data[];
};

struct arena {
	struct chunk *head; /* the chunk being filled first */
	size_t next_size;
};

/* A document: the root value first, so that jv_free finds its document. */
struct doc {
	struct jv root;
	struct arena arena;
};

struct frame {
	struct jv *v;     /* the open array or object (the root or an item) */
	size_t cap, kcap; /* room in v->item and v->key */
};

struct parser {
	const char *text, *p, *end;
	struct arena *arena;
	locale_t c_numeric; /* strtod_l's locale: '.' is the decimal point */
	char *msg;
	size_t msglen;
	int depth;
	struct frame frame[JSON_READ_MAX_DEPTH];
};

static char *arena_alloc(struct arena *a, size_t n)
{
	struct chunk *c = a->head;
	if (c && c->size - c->used >= n) {
		c->used += n;
		return c->data + c->used - n;
	}
	size_t size = a->next_size ? a->next_size : ARENA_CHUNK_MIN;
	int own = n > size;
	if (own)
		size = n;
	else if (size < ARENA_CHUNK_MAX)
		a->next_size = size * 2;
	else
		a->next_size = size;
	if (size > SIZE_MAX - sizeof(struct chunk))
		return NULL;
	struct chunk *nc = malloc(sizeof(struct chunk) + size);
	if (!nc)
		return NULL;
	nc->size = size;
	nc->used = n;
	if (own && c) { /* behind the head, whose free room stays in use */
		nc->next = c->next;
		c->next = nc;
	} else {
		nc->next = c;
		a->head = nc;
	}
	return nc->data;
}

/* Gives back the end of p, the last allocation, keeping its first used bytes. */
static void arena_trim(struct arena *a, const char *p, size_t allocated, size_t used)
{
	struct chunk *c = a->head;
	if (c && p + allocated == c->data + c->used)
		c->used -= allocated - used;
}

static void arena_fini(struct arena *a)
{
	for (struct chunk *c = a->head, *next; c; c = next) {
		next = c->next;
		free(c);
	}
}

/* The arrays of v's containers; recursion as deep as the tree, which the parser
 * bounds by JSON_READ_MAX_DEPTH. */
static void free_items(struct jv *v)
{
	if (v->type != JV_ARR && v->type != JV_OBJ)
		return;
	for (size_t i = 0; i < v->n; i++)
		free_items(&v->item[i]);
	free(v->item);
	free(v->key);
}

/* ---- errors ---- */

static void describe(const struct parser *ps, const char *at, char *buf, size_t len)
{
	unsigned char c = at < ps->end ? (unsigned char)*at : 0;
	if (at >= ps->end)
		snprintf(buf, len, "end of input");
	else if (c >= 0x20 && c < 0x7f)
		snprintf(buf, len, "'%c'", c);
	else
		snprintf(buf, len, "byte 0x%02x", c);
}

/* "line L, column C: " for the byte at (one past the end for the end of input)
 * followed by the formatted text. */
static int fail(struct parser *ps, const char *at, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(struct parser *ps, const char *at, const char *fmt, ...)
{
	size_t line = 1;
	const char *bol = ps->text;
	for (const char *q; (q = memchr(bol, '\n', (size_t)(at - bol))) != NULL; bol = q + 1)
		line++;
	char what[160];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	return pmusim_fail(ps->msg, ps->msglen, PMUSIM_ERR_FORMAT, "line %zu, column %zu: %s", line,
	                   (size_t)(at - bol) + 1, what);
}

/* "expected what, found <the byte at at>". */
static int expected(struct parser *ps, const char *at, const char *what)
{
	char found[32];
	describe(ps, at, found, sizeof(found));
	return fail(ps, at, "expected %s, found %s", what, found);
}

static int no_memory(struct parser *ps)
{
	return pmusim_fail(ps->msg, ps->msglen, PMUSIM_ERR_NOMEM, "out of memory");
}

/* ---- scalars ---- */

static int is_digit(const struct parser *ps, const char *q)
{
	return q < ps->end && *q >= '0' && *q <= '9';
}

static void skip_space(struct parser *ps)
{
	while (ps->p < ps->end &&
	       (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r'))
		ps->p++;
}

static int hex_value(char c)
{
	return c >= '0' && c <= '9'   ? c - '0'
	       : c >= 'a' && c <= 'f' ? c - 'a' + 10
	       : c >= 'A' && c <= 'F' ? c - 'A' + 10
	                              : -1;
}

/* The 4 hex digits after the "\u" at r (the string's raw text ends at end). */
static int hex4(struct parser *ps, const char *r, const char *end, unsigned *cp)
{
	*cp = 0;
	for (int i = 2; i < 6; i++) {
		int d = r + i < end ? hex_value(r[i]) : -1;
		if (d < 0)
			return expected(ps, r + i, "a hexadecimal digit of \\uXXXX");
		*cp = *cp << 4 | (unsigned)d;
	}
	return 0;
}

/* The \uXXXX escape (or surrogate pair) at r as UTF-8 at *d; *r past it. */
static int unicode_escape(struct parser *ps, const char **r, const char *end, char **d)
{
	const char *esc = *r;
	unsigned cp, lo;
	if (hex4(ps, esc, end, &cp))
		return PMUSIM_ERR_FORMAT;
	*r = esc + 6;
	if (cp == 0)
		return fail(ps, esc, "\\u0000 is not allowed in a string");
	if (cp >= 0xdc00 && cp <= 0xdfff)
		return fail(ps, esc, "lone low surrogate \\u%04x", cp);
	if (cp >= 0xd800 && cp <= 0xdbff) {
		if (end - *r < 2 || (*r)[0] != '\\' || (*r)[1] != 'u')
			return fail(ps, esc,
			            "lone high surrogate \\u%04x (no \\uDC00-\\uDFFF after it)",
			            cp);
		if (hex4(ps, *r, end, &lo))
			return PMUSIM_ERR_FORMAT;
		if (lo < 0xdc00 || lo > 0xdfff)
			return fail(ps, esc, "lone high surrogate \\u%04x (\\u%04x after it)", cp,
			            lo);
		cp = 0x10000 + ((cp - 0xd800) << 10) + (lo - 0xdc00);
		*r += 6;
	}
	char *o = *d;
	if (cp < 0x80) {
		*o++ = (char)cp;
	} else if (cp < 0x800) {
		*o++ = (char)(0xc0 | cp >> 6);
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else if (cp < 0x10000) {
		*o++ = (char)(0xe0 | cp >> 12);
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	} else {
		*o++ = (char)(0xf0 | cp >> 18);
		*o++ = (char)(0x80 | (cp >> 12 & 0x3f));
		*o++ = (char)(0x80 | (cp >> 6 & 0x3f));
		*o++ = (char)(0x80 | (cp & 0x3f));
	}
	*d = o;
	return 0;
}

/* Unescapes the raw string text [s, end) (its closing quote at end) into d,
 * which has room for end - s bytes: no escape is shorter than what it makes. */
static int unescape(struct parser *ps, const char *s, const char *end, char *d, size_t *len)
{
	char *d0 = d;
	for (const char *r = s; r < end;) {
		const char *bs = memchr(r, '\\', (size_t)(end - r));
		size_t run = (size_t)((bs ? bs : end) - r);
		memcpy(d, r, run);
		d += run;
		r += run;
		if (!bs)
			break;
		static const char from[] = "\"\\/bfnrt", to[] = "\"\\/\b\f\n\r\t";
		const char *e = r[1] ? strchr(from, r[1]) : NULL;
		if (e) {
			*d++ = to[e - from];
			r += 2;
		} else if (r[1] == 'u') {
			int rc = unicode_escape(ps, &r, end, &d);
			if (rc)
				return rc;
		} else {
			return expected(ps, r + 1, "an escape (\" \\ / b f n r t u) after '\\'");
		}
	}
	*len = (size_t)(d - d0);
	return 0;
}

/* The string whose opening quote is at ps->p, unescaped into the arena. */
static int parse_string(struct parser *ps, const char **out, size_t *outlen)
{
	const char *s = ps->p + 1, *q = s;
	/* its end first (an escaped character is skipped whole), so that one
	 * allocation holds it */
	while (q < ps->end && *q != '"') {
		if ((unsigned char)*q < 0x20)
			return fail(ps, q, "control character 0x%02x in a string (must be escaped)",
			            (unsigned char)*q);
		if (*q == '\\' && ps->end - q < 2)
			return expected(ps, q + 1, "an escape (\" \\ / b f n r t u) after '\\'");
		q += *q == '\\' ? 2 : 1;
	}
	if (q >= ps->end)
		return expected(ps, q, "'\"' closing the string");
	size_t room = (size_t)(q - s) + 1;
	char *d = arena_alloc(ps->arena, room);
	if (!d)
		return no_memory(ps);
	int rc = unescape(ps, s, q, d, outlen);
	if (rc)
		return rc;
	d[*outlen] = 0;
	arena_trim(ps->arena, d, room, *outlen + 1);
	*out = d;
	ps->p = q + 1;
	return 0;
}

/* RFC 8259 section 6: -? (0 | [1-9][0-9]*) (. [0-9]+)? ([eE] [+-]? [0-9]+)?;
 * only text of that grammar reaches strtod_l. */
static int parse_number(struct parser *ps, struct jv *v)
{
	const char *s = ps->p, *q = s;
	q += *q == '-';
	if (!is_digit(ps, q))
		return expected(ps, q, "a digit");
	if (*q == '0') {
		if (is_digit(ps, ++q))
			return fail(ps, q, "a number may not have leading zeros");
	} else {
		while (is_digit(ps, q))
			q++;
	}
	if (q < ps->end && *q == '.') {
		if (!is_digit(ps, ++q))
			return expected(ps, q, "a digit after '.'");
		while (is_digit(ps, q))
			q++;
	}
	if (q < ps->end && (*q == 'e' || *q == 'E')) {
		q++;
		q += q < ps->end && (*q == '+' || *q == '-');
		if (!is_digit(ps, q))
			return expected(ps, q, "a digit of the exponent");
		while (is_digit(ps, q))
			q++;
	}
	char *t = arena_alloc(ps->arena, (size_t)(q - s) + 1);
	if (!t)
		return no_memory(ps);
	memcpy(t, s, (size_t)(q - s));
	t[q - s] = 0;
	v->type = JV_NUM;
	v->text = t;
	v->num = strtod_l(t, NULL, ps->c_numeric);
	ps->p = q;
	return 0;
}

static int parse_literal(struct parser *ps, const char *word)
{
	for (size_t i = 0; word[i]; i++, ps->p++) {
		if (ps->p >= ps->end || *ps->p != word[i]) {
			char what[32];
			snprintf(what, sizeof(what), "'%c' of '%s'", word[i], word);
			return expected(ps, ps->p, what);
		}
	}
	return 0;
}

/* ---- structure ---- */

/* The value at ps->p into v: 0 for a complete one, 1 for an array or object
 * opened (its frame pushed), or an error. */
static int parse_value(struct parser *ps, struct jv *v)
{
	if (ps->p >= ps->end)
		return expected(ps, ps->p, "a value");
	switch (*ps->p) {
	case '[':
	case '{':
		if (ps->depth == JSON_READ_MAX_DEPTH)
			return fail(ps, ps->p, "nesting deeper than %d arrays and objects",
			            JSON_READ_MAX_DEPTH);
		v->type = *ps->p == '[' ? JV_ARR : JV_OBJ;
		ps->frame[ps->depth++] = (struct frame){.v = v};
		ps->p++;
		return 1;
	case '"':
		v->type = JV_STR;
		return parse_string(ps, &v->text, &v->len);
	case 't':
		v->type = JV_BOOL;
		v->b = 1;
		return parse_literal(ps, "true");
	case 'f':
		v->type = JV_BOOL;
		return parse_literal(ps, "false");
	case 'n':
		return parse_literal(ps, "null");
	}
	if (*ps->p == '-' || is_digit(ps, ps->p))
		return parse_number(ps, v);
	return expected(ps, ps->p, "a value");
}

/* The next item of the innermost container, after its '[' or '{' or a ',':
 * for an object its key and ':' read; *slot = the item, counted as a null. */
static int next_item(struct parser *ps, struct jv **slot, int first)
{
	struct frame *f = &ps->frame[ps->depth - 1];
	struct jv *c = f->v;
	if (c->type == JV_OBJ) {
		skip_space(ps);
		if (ps->p >= ps->end || *ps->p != '"')
			return expected(ps, ps->p, first ? "a string key or '}'" : "a string key");
		const char **key = grow_array(c->key, &f->kcap, c->n + 1, sizeof(*key));
		if (!key)
			return no_memory(ps);
		c->key = key;
		size_t len;
		int rc = parse_string(ps, &key[c->n], &len);
		if (rc)
			return rc;
		skip_space(ps);
		if (ps->p >= ps->end || *ps->p != ':')
			return expected(ps, ps->p, "':' after the key");
		ps->p++;
	}
	struct jv *item = grow_array(c->item, &f->cap, c->n + 1, sizeof(*item));
	if (!item)
		return no_memory(ps);
	c->item = item;
	*slot = &item[c->n++];
	**slot = (struct jv){0};
	return 0;
}

/* Closes the innermost container, giving back the room it did not use. */
static void close_container(struct parser *ps)
{
	struct frame *f = &ps->frame[--ps->depth];
	struct jv *c = f->v;
	if (f->cap > c->n) {
		struct jv *item = realloc(c->item, c->n * sizeof(*item));
		c->item = item ? item : c->item;
	}
	if (f->kcap > c->n) {
		const char **key = realloc(c->key, c->n * sizeof(*key));
		c->key = key ? key : c->key;
	}
}

/* After a complete value: closes the containers that end there, then either
 * sets *slot to the next item (1) or finds the text's value complete (0). */
static int after_value(struct parser *ps, struct jv **slot)
{
	while (ps->depth > 0) {
		int arr = ps->frame[ps->depth - 1].v->type == JV_ARR;
		skip_space(ps);
		if (ps->p < ps->end && *ps->p == ',') {
			ps->p++;
			int rc = next_item(ps, slot, 0);
			return rc ? rc : 1;
		}
		if (ps->p >= ps->end || *ps->p != (arr ? ']' : '}'))
			return expected(ps, ps->p, arr ? "',' or ']'" : "',' or '}'");
		ps->p++;
		close_container(ps);
	}
	return 0;
}

/* The value of the whole text into root. */
static int parse_text(struct parser *ps, struct jv *root)
{
	struct jv *slot = root;
	for (;;) {
		skip_space(ps);
		int rc = parse_value(ps, slot);
		if (rc < 0)
			return rc;
		if (rc == 1) {
			struct jv *c = ps->frame[ps->depth - 1].v;
			skip_space(ps);
			if (ps->p >= ps->end || *ps->p != (c->type == JV_ARR ? ']' : '}')) {
				rc = next_item(ps, &slot, 1);
				if (rc)
					return rc;
				continue;
			}
			ps->p++;
			close_container(ps);
		}
		rc = after_value(ps, &slot);
		if (rc <= 0)
			return rc;
	}
}

int json_parse(const char *text, size_t len, struct jv **out, char *msg, size_t msglen)
{
	*out = NULL;
	if (!text)
		text = "";
	struct doc *d = calloc(1, sizeof(*d));
	struct parser *ps = malloc(sizeof(*ps));
	/* a locale of our own rather than the process's, which a caller (or a
	 * library) may have set to one whose decimal point is ',': with glibc the
	 * "C" locale costs no allocation */
	locale_t c_numeric = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	int rc = PMUSIM_ERR_NOMEM;
	if (!d || !ps || !c_numeric) {
		pmusim_fail(msg, msglen, rc, "out of memory");
		goto out;
	}
	*ps = (struct parser){.text = text,
	                      .p = text,
	                      .end = text + len,
	                      .arena = &d->arena,
	                      .c_numeric = c_numeric,
	                      .msg = msg,
	                      .msglen = msglen};
	rc = parse_text(ps, &d->root);
	if (rc == 0) {
		skip_space(ps);
		if (ps->p < ps->end)
			rc = expected(ps, ps->p, "end of input after the value");
	}
out:
	if (c_numeric)
		freelocale(c_numeric);
	free(ps);
	if (rc && d) {
		jv_free(&d->root);
		d = NULL;
	}
	if (d)
		*out = &d->root;
	return rc;
}

/* The whole file into *buf (malloc'd, *len bytes): a regular file in one read
 * of its size, anything else (a pipe) in doubling steps. */
static int read_all(int fd, char **buf, size_t *len, char *msg, size_t msglen)
{
	struct stat st;
	size_t cap = 0, n = 0;
	char *b = NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0 &&
	    (uint64_t)st.st_size < SIZE_MAX) {
		cap = (size_t)st.st_size + 1; /* + 1: the read that finds the end */
		b = malloc(cap);
		if (!b)
			return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "out of memory");
	}
	for (;;) {
		if (n == cap) {
			char *nb = grow_array(b, &cap, n + ((size_t)64 << 10), 1);
			if (!nb) {
				free(b);
				return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "out of memory");
			}
			b = nb;
		}
		ssize_t r = read(fd, b + n, cap - n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			int e = errno;
			free(b);
			return pmusim_fail(msg, msglen, PMUSIM_ERR_IO, "%s", strerror(e));
		}
		if (r == 0)
			break;
		n += (size_t)r;
	}
	*buf = b;
	*len = n;
	return 0;
}

int json_parse_file(const char *path, struct jv **out, char *msg, size_t msglen)
{
	*out = NULL;
	const char *why;
	int fd = infile_open_or_pipe(path, &why);
	if (fd < 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_IO, "%s", why);
	char *buf = NULL;
	size_t len = 0;
	int rc = read_all(fd, &buf, &len, msg, msglen);
	close(fd);
	if (rc)
		return rc;
	rc = json_parse(buf, len, out, msg, msglen);
	free(buf);
	return rc;
}

void jv_free(struct jv *v)
{
	if (!v)
		return;
	struct doc *d = (struct doc *)v;
	free_items(&d->root);
	arena_fini(&d->arena);
	free(d);
}

const struct jv *jv_get(const struct jv *o, const char *key)
{
	if (!o || o->type != JV_OBJ)
		return NULL;
	for (size_t i = 0; i < o->n; i++)
		if (strcmp(o->key[i], key) == 0)
			return &o->item[i];
	return NULL;
}

int jv_u64(const struct jv *v, uint64_t *out)
{
	uint64_t x = 0;
	if (v && v->type == JV_NUM) {
		/* the grammar leaves digits only for a non-negative integer, "0"
		 * the one with a leading zero */
		for (const char *s = v->text; *s; s++) {
			if (*s < '0' || *s > '9' || __builtin_mul_overflow(x, 10, &x) ||
			    __builtin_add_overflow(x, (uint64_t)(*s - '0'), &x))
				return -1;
		}
	} else if (v && v->type == JV_STR && v->len >= 3 && v->len <= 18 && v->text[0] == '0' &&
	           v->text[1] == 'x') {
		for (const char *s = v->text + 2; *s; s++) {
			int d = hex_value(*s);
			if (d < 0)
				return -1;
			x = x << 4 | (uint64_t)d;
		}
	} else {
		return -1;
	}
	*out = x;
	return 0;
}

int jv_num(const struct jv *v, double *out)
{
	/* 1e999 is JSON (its text stays exact for jv_u64) but no count or share */
	if (!v || v->type != JV_NUM || !isfinite(v->num))
		return -1;
	*out = v->num;
	return 0;
}
