/* pmusim's exact truth against the real CPU. Each workload runs twice with the same
 * arguments and environment: natively under tests/ref/ptrace_edges (an INT3 on every
 * branch of the workload's own functions, as objdump lists them, each hit
 * single-stepped on the host CPU; it shares no code with pmusim) and under
 * `pmusim run --truth-json`. Within the functions of the workload's object file
 * (libc's code paths differ natively: IFUNCs pick AVX variants on the host), every
 * branch pmusim reports must be a branch of objdump's listing, of the same kind, and
 * every (from, to) edge must carry the same count on both sides: conditional taken and
 * not-taken counts, direct and indirect jumps, calls and returns with each target.
 *
 * Workloads left out, each for a reason of its own: threads (its waits depend on the
 * schedule: 17 mismatches in one run, all in the queue's wait loops), signals (an
 * interval timer interrupts a loop: natively 231 iterations under ptrace, 1,666,663
 * simulated), seeded and cpu_probe (time, randomness and CPUID differ natively),
 * syscalls (a branch on two clock readings), jit and jit_loop (calls into memory whose
 * address mmap picks), pie_hello (the tool wants the file's addresses), spawn (starts a
 * process: the tool refuses), deadlock (hangs natively), probe_areas (reads an address
 * given on its command line), retpoline (6.3 million branch executions: five minutes
 * at two ptrace stops each). */
#include <check.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

static const struct row {
	const char *name;
	const char *args[3];
	int line;
} rows[] = {
    {"asm_branches", {NULL}, __LINE__}, /* loop, jrcxz, jz to its own fall-through */
    {"loops", {NULL}, __LINE__},
    {"switch", {NULL}, __LINE__},   /* a jump table */
    {"indirect", {NULL}, __LINE__}, /* calls through a table, a tail call */
    {"recursion", {NULL}, __LINE__},
    {"callstacks", {NULL}, __LINE__}, /* four threads, longjmp, mutual recursion */
    {"strings", {NULL}, __LINE__},    /* REP string instructions inline: not branches */
    {"rep", {NULL}, __LINE__},
    {"musl_hello", {NULL}, __LINE__}, /* another libc */
    {"args_env", {"one", "two words"}, __LINE__},
    {"exit_code", {NULL}, __LINE__},
    {"asm_tb_split", {NULL}, __LINE__}, /* a loop across a page boundary */
    {"cpu_state", {NULL}, __LINE__},    /* SIGFPE to a handler */
    {"reserve", {NULL}, __LINE__},      /* SIGSEGV to a handler that siglongjmps */
    {"fault_segv", {NULL}, __LINE__},   /* dies of SIGSEGV */
    {"abort", {NULL}, __LINE__},        /* dies of SIGABRT */
};

static char tool[4096]; /* $PTRACE_EDGES, else ptrace_edges beside this suite */

struct edge {
	uint64_t from, to, count;
};

struct site {
	uint64_t addr, next, target, executions;
	char kind[16];
};

struct cond {
	uint64_t addr, taken, not_taken;
};

/* ptrace_edges' report (its format: tests/ref/ptrace_edges.c). */
struct native {
	uint64_t (*funcs)[2];
	struct site *sites;
	struct edge *edges;
	struct cond *conds;
	size_t nfuncs, nsites, nedges, nconds;
	int exit_status;
};

#define PUSH(v, n, x)                                                                              \
	do {                                                                                       \
		(v) = realloc((v), ((n) + 1) * sizeof(*(v)));                                      \
		ck_assert_ptr_nonnull(v);                                                          \
		(v)[(n)++] = (x);                                                                  \
	} while (0)

static void native_read(const char *path, struct native *nat)
{
	memset(nat, 0, sizeof(*nat));
	nat->exit_status = -1;
	FILE *f = fopen(path, "r");
	ck_assert_msg(f, "no report from ptrace_edges at %s", path);
	char line[1024], kind[16], target[32];
	uint64_t a, b, c;
	while (fgets(line, sizeof(line), f)) {
		struct site s = {0};
		if (sscanf(line, "func %*s %" SCNx64 " %" SCNx64, &a, &b) == 2) {
			uint64_t r[2] = {a, b};
			nat->funcs = realloc(nat->funcs, (nat->nfuncs + 1) * sizeof(*nat->funcs));
			memcpy(nat->funcs[nat->nfuncs++], r, sizeof(r));
		} else if (sscanf(line, "site %" SCNx64 " %15s %" SCNx64 " %31s %" SCNu64, &s.addr,
		                  kind, &s.next, target, &s.executions) == 5) {
			snprintf(s.kind, sizeof(s.kind), "%s", kind);
			s.target = strcmp(target, "-") ? strtoull(target, NULL, 16) : 0;
			PUSH(nat->sites, nat->nsites, s);
		} else if (sscanf(line, "edge %" SCNx64 " %" SCNx64 " %" SCNu64, &a, &b, &c) == 3) {
			PUSH(nat->edges, nat->nedges, ((struct edge){a, b, c}));
		} else if (sscanf(line, "cond %" SCNx64 " %" SCNu64 " %" SCNu64, &a, &b, &c) == 3) {
			PUSH(nat->conds, nat->nconds, ((struct cond){a, b, c}));
		} else {
			ck_assert_msg(sscanf(line, "exit %d", &nat->exit_status) == 1,
			              "ptrace_edges report: unknown line %s", line);
		}
	}
	fclose(f);
}

