/* tests/e2e/lackey_ref (valgrind lackey as the op-sampling reference) against the CPU
 * itself, on workloads/ibs_ops. The CPU's side is a single-stepper written here
 * (PTRACE_SINGLESTEP from the exec to the exit: the registers before every
 * instruction); instruction lengths come from objdump, symbol addresses from nm.
 *   every ip:      lackey's dynamic instruction sequence equals the CPU's, instruction
 *                  for instruction (205,056 of them), with next_ip, and each length
 *                  equals objdump's; the loop and parity branches' taken counts read
 *                  from next_ip != ip + size equal the workload's facts.
 *   addresses:     for hand-picked instructions (memory-indirect call and jump through
 *                  their tables, stores and loads of 1 to 16 bytes to globals, the
 *                  read-modify-write, push, a pop whose value is never used, the
 *                  pointer chase, locals), the accesses
 *                  lackey reports equal, in type, size, order and address, the
 *                  effective addresses worked out by hand from the CPU's registers
 *                  before the instruction; stack addresses as offsets from each run's
 *                  initial RSP (the program's first line of output).
 *   counts:        lackey's instruction count equals the CPU's, and the workload's
 *                  formula. (perf stat -e instructions:u would be a second reference;
 *                  this VM has no hardware counters: "<not supported>".)
 *   outputs:       ibs_ops prints the same natively, under valgrind and under pmusim
 *                  but its first line, and refuses a bad N with one line, status 2.
 *   harness:       bad wanted numbers, a missing program, a failing program and a
 *                  visitor that stops early. */
#include <check.h>
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/lackey_ref.h"
#include "tests/unit/run_suite.h"

/* ---- the CPU: a single-stepper ---- */

typedef void (*step_fn)(uint64_t n, const struct user_regs_struct *regs, void *ctx);

/* Runs argv under PTRACE_SINGLESTEP with stdout to out, calling fn with the registers
 * before each instruction (numbered from 1). Returns the exit status, *steps the
 * instructions retired, *rsp0 the RSP at the first instruction; -1 on a stop that is
 * not a single step's. */
static int cpu_walk(char *const argv[], const char *out, step_fn fn, void *ctx, uint64_t *steps,
                    uint64_t *rsp0)
{
	pid_t pid = fork();
	ck_assert_int_ge(pid, 0);
	if (pid == 0) {
		if (!freopen("/dev/null", "r", stdin) || !freopen(out, "w", stdout) ||
		    ptrace(PTRACE_TRACEME, 0, NULL, NULL) < 0)
			_exit(126);
		execv(argv[0], argv);
		_exit(127);
	}
	int st;
	uint64_t n = 0;
	ck_assert_int_eq(waitpid(pid, &st, 0), pid);
	ck_assert_msg(WIFSTOPPED(st) && WSTOPSIG(st) == SIGTRAP, "%s: no stop at its exec",
	              argv[0]);
	for (;;) {
		struct user_regs_struct r;
		ck_assert_int_eq(ptrace(PTRACE_GETREGS, pid, NULL, &r), 0);
		if (n == 0)
			*rsp0 = r.rsp;
		n++;
		if (fn)
			fn(n, &r, ctx);
		ck_assert_int_eq(ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL), 0);
		ck_assert_int_eq(waitpid(pid, &st, 0), pid);
		if (WIFEXITED(st)) {
			*steps = n;
			return WEXITSTATUS(st);
		}
		if (!WIFSTOPPED(st) || WSTOPSIG(st) != SIGTRAP) {
			kill(pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
	}
}

static void keep_ip(uint64_t n, const struct user_regs_struct *r, void *ctx)
{
	uint64_t **ips = ctx;
	if ((n & (n - 1)) == 0) /* a power of two: grow */
		ck_assert_ptr_nonnull(*ips = realloc(*ips, 2 * n * sizeof(**ips)));
	(*ips)[n - 1] = r->rip;
}

/* ---- facts from binutils ---- */

/* The address of symbol name in prog (nm), or 0. */
static uint64_t sym(const char *prog, const char *name)
{
	static char *text, *text_of;
	if (!text_of || strcmp(text_of, prog)) {
		char *argv[] = {"nm", "--defined-only", (char *)prog, NULL};
		int st;
		free(text), free(text_of);
		text = run_capture(argv, &st);
		text_of = strdup(prog);
		ck_assert_msg(st == 0 && text, "nm %s failed", prog);
	}
	char type, s[128];
	uint64_t a;
	int used;
	for (const char *p = text; sscanf(p, "%" SCNx64 " %c %127s%n", &a, &type, s, &used) == 3;
	     p += used)
		if (strcmp(s, name) == 0)
			return a;
	return 0;
}

/* The address of "symbol" or "symbol+offset" (decimal), or 0. */
static uint64_t label_addr(const char *prog, const char *label)
{
	char name[128];
	const char *plus = strchr(label, '+');
	snprintf(name, sizeof(name), "%.*s", plus ? (int)(plus - label) : (int)strlen(label), label);
	uint64_t a = sym(prog, name);
	return a && plus ? a + strtoull(plus + 1, NULL, 10) : a;
}

struct insn_len {
	uint64_t addr;
	unsigned len;
};

static int cmp_len(const void *a, const void *b)
{
	uint64_t x = ((const struct insn_len *)a)->addr, y = ((const struct insn_len *)b)->addr;
	return x < y ? -1 : x > y;
}

/* Every instruction objdump -d lists in prog, with its length (its bytes, one line each
 * with --insn-width=16), sorted by address. */
static struct insn_len *objdump_lengths(const char *prog, size_t *n)
{
	char *argv[] = {"objdump", "-d", "--insn-width=16", (char *)prog, NULL};
	int st;
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "objdump -d %s failed", prog);
	struct insn_len *v = NULL;
	*n = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		uint64_t a;
		int used;
		if (sscanf(line, " %" SCNx64 ":\t%n", &a, &used) != 1 || !strchr(line, '\t'))
			continue;
		unsigned len = 0;
		for (char *p = line + used; isxdigit(p[0]) && isxdigit(p[1]) && p[2] == ' '; p += 3)
			len++;
		if (len) {
			ck_assert_ptr_nonnull(v = realloc(v, (*n + 1) * sizeof(*v)));
			v[(*n)++] = (struct insn_len){a, len};
		}
	}
	free(text);
	qsort(v, *n, sizeof(*v), cmp_len);
	return v;
}

