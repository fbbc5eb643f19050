/* End-to-end test helpers (see e2e_util.h). */
#include "tests/e2e/e2e_util.h"

#include <assert.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/unit/tmp_dir.h"

/* The test's configuration, read before the environment is replaced. */
static struct {
	int ready;
	pid_t owner; /* the process that made dir and removes it */
	char pmusim[1024], workloads[1024], shared[1024];
	char dir[64];
	int sanitized; /* E2E_SANITIZED: pmusim is the ASan build (make e2e-asan) */
} cfg;

static void copy_env(char *dst, size_t len, const char *name, const char *dflt)
{
	const char *v = getenv(name);
	snprintf(dst, len, "%s", v && *v ? v : dflt);
}

static void remove_dir_at_exit(void)
{
	if (getpid() == cfg.owner)
		tmp_dir_remove(cfg.dir);
}

/* Variables the programs under test see, and nothing else: the caller's
 * environment (PMUSIM=, CI=, the shell's PWD, a long TMPDIR) would move the
 * programs' stacks and change their counts from caller to caller. Check's own CK_*
 * settings and the sanitizers' options stay, as the developer chose them. */
static void fixed_environment(void)
{
	static const char *const keep[] = {"CK_", "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS="};
	char **saved = NULL;
	size_t n = 0;
	for (char **e = environ; *e; e++)
		for (size_t k = 0; k < sizeof(keep) / sizeof(keep[0]); k++)
			if (strncmp(*e, keep[k], strlen(keep[k])) == 0) {
				saved = realloc(saved, (n + 1) * sizeof(*saved));
				saved[n++] = strdup(*e);
			}
	clearenv();
	for (size_t i = 0; i < n; i++)
		putenv(saved[i]); /* putenv keeps the string: not freed */
	free(saved);
	setenv("PATH", "/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin", 1);
	setenv("LC_ALL", "C", 1);
	/* every file a tool makes for itself (perf's ~/.debug, glog's logs of AutoFDO's
	 * tools, valgrind's and gcc's temporaries) lands in the test's own directory */
	setenv("HOME", cfg.dir, 1);
	setenv("TMPDIR", cfg.dir, 1);
	setenv("GLOG_log_dir", cfg.dir, 1);
}

void e2e_init(void)
{
	copy_env(cfg.pmusim, sizeof(cfg.pmusim), "PMUSIM", "build/release/pmusim");
	cfg.sanitized = getenv("E2E_SANITIZED") && *getenv("E2E_SANITIZED") == '1';
	copy_env(cfg.workloads, sizeof(cfg.workloads), "WORKLOADS", "build/workloads");
	copy_env(cfg.shared, sizeof(cfg.shared), "PMUSIM_SHARED", "../shared");
	/* always directly in /tmp, so that the guests' environment has the same length
	 * whoever runs the test */
	snprintf(cfg.dir, sizeof(cfg.dir), "/tmp/pmusim-e2e-XXXXXX");
	if (!mkdtemp(cfg.dir)) {
		perror("e2e_init: mkdtemp");
		exit(2);
	}
	cfg.owner = getpid();
	atexit(remove_dir_at_exit);
	fixed_environment();
	cfg.ready = 1;
}

const char *pmusim(void)
{
	assert(cfg.ready && "e2e_init() first");
	return cfg.pmusim;
}

int e2e_sanitized(void)
{
	assert(cfg.ready && "e2e_init() first");
	return cfg.sanitized;
}

int e2e_rows(int n)
{
	return e2e_sanitized() ? (n + 3) / 4 : n;
}

int e2e_row(int i)
{
	return e2e_sanitized() ? 4 * i : i;
}

const char *shared_dir(void)
{
	assert(cfg.ready && "e2e_init() first");
	return cfg.shared;
}

const char *workloads_dir(void)
{
	assert(cfg.ready && "e2e_init() first");
	return cfg.workloads;
}

const char *wl(const char *name)
{
	static char buf[8][2048];
	static int slot;
	assert(cfg.ready && "e2e_init() first");
	char *b = buf[slot++ % 8];
	snprintf(b, sizeof(buf[0]), "%s/%s", cfg.workloads, name);
	return b;
}

