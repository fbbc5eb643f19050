/* The thread-stack unit against a reference that shares nothing with it:
 * perf 6.1's own DWARF unwinder. Each case records the same deterministic run
 * twice (same program, options, seed and period, so the snapshots fall at the
 * same instructions): with the unit, whose work areas become the callchains,
 * and with --tstack-dwarf, which writes the registers and 64,992 bytes of
 * stack of each snapshot as `perf record --call-graph dwarf` does. perf script
 * prints both: the unit's callchains as recorded, the dumps as perf unwinds
 * them by the binary's .eh_frame. Every frame of every snapshot is compared,
 * and 0 mismatches are allowed.
 *
 * How perf prints a frame (libdw's dwfl_frame_pc, which perf's unwinder
 * follows): the sample IP as it is; a caller's return address minus one, so
 * that it names the call; but right after a signal frame (unwound through an
 * FDE whose CIE has the 'S' augmentation: glibc's __restore_rt) the address
 * where the interrupted code goes on, as it is. So the unit's frame f is
 * perf's plus one, or perf's itself after a signal frame.
 *
 * Where perf's unwinding cannot be the reference, the comparison names the
 * case, checks that it is that case, and counts it with the unit's frames it
 * leaves uncompared:
 *  - no_cfi: perf stops at code no FDE covers (the .plt stubs through which a
 *    static program calls its IFUNCs, hand-written assembly without .cfi
 *    directives); perf's frames up to there are the unit's;
 *  - alt_stack: a handler running on an alternate stack: the dump starts at
 *    RSP there, so perf reads the interrupted IP from the signal frame but not
 *    the interrupted code's frames on the thread's stack; perf ends at that
 *    IP, and RSP lies in the program's alternate stack;
 *  - clone_child: a new thread before its first instruction stands right
 *    after clone3's syscall, where glibc's CFI still describes the parent's
 *    frame (its cfi_undefined rip comes on the child's path, later): perf
 *    reads one "return address" off the new stack that is no code (perf names
 *    it [unknown]); the thread has called nothing and the unit has no frame;
 *  - getpc_call: between "call 1f" and "1: pop %reg" the call's return
 *    address is on the stack (the unit and the machine's truth have its
 *    frame), while the CFI describes the function's frame: the unit's first
 *    return address is the IP itself, the pop's address, and the rest agree.
 * Agreeing with no exception: _start's outermost frame (its CFI ends the
 * chain, cfi_undefined rip, and the unit has nothing older than _start's
 * call), 2,000-deep recursion (the dump holds it), signal frames (perf names
 * __restore_rt's "[unknown]": its address minus one is the nop glibc puts
 * before that label so that pc - 1 finds the signal FDE; the comparison is by
 * address), nested signals, and handlers left by siglongjmp. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* --- facts of the binary, from binutils ------------------------------------ */

struct fde {
	uint64_t lo, hi;
	int signal; /* its CIE's augmentation has 'S' */
};

struct facts {
	struct fde *fde;
	size_t nfde;
	uint64_t clone_lo, clone_hi;  /* __clone3 */
	uint64_t getpc[16];           /* addresses X with "call X" right before X */
	size_t ngetpc;
	uint64_t alt_lo, alt_hi;      /* the alternate signal stack, if named */
};

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* readelf's dump of .eh_frame: CIEs with their augmentation, FDEs' ranges. */
static void read_fdes(const char *prog, struct facts *f)
{
	int st;
	char *argv[] = {"readelf", "--debug-dump=frames", (char *)prog, NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "readelf --debug-dump=frames %s", prog);
	uint64_t sig_cie[64];
	size_t nsig = 0, cap = 0;
	unsigned long cur_cie = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		unsigned long off, cie;
		uint64_t lo, hi;
		const char *p;
		if (sscanf(l, "%lx %*x %*x CIE", &off) == 1 && strstr(l, " CIE"))
			cur_cie = off;
		else if ((p = strstr(l, "Augmentation:")) && strchr(p, 'S') && nsig < 64)
			sig_cie[nsig++] = cur_cie;
		else if ((p = strstr(l, "cie=")) && sscanf(p, "cie=%lx pc=%" SCNx64 "..%" SCNx64, &cie, &lo, &hi) == 3) {
			if (f->nfde == cap) {
				cap = cap ? cap * 2 : 1024;
				f->fde = realloc(f->fde, cap * sizeof(*f->fde));
				ck_assert_ptr_nonnull(f->fde);
			}
			int s = 0;
			for (size_t i = 0; i < nsig; i++)
				s |= sig_cie[i] == cie;
			f->fde[f->nfde++] = (struct fde){lo, hi, s};
		}
	}
	free(text);
	qsort(f->fde, f->nfde, sizeof(*f->fde), cmp_fde);
	ck_assert_msg(f->nfde > 100, "%s: %zu FDEs", prog, f->nfde);
}