static void native_free(struct native *nat)
{
	free(nat->funcs);
	free(nat->sites);
	free(nat->edges);
	free(nat->conds);
}

static int own(const struct native *nat, uint64_t addr)
{
	for (size_t i = 0; i < nat->nfuncs; i++)
		if (addr >= nat->funcs[i][0] && addr < nat->funcs[i][1])
			return 1;
	return 0;
}

static const struct site *site_at(const struct native *nat, uint64_t addr)
{
	for (size_t i = 0; i < nat->nsites; i++)
		if (nat->sites[i].addr == addr)
			return &nat->sites[i];
	return NULL;
}

static const struct cond *cond_at(const struct native *nat, uint64_t addr)
{
	for (size_t i = 0; i < nat->nconds; i++)
		if (nat->conds[i].addr == addr)
			return &nat->conds[i];
	return NULL;
}

/* Mismatches, each named on stderr (the first 30). */
struct tally {
	const char *wl;
	size_t n;
};

static void mismatch(struct tally *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void mismatch(struct tally *t, const char *fmt, ...)
{
	if (t->n++ < 30) {
		va_list ap;
		va_start(ap, fmt);
		fprintf(stderr, "native_ref %s: ", t->wl);
		vfprintf(stderr, fmt, ap);
		fputc('\n', stderr);
		va_end(ap);
	}
}

static int cmp_edge(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	if (x->from != y->from)
		return x->from < y->from ? -1 : 1;
	return x->to < y->to ? -1 : x->to > y->to;
}

/* Sorts and sums duplicates (a conditional branch to its own fall-through gives two). */
static size_t edges_normalise(struct edge *e, size_t n)
{
	qsort(e, n, sizeof(*e), cmp_edge);
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (k && cmp_edge(&e[k - 1], &e[i]) == 0)
			e[k - 1].count += e[i].count;
		else
			e[k++] = e[i];
	}
	return k;
}

/* One truth record inside the own functions: a known site of the same kind and, for
 * the direct ones, the same target and fall-through; its taken edges go to *pe. */
static void check_record(const struct native *nat, const struct truth_rec *r, struct edge **pe,
                         size_t *npe, struct tally *t)
{
	const struct site *s = site_at(nat, r->from);
	if (!s) {
		mismatch(t, "pmusim has a %s at %#" PRIx64 ", objdump lists no branch there",
		         r->kind, r->from);
		return;
	}
	if (strcmp(s->kind, r->kind) != 0)
		mismatch(t, "%#" PRIx64 ": pmusim's kind %s, objdump's %s", r->from, r->kind,
		         s->kind);
	int branch_rec = !strcmp(r->kind, "cond") || !strcmp(r->kind, "jmp");
	if (branch_rec && (r->to != s->target || r->fallthrough != s->next))
		mismatch(t,
		         "%#" PRIx64 ": pmusim's target %#" PRIx64 " fall-through %#" PRIx64
		         ", objdump's %#" PRIx64 " %#" PRIx64,
		         r->from, r->to, r->fallthrough, s->target, s->next);
	if (r->taken)
		PUSH(*pe, *npe, ((struct edge){r->from, r->to, r->taken}));
	if (r->not_taken)
		PUSH(*pe, *npe, ((struct edge){r->from, r->fallthrough, r->not_taken}));
	if (strcmp(r->kind, "cond") != 0)
		return;
	const struct cond *c = cond_at(nat, r->from);
	uint64_t tk = c ? c->taken : 0, nt = c ? c->not_taken : 0;
	if (tk != r->taken || nt != r->not_taken)
		mismatch(t,
		         "cond %#" PRIx64 ": pmusim taken %" PRIu64 " not taken %" PRIu64
		         ", native %" PRIu64 " %" PRIu64,
		         r->from, r->taken, r->not_taken, tk, nt);
}

/* Every edge on both sides, count for count. */
static void compare_edges(struct edge *p, size_t np, struct edge *n, size_t nn, struct tally *t)
{
	np = edges_normalise(p, np);
	nn = edges_normalise(n, nn);
	size_t i = 0, j = 0;
	while (i < np || j < nn) {
		int c = i == np ? 1 : j == nn ? -1 : cmp_edge(&p[i], &n[j]);
		if (c < 0) {
			mismatch(
			    t, "edge %#" PRIx64 " -> %#" PRIx64 ": pmusim %" PRIu64 ", native none",
			    p[i].from, p[i].to, p[i].count);
			i++;
		} else if (c > 0) {
			mismatch(
			    t, "edge %#" PRIx64 " -> %#" PRIx64 ": native %" PRIu64 ", pmusim none",
			    n[j].from, n[j].to, n[j].count);
			j++;
		} else {
			if (p[i].count != n[j].count)
				mismatch(t,
				         "edge %#" PRIx64 " -> %#" PRIx64 ": pmusim %" PRIu64
				         ", native %" PRIu64,
				         p[i].from, p[i].to, p[i].count, n[j].count);
			i++, j++;
		}
	}
}