int run_cmd(char *const argv[], const char *in, const char *out, const char *err)
{
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
		int fi = open(in ? in : "/dev/null", O_RDONLY);
		int fo = open(out ? out : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int fe = (err && out && strcmp(err, out) == 0)
				 ? dup(fo) /* one file for both: share the offset */
				 : open(err ? err : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fi < 0 || fo < 0 || fe < 0)
			_exit(126);
		dup2(fi, 0);
		dup2(fo, 1);
		dup2(fe, 2);
		execvp(argv[0], argv);
		_exit(127);
	}
	int st;
	if (waitpid(pid, &st, 0) < 0)
		return -1;
	if (WIFSIGNALED(st))
		return 128 + WTERMSIG(st);
	return WEXITSTATUS(st);
}

char *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	size_t cap = 4096, n = 0;
	char *buf = malloc(cap);
	size_t r;
	while (buf && (r = fread(buf + n, 1, cap - n - 1, f)) > 0) {
		n += r;
		if (cap - n < 2) {
			char *nb = realloc(buf, cap *= 2);
			if (!nb) {
				free(buf);
				buf = NULL;
			}
			buf = nb;
		}
	}
	fclose(f);
	if (buf)
		buf[n] = 0;
	if (len)
		*len = n;
	return buf;
}

static int push(struct jump_rec **v, size_t *n, size_t *cap, struct jump_rec r)
{
	if (*n == *cap) {
		*cap = *cap ? *cap * 2 : 256;
		struct jump_rec *nv = realloc(*v, *cap * sizeof(**v));
		if (!nv)
			return -1;
		*v = nv;
	}
	(*v)[(*n)++] = r;
	return 0;
}

/* Callgrind position: "0x..." absolute, "+N"/"-N" relative (decimal), "*" same. */
static uint64_t parse_pos(const char *p, uint64_t ref, const char **end)
{
	uint64_t v = ref;
	if (*p == '*') {
		p++;
	} else if (*p == '+' || *p == '-') {
		int neg = *p == '-';
		uint64_t d = strtoull(p + 1, (char **)&p, 10);
		v = neg ? ref - d : ref + d;
	} else {
		v = strtoull(p, (char **)&p, 0);
	}
	if (end)
		*end = p;
	return v;
}

int callgrind_jumps(const char *path, struct jump_rec **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[4096];
	uint64_t ref = 0;
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	int pending = 0;
	struct jump_rec pj = {0};
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;
		if (strncmp(p, "jump=", 5) == 0 || strncmp(p, "jcnd=", 5) == 0) {
			pj = (struct jump_rec){0};
			pj.cond = p[1] == 'c';
			p += 5;
			pj.count = strtoull(p, (char **)&p, 10);
			if (pj.cond && *p == '/')
				pj.executed = strtoull(p + 1, (char **)&p, 10);
			while (*p == ' ')
				p++;
			pj.to = parse_pos(p, ref, NULL);
			pending = 1;
			continue;
		}
		if ((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '*') {
			ref = parse_pos(p, ref, NULL);
			if (pending) {
				/* the same jump appears once per context callgrind separates
				 * (recursion levels, cycles): sum them */
				pj.from = ref;
				size_t k = 0;
				while (k < *n && ((*out)[k].from != pj.from || (*out)[k].to != pj.to))
					k++;
				if (k < *n) {
					(*out)[k].count += pj.count;
					(*out)[k].executed += pj.executed;
				} else {
					push(out, n, &cap, pj);
				}
				pending = 0;
			}
			continue;
		}
		/* calls= lines are followed by the call site's position line: not a jump */
		if (strncmp(p, "calls=", 6) == 0) {
			pending = 0;
			continue;
		}
	}
	fclose(f);
	return 0;
}

