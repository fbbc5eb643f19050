/* The recordings of `pmusim uniformity` in child processes (see
 * uniformity_runs.h). A child writes its run as text: a header, then one line
 * per edge with the estimate and the exact count as C99 hexadecimal floats
 * (%a: read back bit for bit). */
#include "cli/uniformity_runs.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/cli.h"
#include "common/arrays.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/infile.h"
#include "profiler/validate.h"

#define MAX_JOBS 1024
#define EXIT_MAX_INSNS 124 /* record's status when --max-insns stopped the program */

static volatile sig_atomic_t stop_signal;
static volatile pid_t child_pid[MAX_JOBS]; /* 0: a free slot */
static const int stop_signals[] = {SIGINT, SIGTERM, SIGHUP};
#define NSTOP (sizeof(stop_signals) / sizeof(stop_signals[0]))

/* The children are stopped here; the main loop reaps them and cleans up. */
static void on_stop(int sig)
{
	if (!stop_signal)
		stop_signal = sig;
	for (size_t i = 0; i < MAX_JOBS; i++)
		if (child_pid[i] > 0)
			kill(child_pid[i], SIGTERM);
}

static void block_stops(int how, sigset_t *old)
{
	sigset_t set;
	sigemptyset(&set);
	for (size_t i = 0; i < NSTOP; i++)
		sigaddset(&set, stop_signals[i]);
	sigprocmask(how, &set, old);
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	(void)st, (void)type, (void)ftw;
	remove(path);
	return 0;
}

