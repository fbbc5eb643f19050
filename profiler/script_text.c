/* perf script text -> samples and mappings (see script_text.h): a line reader
 * with a fixed buffer and a strict parser of the fields perf 6.1 prints
 * (builtin-script.c perf_sample__fprintf_brstack, util/event.c fprintf_mmap2). */
#include "profiler/script_text.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/buildid.h"
#include "common/err.h"
#include "common/infile.h"

#define PROT_R 1u
#define PROT_W 2u
#define PROT_X 4u
#define FLAG_SHARED 1u  /* MAP_SHARED */
#define FLAG_PRIVATE 2u /* MAP_PRIVATE */
#define SHOW_MAX 60     /* characters of a bad token quoted in a message */

struct script_text {
	FILE *f;
	int own; /* close f */
	char *name;
	char *line; /* SCRIPT_TEXT_MAX_LINE + 1 */
	uint64_t lineno, pos, offset;
	struct perf_branch *br; /* SCRIPT_TEXT_MAX_BRANCHES */
	uint8_t bid[BUILD_ID_MAX];
	size_t bidlen;
	int err; /* sticky error and its message */
	char errmsg[512];
};

/* perf's branch_type_name() order (perf_event.h enum perf_branch_type). */
static const char *const type_names[] = {
    "",       "COND",      "UNCOND",   "IND",  "CALL", "IND_CALL", "RET",   "SYSCALL",
    "SYSRET", "COND_CALL", "COND_RET", "ERET", "IRQ",  "SERROR",   "NO_TX",
};

int script_text_open_stream(FILE *f, const char *name, struct script_text **out, char *msg,
                            size_t ml)
{
	struct script_text *st = calloc(1, sizeof(*st));
	*out = NULL;
	if (st) {
		st->name = strdup(name);
		st->line = malloc(SCRIPT_TEXT_MAX_LINE + 1);
		st->br = calloc(SCRIPT_TEXT_MAX_BRANCHES, sizeof(*st->br));
	}
	if (!st || !st->name || !st->line || !st->br) {
		script_text_close(st);
		return pmusim_fail(msg, ml, PMUSIM_ERR_NOMEM, "%s: out of memory", name);
	}
	st->f = f;
	*out = st;
	return 0;
}

int script_text_open(const char *path, struct script_text **out, char *msg, size_t ml)
{
	const char *why;
	FILE *f = infile_fopen(path, &why);
	*out = NULL;
	if (!f)
		return pmusim_fail(msg, ml, PMUSIM_ERR_IO, "cannot open %s: %s", path, why);
	int err = script_text_open_stream(f, path, out, msg, ml);
	if (err < 0)
		fclose(f);
	else
		(*out)->own = 1;
	return err;
}

void script_text_close(struct script_text *st)
{
	if (!st)
		return;
	if (st->own && st->f)
		fclose(st->f);
	free(st->name);
	free(st->line);
	free(st->br);
	free(st);
}

uint64_t script_text_line(const struct script_text *st)
{
	return st->lineno;
}

size_t script_text_build_id(const struct script_text *st, const uint8_t **id)
{
	*id = st->bidlen ? st->bid : NULL;
	return st->bidlen;
}

/* Records a format error of the current line: "NAME:LINE: " and the reason. */
__attribute__((format(printf, 2, 3))) static int bad(struct script_text *st, const char *fmt, ...)
{
	int k = snprintf(st->errmsg, sizeof(st->errmsg), "%s:%llu: ", st->name,
	                 (unsigned long long)st->lineno);
	if (k < 0 || (size_t)k >= sizeof(st->errmsg))
		return PMUSIM_ERR_FORMAT;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(st->errmsg + k, sizeof(st->errmsg) - (size_t)k, fmt, ap);
	va_end(ap);
	return PMUSIM_ERR_FORMAT;
}

/* A token quoted in a message: printed with "%.*s%s", cut at SHOW_MAX. */
#define QUOTE(tok, n) (int)((n) < SHOW_MAX ? (n) : SHOW_MAX), (tok), (n) > SHOW_MAX ? "..." : ""

