/* perf script -F brstackinsn (see brstackinsn.h): perf 6.1's layout, its rules
 * of which ranges it can read (builtin-script.c grab_bb), and the instruction
 * counts of lbr_range_walk. */
#include "profiler/brstackinsn.h"

#include <inttypes.h>
#include <string.h>

#include "common/err.h"
#include "profiler/lbr_range.h"

/* builtin-script.c MAXBB and util/dump-insn.h MAXINSN: grab_bb reads no block
 * whose end lies more than their difference past its start */
#define PERF_MAXBB 16384u
#define PERF_MAXINSN 15u
/* bytes perf scans from the newest target when the sample's IP lies before it */
#define PERF_FINAL_SCAN 128u

struct printer {
	FILE *f;
	const struct brstackinsn_src *src;
	const struct sym *lastsym; /* the function of the last name line */
	int total_cycles;          /* perf's "[T]": an int there too */
	uint64_t end;              /* the range being printed ends here */
	unsigned end_len;          /* with an instruction this long */
};

float brstackinsn_ipc(int64_t insns, unsigned cycles)
{
	/* ip__fprintf_jump: (float)insn / en->flags.cycles */
	return (float)insns / (float)cycles;
}

/* perf's machine__kernel_ip without a kernel map: the upper half */
static int is_kernel(uint64_t a)
{
	return (a >> 63) != 0;
}

/* grab_bb's answer: 1 when perf reads the code from start through end. */
static int readable(const struct printer *p, uint64_t start, uint64_t end)
{
	return start && end && is_kernel(start) == is_kernel(end) &&
	       end - start <= PERF_MAXBB - PERF_MAXINSN && p->src->bin &&
	       binary_has_code(p->src->bin, start);
}

/* ip__fprintf_sym: the function's name (and offset) when it changes. */
static void print_sym(struct printer *p, uint64_t addr)
{
	const struct sym *s = p->src->sym ? p->src->sym(p->src->ctx, addr) : NULL;
	if (!s || s == p->lastsym)
		return;
	fprintf(p->f, "\t%s", s->name);
	if (addr != s->addr)
		fprintf(p->f, "%+d", (int)(addr - s->addr));
	fputs(":\n", p->f);
	p->lastsym = s;
}

/* Length of instruction i of run r; 0 when it does not decode (perf's
 * dump_insn then prints "<bad>"). */
static unsigned insn_len(const struct printer *p, const struct block_info *r, uint32_t i)
{
	char dis[160];
	if (r->kind == BK_TRAP && i + 1 == r->ninsns &&
	    binary_disasm(p->src->bin, r->start + r->off[i], dis, sizeof(dis)) < 0)
		return 0;
	return (unsigned)(r->off[i + 1] - r->off[i]);
}

/* Length of the instruction at addr, decoded there. */
static unsigned len_at(const struct printer *p, uint64_t addr)
{
	const struct block_info *r = binary_run(p->src->bin, addr);
	return r && r->ninsns ? insn_len(p, r, 0) : 0;
}

/* The instruction of len bytes at addr as perf's dump_insn writes it
 * ("insn: 48 89 e5 "), or Capstone's text. */
static void insn_text(const struct printer *p, uint64_t addr, unsigned len, char *out,
                      size_t outlen)
{
	snprintf(out, outlen, "<bad>");
	if (len == 0)
		return;
	if (p->src->disasm) {
		char dis[160];
		if (binary_disasm(p->src->bin, addr, dis, sizeof(dis)) == 0)
			snprintf(out, outlen, "%s", dis);
		return;
	}
	uint8_t bytes[16];
	size_t n = binary_read(p->src->bin, addr, bytes, len < sizeof(bytes) ? len : sizeof(bytes));
	size_t k = (size_t)snprintf(out, outlen, "insn: ");
	for (size_t i = 0; i < n && k < outlen; i++)
		k += (size_t)snprintf(out + k, outlen - k, "%02x ", bytes[i]);
}

/* An instruction line. */
static void print_line(struct printer *p, uint64_t addr, unsigned len)
{
	char text[160];
	insn_text(p, addr, len, text, sizeof(text));
	fprintf(p->f, "\t%016" PRIx64 "\t%s\n", addr, text);
}

/* ip__fprintf_jump: the branch of entry e, ending a range of insns
 * instructions (0: the oldest entry, whose range is unknown). */
static void print_jump(struct printer *p, uint64_t addr, unsigned len, const struct perf_branch *e,
                       int64_t insns)
{
	char text[160];
	insn_text(p, addr, len, text, sizeof(text));
	fprintf(p->f, "\t%016" PRIx64 "\t%-30s\t#%s%s", addr, text, e->predicted ? " PRED" : "",
	        e->mispred ? " MISPRED" : "");
	if (e->cycles) {
		p->total_cycles += e->cycles;
		fprintf(p->f, " %d cycles [%d]", (int)e->cycles, p->total_cycles);
		if (insns)
			fprintf(p->f, " %.2f IPC", (double)brstackinsn_ipc(insns, e->cycles));
	}
	fputc('\n', p->f);
}