/* The FDE covering code address a, or NULL. */
static const struct fde *fde_of(const struct facts *f, uint64_t a)
{
	size_t lo = 0, hi = f->nfde;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->fde[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && a < f->fde[lo - 1].hi ? &f->fde[lo - 1] : NULL;
}

/* nm -S: a symbol's [address, address + size). */
static int symbol_range(const char *prog, const char *name, uint64_t *lo, uint64_t *hi)
{
	int st, found = 0;
	char *argv[] = {"nm", "-S", (char *)prog, NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "nm -S %s", prog);
	for (char *l = strtok(text, "\n"); l && !found; l = strtok(NULL, "\n")) {
		uint64_t a, n;
		char sym[256];
		if (sscanf(l, "%" SCNx64 " %" SCNx64 " %*c %255s", &a, &n, sym) == 3 && strcmp(sym, name) == 0)
			*lo = a, *hi = a + n, found = 1;
	}
	free(text);
	return found;
}

/* objdump's listing: every "call X" whose next instruction is X. */
static void read_getpc_sites(const char *prog, struct facts *f)
{
	int st;
	char *argv[] = {"objdump", "-d", "--no-show-raw-insn", (char *)prog, NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "objdump -d %s", prog);
	uint64_t pending = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		uint64_t at, target;
		char op[16];
		if (sscanf(l, " %" SCNx64 ": %15s", &at, op) != 2)
			continue;
		if (pending && at == pending && f->ngetpc < 16)
			f->getpc[f->ngetpc++] = at;
		pending = strcmp(op, "call") == 0 && sscanf(strstr(l, "call") + 4, " %" SCNx64, &target) == 1 ? target : 0;
	}
	free(text);
}

static void facts_read(const char *prog, const char *alt, struct facts *f)
{
	memset(f, 0, sizeof(*f));
	read_fdes(prog, f);
	symbol_range(prog, "__clone3", &f->clone_lo, &f->clone_hi); /* programs without threads have none */
	read_getpc_sites(prog, f);
	if (alt)
		ck_assert_msg(symbol_range(prog, alt, &f->alt_lo, &f->alt_hi), "%s: no %s", prog, alt);
}

/* --- perf script's text ------------------------------------------------------ */

struct snap {
	unsigned tid;
	size_t first, n;           /* frames: addr[first..first+n) */
	uint64_t ip, sp;           /* from the registers (the DWARF recording) */
};

struct snaps {
	struct snap *s;
	size_t n, cap;
	uint64_t *addr;
	char *unknown;             /* perf named the frame [unknown] */
	size_t na, capa;
};

static void add_frame(struct snaps *ss, uint64_t a, int unknown)
{
	if (ss->na == ss->capa) {
		ss->capa = ss->capa ? ss->capa * 2 : 65536;
		ss->addr = realloc(ss->addr, ss->capa * sizeof(*ss->addr));
		ss->unknown = realloc(ss->unknown, ss->capa);
		ck_assert(ss->addr && ss->unknown);
	}
	ss->addr[ss->na] = a;
	ss->unknown[ss->na++] = (char)unknown;
	ss->s[ss->n - 1].n++;
}

