/* perf script text reader (profiler/script_text.h): sample lines of every -F form
 * it accepts, branch flags and types, extra fields, empty stacks, mmap lines,
 * skipped lines; bad input (garbage, truncated entries, bad hex, NUL bytes,
 * overlong lines) as PMUSIM_ERR_FORMAT naming the line; and real perf's
 * `perf script` output of the Skylake recording read back record by record
 * against profiler/perfdata.h's reader of the same file. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/err.h"
#include "profiler/perfdata.h"
#include "profiler/script_text.h"
#include "tests/unit/run_suite.h"

#define NAME "t.txt"

/* A reader over text in memory (fmemopen), for the table rows. */
struct mem {
	FILE *f;
	struct script_text *st;
};

static void mem_open(struct mem *m, const char *text, size_t len)
{
	char msg[256];
	m->f = fmemopen((void *)text, len, "r");
	ck_assert_ptr_nonnull(m->f);
	ck_assert_int_eq(script_text_open_stream(m->f, NAME, &m->st, msg, sizeof(msg)), 0);
}

static void mem_close(struct mem *m)
{
	script_text_close(m->st);
	fclose(m->f);
}

/* ---- sample lines ---- */

struct br_want {
	uint64_t from, to;
	uint16_t cycles;
	uint8_t mispred, predicted, type;
};

/* clang-format off */
static const struct {
	int line;
	const char *text;
	uint32_t pid, tid;
	uint64_t ip, nbr;
	struct br_want br[3]; /* the first (up to) three entries */
} samples[] = {
	/* -F ip,brstack as perf 6.1 prints it: " %16lx", then " 0x…/0x…/F/X/A/%d/%s " */
	{__LINE__, "           401234 0x401000/0x401010/P/-/-/3/COND  0x402000/0x400ff0/M/-/-/65535/CALL ",
	 0, 0, 0x401234, 2, {{0x401000, 0x401010, 3, 0, 1, PERF_BR_COND}, {0x402000, 0x400ff0, 65535, 1, 0, PERF_BR_CALL}}},
	/* -F pid,ip,brstack */
	{__LINE__, " 5595     5629ec742901 0x5629ec7428f4/0x5629ec742901/P/-/-/19/  0x5629ec742967/0x5629ec7428d0/-/-/-/1/",
	 5595, 0, 0x5629ec742901, 2, {{0x5629ec7428f4, 0x5629ec742901, 19, 0, 1, 0}, {0x5629ec742967, 0x5629ec7428d0, 1, 0, 0, 0}}},
	/* -F pid,tid,ip,brstack */
	{__LINE__, "5595/5596 7f06d6a21e00 0x1/0x2/M/X/A/0/RET", 5595, 5596, 0x7f06d6a21e00, 1,
	 {{1, 2, 0, 1, 0, PERF_BR_RET}}},
	/* every type name; unknown and newer names are PERF_BR_UNKNOWN */
	{__LINE__, "10 0xa/0xb/-/-/-/1/UNCOND 0xc/0xd/-/-/-/2/IND 0xe/0xf/-/-/-/3/IND_CALL", 0, 0, 0x10, 3,
	 {{0xa, 0xb, 1, 0, 0, PERF_BR_UNCOND}, {0xc, 0xd, 2, 0, 0, PERF_BR_IND}, {0xe, 0xf, 3, 0, 0, PERF_BR_IND_CALL}}},
	{__LINE__, "10 0xa/0xb/-/-/-/1/FAULT_ALGN 0xc/0xd/-/-/-/2/SYSCALL 0xe/0xf/P/-/-/3/whatever", 0, 0, 0x10, 3,
	 {{0xa, 0xb, 1, 0, 0, 0}, {0xc, 0xd, 2, 0, 0, 7}, {0xe, 0xf, 3, 0, 1, 0}}},
	/* newer perf's speculation field and anything after it are ignored */
	{__LINE__, "10 0xA/0xBc/P/-/-/7/COND/-  0xDEF/0x0/M/-/-/8/RET/SPEC_WRONG_PATH/x/y", 0, 0, 0x10, 2,
	 {{0xa, 0xbc, 7, 0, 1, PERF_BR_COND}, {0xdef, 0, 8, 1, 0, PERF_BR_RET}}},
	/* perf before 4.x: no type field */
	{__LINE__, "10 0x20/0x30/P/-/-/5", 0, 0, 0x10, 1, {{0x20, 0x30, 5, 0, 1, 0}}},
	/* empty branch stacks: ip only, pid and ip, pid/tid and ip */
	{__LINE__, "     7f06d6a21e00", 0, 0, 0x7f06d6a21e00, 0, {{0}}},
	{__LINE__, " 5595      7f06d6a21e00   ", 5595, 0, 0x7f06d6a21e00, 0, {{0}}},
	{__LINE__, "1/2 ffffffffffffffff", 1, 2, UINT64_MAX, 0, {{0}}},
	/* -F brstack alone: no ip; tabs as blanks; CRLF line end */
	{__LINE__, "\t0xffffffffffffffff/0x1/P/-/-/0/\t", 0, 0, 0, 1, {{UINT64_MAX, 1, 0, 0, 1, 0}}},
	{__LINE__, "401000 0x1/0x2/P/-/-/0/COND\r\n", 0, 0, 0x401000, 1, {{1, 2, 0, 0, 1, PERF_BR_COND}}},
};
/* clang-format on */

