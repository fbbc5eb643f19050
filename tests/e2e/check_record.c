/* End-to-end tests of `pmusim stat`, `pmusim record` and `pmusim script`
 * against things nobody here wrote:
 * - stat counts equal the exact truth of the same run (itself checked against
 *   callgrind by check_e2e), event by event;
 * - real perf 6.1 reads every recording: `perf script -F ip,brstack` prints one
 *   line per sample, `-F brstackinsn` finds no "mismatch of LBR data and
 *   executable", `perf report --stdio` names the workload's functions, and
 *   `pmusim script` prints byte for byte what `perf script` prints;
 * - every LBR entry is a taken transfer that the truth saw, and a taken-branch
 *   trigger's sample IP is its newest LBR entry's source;
 * - the same recording twice gives identical bytes; a crash, Ctrl-C or a file
 *   size limit still leave a file perf reads.
 * Environment: PMUSIM, WORKLOADS as for check_e2e. */
#include <check.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/symtab.h"
#include "profiler/perfdata.h"
#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* Every workload that exits normally (rep_faults: the iterations of a REP before a
 * fault are rep_iterations, the REP retires no instruction); asm_branches (51
 * instructions) is too short to sample and is checked by stat only (it comes last). */
static const char *const workloads[] = {"loops", "switch", "recursion", "indirect", "strings",
					"syscalls", "musl_hello", "pie_hello", "seeded", "args_env",
					"exit_code", "rep_faults", "asm_branches"};
#define NWL (int)(sizeof(workloads) / sizeof(workloads[0]))

static unsigned long long stat_value(const char *text, const char *event)
{
	char key[96];
	snprintf(key, sizeof(key), ",,%s,", event);
	const char *p = strstr(text, key);
	ck_assert_msg(p, "no %s line in:\n%s", event, text);
	while (p > text && p[-1] != '\n')
		p--;
	return strtoull(p, NULL, 10);
}

/* stat's counts equal the exact truth, event by event. */
START_TEST(stat_equals_truth)
{
	const char *w = wl(workloads[_i]), *json = tmp_path("stat.json"), *out = tmp_path("stat.txt");
	char *a[] = {(char *)pmusim(), "stat", "-x", ",", "-o", (char *)out, "--truth-json", (char *)json,
		     "-e", "instructions,branches,br_inst_retired.near_taken,br_inst_retired.cond",
		     "-e", "br_inst_retired.cond_taken,br_inst_retired.near_call,br_inst_retired.near_return",
		     "-e", "br_inst_retired.indirect,rep_iterations,cycles", "--", (char *)w, NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL) == 2, 0);
	struct truth_totals t;
	ck_assert_int_eq(truth_totals(json, &t), 0);
	char *s = slurp(out, NULL);
	ck_assert_ptr_nonnull(s);
	ck_assert_uint_gt(t.instructions, 40);
	ck_assert_uint_eq(stat_value(s, "instructions"), t.instructions);
	ck_assert_uint_eq(stat_value(s, "branches"), t.branches);
	ck_assert_uint_eq(stat_value(s, "br_inst_retired.near_taken"), t.taken);
	ck_assert_uint_eq(stat_value(s, "br_inst_retired.cond"), t.cond);
	ck_assert_uint_eq(stat_value(s, "br_inst_retired.cond_taken"), t.cond_taken);
	ck_assert_uint_eq(stat_value(s, "br_inst_retired.near_call"), t.calls);
	ck_assert_uint_eq(stat_value(s, "br_inst_retired.near_return"), t.returns);
	ck_assert_uint_eq(stat_value(s, "br_inst_retired.indirect"), t.indirect);
	ck_assert_uint_eq(stat_value(s, "rep_iterations"), t.rep_iters);
	ck_assert_uint_gt(stat_value(s, "cycles"), t.instructions / 5);
	free(s);
}
END_TEST

static int count_lines(const char *text)
{
	int n = 0;
	for (const char *p = text; p && *p; p++)
		n += *p == '\n';
	return n;
}

static unsigned long long recorded_samples(const char *err_text)
{
	const char *p = err_text ? strstr(err_text, " samples)") : NULL;
	ck_assert_msg(p, "no sample count in: %s", err_text ? err_text : "(none)");
	while (p > err_text && p[-1] != '(')
		p--;
	return strtoull(p, NULL, 10);
}

