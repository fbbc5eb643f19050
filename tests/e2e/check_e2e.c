/* End-to-end tests of `pmusim run` against things nobody here wrote:
 * - native execution: identical stdout and exit status for every workload and
 *   for programs of this machine (busybox's static applets);
 * - valgrind callgrind --collect-jumps: identical taken / executed counts for
 *   every conditional and unconditional jump of the program's own functions;
 * - valgrind lackey: identical instruction totals on REP-free programs;
 * - bad ELF files: exit status 2 and a one-line message;
 * - determinism: identical truth files from two runs with the same seed.
 * Environment: PMUSIM (the binary), WORKLOADS (directory of built workloads). */
#include <check.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/symtab.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* --- native vs simulated ------------------------------------------------ */

struct native_case {
	int line;
	const char *prog;   /* workload name, or absolute path of a machine program */
	const char *args[6];
	const char *stdin_text;
};

static const struct native_case native_cases[] = {
	{__LINE__, "loops", {0}, NULL},
	{__LINE__, "switch", {0}, NULL},
	{__LINE__, "recursion", {0}, NULL},
	{__LINE__, "indirect", {0}, NULL},
	{__LINE__, "strings", {0}, NULL},
	{__LINE__, "syscalls", {0}, NULL},
	{__LINE__, "fault_segv", {0}, NULL},
	{__LINE__, "abort", {0}, NULL},
	{__LINE__, "exit_code", {0}, NULL},
	{__LINE__, "args_env", {"one", "two words", "3"}, "some input\nmore input\n"},
	{__LINE__, "musl_hello", {0}, NULL},
	{__LINE__, "asm_branches", {0}, NULL},
	{__LINE__, "asm_tb_split", {0}, NULL},
	{__LINE__, "jit", {0}, NULL},
	{__LINE__, "pie_hello", {"static", "pie"}, NULL},
	/* the CPU state Linux starts a process with, the FPU state of a signal handler */
	{__LINE__, "cpu_state", {0}, NULL},
	{__LINE__, "cpu_state.dyn", {0}, NULL},
	{__LINE__, "reserve", {0}, NULL},
	{__LINE__, "spawn", {0}, NULL},
	/* POSIX timers (glibc's SIGEV_THREAD too), sigwaitinfo, signalfd and its readiness */
	{__LINE__, "timers", {0}, NULL},
	{__LINE__, "/bin/busybox", {"echo", "hello", "from", "busybox"}, NULL},
	{__LINE__, "/bin/busybox", {"wc"}, "alpha beta\ngamma\n\ndelta epsilon zeta\n"},
	{__LINE__, "/bin/busybox", {"sort", "-r"}, "pear\napple\nfig\nbanana\n"},
	{__LINE__, "/bin/busybox", {"sha256sum"}, "The quick brown fox jumps over the lazy dog\n"},
	{__LINE__, "/bin/busybox", {"tr", "a-z", "A-Z"}, "shout this line\n"},
	{__LINE__, "/bin/busybox", {"cut", "-d:", "-f2"}, "a:b:c\nd:e:f\n"},
	{__LINE__, "/bin/busybox", {"sed", "s/o/0/g"}, "foo boo\n"},
	{__LINE__, "/bin/busybox", {"grep", "-c", "an"}, "banana\napple\nmango\n"},
	/* Debian's own dynamically linked programs: ld.so, libc.so.6 and friends */
	{__LINE__, "/usr/bin/sort", {"-r"}, "pear\napple\nfig\nbanana\n"},
	{__LINE__, "/usr/bin/wc", {0}, "alpha beta\ngamma\n\ndelta epsilon zeta\n"},
	{__LINE__, "/usr/bin/sha256sum", {0}, "The quick brown fox jumps over the lazy dog\n"},
	{__LINE__, "/usr/bin/cut", {"-d:", "-f2"}, "a:b:c\nd:e:f\n"},
	{__LINE__, "/usr/bin/tr", {"a-z", "A-Z"}, "shout this line\n"},
	{__LINE__, "/usr/bin/grep", {"-c", "an"}, "banana\napple\nmango\n"},
	{__LINE__, "/usr/bin/sed", {"s/o/0/g"}, "foo boo\n"},
	{__LINE__, "/usr/bin/gzip", {"-c", "-n"}, "compress me, compress me, compress me\n"},
	{__LINE__, "/usr/bin/od", {"-c"}, "bytes\t\001\n"},
	{__LINE__, "/usr/bin/uniq", {"-c"}, "a\na\nb\n"},
	{__LINE__, "/usr/bin/false", {0}, NULL},
	{__LINE__, "/bin/busybox", {"sh", "-c", "x=3; echo $((x*7)); exit 5"}, NULL},
	{__LINE__, "/bin/busybox", {"false"}, NULL},
};

static const char *case_path(const struct native_case *c)
{
	return c->prog[0] == '/' ? c->prog : wl(c->prog);
}