START_TEST(sample_rows)
{
	__typeof__(samples[0]) *w = &samples[_i];
	struct mem m;
	struct perf_record r;
	char msg[256] = "";
	mem_open(&m, w->text, strlen(w->text));
	int rc = script_text_next(m.st, &r, msg, sizeof(msg));
	ck_assert_msg(rc == 1, "row %d: %d %s", w->line, rc, msg);
	const struct perf_sample *s = &r.u.sample;
	ck_assert_msg(r.type == PERF_RECORD_SAMPLE && s->pid == w->pid && s->tid == w->tid &&
	                  s->ip == w->ip && s->nbr == w->nbr && s->period == 1 && s->id == 0,
	              "row %d: type %u pid %u tid %u ip %#llx nbr %llu", w->line, r.type, s->pid,
	              s->tid, (unsigned long long)s->ip, (unsigned long long)s->nbr);
	ck_assert_msg(s->nbr ? s->br != NULL : s->br == NULL, "row %d: br pointer", w->line);
	for (uint64_t i = 0; i < s->nbr && i < 3; i++) {
		const struct perf_branch *g = &s->br[i];
		const struct br_want *x = &w->br[i];
		ck_assert_msg(g->from == x->from && g->to == x->to && g->cycles == x->cycles &&
		                  g->mispred == x->mispred && g->predicted == x->predicted &&
		                  g->type == x->type,
		              "row %d entry %llu: %#llx/%#llx cycles %u m%u p%u type %u", w->line,
		              (unsigned long long)i, (unsigned long long)g->from,
		              (unsigned long long)g->to, g->cycles, g->mispred, g->predicted,
		              g->type);
	}
	ck_assert_uint_eq(script_text_line(m.st), 1);
	ck_assert_int_eq(script_text_next(m.st, &r, msg, sizeof(msg)), 0);
	mem_close(&m);
}
END_TEST

/* ---- mmap lines ---- */