/* Records w with a taken-branch trigger and the LBR; returns the sample count. */
static unsigned long long record(const char *w, const char *data, const char *json, const char *filter)
{
	const char *err = tmp_path("rec.err");
	char *a[] = {(char *)pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "997", "-j",
		     (char *)filter, "--delta", "50", "--seed", "7", "-o", (char *)data, "--truth-json",
		     (char *)json, "--", (char *)w, NULL};
	int st = run_cmd(a, NULL, NULL, err);
	ck_assert_msg(st != 2, "pmusim record failed on %s", w);
	char *e = slurp(err, NULL);
	unsigned long long n = recorded_samples(e);
	free(e);
	return n;
}

/* perf script reads every recording: one line per sample, and every LBR entry
 * is a taken transfer of the truth; a trigger's IP is its newest entry's source. */
START_TEST(perf_script_reads_recordings)
{
	const char *w = wl(workloads[_i]), *data = tmp_path("rec.data"), *json = tmp_path("rec.json");
	unsigned long long n = record(w, data, json, "any");
	ck_assert_uint_gt(n, 0);
	int st;
	char *a[] = {"perf", "script", "-i", (char *)data, "-F", "ip,brstack", NULL};
	char *out = run_capture(a, &st);
	ck_assert_msg(st == 0 && out, "perf script failed on the recording of %s", w);
	ck_assert_int_eq(count_lines(out), (int)n);
	struct truth_edge_set es;
	ck_assert_int_eq(truth_edge_set(json, &es), 0);
	unsigned long long entries = 0;
	for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		unsigned long long ip = strtoull(line, &line, 16), from, to;
		int first = 1, k;
		while (sscanf(line, " 0x%llx/0x%llx/%n", &from, &to, &k) == 2) {
			ck_assert_msg(truth_has_edge(&es, from, to), "%s: LBR entry 0x%llx->0x%llx is no taken "
				      "transfer of the truth", w, from, to);
			if (first)
				ck_assert_msg(from == ip, "%s: sample IP %llx is not the newest branch %llx", w, ip, from);
			first = 0;
			entries++;
			line += k;
			line += strcspn(line, " ");
		}
		ck_assert_msg(!first, "%s: a sample without branch entries", w);
	}
	ck_assert_uint_ge(entries, n);
	free(es.e);
	free(out);
}
END_TEST

/* perf walks the program's code between consecutive LBR entries and finds it
 * consistent (perf prints "mismatch of LBR data and executable" otherwise). */
