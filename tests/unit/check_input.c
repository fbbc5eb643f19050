/* Recording -> profile (profiler/input.h) on perf.data and perf script text:
 * a perf.data written here (an MMAP2 of this very test program as it is loaded,
 * samples whose branch stacks are paths through its own code) truncated and with
 * flipped bytes never crashes; the same samples as perf script text, in every -F
 * form and way of naming the binary, give the same edges; the real Skylake
 * recording uses >= 99 % of its samples, and real perf's `perf script` text of
 * it gives the edges of the perf.data. */
#include <check.h>
#include <ftw.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/elf_bias.h"
#include "common/buildid.h"
#include "common/err.h"
#include "common/rng.h"
#include "profiler/input.h"
#include "profiler/script_text.h"
#include "tests/unit/run_suite.h"
#include "tests/unit/self_map.h"
#include "tests/unit/tmp_dir.h"

#define NSAMPLES 300
#define DEPTH 32
#define PERIOD 1009
#define PID 4242
#define ST                                                                                         \
	(PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |                \
	 PERF_SAMPLE_BRANCH_STACK)
#define BST (PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY)

/* ---- this program, as loaded ---- */

static struct self_map me; /* this program, as loaded */

/* ---- the samples: paths through this program's code ---- */

static struct perf_sample smp[NSAMPLES];
static struct perf_branch sbr[NSAMPLES][DEPTH];

/* perf's branch type of the kinds a path holds */
static const uint8_t perf_type[BK_COUNT] = {[BK_COND] = PERF_BR_COND,
                                            [BK_JMP] = PERF_BR_UNCOND,
                                            [BK_CALL] = PERF_BR_CALL,
                                            [BK_RET] = PERF_BR_RET};

/* 1 when the path from a soon ends: a trap, an indirect branch, or a direct
 * branch into one (a call through the PLT, as ASan's error reports are). */
static int dead_end(struct binary *b, uint64_t a, int depth)
{
	const struct block_info *run = binary_run(b, a);
	if (!run || run->kind == BK_TRAP || run->kind == BK_JMP_IND || run->kind == BK_CALL_IND)
		return 1;
	if (depth > 0 && (run->kind == BK_CALL || run->kind == BK_JMP))
		return !run->target || dead_end(b, run->target, depth - 1);
	return 0;
}

/* Whether a conditional branch is taken: away from a dead end, else at random. */
static int take(struct binary *b, const struct block_info *run, struct rng *r)
{
	int dead_t = dead_end(b, run->target, 2), dead_n = dead_end(b, run->end, 2);
	return dead_t != dead_n ? dead_n : (int)(rng_next(r) & 1);
}

/* A path from start, oldest taken branch first: conditional branches go either
 * way (at random unless one way soon ends), calls are followed and returned
 * from; it ends at an indirect branch, a return with no call of its own, or
 * DEPTH taken branches. */
static size_t walk_path(struct binary *b, uint64_t a, struct rng *r, struct perf_branch *out)
{
	uint64_t stack[64];
	size_t n = 0, sp = 0;
	for (int steps = 0; n < DEPTH && steps < 4096; steps++) {
		const struct block_info *run = binary_run(b, a);
		if (dead_end(b, a, 0))
			break;
		uint64_t to = run->target;
		if (run->kind == BK_RET) {
			if (sp == 0)
				break;
			to = stack[--sp];
		} else if (run->kind == BK_CALL) {
			if (sp == 64)
				break;
			stack[sp++] = run->end;
		} else if (run->kind != BK_JMP && (run->kind != BK_COND || !take(b, run, r))) {
			a = run->end; /* not taken, or no branch */
			continue;
		}
		if (!to || !binary_has_code(b, to))
			break;
		uint64_t x = rng_next(r);
		/* from, to, cycles, mispred, predicted, type */
		out[n++] = (struct perf_branch){run->term,          to,
		                                (uint16_t)x,        x >> 16 & 1,
		                                (x >> 16 & 3) == 2, perf_type[run->kind]};
		a = to;
	}
	return n;
}

