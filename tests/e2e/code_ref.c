/* A program's code from objdump and its basic blocks' exact counts from a truth JSON
 * (see code_ref.h). objdump's line format (binutils 2.40, -d --insn-width=16):
 * "  ADDR:\tBYTES\tMNEMONIC OPERANDS", one line per instruction with all its bytes. */
#include "tests/e2e/code_ref.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"

static int fail(char *msg, size_t msglen, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static int fail(char *msg, size_t msglen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, msglen, fmt, ap);
	va_end(ap);
	return -1;
}

/* Instruction prefixes objdump prints as words of their own. */
static int is_prefix(const char *w, size_t n)
{
	static const char *const p[] = {"bnd",   "notrack", "lock", "rep",   "repz",     "repe",
	                                "repnz", "repne",   "data16", "addr32", "cs",     "ds",
	                                "es",    "ss",      "fs",   "gs",    "xacquire", "xrelease"};
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		if (strlen(p[i]) == n && strncmp(w, p[i], n) == 0)
			return 1;
	return 0;
}

/* The mnemonic and operands of objdump's text, into the instruction's facts. */
static void classify(const char *text, struct code_insn *in)
{
	const char *w = text;
	size_t n;
	for (;;) {
		while (*w == ' ')
			w++;
		n = strcspn(w, " ");
		if (!is_prefix(w, n) || !w[n])
			break;
		w += n;
	}
	const char *ops = w + n;
	while (*ops == ' ')
		ops++;
	in->mem_operand = strchr(ops, '[') != NULL;
	if (n == 4 && strncmp(w, "call", 4) == 0)
		in->branch = CODE_CALL;
	else if (n == 3 && strncmp(w, "ret", 3) == 0)
		in->branch = CODE_RET;
	else if (n == 3 && strncmp(w, "jmp", 3) == 0)
		in->branch = CODE_JMP;
	else if ((n >= 2 && w[0] == 'j') || (n >= 4 && strncmp(w, "loop", 4) == 0))
		in->branch = CODE_COND;
	if (!in->branch)
		return;
	/* a direct target: "4011f5 <leaf>", hex digits then the symbol or the end */
	char *end;
	uint64_t t = strtoull(ops, &end, 16);
	if (end != ops && (*end == 0 || *end == ' '))
		in->target = t;
}

static int cmp_insn(const void *a, const void *b)
{
	uint64_t x = ((const struct code_insn *)a)->addr, y = ((const struct code_insn *)b)->addr;
	return x < y ? -1 : x > y;
}

int code_read(const char *prog, struct code *c, char *msg, size_t msglen)
{
	memset(c, 0, sizeof(*c));
	char *argv[] = {"objdump", "-d", "--insn-width=16", "-M", "intel", (char *)prog, NULL};
	int st;
	char *text = run_capture(argv, &st);
	if (!text || st != 0) {
		free(text);
		return fail(msg, msglen, "objdump -d %s failed (status %d)", prog, st);
	}
	size_t cap = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		uint64_t a;
		int used;
		if (line[0] != ' ' || sscanf(line, " %" SCNx64 ":\t%n", &a, &used) != 1)
			continue;
		char *p = line + used;
		unsigned len = 0;
		for (; isxdigit((unsigned char)p[0]) && isxdigit((unsigned char)p[1]) && p[2] == ' ';
		     p += 3)
			len++;
		if (!len)
			continue;
		while (*p == ' ')
			p++;
		if (*p++ != '\t')
			continue; /* bytes without an instruction */
		if (c->n == cap) {
			cap = cap ? 2 * cap : 4096;
			struct code_insn *v = realloc(c->insn, cap * sizeof(*v));
			if (!v) {
				free(text);
				return fail(msg, msglen, "out of memory");
			}
			c->insn = v;
		}
		struct code_insn *in = &c->insn[c->n++];
		memset(in, 0, sizeof(*in));
		in->addr = a;
		in->len = len;
		in->block = -1;
		classify(p, in);
	}
	free(text);
	if (!c->n)
		return fail(msg, msglen, "objdump -d %s: no instructions", prog);
	qsort(c->insn, c->n, sizeof(*c->insn), cmp_insn);
	return 0;
}

const struct code_insn *code_at(const struct code *c, uint64_t addr)
{
	struct code_insn key = {.addr = addr};
	return bsearch(&key, c->insn, c->n, sizeof(*c->insn), cmp_insn);
}

/* The value of "key": N or "key": "0xN" in line. */
static int json_num(const char *line, const char *key, uint64_t *v)
{
	const char *p = strstr(line, key);
	if (!p)
		return -1;
	p += strlen(key);
	while (*p == ' ' || *p == ':' || *p == '"')
		p++;
	char *end;
	*v = strtoull(p, &end, 0);
	return end == p ? -1 : 0;
}

/* One run of the truth: its instructions get its executions (diff[]) and the cut marks
 * (cut[i]: a block starts at instruction i). */