/* One line into st->line without its newline (and a CR before it): 1, 0 at the
 * end, or an error. A longer line is an error, not a reallocation. */
static int read_line(struct script_text *st)
{
	size_t n = 0;
	int c;
	st->offset = st->pos;
	while ((c = getc_unlocked(st->f)) != EOF && c != '\n') {
		if (n == SCRIPT_TEXT_MAX_LINE || c == 0) {
			st->lineno++;
			return c == 0 ? bad(st, "NUL byte: binary data, not perf script text")
			              : bad(st, "line longer than %d bytes", SCRIPT_TEXT_MAX_LINE);
		}
		st->line[n++] = (char)c;
	}
	if (c == EOF && ferror(st->f)) {
		snprintf(st->errmsg, sizeof(st->errmsg), "%s: read error after line %llu", st->name,
		         (unsigned long long)st->lineno);
		return PMUSIM_ERR_IO;
	}
	if (c == EOF && n == 0)
		return 0;
	st->lineno++;
	st->pos += n + (c == '\n');
	if (n && st->line[n - 1] == '\r')
		n--;
	st->line[n] = 0;
	return 1;
}

static int is_blank(char c)
{
	return c == ' ' || c == '\t';
}

static const char *skip_blank(const char *p)
{
	while (is_blank(*p))
		p++;
	return p;
}

static size_t tok_len(const char *p)
{
	size_t n = 0;
	while (p[n] && !is_blank(p[n]))
		n++;
	return n;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Exactly n hex digits (1..16), no sign, no prefix. */
static int parse_hex(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (n == 0 || n > 16)
		return -1;
	for (size_t i = 0; i < n; i++) {
		int d = hexval(s[i]);
		if (d < 0)
			return -1;
		*v = *v << 4 | (uint64_t)d;
	}
	return 0;
}

/* "0x" and hex digits. */
static int parse_0x(const char *s, size_t n, uint64_t *v)
{
	return n > 2 && s[0] == '0' && s[1] == 'x' ? parse_hex(s + 2, n - 2, v) : -1;
}

/* Exactly n decimal digits with a value up to max. */
static int parse_dec(const char *s, size_t n, uint64_t max, uint64_t *v)
{
	*v = 0;
	if (n == 0 || n > 19)
		return -1;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return -1;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	return *v <= max ? 0 : -1;
}

/* "PID" or "PID/TID". */
static int parse_pid(const char *s, size_t n, uint32_t *pid, uint32_t *tid)
{
	const char *sl = memchr(s, '/', n);
	size_t np = sl ? (size_t)(sl - s) : n;
	uint64_t a, b = 0;
	if (parse_dec(s, np, UINT32_MAX, &a) < 0 ||
	    (sl && parse_dec(sl + 1, n - np - 1, UINT32_MAX, &b) < 0))
		return -1;
	*pid = (uint32_t)a;
	*tid = (uint32_t)b;
	return 0;
}

static uint8_t type_of(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(type_names) / sizeof(type_names[0]); i++)
		if (strlen(type_names[i]) == n && memcmp(type_names[i], s, n) == 0)
			return (uint8_t)i;
	return PERF_BR_UNKNOWN; /* a name newer than this table */
}

/* One entry "0xFROM/0xTO/F/X/A/CYCLES[/TYPE[/...]]" of n characters. */
static int parse_entry(const char *s, size_t n, struct perf_branch *b)
{
	const char *f[7];
	size_t len[7], k = 0;
	for (size_t i = 0, start = 0; i <= n && k < 7; i++)
		if (i == n || s[i] == '/') {
			f[k] = s + start;
			len[k++] = i - start;
			start = i + 1;
		}
	uint64_t cyc;
	memset(b, 0, sizeof(*b));
	if (k < 6 || parse_0x(f[0], len[0], &b->from) < 0 || parse_0x(f[1], len[1], &b->to) < 0 ||
	    len[2] != 1 || !strchr("MP-", f[2][0]) || len[3] != 1 || !strchr("X-", f[3][0]) ||
	    len[4] != 1 || !strchr("A-", f[4][0]) || parse_dec(f[5], len[5], UINT16_MAX, &cyc) < 0)
		return -1;
	b->mispred = f[2][0] == 'M';
	b->predicted = f[2][0] == 'P';
	b->cycles = (uint16_t)cyc;
	b->type = k > 6 ? type_of(f[6], len[6]) : PERF_BR_UNKNOWN;
	return 0;
}

