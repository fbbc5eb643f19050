/* valgrind lackey's memory trace as a reference (see lackey_ref.h): valgrind runs with
 * --log-fd on a pipe, and the trace is parsed a line at a time as it arrives, so that
 * its size does not matter. Line formats: valgrind 3.19 lackey/lk_main.c (trace_instr,
 * trace_load, trace_store, trace_modify; lk_fini's counts). */
#include "tests/e2e/lackey_ref.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* The descriptor number the trace is written to in valgrind's process. */
#define LOG_FD 3
/* Bytes read at a time; also the longest line accepted. */
#define READ_CHUNK (1 << 20)

struct parser {
	lackey_visit_fn visit;
	void *ctx;
	struct lackey_insn cur;
	int have_cur;
	int stop;
	uint64_t total;
	int64_t lackey_says; /* lackey's "guest instrs:" figure, -1 until read */
	char *msg;
	size_t msglen;
};

static int fail(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t msglen, const char *fmt, ...)
{
	if (msg && msglen) {
		va_list ap;
		va_start(ap, fmt);
		int k = snprintf(msg, msglen, "lackey: ");
		if (k >= 0 && (size_t)k < msglen)
			vsnprintf(msg + k, msglen - (size_t)k, fmt, ap);
		va_end(ap);
	}
	return -1;
}

/* "HEX,DEC" exactly from s to end: lackey's "%08lx,%lu". */
static int parse_pair(const char *s, const char *end, uint64_t *addr, uint64_t *size)
{
	uint64_t a = 0, z = 0;
	const char *p = s;
	for (; p < end && *p != ','; p++) {
		int d = *p >= '0' && *p <= '9'   ? *p - '0'
		        : *p >= 'a' && *p <= 'f' ? *p - 'a' + 10
		                                 : -1;
		if (d < 0 || a >> 60)
			return -1;
		a = a << 4 | (uint64_t)d;
	}
	if (p == s || p == end)
		return -1;
	const char *q = ++p;
	for (; p < end; p++) {
		if (*p < '0' || *p > '9' || z > UINT32_MAX)
			return -1;
		z = z * 10 + (uint64_t)(*p - '0');
	}
	if (p == q)
		return -1;
	*addr = a, *size = z;
	return 0;
}

static void deliver(struct parser *ps, uint64_t next_ip)
{
	ps->cur.next_ip = next_ip;
	if (ps->visit && ps->visit(&ps->cur, ps->ctx))
		ps->stop = 1;
}

/* lk_fini's "  guest instrs:  20,025,297" among valgrind's "==PID==" lines. */
static void read_count(struct parser *ps, const char *s, const char *end)
{
	static const char key[] = "guest instrs:";
	const char *p = memmem(s, (size_t)(end - s), key, sizeof(key) - 1);
	if (!p)
		return;
	int64_t v = 0;
	int digits = 0;
	for (p += sizeof(key) - 1; p < end; p++) {
		if (*p >= '0' && *p <= '9')
			v = v * 10 + (*p - '0'), digits++;
		else if (*p != ',' && *p != ' ')
			return;
	}
	if (digits)
		ps->lackey_says = v;
}

/* One line without its newline; -1 with a message when it is not lackey's. */
static int parse_line(struct parser *ps, const char *s, size_t len)
{
	const char *end = s + len;
	uint64_t addr, size;
	if (len > 3 && s[0] == 'I' && s[1] == ' ' && s[2] == ' ') {
		if (parse_pair(s + 3, end, &addr, &size) < 0 || size == 0)
			goto bad;
		if (ps->have_cur) {
			deliver(ps, addr);
			if (ps->stop)
				return 0;
		}
		memset(&ps->cur, 0, sizeof(ps->cur));
		ps->cur.n = ++ps->total;
		ps->cur.ip = addr;
		ps->cur.size = (uint32_t)size;
		ps->have_cur = 1;
		return 0;
	}
	if (len > 3 && s[0] == ' ' && s[2] == ' ' && (s[1] == 'L' || s[1] == 'S' || s[1] == 'M')) {
		if (!ps->have_cur)
			return fail(ps->msg, ps->msglen,
			            "a data access before any instruction: %.80s", s);
		if (parse_pair(s + 3, end, &addr, &size) < 0 || size == 0)
			goto bad;
		struct lackey_insn *c = &ps->cur;
		if (c->naccesses < LACKEY_MAX_ACCESSES)
			c->access[c->naccesses] = (struct lackey_access){
			    .addr = addr, .size = (uint32_t)size, .type = s[1]};
		c->naccesses++;
		return 0;
	}
	if (len >= 2 && (!memcmp(s, "==", 2) || !memcmp(s, "--", 2) || !memcmp(s, "**", 2))) {
		read_count(ps, s, end);
		return 0;
	}
bad:
	return fail(ps->msg, ps->msglen, "a line of the trace it does not know: \"%.80s\"", s);
}