/* perf script -F tid,event,ip,sym[,uregs]: per sample " TID event:", one
 * "\tADDR SYM" line per frame, and with uregs a " ABI:2 ... SP:0x.. IP:0x.." line. */
static void perf_snaps(const char *data, int regs, struct snaps *ss)
{
	memset(ss, 0, sizeof(*ss));
	int st;
	char *argv[] = {"perf", "script", "--max-stack", "8192", "-i", (char *)data, "-F",
			regs ? "tid,event,ip,sym,uregs" : "tid,event,ip,sym", NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf script -i %s: exit %d", data, st);
	int in = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		const char *p;
		uint64_t a;
		if (l[0] == '\t' && in && sscanf(l, " %" SCNx64, &a) == 1) {
			add_frame(ss, a, strstr(l, "[unknown]") != NULL);
		} else if (in && regs && (p = strstr(l, " SP:0x")) && strstr(l, "ABI:")) {
			ss->s[ss->n - 1].sp = strtoull(p + 6, NULL, 16);
			p = strstr(l, " IP:0x");
			ck_assert_ptr_nonnull(p);
			ss->s[ss->n - 1].ip = strtoull(p + 6, NULL, 16);
		} else if (strstr(l, " pmusim_tstack:")) {
			if (ss->n == ss->cap) {
				ss->cap = ss->cap ? ss->cap * 2 : 1024;
				ss->s = realloc(ss->s, ss->cap * sizeof(*ss->s));
				ck_assert_ptr_nonnull(ss->s);
			}
			ss->s[ss->n++] = (struct snap){0, ss->na, 0, 0, 0};
			ck_assert_int_eq(sscanf(l, " %u", &ss->s[ss->n - 1].tid), 1);
			in = 1;
		} else if (l[0] != '\t') {
			in = 0; /* another event's sample */
		}
	}
	free(text);
}

static void snaps_free(struct snaps *ss)
{
	free(ss->s);
	free(ss->addr);
	free(ss->unknown);
}

/* --- the comparison ------------------------------------------------------------ */

enum exc { EXC_NO_CFI, EXC_ALT_STACK, EXC_CLONE_CHILD, EXC_GETPC_CALL, EXC_COUNT };
static const char *const exc_name[EXC_COUNT] = {"no_cfi", "alt_stack", "clone_child", "getpc_call"};

struct tally {
	long snapshots, frames, signal_frames, mismatches;
	long exc[EXC_COUNT], exc_frames[EXC_COUNT];
	char first[512];
};

/* One snapshot's frames: the unit's (u, nu) and perf's (d, nd). */
struct pair {
	const uint64_t *u, *d;
	const char *d_unknown;
	size_t nu, nd;
	uint64_t ip, sp, delta;    /* delta: perf's printed address + delta = the address */
};

/* Code address of perf's frame f (the IP's, a call's, or after a signal frame
 * where the interrupted code goes on), and whether frame f + 1 comes after a
 * signal frame. */
static uint64_t code_of(const struct pair *p, size_t f)
{
	return f == 0 ? p->ip : p->d[f] + p->delta;
}

static int after_signal(const struct pair *p, const struct facts *fa, size_t f)
{
	const struct fde *e = f == 0 ? NULL : fde_of(fa, code_of(p, f - 1));
	return e && e->signal;
}

/* Frames equal from 1 on, the unit's skipping its frame `skip` (0: none):
 * returns how many of perf's frames agree (nd when all do); counts the
 * frames compared and those after signal frames. */
static size_t agree(const struct pair *p, const struct facts *fa, size_t skip, long *frames, long *sig)
{
	size_t f = 1;
	for (; f < p->nd; f++) {
		size_t uf = skip && f >= skip ? f + 1 : f;
		if (uf >= p->nu)
			break;
		int exact = after_signal(p, fa, f);
		if (p->u[uf] != p->d[f] + (exact ? 0 : 1))
			break;
		*frames += 1;
		*sig += exact;
	}
	return f;
}

static void except(struct tally *t, enum exc k, long frames)
{
	t->exc[k]++;
	t->exc_frames[k] += frames;
}