START_TEST(native_matches)
{
	const struct native_case *c = &native_cases[_i];
	const char *prog = case_path(c);
	if (access(prog, X_OK) != 0)
		ck_abort_msg("line %d: %s is missing (make workloads / make deps)", c->line, prog);
	const char *in = NULL;
	if (c->stdin_text) {
		in = tmp_path("stdin.txt");
		FILE *f = fopen(in, "w");
		fputs(c->stdin_text, f);
		fclose(f);
	}
	char *nargv[10] = {(char *)prog}, *sargv[14] = {(char *)pmusim(), "run", "--", (char *)prog};
	int k = 0;
	for (; k < 6 && c->args[k]; k++) {
		nargv[1 + k] = (char *)c->args[k];
		sargv[4 + k] = (char *)c->args[k];
	}
	const char *nout = tmp_path("native.out"), *sout = tmp_path("sim.out"), *serr = tmp_path("sim.err");
	int ns = run_cmd(nargv, in, nout, NULL);
	int ss = run_cmd(sargv, in, sout, serr);
	char *a = slurp(nout, NULL), *b = slurp(sout, NULL), *e = slurp(serr, NULL);
	ck_assert_msg(ns == ss, "line %d %s: exit status native %d, pmusim %d; pmusim stderr: %s", c->line,
		      prog, ns, ss, e);
	ck_assert_msg(strcmp(a, b) == 0, "line %d %s: stdout differs:\nnative: %s\npmusim: %s", c->line,
		      prog, a, b);
	if (ns >= 128) /* died of a signal: pmusim reports it in one line */
		ck_assert_msg(strstr(e, "pmusim: program terminated by SIG") && strchr(e, '\n') == e + strlen(e) - 1,
			      "line %d: expected a one-line signal report, got: %s", c->line, e);
	free(a), free(b), free(e);
}
END_TEST

/* --- callgrind jump counts ------------------------------------------------ */

struct range {
	uint64_t lo, hi;
};

/* Address ranges of the functions defined in the workload's own object file. */
static size_t own_ranges(const char *name, struct range *r, size_t max)
{
	if (strncmp(name, "asm_", 4) == 0) { /* no libc: every instruction is its own */
		r[0] = (struct range){0, UINT64_MAX};
		return 1;
	}
	char cmd[1024], obj[600];
	snprintf(obj, sizeof(obj), "%s.o", wl(name));
	snprintf(cmd, sizeof(cmd), "nm --defined-only -P %s", obj);
	struct symtab *st;
	ck_assert_msg(symtab_load(wl(name), 0, &st) == 0, "%s: cannot read symbols", name);
	FILE *p = popen(cmd, "r");
	ck_assert_ptr_nonnull(p);
	char line[512], sym[400], type;
	size_t n = 0;
	while (fgets(line, sizeof(line), p) && n < max) {
		if (sscanf(line, "%399s %c", sym, &type) != 2 || (type != 'T' && type != 't'))
			continue;
		for (size_t i = 0; i < symtab_count(st); i++) {
			const struct sym *s = symtab_at(st, i);
			if (strcmp(s->name, sym) != 0)
				continue;
			/* assembly labels have no size: up to the next function */
			const struct sym *next = symtab_at(st, i + 1);
			uint64_t hi = s->size ? s->addr + s->size : next ? next->addr : s->addr + 0x10000;
			r[n++] = (struct range){s->addr, hi};
			break;
		}
	}
	pclose(p);
	symtab_free(st);
	return n;
}

static int in_ranges(const struct range *r, size_t n, uint64_t a)
{
	for (size_t i = 0; i < n; i++)
		if (a >= r[i].lo && a < r[i].hi)
			return 1;
	return 0;
}

static int same_function(const struct range *r, size_t n, uint64_t a, uint64_t b)
{
	for (size_t i = 0; i < n; i++)
		if (a >= r[i].lo && a < r[i].hi)
			return b >= r[i].lo && b < r[i].hi;
	return 0;
}

static const struct jump_rec *find_jump(const struct jump_rec *v, size_t n, uint64_t from, uint64_t to)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].from == from && v[i].to == to)
			return &v[i];
	return NULL;
}

static const char *const callgrind_cases[] = {
	"loops", "switch", "recursion", "indirect", "strings", "asm_branches", "musl_hello",
};