/* Every complete line of buf; the incomplete rest is moved to the start. Returns the
 * bytes kept, or -1. */
static long parse_lines(struct parser *ps, char *buf, size_t have)
{
	char *p = buf, *end = buf + have, *nl;
	while (!ps->stop && (nl = memchr(p, '\n', (size_t)(end - p)))) {
		*nl = 0;
		if (parse_line(ps, p, (size_t)(nl - p)) < 0)
			return -1;
		p = nl + 1;
	}
	if (ps->stop)
		return 0;
	size_t rest = (size_t)(end - p);
	memmove(buf, p, rest);
	return (long)rest;
}

/* The first line the program or valgrind wrote to stderr, for messages. */
static void first_line(int fd, char *buf, size_t len)
{
	buf[0] = 0;
	ssize_t n = pread(fd, buf, len - 1, 0);
	if (n <= 0)
		return;
	buf[n] = 0;
	buf[strcspn(buf, "\n")] = 0;
}

/* In the child: the standard streams and the trace's descriptor, then valgrind. */
static void exec_valgrind(char *const *vargv, const char *stdout_path, int err_fd, int log_w)
{
	int in = open("/dev/null", O_RDONLY);
	int out = open(stdout_path ? stdout_path : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(err_fd, 2) < 0)
		_exit(126);
	if (log_w == LOG_FD ? fcntl(LOG_FD, F_SETFD, 0) < 0 : dup2(log_w, LOG_FD) < 0)
		_exit(126);
	execvp(vargv[0], vargv);
	_exit(127);
}

/* Reads the trace until its end or until the visitor stops; -1 on a bad line. */
static int read_trace(struct parser *ps, int fd)
{
	char *buf = malloc(READ_CHUNK + 1);
	if (!buf)
		return fail(ps->msg, ps->msglen, "out of memory");
	size_t have = 0;
	int rc = 0;
	while (!ps->stop) {
		ssize_t n = read(fd, buf + have, READ_CHUNK - have);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			rc = fail(ps->msg, ps->msglen, "reading the trace: %s", strerror(errno));
			break;
		}
		if (n == 0) {
			if (have)
				rc = fail(ps->msg, ps->msglen, "the trace ends inside a line");
			break;
		}
		if ((size_t)n < READ_CHUNK / 4) {
			/* Valgrind writes every line with a write() of its own; a reader
			 * that waits for the pipe to fill saves the writer a wake-up per
			 * line: 2.5 times faster (only speed depends on it). */
			struct timespec pause = {0, 5000000};
			nanosleep(&pause, NULL);
		}
		long rest = parse_lines(ps, buf, have + (size_t)n);
		if (rest < 0) {
			rc = -1;
			break;
		}
		have = (size_t)rest;
		if (have == READ_CHUNK) {
			rc = fail(ps->msg, ps->msglen, "a line of the trace longer than %d bytes",
			          READ_CHUNK);
			break;
		}
	}
	free(buf);
	if (rc == 0 && !ps->stop && ps->have_cur)
		deliver(ps, 0);
	return rc;
}

int lackey_walk(const char *const argv[], const char *stdout_path, lackey_visit_fn visit, void *ctx,
                struct lackey_end *end, char *msg, size_t msglen)
{
	size_t nargs = 0;
	while (argv[nargs])
		nargs++;
	if (nargs == 0)
		return fail(msg, msglen, "no program to run");
	char logarg[32];
	snprintf(logarg, sizeof(logarg), "--log-fd=%d", LOG_FD);
	const char **vargv = calloc(nargs + 8, sizeof(*vargv));
	if (!vargv)
		return fail(msg, msglen, "out of memory");
	vargv[0] = "valgrind", vargv[1] = "--tool=lackey", vargv[2] = "--trace-mem=yes";
	/* VEX 3.19 chases conditional branches by running the code after one
	 * speculatively, its results selected with ITE: lackey's calls for those
	 * instructions run unguarded, and a 3-round loop prints 4 rounds of I lines.
	 * Without chasing every superblock ends at a branch. */
	vargv[3] = "--vex-guest-chase=no";
	vargv[4] = logarg;
	/* no gdbserver FIFOs in $TMPDIR: a run the visitor stops is killed and could
	 * not remove them */
	vargv[5] = "--vgdb=no";
	/* VEX's IR optimiser removes a load whose value is never used (ibs_ops' pop rcx,
	 * whose rcx is overwritten before it is read): lackey, instrumenting the
	 * optimised IR, would print no L line for an access the CPU makes */
	vargv[6] = "--vex-iropt-level=0";
	memcpy(vargv + 7, argv, nargs * sizeof(*argv));

