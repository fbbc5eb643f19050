/* perf's DWARF unwinding against the thread-stack unit (see stack_ref.h). */
#include "tests/e2e/stack_ref.h"

#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"

/* --- facts of the binary, from binutils ------------------------------------ */

static int cmp_fde(const void *a, const void *b)
{
	const struct fde *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* readelf's dump of .eh_frame: CIEs with their augmentation, FDEs' ranges. */
static void read_fdes(const char *prog, struct facts *f)
{
	int st;
	char *argv[] = {"readelf", "--debug-dump=frames", (char *)prog, NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "readelf --debug-dump=frames %s", prog);
	uint64_t sig_cie[64];
	size_t nsig = 0, cap = 0;
	unsigned long cur_cie = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		unsigned long off, cie;
		uint64_t lo, hi;
		const char *p;
		if (sscanf(l, "%lx %*x %*x CIE", &off) == 1 && strstr(l, " CIE"))
			cur_cie = off;
		else if ((p = strstr(l, "Augmentation:")) && strchr(p, 'S') && nsig < 64)
			sig_cie[nsig++] = cur_cie;
		else if ((p = strstr(l, "cie=")) &&
		         sscanf(p, "cie=%lx pc=%" SCNx64 "..%" SCNx64, &cie, &lo, &hi) == 3) {
			if (f->nfde == cap) {
				cap = cap ? cap * 2 : 1024;
				f->fde = realloc(f->fde, cap * sizeof(*f->fde));
				ck_assert_ptr_nonnull(f->fde);
			}
			int s = 0;
			for (size_t i = 0; i < nsig; i++)
				s |= sig_cie[i] == cie;
			f->fde[f->nfde++] = (struct fde){lo, hi, s};
		}
	}
	free(text);
	qsort(f->fde, f->nfde, sizeof(*f->fde), cmp_fde);
	ck_assert_msg(f->nfde > 100, "%s: %zu FDEs", prog, f->nfde);
}

const struct fde *fde_of(const struct facts *f, uint64_t a)
{
	size_t lo = 0, hi = f->nfde;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (f->fde[mid].lo <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo > 0 && a < f->fde[lo - 1].hi ? &f->fde[lo - 1] : NULL;
}

int symbol_range(const char *prog, const char *name, uint64_t *lo, uint64_t *hi)
{
	int st, found = 0;
	char *argv[] = {"nm", "-S", (char *)prog, NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "nm -S %s", prog);
	for (char *l = strtok(text, "\n"); l && !found; l = strtok(NULL, "\n")) {
		uint64_t a, n;
		char sym[256];
		if (sscanf(l, "%" SCNx64 " %" SCNx64 " %*c %255s", &a, &n, sym) == 3 &&
		    strcmp(sym, name) == 0)
			*lo = a, *hi = a + n, found = 1;
	}
	free(text);
	return found;
}

/* objdump's listing: every "call X" whose next instruction is X. */
static void read_getpc_sites(const char *prog, struct facts *f)
{
	int st;
	char *argv[] = {"objdump", "-d", "--no-show-raw-insn", (char *)prog, NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "objdump -d %s", prog);
	uint64_t pending = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		uint64_t at, target;
		char op[16];
		if (sscanf(l, " %" SCNx64 ": %15s", &at, op) != 2)
			continue;
		if (pending && at == pending && f->ngetpc < 16)
			f->getpc[f->ngetpc++] = at;
		pending = strcmp(op, "call") == 0 &&
		                  sscanf(strstr(l, "call") + 4, " %" SCNx64, &target) == 1
		              ? target
		              : 0;
	}
	free(text);
}

void facts_read(const char *prog, const char *alt, struct facts *f)
{
	memset(f, 0, sizeof(*f));
	read_fdes(prog, f);
	read_getpc_sites(prog, f);
	if (alt)
		ck_assert_msg(symbol_range(prog, alt, &f->alt_lo, &f->alt_hi), "%s: no %s", prog,
		              alt);
}

void facts_free(struct facts *f)
{
	free(f->fde);
	memset(f, 0, sizeof(*f));
}