START_TEST(callgrind_matches)
{
	const char *name = callgrind_cases[_i];
	const char *prog = wl(name);
	struct range own[256];
	size_t nown = own_ranges(name, own, 256);
	ck_assert_msg(nown > 0, "%s: no functions of its own found", name);
	const char *cg = tmp_path("callgrind.out"), *tj = tmp_path("truth.json");
	char outopt[600];
	snprintf(outopt, sizeof(outopt), "--callgrind-out-file=%s", cg);
	char *vargv[] = {"valgrind", "--tool=callgrind", "--collect-jumps=yes", "--dump-instr=yes",
			 outopt, (char *)prog, NULL};
	char *sargv[] = {(char *)pmusim(), "run", "--truth-json", (char *)tj, "--", (char *)prog, NULL};
	int vs = run_cmd(vargv, NULL, NULL, NULL), ss = run_cmd(sargv, NULL, NULL, NULL);
	ck_assert_msg(vs == ss, "%s: exit status valgrind %d, pmusim %d", name, vs, ss);
	struct jump_rec *cj, *tjr;
	size_t ncj, ntj;
	ck_assert_int_eq(callgrind_jumps(cg, &cj, &ncj), 0);
	ck_assert_int_eq(truth_jumps(tj, &tjr, &ntj), 0);
	int mismatches = 0, compared = 0;
	char report[4096] = "";
	size_t rl = 0;
	/* every jump pmusim saw in the program's own code, as callgrind counted it;
	 * callgrind books a jump into another function (a tail call) as a call, so
	 * only jumps that stay inside one function are compared */
	for (size_t i = 0; i < ntj; i++) {
		const struct jump_rec *t = &tjr[i];
		if (!in_ranges(own, nown, t->from) || t->count + t->executed == 0 ||
		    !same_function(own, nown, t->from, t->to))
			continue;
		/* a branch to its own fall-through is invisible to callgrind (VEX
		 * folds it); asm_branches_facts checks those against hand counts */
		if (t->to == t->fallthrough && t->fallthrough)
			continue;
		const struct jump_rec *c = find_jump(cj, ncj, t->from, t->to);
		uint64_t cc = c ? c->count : 0;
		/* executions of a conditional branch: its Ir count, summed over all
		 * contexts (callgrind omits jcnd lines of contexts where it was never taken) */
		uint64_t ce = t->cond ? callgrind_executions(cg, t->from) : 0;
		compared++;
		if (cc != t->count || ce != t->executed) {
			mismatches++;
			if (rl < sizeof(report) - 200)
				rl += (size_t)snprintf(report + rl, sizeof(report) - rl,
					"  %#llx->%#llx pmusim %llu/%llu callgrind %llu/%llu\n",
					(unsigned long long)t->from, (unsigned long long)t->to,
					(unsigned long long)t->count, (unsigned long long)t->executed,
					(unsigned long long)cc, (unsigned long long)ce);
		}
	}
	/* and nothing callgrind saw there that pmusim missed (REP self-loops aside) */
	for (size_t i = 0; i < ncj; i++) {
		const struct jump_rec *c = &cj[i];
		if (!in_ranges(own, nown, c->from) || c->from == c->to || c->count + c->executed == 0)
			continue;
		if (!find_jump(tjr, ntj, c->from, c->to) && c->count) {
			mismatches++;
			if (rl < sizeof(report) - 200)
				rl += (size_t)snprintf(report + rl, sizeof(report) - rl,
					"  %#llx->%#llx only callgrind %llu/%llu\n",
					(unsigned long long)c->from, (unsigned long long)c->to,
					(unsigned long long)c->count, (unsigned long long)c->executed);
		}
	}
	ck_assert_msg(compared > 0, "%s: no jumps compared", name);
	ck_assert_msg(mismatches == 0, "%s: %d of %d jump sites differ from callgrind:\n%s", name,
		      mismatches, compared, report);
	free(cj);
	free(tjr);
}
END_TEST

/* --- BOLT instrumentation --------------------------------------------------------
 * llvm-bolt -instrument counts every edge of the program's own functions; its
 * profile must equal pmusim's --truth for all edges between them (BOLT's
 * instrumentation does not record returns, and records block-to-block
 * fall-throughs where no branch is, which pmusim's branch edges leave out). */
static int own_name(char names[][128], size_t n, const char *fn)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(names[i], fn) == 0)
			return 1;
	return 0;
}

static const struct fdata_edge *find_edge(const struct fdata_edge *v, size_t n, const struct fdata_edge *e,
					  int source_only)
{
	for (size_t i = 0; i < n; i++)
		if (strcmp(v[i].from_fn, e->from_fn) == 0 && v[i].from_off == e->from_off &&
		    (source_only || (strcmp(v[i].to_fn, e->to_fn) == 0 && v[i].to_off == e->to_off)))
			return &v[i];
	return NULL;
}

static int considered(char names[][128], size_t n, const struct fdata_edge *e)
{
	if (!own_name(names, n, e->from_fn) || !own_name(names, n, e->to_fn))
		return 0;
	/* a return lands mid-function in another function */
	return strcmp(e->from_fn, e->to_fn) == 0 || e->to_off == 0;
}

/* loops static (--linger: BOLT's runtime dumps a static program's profile from a
 * timer) and as a dynamic PIE (dumped at exit) */
static const char *const bolt_progs[] = {"loops.relocs", "loops.dynpie"};