/* clang-format off */
static const struct {
	int line;
	const char *text;
	uint32_t type; /* 0: the line gives no record */
	uint32_t pid, tid;
	uint64_t addr, len, pgoff;
	uint32_t prot, flags;
	const char *file;
	size_t bidlen;
} maps[] = {
	{__LINE__, "PERF_RECORD_MMAP2 5595/5595: [0x5629ec742000(0x1000) @ 0 00:6a 2006825049 1625258238]: r-xp /a/b.bin.gen",
	 PERF_RECORD_MMAP2, 5595, 5595, 0x5629ec742000, 0x1000, 0, 5, 2, "/a/b.bin.gen", 0},
	{__LINE__, " 5595 PERF_RECORD_MMAP2 5595/5596: [0x7f00(0x25000) @ 0x3000 00:ab 73 1]: rw-s /lib/x y.so",
	 PERF_RECORD_MMAP2, 5595, 5596, 0x7f00, 0x25000, 0x3000, 3, 1, "/lib/x y.so", 0},
	{__LINE__, "1/1 PERF_RECORD_MMAP2 1/1: [0x400000(0x2000) @ 0x1000 <572ac72487ae1966>]: r-xp /w/loops",
	 PERF_RECORD_MMAP2, 1, 1, 0x400000, 0x2000, 0x1000, 5, 2, "/w/loops", 8},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x7fff684ae000(0x2000) @ 0 00:00 0 0]: ---p [vdso]",
	 PERF_RECORD_MMAP2, 1, 1, 0x7fff684ae000, 0x2000, 0, 0, 2, "[vdso]", 0},
	{__LINE__, "PERF_RECORD_MMAP 7/8: [0x400000(0x1000) @ 0]: x /bin/true",
	 PERF_RECORD_MMAP, 7, 8, 0x400000, 0x1000, 0, 0, 0, "/bin/true", 0},
	/* a data mapping and side-band lines the profile does not need */
	{__LINE__, "PERF_RECORD_MMAP 7/8: [0x600000(0x1000) @ 0]: r /data", 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0},
	{__LINE__, "PERF_RECORD_COMM exec: propeller_sampl:5595/5595", 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0},
	{__LINE__, " 5595 PERF_RECORD_EXIT(5595:5595):(5594:5594)", 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0},
	{__LINE__, "# ========\n# captured on: x\n\n   \n", 0, 0, 0, 0, 0, 0, 0, 0, NULL, 0},
};
/* clang-format on */

START_TEST(mmap_rows)
{
	__typeof__(maps[0]) *w = &maps[_i];
	struct mem m;
	struct perf_record r;
	char msg[256] = "";
	mem_open(&m, w->text, strlen(w->text));
	int rc = script_text_next(m.st, &r, msg, sizeof(msg));
	ck_assert_msg(rc == (w->type != 0), "row %d: %d %s", w->line, rc, msg);
	if (w->type) {
		const uint8_t *id;
		ck_assert_msg(
		    r.type == w->type && r.u.mmap.pid == w->pid && r.u.mmap.tid == w->tid &&
		        r.u.mmap.addr == w->addr && r.u.mmap.len == w->len &&
		        r.u.mmap.pgoff == w->pgoff && r.u.mmap.prot == w->prot &&
		        r.u.mmap.flags == w->flags && strcmp(r.u.mmap.filename, w->file) == 0,
		    "row %d: type %u %u/%u %#llx(%#llx) @ %#llx prot %u flags %u '%s'", w->line,
		    r.type, r.u.mmap.pid, r.u.mmap.tid, (unsigned long long)r.u.mmap.addr,
		    (unsigned long long)r.u.mmap.len, (unsigned long long)r.u.mmap.pgoff,
		    r.u.mmap.prot, r.u.mmap.flags, r.u.mmap.filename);
		ck_assert_msg(script_text_build_id(m.st, &id) == w->bidlen, "row %d: build id",
		              w->line);
		if (w->bidlen)
			ck_assert_mem_eq(id, "\x57\x2a\xc7\x24\x87\xae\x19\x66", 8);
		rc = script_text_next(m.st, &r, msg, sizeof(msg));
	}
	ck_assert_msg(rc == 0, "row %d: %d %s", w->line, rc, msg);
	mem_close(&m);
}
END_TEST

/* ---- bad input ---- */