static void make_samples(void)
{
	const uint64_t starts[] = {
	    (uintptr_t)&trace_rebuild, (uintptr_t)&trace_window,     (uintptr_t)&edges_add,
	    (uintptr_t)&profile_add,   (uintptr_t)&script_text_next, (uintptr_t)&perfdata_next,
	    (uintptr_t)&input_profile, (uintptr_t)&walk_path,        (uintptr_t)&make_samples,
	};
	char msg[256];
	struct binary *b;
	self_map_find(&me);
	uint64_t bias = elf_mapping_bias(me.path, me.addr, me.pgoff);
	ck_assert_msg(binary_open(me.path, bias, &b, msg, sizeof(msg)) == 0, "%s", msg);
	struct rng r;
	rng_init(&r, 7);
	struct perf_branch tmp[DEPTH];
	size_t total = 0;
	for (size_t i = 0, tries = 0; i < NSAMPLES; tries++) {
		ck_assert_uint_lt(tries, 100 * NSAMPLES);
		uint64_t start = starts[rng_uniform(&r, sizeof(starts) / sizeof(starts[0]) - 1)];
		ck_assert_ptr_nonnull(binary_run(b, start));
		size_t n = walk_path(b, start, &r, tmp);
		if (n < 4)
			continue;
		for (size_t k = 0; k < n; k++) /* newest first */
			sbr[i][k] = tmp[n - 1 - k];
		struct perf_sample *s = &smp[i];
		*s = (struct perf_sample){
		    .period = PERIOD, .pid = PID, .misc = PERF_RECORD_MISC_USER};
		s->ip = sbr[i][0].from, s->time = 100 + i, s->tid = PID + (uint32_t)(i % 2);
		s->nbr = n, s->br = sbr[i];
		total += n;
		i++;
	}
	ck_assert_uint_ge(total, 6 * NSAMPLES); /* deep enough stacks to rebuild traces from */
	binary_free(b);
}

/* ---- the recordings ---- */

static char dir[64];

static const char *in_dir(const char *name)
{
	static char p[4][128];
	static int k;
	char *s = p[k++ % 4];
	snprintf(s, sizeof(p[0]), "%s/%s", dir, name);
	return s;
}

/* One directory for the suite, made and removed by the parent process, so that
 * a failed test leaves nothing behind. */
static void make_dir(void)
{
	tmp_dir_make(dir, sizeof(dir), "check_input");
}

static void remove_dir(void)
{
	tmp_dir_remove(dir);
}

static void setup(void)
{
	ck_assert_msg(dir[0], "no temporary directory");
	make_samples();
}

/* br_inst_retired.near_taken:u, so that the perf.data's trigger is the one text
 * implies (TRIG_TAKEN) and only the period differs. */
static void write_perf_data(const char *path)
{
	const struct perfdata_event ev = {
	    "br_inst_retired.near_taken:u", PERF_TYPE_RAW, 0x20c4, PERIOD, ST, BST, 1, 3, 0, 0, 0, NULL};
	struct perfdata_writer *w;
	char msg[256];
	uint8_t id[BUILD_ID_MAX];
	ck_assert_msg(perfdata_writer_open(&w, path, &ev, 1, NULL, msg, sizeof(msg)) == 0, "%s",
	              msg);
	ck_assert_int_eq(perfdata_write_comm(w, PID, PID, "check_input", 1), 0);
	ck_assert_int_eq(
	    perfdata_write_mmap2(w, PID, PID, me.addr, me.len, me.pgoff, 5, 2, me.path, 2), 0);
	for (size_t i = 0; i < NSAMPLES; i++)
		ck_assert_int_eq(perfdata_write_sample(w, &smp[i]), 0);
	int n = elf_build_id(me.path, id);
	if (n > 0)
		ck_assert_int_eq(perfdata_add_build_id(w, me.path, id, (size_t)n), 0);
	ck_assert_int_eq(perfdata_writer_close(w), 0);
}

enum form { F_IP, F_PID, F_PID_TID };

/* The samples as perf 6.1 prints them with `perf script -F [pid,[tid,]]ip,brstack
 * --show-mmap-events --show-task-events`; the mapping names map_name, with the
 * program's build id when bid. */