static void compare_one(const struct pair *p, const struct facts *fa, struct tally *t, size_t i, unsigned tid)
{
	long frames = 0, sig = 0;
	size_t ok = agree(p, fa, 0, &frames, &sig);
	t->frames += frames;
	t->signal_frames += sig;
	if (ok == p->nd && p->nd == p->nu)
		return;
	size_t last = p->nd - 1;
	if (ok == p->nd && p->nd < p->nu) {
		/* perf stopped early: where, and why */
		if (!fde_of(fa, code_of(p, last)))
			return except(t, EXC_NO_CFI, (long)(p->nu - p->nd));
		if (after_signal(p, fa, last) && p->sp >= fa->alt_lo && p->sp < fa->alt_hi)
			return except(t, EXC_ALT_STACK, (long)(p->nu - p->nd));
	}
	if (p->nu == 1 && p->nd == 2 && p->ip >= fa->clone_lo && p->ip < fa->clone_hi && p->d_unknown[1])
		return except(t, EXC_CLONE_CHILD, 0);
	if (p->nu == p->nd + 1 && p->nu > 1 && p->u[1] == p->u[0]) {
		int site = 0;
		for (size_t k = 0; k < fa->ngetpc; k++)
			site |= fa->getpc[k] == p->ip;
		long f2 = 0, s2 = 0;
		if (site && agree(p, fa, 1, &f2, &s2) == p->nd) {
			t->frames += f2 - frames;
			t->signal_frames += s2 - sig;
			return except(t, EXC_GETPC_CALL, 1);
		}
	}
	t->mismatches++;
	if (!t->first[0]) {
		int n = snprintf(t->first, sizeof(t->first), "snapshot %zu (thread %u), frame %zu: unit", i, tid, ok);
		for (size_t k = 0; k < p->nu && k < 8 && n < 400; k++)
			n += snprintf(t->first + n, sizeof(t->first) - (size_t)n, " %" PRIx64, p->u[k]);
		n += snprintf(t->first + n, sizeof(t->first) - (size_t)n, "; perf");
		for (size_t k = 0; k < p->nd && k < 8 && n < 480; k++)
			n += snprintf(t->first + n, sizeof(t->first) - (size_t)n, " %" PRIx64, p->d[k]);
	}
}

static void compare(const struct snaps *unit, const struct snaps *dw, const struct facts *fa, struct tally *t)
{
	memset(t, 0, sizeof(*t));
	ck_assert_msg(unit->n == dw->n, "%zu snapshots with the unit, %zu with stack dumps", unit->n, dw->n);
	t->snapshots = (long)unit->n;
	for (size_t i = 0; i < unit->n; i++) {
		const struct snap *a = &unit->s[i], *b = &dw->s[i];
		ck_assert_msg(a->tid == b->tid, "snapshot %zu: thread %u and %u", i, a->tid, b->tid);
		ck_assert_msg(a->n >= 1 && b->n >= 1 && b->ip, "snapshot %zu: no IP", i);
		struct pair p = {unit->addr + a->first, dw->addr + b->first, dw->unknown + b->first, a->n, b->n,
				 b->ip, b->sp, 0};
		p.delta = b->ip - p.d[0];
		if (p.u[0] != p.d[0]) {
			t->mismatches++;
			if (!t->first[0])
				snprintf(t->first, sizeof(t->first), "snapshot %zu: IP %" PRIx64 " and %" PRIx64, i, p.u[0],
					 p.d[0]);
			continue;
		}
		compare_one(&p, fa, t, i, a->tid);
	}
}

/* --- the cases ------------------------------------------------------------------ */

/* pmusim record --tstack [--tstack-dwarf DUMP] OPTS -- PROG; the exit status. */
static int record(const char *data, const char *prog, const char *const *opts, const char *mark, const char *dump)
{
	char *argv[40] = {(char *)pmusim(), "record", "--tstack", "--clear-env", "-o", (char *)data};
	int k = 6;
	if (dump) {
		argv[k++] = "--tstack-dwarf";
		argv[k++] = (char *)dump;
	}
	if (mark) {
		argv[k++] = "--tstack-mark";
		argv[k++] = (char *)mark;
	}
	for (int i = 0; opts[i]; i++)
		argv[k++] = (char *)opts[i];
	argv[k++] = "--";
	argv[k++] = (char *)prog;
	argv[k] = NULL;
	return run_cmd(argv, NULL, NULL, tmp_path("record.err"));
}