/* clang-format off */
static const struct {
	int line;
	const char *text;
	unsigned lineno; /* the line the message must name */
	const char *why; /* a part of the message */
} bads[] = {
	{__LINE__, "hello", 1, "bad sample ip 'hello'"},
	{__LINE__, "hello world", 1, "bad pid 'hello'"},
	{__LINE__, "1 2 3 0x1/0x2/P/-/-/0/", 1, "want [PID[/TID]] IP"},
	{__LINE__, "401234 0x401000/0x401010/P/-/-/3/COND\n 401234 0x4010", 2, "bad branch entry '0x4010'"},
	{__LINE__, " 401234 0x401000/0x401010/P/-/-/3/COND  0x4010", 1, "bad branch entry '0x4010'"},
	{__LINE__, "1 0x401000/0x40101g/P/-/-/3/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x401000/401010/P/-/-/3/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x/0x1/P/-/-/3/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x10000000000000000/0x1/P/-/-/3/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/Q/-/-/3/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/P/Y/-/3/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/P/-/B/3/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/PP/-/-/3/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/P/-/-/65536/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/P/-/-/-1/COND", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/P/-/-//COND", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/P/-/-", 1, "bad branch entry"},
	{__LINE__, "1 0x1/0x2/P/-/-/3/COND junk", 1, "bad branch entry 'junk'"},
	{__LINE__, "12345678901234567 0x1/0x2/P/-/-/3/", 1, "bad sample ip"},
	{__LINE__, "-5 401000 0x1/0x2/P/-/-/3/", 1, "bad pid '-5'"},
	{__LINE__, "99999999999 401000", 1, "bad pid"},
	{__LINE__, "\n\n# c\n1/x 401000", 4, "bad pid '1/x'"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x400000(0x1000) @ 0 00:00 0 0] r-xp /a", 1, "bad mapping"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x4000z0(0x1000) @ 0 00:00 0 0]: r-xp /a", 1, "bad mapping"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x400000(0x1000 @ 0 00:00 0 0]: r-xp /a", 1, "bad mapping"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x400000(0x1000) @ zz 00:00 0 0]: r-xp /a", 1, "bad mapping"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1 [0x400000(0x1000) @ 0 00:00 0 0]: r-xp /a", 1, "bad mapping"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x400000(0x1000) @ 0 00:00 0 0]: rxp /a", 1, "bad protection"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x400000(0x1000) @ 0 00:00 0 0]: r-xp ", 1, "without a file name"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x400000(0x1000) @ 0 <12g4>]: r-xp /a", 1, "bad build id"},
	{__LINE__, "PERF_RECORD_MMAP2 1/1: [0x400000(0x1000) @ 0 <123>]: r-xp /a", 1, "bad build id"},
	{__LINE__, "PERF_RECORD_MMAP 1/1: [0x400000(0x1000) @ 0]: r-xp /a", 1, "bad protection"},
	{__LINE__, "x PERF_RECORD_MMAP2 1/1: [0x400000(0x1000) @ 0 00:00 0 0]: r-xp /a", 1, "bad pid 'x'"},
};
/* clang-format on */

static void expect_format_error(struct mem *m, int row, unsigned lineno, const char *why)
{
	struct perf_record r;
	char msg[512] = "", want[64];
	int rc;
	while ((rc = script_text_next(m->st, &r, msg, sizeof(msg))) == 1)
		;
	snprintf(want, sizeof(want), NAME ":%u: ", lineno);
	ck_assert_msg(rc == PMUSIM_ERR_FORMAT && strncmp(msg, want, strlen(want)) == 0 &&
	                  strstr(msg, why) != NULL,
	              "row %d: %d '%s', want '%s…%s'", row, rc, msg, want, why);
	ck_assert_uint_eq(script_text_line(m->st), lineno);
	/* the error sticks */
	char again[512] = "";
	ck_assert_int_eq(script_text_next(m->st, &r, again, sizeof(again)), PMUSIM_ERR_FORMAT);
	ck_assert_str_eq(again, msg);
}

