/* Branch (or REP) sites from GNU objdump's text (`objdump -d --no-show-raw-insn`, AT&T
 * syntax, binutils 2.40): label lines "ADDR <name>:", instruction lines
 * "  ADDR:\tprefixes mnemonic operands". The own functions' names come from
 * `nm --defined-only` of the object file the program was linked from. */
#include "tests/ref/objdump_sites.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

struct names {
	char **v;
	size_t n;
	size_t *seen; /* how often each name labels a function in the program */
};

static void fail(char *err, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, len, fmt, ap);
	va_end(ap);
}

/* argv's standard output as a stream; *pid to reap with command_close. */
static FILE *command_open(const char *const argv[], pid_t *pid)
{
	int fd[2];
	if (pipe(fd) < 0)
		return NULL;
	*pid = fork();
	if (*pid < 0) {
		close(fd[0]);
		close(fd[1]);
		return NULL;
	}
	if (*pid == 0) {
		dup2(fd[1], 1);
		close(fd[0]);
		close(fd[1]);
		execvp(argv[0], (char *const *)argv);
		_exit(127);
	}
	close(fd[1]);
	FILE *f = fdopen(fd[0], "r");
	if (!f)
		close(fd[0]);
	return f;
}

/* Closes the stream and returns the command's exit status (-1: did not exit). */
static int command_close(FILE *f, pid_t pid)
{
	fclose(f);
	int st;
	if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st))
		return -1;
	return WEXITSTATUS(st);
}

static int names_add(struct names *nm, const char *name)
{
	char **v = realloc(nm->v, (nm->n + 1) * sizeof(*v));
	if (!v)
		return -1;
	nm->v = v;
	nm->v[nm->n] = strdup(name);
	return nm->v[nm->n++] ? 0 : -1;
}

static int cmp_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

static long names_find(const struct names *nm, const char *name)
{
	char *const *p = bsearch(&name, nm->v, nm->n, sizeof(*nm->v), cmp_name);
	return p ? (long)(p - nm->v) : -1;
}

static int is_elf(const char *path)
{
	FILE *f = fopen(path, "rb");
	char m[4] = {0};
	if (!f)
		return -1;
	size_t n = fread(m, 1, 4, f);
	fclose(f);
	return n == 4 && memcmp(m, "\177ELF", 4) == 0;
}

/* Reads names from nm's output ("VALUE TYPE NAME": text symbols are T, t or W)
 * or from a list, one a line. */
static int names_load(struct names *nm, const char *own, char *err, size_t len)
{
	int elf = is_elf(own);
	if (elf < 0) {
		fail(err, len, "cannot read %s", own);
		return -1;
	}
	const char *argv[] = {"nm", "--defined-only", own, NULL};
	pid_t pid = 0;
	FILE *f = elf ? command_open(argv, &pid) : fopen(own, "r");
	if (!f) {
		fail(err, len, elf ? "cannot run nm" : "cannot read %s", own);
		return -1;
	}
	char line[1024], name[1024], type[8];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f)) {
		if (elf) {
			if (sscanf(line, "%*s %7s %1023s", type, name) == 2 &&
			    strchr("TtW", type[0]))
				rc = names_add(nm, name);
		} else if (sscanf(line, "%1023s", name) == 1) {
			rc = names_add(nm, name);
		}
	}
	if (elf ? command_close(f, pid) != 0 : fclose(f) != 0)
		rc = -1;
	if (rc == 0 && nm->n == 0)
		rc = -1;
	if (rc < 0) {
		fail(err, len, "no function names from %s", own);
		return -1;
	}
	qsort(nm->v, nm->n, sizeof(*nm->v), cmp_name);
	nm->seen = calloc(nm->n, sizeof(*nm->seen));
	return nm->seen ? 0 : -1;
}

static void names_free(struct names *nm)
{
	for (size_t i = 0; i < nm->n; i++)
		free(nm->v[i]);
	free(nm->v);
	free(nm->seen);
}

static int is_prefix(const char *w)
{
	static const char *const prefixes[] = {
	    "rep",     "repz",   "repe",   "repnz",  "repne",    "lock",    "bnd",
	    "notrack", "cs",     "ds",     "es",     "ss",       "fs",      "gs",
	    "data16",  "data32", "addr16", "addr32", "xacquire", "xrelease"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strcmp(w, prefixes[i]) == 0)
			return 1;
	return strncmp(w, "rex", 3) == 0; /* rex, rex.W, rex.WRB... */
}