	int pfd[2], err_fd = memfd_create("lackey-stderr", MFD_CLOEXEC);
	if (err_fd < 0 || pipe2(pfd, O_CLOEXEC) < 0) {
		if (err_fd >= 0)
			close(err_fd);
		free(vargv);
		return fail(msg, msglen, "pipe: %s", strerror(errno));
	}
	fcntl(pfd[0], F_SETPIPE_SZ, READ_CHUNK); /* room for 5 ms of trace: see read_trace */
	pid_t pid = fork();
	if (pid == 0)
		exec_valgrind((char *const *)vargv, stdout_path, err_fd, pfd[1]);
	close(pfd[1]);
	free(vargv);
	if (pid < 0) {
		close(pfd[0]);
		close(err_fd);
		return fail(msg, msglen, "fork: %s", strerror(errno));
	}

	struct parser ps = {
	    .visit = visit, .ctx = ctx, .lackey_says = -1, .msg = msg, .msglen = msglen};
	int rc = read_trace(&ps, pfd[0]);
	if (rc < 0 || ps.stop)
		kill(pid, SIGKILL); /* valgrind and the program are one process */
	close(pfd[0]);
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	int status = WIFSIGNALED(st) ? 128 + WTERMSIG(st) : WEXITSTATUS(st);
	char err[sizeof(end->stderr_line)];
	first_line(err_fd, err, sizeof(err));
	close(err_fd);
	if (rc < 0)
		return -1;
	if (!ps.stop && ps.total == 0)
		return fail(msg, msglen, "valgrind (exit status %d) traced no instruction: %s",
		            status, err[0] ? err : "nothing on stderr");
	if (!ps.stop && ps.lackey_says != (int64_t)ps.total)
		return fail(msg, msglen,
		            "lackey counted %" PRId64 " instructions, its trace has %" PRIu64,
		            ps.lackey_says, ps.total);
	*end = (struct lackey_end){.total = ps.total, .status = status, .stopped = ps.stop};
	memcpy(end->stderr_line, err, sizeof(err));
	return 0;
}

struct pick {
	const uint64_t *want;
	size_t nwant, k;
	struct lackey_insn *out;
};

static int pick_visit(const struct lackey_insn *insn, void *vctx)
{
	struct pick *p = vctx;
	while (p->k < p->nwant && p->want[p->k] == insn->n)
		p->out[p->k++] = *insn;
	return 0; /* to the end: the exit status and lackey's count are checked */
}

int lackey_pick_out(const char *const argv[], const char *stdout_path, const uint64_t *want,
                    size_t nwant, struct lackey_insn *out, char *msg, size_t msglen)
{
	for (size_t i = 0; i < nwant; i++)
		if (want[i] == 0 || (i && want[i] < want[i - 1]))
			return fail(msg, msglen,
			            "wanted instruction numbers must be 1 or more, ascending "
			            "(number %zu is %" PRIu64 ")",
			            i, want[i]);
	struct pick p = {.want = want, .nwant = nwant, .out = out};
	struct lackey_end end;
	if (lackey_walk(argv, stdout_path, pick_visit, &p, &end, msg, msglen) < 0)
		return -1;
	if (end.status != 0)
		return fail(msg, msglen, "%s exited with status %d under valgrind: %s", argv[0],
		            end.status, end.stderr_line);
	if (p.k < nwant)
		return fail(msg, msglen, "instruction %" PRIu64 " wanted, the program ran %" PRIu64,
		            want[p.k], end.total);
	return 0;
}

int lackey_pick(const char *const argv[], const uint64_t *want, size_t nwant,
                struct lackey_insn *out, char *msg, size_t msglen)
{
	return lackey_pick_out(argv, NULL, want, nwant, out, msg, msglen);
}

int64_t lackey_count(const char *const argv[], char *msg, size_t msglen)
{
	struct lackey_end end;
	if (lackey_walk(argv, NULL, NULL, NULL, &end, msg, msglen) < 0)
		return -1;
	if (end.status != 0)
		return fail(msg, msglen, "%s exited with status %d under valgrind: %s", argv[0],
		            end.status, end.stderr_line);
	return (int64_t)end.total;
}