static void write_text(const char *path, enum form form, const char *map_name, int bid)
{
	static const char *const tname[] = {"", "COND", "UNCOND", "IND", "CALL", "IND_CALL", "RET"};
	FILE *f = fopen(path, "w");
	char head[32] = "", tail[2 * BUILD_ID_MAX + 3] = "08:01 1234 0";
	uint8_t id[BUILD_ID_MAX];
	ck_assert_ptr_nonnull(f);
	int n = bid ? elf_build_id(me.path, id) : 0;
	ck_assert(!bid || n > 0);
	if (bid) {
		tail[0] = '<';
		build_id_hex(id, (size_t)n, tail + 1);
		strcat(tail, ">");
	}
	for (size_t i = 0; i <= NSAMPLES; i++) {
		const struct perf_sample *s = &smp[i ? i - 1 : 0];
		if (form != F_IP)
			snprintf(head, sizeof(head), form == F_PID ? "%7u " : "%7u/%-7u ", s->pid,
			         s->tid);
		if (i == 0) {
			fprintf(f, "%sPERF_RECORD_COMM exec: check_input:%u/%u\n", head, s->pid,
			        s->pid);
			fprintf(f,
			        "%sPERF_RECORD_MMAP2 %u/%u: [%#llx(%#llx) @ %#llx %s]: r-xp %s\n",
			        head, s->pid, s->pid, (unsigned long long)me.addr,
			        (unsigned long long)me.len, (unsigned long long)me.pgoff, tail,
			        map_name);
			continue;
		}
		fprintf(f, "%s%16llx", head, (unsigned long long)s->ip);
		for (uint64_t k = 0; k < s->nbr; k++) {
			const struct perf_branch *b = &s->br[k];
			fprintf(f, " 0x%llx/0x%llx/%c/-/-/%u/%s ", (unsigned long long)b->from,
			        (unsigned long long)b->to, "-PM"[b->mispred ? 2 : b->predicted],
			        b -> cycles, tname[b->type]);
		}
		fputc('\n', f);
	}
	ck_assert_int_eq(fclose(f), 0);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	struct stat st;
	FILE *f = fopen(path, "rb");
	ck_assert_msg(f && fstat(fileno(f), &st) == 0, "cannot read %s", path);
	uint8_t *p = malloc((size_t)st.st_size + 1);
	ck_assert_uint_eq(*len = fread(p, 1, (size_t)st.st_size, f), (size_t)st.st_size);
	fclose(f);
	return p;
}

static void spit(const char *path, const uint8_t *p, size_t len)
{
	FILE *f = fopen(path, "wb");
	ck_assert_ptr_nonnull(f);
	ck_assert_uint_eq(fwrite(p, 1, len, f), len);
	ck_assert_int_eq(fclose(f), 0);
}

/* input_profile with a method; the profile and binary are freed by done(). */
static int load(const char *path, const char *binary, const char *bdir, int method, uint64_t span,
                struct profile **prof, struct binary **bin, char *msg, size_t ml)
{
	struct input_opts io = {.binary = binary, .binary_dir = bdir, .event = -1};
	struct profile_opts po = {.method = method, .span = span};
	msg[0] = 0;
	return input_profile(path, &io, &po, prof, bin, msg, ml);
}

static void done(struct profile *prof, struct binary *bin)
{
	profile_free(prof);
	binary_free(bin);
}

/* Same (from, to) keys, kinds and directions, and the same weights once each
 * profile's weights are divided by their sum. */