struct ref_case {
	int line;
	const char *wl;
	const char *dump;          /* stack bytes per snapshot: enough for the deepest stack */
	const char *opts[10];
	const char *getpc_in;      /* --tstack-mark return:ADDR at the get-PC pop in this function */
	const char *alt_stack;     /* the program's alternate signal stack (a symbol) */
	int status;                /* the program's exit status */
	long min_snapshots, min_signal_frames;
};

static const struct ref_case cases[] = {
	/* four threads, 2,000-deep recursion, tail calls, longjmp, callbacks */
	{__LINE__, "callstacks", "64992", {"--tstack-period", "5us", "--tstack-threads", "all", 0}, NULL, NULL, 0, 400,
	 0},
	{__LINE__, "callstacks", "64992", {"--tstack-period", "3us", "--quantum", "997", "--tstack-threads", "all", 0},
	 NULL, NULL, 0, 800, 0},
	{__LINE__, "callstacks", "64992", {"--tstack-period", "5us", "--tstack-mode", "history", "--tstack-area", "4",
					   "--tstack-threads", "all", 0}, NULL, NULL, 0, 400, 0},
	{__LINE__, "recursion", "16384", {"--tstack-period", "2us", 0}, NULL, NULL, 0, 100, 0},
	/* producers and consumers: mutexes, condition variables, a barrier, joins */
	{__LINE__, "threads", "16384", {"--tstack-period", "10us", "--tstack-threads", "all", 0}, NULL, NULL, 0, 1000, 0},
	/* handlers of raise/kill, SIGSEGV on an alternate stack left by siglongjmp,
	 * SIGFPE, a SIGILL handler moving the saved RIP, timers; the last
	 * snapshots before death by SIGTERM */
	{__LINE__, "signals", "16384", {"--tstack-period", "1us", 0}, NULL, "altstack", 128 + 15, 2000, 3},
	/* a timer's handler, nested signals, siglongjmp out of an alternate stack,
	 * a handler working after it moved the saved RIP */
	{__LINE__, "sigstacks", "16384", {"--tstack-period", "2us", 0}, NULL, "altstack", 0, 300, 200},
	{__LINE__, "sigstacks", "16384", {"--tstack-period", "1us", "--tstack-mode", "history", 0}, NULL, "altstack", 0,
	 600, 400},
	/* "call 1f; 1: pop" with the pop marked as a return */
	{__LINE__, "getpc", "16384", {"--tstack-period", "350ns", 0}, "locate", NULL, 0, 2000, 0},
};

/* Records the case both ways and compares; *out gets the counts. */
static void run_case(const struct ref_case *c, int marked, struct tally *out)
{
	const char *prog = wl(c->wl);
	char hw[512], dw[512], mark[64] = "";
	snprintf(hw, sizeof(hw), "%s", tmp_path("unit.data"));
	snprintf(dw, sizeof(dw), "%s", tmp_path("dwarf.data"));
	struct facts fa;
	facts_read(prog, c->alt_stack, &fa);
	uint64_t lo, hi;
	if (c->getpc_in) {
		ck_assert_msg(symbol_range(prog, c->getpc_in, &lo, &hi), "line %d: no %s", c->line, c->getpc_in);
		for (size_t k = 0; k < fa.ngetpc; k++)
			if (fa.getpc[k] >= lo && fa.getpc[k] < hi)
				snprintf(mark, sizeof(mark), "return:%#" PRIx64, fa.getpc[k]);
		ck_assert_msg(mark[0], "line %d: no get-PC call in %s", c->line, c->getpc_in);
	}
	const char *m = marked && mark[0] ? mark : NULL;
	ck_assert_msg(record(hw, prog, c->opts, m, NULL) == c->status, "line %d: record failed", c->line);
	ck_assert_msg(record(dw, prog, c->opts, m, c->dump) == c->status, "line %d: record --tstack-dwarf failed",
		      c->line);
	struct snaps a, b;
	perf_snaps(hw, 0, &a);
	perf_snaps(dw, 1, &b);
	compare(&a, &b, &fa, out);
	snaps_free(&a);
	snaps_free(&b);
	free(fa.fde);
}