START_TEST(bolt_instrumentation_matches)
{
	const char *prog = wl(bolt_progs[_i]);
	const char *inst = tmp_path("loops.inst"), *prof = tmp_path("bolt.fdata"), *ours = tmp_path("ours.fdata");
	char fileopt[600];
	snprintf(fileopt, sizeof(fileopt), "--instrumentation-file=%s", prof);
	/* the llvm-16 directory's binary finds BOLT's instrumentation runtime */
	char *bargv[] = {"/usr/lib/llvm-16/bin/llvm-bolt", (char *)prog, "-instrument", "-o", (char *)inst, fileopt,
			 "--instrumentation-sleep-time=1", "--instrumentation-no-counters-clear", NULL};
	ck_assert_msg(run_cmd(bargv, NULL, NULL, NULL) == 0, "llvm-bolt -instrument failed (make deps installs bolt-16)");
	unlink(prof);
	char *iargv[] = {(char *)inst, _i ? NULL : "--linger", NULL};
	ck_assert_int_eq(run_cmd(iargv, NULL, NULL, NULL), 0);
	size_t len = 0;
	char *txt = NULL;
	for (int i = 0; i < 50 && len == 0; i++) { /* BOLT's dumper process may still be writing */
		usleep(200000);
		free(txt);
		txt = slurp(prof, &len);
	}
	free(txt);
	ck_assert_msg(len > 0, "BOLT wrote no profile");
	/* the same run: --linger's sleep is simulated time under pmusim */
	char *sargv[] = {(char *)pmusim(), "run", "--truth", (char *)ours, "--", (char *)prog, _i ? NULL : "--linger",
			 NULL};
	ck_assert_int_eq(run_cmd(sargv, NULL, NULL, NULL), 0);
	char names[64][128];
	size_t nn = 0;
	FILE *p = popen("nm --defined-only -P build/workloads/loops.o", "r");
	char line[256], type;
	while (p && fgets(line, sizeof(line), p) && nn < 64)
		if (sscanf(line, "%127s %c", names[nn], &type) == 2 && (type == 'T' || type == 't'))
			nn++;
	if (p)
		pclose(p);
	ck_assert_int_ge(nn, 3);
	struct fdata_edge *b, *o;
	size_t nb, no;
	ck_assert_int_eq(fdata_read(prof, &b, &nb), 0);
	ck_assert_int_eq(fdata_read(ours, &o, &no), 0);
	int compared = 0, mismatches = 0;
	for (size_t i = 0; i < no; i++) {
		if (!considered(names, nn, &o[i]))
			continue;
		const struct fdata_edge *x = find_edge(b, nb, &o[i], 0);
		compared++;
		if (!x || x->count != o[i].count) {
			mismatches++;
			fprintf(stderr, "edge %s+%llx -> %s+%llx: pmusim %llu, BOLT %llu\n", o[i].from_fn,
				(unsigned long long)o[i].from_off, o[i].to_fn, (unsigned long long)o[i].to_off,
				(unsigned long long)o[i].count, (unsigned long long)(x ? x->count : 0));
		}
	}
	for (size_t i = 0; i < nb; i++) {
		if (!considered(names, nn, &b[i]) || !find_edge(o, no, &b[i], 1))
			continue; /* a fall-through between blocks, not a branch */
		if (!find_edge(o, no, &b[i], 0)) {
			mismatches++;
			fprintf(stderr, "edge %s+%llx -> %s+%llx only in BOLT's profile (%llu)\n", b[i].from_fn,
				(unsigned long long)b[i].from_off, b[i].to_fn, (unsigned long long)b[i].to_off,
				(unsigned long long)b[i].count);
		}
	}
	ck_assert_int_ge(compared, 8);
	ck_assert_msg(mismatches == 0, "%d of %d edges differ from BOLT instrumentation", mismatches, compared);
	free(b);
	free(o);
}
END_TEST