static void same_edges(struct profile *a, struct profile *b, const char *what, int weights)
{
	size_t na, nb;
	const struct edge *ea = edges_sorted(profile_edges(a), &na);
	const struct edge *eb = edges_sorted(profile_edges(b), &nb);
	double ta = 0, tb = 0;
	for (size_t i = 0; i < na || i < nb; i++)
		ta += i < na ? ea[i].w : 0, tb += i < nb ? eb[i].w : 0;
	ck_assert_msg(na == nb && na > 0, "%s: %zu and %zu edges", what, na, nb);
	for (size_t i = 0; i < na; i++) {
		ck_assert_msg(ea[i].from == eb[i].from && ea[i].to == eb[i].to &&
		                  ea[i].kind == eb[i].kind && ea[i].taken == eb[i].taken,
		              "%s: edge %zu %#llx->%#llx vs %#llx->%#llx", what, i,
		              (unsigned long long)ea[i].from, (unsigned long long)ea[i].to,
		              (unsigned long long)eb[i].from, (unsigned long long)eb[i].to);
		ck_assert_msg(!weights || fabs(ea[i].w / ta - eb[i].w / tb) <= 1e-9,
		              "%s: edge %#llx->%#llx weight %g of %g vs %g of %g", what,
		              (unsigned long long)ea[i].from, (unsigned long long)ea[i].to, ea[i].w,
		              ta, eb[i].w, tb);
	}
}

/* ---- (a) corrupt perf.data and text ---- */

static void expect_format_or_ok(const char *path, const char *what, size_t at, int also_arg)
{
	struct profile *p;
	struct binary *b;
	char msg[512];
	int rc = load(path, me.path, NULL, METHOD_CBT, 0, &p, &b, msg, sizeof(msg));
	ck_assert_msg(rc == 0 || rc == PMUSIM_ERR_FORMAT || (also_arg && rc == PMUSIM_ERR_ARG),
	              "%s %zu: result %d (%s)", what, at, rc, msg);
	ck_assert_msg(rc == 0 || (msg[0] && !strchr(msg, '\n')), "%s %zu: message '%s'", what, at,
	              msg);
	ck_assert(rc == 0 ? p && b : !p && !b);
	done(p, b);
}

START_TEST(truncated_perf_data)
{
	size_t len;
	write_perf_data(in_dir("p.data"));
	uint8_t *buf = slurp(in_dir("p.data"), &len);
	for (size_t cut = 0; cut < len; cut += cut < 1024 || cut > len - 64 ? 1 : 1 + cut % 997) {
		spit(in_dir("cut.data"), buf, cut);
		expect_format_or_ok(in_dir("cut.data"), "perf.data cut to", cut, 0);
	}
	free(buf);
}
END_TEST

START_TEST(flipped_perf_data)
{
	static const uint8_t masks[] = {0x01, 0x80, 0xff};
	size_t len;
	struct rng r;
	rng_init(&r, 11);
	write_perf_data(in_dir("p.data"));
	uint8_t *buf = slurp(in_dir("p.data"), &len);
	for (size_t k = 0; k < 600; k++) {
		/* half of the flips in the first 1 KiB: header, attr, COMM, MMAP2 */
		size_t at = (size_t)rng_uniform(&r, (k % 2 ? len : 1024) - 1);
		uint8_t m = masks[k % 3];
		buf[at] ^= m;
		spit(in_dir("cut.data"), buf, len);
		buf[at] ^= m;
		/* a flipped pid leaves the program's process without samples: PMUSIM_ERR_ARG */
		expect_format_or_ok(in_dir("cut.data"), "perf.data with a flipped byte at", at, 1);
	}
	free(buf);
}
END_TEST

/* Text cut anywhere: a cut line is an error or still a shorter stack; a cut in
 * the mapping line may lose the mapping (no binary then: PMUSIM_ERR_ARG). */
START_TEST(truncated_text)
{
	size_t len;
	write_text(in_dir("p.txt"), F_PID, me.path, 0);
	uint8_t *buf = slurp(in_dir("p.txt"), &len);
	for (size_t cut = 0; cut < len; cut += cut < 2048 ? 1 : 1 + cut % 499) {
		spit(in_dir("cut.txt"), buf, cut);
		expect_format_or_ok(in_dir("cut.txt"), "text cut to", cut, 1);
	}
	free(buf);
}
END_TEST

/* ---- (b) the same samples as text ---- */