/* A string instruction's mnemonic: movs, stos, cmps, scas, lods, ins, outs, with a
 * b, w, l or q suffix or none. */
static int is_string(const char *m)
{
	static const char *const ops[] = {"movs", "stos", "cmps", "scas", "lods", "ins", "outs"};
	for (size_t i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i]);
		if (strncmp(m, ops[i], n) == 0 &&
		    (m[n] == 0 || (strchr("bwlq", m[n]) && m[n + 1] == 0)))
			return 1;
	}
	return 0;
}

/* The kind of the instruction text (after "ADDR:\t"), its direct target in *target;
 * -1 when it is no branch. A "rep"/"repz" before ret is a prefix (gcc's "repz ret"),
 * before a string instruction it makes no branch but a SITE_REP, which only rep
 * asks for (*addr32: its operands are 32-bit registers). */
static int classify(const char *text, int rep, uint64_t *target, int *addr32)
{
	char m[32];
	const char *p = text;
	int n, rep_prefix = 0;
	for (;;) {
		while (*p == ' ')
			p++;
		if (sscanf(p, "%31s%n", m, &n) != 1)
			return -1;
		p += n;
		if (!is_prefix(m))
			break;
		rep_prefix |= strncmp(m, "rep", 3) == 0;
	}
	if (rep) {
		*addr32 = strstr(p, "(%e") != NULL;
		return rep_prefix && is_string(m) ? SITE_REP : -1;
	}
	char *comma = strchr(m, ','); /* branch hints: "jne,pt" */
	if (comma)
		*comma = 0;
	while (*p == ' ')
		p++;
	int indirect = *p == '*';
	*target = indirect ? 0 : strtoull(p, NULL, 16);
	if (strcmp(m, "ret") == 0 || strcmp(m, "retq") == 0)
		return SITE_RET;
	if (strcmp(m, "jmp") == 0 || strcmp(m, "jmpq") == 0)
		return indirect ? SITE_JMP_IND : SITE_JMP;
	if (strcmp(m, "call") == 0 || strcmp(m, "callq") == 0)
		return indirect ? SITE_CALL_IND : SITE_CALL;
	if (m[0] == 'j' || strncmp(m, "loop", 4) == 0)
		return indirect ? -1 : SITE_COND;
	return -1;
}

struct parse {
	struct site_table *t;
	struct names *nm;
	int rep;       /* REP string instructions are the sites, not branches */
	long func;     /* index in t->funcs of the function being listed, or -1 */
	int have_prev; /* the previous instruction line, whose end the next one gives */
	uint64_t prev;
	long prev_site, prev_func;
	size_t cap_sites, cap_funcs;
};

/* The previous instruction ends at addr (0: unknown, after "..." or a section end). */
static void end_prev(struct parse *ps, uint64_t addr)
{
	if (!ps->have_prev)
		return;
	if (ps->prev_site >= 0)
		ps->t->sites[ps->prev_site].next = addr;
	if (ps->prev_func >= 0)
		ps->t->funcs[ps->prev_func].end = addr ? addr : ps->prev + 1;
	ps->have_prev = 0;
}

static int on_label(struct parse *ps, uint64_t addr, const char *name)
{
	long k = names_find(ps->nm, name);
	ps->func = -1;
	if (k < 0)
		return 0;
	ps->nm->seen[k]++;
	struct site_table *t = ps->t;
	if (t->nfuncs == ps->cap_funcs) {
		ps->cap_funcs = ps->cap_funcs ? 2 * ps->cap_funcs : 64;
		struct site_func *f = realloc(t->funcs, ps->cap_funcs * sizeof(*f));
		if (!f)
			return -1;
		t->funcs = f;
	}
	struct site_func *f = &t->funcs[t->nfuncs];
	snprintf(f->name, sizeof(f->name), "%s", name);
	f->start = f->end = addr;
	ps->func = (long)t->nfuncs++;
	return 0;
}

static int on_insn(struct parse *ps, uint64_t addr, const char *text)
{
	end_prev(ps, addr);
	ps->have_prev = 1;
	ps->prev = addr;
	ps->prev_site = -1;
	ps->prev_func = ps->func;
	uint64_t target = 0;
	int addr32 = 0;
	int kind = ps->func >= 0 ? classify(text, ps->rep, &target, &addr32) : -1;
	if (kind < 0)
		return 0;
	struct site_table *t = ps->t;
	if (t->nsites == ps->cap_sites) {
		ps->cap_sites = ps->cap_sites ? 2 * ps->cap_sites : 256;
		struct site *s = realloc(t->sites, ps->cap_sites * sizeof(*s));
		if (!s)
			return -1;
		t->sites = s;
	}
	t->sites[t->nsites] = (struct site){.addr = addr,
	                                    .target = target,
	                                    .kind = kind,
	                                    .func = (size_t)ps->func,
	                                    .addr32 = addr32};
	ps->prev_site = (long)t->nsites++;
	return 0;
}