static void print_tally(const struct ref_case *c, const struct tally *t, const char *what)
{
	printf("check_tstack_dwarf: line %d, %s%s: %ld snapshots, %ld frames compared (%ld after signal frames), "
	       "%ld mismatches; exceptions:", c->line, c->wl, what, t->snapshots, t->frames, t->signal_frames,
	       t->mismatches);
	for (int k = 0; k < EXC_COUNT; k++)
		printf(" %s %ld (%ld frames)", exc_name[k], t->exc[k], t->exc_frames[k]);
	printf("\n");
}

START_TEST(unit_equals_perf_dwarf_unwinding)
{
	const struct ref_case *c = &cases[_i];
	struct tally t;
	run_case(c, 1, &t);
	print_tally(c, &t, "");
	ck_assert_msg(t.mismatches == 0, "line %d (%s): %ld of %ld snapshots differ; first: %s", c->line, c->wl,
		      t.mismatches, t.snapshots, t.first);
	ck_assert_msg(t.snapshots >= c->min_snapshots, "line %d: %ld snapshots", c->line, t.snapshots);
	ck_assert_msg(t.signal_frames >= c->min_signal_frames, "line %d: %ld frames after signal frames", c->line,
		      t.signal_frames);
}
END_TEST

/* The comparison can fail: without its marker the get-PC call's frame stays
 * under every later call, and perf's unwinding says otherwise. */
START_TEST(unmarked_getpc_differs)
{
	const struct ref_case *c = &cases[sizeof(cases) / sizeof(cases[0]) - 1];
	ck_assert(c->getpc_in);
	struct tally t;
	run_case(c, 0, &t);
	print_tally(c, &t, " without its marker");
	ck_assert_msg(t.mismatches * 2 > t.snapshots, "%ld of %ld snapshots differ", t.mismatches, t.snapshots);
}
END_TEST

/* One hand-made snapshot (perf's addresses are the real ones: delta 0). */
static struct tally one(const struct facts *fa, const uint64_t *u, size_t nu, const uint64_t *d, size_t nd,
			int last_unknown, uint64_t sp)
{
	char unknown[8] = {0};
	unknown[nd - 1] = (char)last_unknown;
	struct pair p = {u, d, unknown, nu, nd, d[0], sp, 0};
	struct tally t;
	memset(&t, 0, sizeof(t));
	compare_one(&p, fa, &t, 0, 1);
	return t;
}

/* An FDE of fa: the first with signal == sig. */
static const struct fde *an_fde(const struct facts *fa, int sig)
{
	for (size_t i = 0; i < fa->nfde; i++)
		if (fa->fde[i].signal == sig && fa->fde[i].hi - fa->fde[i].lo > 4)
			return &fa->fde[i];
	ck_abort_msg("no %s FDE", sig ? "signal" : "plain");
	return NULL;
}

/* The comparison's rules and exceptions on hand-made snapshots over the
 * programs' own facts: each exception is taken only where its conditions
 * hold, and anything else is a mismatch. */
