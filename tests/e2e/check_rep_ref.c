/* pmusim's REP figures against the real CPU. Each workload runs natively under
 * tests/ref/ptrace_rep (an INT3 on every REP string instruction of the workload's own
 * functions, as objdump lists them; each execution single-stepped on the host CPU
 * until RIP leaves the REP, the count register read before and after, signals that
 * stop a REP in the middle followed into their handlers and back; it shares no code
 * with pmusim) and under `pmusim record --rep MODE --truth-json` in every mode. For
 * every REP of the workload's own functions, `pmusim report --rep --format json` and
 * the truth (pmusim's register reference, sim/rep_ref.c) must give the CPU's figures:
 * executions, requested, actual iterations and executions ended by their condition
 * (where the mode knows them), and no execution of a REP the CPU never ran; and the
 * program prints the same natively and under pmusim (a checksum of what its REPs wrote
 * and compared: the pointers moved as the CPU moves them).
 *
 * workloads/rep_faults covers every width (movs/stos b, w, l, q), repe cmpsw, repne
 * scasl and repe cmpsb ended by condition or count, the address-size prefix (0x67:
 * ECX counts, RCX's upper half set), count 0, a fault whose handler siglongjmps out of
 * the REP, a fault whose handler makes the page writable and returns into it, and an
 * interval timer whose SIGALRMs land inside REPs natively (the CPU runs them one
 * iteration per single step: hundreds of signals stop a REP in the middle and the
 * handler returns into it) while under pmusim a REP is one instruction of simulated
 * time, so its timer never stops one: the figures must agree either way. workloads/rep
 * (2 rounds: 25 seconds of single steps for the default 50) adds larger counts and
 * repne scasb from RCX = -1. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

static char tool[4096]; /* $PTRACE_REP, else ptrace_rep beside this suite */

struct native_rep {
	uint64_t addr, next, executions, requested, iterations, cond;
};

/* ptrace_rep's report (its format: tests/ref/ptrace_rep.c). */
struct native {
	uint64_t (*funcs)[2];
	struct native_rep *reps;
	size_t nfuncs, nreps;
	uint64_t left[65], resumed[65];
	int exit_status;
};

static void native_run(const char *name, const char *arg, struct native *nat)
{
	char own[256];
	snprintf(own, sizeof(own), "%s.o", name);
	const char *out = tmp_path("native.txt"), *err = tmp_path("native.err");
	char *argv[] = {tool,        "-o", (char *)out, (char *)wl(own), "--", (char *)wl(name),
	                (char *)arg, NULL};
	int st = run_cmd(argv, NULL, tmp_path("native.out"), err);
	char *msg = slurp(err, NULL);
	ck_assert_msg(st == 0, "%s under ptrace_rep: exit %d: %s", name, st, msg ? msg : "");
	free(msg);
	memset(nat, 0, sizeof(*nat));
	nat->exit_status = -1;
	FILE *f = fopen(out, "r");
	ck_assert_msg(f, "no report from ptrace_rep");
	char line[1024];
	while (fgets(line, sizeof(line), f)) {
		struct native_rep r;
		uint64_t a, b;
		int sig;
		if (sscanf(line, "func %*s %" SCNx64 " %" SCNx64, &a, &b) == 2) {
			nat->funcs = realloc(nat->funcs, (nat->nfuncs + 1) * sizeof(*nat->funcs));
			ck_assert_ptr_nonnull(nat->funcs);
			nat->funcs[nat->nfuncs][0] = a, nat->funcs[nat->nfuncs++][1] = b;
		} else if (sscanf(line,
		                  "rep %" SCNx64 " %" SCNx64 " %" SCNu64 " %" SCNu64 " %" SCNu64
		                  " %" SCNu64,
		                  &r.addr, &r.next, &r.executions, &r.requested, &r.iterations,
		                  &r.cond) == 6) {
			nat->reps = realloc(nat->reps, (nat->nreps + 1) * sizeof(*nat->reps));
			ck_assert_ptr_nonnull(nat->reps);
			nat->reps[nat->nreps++] = r;
		} else if (sscanf(line, "signal %d %" SCNu64 " %" SCNu64, &sig, &a, &b) == 3 &&
		           sig > 0 && sig < 65) {
			nat->left[sig] = a, nat->resumed[sig] = b;
		} else {
			ck_assert_msg(sscanf(line, "exit %d", &nat->exit_status) == 1,
			              "ptrace_rep report: unknown line %s", line);
		}
	}
	fclose(f);
	ck_assert_int_eq(nat->exit_status, 0);
	ck_assert_uint_gt(nat->nreps, 0);
}