/* llvm-bolt reads pmusim's --truth as its --data profile and matches it fully. */
START_TEST(bolt_reads_truth)
{
	const char *prog = wl("loops.relocs");
	const char *ours = tmp_path("ours2.fdata"), *log = tmp_path("bolt.log"), *out = tmp_path("loops.bolt");
	char *sargv[] = {(char *)pmusim(), "run", "--truth", (char *)ours, "--", (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(sargv, NULL, NULL, NULL), 0);
	char dataopt[600];
	snprintf(dataopt, sizeof(dataopt), "--data=%s", ours);
	char *bargv[] = {"llvm-bolt-16", (char *)prog, "-o", (char *)out, dataopt, "--print-cfg",
			 "--print-only=run_loops/1,mix/1", "--reorder-blocks=ext-tsp", NULL};
	ck_assert_int_eq(run_cmd(bargv, NULL, log, log), 0);
	char *t = slurp(log, NULL);
	ck_assert_msg(strstr(t, "Binary Function \"run_loops/1") && strstr(t, "Binary Function \"mix/1"),
		      "llvm-bolt did not print the functions:\n%.2000s", t);
	int full = 0;
	for (const char *q = t; (q = strstr(q, "Profile Acc : 100.0%")); q++)
		full++;
	ck_assert_msg(full == 2, "llvm-bolt matched %d of 2 functions' profile fully:\n%.3000s", full, t);
	ck_assert_msg(strstr(t, "Exec Count  : 200000"), "mix's execution count is not 200000");
	free(t);
}
END_TEST

/* --- hand-counted edge cases ----------------------------------------------------
 * workloads/asm_branches.S, counted by hand from its source and the SDM (not by
 * pmusim): a jmp and a call to the next instruction are taken; a jz whose
 * target is its own fall-through is taken or not by ZF; loop and jrcxz. The
 * program has no function symbols, so every address is "0 <dso> <offset>". */
static const char asm_branches_fdata[] =
	"0 asm_branches 401007 0 asm_branches 401005 0 9\n"   /* L1 taken */
	"0 asm_branches 401007 0 asm_branches 401009 0 1\n"   /* L1 falls through */
	"0 asm_branches 401009 0 asm_branches 40100b 0 1\n"   /* J1 jmp +0 */
	"0 asm_branches 40100b 0 asm_branches 401010 0 1\n"   /* C1 call +0 */
	"0 asm_branches 401013 0 asm_branches 401015 0 1\n"   /* Z1 ZF=1: taken */
	"0 asm_branches 40101c 0 asm_branches 40101e 0 1\n"   /* Z1' ZF=0: not taken */
	"0 asm_branches 401023 0 asm_branches 401023 0 4\n"   /* LP1 loop taken */
	"0 asm_branches 401023 0 asm_branches 401025 0 1\n"   /* LP1 exits */
	"0 asm_branches 401027 0 asm_branches 40102a 0 1\n"   /* JR1 rcx=0: taken */
	"0 asm_branches 40102f 0 asm_branches 401031 0 1\n"   /* JR2 rcx=1: not taken */
	"0 asm_branches 401038 0 asm_branches 40103c 0 1\n"   /* IJ1 jmp rax */
	"0 asm_branches 40103c 0 asm_branches 401066 0 1\n"   /* IC1 call [fptr] */
	"0 asm_branches 401066 0 asm_branches 401042 0 1\n";  /* ret */

START_TEST(asm_branches_facts)
{
	const char *fd = tmp_path("asm.fdata"), *tj = tmp_path("asm.json");
	char *a[] = {(char *)pmusim(), "run", "--truth", (char *)fd, "--truth-json", (char *)tj, "--",
		     (char *)wl("asm_branches"), NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL), 7);
	char *got = slurp(fd, NULL);
	ck_assert_msg(got && strcmp(got, asm_branches_fdata) == 0, "asm_branches truth:\n%s\nexpected:\n%s",
		      got, asm_branches_fdata);
	ck_assert_int_eq(truth_instructions(tj), 51);
	free(got);
}
END_TEST

/* --- lackey instruction totals ---------------------------------------------- */

static const char *const lackey_cases[] = {"asm_branches", "asm_tb_split"};

START_TEST(lackey_matches)
{
	const char *prog = wl(lackey_cases[_i]);
	const char *le = tmp_path("lackey.err"), *tj = tmp_path("truth.json");
	char *largv[] = {"valgrind", "--tool=lackey", "--basic-counts=yes", (char *)prog, NULL};
	char *sargv[] = {(char *)pmusim(), "run", "--truth-json", (char *)tj, "--", (char *)prog, NULL};
	run_cmd(largv, NULL, NULL, le);
	run_cmd(sargv, NULL, NULL, NULL);
	char *e = slurp(le, NULL);
	char *p = e ? strstr(e, "guest instrs:") : NULL;
	ck_assert_msg(p, "no lackey count for %s", prog);
	long long lack = 0;
	for (p += 13; *p == ' ' || (*p >= '0' && *p <= '9') || *p == ','; p++)
		if (*p >= '0' && *p <= '9')
			lack = lack * 10 + (*p - '0');
	long long ours = truth_instructions(tj);
	ck_assert_msg(lack == ours, "%s: lackey %lld instructions, pmusim %lld", prog, lack, ours);
	free(e);
}
END_TEST

/* --- bad programs ------------------------------------------------------------ */

struct bad_case {
	int line;
	const char *what;
	const char *make; /* shell snippet writing $F */
	const char *expect;
};