static unsigned length_at(const struct insn_len *v, size_t n, uint64_t addr)
{
	struct insn_len key = {addr, 0};
	const struct insn_len *f = bsearch(&key, v, n, sizeof(*v), cmp_len);
	return f ? f->len : 0;
}

/* Line `which` (1-based) of a file, without its newline, in buf. */
static void line_of(const char *path, int which, char *buf, size_t len)
{
	char *text = slurp(path, NULL);
	ck_assert_msg(text, "cannot read %s", path);
	const char *p = text;
	for (int i = 1; i < which && p; i++)
		p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL;
	snprintf(buf, len, "%.*s", p ? (int)strcspn(p, "\n") : 0, p ? p : "");
	free(text);
}

static uint64_t initial_rsp(const char *out)
{
	char l[64], *end;
	line_of(out, 1, l, sizeof(l));
	ck_assert_msg(strlen(l) == 16, "%s: first line \"%s\" is not 16 hex digits", out, l);
	uint64_t v = strtoull(l, &end, 16);
	ck_assert_msg(*end == 0, "%s: first line \"%s\" is not 16 hex digits", out, l);
	return v;
}

static double now(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

/* ---- every ip ---- */

struct seq_check {
	const uint64_t *cpu;
	uint64_t ncpu;
	const struct insn_len *lens;
	size_t nlens;
	uint64_t loop_branch, parity_branch;
	uint64_t loop_taken, loop_not, parity_taken, parity_not;
	uint64_t mismatches;
};

static void seq_mismatch(struct seq_check *c, const struct lackey_insn *i, const char *what,
                         uint64_t lackey, uint64_t cpu)
{
	if (c->mismatches++ < 10)
		fprintf(stderr,
		        "lackey_ref: instruction %" PRIu64 " (ip %#" PRIx64 "): %s lackey %#" PRIx64
		        ", reference %#" PRIx64 "\n",
		        i->n, i->ip, what, lackey, cpu);
}

static int seq_visit(const struct lackey_insn *i, void *ctx)
{
	struct seq_check *c = ctx;
	uint64_t cpu = i->n <= c->ncpu ? c->cpu[i->n - 1] : 0;
	uint64_t next = i->n < c->ncpu ? c->cpu[i->n] : 0;
	if (i->ip != cpu)
		seq_mismatch(c, i, "ip", i->ip, cpu);
	if (i->next_ip != next)
		seq_mismatch(c, i, "next ip", i->next_ip, next);
	unsigned len = length_at(c->lens, c->nlens, i->ip);
	if (i->size != len)
		seq_mismatch(c, i, "length (objdump's)", i->size, len);
	int taken = i->next_ip != i->ip + i->size;
	if (i->ip == c->loop_branch)
		taken ? c->loop_taken++ : c->loop_not++;
	if (i->ip == c->parity_branch)
		taken ? c->parity_taken++ : c->parity_not++;
	return 0;
}

START_TEST(every_ip_equals_the_cpu)
{
	const char *prog = wl("ibs_ops"), *n_arg = "2400";
	const uint64_t n_iter = 2400;
	char *argv[] = {(char *)prog, (char *)n_arg, NULL};
	const char *nat_out = tmp_path("native.out"), *lk_out = tmp_path("lackey.out");
	uint64_t *ips = NULL, steps, rsp0;
	double t0 = now();
	ck_assert_int_eq(cpu_walk(argv, nat_out, keep_ip, &ips, &steps, &rsp0), 0);
	double t1 = now();
	struct seq_check c = {.cpu = ips, .ncpu = steps};
	c.lens = objdump_lengths(prog, &c.nlens);
	c.loop_branch = sym(prog, "ibs_loop_branch");
	c.parity_branch = sym(prog, "ibs_parity_branch");
	ck_assert(c.loop_branch && c.parity_branch);
	struct lackey_end end;
	char msg[256];
	int rc =
	    lackey_walk((const char *const *)argv, lk_out, seq_visit, &c, &end, msg, sizeof(msg));
	double t2 = now();
	ck_assert_msg(rc == 0, "%s", msg);
	printf("lackey_ref: %" PRIu64 " instructions (CPU %" PRIu64 "), %" PRIu64
	       " mismatches; ptrace %.1f s, lackey %.1f s (%.0f instructions/s)\n",
	       end.total, steps, c.mismatches, t1 - t0, t2 - t1, (double)end.total / (t2 - t1));
	ck_assert_uint_ge(steps, 200000);
	ck_assert_uint_eq(end.total, steps);
	ck_assert_int_eq(end.status, 0);
	ck_assert_msg(c.mismatches == 0, "%" PRIu64 " mismatches (stderr names them)",
	              c.mismatches);
	/* the workload's facts: 3 loop rounds per iteration, taken twice; jz taken when even */
	ck_assert_uint_eq(c.loop_taken, 2 * n_iter);
	ck_assert_uint_eq(c.loop_not, n_iter);
	ck_assert_uint_eq(c.parity_taken, (n_iter + 1) / 2);
	ck_assert_uint_eq(c.parity_not, n_iter / 2);
	ck_assert_uint_eq(initial_rsp(nat_out), rsp0);
	char a[64], b[64];
	line_of(nat_out, 2, a, sizeof(a));
	line_of(lk_out, 2, b, sizeof(b));
	ck_assert_msg(strncmp(a, "checksum ", 9) == 0 && strcmp(a, b) == 0,
	              "native \"%s\", under lackey \"%s\"", a, b);
	free(ips);
	free((void *)c.lens);
}
END_TEST

/* ---- data addresses ---- */

enum reg { R_NONE, R_RAX, R_RBX, R_RSP, R_RBP };

/* One access, as the instruction's encoding defines it: sym + reg * scale + disp. */
struct want_acc {
	char type;
	const char *sym;
	enum reg reg;
	int scale;
	int64_t disp;
	unsigned size;
};

static const struct acc_row {
	const char *label;
	struct want_acc acc[2];
	unsigned nacc;
	int line;
} acc_rows[] = {
    {"ibs_call_direct", {{'S', NULL, R_RSP, 1, -8, 8}}, 1, __LINE__},
    /* call [call_table + rax*8]: the slot is read, then the return address written */
    {"ibs_call_mem",
     {{'L', "call_table", R_RAX, 8, 0, 8}, {'S', NULL, R_RSP, 1, -8, 8}},
     2,
     __LINE__},
    {"ibs_call_reg", {{'S', NULL, R_RSP, 1, -8, 8}}, 1, __LINE__},
    {"ibs_jmp_mem", {{'L', "jump_table", R_RAX, 8, 0, 8}}, 1, __LINE__},
    {"ibs_jmp_reg", {{0}}, 0, __LINE__},
    {"ibs_store1", {{'S', "g_b1", R_NONE, 0, 0, 1}}, 1, __LINE__},
    {"ibs_store2", {{'S', "g_w2", R_NONE, 0, 0, 2}}, 1, __LINE__},
    {"ibs_store4", {{'S', "g_d4", R_NONE, 0, 0, 4}}, 1, __LINE__},
    {"ibs_store8", {{'S', "g_q8", R_NONE, 0, 0, 8}}, 1, __LINE__},
    {"ibs_load1", {{'L', "g_b1", R_NONE, 0, 0, 1}}, 1, __LINE__},
    {"ibs_load2", {{'L', "g_w2", R_NONE, 0, 0, 2}}, 1, __LINE__},
    {"ibs_load4", {{'L', "g_d4", R_NONE, 0, 0, 4}}, 1, __LINE__},
    {"ibs_load8", {{'L', "g_q8", R_NONE, 0, 0, 8}}, 1, __LINE__},
    {"ibs_load16u", {{'L', "g_vec_src", R_NONE, 0, 1, 16}}, 1, __LINE__},
    {"ibs_store16a", {{'S', "g_vec", R_NONE, 0, 0, 16}}, 1, __LINE__},
    {"ibs_load16a", {{'L', "g_vec", R_NONE, 0, 0, 16}}, 1, __LINE__},
    {"ibs_rmw", {{'M', "g_counter", R_NONE, 0, 0, 8}}, 1, __LINE__},
    {"ibs_push", {{'S', NULL, R_RSP, 1, -8, 8}}, 1, __LINE__},
    /* pop rcx (ibs_push + 4): rcx is overwritten before it is read, the load is made */
    {"ibs_push+4", {{'L', NULL, R_RSP, 1, 0, 8}}, 1, __LINE__},
    {"ibs_chase", {{'L', NULL, R_RBX, 1, 0, 8}}, 1, __LINE__}, /* the address is data */
    {"ibs_local8", {{'S', NULL, R_RBP, 1, -8, 8}}, 1, __LINE__},
    {"ibs_local16", {{'S', NULL, R_RBP, 1, -32, 16}}, 1, __LINE__},
    {"ibs_local_rmw", {{'M', NULL, R_RBP, 1, -8, 8}}, 1, __LINE__},
    {"ibs_loop_branch", {{0}}, 0, __LINE__},
};
#define NROWS (sizeof(acc_rows) / sizeof(acc_rows[0]))
#define MAX_HITS 400

/* An execution of a row's instruction on the CPU: its number and the addresses. */
struct hit {
	uint64_t n;
	const struct acc_row *row;
	uint64_t addr[2];
};

struct hits {
	uint64_t label[NROWS], base[NROWS][2];
	struct hit h[MAX_HITS];
	size_t n;
};

static uint64_t reg_value(const struct user_regs_struct *r, enum reg g)
{
	switch (g) {
	case R_RAX:
		return r->rax;
	case R_RBX:
		return r->rbx;
	case R_RSP:
		return r->rsp;
	case R_RBP:
		return r->rbp;
	default:
		return 0;
	}
}

static void keep_hit(uint64_t n, const struct user_regs_struct *r, void *ctx)
{
	struct hits *hs = ctx;
	for (size_t i = 0; i < NROWS; i++) {
		if (r->rip != hs->label[i])
			continue;
		ck_assert_uint_lt(hs->n, MAX_HITS);
		struct hit *h = &hs->h[hs->n++];
		h->n = n, h->row = &acc_rows[i];
		for (unsigned k = 0; k < acc_rows[i].nacc; k++) {
			const struct want_acc *w = &acc_rows[i].acc[k];
			h->addr[k] = hs->base[i][k] + reg_value(r, w->reg) * (uint64_t)w->scale +
			             (uint64_t)w->disp;
		}
	}
}

START_TEST(data_addresses_equal_the_cpu)
{
	const char *prog = wl("ibs_ops");
	char *argv[] = {(char *)prog, "8", NULL}; /* each table slot twice */
	const char *nat_out = tmp_path("native.out"), *lk_out = tmp_path("lackey.out");
	struct hits *hs = calloc(1, sizeof(*hs));
	ck_assert_ptr_nonnull(hs);
	for (size_t i = 0; i < NROWS; i++) {
		hs->label[i] = label_addr(prog, acc_rows[i].label);
		ck_assert_msg(hs->label[i], "row %d: no symbol %s", acc_rows[i].line,
		              acc_rows[i].label);
		for (unsigned k = 0; k < acc_rows[i].nacc; k++) {
			const char *s = acc_rows[i].acc[k].sym;
			hs->base[i][k] = s ? sym(prog, s) : 0;
			ck_assert_msg(!s || hs->base[i][k], "row %d: no symbol %s",
			              acc_rows[i].line, s);
		}
	}
	uint64_t steps, cpu_rsp0;
	ck_assert_int_eq(cpu_walk(argv, nat_out, keep_hit, hs, &steps, &cpu_rsp0), 0);
	ck_assert_uint_eq(initial_rsp(nat_out), cpu_rsp0);
	uint64_t *want = malloc(hs->n * sizeof(*want));
	struct lackey_insn *got = malloc(hs->n * sizeof(*got));
	ck_assert(want && got);
	for (size_t i = 0; i < hs->n; i++)
		want[i] = hs->h[i].n;
	char msg[256];
	int rc =
	    lackey_pick_out((const char *const *)argv, lk_out, want, hs->n, got, msg, sizeof(msg));
	ck_assert_msg(rc == 0, "%s", msg);
	uint64_t lk_rsp0 = initial_rsp(lk_out);
	size_t accesses = 0;
	for (size_t i = 0; i < hs->n; i++) {
		const struct hit *h = &hs->h[i];
		const struct acc_row *row = h->row;
		const struct lackey_insn *g = &got[i];
		ck_assert_msg(g->ip == hs->label[row - acc_rows],
		              "row %d: instruction %" PRIu64 " is at %#" PRIx64
		              " under lackey, the "
		              "CPU ran %s (%#" PRIx64 ")",
		              row->line, h->n, g->ip, row->label, hs->label[row - acc_rows]);
		ck_assert_msg(g->naccesses == row->nacc, "row %d: %s: %u accesses, want %u",
		              row->line, row->label, g->naccesses, row->nacc);
		for (unsigned k = 0; k < row->nacc; k++) {
			const struct want_acc *w = &row->acc[k];
			const struct lackey_access *a = &g->access[k];
			int stack = w->reg == R_RSP || w->reg == R_RBP;
			uint64_t want_addr = stack ? h->addr[k] - cpu_rsp0 : h->addr[k];
			uint64_t got_addr = stack ? a->addr - lk_rsp0 : a->addr;
			ck_assert_msg(
			    a->type == w->type && a->size == w->size && got_addr == want_addr,
			    "row %d: %s (instruction %" PRIu64 ") access %u: lackey %c %#" PRIx64
			    ",%u, CPU %c %#" PRIx64 ",%u%s",
			    row->line, row->label, h->n, k, a->type, got_addr, a->size, w->type,
			    want_addr, w->size, stack ? " (offsets from RSP0)" : "");
			accesses++;
		}
	}
	printf("lackey_ref: %zu executions of %zu instructions, %zu accesses equal the CPU's "
	       "(initial RSP %#" PRIx64 " natively, %#" PRIx64 " under valgrind)\n",
	       hs->n, NROWS, accesses, cpu_rsp0, lk_rsp0);
	ck_assert_uint_ge(hs->n, 8 * NROWS); /* every row ran at least 8 times */
	free(want), free(got), free(hs);
}
END_TEST

/* ---- counts ---- */

static const struct count_row {
	const char *n_arg;
	uint64_t digits, n;
	int line;
} count_rows[] = {
    {"0", 1, 0, __LINE__},
    {"40", 2, 40, __LINE__},
    {"1000", 4, 1000, __LINE__},
};

START_TEST(count_equals_the_cpu)
{
	const struct count_row *r = &count_rows[_i];
	char *argv[] = {(char *)wl("ibs_ops"), (char *)r->n_arg, NULL};
	uint64_t steps, rsp0;
	ck_assert_int_eq(cpu_walk(argv, tmp_path("native.out"), NULL, NULL, &steps, &rsp0), 0);
	char msg[256];
	int64_t lk = lackey_count((const char *const *)argv, msg, sizeof(msg));
	ck_assert_msg(lk >= 0, "row %d: %s", r->line, msg);
	printf("lackey_ref: ibs_ops %s: lackey %" PRId64 ", CPU %" PRIu64 " instructions\n",
	       r->n_arg, lk, steps);
	ck_assert_msg((uint64_t)lk == steps, "row %d: lackey %" PRId64 ", CPU %" PRIu64, r->line,
	              lk, steps);
	/* workloads/ibs_ops.S's FACTS, for N a multiple of 4 */
	ck_assert_uint_eq(steps, 308 + 12 * r->digits + 86 * r->n);
}
END_TEST

/* ---- outputs ---- */

START_TEST(outputs_agree_but_the_first_line)
{
	const char *ns[] = {"2400", NULL}; /* NULL: no argument, the default N */
	for (int i = 0; i < 2; i++) {
		char *nat[] = {(char *)wl("ibs_ops"), (char *)ns[i], NULL};
		char *sim[] = {(char *)pmusim(),      "run",         "--",
		               (char *)wl("ibs_ops"), (char *)ns[i], NULL};
		int s1, s2;
		char *a = run_capture(nat, &s1), *b = run_capture(sim, &s2);
		ck_assert_msg(a && b && s1 == 0 && s2 == 0, "exit status native %d, pmusim %d", s1,
		              s2);
		ck_assert_msg(strlen(a) > 17 && strlen(b) > 17 && a[16] == '\n' && b[16] == '\n',
		              "native \"%s\", pmusim \"%s\"", a, b);
		ck_assert_msg(strcmp(a + 17, b + 17) == 0 && strncmp(a + 17, "checksum ", 9) == 0,
		              "native \"%s\", pmusim \"%s\"", a + 17, b + 17);
		free(a), free(b);
	}
	/* bad input: one line on stderr, status 2, natively and under pmusim */
	char *bad[] = {(char *)wl("ibs_ops"), "12x", NULL};
	char *bad_sim[] = {(char *)pmusim(), "run", "--", (char *)wl("ibs_ops"), "12x", NULL};
	for (int i = 0; i < 2; i++) {
		const char *err = tmp_path("bad.err");
		ck_assert_int_eq(run_cmd(i ? bad_sim : bad, NULL, NULL, err), 2);
		char *e = slurp(err, NULL);
		ck_assert_str_eq(e, "ibs_ops: N must be 1 to 18 decimal digits\n");
		free(e);
	}
}
END_TEST

/* ---- the harness's own contract ---- */

static int stop_at_100(const struct lackey_insn *i, void *ctx)
{
	(void)ctx;
	return i->n == 100;
}

START_TEST(harness_refuses_and_stops)
{
	const char *argv[] = {wl("ibs_ops"), "4", NULL};
	char msg[256];
	struct lackey_insn out[2];
	uint64_t unsorted[] = {5, 3}, zero[] = {0}, past[] = {1, 1000000};
	ck_assert_int_eq(lackey_pick(argv, unsorted, 2, out, msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, "ascending"), "%s", msg);
	ck_assert_int_eq(lackey_pick(argv, zero, 1, out, msg, sizeof(msg)), -1);
	ck_assert_int_eq(lackey_pick(argv, past, 2, out, msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, "instruction 1000000 wanted, the program ran 664"), "%s", msg);
	const char *missing[] = {wl("no_such_program"), NULL};
	ck_assert_int_eq(lackey_count(missing, msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, "no_such_program"), "%s", msg);
	const char *failing[] = {wl("ibs_ops"), "x", NULL};
	ck_assert_int_eq(lackey_count(failing, msg, sizeof(msg)), -1);
	ck_assert_msg(strstr(msg, "status 2") && strstr(msg, "N must be"), "%s", msg);
	struct lackey_end end;
	ck_assert_int_eq(lackey_walk(argv, NULL, stop_at_100, NULL, &end, msg, sizeof(msg)), 0);
	ck_assert_int_eq(end.stopped, 1);
	ck_assert_uint_eq(end.total, 100);
	/* repeated numbers each get the record */
	uint64_t twice[] = {3, 3};
	ck_assert_int_eq(lackey_pick(argv, twice, 2, out, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(out[0].n, 3);
	ck_assert_uint_eq(out[1].n, 3);
	ck_assert_uint_eq(out[0].ip, out[1].ip);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("lackey_ref");
	TCase *tc = tcase_create("core");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, every_ip_equals_the_cpu);
	tcase_add_test(tc, data_addresses_equal_the_cpu);
	tcase_add_loop_test(tc, count_equals_the_cpu, 0,
	                    (int)(sizeof(count_rows) / sizeof(count_rows[0])));
	tcase_add_test(tc, outputs_agree_but_the_first_line);
	tcase_add_test(tc, harness_refuses_and_stops);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
