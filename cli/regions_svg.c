/* The SVGs of `report --regions --svg DIR`: one per kept region, DIR/region-0xSTART.svg,
 * drawn by Graphviz's dot (`dot -Tsvg`, reading the region's DOT of cli/regions_dot.c on
 * its standard input). dot is looked up on PATH as execvp would; each SVG goes through
 * common/outfile.h, a temporary in DIR renamed into place only when dot exited 0, so a
 * failure leaves no partial file. */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli/report_regions.h"
#include "common/outfile.h"

extern char **environ;

/* The path of dot on PATH (caller frees), NULL when none is an executable file. */
static char *find_dot(void)
{
	const char *path = getenv("PATH");
	if (!path || !*path)
		path = "/usr/local/bin:/usr/bin:/bin"; /* what execvp falls back to, near enough */
	while (*path) {
		size_t n = strcspn(path, ":");
		char *p = malloc(n + 8);
		if (!p)
			return NULL;
		/* an empty entry is the working directory */
		snprintf(p, n + 8, "%.*s%sdot", (int)n, n ? path : "", n ? "/" : "./");
		struct stat st;
		if (stat(p, &st) == 0 && S_ISREG(st.st_mode) && access(p, X_OK) == 0)
			return p;
		free(p);
		path += n + (path[n] == ':');
	}
	return NULL;
}

int region_svg_check(const char *dir, const char *cmd)
{
	char *dot = find_dot();
	if (!dot)
		return fprintf(stderr,
		               "%s: --svg needs Graphviz's dot (apt-get install graphviz)\n", cmd),
		       -1;
	free(dot);
	struct stat st;
	if (stat(dir, &st) != 0)
		return fprintf(stderr, "%s: --svg %s: %s\n", cmd, dir, strerror(errno)), -1;
	if (!S_ISDIR(st.st_mode))
		return fprintf(stderr, "%s: --svg %s: not a directory\n", cmd, dir), -1;
	if (access(dir, W_OK | X_OK) != 0)
		return fprintf(stderr, "%s: --svg %s: %s\n", cmd, dir, strerror(errno)), -1;
	return 0;
}

/* The first line of what dot said on its standard error, into buf. */
static void first_line(FILE *err, char *buf, size_t len)
{
	buf[0] = 0;
	rewind(err);
	if (fgets(buf, (int)len, err))
		buf[strcspn(buf, "\n")] = 0;
}

/* Runs dot -Tsvg on region ri's DOT with its standard output on out; 0, or -1 with
 * why in msg. */
static int run_dot(const char *dot, const struct region_sel *s, size_t ri, FILE *out, char *msg,
                   size_t ml)
{
	int p[2];
	FILE *err = tmpfile(); /* dot's messages, read after it ended: no pipe to drain */
	if (!err || pipe2(p, O_CLOEXEC) != 0) {
		snprintf(msg, ml, "%s", strerror(errno));
		if (err)
			fclose(err);
		return -1;
	}
	posix_spawn_file_actions_t fa;
	posix_spawnattr_t at;
	sigset_t def, none;
	sigemptyset(&def);
	sigaddset(&def, SIGPIPE); /* report ignores it; dot gets the default back */
	sigemptyset(&none);
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_adddup2(&fa, p[0], 0);
	posix_spawn_file_actions_adddup2(&fa, fileno(out), 1);
	posix_spawn_file_actions_adddup2(&fa, fileno(err), 2);
	posix_spawnattr_init(&at);
	posix_spawnattr_setflags(&at, POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK);
	posix_spawnattr_setsigdefault(&at, &def);
	posix_spawnattr_setsigmask(&at, &none);
	char a0[] = "dot", a1[] = "-Tsvg", *argv[] = {a0, a1, NULL};
	pid_t pid;
	int rc = posix_spawn(&pid, dot, &fa, &at, argv, environ);
	posix_spawn_file_actions_destroy(&fa);
	posix_spawnattr_destroy(&at);
	close(p[0]);
	if (rc != 0) {
		close(p[1]);
		fclose(err);
		return snprintf(msg, ml, "cannot run %s: %s", dot, strerror(rc)), -1;
	}
	FILE *in = fdopen(p[1], "w");
	if (in) {
		region_sel_write_dot_region(in, s, ri); /* dot ending early is told by its status */
		fclose(in);
	} else {
		close(p[1]);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && in) {
		fclose(err);
		return 0;
	}
	char said[300];
	first_line(err, said, sizeof(said));
	fclose(err);
	if (!in)
		snprintf(msg, ml, "out of memory");
	else if (WIFSIGNALED(st))
		snprintf(msg, ml, "killed by signal %d", WTERMSIG(st));
	else
		snprintf(msg, ml, "exit %d%s%s", WIFEXITED(st) ? WEXITSTATUS(st) : -1,
		         said[0] ? ": " : "", said);
	return -1;
}

int region_sel_write_svgs(const struct region_sel *s, const char *dir, const char *cmd)
{
	char *dot = find_dot();
	if (!dot)
		return fprintf(stderr,
		               "%s: --svg needs Graphviz's dot (apt-get install graphviz)\n", cmd),
		       -1;
	size_t n, *o = region_sel_kept_order(s, &n);
	int r = o ? 0 : (fprintf(stderr, "%s: out of memory\n", cmd), -1);
	for (size_t i = 0; r == 0 && i < n; i++) {
		size_t len = strlen(dir) + 48;
		char *path = malloc(len), msg[400];
		if (!path) {
			r = (fprintf(stderr, "%s: out of memory\n", cmd), -1);
			break;
		}
		snprintf(path, len, "%s/region-0x%" PRIx64 ".svg", dir, region_sel_start(s, o[i]));
		struct outfile of;
		if (outfile_open(&of, path) < 0) {
			r = (fprintf(stderr, "%s: cannot create %s: %s\n", cmd, path,
			             strerror(errno)),
			     -1);
		} else if (run_dot(dot, s, o[i], of.f, msg, sizeof(msg)) < 0) {
			outfile_abort(&of);
			r = (fprintf(stderr, "%s: dot -Tsvg failed on region 0x%" PRIx64 ": %s\n",
			             cmd, region_sel_start(s, o[i]), msg),
			     -1);
		} else if (outfile_commit(&of) < 0) {
			r = (fprintf(stderr, "%s: cannot write %s: %s\n", cmd, path,
			             strerror(errno)),
			     -1);
		}
		free(path);
	}
	free(o);
	free(dot);
	return r;
}