uint64_t callgrind_executions(const char *path, uint64_t addr)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	char line[4096];
	uint64_t ref = 0, total = 0;
	int after_call = 0;
	while (fgets(line, sizeof(line), f)) {
		const char *p = line;
		if (strncmp(p, "calls=", 6) == 0) {
			after_call = 1; /* the next position line carries inclusive call cost */
			continue;
		}
		if (strncmp(p, "jump=", 5) == 0 || strncmp(p, "jcnd=", 5) == 0)
			continue;
		if ((*p >= '0' && *p <= '9') || *p == '+' || *p == '-' || *p == '*') {
			const char *q;
			ref = parse_pos(p, ref, &q);
			if (after_call) {
				after_call = 0;
				continue;
			}
			/* "<line> <Ir>" follow the position */
			unsigned long long ln, ir;
			if (ref == addr && sscanf(q, " %llu %llu", &ln, &ir) == 2)
				total += ir;
		}
	}
	fclose(f);
	return total;
}

static int json_u64(const char *line, const char *key, uint64_t *v)
{
	char k[64];
	snprintf(k, sizeof(k), "\"%s\": ", key);
	const char *p = strstr(line, k);
	if (!p)
		return -1;
	p += strlen(k);
	if (*p == '"')
		p++;
	*v = strtoull(p, NULL, 0);
	return 0;
}

static int json_kind(const char *line, char *kind, size_t len)
{
	const char *p = strstr(line, "\"kind\": \"");
	if (!p)
		return -1;
	p += 9;
	size_t i = 0;
	while (*p && *p != '"' && i + 1 < len)
		kind[i++] = *p++;
	kind[i] = 0;
	return 0;
}

/* The section of a truth JSON a line belongs to: 1 branches, 2 transfers,
 * 3 rep, 0 elsewhere (functions, blocks), given the previous line's section. */
static int json_section(const char *line, int section)
{
	if (strstr(line, "\"branches\": ["))
		return 1;
	if (strstr(line, "\"transfers\": ["))
		return 2;
	if (strstr(line, "\"rep\": ["))
		return 3;
	if (strstr(line, "\"functions\": [") || strstr(line, "\"blocks\": ["))
		return 0;
	return section;
}

int truth_jumps(const char *path, struct jump_rec **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[8192], kind[32];
	size_t cap = 0;
	int section = 0;
	*out = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		section = json_section(line, section);
		if ((section != 1 && section != 2) || json_kind(line, kind, sizeof(kind)) < 0)
			continue;
		struct jump_rec r = {0};
		if (section == 1) {
			uint64_t taken, nt;
			json_u64(line, "addr", &r.from);
			json_u64(line, "target", &r.to);
			json_u64(line, "fallthrough", &r.fallthrough);
			json_u64(line, "taken", &taken);
			json_u64(line, "not_taken", &nt);
			r.cond = strcmp(kind, "cond") == 0;
			r.count = taken;
			r.executed = r.cond ? taken + nt : 0;
			push(out, n, &cap, r);
		} else if (strcmp(kind, "jmp_ind") == 0) {
			json_u64(line, "from", &r.from);
			json_u64(line, "to", &r.to);
			json_u64(line, "count", &r.count);
			push(out, n, &cap, r);
		}
	}
	fclose(f);
	return 0;
}

int truth_records(const char *path, struct truth_rec **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[8192];
	size_t cap = 0;
	int section = 0, rc = 0;
	*out = NULL;
	*n = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		section = json_section(line, section);
		struct truth_rec r = {0};
		if ((section != 1 && section != 2) || json_kind(line, r.kind, sizeof(r.kind)) < 0)
			continue;
		if (section == 1) {
			json_u64(line, "addr", &r.from);
			json_u64(line, "target", &r.to);
			json_u64(line, "fallthrough", &r.fallthrough);
			json_u64(line, "taken", &r.taken);
			json_u64(line, "not_taken", &r.not_taken);
		} else {
			json_u64(line, "from", &r.from);
			json_u64(line, "to", &r.to);
			json_u64(line, "count", &r.taken);
		}
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			struct truth_rec *v = realloc(*out, cap * sizeof(*v));
			if (!v) {
				rc = -1;
				break;
			}
			*out = v;
		}
		(*out)[(*n)++] = r;
	}
	fclose(f);
	return rc;
}

long long truth_instructions(const char *path)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[256];
	long long v = -1;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, " \"instructions\": %lld,", &v) == 1)
			break;
	fclose(f);
	return v;
}