START_TEST(brstackinsn_has_no_mismatch)
{
	const char *w = wl(workloads[_i]), *data = tmp_path("insn.data"), *json = tmp_path("insn.json");
	ck_assert_uint_gt(record(w, data, json, "any"), 0);
	int st;
	char *a[] = {"perf", "script", "-i", (char *)data, "-F", "ip,brstackinsn", NULL};
	char *out = run_capture(a, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_ptr_nonnull(out);
	ck_assert_msg(!strstr(out, "mismatch of LBR data"), "%s: perf found LBR data inconsistent", w);
	ck_assert_msg(strstr(out, "insn:"), "%s: perf printed no instructions", w);
	free(out);
}
END_TEST

/* perf report names the workload's own functions; pmusim script prints what
 * perf script prints, byte for byte, in every field layout. */
START_TEST(perf_report_and_pmusim_script)
{
	const char *data = tmp_path("rep.data"), *json = tmp_path("rep.json");
	ck_assert_uint_gt(record(wl("loops"), data, json, "any"), 10);
	int st;
	char *r[] = {"perf", "report", "-i", (char *)data, "--stdio", "--no-children", NULL};
	char *out = run_capture(r, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(out && strstr(out, "run_loops") && strstr(out, "mix"), "perf report: %s", out);
	free(out);
	static const char *const layouts[] = {"ip,brstack", "ip,sym,brstacksym", "ip,sym,symoff",
					      "comm,pid,tid,time,period,event,ip,sym,symoff,dso", NULL};
	for (int i = 0; layouts[i]; i++) {
		char *p[] = {"perf", "script", "-i", (char *)data, "-F", (char *)layouts[i], NULL};
		char *q[] = {(char *)pmusim(), "script", "-i", (char *)data, "-F", (char *)layouts[i], NULL};
		char *a = run_capture(p, &st), *b = run_capture(q, &st);
		ck_assert_msg(a && b && strcmp(a, b) == 0, "-F %s differs from perf script", layouts[i]);
		free(a), free(b);
	}
	char *p[] = {"perf", "script", "-i", (char *)data, NULL};
	char *q[] = {(char *)pmusim(), "script", "-i", (char *)data, NULL};
	char *a = run_capture(p, &st), *b = run_capture(q, &st);
	ck_assert_msg(a && b && strcmp(a, b) == 0, "default layout differs from perf script");
	free(a), free(b);
}
END_TEST

/* Where several symbols share an address (glibc's aliases), pmusim script names
 * it as perf does: one sample at every function of loops and musl_hello. */
START_TEST(symbol_aliases_as_perf)
{
	const char *prog = _i ? wl("musl_hello") : wl("loops"), *data = tmp_path("alias.data");
	struct symtab *st;
	ck_assert_int_eq(symtab_load(prog, 0, &st), 0);
	struct perfdata_event ev = {.name = "cycles", .sample_period = 1, .id = 1,
				    .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME};
	struct perfdata_info info = {.hostname = "t", .os_release = "t", .version = "t", .arch = "x86_64",
				     .cpudesc = "t", .cpuid = "t", .nr_cpus = 1};
	struct perfdata_writer *w;
	char msg[200], abs[4096];
	ck_assert_ptr_nonnull(realpath(prog, abs));
	ck_assert_int_eq(perfdata_writer_open(&w, data, &ev, 1, &info, msg, sizeof(msg)), 0);
	ck_assert_int_eq(perfdata_write_comm(w, 1, 1, "t", 0), 0);
	ck_assert_int_eq(perfdata_write_mmap2(w, 1, 1, 0x400000, 0x200000, 0, 5, 2, abs, 0), 0);
	for (size_t i = 0; i < symtab_count(st); i++) {
		struct perf_sample s = {.id = 1, .ip = symtab_at(st, i)->addr, .time = i, .pid = 1, .tid = 1,
					.misc = PERF_RECORD_MISC_USER};
		ck_assert_int_eq(perfdata_write_sample(w, &s), 0);
	}
	ck_assert_int_eq(perfdata_writer_close(w), 0);
	int st1, st2;
	char *p[] = {"perf", "script", "-i", (char *)data, "-F", "ip,sym", NULL};
	char *q[] = {(char *)pmusim(), "script", "-i", (char *)data, "-F", "ip,sym", NULL};
	char *a = run_capture(p, &st1), *b = run_capture(q, &st2);
	ck_assert_int_eq(st1, 0);
	ck_assert_int_eq(count_lines(a), (int)symtab_count(st));
	ck_assert_msg(a && b && strcmp(a, b) == 0, "symbol names differ from perf's");
	free(a), free(b);
	symtab_free(st);
}
END_TEST

/* A dynamic program (Debian's sort): ld.so and libc.so.6 get MMAP2 records as
 * they are mapped, perf names their functions, finds the LBR consistent with
 * their code, and every LBR entry is a taken transfer of the truth. */
START_TEST(dynamic_program_recording)
{
	const char *data = tmp_path("dyn.data"), *json = tmp_path("dyn.json"), *in = tmp_path("dyn.txt");
	FILE *f = fopen(in, "w");
	for (int i = 0; i < 3000; i++) /* enough sorting that samples land in sort and libc */
		fprintf(f, "line %d\n", (i * 7919) % 3001);
	fclose(f);
	const char *err = tmp_path("dyn.err");
	char *r[] = {(char *)pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "97", "-b", "-o",
		     (char *)data, "--truth-json", (char *)json, "--", "/usr/bin/sort", (char *)in, NULL};
	ck_assert_int_eq(run_cmd(r, NULL, NULL, err), 0);
	int st;
	char *a[] = {"perf", "script", "-i", (char *)data, "-F", "ip,sym,dso", NULL};
	char *out = run_capture(a, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(out && strstr(out, "(/usr/lib/x86_64-linux-gnu/libc.so.6)") && strstr(out, "(/usr/bin/sort)"),
		      "perf script: %.400s", out);
	free(out);
	char *b[] = {"perf", "script", "-i", (char *)data, "-F", "ip,brstackinsn", NULL};
	out = run_capture(b, &st);
	ck_assert_msg(st == 0 && out && !strstr(out, "mismatch of LBR data"), "brstackinsn found a mismatch");
	free(out);
	char *c[] = {"perf", "script", "-i", (char *)data, "-F", "brstack", NULL};
	out = run_capture(c, &st);
	struct truth_edge_set es;
	ck_assert_int_eq(truth_edge_set(json, &es), 0);
	unsigned long long from, to, n = 0;
	int k;
	for (char *p = out; p && sscanf(p, " 0x%llx/0x%llx/%n", &from, &to, &k) == 2; n++) {
		ck_assert_msg(truth_has_edge(&es, from, to), "LBR entry 0x%llx->0x%llx not in the truth", from, to);
		p += k;
		p += strcspn(p, " \n");
	}
	ck_assert_uint_gt(n, 100);
	free(es.e);
	free(out);
}
END_TEST

/* A call-only LBR (the call-graph profile's input) holds only calls. */
START_TEST(call_only_lbr)
{
	const char *data = tmp_path("call.data"), *json = tmp_path("call.json");
	ck_assert_uint_gt(record(wl("indirect"), data, json, "any_call"), 0);
	int st;
	char *a[] = {"perf", "script", "-i", (char *)data, "-F", "brstack", NULL};
	char *out = run_capture(a, &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(out && strstr(out, "/CALL ") && strstr(out, "/IND_CALL "), "no calls recorded");
	ck_assert_msg(!strstr(out, "/COND ") && !strstr(out, "/RET ") && !strstr(out, "/UNCOND "),
		      "a call-only LBR recorded other branches");
	free(out);
}
END_TEST

/* Same program, options (output name included: perf.data keeps the command
 * line) and seed: identical bytes; another seed moves the samples. */
START_TEST(recording_is_deterministic)
{
	const char *d = tmp_path("det.data"), *j = tmp_path("det.json");
	size_t n1, n2, n3;
	record(wl("recursion"), d, j, "any");
	char *a = slurp(d, &n1);
	record(wl("recursion"), d, j, "any");
	char *b = slurp(d, &n2);
	ck_assert_msg(a && b && n1 == n2 && memcmp(a, b, n1) == 0, "two recordings differ");
	char *c[] = {(char *)pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "997", "-j", "any",
		     "--delta", "50", "--seed", "8", "-o", (char *)d, "--truth-json", (char *)j, "--",
		     (char *)wl("recursion"), NULL};
	ck_assert_int_eq(run_cmd(c, NULL, NULL, NULL), 0);
	char *x = slurp(d, &n3);
	ck_assert_msg(x && (n3 != n1 || memcmp(a, x, n1) != 0), "--seed does not change the samples");
	free(a), free(b), free(x);
}
END_TEST

static int perf_script_ok(const char *data, int *lines)
{
	int st;
	char *a[] = {"perf", "script", "-i", (char *)data, "-F", "ip,brstack", NULL};
	char *out = run_capture(a, &st);
	*lines = count_lines(out);
	free(out);
	return st == 0;
}

/* A program that dies of SIGSEGV still leaves a complete perf.data. */
START_TEST(crash_leaves_readable_file)
{
	const char *data = tmp_path("crash.data");
	char *a[] = {(char *)pmusim(), "record", "-c", "1000", "-b", "-o", (char *)data, "--",
		     (char *)wl("fault_segv"), NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL), 139);
	int lines;
	ck_assert(perf_script_ok(data, &lines));
	ck_assert_int_gt(lines, 0);
}
END_TEST

/* An unsupported system call under --strict ends the run with exit status 2
 * and a complete perf.data of what was sampled before it. */
START_TEST(strict_stop_leaves_readable_file)
{
	const char *prog = tmp_path("nosys"), *src = tmp_path("nosys.c"), *data = tmp_path("strict.data");
	FILE *f = fopen(src, "w");
	fputs("#include <unistd.h>\nint main(void) { volatile long s = 0;\n"
	      "for (long i = 0; i < 2000000; i++) s += i & 7;\nreturn (int)syscall(499) + (int)(s & 1); }\n", f);
	fclose(f);
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "cc -O1 -static -o %s %s", prog, src);
	ck_assert_int_eq(system(cmd), 0);
	char *a[] = {(char *)pmusim(), "record", "--strict", "-c", "100003", "-b", "-o", (char *)data, "--",
		     (char *)prog, NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, NULL), 2);
	int lines;
	ck_assert(perf_script_ok(data, &lines));
	ck_assert_int_gt(lines, 10);
}
END_TEST

/* Ctrl-C: exit status 130 and a complete perf.data of what was sampled. */
START_TEST(sigint_leaves_readable_file)
{
	const char *data = tmp_path("int.data"), *prog = tmp_path("spin");
	char cmd[1024];
	snprintf(cmd, sizeof(cmd), "printf 'int main(void){for(volatile long i=0;;i++);}' | "
		 "cc -O1 -static -x c -o %s -", prog);
	ck_assert_int_eq(system(cmd), 0);
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 2);
		execl(pmusim(), pmusim(), "record", "-c", "100000", "-b", "-o", data, "--", prog, (char *)NULL);
		_exit(127);
	}
	usleep(2000000); /* long enough for dozens of samples in the sanitizer build too */
	kill(pid, SIGINT);
	int st, lines;
	waitpid(pid, &st, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 130, "status %d", st);
	ck_assert(perf_script_ok(data, &lines));
	ck_assert_int_gt(lines, 10);
}
END_TEST