/* --- perf script's text ------------------------------------------------------ */

static void add_frame(struct snaps *ss, uint64_t a, int unknown)
{
	if (ss->na == ss->capa) {
		ss->capa = ss->capa ? ss->capa * 2 : 65536;
		ss->addr = realloc(ss->addr, ss->capa * sizeof(*ss->addr));
		ss->unknown = realloc(ss->unknown, ss->capa);
		ck_assert(ss->addr && ss->unknown);
	}
	ss->addr[ss->na] = a;
	ss->unknown[ss->na++] = (char)unknown;
	ss->s[ss->n - 1].n++;
}

/* perf script -F tid,event,ip,sym[,uregs]: per sample " TID event:", one
 * "\tADDR SYM" line per frame, and with uregs a " ABI:2 ... SP:0x.. IP:0x.." line. */
void perf_snaps(const char *data, int regs, struct snaps *ss)
{
	perf_snaps_of(data, regs, "pmusim_tstack", ss);
}

void perf_snaps_of(const char *data, int regs, const char *event, struct snaps *ss)
{
	char tag[64];
	snprintf(tag, sizeof(tag), " %s:", event);
	memset(ss, 0, sizeof(*ss));
	int st;
	char *argv[] = {"perf",        "script",
	                "--max-stack", "8192",
	                "-i",          (char *)data,
	                "-F",          regs ? "tid,event,ip,sym,uregs" : "tid,event,ip,sym",
	                NULL};
	char *text = run_capture(argv, &st);
	ck_assert_msg(st == 0 && text, "perf script -i %s: exit %d", data, st);
	int in = 0;
	for (char *l = strtok(text, "\n"); l; l = strtok(NULL, "\n")) {
		const char *p;
		uint64_t a;
		if (l[0] == '\t' && in && sscanf(l, " %" SCNx64, &a) == 1) {
			add_frame(ss, a, strstr(l, "[unknown]") != NULL);
		} else if (in && regs && (p = strstr(l, " SP:0x")) && strstr(l, "ABI:")) {
			ss->s[ss->n - 1].sp = strtoull(p + 6, NULL, 16);
			p = strstr(l, " IP:0x");
			ck_assert_ptr_nonnull(p);
			ss->s[ss->n - 1].ip = strtoull(p + 6, NULL, 16);
		} else if (strstr(l, tag)) {
			if (ss->n == ss->cap) {
				ss->cap = ss->cap ? ss->cap * 2 : 1024;
				ss->s = realloc(ss->s, ss->cap * sizeof(*ss->s));
				ck_assert_ptr_nonnull(ss->s);
			}
			ss->s[ss->n++] = (struct snap){0, ss->na, 0, 0, 0};
			ck_assert_int_eq(sscanf(l, " %u", &ss->s[ss->n - 1].tid), 1);
			in = 1;
		} else if (l[0] != '\t') {
			in = 0; /* another event's sample */
		}
	}
	free(text);
}

void snaps_free(struct snaps *ss)
{
	free(ss->s);
	free(ss->addr);
	free(ss->unknown);
}

/* --- the comparison ------------------------------------------------------------ */

const char *const exc_name[EXC_COUNT] = {"no_cfi", "alt_stack", "getpc_call"};

/* Code address of perf's frame f (the IP's, a call's, or after a signal frame
 * where the interrupted code goes on), and whether frame f + 1 comes after a
 * signal frame. */
static uint64_t code_of(const struct pair *p, size_t f)
{
	return f == 0 ? p->ip : p->d[f] + p->delta;
}

static int after_signal(const struct pair *p, const struct facts *fa, size_t f)
{
	const struct fde *e = f == 0 ? NULL : fde_of(fa, code_of(p, f - 1));
	return e && e->signal;
}

/* Frames equal from 1 on, the unit's skipping its frame `skip` (0: none):
 * returns how many of perf's frames agree (nd when all do); counts the
 * frames compared and those after signal frames. */
