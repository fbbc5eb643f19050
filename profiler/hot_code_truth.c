/* Hot code from a truth JSON (hot_code.h): the document sim/truth_write.c writes,
 * one entry a line ("    {...}") in sections opened by `  "name": [`, read line by
 * line as profiler/cpi_check.c and rep_report.c read it. A block's instruction
 * addresses come from decoding the program's code (common/decode.h). */
#include "profiler/hot_code.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/infile.h"
#include "common/symtab.h"
#include "profiler/binary.h"
#include "profiler/hot_code_internal.h"

struct tblock {
	uint64_t start, executions;
	uint32_t n;
};

struct tfunc {
	char *name;
	uint64_t addr;
};

/* What is read before the code is known. */
struct tdoc {
	char *program;
	uint64_t load_bias; /* where the program ran, when the truth says (have_load_bias) */
	int have_load_bias;
	uint64_t instructions; /* only checked for: total is the blocks' sum (hot_code.h) */
	int have_instructions;
	struct tblock *b;
	size_t nb, capb;
	struct tfunc *f;
	size_t nf, capf;
};

static void tdoc_fini(struct tdoc *d)
{
	free(d->program);
	free(d->b);
	for (size_t i = 0; i < d->nf; i++)
		free(d->f[i].name);
	free(d->f);
}

/* The JSON string that starts at p (after its opening quote), unescaped as
 * common/json.c escapes (RFC 8259 section 7: \" \\ and \u00XX for control
 * characters; the other short escapes too). NULL when out of memory. */
static char *json_str(const char *p)
{
	char *s = malloc(strlen(p) + 1), *o = s;
	while (s && *p && *p != '"') {
		if (*p != '\\') {
			*o++ = *p++;
			continue;
		}
		char c = p[1];
		if (!c)
			break; /* a backslash ends the text: stepping over both would pass its end */
		p += 2;
		if (c == 'u' && strlen(p) >= 4) {
			char hex[5] = {p[0], p[1], p[2], p[3], 0};
			*o++ = (char)strtoul(hex, NULL, 16);
			p += 4;
		} else {
			*o++ = c == 'n'   ? '\n'
			       : c == 't' ? '\t'
			       : c == 'r' ? '\r'
			       : c == 'b' ? '\b'
			       : c == 'f' ? '\f'
			                  : c;
		}
	}
	if (s)
		*o = 0;
	return s;
}

/* The value after "key": in line, as a number (strings "0x.." read as hex); 0 when
 * absent. Symbol names are JSON strings, whose quotes are escaped, so `"key": `
 * cannot match inside one. */
static int field(const char *line, const char *key, uint64_t *v)
{
	char pat[48];
	snprintf(pat, sizeof(pat), "\"%s\": ", key);
	const char *p = strstr(line, pat);
	if (!p)
		return 0;
	p += strlen(pat);
	int quoted = *p == '"';
	char *end;
	errno = 0;
	*v = strtoull(p + quoted, &end, quoted ? 16 : 10);
	return end != p + quoted && errno == 0;
}

static int has_kind(const char *line, const char *kind)
{
	char pat[48];
	snprintf(pat, sizeof(pat), "\"kind\": \"%s\"", kind);
	return strstr(line, pat) != NULL;
}

enum section { S_NONE, S_BRANCHES, S_TRANSFERS, S_FUNCTIONS, S_BLOCKS };