/* A full disk (here: a file-size limit of 256 KiB) ends the recording with a
 * message and exit status 2, and the file still holds every complete record. */
START_TEST(full_disk_leaves_readable_file)
{
	const char *data = tmp_path("full.data");
	pid_t pid = fork();
	if (pid == 0) {
		struct rlimit rl = {256 * 1024, 256 * 1024};
		signal(SIGXFSZ, SIG_IGN);
		setrlimit(RLIMIT_FSIZE, &rl);
		int fd = open("/dev/null", O_WRONLY);
		dup2(fd, 1);
		dup2(fd, 2);
		execl(pmusim(), pmusim(), "record", "-e", "br_inst_retired.near_taken", "-c", "100", "-b", "-o",
		      data, "--", wl("loops"), (char *)NULL);
		_exit(127);
	}
	int st, lines;
	waitpid(pid, &st, 0);
	ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 2, "status %d", st);
	ck_assert(perf_script_ok(data, &lines));
	ck_assert_int_gt(lines, 50);
}
END_TEST

/* Bad options end with one line and exit status 2. */
static const struct {
	int line;
	const char *args[8];
} bad_rows[] = {
	{__LINE__, {"record", "-e", "cache-misses", "--", "true"}},
	{__LINE__, {"record", "-c", "0", "--", "true"}},
	{__LINE__, {"record", "--lbr-depth", "12", "-b", "--", "true"}},
	{__LINE__, {"record", "-j", "any,sideways", "--", "true"}},
	{__LINE__, {"record", "-c", "10", "--delta", "20x", "--", "true"}},
	{__LINE__, {"stat", "-e", "cycles:k", "--", "true"}},
	{__LINE__, {"stat", "-e", "branches,branches,branches,branches,branches,branches,branches,branches,branches", "--", "true"}},
	{__LINE__, {"script", "-i", "/nonexistent.data"}},
	{__LINE__, {"script", "-F", "ip,bogus"}},
};