/* clang-format off */
static const struct {
	int line;
	enum form form;
	int map; /* 0: the real path; 1: renamed, with its build id; 2: moved (--binary-dir) */
	int use_binary;
} text_rows[] = {
	{__LINE__, F_IP, 0, 1},       /* -F ip,brstack, --binary */
	{__LINE__, F_PID, 0, 0},      /* -F pid,ip,brstack, the binary from the mapping */
	{__LINE__, F_PID_TID, 1, 1},  /* -F pid,tid,ip,brstack, matched by build id */
	{__LINE__, F_PID, 2, 0},      /* the mapped file found in --binary-dir */
};
/* clang-format on */

START_TEST(text_gives_the_edges_of_perf_data)
{
	char moved[PATH_MAX + 32], bdir[PATH_MAX];
	const char *base = strrchr(me.path, '/') + 1;
	snprintf(moved, sizeof(moved), "/recorded/elsewhere/%s", base);
	snprintf(bdir, sizeof(bdir), "%.*s", (int)(base - 1 - me.path), me.path);
	int map = text_rows[_i].map;
	write_perf_data(in_dir("p.data"));
	write_text(in_dir("p.txt"), text_rows[_i].form,
	           map == 0   ? me.path
	           : map == 1 ? "/x/renamed"
	                      : moved,
	           map == 1);
	static const int methods[] = {METHOD_CBT, METHOD_TAKEN, METHOD_RANGES, METHOD_CALLS};
	for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
		struct profile *pd, *pt;
		struct binary *bd, *bt;
		char msg[512], what[64];
		snprintf(what, sizeof(what), "row %d, %s", text_rows[_i].line,
		         prof_method_name(methods[m]));
		ck_assert_msg(load(in_dir("p.data"), me.path, NULL, methods[m], 0, &pd, &bd, msg,
		                   sizeof(msg)) == 0,
		              "%s: %s", what, msg);
		ck_assert_msg(load(in_dir("p.txt"), text_rows[_i].use_binary ? me.path : NULL,
		                   map == 2 ? bdir : NULL, methods[m], 0, &pt, &bt, msg,
		                   sizeof(msg)) == 0,
		              "%s: %s", what, msg);
		const struct profile_stats *sd = profile_stats(pd), *st = profile_stats(pt);
		ck_assert_uint_eq(sd->samples, NSAMPLES);
		ck_assert_uint_eq(sd->used, NSAMPLES);
		ck_assert_uint_eq(st->samples, NSAMPLES);
		ck_assert_uint_eq(st->used, NSAMPLES);
		ck_assert_uint_eq(binary_bias(bd), binary_bias(bt));
		same_edges(pd, pt, what, 1);
		size_t n, fallthrough = 0;
		const struct edge *e = edges_sorted(profile_edges(pt), &n);
		for (size_t k = 0; k < n; k++)
			fallthrough += !e[k].taken;
		ck_assert_msg(fallthrough > 0 || methods[m] == METHOD_TAKEN ||
		                  methods[m] == METHOD_CALLS,
		              "%s: no not-taken edges rebuilt", what);
		done(pd, bd);
		done(pt, bt);
	}
}
END_TEST

/* Text errors: how the binary is missing, an event that text does not have, empty
 * and unreadable files. */