static int parse_line(struct parse *ps, const char *line)
{
	unsigned long long a;
	char name[sizeof(((struct site_func *)0)->name)];
	int n = 0;
	if (sscanf(line, "%llx <%255[^>]>:%n", &a, name, &n) == 2 && n > 0)
		return on_label(ps, a, name);
	/* "Disassembly of section", or "\t..." for skipped zeros: the previous
	 * instruction's end is not known from here */
	if (strncmp(line, "Disassembly of section", 22) == 0 || strstr(line, "\t...")) {
		end_prev(ps, 0);
		return 0;
	}
	if (sscanf(line, " %llx:\t%n", &a, &n) == 1 && n > 0 && line[0] == ' ')
		return on_insn(ps, a, line + n);
	return 0;
}

static int cmp_site(const void *a, const void *b)
{
	const struct site *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

/* Every own name labels one function, and every conditional branch has a known
 * fall-through (it is how a not-taken execution is told from a taken one), every
 * REP the next instruction (where the CPU goes when the REP retires). */
static int check_table(const struct site_table *t, const struct names *nm, const char *prog,
                       char *err, size_t len)
{
	for (size_t i = 0; i < nm->n; i++)
		if (nm->seen[i] != 1) {
			fail(err, len, "%s labels %zu functions in %s's disassembly, not one",
			     nm->v[i], nm->seen[i], prog);
			return -1;
		}
	for (size_t i = 0; i < t->nsites; i++)
		if ((t->sites[i].kind == SITE_COND || t->sites[i].kind == SITE_REP) &&
		    !t->sites[i].next) {
			fail(err, len, "%s at %#llx: no next instruction in the listing",
			     t->sites[i].kind == SITE_REP ? "REP" : "conditional branch",
			     (unsigned long long)t->sites[i].addr);
			return -1;
		}
	return 0;
}

static int load(struct site_table *t, const char *prog, const char *own, int rep, char *err,
                size_t errlen)
{
	memset(t, 0, sizeof(*t));
	struct names nm = {0};
	if (names_load(&nm, own, err, errlen) < 0) {
		names_free(&nm);
		return -1;
	}
	const char *argv[] = {"objdump", "-d", "--no-show-raw-insn", prog, NULL};
	pid_t pid;
	FILE *f = command_open(argv, &pid);
	if (!f) {
		fail(err, errlen, "cannot run objdump");
		names_free(&nm);
		return -1;
	}
	struct parse ps = {.t = t, .nm = &nm, .rep = rep, .func = -1};
	char line[4096];
	int rc = 0;
	while (rc == 0 && fgets(line, sizeof(line), f))
		rc = parse_line(&ps, line);
	end_prev(&ps, 0);
	if (command_close(f, pid) != 0 || rc < 0) {
		fail(err, errlen, "objdump -d %s failed", prog);
		rc = -1;
	}
	if (rc == 0)
		rc = check_table(t, &nm, prog, err, errlen);
	names_free(&nm);
	if (rc < 0) {
		sites_free(t);
		return -1;
	}
	if (t->nsites) /* a program without REPs has no REP sites */
		qsort(t->sites, t->nsites, sizeof(*t->sites), cmp_site);
	return 0;
}

int sites_load(struct site_table *t, const char *prog, const char *own, char *err, size_t errlen)
{
	return load(t, prog, own, 0, err, errlen);
}

int sites_load_rep(struct site_table *t, const char *prog, const char *own, char *err,
                   size_t errlen)
{
	return load(t, prog, own, 1, err, errlen);
}

struct site *sites_find(const struct site_table *t, uint64_t addr)
{
	struct site key = {.addr = addr};
	if (!t->nsites)
		return NULL;
	return bsearch(&key, t->sites, t->nsites, sizeof(*t->sites), cmp_site);
}

const char *site_kind_name(enum site_kind k)
{
	static const char *const names[] = {"cond",     "jmp", "jmp_ind", "call",
	                                    "call_ind", "ret", "rep"};
	return names[k];
}

void sites_free(struct site_table *t)
{
	free(t->sites);
	free(t->funcs);
	memset(t, 0, sizeof(*t));
}