static void remove_tree(const char *dir)
{
	nftw(dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

/* dir/name into buf (PATH_MAX bytes); the top directory's name is short enough
 * for every name under it (unif_runs checks). */
static void join(char *buf, const char *dir, const char *name)
{
	if (snprintf(buf, PATH_MAX, "%s/%s", dir, name) >= PATH_MAX)
		buf[0] = 0;
}

/* ---- the child ---- */

static void put_name(FILE *f, const struct symtab *st, uint64_t a)
{
	const struct sym *s = symtab_lookup(st, a);
	if (!s) {
		fprintf(f, " 0x%" PRIx64, a);
		return;
	}
	fputc(' ', f);
	for (const char *c = s->name; *c; c++) /* one word per name */
		fputc(*c == ' ' || *c == '\t' || *c == '\n' ? '_' : *c, f);
	fprintf(f, "+0x%" PRIx64, a - s->addr);
}

static void put_edge(FILE *f, struct binary *bin, const struct edge *e, double est, double exact)
{
	fprintf(f, "e %" PRIx64 " %" PRIx64 " %u %u %a %a", e->from, e->to, e->kind, e->taken, est,
	        exact);
	put_name(f, binary_symtab(bin), e->from);
	put_name(f, binary_symtab(bin), e->to);
	fputc('\n', f);
}

/* The profile's and the truth's edges, merged by (from, to). */
static int write_result(const char *path, struct profile *prof, struct binary *bin,
                        struct edges *truth, size_t unresolved)
{
	char tmp[PATH_MAX + 8];
	snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	const struct profile_stats *st = profile_stats(prof);
	fprintf(f,
	        "samples %" PRIu64 " used %" PRIu64 " dropped %" PRIu64
	        " unresolved %zu\nbinary %s\n",
	        st->samples, st->used, st->dropped, unresolved, binary_path(bin));
	size_t np, nt, i = 0, j = 0;
	const struct edge *p = edges_sorted(profile_edges(prof), &np),
	                  *t = edges_sorted(truth, &nt);
	while (i < np || j < nt) {
		int c = i == np                  ? 1
		        : j == nt                ? -1
		        : p[i].from != t[j].from ? (p[i].from < t[j].from ? -1 : 1)
		        : p[i].to != t[j].to     ? (p[i].to < t[j].to ? -1 : 1)
		                                 : 0;
		if (c < 0)
			put_edge(f, bin, &p[i], p[i].w, 0), i++;
		else if (c > 0)
			put_edge(f, bin, &t[j], 0, t[j].w), j++;
		else
			put_edge(f, bin, &t[j], p[i].w, t[j].w), i++, j++;
	}
	int bad = ferror(f);
	bad |= fclose(f) != 0;
	return bad || rename(tmp, path) < 0 ? -1 : 0;
}

/* Builds the run's profile and reads its truth; 0, or -1 after a message. */
static int profile_run(const struct unif_spec *s, const char *dir, const char *cmd)
{
	char data[PATH_MAX], truth_path[PATH_MAX], result[PATH_MAX], msg[512] = "";
	join(data, dir, "x.data");
	join(truth_path, dir, "t.fdata");
	join(result, dir, "result");
	struct profile_args pa = *s->pa;
	pa.input = data;
	struct profile *prof = NULL;
	struct binary *bin = NULL;
	struct edges *truth = edges_new();
	size_t unresolved = 0;
	int rc = -1;
	if (!truth || profile_args_load(&pa, &prof, &bin, cmd) < 0)
		goto out;
	unlink(data); /* K recordings of a long program fill a disk */
	int err = fdata_read_edges(truth_path, bin, truth, &unresolved, msg, sizeof(msg));
	if (err < 0)
		fprintf(stderr, "%s: %s\n", cmd, msg[0] ? msg : pmusim_strerror(err));
	else if (write_result(result, prof, bin, truth, unresolved) < 0)
		fprintf(stderr, "%s: cannot write %s\n", cmd, result);
	else
		rc = 0;
out:
	edges_free(truth);
	profile_free(prof);
	binary_free(bin);
	return rc;
}

static int redirect(int fd, const char *path, int flags)
{
	int o = open(path, flags, 0600);
	if (o < 0)
		return -1;
	int r = dup2(o, fd);
	close(o);
	return r < 0 ? -1 : 0;
}

/* One run in the child: record, then profile. Its stderr is dir/err; the last
 * line "why: ..." says what went wrong. Exit status 0 or 1. */
static int child_main(const struct unif_spec *s, size_t run, const char *dir, const char *cmd)
{
	char err[PATH_MAX], data[PATH_MAX], truth[PATH_MAX], seed[32];
	join(err, dir, "err");
	join(data, dir, "x.data");
	join(truth, dir, "t.fdata");
	snprintf(seed, sizeof(seed), "%" PRIu64, s->pmu_seed0 + run);
	if (redirect(2, err, O_WRONLY | O_CREAT | O_TRUNC) < 0 ||
	    redirect(1, "/dev/null", O_WRONLY) < 0 ||
	    redirect(0, s->stdin_path ? s->stdin_path : "/dev/null", O_RDONLY) < 0) {
		fprintf(stderr, "why: cannot open the program's standard streams: %s\n",
		        strerror(errno));
		return 1;
	}
	size_t nr = 0, np = 0;
	while (s->record_argv[nr])
		nr++;
	while (s->prog_argv[np])
		np++;
	char **argv = calloc(nr + np + 8, sizeof(char *));
	if (!argv)
		return fprintf(stderr, "why: out of memory\n"), 1;
	arrays_copy(argv, s->record_argv, nr, sizeof(char *));
	char *extra[] = {(char *)"--pmu-seed", seed,  (char *)"-o", data,
	                 (char *)"--truth",    truth, (char *)"--"};
	memcpy(argv + nr, extra, sizeof(extra));
	arrays_copy(argv + nr + 7, s->prog_argv, np, sizeof(char *));
	int st = cmd_record((int)(nr + np + 7), argv);
	free(argv);
	if (st != 0 && st != EXIT_MAX_INSNS) {
		fprintf(stderr, "why: the recording ended with exit status %d\n", st);
		return 1;
	}
	if (profile_run(s, dir, cmd) < 0) {
		fprintf(stderr, "why: the recording could not be profiled\n");
		return 1;
	}
	return 0;
}

/* ---- the parent ---- */

static pid_t launch(const struct unif_spec *s, size_t run, const char *top, const char *cmd)
{
	char dir[PATH_MAX], name[32];
	snprintf(name, sizeof(name), "run%zu", run);
	join(dir, top, name);
	if (mkdir(dir, 0700) < 0)
		return -1;
	fflush(NULL); /* nothing buffered twice */
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	for (size_t i = 0; i < NSTOP; i++) { /* the parent's catching, not an ignored signal */
		struct sigaction cur;
		sigaction(stop_signals[i], NULL, &cur);
		if (cur.sa_handler == on_stop)
			signal(stop_signals[i], SIG_DFL);
	}
	block_stops(SIG_UNBLOCK, NULL);
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() == 1) /* the parent died before the line above */
		_exit(1);
	int rc = child_main(s, run, dir, cmd);
	fflush(NULL);
	_exit(rc);
}

/* The last "why: " line of a run's stderr and the line before it that is not
 * record's summary: "REASON (MESSAGE)". */
static void run_failure(const char *top, size_t run, char *out, size_t len)
{
	char path[PATH_MAX], name[32], line[512], why[512] = "it failed", last[512] = "";
	snprintf(name, sizeof(name), "run%zu/err", run);
	join(path, top, name);
	FILE *f = infile_fopen(path, NULL);
	while (f && fgets(line, sizeof(line), f)) {
		line[strcspn(line, "\n")] = 0;
		if (strncmp(line, "why: ", 5) == 0)
			snprintf(why, sizeof(why), "%s", line + 5);
		else if (line[0] && strncmp(line, "[ pmusim record:", 16) != 0)
			snprintf(last, sizeof(last), "%s", line);
	}
	if (f)
		fclose(f);
	snprintf(out, len, "%s%s%s%s", why, last[0] ? " (" : "", last, last[0] ? ")" : "");
}

static int read_header(FILE *f, struct unif_run *r)
{
	char line[4200];
	if (!fgets(line, sizeof(line), f) ||
	    sscanf(line, "samples %" SCNu64 " used %" SCNu64 " dropped %" SCNu64 " unresolved %zu",
	           &r->samples, &r->used, &r->dropped, &r->unresolved) != 4 ||
	    !fgets(line, sizeof(line), f) || strncmp(line, "binary ", 7) != 0)
		return -1;
	line[strcspn(line, "\n")] = 0;
	return (r->binary = strdup(line + 7)) ? 0 : -1;
}

static int read_result(const char *top, size_t run, struct unif_run *r)
{
	char path[PATH_MAX], name[40], line[4200], a[2048], b[2048];
	snprintf(name, sizeof(name), "run%zu/result", run);
	join(path, top, name);
	FILE *f = infile_fopen(path, NULL);
	if (!f || read_header(f, r) < 0)
		return f ? fclose(f), -1 : -1;
	size_t cap = 0, cap1 = 0, cap2 = 0;
	int bad = 0;
	while (!bad && fgets(line, sizeof(line), f)) {
		struct unif_obs o;
		unsigned kind, taken;
		if (sscanf(line, "e %" SCNx64 " %" SCNx64 " %u %u %lf %lf %2047s %2047s", &o.from,
		           &o.to, &kind, &taken, &o.est, &o.exact, a, b) != 8 || !isfinite(o.est) ||
		    !isfinite(o.exact)) {
			bad = 1;
			break;
		}
		o.kind = (uint8_t)kind, o.taken = (uint8_t)taken;
		struct unif_obs *no = grow_array(r->obs, &cap, r->n + 1, sizeof(*no));
		char **n1 = no ? grow_array(r->from_sym, &cap1, r->n + 1, sizeof(char *)) : NULL;
		char **n2 = n1 ? grow_array(r->to_sym, &cap2, r->n + 1, sizeof(char *)) : NULL;
		if (no)
			r->obs = no;
		if (n1)
			r->from_sym = n1;
		if (!n2 || !(n1[r->n] = strdup(a)) || !(n2[r->n] = strdup(b))) {
			if (n2)
				r->to_sym = n2, free(n1[r->n]);
			bad = 1;
			break;
		}
		r->to_sym = n2;
		r->obs[r->n++] = o;
	}
	fclose(f);
	return bad ? -1 : 0;
}

void unif_run_free(struct unif_run *r)
{
	for (size_t i = 0; i < r->n; i++)
		free(r->from_sym[i]), free(r->to_sym[i]);
	free(r->obs);
	free(r->from_sym);
	free(r->to_sym);
	free(r->binary);
	memset(r, 0, sizeof(*r));
}

/* Reaps one child: its run's status goes to failed[] (1: failed by itself). */
static int reap(pid_t *pid_run, size_t k, int *failed, size_t *running)
{
	int st;
	pid_t pid = waitpid(-1, &st, 0);
	if (pid < 0)
		return errno == EINTR ? 0 : -1;
	block_stops(SIG_BLOCK, NULL);
	for (size_t i = 0; i < MAX_JOBS; i++)
		if (child_pid[i] == pid)
			child_pid[i] = 0;
	block_stops(SIG_UNBLOCK, NULL);
	(*running)--;
	for (size_t i = 0; i < k; i++)
		if (pid_run[i] == pid) {
			pid_run[i] = 0;
			/* killed by us (SIGTERM after another run failed) is not its own failure */
			failed[i] = WIFEXITED(st)             ? WEXITSTATUS(st) != 0
			            : WTERMSIG(st) == SIGTERM ? -1
			                                      : 1;
		}
	return 0;
}

/* Runs the children, jobs at a time; 0, -1 when one failed (*first: the first
 * such run), or -2 when one could not start (*launch_errno says why). */
static int run_all(const struct unif_spec *s, const char *top, const char *cmd, size_t *first,
                   int *launch_errno)
{
	pid_t *pid_run = calloc(s->k, sizeof(pid_t));
	int *failed = calloc(s->k, sizeof(int));
	size_t next = 0, running = 0, jobs = s->jobs < MAX_JOBS ? s->jobs : MAX_JOBS;
	int any = 0, rc = 0;
	if (!pid_run || !failed) {
		free(pid_run), free(failed);
		return fprintf(stderr, "%s: out of memory\n", cmd), -2;
	}
	while (running > 0 || (next < s->k && !stop_signal && !any)) {
		while (running < jobs && next < s->k && !stop_signal && !any) {
			sigset_t old;
			block_stops(SIG_BLOCK, &old);
			pid_t pid = launch(s, next, top, cmd);
			if (pid > 0) {
				size_t slot = 0;
				while (child_pid[slot])
					slot++;
				child_pid[slot] = pid_run[next] = pid;
				running++;
			} else {
				any = 1, failed[next] = 2, *launch_errno = errno;
			}
			next++;
			sigprocmask(SIG_SETMASK, &old, NULL);
		}
		if (running && reap(pid_run, s->k, failed, &running) < 0)
			break;
		/* after a failure the later runs are pointless; the earlier ones go on, so
		 * that the failure reported is the first run's that fails, whatever ran
		 * at the same time */
		for (size_t i = 0; i < s->k; i++)
			if (failed[i] > 0) {
				any = 1;
				for (size_t j = i + 1; j < s->k; j++)
					if (pid_run[j] > 0)
						kill(pid_run[j], SIGTERM);
				break;
			}
	}
	for (size_t i = 0; i < s->k; i++)
		if (failed[i] > 0) {
			*first = i;
			rc = failed[i] == 2 ? -2 : -1;
			break;
		}
	free(pid_run);
	free(failed);
	return rc;
}

static const char *tmp_root(void)
{
	const char *t = getenv("TMPDIR");
	return t && t[0] ? t : "/tmp";
}

/* Our handler for the stop signals that are not ignored (a shell starts
 * background jobs with SIGINT ignored; nohup ignores SIGHUP). */
static void catch_stops(struct sigaction *old)
{
	struct sigaction sa = {.sa_handler = on_stop};
	sigemptyset(&sa.sa_mask);
	for (size_t i = 0; i < NSTOP; i++) {
		sigaction(stop_signals[i], NULL, &old[i]);
		if (old[i].sa_handler != SIG_IGN)
			sigaction(stop_signals[i], &sa, NULL);
	}
}

static void restore_stops(const struct sigaction *old)
{
	for (size_t i = 0; i < NSTOP; i++)
		sigaction(stop_signals[i], &old[i], NULL);
}

/* After a failure: one line about it. */
static void report_failure(const struct unif_spec *s, const char *top, int rc, size_t first,
                           int launch_errno, const char *cmd)
{
	char why[1200];
	if (rc == -1) {
		run_failure(top, first, why, sizeof(why));
		fprintf(stderr, "%s: run %zu (--pmu-seed %" PRIu64 "): %s\n", cmd, first + 1,
		        s->pmu_seed0 + first, why);
	} else if (rc == -2) {
		fprintf(stderr, "%s: cannot start run %zu: %s\n", cmd, first + 1,
		        strerror(launch_errno));
	}
}

int unif_runs(const struct unif_spec *s, struct unif_run *runs, const char *cmd)
{
	char top[PATH_MAX];
	if (strlen(tmp_root()) > PATH_MAX - 256)
		return fprintf(stderr, "%s: the temporary directory's name is too long: %s\n", cmd,
		               tmp_root()),
		       -1;
	join(top, tmp_root(), "pmusim-uniformity.XXXXXX");
	struct sigaction old[NSTOP];
	catch_stops(old);
	if (!mkdtemp(top)) {
		fprintf(stderr, "%s: cannot make a temporary directory in %s: %s\n", cmd,
		        tmp_root(), strerror(errno));
		restore_stops(old);
		return -1;
	}
	size_t first = 0;
	int launch_errno = 0;
	int rc = run_all(s, top, cmd, &first, &launch_errno);
	if (!stop_signal)
		report_failure(s, top, rc, first, launch_errno, cmd);
	for (size_t i = 0; i < s->k && rc == 0 && !stop_signal; i++)
		if (read_result(top, i, &runs[i]) < 0) {
			fprintf(stderr, "%s: run %zu left no readable result\n", cmd, i + 1);
			rc = -1;
		}
	remove_tree(top);
	restore_stops(old);
	if (stop_signal) { /* the runs are stopped and their files gone: die of it */
		signal(stop_signal, SIG_DFL);
		raise(stop_signal);
		_exit(128 + stop_signal);
	}
	if (rc < 0)
		for (size_t i = 0; i < s->k; i++)
			unif_run_free(&runs[i]);
	return rc < 0 ? -1 : 0;
}