START_TEST(text_errors)
{
	static const struct {
		int line;
		const char *text; /* NULL: the samples without mapping lines */
		int binary, event, rc;
		const char *why;
	} rows[] = {
	    {__LINE__, NULL, 1, -1, PMUSIM_ERR_ARG, "--show-mmap-events"},
	    {__LINE__, NULL, 0, -1, PMUSIM_ERR_ARG, "use --binary"},
	    {__LINE__, " 401000 0x1/0x2/P/-/-/1/\n", 1, 1, PMUSIM_ERR_ARG, "one event"},
	    {__LINE__, "", 1, -1, PMUSIM_ERR_FORMAT, "is empty"},
	    {__LINE__, "\n# only a comment\n", 1, -1, PMUSIM_ERR_ARG, "no samples"},
	    {__LINE__,
	     "# a comment\n\x7f"
	     "ELF\x02\x01\x01\n",
	     1, -1, PMUSIM_ERR_FORMAT, "x.txt:2: bad sample ip"},
	    {__LINE__, "PERFILE", 1, -1, PMUSIM_ERR_FORMAT, "x.txt:1: "},
	};
	for (size_t i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		struct profile *p;
		struct binary *b;
		char msg[512] = "";
		if (rows[i].text) {
			spit(in_dir("x.txt"), (const uint8_t *)rows[i].text, strlen(rows[i].text));
		} else { /* the samples with the mapping line cut out */
			size_t len;
			write_text(in_dir("p.txt"), F_IP, me.path, 0);
			uint8_t *buf = slurp(in_dir("p.txt"), &len);
			char *nl = strchr(strchr((char *)buf, '\n') + 1, '\n') + 1;
			spit(in_dir("x.txt"), (uint8_t *)nl, len - (size_t)(nl - (char *)buf));
			free(buf);
		}
		struct input_opts io = {.binary = rows[i].binary ? me.path : NULL,
		                        .event = rows[i].event};
		struct profile_opts po = {.method = METHOD_CBT};
		int rc = input_profile(in_dir("x.txt"), &io, &po, &p, &b, msg, sizeof(msg));
		ck_assert_msg(rc == rows[i].rc && strstr(msg, rows[i].why) && !p && !b,
		              "row %d: %d '%s', want %d '%s'", rows[i].line, rc, msg, rows[i].rc,
		              rows[i].why);
	}
	struct profile *p;
	struct binary *b;
	char msg[512];
	ck_assert_int_eq(
	    load("/nonexistent/p.txt", me.path, NULL, METHOD_CBT, 0, &p, &b, msg, sizeof(msg)),
	    PMUSIM_ERR_IO);
	ck_assert_int_eq(load(dir, me.path, NULL, METHOD_CBT, 0, &p, &b, msg, sizeof(msg)),
	                 PMUSIM_ERR_IO);
}
END_TEST

/* ---- (c) the real Skylake recording ---- */

static const char *shared(const char *name)
{
	static char p[2][PATH_MAX];
	static int k;
	const char *sh = getenv("PMUSIM_SHARED");
	char *s = p[k++ % 2];
	snprintf(s, sizeof(p[0]), "%s/fixtures/real-lbr/%s", sh ? sh : "../shared", name);
	return s;
}

#define SKY_DATA shared("skylake-cycles-b.perf.data")
#define SKY_BIN shared("propeller_sample_1.bin")

START_TEST(real_skylake_samples_used)
{
	struct profile *p;
	struct binary *b;
	char msg[512];
	/* the default span (entries - 2 cycles) fits every full trace */
	ck_assert_msg(load(SKY_DATA, SKY_BIN, NULL, METHOD_CBT, 0, &p, &b, msg, sizeof(msg)) == 0,
	              "%s", msg);
	const struct profile_stats *st = profile_stats(p);
	uint64_t with_br = st->samples - st->drop[DROP_NO_BRANCHES];
	ck_assert_uint_eq(st->samples, 3740);
	ck_assert_msg(st->used * 100 >= with_br * 99, "%llu of %llu samples with branches used",
	              (unsigned long long)st->used, (unsigned long long)with_br);
	done(p, b);
	for (int m = METHOD_TAKEN; m <= METHOD_RANGES; m++) {
		ck_assert_msg(load(SKY_DATA, SKY_BIN, NULL, m, 0, &p, &b, msg, sizeof(msg)) == 0,
		              "%s", msg);
		st = profile_stats(p);
		ck_assert_uint_eq(st->used, st->samples - st->drop[DROP_NO_BRANCHES]);
		done(p, b);
	}
}
END_TEST

/* Runs perf script on the Skylake recording into path; 0, or -1 without perf. */
static int perf_script(const char *path, int mmap_events)
{
	if (access("/usr/bin/perf", X_OK) != 0)
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		FILE *o = freopen(path, "w", stdout), *e = freopen("/dev/null", "w", stderr);
		if (o && e) /* without mmap events the NULL ends the arguments early */
			execl("/usr/bin/perf", "perf", "script", "-f", "-i", SKY_DATA, "-F",
			      "ip,brstack", mmap_events ? "--show-mmap-events" : NULL,
			      (char *)NULL);
		_exit(127);
	}
	int st;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "perf script failed");
	return 0;
}