static int add_run(struct code *c, int64_t *diff, uint8_t *cut, uint64_t start, uint64_t ninsns,
                   uint64_t execs, char *msg, size_t msglen)
{
	const struct code_insn *f = code_at(c, start);
	if (!f)
		return fail(msg, msglen, "a run starts at %#" PRIx64 ", where objdump has no instruction",
		            start);
	size_t i = (size_t)(f - c->insn);
	if (!ninsns || i + ninsns > c->n)
		return fail(msg, msglen, "the run at %#" PRIx64 " of %" PRIu64 " instructions runs past objdump's listing", start, ninsns);
	for (size_t k = i; k + 1 < i + ninsns; k++)
		if (c->insn[k].addr + c->insn[k].len != c->insn[k + 1].addr)
			return fail(msg, msglen, "the run at %#" PRIx64 " crosses a gap in objdump's listing at %#" PRIx64, start,
			            c->insn[k].addr);
	diff[i] += (int64_t)execs;
	diff[i + ninsns] -= (int64_t)execs;
	cut[i] = cut[i + ninsns] = 1;
	return 0;
}

/* The "insns" section: each instruction's retirements and cycles. */
static int add_insn(struct code *c, const char *line, char *msg, size_t msglen)
{
	uint64_t addr, retired, cycles;
	if (json_num(line, "\"addr\"", &addr) || json_num(line, "\"retired\"", &retired) ||
	    json_num(line, "\"cycles\"", &cycles))
		return fail(msg, msglen, "malformed line in \"insns\": %.80s", line);
	struct code_insn *in = (struct code_insn *)code_at(c, addr);
	if (!in || !in->count)
		return fail(msg, msglen, "\"insns\" has %#" PRIx64 ", %s", addr,
		            in ? "which no run holds" : "where objdump has no instruction");
	in->retired = retired;
	in->cycles = cycles;
	return 0;
}

static void make_blocks(struct code *c, const uint8_t *cut)
{
	for (size_t i = 0; i < c->n; i++) {
		struct code_insn *in = &c->insn[i];
		if (!in->count)
			continue;
		struct code_block *b = c->nblocks ? &c->block[c->nblocks - 1] : NULL;
		if (!b || cut[i] || b->first + b->n != i || b->count != in->count) {
			b = &c->block[c->nblocks++];
			*b = (struct code_block){.first = i, .count = in->count};
		}
		b->n++;
		b->cycles += in->cycles;
		in->block = (int64_t)(b - c->block);
		c->instructions += in->count;
		c->cycles += in->cycles;
	}
}

int code_blocks(struct code *c, const char *truth_json, char *msg, size_t msglen)
{
	char *text = slurp(truth_json, NULL);
	if (!text)
		return fail(msg, msglen, "cannot read %s", truth_json);
	int64_t *diff = calloc(c->n + 1, sizeof(*diff));
	uint8_t *cut = calloc(c->n + 1, 1);
	c->block = calloc(c->n, sizeof(*c->block));
	int rc = diff && cut && c->block ? 0 : fail(msg, msglen, "out of memory");
	enum { NONE, BLOCKS, INSNS } section = NONE;
	int insns_seen = 0, blocks_seen = 0;
	char *save;
	for (char *l = strtok_r(text, "\n", &save); l && rc == 0; l = strtok_r(NULL, "\n", &save)) {
		if (strncmp(l, "  \"blocks\": [", 13) == 0) {
			section = BLOCKS;
			blocks_seen = 1;
			continue;
		}
		if (strncmp(l, "  \"insns\": [", 12) == 0) {
			if (!blocks_seen) {
				rc = fail(msg, msglen, "%s: \"insns\" before \"blocks\"", truth_json);
				break;
			}
			/* the runs are complete: counts first, then the cycles */
			for (size_t i = 0; i < c->n; i++)
				c->insn[i].count = (uint64_t)(diff[i] += i ? diff[i - 1] : 0);
			section = INSNS;
			insns_seen = 1;
			continue;
		}
		if (strncmp(l, "  ]", 3) == 0) {
			section = NONE;
			continue;
		}
		uint64_t start, ninsns, execs;
		if (section == BLOCKS) {
			if (json_num(l, "\"start\"", &start) || json_num(l, "\"instructions\"", &ninsns) ||
			    json_num(l, "\"executions\"", &execs))
				rc = fail(msg, msglen, "malformed line in \"blocks\": %.80s", l);
			else
				rc = add_run(c, diff, cut, start, ninsns, execs, msg, msglen);
		} else if (section == INSNS) {
			rc = add_insn(c, l, msg, msglen);
		}
	}
	if (rc == 0 && !insns_seen)
		for (size_t i = 0; i < c->n; i++)
			c->insn[i].count = (uint64_t)(diff[i] += i ? diff[i - 1] : 0);
	c->have_cycles = insns_seen;
	if (rc == 0)
		make_blocks(c, cut);
	if (rc == 0 && !c->nblocks)
		rc = fail(msg, msglen, "%s: no blocks", truth_json);
	free(text);
	free(diff);
	free(cut);
	return rc;
}

void code_free(struct code *c)
{
	free(c->insn);
	free(c->block);
	memset(c, 0, sizeof(*c));
}