/* One entry line of section sec; 0, or a negative pmusim_err with msg. */
static int entry(struct tdoc *d, struct hot_acc *a, enum section sec, const char *line, char *msg,
                 size_t ml)
{
	uint64_t x, y, t, f;
	switch (sec) {
	case S_BRANCHES:
		if (!has_kind(line, "cond"))
			return 0;
		if (!field(line, "addr", &x) || !field(line, "taken", &t) ||
		    !field(line, "not_taken", &f))
			return pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT,
			                   "a branch without addr, taken and not_taken");
		return hot_acc_branch(a, x, (double)t, (double)f);
	case S_TRANSFERS:
		if (!has_kind(line, "jmp_ind") && !has_kind(line, "call_ind"))
			return 0;
		if (!field(line, "from", &x) || !field(line, "to", &y) || !field(line, "count", &t))
			return pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT,
			                   "a transfer without from, to and count");
		return hot_acc_target(a, x, y, (double)t);
	case S_FUNCTIONS: {
		const char *n = strstr(line, "\"name\": \"");
		if (!n || !field(line, "addr", &x))
			return 0; /* only for placing the program: not needed */
		struct tfunc *g = grow_array(d->f, &d->capf, d->nf + 1, sizeof(*g));
		if (!g)
			return PMUSIM_ERR_NOMEM;
		d->f = g;
		if (!(g[d->nf].name = json_str(n + 9)))
			return PMUSIM_ERR_NOMEM;
		g[d->nf++].addr = x;
		return 0;
	}
	case S_BLOCKS: {
		if (!field(line, "start", &x) || !field(line, "instructions", &y) ||
		    !field(line, "executions", &t) || y > UINT32_MAX)
			return pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT,
			                   "a block without start, instructions and executions");
		struct tblock *g = grow_array(d->b, &d->capb, d->nb + 1, sizeof(*g));
		if (!g)
			return PMUSIM_ERR_NOMEM;
		d->b = g;
		g[d->nb++] = (struct tblock){x, t, (uint32_t)y};
		return 0;
	}
	default:
		return 0;
	}
}

/* A top-level line ("  \"key\": ..."): the section it opens, or S_NONE. */
static enum section top(struct tdoc *d, const char *line, int *err)
{
	static const struct {
		const char *head;
		enum section sec;
	} heads[] = {{"  \"branches\": [", S_BRANCHES},
	             {"  \"transfers\": [", S_TRANSFERS},
	             {"  \"functions\": [", S_FUNCTIONS},
	             {"  \"blocks\": [", S_BLOCKS}};
	for (size_t i = 0; i < sizeof(heads) / sizeof(heads[0]); i++)
		if (strncmp(line, heads[i].head, strlen(heads[i].head)) == 0)
			return heads[i].sec;
	if (strncmp(line, "  \"program\": \"", 14) == 0 && !d->program &&
	    !(d->program = json_str(line + 14)))
		*err = PMUSIM_ERR_NOMEM;
	if (strncmp(line, "  \"instructions\": ", 18) == 0)
		d->have_instructions = field(line, "instructions", &d->instructions);
	if (strncmp(line, "  \"load_bias\": ", 15) == 0)
		d->have_load_bias = field(line, "load_bias", &d->load_bias);
	return S_NONE;
}

static int read_doc(const char *path, struct tdoc *d, struct hot_acc *a, char *msg, size_t ml)
{
	const char *open_why;
	FILE *fp = infile_fopen(path, &open_why);
	if (!fp)
		return pmusim_fail(msg, ml, PMUSIM_ERR_IO, "cannot open %s: %s", path, open_why);
	char *line = NULL;
	size_t cap = 0, lineno = 0;
	enum section sec = S_NONE;
	int err = 0, seen_blocks = 0;
	while (!err && getline(&line, &cap, fp) > 0) {
		lineno++;
		if (strncmp(line, "    {", 5) == 0) {
			err = entry(d, a, sec, line, msg, ml);
			if (err == PMUSIM_ERR_FORMAT) { /* name the place */
				char why[200];
				snprintf(why, sizeof(why), "%s", msg ? msg : "");
				err = pmusim_fail(msg, ml, err, "%s:%zu: %s", path, lineno, why);
			}
		} else if (line[0] == ' ' && line[1] == ' ' && line[2] == '"') {
			sec = top(d, line, &err);
			seen_blocks |= sec == S_BLOCKS;
		} else if (line[0] != ' ' || line[1] != ' ' || line[2] != ' ') {
			sec = S_NONE; /* "  ]," and "}" close a section */
		}
	}
	if (!err && ferror(fp))
		err = pmusim_fail(msg, ml, PMUSIM_ERR_IO, "cannot read %s", path);
	free(line);
	fclose(fp);
	if (!err && (!seen_blocks || !d->have_instructions))
		err = pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT,
		                  "%s has no \"blocks\" or no \"instructions\" (a truth JSON of "
		                  "pmusim run --truth-json)",
		                  path);
	return err;
}