const char *tmp_path(const char *name)
{
	static char buf[8][512];
	static int slot;
	assert(cfg.ready && "e2e_init() first");
	char *b = buf[slot++ % 8];
	snprintf(b, 512, "%s/%s", cfg.dir, name);
	return b;
}

const char *tmp_path_kept(const char *name)
{
	static char buf[64][512];
	static int slot;
	assert(cfg.ready && "e2e_init() first");
	if (slot == 64) {
		fprintf(stderr, "e2e: more than 64 kept paths in one test process\n");
		abort();
	}
	snprintf(buf[slot], sizeof(buf[slot]), "%s/%s", cfg.dir, name);
	return buf[slot++];
}

void ref_tool_path(char *buf, size_t size, const char *env, const char *name)
{
	const char *e = getenv(env);
	if (e && *e) {
		snprintf(buf, size, "%s", e);
		return;
	}
	ssize_t n = readlink("/proc/self/exe", buf, size - 32);
	if (n < 0)
		n = 0;
	buf[n] = 0;
	char *slash = strrchr(buf, '/');
	snprintf(slash ? slash + 1 : buf, 32, "%s", name);
}

static void strip_local_suffix(char *name)
{
	char *slash = strrchr(name, '/');
	if (slash && slash[1] >= '0' && slash[1] <= '9')
		*slash = 0;
}

int fdata_read(const char *path, struct fdata_edge **out, size_t *n)
{
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	char line[1024];
	size_t cap = 0;
	*out = NULL;
	*n = 0;
	while (fgets(line, sizeof(line), f)) {
		struct fdata_edge e;
		int fs, ts;
		unsigned long long fo, to, mis, cnt;
		if (sscanf(line, "%d %127s %llx %d %127s %llx %llu %llu", &fs, e.from_fn, &fo, &ts, e.to_fn,
			   &to, &mis, &cnt) != 8 || fs != 1 || ts != 1)
			continue;
		strip_local_suffix(e.from_fn);
		strip_local_suffix(e.to_fn);
		e.from_off = fo, e.to_off = to, e.count = cnt;
		if (*n == cap) {
			cap = cap ? cap * 2 : 256;
			struct fdata_edge *nv = realloc(*out, cap * sizeof(*nv));
			if (!nv)
				return -1;
			*out = nv;
		}
		(*out)[(*n)++] = e;
	}
	fclose(f);
	return 0;
}

int truth_totals(const char *json, struct truth_totals *t)
{
	FILE *f = fopen(json, "r");
	if (!f)
		return -1;
	memset(t, 0, sizeof(*t));
	char line[8192], kind[32];
	int section = 0;
	while (fgets(line, sizeof(line), f)) {
		uint64_t a = 0, b = 0;
		if (sscanf(line, " \"instructions\": %" SCNu64 ",", &a) == 1 && !section)
			t->instructions = a;
		section = json_section(line, section);
		if (section == 3 && json_u64(line, "iterations", &a) == 0)
			t->rep_iters += a;
		if ((section != 1 && section != 2) || json_kind(line, kind, sizeof(kind)) < 0)
			continue;
		if (section == 1) {
			json_u64(line, "taken", &a);
			json_u64(line, "not_taken", &b);
			t->branches += a + b;
			t->taken += a;
			if (strcmp(kind, "cond") == 0)
				t->cond += a + b, t->cond_taken += a;
			continue;
		}
		json_u64(line, "count", &a);
		t->branches += a;
		t->taken += a;
		if (strcmp(kind, "call") == 0 || strcmp(kind, "call_ind") == 0)
			t->calls += a;
		if (strcmp(kind, "ret") == 0)
			t->returns += a;
		if (strcmp(kind, "jmp_ind") == 0 || strcmp(kind, "call_ind") == 0)
			t->indirect += a;
	}
	fclose(f);
	return 0;
}

static int cmp_edge(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : x[1] != y[1] ? (x[1] < y[1] ? -1 : 1) : 0;
}