START_TEST(exceptions_need_their_conditions)
{
	struct facts sg, cs, gp;
	facts_read(wl("sigstacks"), "altstack", &sg);
	facts_read(wl("callstacks"), NULL, &cs);
	facts_read(wl("getpc"), NULL, &gp);
	uint64_t code = an_fde(&sg, 0)->lo + 1, rt = an_fde(&sg, 1)->lo + 1; /* a return address; the restorer */
	uint64_t ip = code + 2, gap = sg.fde[0].lo - 1, alt = sg.alt_lo + 64, iip = code + 1;
	ck_assert_ptr_null(fde_of(&sg, gap));
	/* a signal frame: perf prints the restorer minus one, then the interrupted IP as it is */
	const uint64_t u1[] = {ip, code, rt, iip, code}, d1[] = {ip, code - 1, rt - 1, iip, code - 1};
	struct tally t = one(&sg, u1, 5, d1, 5, 0, 0);
	ck_assert(t.mismatches == 0 && t.frames == 4 && t.signal_frames == 1);
	const uint64_t d1b[] = {ip, code - 1, rt - 1, iip - 1, code - 1};
	ck_assert_int_eq(one(&sg, u1, 5, d1b, 5, 0, 0).mismatches, 1);
	/* perf stops in code without CFI; not where CFI covers the code */
	const uint64_t u2[] = {gap, code}, d2[] = {gap}, u2b[] = {ip, code}, d2b[] = {ip};
	ck_assert_int_eq(one(&sg, u2, 2, d2, 1, 0, 0).exc[EXC_NO_CFI], 1);
	ck_assert_int_eq(one(&sg, u2b, 2, d2b, 1, 0, 0).mismatches, 1);
	/* perf stops at the interrupted IP of a handler on the alternate stack; not
	 * on the thread's stack, nor anywhere but after a signal frame */
	const uint64_t u3[] = {ip, code, rt, iip, code};
	ck_assert_int_eq(one(&sg, u3, 5, d1, 4, 0, alt).exc[EXC_ALT_STACK], 1);
	ck_assert_int_eq(one(&sg, u3, 5, d1, 4, 0, alt).exc_frames[EXC_ALT_STACK], 1);
	ck_assert_int_eq(one(&sg, u3, 5, d1, 4, 0, sg.alt_hi).mismatches, 1);
	ck_assert_int_eq(one(&sg, u3, 5, d1, 2, 0, alt).mismatches, 1);
	/* a thread at its first instruction in __clone3: perf's one extra frame is no code */
	const uint64_t u4[] = {cs.clone_lo + 9}, d4[] = {cs.clone_lo + 9, 0x4c42ef};
	ck_assert_int_eq(one(&cs, u4, 1, d4, 2, 1, 0).exc[EXC_CLONE_CHILD], 1);
	ck_assert_int_eq(one(&cs, u4, 1, d4, 2, 0, 0).mismatches, 1);
	const uint64_t u4b[] = {cs.clone_hi + 9}, d4b[] = {cs.clone_hi + 9, 0x4c42ef};
	ck_assert_int_eq(one(&cs, u4b, 1, d4b, 2, 1, 0).mismatches, 1);
	/* between a get-PC call and its pop; nowhere else */
	ck_assert_uint_ge(gp.ngetpc, 1);
	uint64_t site = gp.getpc[0], gcode = an_fde(&gp, 0)->lo + 1;
	const uint64_t u5[] = {site, site, gcode}, d5[] = {site, gcode - 1};
	t = one(&gp, u5, 3, d5, 2, 0, 0);
	ck_assert(t.exc[EXC_GETPC_CALL] == 1 && t.frames == 1);
	const uint64_t u5b[] = {site + 1, site + 1, gcode}, d5b[] = {site + 1, gcode - 1};
	ck_assert_int_eq(one(&gp, u5b, 3, d5b, 2, 0, 0).mismatches, 1);
	const uint64_t u5c[] = {site, site, gcode + 1};
	ck_assert_int_eq(one(&gp, u5c, 3, d5, 2, 0, 0).mismatches, 1);
	free(sg.fde);
	free(cs.fde);
	free(gp.fde);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("tstack_dwarf");
	TCase *tc = tcase_create("tstack_dwarf");
	tcase_set_timeout(tc, 600);
	tcase_add_loop_test(tc, unit_equals_perf_dwarf_unwinding, 0, (int)(sizeof(cases) / sizeof(cases[0])));
	tcase_add_test(tc, unmarked_getpc_differs);
	tcase_add_test(tc, exceptions_need_their_conditions);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