START_TEST(bad_options)
{
	char *a[12] = {(char *)pmusim()};
	int k = 1;
	for (int i = 0; bad_rows[_i].args[i]; i++)
		a[k++] = (char *)bad_rows[_i].args[i];
	a[k] = NULL;
	const char *err = tmp_path("bad.err");
	int st = run_cmd(a, NULL, NULL, err);
	char *e = slurp(err, NULL);
	ck_assert_msg(st == 2, "row at line %d: status %d", bad_rows[_i].line, st);
	ck_assert_msg(e && count_lines(e) == 1, "row at line %d: not one line: %s", bad_rows[_i].line, e);
	free(e);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("record");
	TCase *tc = tcase_create("stat");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, stat_equals_truth, 0, NWL);
	suite_add_tcase(s, tc);
	tc = tcase_create("perf_reads");
	tcase_set_timeout(tc, 120);
	tcase_add_loop_test(tc, perf_script_reads_recordings, 0, NWL - 1);
	tcase_add_loop_test(tc, brstackinsn_has_no_mismatch, 0, NWL - 1);
	tcase_add_test(tc, perf_report_and_pmusim_script);
	tcase_add_test(tc, dynamic_program_recording);
	tcase_add_loop_test(tc, symbol_aliases_as_perf, 0, 2);
	suite_add_tcase(s, tc);
	tc = tcase_create("record");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, call_only_lbr);
	tcase_add_test(tc, recording_is_deterministic);
	tcase_add_test(tc, crash_leaves_readable_file);
	tcase_add_test(tc, sigint_leaves_readable_file);
	tcase_add_test(tc, strict_stop_leaves_readable_file);
	tcase_add_test(tc, full_disk_leaves_readable_file);
	tcase_add_loop_test(tc, bad_options, 0, (int)(sizeof(bad_rows) / sizeof(bad_rows[0])));
	suite_add_tcase(s, tc);
	return run_suite(s);
}