/* Runs the row's program and arguments after a prefix; its standard output and error
 * (files named tag.out and tag.err) in *out and *err. Returns the exit status. */
static int run_with(const char *const *prefix, size_t np, const struct row *r, const char *tag,
                    char **out, char **err)
{
	const char *argv[16];
	size_t k = 0;
	for (size_t i = 0; i < np; i++)
		argv[k++] = prefix[i];
	argv[k++] = wl(r->name);
	for (size_t i = 0; i < 3 && r->args[i]; i++)
		argv[k++] = r->args[i];
	argv[k] = NULL;
	char o[64], e[64];
	snprintf(o, sizeof(o), "%s.out", tag);
	snprintf(e, sizeof(e), "%s.err", tag);
	char *op = strdup(tmp_path(o)), *ep = strdup(tmp_path(e));
	int st = run_cmd((char *const *)argv, NULL, op, ep);
	*out = slurp(op, NULL);
	*err = slurp(ep, NULL);
	ck_assert_msg(*out && *err, "row %d: cannot read %s or %s", r->line, op, ep);
	free(op);
	free(ep);
	return st;
}

START_TEST(truth_equals_native)
{
	const struct row *r = &rows[e2e_row(_i)];
	char obj[256];
	snprintf(obj, sizeof(obj), "%s.o", r->name);
	const char *rep = tmp_path("native.txt"), *json = tmp_path("truth.json");
	const char *nat_pre[] = {tool, "-o", rep, wl(obj), "--"};
	const char *sim_pre[] = {pmusim(), "run", "--truth-json", json, "--"};
	char *nout, *nerr, *pout, *perr;
	int ns = run_with(nat_pre, 5, r, "native", &nout, &nerr);
	int ps = run_with(sim_pre, 5, r, "pmusim", &pout, &perr);
	ck_assert_msg(ns != 125, "row %d: ptrace_edges failed on %s: %s", r->line, r->name, nerr);
	ck_assert_msg(ns == ps, "row %d: %s exit status native %d, pmusim %d", r->line, r->name, ns,
	              ps);
	ck_assert_msg(strcmp(nout, pout) == 0,
	              "row %d: %s output differs: native \"%.200s\", "
	              "pmusim \"%.200s\"",
	              r->line, r->name, nout, pout);
	struct native nat;
	native_read(rep, &nat);
	ck_assert_int_eq(nat.exit_status, ns);
	struct truth_rec *tr;
	size_t ntr;
	ck_assert_int_eq(truth_records(json, &tr, &ntr), 0);
	struct tally t = {r->name, 0};
	struct edge *pe = NULL;
	size_t npe = 0, executed = 0;
	uint64_t runs = 0;
	for (size_t i = 0; i < ntr; i++)
		if (own(&nat, tr[i].from))
			check_record(&nat, &tr[i], &pe, &npe, &t);
	for (size_t i = 0; i < nat.nsites; i++) {
		executed += nat.sites[i].executions > 0;
		runs += nat.sites[i].executions;
	}
	size_t nedges = nat.nedges;
	compare_edges(pe, npe, nat.edges, nat.nedges, &t);
	printf("native_ref %s: %zu functions, %zu branch sites (%zu executed), %zu edges, "
	       "%" PRIu64 " branch executions, %zu mismatches\n",
	       r->name, nat.nfuncs, nat.nsites, executed, nedges, runs, t.n);
	fflush(stdout);
	ck_assert_msg(executed > 0, "row %d: no branch of %s ran", r->line, r->name);
	ck_assert_msg(t.n == 0, "row %d: %s: %zu mismatches (stderr names them)", r->line, r->name,
	              t.n);
	free(pe);
	free(tr);
	native_free(&nat);
	free(nout);
	free(nerr);
	free(pout);
	free(perr);
}
END_TEST

int main(void)
{
	ref_tool_path(tool, sizeof(tool), "PTRACE_EDGES", "ptrace_edges");
	e2e_init();
	Suite *s = suite_create("native_ref");
	TCase *tc = tcase_create("core");
	/* about 50 us per branch execution natively: loops (800,000) takes 40 s */
	tcase_set_timeout(tc, 600);
	/* ASan: every 4th row, the code paths; the figures are the release run's */
	tcase_add_loop_test(tc, truth_equals_native, 0, e2e_rows((int)(sizeof(rows) / sizeof(rows[0]))));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