/* lbr_range_walk's callback: the range's instructions but its last (the
 * branch, printed with its entry), each after its function's name. */
static int print_run(void *ctx, const struct block_info *run, uint32_t n)
{
	struct printer *p = ctx;
	for (uint32_t i = 0; i < n; i++) {
		uint64_t a = run->start + run->off[i];
		print_sym(p, a);
		if (a != p->end)
			print_line(p, a, insn_len(p, run, i));
		else
			p->end_len = insn_len(p, run, i);
	}
	return 0;
}

/* The range from start through end, closed by entry e. */
static int print_range(struct printer *p, uint64_t start, uint64_t end, const struct perf_branch *e)
{
	if (!readable(p, start, end))
		return 0;
	int64_t n = lbr_range_walk(p->src->bin, start, end, NULL, NULL);
	if (n == PMUSIM_ERR_NOMEM)
		return PMUSIM_ERR_NOMEM;
	if (n <= 0) {
		/* perf reads it straight through and counts its cycles in [T]: so
		 * does this line, so that the totals of later lines stay perf's */
		fprintf(p->f, "\t# pmusim: range 0x%" PRIx64 "-0x%" PRIx64 " not walked (%s)",
		        start, end, lbr_range_err_name(n));
		if (e->cycles) {
			p->total_cycles += e->cycles;
			fprintf(p->f, " %d cycles [%d]", (int)e->cycles, p->total_cycles);
		}
		fputc('\n', p->f);
		return 0;
	}
	p->end = end;
	int64_t again = lbr_range_walk(p->src->bin, start, end, print_run, p);
	if (again < 0)
		return (int)again;
	print_jump(p, end, p->end_len, e, n);
	return 0;
}

/* What perf's arch_is_branch (its Intel PT instruction decoder) calls a
 * branch: jumps, calls, returns, system calls and software interrupts; not
 * ud2 or hlt, which end a code run too. */
static int is_pt_branch(struct printer *p, const struct block_info *r)
{
	if (r->kind == BK_COND || r->kind == BK_JMP || r->kind == BK_JMP_IND ||
	    r->kind == BK_CALL || r->kind == BK_CALL_IND || r->kind == BK_RET ||
	    r->kind == BK_SYSCALL)
		return 1;
	if (r->kind != BK_TRAP)
		return 0;
	uint8_t b[2] = {0, 0};
	binary_read(p->src->bin, r->term, b, sizeof(b));
	return b[0] == 0xcc || b[0] == 0xcd || b[0] == 0xce || b[0] == 0xf1 ||
	       (b[0] == 0x0f && (b[1] == 0x05 || b[1] == 0x07 || b[1] == 0x34 || b[1] == 0x35));
}

/* From the newest entry's target up to the sample's IP, read straight through. */
static void print_final(struct printer *p, uint64_t start, uint64_t ip)
{
	uint64_t end = ip < start ? start + PERF_FINAL_SCAN : ip;
	int ok = readable(p, start, end);
	print_sym(p, start);
	if (!ok) {
		if (readable(p, ip, ip))
			print_line(p, ip, len_at(p, ip));
		return;
	}
	for (uint64_t a = start;;) {
		const struct block_info *r = binary_run(p->src->bin, a);
		if (!r)
			return;
		for (uint32_t i = 0; i < r->ninsns; i++) {
			uint64_t x = r->start + r->off[i];
			unsigned len = insn_len(p, r, i);
			if (x > end)
				return;
			print_line(p, x, len);
			if (len == 0)
				return;
			if (i + 1 == r->ninsns && x != ip && is_pt_branch(p, r)) {
				fputs("\t... not reaching sample ...\n", p->f);
				return;
			}
		}
		a = r->end;
	}
}

int brstackinsn_print(FILE *f, const struct perf_sample *s, const struct brstackinsn_src *src)
{
	if (!s->nbr)
		return 0;
	struct printer p = {.f = f, .src = src};
	const struct perf_branch *br = s->br;
	int64_t nr = (int64_t)s->nbr;
	fputc('\n', f);
	if (readable(&p, br[nr - 1].from, br[nr - 1].from)) {
		print_sym(&p, br[nr - 1].from);
		print_jump(&p, br[nr - 1].from, len_at(&p, br[nr - 1].from), &br[nr - 1], 0);
	}
	for (int64_t i = nr - 2; i >= 0; i--) {
		uint64_t start = br[i + 1].to, end = br[i].from;
		/* perf's patch-up for a ring filter that hid the entry into the kernel */
		if (start && end && is_kernel(start) != is_kernel(end) && i > 0)
			end = br[--i].from;
		int err = print_range(&p, start, end, &br[i]);
		if (err)
			return err;
	}
	/* the IP at the newest branch: its target has not run yet */
	if (br[0].from != s->ip)
		print_final(&p, br[0].to, s->ip);
	return 0;
}