/* The load bias of the program when the truth does not state it (a truth written
 * before "load_bias"): the truth's address of a function the file and the truth each
 * name once, less the file's, as a PIE runs wherever the loader put it. 0 (as linked)
 * when no name is shared, which places a stripped PIE wrong. */
static uint64_t program_bias(const struct tdoc *d, const struct symtab *st)
{
	for (size_t i = 0; i < d->nf; i++) {
		size_t in_truth = 0, in_file = 0;
		const struct sym *hit = NULL;
		for (size_t k = 0; k < d->nf && in_truth < 2; k++)
			in_truth += strcmp(d->f[k].name, d->f[i].name) == 0;
		for (size_t k = 0; in_truth == 1 && k < symtab_count(st) && in_file < 2; k++)
			if (strcmp(symtab_at(st, k)->name, d->f[i].name) == 0)
				hit = symtab_at(st, k), in_file++;
		if (in_file == 1)
			return d->f[i].addr - hit->addr;
	}
	return 0;
}

static int open_program(const struct tdoc *d, const char *path, struct binary **bin, char *msg,
                        size_t ml)
{
	if (!d->program)
		return pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT, "%s names no program", path);
	/* symbols only for an older truth: strip must not change what is read */
	if (d->have_load_bias)
		return binary_open(d->program, d->load_bias, bin, msg, ml);
	struct symtab *st = NULL;
	int err = symtab_load(d->program, 0, &st);
	if (err < 0)
		return pmusim_fail(msg, ml, err, "%s: cannot read the symbols of %s: %s", path,
		                   d->program, pmusim_strerror(err));
	uint64_t bias = program_bias(d, st);
	symtab_free(st);
	return binary_open(d->program, bias, bin, msg, ml);
}

/* Every instruction of every block gets the block's executions. */
static int add_blocks(const struct tdoc *d, struct binary *code, struct hot_acc *a, char *msg,
                      size_t ml)
{
	for (size_t i = 0; i < d->nb; i++) {
		const struct tblock *b = &d->b[i];
		const struct block_info *run = b->n ? binary_run(code, b->start) : NULL;
		if (b->n && !run)
			return pmusim_fail(msg, ml, PMUSIM_ERR_UNSUPPORTED,
			                   "block at %#llx is outside the code of %s",
			                   (unsigned long long)b->start, binary_path(code));
		if (run && b->n > run->ninsns)
			return pmusim_fail(msg, ml, PMUSIM_ERR_FORMAT,
			                   "block at %#llx has %u instructions, the code there %u: "
			                   "another program?",
			                   (unsigned long long)b->start, b->n, run->ninsns);
		for (uint32_t k = 0; k < b->n; k++) {
			int err = hot_acc_ip(a, b->start + run->off[k], (double)b->executions);
			if (err < 0)
				return err;
		}
	}
	return 0;
}

int hot_code_from_truth_code(const char *path, struct binary *code, struct hot_code **out,
                             char *msg, size_t msglen)
{
	*out = NULL;
	struct tdoc d = {0};
	struct hot_acc a;
	int err = hot_acc_init(&a);
	if (err < 0)
		return err;
	struct binary *own = NULL;
	err = read_doc(path, &d, &a, msg, msglen);
	if (!err && !code && (err = open_program(&d, path, &own, msg, msglen)) == 0)
		code = own;
	if (!err)
		err = add_blocks(&d, code, &a, msg, msglen);
	binary_free(own);
	struct hot_code *h = hot_acc_finish(&a);
	h->program = d.program;
	d.program = NULL;
	tdoc_fini(&d);
	if (err < 0) {
		hot_code_free(h);
		return err;
	}
	*out = h;
	return 0;
}

int hot_code_from_truth(const char *path, struct hot_code **out, char *msg, size_t msglen)
{
	return hot_code_from_truth_code(path, NULL, out, msg, msglen);
}

int hot_code_truth_binary(const char *path, struct binary **out, char *msg, size_t msglen)
{
	*out = NULL;
	struct tdoc d = {0};
	struct hot_acc a;
	int err = hot_acc_init(&a);
	if (err < 0)
		return err;
	err = read_doc(path, &d, &a, msg, msglen);
	if (!err)
		err = open_program(&d, path, out, msg, msglen);
	hot_code_free(hot_acc_finish(&a));
	tdoc_fini(&d);
	return err;
}