static const struct bad_case bad_cases[] = {
	{__LINE__, "garbage", "head -c 3000 /dev/urandom > $F", "not an ELF file"},
	{__LINE__, "empty", ": > $F", "not an ELF file"},
	{__LINE__, "truncated", "head -c 200 $W/loops > $F", "truncated"},
	{__LINE__, "half", "head -c $(( $(stat -c %s $W/loops) / 2 )) $W/loops > $F", "truncated"},
	{__LINE__, "aarch64", "cp $W/loops $F && printf '\\267' | dd of=$F bs=1 seek=18 conv=notrunc 2>/dev/null",
	 "not an x86-64 program"},
	{__LINE__, "32-bit", "cp $W/loops $F && printf '\\001' | dd of=$F bs=1 seek=4 conv=notrunc 2>/dev/null",
	 "not a 64-bit ELF"},
	{__LINE__, "bad interpreter", "cp /bin/true $F && sed -i 's|/lib64/ld-linux-x86-64.so.2|/etc/hostname\\x00xxxxxxxxxxxxx|' $F",
	 "/etc/hostname: not an ELF file"},
	/* refused as the kernel's execve refuses them, with its reason */
	{__LINE__, "missing", "rm -f $F", "cannot run /tmp/pmusim-e2e-"},
	{__LINE__, "missing: why", "rm -f $F", ": No such file or directory"},
	{__LINE__, "directory", "rm -f $F && mkdir -p $F", ": Permission denied"},
	{__LINE__, "not executable", "cp $W/loops $F && chmod -x $F", ": Permission denied"},
};

START_TEST(bad_elf_exits_2)
{
	const struct bad_case *c = &bad_cases[_i];
	const char *f = tmp_path("bad.elf"), *err = tmp_path("bad.err");
	char cmd[1024];
	/* every file made executable, unless the case is about that */
	snprintf(cmd, sizeof(cmd), "F=%s; W=%s; rm -rf $F; %s%s", f, wl("."), c->make,
	         strstr(c->make, "chmod") ? "" : "; [ ! -f $F ] || chmod +x $F");
	ck_assert_int_eq(system(cmd), 0);
	char *argv[] = {(char *)pmusim(), "run", (char *)f, NULL};
	int st = run_cmd(argv, NULL, NULL, err);
	char *e = slurp(err, NULL);
	ck_assert_msg(st == 2, "line %d (%s): exit %d, stderr %s", c->line, c->what, st, e);
	ck_assert_msg(strstr(e, c->expect), "line %d (%s): message lacks '%s': %s", c->line, c->what,
		      c->expect, e);
	ck_assert_msg(strchr(e, '\n') == e + strlen(e) - 1, "line %d: not one line: %s", c->line, e);
	free(e);
}
END_TEST

START_TEST(bad_options_exit_2)
{
	char *a1[] = {(char *)pmusim(), "run", "--seed", "x", "/bin/true", NULL};
	char *a2[] = {(char *)pmusim(), "run", "--no-such-option", NULL};
	char *a3[] = {(char *)pmusim(), "frobnicate", NULL};
	char *a4[] = {(char *)pmusim(), "run", NULL};
	ck_assert_int_eq(run_cmd(a1, NULL, NULL, NULL), 2);
	ck_assert_int_eq(run_cmd(a2, NULL, NULL, NULL), 2);
	ck_assert_int_eq(run_cmd(a3, NULL, NULL, NULL), 2);
	ck_assert_int_eq(run_cmd(a4, NULL, NULL, NULL), 2);
	char *h[] = {(char *)pmusim(), "run", "--help", NULL};
	const char *o = tmp_path("help.out");
	ck_assert_int_eq(run_cmd(h, NULL, o, NULL), 0);
	char *t = slurp(o, NULL);
	const char *opts[] = {"--seed", "--max-insns", "--strict", "--truth", "--truth-json"};
	for (size_t i = 0; i < 5; i++)
		ck_assert_msg(strstr(t, opts[i]), "run --help does not describe %s", opts[i]);
	free(t);
}
END_TEST

/* --- determinism and limits ---------------------------------------------------- */

START_TEST(same_seed_same_bytes)
{
	const char *f1 = tmp_path("a.fdata"), *f2 = tmp_path("b.fdata");
	const char *j1 = tmp_path("a.json"), *j2 = tmp_path("b.json");
	const char *o1 = tmp_path("a.out"), *o2 = tmp_path("b.out");
	char *a[] = {(char *)pmusim(), "run", "--seed", "42", "--truth", (char *)f1, "--truth-json",
		     (char *)j1, "--", (char *)wl("syscalls"), NULL};
	char *b[] = {(char *)pmusim(), "run", "--seed", "42", "--truth", (char *)f2, "--truth-json",
		     (char *)j2, "--", (char *)wl("syscalls"), NULL};
	ck_assert_int_eq(run_cmd(a, NULL, o1, NULL), run_cmd(b, NULL, o2, NULL));
	size_t l1, l2;
	char *x = slurp(f1, &l1), *y = slurp(f2, &l2);
	ck_assert_msg(x && y && l1 > 0 && l1 == l2 && memcmp(x, y, l1) == 0, "fdata differs between runs");
	free(x), free(y);
	x = slurp(j1, &l1), y = slurp(j2, &l2);
	ck_assert_msg(x && y && l1 == l2 && memcmp(x, y, l1) == 0, "truth JSON differs between runs");
	free(x), free(y);
	x = slurp(o1, &l1), y = slurp(o2, &l2);
	ck_assert_msg(l1 == l2 && memcmp(x, y, l1) == 0, "program output differs between runs");
	free(x), free(y);
}
END_TEST