static void native_free(struct native *nat)
{
	free(nat->funcs);
	free(nat->reps);
}

static int own_addr(const struct native *nat, uint64_t a)
{
	for (size_t i = 0; i < nat->nfuncs; i++)
		if (a >= nat->funcs[i][0] && a < nat->funcs[i][1])
			return 1;
	return 0;
}

/* pmusim's sites (of the report or the truth) against the CPU's, within the own
 * functions; how many sites pmusim reports there. */
static size_t compare(const struct native *nat, const struct rep_site *g, size_t ng, int has_actual,
                      const char *what)
{
	size_t own = 0;
	for (size_t i = 0; i < ng; i++) {
		if (!own_addr(nat, g[i].addr))
			continue;
		own++;
		const struct native_rep *r = NULL;
		for (size_t j = 0; j < nat->nreps; j++)
			if (nat->reps[j].addr == g[i].addr)
				r = &nat->reps[j];
		ck_assert_msg(r, "%s: a REP at %#" PRIx64 " that objdump does not list", what,
		              g[i].addr);
		ck_assert_msg(r->executions == g[i].executions && r->requested == g[i].requested,
		              "%s: REP at %#" PRIx64 ": %" PRIu64 " executions, %" PRIu64
		              " requested on the CPU; %" PRIu64 " and %" PRIu64 " here",
		              what, r->addr, r->executions, r->requested, g[i].executions,
		              g[i].requested);
		ck_assert_msg(g[i].has_actual == has_actual, "%s: REP at %#" PRIx64 ": actual %s",
		              what, r->addr, g[i].has_actual ? "known" : "unknown");
		if (has_actual)
			ck_assert_msg(
			    r->iterations == g[i].actual && r->cond == g[i].cond,
			    "%s: REP at %#" PRIx64 ": %" PRIu64 " iterations, %" PRIu64
			    " ended by the condition on the CPU; %" PRIu64 " and %" PRIu64 " here",
			    what, r->addr, r->iterations, r->cond, g[i].actual, g[i].cond);
	}
	/* and every REP the CPU ran is there */
	size_t ran = 0;
	for (size_t j = 0; j < nat->nreps; j++)
		ran += nat->reps[j].executions > 0;
	ck_assert_msg(own == ran, "%s: %zu own REP sites executed, %zu on the CPU", what, own, ran);
	return own;
}

struct mode {
	const char *mode;
	const char *extra[6];
	int has_actual;
};

static const struct mode modes[] = {
    {"last", {0}, 1},
    {"first", {0}, 0},
    {"counter", {0}, 1},
    {"buffer", {"--rep-buffer", "3", "--rep-tbe", 0}, 1},
    {"membuffer", {"--rep-buffer", "1000", 0}, 1},
    {"patch", {0}, 0},
    {"last", {"--rep-sse", 0}, 1},
    /* the PMU interrupts every 13 taken branches and every 13 REP iterations */
    {"last", {"-e", "br_inst_retired.near_taken,rep_iterations", "-c", "13", "-b", 0}, 1},
};

static const struct workload {
	const char *name, *arg;
	int line;
} workloads[] = {
    {"rep_faults", NULL, __LINE__},
    {"rep", "2", __LINE__},
};