/* A sample line: [PID[/TID]] [IP] then entries (tokens starting with "0x"). */
static int sample_line(struct script_text *st, const char *p, struct perf_record *rec)
{
	struct perf_sample *s = &rec->u.sample;
	const char *head[3];
	size_t hlen[3], nh = 0, n;
	for (p = skip_blank(p); *p && !(p[0] == '0' && p[1] == 'x'); p = skip_blank(p + n)) {
		n = tok_len(p);
		if (nh == 2)
			return bad(st,
			           "want [PID[/TID]] IP before the branch stack (perf script -F "
			           "[pid,[tid,]]ip,brstack), not '%.*s%s'",
			           QUOTE(p, n));
		head[nh] = p;
		hlen[nh++] = n;
	}
	int pid_first = nh == 2 || (nh == 1 && memchr(head[0], '/', hlen[0]));
	if (pid_first && parse_pid(head[0], hlen[0], &s->pid, &s->tid) < 0)
		return bad(st, "bad pid '%.*s%s'", QUOTE(head[0], hlen[0]));
	if (nh > (size_t)pid_first && parse_hex(head[nh - 1], hlen[nh - 1], &s->ip) < 0)
		return bad(st, "bad sample ip '%.*s%s'", QUOTE(head[nh - 1], hlen[nh - 1]));
	for (; *p; p = skip_blank(p + n)) {
		n = tok_len(p);
		if (s->nbr == SCRIPT_TEXT_MAX_BRANCHES)
			return bad(st, "more than %d branch entries", SCRIPT_TEXT_MAX_BRANCHES);
		if (parse_entry(p, n, &st->br[s->nbr]) < 0)
			return bad(st,
			           "bad branch entry '%.*s%s' (want "
			           "0xFROM/0xTO/M|P|-/X|-/A|-/CYCLES[/TYPE])",
			           QUOTE(p, n));
		s->nbr++;
	}
	s->br = s->nbr ? st->br : NULL;
	s->period = 1;
	rec->type = PERF_RECORD_SAMPLE;
	return 1;
}