START_TEST(bad_rows)
{
	struct mem m;
	mem_open(&m, bads[_i].text, strlen(bads[_i].text));
	expect_format_error(&m, bads[_i].line, bads[_i].lineno, bads[_i].why);
	mem_close(&m);
}
END_TEST

START_TEST(nul_byte_is_a_format_error)
{
	static const char text[] = "401000 0x1/0x2/P/-/-/3/\n401000 0x1/0x2\0/P/-/-/3/\n";
	struct mem m;
	mem_open(&m, text, sizeof(text) - 1);
	expect_format_error(&m, __LINE__, 2, "NUL byte");
	mem_close(&m);
}
END_TEST

/* ---- long lines ---- */

/* 64 entries of 60 characters each, as a 64-deep LBR with the longest fields
 * perf prints, then one line of 4096 shortest entries (65,535 characters, the
 * most a line may hold), and one character more. */
static char *long_line(size_t nentries, int shortest, size_t *len)
{
	char *s = malloc(SCRIPT_TEXT_MAX_LINE + 64);
	size_t n = (size_t)sprintf(s, shortest ? "" : " 5595 ffffffffffffffff");
	for (size_t i = 0; i < nentries; i++)
		n += (size_t)(shortest ? sprintf(s + n, "%s0x0/0x0/-/-/-/0", i ? " " : "")
		                       : sprintf(s + n, " 0x%016zx/0x%016zx/M/X/A/%5zu/IND_CALL ",
		                                 0xfedcba9876543210u - i, i, 65535 - i));
	*len = n;
	return s;
}

START_TEST(long_lines)
{
	size_t len;
	char *s = long_line(64, 0, &len);
	ck_assert_uint_ge(len, 64 * 60);
	struct mem m;
	struct perf_record r;
	char msg[256] = "";
	mem_open(&m, s, len);
	ck_assert_msg(script_text_next(m.st, &r, msg, sizeof(msg)) == 1, "%s", msg);
	ck_assert_uint_eq(r.u.sample.nbr, 64);
	for (size_t i = 0; i < 64; i++) {
		const struct perf_branch *b = &r.u.sample.br[i];
		ck_assert_uint_eq(b->from, 0xfedcba9876543210u - i);
		ck_assert_uint_eq(b->to, i);
		ck_assert_uint_eq(b->cycles, 65535 - i);
		ck_assert(b->mispred && !b->predicted && b->type == PERF_BR_IND_CALL);
	}
	mem_close(&m);
	free(s);

	s = long_line(SCRIPT_TEXT_MAX_BRANCHES, 1, &len);
	ck_assert_uint_eq(len, SCRIPT_TEXT_MAX_LINE - 1);
	mem_open(&m, s, len);
	ck_assert_msg(script_text_next(m.st, &r, msg, sizeof(msg)) == 1, "%s", msg);
	ck_assert_uint_eq(r.u.sample.nbr, SCRIPT_TEXT_MAX_BRANCHES);
	mem_close(&m);
	strcpy(s + len, "  ");
	mem_open(&m, s, len + 2);
	expect_format_error(&m, __LINE__, 1, "line longer than 65536 bytes");
	mem_close(&m);
	free(s);
}
END_TEST

/* ---- a stream ---- */