/* What a native run takes from the host comes from --seed and the simulated
 * clock under pmusim; CPUID is the documented model (sim/machine/cpuid.c) on any host. */
START_TEST(seed_controls_randomness)
{
	const char *o[3] = {tmp_path("s1.out"), tmp_path("s1b.out"), tmp_path("s2.out")};
	const char *seeds[3] = {"1", "1", "2"};
	char *out[3];
	for (int i = 0; i < 3; i++) {
		char *a[] = {(char *)pmusim(), "run", "--seed", (char *)seeds[i], "--", (char *)wl("seeded"), NULL};
		ck_assert_int_eq(run_cmd(a, NULL, o[i], NULL), 0);
		out[i] = slurp(o[i], NULL);
	}
	ck_assert_str_eq(out[0], out[1]);
	ck_assert_msg(strncmp(out[0], out[2], strlen("getrandom=0123456789abcdef")) != 0,
		      "different seeds gave the same getrandom bytes:\n%s%s", out[0], out[2]);
	ck_assert_msg(strstr(out[0], "cpuid=GenuineIntel 0x00050654 "), "CPUID not the documented model: %s", out[0]);
	for (int i = 0; i < 3; i++)
		free(out[i]);
}
END_TEST

/* An unsupported system call returns ENOSYS and is named once; --strict stops. */
START_TEST(unsupported_syscall)
{
	const char *prog = tmp_path("nosys"), *out = tmp_path("nosys.out"), *err = tmp_path("nosys.err");
	const char *src = tmp_path("nosys.c");
	FILE *f = fopen(src, "w");
	fputs("#include <errno.h>\n#include <stdio.h>\n#include <unistd.h>\n"
	      "int main(void) { long a = syscall(499), b = syscall(499);\n"
	      "printf(\"%ld %ld %d\\n\", a, b, errno == ENOSYS); return 0; }\n", f);
	fclose(f);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cc -O1 -static -o %s %s", prog, src);
	ck_assert_int_eq(system(cmd), 0);
	char *a[] = {(char *)pmusim(), "run", "--", (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(a, NULL, out, err), 0);
	char *o = slurp(out, NULL), *e = slurp(err, NULL);
	ck_assert_str_eq(o, "-1 -1 1\n");
	ck_assert_str_eq(e, "pmusim: unsupported system call syscall_499 (499) returns ENOSYS\n");
	free(o), free(e);
	char *b[] = {(char *)pmusim(), "run", "--strict", "--", (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(b, NULL, out, err), 2);
	e = slurp(err, NULL);
	ck_assert_msg(strstr(e, "unsupported system call") && strstr(e, "--strict"), "strict message: %s", e);
	free(e);
}
END_TEST

START_TEST(max_insns_is_exact)
{
	const char *j = tmp_path("lim.json");
	char *a[] = {(char *)pmusim(), "run", "--max-insns", "12345", "--truth-json", (char *)j, "--",
		     (char *)wl("loops"), NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL), 124);
	ck_assert_int_eq(truth_instructions(j), 12345);
}
END_TEST

/* A fault is reported in one line with the symbol; its truth file is complete. */
START_TEST(fault_report_and_truth)
{
	const char *err = tmp_path("fault.err"), *j = tmp_path("fault.json");
	char *a[] = {(char *)pmusim(), "run", "--truth-json", (char *)j, "--", (char *)wl("fault_segv"), NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, err), 139);
	char *e = slurp(err, NULL);
	ck_assert_msg(strstr(e, "SIGSEGV at 0x") && strstr(e, "(main+0x") && strstr(e, "address 0x10\n"),
		      "fault report lacks signal, main+offset or data address: %s", e);
	free(e);
	char *t = slurp(j, NULL);
	ck_assert_msg(t && strlen(t) > 2 && strcmp(t + strlen(t) - 2, "}\n") == 0, "truth JSON incomplete");
	free(t);
	ck_assert_int_gt(truth_instructions(j), 1000);
}
END_TEST