int truth_edge_set(const char *json, struct truth_edge_set *s)
{
	FILE *f = fopen(json, "r");
	if (!f)
		return -1;
	char line[8192], kind[32];
	size_t cap = 0;
	int section = 0;
	s->e = NULL;
	s->n = 0;
	while (fgets(line, sizeof(line), f)) {
		section = json_section(line, section);
		uint64_t from = 0, to = 0, c = 0;
		if ((section != 1 && section != 2) || json_kind(line, kind, sizeof(kind)) < 0)
			continue;
		if (section == 1)
			json_u64(line, "addr", &from), json_u64(line, "target", &to), json_u64(line, "taken", &c);
		else
			json_u64(line, "from", &from), json_u64(line, "to", &to), json_u64(line, "count", &c);
		if (!c)
			continue;
		if (s->n == cap) {
			cap = cap ? 2 * cap : 256;
			s->e = realloc(s->e, cap * sizeof(*s->e));
		}
		s->e[s->n][0] = from;
		s->e[s->n++][1] = to;
	}
	fclose(f);
	qsort(s->e, s->n, sizeof(*s->e), cmp_edge);
	return 0;
}

int truth_has_edge(const struct truth_edge_set *s, uint64_t from, uint64_t to)
{
	uint64_t key[2] = {from, to};
	return bsearch(key, s->e, s->n, sizeof(*s->e), cmp_edge) != NULL;
}

char *run_capture(char *const argv[], int *status)
{
	static unsigned seq;
	char name[64];
	snprintf(name, sizeof(name), "capture.%u.txt", seq++);
	const char *out = tmp_path(name);
	*status = run_cmd(argv, NULL, out, NULL);
	char *text = slurp(out, NULL);
	unlink(out);
	return text;
}

static int push_rep(struct rep_site **v, size_t *n, size_t *cap, const struct rep_site *x)
{
	if (*n == *cap) {
		size_t nc = *cap ? 2 * *cap : 64;
		struct rep_site *nv = realloc(*v, nc * sizeof(*nv));
		if (!nv)
			return -1;
		*v = nv, *cap = nc;
	}
	(*v)[(*n)++] = *x;
	return 0;
}

int rep_sites_of_truth(const char *json, struct rep_site **out, size_t *n)
{
	*out = NULL, *n = 0;
	FILE *f = fopen(json, "r");
	if (!f)
		return -1;
	char line[8192];
	int section = 0, found = 0, rc = 0;
	size_t cap = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		section = json_section(line, section);
		found |= section == 3;
		if (section != 3 || !strstr(line, "{\"addr\""))
			continue;
		struct rep_site x = {.has_actual = 1};
		if (json_u64(line, "addr", &x.addr) || json_u64(line, "executions", &x.executions) ||
		    json_u64(line, "requested", &x.requested) || json_u64(line, "iterations", &x.actual) ||
		    json_u64(line, "ended_by_condition", &x.cond))
			rc = -1;
		else
			rc = push_rep(out, n, &cap, &x);
	}
	fclose(f);
	return rc < 0 || !found ? -1 : 0;
}

int rep_sites_of_report(const char *text, struct rep_site **out, size_t *n)
{
	*out = NULL, *n = 0;
	size_t cap = 0;
	if (!text || !strstr(text, "\"sites\": ["))
		return -1;
	for (const char *p = strstr(text, "{\"site\": "); p; p = strstr(p + 1, "{\"site\": ")) {
		const char *eol = strchr(p, '\n');
		char line[2048];
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		snprintf(line, sizeof(line), "%.*s", (int)len, p);
		struct rep_site x = {0};
		const char *act = strstr(line, "\"actual\": ");
		if (json_u64(line, "site", &x.addr) || json_u64(line, "executions", &x.executions) ||
		    json_u64(line, "requested", &x.requested) || json_u64(line, "steps", &x.steps) || !act)
			return -1;
		x.has_actual = strncmp(act + 10, "null", 4) != 0;
		if (x.has_actual && (json_u64(line, "actual", &x.actual) || json_u64(line, "ended_by_condition", &x.cond)))
			return -1;
		if (push_rep(out, n, &cap, &x) < 0)
			return -1;
	}
	return 0;
}