START_TEST(own_reps_match_the_cpu)
{
	const struct workload *w = &workloads[_i];
	struct native nat;
	native_run(w->name, w->arg, &nat);
	for (size_t m = 0; m < sizeof(modes) / sizeof(modes[0]); m++) {
		const char *data = tmp_path("rep.data"),
		           *json = tmp_path("rep.json"); /* 8 paths stay valid */
		char *argv[32] = {(char *)pmusim(),      "record",    "--rep",
		                  (char *)modes[m].mode, "-o",        (char *)data,
		                  "--truth-json",        (char *)json};
		int k = 8;
		for (int e = 0; modes[m].extra[e]; e++)
			argv[k++] = (char *)modes[m].extra[e];
		argv[k++] = "--";
		argv[k++] = (char *)wl(w->name);
		if (w->arg)
			argv[k++] = (char *)w->arg;
		const char *sim_out = tmp_path("pmusim.out");
		ck_assert_int_eq(run_cmd(argv, NULL, sim_out, NULL), 0);
		/* what the REPs wrote and compared (the workloads print a checksum of it) is the
		 * CPU's too: the pointers moved as the CPU moves them */
		size_t ln, lp;
		char *a = slurp(tmp_path("native.out"), &ln), *b = slurp(sim_out, &lp);
		ck_assert_msg(a && b && ln == lp && memcmp(a, b, ln) == 0,
		              "%s: printed %s natively, %s under pmusim", w->name, a, b);
		free(a), free(b);
		char what[128];
		snprintf(what, sizeof(what), "%s (line %d), --rep %s%s", w->name, w->line,
		         modes[m].mode, modes[m].extra[0] ? " and more" : "");
		int st;
		char *r[] = {(char *)pmusim(), "report",   "-i",   (char *)data,
		             "--rep",          "--format", "json", NULL};
		char *out = run_capture(r, &st);
		struct rep_site *g, *t;
		size_t ng, nt;
		ck_assert_msg(st == 0 && rep_sites_of_report(out, &g, &ng) == 0,
		              "%s: report --rep: %s", what, out);
		ck_assert_int_eq(rep_sites_of_truth(json, &t, &nt), 0);
		size_t own = compare(&nat, g, ng, modes[m].has_actual, what);
		char twhat[160];
		snprintf(twhat, sizeof(twhat), "%s: the truth", what);
		ck_assert_uint_eq(compare(&nat, t, nt, 1, twhat), own);
		free(g), free(t), free(out);
	}
	if (strcmp(w->name, "rep_faults") == 0) {
		/* the CPU stopped 6 REPs by SIGSEGV and went on with 3; how many SIGALRMs
		 * landed inside a REP depends on the host's speed (hundreds here) */
		ck_assert_uint_eq(nat.left[11], 6);
		ck_assert_uint_eq(nat.resumed[11], 3);
		ck_assert_uint_eq(nat.left[14], nat.resumed[14]);
	}
	native_free(&nat);
}
END_TEST

/* The tool can fail: a program it cannot instrument (a PIE) and a wrong object
 * file end with 125 and one line. */
START_TEST(tool_refuses_what_it_cannot_trace)
{
	const char *err = tmp_path("refused.err");
	char *pie[] = {tool, wl("pie_hello.o"), "--", (char *)wl("pie_hello"), NULL};
	ck_assert_int_eq(run_cmd(pie, NULL, "/dev/null", err), 125);
	char *msg = slurp(err, NULL);
	ck_assert_msg(msg && strstr(msg, "ptrace_rep: ") && strchr(msg, '\n') == strrchr(msg, '\n'),
	              "%s", msg);
	free(msg);
	char *wrong[] = {tool, wl("loops.o"), "--", (char *)wl("rep_faults"), NULL};
	ck_assert_int_eq(run_cmd(wrong, NULL, "/dev/null", err), 125);
}
END_TEST

int main(void)
{
	ref_tool_path(tool, sizeof(tool), "PTRACE_REP", "ptrace_rep"); /* before e2e_init fixes the environment */
	e2e_init();
	Suite *s = suite_create("rep_ref");
	TCase *tc = tcase_create("rep_ref");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, own_reps_match_the_cpu, 0,
	                    (int)(sizeof(workloads) / sizeof(workloads[0])));
	tcase_add_test(tc, tool_refuses_what_it_cannot_trace);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