/* The perf.data's samples, each with period 1 and as taken-branch samples: what
 * the text of them must give. */
static struct profile *sky_as_text(struct binary *bin, int method)
{
	struct profile_opts po = {.method = method, .skylake_dup = 1}; /* as input.c for text */
	struct profile *p;
	struct perfdata *pd;
	struct perf_record r;
	char msg[512];
	int rc;
	ck_assert_int_eq(profile_new(&po, bin, &p), 0);
	ck_assert_msg(perfdata_open(SKY_DATA, &pd, msg, sizeof(msg)) == 0, "%s", msg);
	while ((rc = perfdata_next(pd, &r, msg, sizeof(msg))) == 1)
		if (r.type == PERF_RECORD_SAMPLE) {
			r.u.sample.period = 1;
			ck_assert_int_eq(profile_add(p, &r.u.sample, TRIG_TAKEN), 0);
		}
	ck_assert_msg(rc == 0, "%s", msg);
	perfdata_close(pd);
	return p;
}

START_TEST(real_skylake_perf_script)
{
	if (perf_script(in_dir("sky.txt"), 1) < 0) {
		printf("real_skylake_perf_script: skipped, no /usr/bin/perf\n");
		return;
	}
	static const int methods[] = {METHOD_CBT, METHOD_TAKEN, METHOD_RANGES, METHOD_CALLS};
	for (size_t m = 0; m < sizeof(methods) / sizeof(methods[0]); m++) {
		struct profile *pd, *pt;
		struct binary *bd, *bt;
		char msg[512];
		const char *what = prof_method_name(methods[m]);
		/* span 64: the cycle window (which only cbt uses, and not compared here) */
		ck_assert_msg(
		    load(SKY_DATA, SKY_BIN, NULL, methods[m], 64, &pd, &bd, msg, sizeof(msg)) == 0,
		    "%s", msg);
		ck_assert_msg(load(in_dir("sky.txt"), SKY_BIN, NULL, methods[m], 0, &pt, &bt, msg,
		                   sizeof(msg)) == 0,
		              "%s", msg);
		ck_assert_uint_eq(binary_bias(bd), binary_bias(bt));
		ck_assert_uint_eq(profile_stats(pt)->samples, 3740);
		/* ranges count each outcome once per sample: no period, no trigger, so
		 * the weights agree too; the others weight by period (and cbt picks
		 * its window by trigger), which text does not carry */
		if (methods[m] != METHOD_CBT)
			same_edges(pd, pt, what, methods[m] == METHOD_RANGES);
		struct profile *pe = sky_as_text(bt, methods[m]);
		same_edges(pe, pt, what, 1);
		profile_free(pe);
		done(pd, bd);
		done(pt, bt);
	}
	/* without the mapping lines the PIE cannot be placed */
	perf_script(in_dir("sky.txt"), 0);
	struct profile *p;
	struct binary *b;
	char msg[512];
	ck_assert_int_eq(
	    load(in_dir("sky.txt"), SKY_BIN, NULL, METHOD_CBT, 0, &p, &b, msg, sizeof(msg)),
	    PMUSIM_ERR_ARG);
	ck_assert_ptr_nonnull(strstr(msg, "--show-mmap-events"));
}
END_TEST

int main(void)
{
	Suite *s = suite_create("input");
	TCase *tc = tcase_create("input");
	tcase_set_timeout(tc, 300);
	tcase_add_unchecked_fixture(tc, make_dir, remove_dir);
	tcase_add_checked_fixture(tc, setup, NULL);
	tcase_add_test(tc, truncated_perf_data);
	tcase_add_test(tc, flipped_perf_data);
	tcase_add_test(tc, truncated_text);
	tcase_add_loop_test(tc, text_gives_the_edges_of_perf_data, 0,
	                    (int)(sizeof(text_rows) / sizeof(text_rows[0])));
	tcase_add_test(tc, text_errors);
	tcase_add_test(tc, real_skylake_samples_used);
	tcase_add_test(tc, real_skylake_perf_script);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