/* The build id of "<hex>", with p after '<'; moves p past '>'. */
static int parse_build_id(struct script_text *st, const char **p)
{
	const char *e = strchr(*p, '>');
	size_t n = e ? (size_t)(e - *p) : 0;
	if (!e || n == 0 || n % 2 || n > 2 * BUILD_ID_MAX)
		return -1;
	for (size_t i = 0; i < n; i += 2) {
		int hi = hexval((*p)[i]), lo = hexval((*p)[i + 1]);
		if (hi < 0 || lo < 0)
			return -1;
		st->bid[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	st->bidlen = n / 2;
	*p = e + 1;
	return 0;
}

/* One number of "[0xADDR(0xLEN) @ PGOFF", "0x" optional (perf prints "%#lx",
 * so 0 is "0"), ending at one of stop; moves p to the stop character. */
static int map_num(const char **p, const char *stop, uint64_t *v)
{
	const char *s = skip_blank(*p);
	size_t n = strcspn(s, stop);
	*p = s + n;
	return n > 2 && s[0] == '0' && s[1] == 'x' ? parse_0x(s, n, v) : parse_hex(s, n, v);
}

/* The protection field: "r-xp" of MMAP2, 'x' (code) or 'r' (data) of MMAP. */
static int map_prot(const char *p, size_t n, int v2, struct perf_record *rec)
{
	if (!v2)
		return n == 1 && (p[0] == 'x' || p[0] == 'r') ? 0 : -1;
	if (n != 4 || !strchr("r-", p[0]) || !strchr("w-", p[1]) || !strchr("x-", p[2]) ||
	    !strchr("ps", p[3]))
		return -1;
	rec->u.mmap.prot =
	    (p[0] == 'r' ? PROT_R : 0) | (p[1] == 'w' ? PROT_W : 0) | (p[2] == 'x' ? PROT_X : 0);
	rec->u.mmap.flags = p[3] == 's' ? FLAG_SHARED : FLAG_PRIVATE;
	return 0;
}

/* " PID/TID: [0xADDR(0xLEN) @ PGOFF ...]: PROT PATH" after PERF_RECORD_MMAP[2]:
 * 1 with the record, 0 for a data mapping (skipped), or an error. */
static int mmap_line(struct script_text *st, const char *p, int v2, struct perf_record *rec)
{
	const char *start = p = skip_blank(p);
	size_t n = strcspn(p, ":");
	int ok = parse_pid(p, n, &rec->u.mmap.pid, &rec->u.mmap.tid) == 0 && p[n] == ':';
	if (ok) {
		p = skip_blank(p + n + 1);
		ok = *p++ == '[' && map_num(&p, "(", &rec->u.mmap.addr) == 0 && *p++ == '(' &&
		     map_num(&p, ")", &rec->u.mmap.len) == 0 && *p++ == ')' &&
		     *(p = skip_blank(p)) == '@' &&
		     (p++, map_num(&p, " ]", &rec->u.mmap.pgoff) == 0);
	}
	if (ok && v2 && *(p = skip_blank(p)) == '<') {
		p++;
		if (parse_build_id(st, &p) < 0)
			return bad(st, "bad build id in mapping '%.*s%s'",
			           QUOTE(start, strlen(start)));
	}
	if (!ok || !(p = strstr(p, "]: ")))
		return bad(
		    st,
		    "bad mapping '%.*s%s' (want PID/TID: [0xADDR(0xLEN) @ PGOFF ...]: PROT PATH)",
		    QUOTE(start, strlen(start)));
	p += 3;
	n = tok_len(p);
	if (map_prot(p, n, v2, rec) < 0)
		return bad(st, "bad protection '%.*s%s' in mapping", QUOTE(p, n));
	rec->u.mmap.filename = skip_blank(p + n);
	if (!*rec->u.mmap.filename)
		return bad(st, "mapping without a file name");
	rec->type = v2 ? PERF_RECORD_MMAP2 : PERF_RECORD_MMAP;
	return v2 || p[0] == 'x';
}

static int is_event(const char *t, size_t n)
{
	return n >= 12 && memcmp(t, "PERF_RECORD_", 12) == 0;
}

/* One line: 1 with a record, 0 for a line without one, or an error. */
static int parse_line(struct script_text *st, struct perf_record *rec)
{
	const char *t1 = skip_blank(st->line);
	if (!*t1 || *t1 == '#')
		return 0;
	size_t n1 = tok_len(t1);
	const char *t2 = skip_blank(t1 + n1), *ev = NULL;
	size_t n2 = tok_len(t2), nev = 0;
	if (is_event(t1, n1))
		ev = t1, nev = n1;
	else if (is_event(t2, n2)) {
		uint32_t pid, tid;
		if (parse_pid(t1, n1, &pid, &tid) < 0)
			return bad(st, "bad pid '%.*s%s'", QUOTE(t1, n1));
		ev = t2, nev = n2;
	}
	if (!ev)
		return sample_line(st, st->line, rec);
	int v2 = nev == 17 && memcmp(ev, "PERF_RECORD_MMAP2", 17) == 0;
	if (v2 || (nev == 16 && memcmp(ev, "PERF_RECORD_MMAP", 16) == 0))
		return mmap_line(st, ev + nev, v2, rec);
	return 0; /* COMM, FORK, EXIT, ...: nothing the profile needs */
}

int script_text_next(struct script_text *st, struct perf_record *rec, char *msg, size_t ml)
{
	int r = 0;
	while (!st->err && r == 0) {
		st->bidlen = 0;
		memset(rec, 0, sizeof(*rec));
		if ((r = read_line(st)) <= 0)
			break;
		rec->offset = st->offset;
		r = parse_line(st, rec);
	}
	if (r < 0)
		st->err = r;
	if (st->err)
		return pmusim_fail(msg, ml, st->err, "%s", st->errmsg);
	return r;
}