/* Records, offsets and line numbers of a mixed stream; a missing last newline. */
START_TEST(stream_of_records)
{
	static const char text[] =
	    "# header\n"
	    "PERF_RECORD_MMAP2 1/1: [0x1000(0x1000) @ 0 00:00 0 0]: r-xp /p\n"
	    "\n"
	    "PERF_RECORD_COMM exec: p:1/1\n"
	    " 1000 0x1/0x2/P/-/-/0/\n"
	    " 2000";
	static const struct {
		uint32_t type;
		uint64_t offset, line, ip;
	} want[] = {{PERF_RECORD_MMAP2, 9, 2, 0},
	            {PERF_RECORD_SAMPLE, 102, 5, 0x1000},
	            {PERF_RECORD_SAMPLE, 125, 6, 0x2000}};
	struct mem m;
	struct perf_record r;
	char msg[256] = "";
	mem_open(&m, text, sizeof(text) - 1);
	for (size_t i = 0; i < 3; i++) {
		ck_assert_msg(script_text_next(m.st, &r, msg, sizeof(msg)) == 1, "%s", msg);
		ck_assert_uint_eq(r.type, want[i].type);
		ck_assert_uint_eq(r.offset, want[i].offset);
		ck_assert_uint_eq(script_text_line(m.st), want[i].line);
		if (r.type == PERF_RECORD_SAMPLE)
			ck_assert_uint_eq(r.u.sample.ip, want[i].ip);
	}
	ck_assert_int_eq(script_text_next(m.st, &r, msg, sizeof(msg)), 0);
	ck_assert_int_eq(script_text_next(m.st, &r, msg, sizeof(msg)), 0);
	mem_close(&m);
}
END_TEST

START_TEST(missing_file_is_an_io_error)
{
	struct script_text *st = (struct script_text *)1;
	char msg[256] = "";
	ck_assert_int_eq(script_text_open("/nonexistent/perf.txt", &st, msg, sizeof(msg)),
	                 PMUSIM_ERR_IO);
	ck_assert_ptr_null(st);
	ck_assert_ptr_nonnull(strstr(msg, "/nonexistent/perf.txt"));
}
END_TEST

/* ---- real perf ---- */