static size_t agree(const struct pair *p, const struct facts *fa, size_t skip, long *frames,
                    long *sig)
{
	size_t f = 1;
	for (; f < p->nd; f++) {
		size_t uf = skip && f >= skip ? f + 1 : f;
		if (uf >= p->nu)
			break;
		int exact = after_signal(p, fa, f);
		if (p->u[uf] != p->d[f] + (exact ? 0 : 1))
			break;
		*frames += 1;
		*sig += exact;
	}
	return f;
}

static void except(struct tally *t, enum exc k, long frames)
{
	t->exc[k]++;
	t->exc_frames[k] += frames;
}

void compare_one(const struct pair *p, const struct facts *fa, struct tally *t, size_t i,
                 unsigned tid)
{
	long frames = 0, sig = 0;
	size_t ok = agree(p, fa, 0, &frames, &sig);
	t->frames += frames;
	t->signal_frames += sig;
	if (ok == p->nd && p->nd == p->nu)
		return;
	/* past code without CFI perf stops, or guesses by the frame pointer
	 * (libdw's fallback), which skips a caller that keeps none */
	if (!fde_of(fa, code_of(p, ok - 1)))
		return except(t, EXC_NO_CFI, p->nu > ok ? (long)(p->nu - ok) : 0);
	size_t last = p->nd - 1;
	if (ok == p->nd && p->nd < p->nu && after_signal(p, fa, last) && p->sp >= fa->alt_lo &&
	    p->sp < fa->alt_hi)
		return except(t, EXC_ALT_STACK, (long)(p->nu - p->nd)); /* perf stopped there */
	if (p->nu == p->nd + 1 && p->nu > 1 && p->u[1] == p->u[0]) {
		int site = 0;
		for (size_t k = 0; k < fa->ngetpc; k++)
			site |= fa->getpc[k] == p->ip;
		long f2 = 0, s2 = 0;
		if (site && agree(p, fa, 1, &f2, &s2) == p->nd) {
			t->frames += f2 - frames;
			t->signal_frames += s2 - sig;
			return except(t, EXC_GETPC_CALL, 1);
		}
	}
	t->mismatches++;
	if (!t->first[0]) {
		int n = snprintf(t->first, sizeof(t->first),
		                 "snapshot %zu (thread %u), frame %zu: unit", i, tid, ok);
		for (size_t k = 0; k < p->nu && k < 8 && n < 400; k++)
			n += snprintf(t->first + n, sizeof(t->first) - (size_t)n, " %" PRIx64,
			              p->u[k]);
		n += snprintf(t->first + n, sizeof(t->first) - (size_t)n, "; perf");
		for (size_t k = 0; k < p->nd && k < 8 && n < 480; k++)
			n += snprintf(t->first + n, sizeof(t->first) - (size_t)n, " %" PRIx64,
			              p->d[k]);
	}
}

void compare(const struct snaps *unit, const struct snaps *dw, const struct facts *fa,
             struct tally *t)
{
	memset(t, 0, sizeof(*t));
	ck_assert_msg(unit->n == dw->n, "%zu snapshots with the unit, %zu with stack dumps",
	              unit->n, dw->n);
	t->snapshots = (long)unit->n;
	for (size_t i = 0; i < unit->n; i++) {
		const struct snap *a = &unit->s[i], *b = &dw->s[i];
		ck_assert_msg(a->tid == b->tid, "snapshot %zu: thread %u and %u", i, a->tid,
		              b->tid);
		ck_assert_msg(a->n >= 1 && b->n >= 1 && b->ip, "snapshot %zu: no IP", i);
		struct pair p = {unit->addr + a->first,
		                 dw->addr + b->first,
		                 dw->unknown + b->first,
		                 a->n,
		                 b->n,
		                 b->ip,
		                 b->sp,
		                 0};
		p.delta = b->ip - p.d[0];
		if (p.u[0] != p.d[0]) {
			t->mismatches++;
			if (!t->first[0])
				snprintf(t->first, sizeof(t->first),
				         "snapshot %zu: IP %" PRIx64 " and %" PRIx64, i, p.u[0],
				         p.d[0]);
			continue;
		}
		compare_one(&p, fa, t, i, a->tid);
	}
}