/* Ctrl-C ends the run with status 130 and complete output files. */
START_TEST(sigint_keeps_outputs)
{
	const char *j = tmp_path("int.json"), *err = tmp_path("int.err"), *prog = tmp_path("spin");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "printf 'int main(void){for(volatile long i=0;;i++);}' | "
		 "cc -O1 -static -x c -o %s -", prog);
	ck_assert_int_eq(system(cmd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(err, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, 2);
		execl(pmusim(), pmusim(), "run", "--truth-json", j, "--", prog, (char *)NULL);
		_exit(127);
	}
	usleep(700000);
	kill(pid, SIGINT);
	int st;
	waitpid(pid, &st, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
	char *t = slurp(j, NULL), *e = slurp(err, NULL);
	ck_assert_msg(t && strcmp(t + strlen(t) - 2, "}\n") == 0, "truth JSON incomplete after SIGINT");
	ck_assert_msg(strstr(e, "interrupted (SIGINT)"), "no interruption message: %s", e);
	ck_assert_int_gt(truth_instructions(j), 100000);
	free(t), free(e);
}
END_TEST

/* --- starting a program as a user does -------------------------------------- */

/* A name without a slash is found in PATH as execvp finds it; a "#!" script runs
 * through its interpreter with its path and arguments, as the kernel runs it; the
 * same output natively (execvp) and under pmusim. */
START_TEST(programs_start_as_execvp_starts_them)
{
	const char *script = tmp_path("script.sh"), *no = tmp_path("no.out"), *so = tmp_path("so.out");
	FILE *f = fopen(script, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh -e\necho \"script $# args: $*\"\nbusybox echo from PATH\n", f);
	fclose(f);
	chmod(script, 0755);
	char *cases[][4] = {{"busybox", "echo", "found in PATH", NULL}, {(char *)script, "one", "two", NULL}};
	for (int i = 0; i < 2; i++) {
		char *sargv[8] = {(char *)pmusim(), "run", "--"};
		for (int k = 0; cases[i][k]; k++)
			sargv[3 + k] = cases[i][k];
		int ns = run_cmd(cases[i], NULL, no, NULL), ss = run_cmd(sargv, NULL, so, NULL);
		char *a = slurp(no, NULL), *b = slurp(so, NULL);
		ck_assert_msg(ns == 0 && ss == 0 && a && b && strcmp(a, b) == 0 && strlen(a) > 10,
		              "%s: native %d '%s', pmusim %d '%s'", cases[i][0], ns, a, ss, b);
		free(a), free(b);
	}
}
END_TEST

/* The clock starts at 2050-01-01 by default (later than any file: a file the program
 * makes is not from the future), at --clock-start T, or at the real time with 'now'. */
START_TEST(clock_start)
{
	char *d[] = {(char *)pmusim(), "run", "--", "/bin/sh", "-c",
	             "date -u +%s; touch f.$$; [ $(stat -c %Y f.$$) -le $(date +%s) ] && echo past; rm f.$$", NULL};
	int st;
	char *out = run_capture(d, &st);
	ck_assert_msg(st == 0 && out && strncmp(out, "2524608000\npast\n", 16) == 0, "%s", out);
	free(out);
	char *e[] = {(char *)pmusim(), "run", "--clock-start", "86400", "--", "/bin/date", "-u", "+%F %T", NULL};
	out = run_capture(e, &st);
	ck_assert_msg(st == 0 && out && strcmp(out, "1970-01-02 00:00:00\n") == 0, "%s", out);
	free(out);
	char *n[] = {(char *)pmusim(), "run", "--clock-start", "now", "--", "/bin/date", "+%s", NULL};
	long before = (long)time(NULL);
	out = run_capture(n, &st);
	long after = (long)time(NULL), t = out ? atol(out) : 0;
	ck_assert_msg(st == 0 && t >= before && t <= after + 1, "now: %ld not in [%ld, %ld]", t, before, after);
	free(out);
}
END_TEST

static Suite *e2e_suite(void)
{
	Suite *s = suite_create("e2e");
	TCase *tc = tcase_create("vs_native");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, native_matches, 0, (int)(sizeof(native_cases) / sizeof(native_cases[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("vs_valgrind");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, callgrind_matches, 0,
			    (int)(sizeof(callgrind_cases) / sizeof(callgrind_cases[0])));
	tcase_add_test(tc, asm_branches_facts);
	tcase_add_loop_test(tc, bolt_instrumentation_matches, 0, 2);
	tcase_add_test(tc, bolt_reads_truth);
	tcase_add_loop_test(tc, lackey_matches, 0, (int)(sizeof(lackey_cases) / sizeof(lackey_cases[0])));
	suite_add_tcase(s, tc);
	tc = tcase_create("errors_and_determinism");
	tcase_set_timeout(tc, 60);
	tcase_add_loop_test(tc, bad_elf_exits_2, 0, (int)(sizeof(bad_cases) / sizeof(bad_cases[0])));
	tcase_add_test(tc, bad_options_exit_2);
	tcase_add_test(tc, same_seed_same_bytes);
	tcase_add_test(tc, max_insns_is_exact);
	tcase_add_test(tc, seed_controls_randomness);
	tcase_add_test(tc, unsupported_syscall);
	tcase_add_test(tc, fault_report_and_truth);
	tcase_add_test(tc, sigint_keeps_outputs);
	tcase_add_test(tc, programs_start_as_execvp_starts_them);
	tcase_add_test(tc, clock_start);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(e2e_suite());
}