/* Runs argv with its standard output into path; the exit status, or -1. */
static int run_to_file(const char *const argv[], const char *path)
{
	pid_t pid = fork();
	if (pid == 0) {
		FILE *o = freopen(path, "w", stdout), *e = freopen("/dev/null", "w", stderr);
		if (o && e)
			execv(argv[0], (char *const *)argv);
		_exit(127);
	}
	int st;
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		return -1;
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A record reduced to what perf script prints of it, as one comparable string:
 * samples "S pid tid ip nbr from/to/cycles/m/p/type …", mappings "M pid tid addr
 * len pgoff prot shared file". */
static char *record_key(const struct perf_record *r)
{
	char *k = NULL;
	size_t n = 0;
	FILE *f = open_memstream(&k, &n);
	ck_assert_ptr_nonnull(f);
	if (r->type == PERF_RECORD_SAMPLE) {
		const struct perf_sample *s = &r->u.sample;
		fprintf(f, "S %u %u %llx %llu", s->pid, s->tid, (unsigned long long)s->ip,
		        (unsigned long long)s->nbr);
		for (uint64_t i = 0; i < s->nbr; i++)
			fprintf(f, " %llx/%llx/%u/%u/%u/%u", (unsigned long long)s->br[i].from,
			        (unsigned long long)s->br[i].to, s->br[i].cycles, s->br[i].mispred,
			        s->br[i].predicted, s->br[i].type);
	} else {
		fprintf(f, "M %u %u %llx %llx %llx %u %u %s", r->u.mmap.pid, r->u.mmap.tid,
		        (unsigned long long)r->u.mmap.addr, (unsigned long long)r->u.mmap.len,
		        (unsigned long long)r->u.mmap.pgoff, r->u.mmap.prot, r->u.mmap.flags & 1,
		        r->u.mmap.filename);
	}
	fclose(f);
	return k;
}

static int cmp_str(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The keys of every SAMPLE and MMAP/MMAP2 record of a reader, sorted. */
static char **keys_of(int (*next)(void *, struct perf_record *, char *, size_t), void *rd,
                      size_t *n)
{
	size_t cap = 4096;
	char **k = malloc(cap * sizeof(*k)), msg[512] = "";
	struct perf_record r;
	int rc;
	*n = 0;
	while ((rc = next(rd, &r, msg, sizeof(msg))) == 1) {
		/* task records: the text reader carries none of them */
		if (r.type == PERF_RECORD_COMM || r.type == PERF_RECORD_FORK || r.type == PERF_RECORD_EXIT)
			continue;
		if (*n == cap)
			k = realloc(k, (cap *= 2) * sizeof(*k));
		k[(*n)++] = record_key(&r);
	}
	ck_assert_msg(rc == 0, "%s", msg);
	qsort(k, *n, sizeof(*k), cmp_str);
	return k;
}

static int next_text(void *rd, struct perf_record *r, char *msg, size_t ml)
{
	return script_text_next(rd, r, msg, ml);
}

static int next_data(void *rd, struct perf_record *r, char *msg, size_t ml)
{
	return perfdata_next(rd, r, msg, ml);
}

/* `perf script -F pid,tid,ip,brstack --show-mmap-events` of the Skylake recording
 * gives the records the perf.data reader reads from the file: the same multiset
 * (perf script sorts the samples by time, the reader keeps the file's order). */
START_TEST(real_perf_script_matches_perf_data)
{
	const char *sh = getenv("PMUSIM_SHARED");
	char data[512], txt[64] = "/tmp/check_script_text.XXXXXX";
	snprintf(data, sizeof(data), "%s/fixtures/real-lbr/skylake-cycles-b.perf.data",
	         sh ? sh : "../shared");
	if (access("/usr/bin/perf", X_OK) != 0) {
		printf("real_perf_script_matches_perf_data: skipped, no /usr/bin/perf\n");
		return;
	}
	int fd = mkstemp(txt);
	ck_assert_int_ge(fd, 0);
	close(fd);
	const char *argv[] = {"/usr/bin/perf",
	                      "script",
	                      "-f",
	                      "-i",
	                      data,
	                      "-F",
	                      "pid,tid,ip,brstack",
	                      "--show-mmap-events",
	                      "--show-task-events",
	                      NULL};
	int st = run_to_file(argv, txt);
	struct perfdata *pd;
	struct script_text *tx;
	char msg[512] = "";
	int rc = script_text_open(txt, &tx, msg, sizeof(msg));
	unlink(txt); /* the reader holds it open */
	ck_assert_msg(st == 0, "perf script exited with %d", st);
	ck_assert_msg(rc == 0, "%s", msg);
	ck_assert_msg(perfdata_open(data, &pd, msg, sizeof(msg)) == 0, "%s", msg);
	size_t nt, np, nsamples = 0;
	char **kt = keys_of(next_text, tx, &nt), **kp = keys_of(next_data, pd, &np);
	ck_assert_uint_eq(nt, np);
	for (size_t i = 0; i < nt; i++) {
		ck_assert_msg(strcmp(kt[i], kp[i]) == 0, "text %.200s\nperf.data %.200s", kt[i],
		              kp[i]);
		nsamples += kt[i][0] == 'S';
		free(kt[i]), free(kp[i]);
	}
	ck_assert_uint_eq(nsamples, 3740);
	ck_assert_uint_ge(nt - nsamples, 4);
	free(kt), free(kp);
	script_text_close(tx);
	perfdata_close(pd);
}
END_TEST

int main(void)
{
	Suite *s = suite_create("script_text");
	TCase *tc = tcase_create("script_text");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, sample_rows, 0, (int)(sizeof(samples) / sizeof(samples[0])));
	tcase_add_loop_test(tc, mmap_rows, 0, (int)(sizeof(maps) / sizeof(maps[0])));
	tcase_add_loop_test(tc, bad_rows, 0, (int)(sizeof(bads) / sizeof(bads[0])));
	tcase_add_test(tc, nul_byte_is_a_format_error);
	tcase_add_test(tc, long_lines);
	tcase_add_test(tc, stream_of_records);
	tcase_add_test(tc, missing_file_is_an_io_error);
	tcase_add_test(tc, real_perf_script_matches_perf_data);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
