/* End-to-end test of `pmusim script -F ip,brstackinsn` against perf 6.1's own
 * `perf script -F ip,brstackinsn` on the same files. perf walks the code
 * between LBR entries itself (its instruction decoder, its rules) and prints,
 * per entry, the range's instructions, the entry's cycles and the range's IPC;
 * pmusim prints the count lbr_range_walk gives, the one the CPI report divides
 * by. From both listings the test takes, for every LBR entry of every sample,
 * the branch's address, the range's instruction count (the lines perf prints
 * for it, branch included), the cycles, the running total and the IPC text,
 * and asserts they agree digit for digit on every entry:
 * - pmusim's recordings of several workloads (taken-branch trigger, period 997,
 *   every taken branch; and the cycles trigger, one with skid, one with an
 *   8-deep LBR): perf prints nothing on stderr, the samples come in the same
 *   order, 0 mismatches; the listings are the same text but for the names perf
 *   makes up for PLT entries ("@plt:" lines), which pmusim does not;
 * - the real Skylake recording of ../shared/fixtures/real-lbr (cycle fields of
 *   real hardware, perf 4.13's file), the program found through --symfs by
 *   both: samples matched by IP and entries (perf sorts them by time, pmusim
 *   keeps the file's order), 0 mismatches; the ranges pmusim refuses (a real
 *   LBR that lost an entry) are exactly those whose bytes, as perf prints them,
 *   hold a jump, call or return before their end.
 * That a wrong count would show: the IPC text of every compared entry is
 * recomputed from pmusim's count minus one and plus one (perf's formula,
 * (float)insns / cycles, "%.2f") and must then differ from perf's on at least
 * 99 % of the entries.
 * Environment: PMUSIM, WORKLOADS, PMUSIM_SHARED as for check_e2e. */
#include <check.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* One LBR entry as a listing shows it. */
struct entry {
	uint64_t branch;
	unsigned insns;    /* the lines of its range, the branch's included */
	unsigned cycles;   /* 0: none printed */
	unsigned total;    /* the "[T]" after the cycles */
	char ipc[16];      /* "1.50"; empty: none printed */
	int refused;       /* pmusim's "range … not walked" line */
	int uncond_inside; /* a line of the range before its last is a jmp, call or ret */
};

struct smp {
	uint64_t ip;
	size_t first, n; /* its entries */
};

struct listing {
	struct entry *e;
	size_t ne, ecap;
	struct smp *s;
	size_t ns, scap;
	size_t perf_mismatch_lines; /* perf's "mismatch of LBR data and executable" */
};

/* A jump, call or return, read from the bytes perf prints ("insn: ff 25 …"):
 * after legacy and REX prefixes, e8 e9 eb c2 c3 ea 9a, or ff /2 /3 /4 /5
 * (Intel SDM vol. 2, one-byte opcode map). Not the decoder under test. */
static int is_uncond(const char *insn)
{
	unsigned b[16];
	int n = 0;
	const char *p = strstr(insn, "insn: ");
	for (p = p ? p + 6 : insn; n < 16 && sscanf(p, "%2x", &b[n]) == 1; p += 3)
		n++;
	int i = 0;
	while (i < n && (b[i] == 0x66 || b[i] == 0x67 || b[i] == 0xf0 || b[i] == 0xf2 ||
	                 b[i] == 0xf3 || b[i] == 0x2e || b[i] == 0x36 || b[i] == 0x3e ||
	                 b[i] == 0x26 || b[i] == 0x64 || b[i] == 0x65 || (b[i] & 0xf0) == 0x40))
		i++;
	if (i >= n)
		return 0;
	unsigned op = b[i];
	if (op == 0xe8 || op == 0xe9 || op == 0xeb || op == 0xc2 || op == 0xc3 || op == 0xea ||
	    op == 0x9a)
		return 1;
	unsigned reg = i + 1 < n ? (b[i + 1] >> 3) & 7 : 0;
	return op == 0xff && reg >= 2 && reg <= 5;
}

static struct entry *new_entry(struct listing *L)
{
	if (L->ne == L->ecap) {
		L->ecap = L->ecap ? 2 * L->ecap : 4096;
		L->e = realloc(L->e, L->ecap * sizeof(*L->e));
		ck_assert_ptr_nonnull(L->e);
	}
	memset(&L->e[L->ne], 0, sizeof(L->e[0]));
	L->s[L->ns - 1].n++;
	return &L->e[L->ne++];
}

/* "# PRED 3 cycles [6] 2.33 IPC" or "… not walked (R) 3 cycles [6]": the numbers. */
static void read_cycles(const char *p, struct entry *e)
{
	const char *c = strstr(p, " cycles [");
	if (!c)
		return;
	while (c > p && c[-1] != ' ')
		c--;
	ck_assert_int_eq(sscanf(c, "%u cycles [%u]", &e->cycles, &e->total), 2);
	const char *ipc = strstr(c, "] ");
	if (ipc)
		ck_assert_int_eq(sscanf(ipc + 2, "%15[0-9.] IPC", e->ipc), 1);
}

/* Parses the output of -F ip,brstackinsn (perf's or pmusim's). */
static void parse_listing(char *text, struct listing *L)
{
	memset(L, 0, sizeof(*L));
	unsigned count = 0;
	int uncond = 0;
	for (char *line = strtok(text, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == ' ') { /* " %16lx": a sample */
			if (L->ns == L->scap) {
				L->scap = L->scap ? 2 * L->scap : 1024;
				L->s = realloc(L->s, L->scap * sizeof(*L->s));
				ck_assert_ptr_nonnull(L->s);
			}
			L->s[L->ns++] = (struct smp){strtoull(line, NULL, 16), L->ne, 0};
			count = 0;
			uncond = 0;
			continue;
		}
		ck_assert_msg(L->ns > 0, "a line before the first sample: %s", line);
		if (strncmp(line, "\t# pmusim: range 0x", 19) == 0) {
			struct entry *e = new_entry(L);
			uint64_t start;
			ck_assert_int_eq(
			    sscanf(line + 17, "%" SCNx64 "-0x%" SCNx64, &start, &e->branch), 2);
			e->refused = 1;
			read_cycles(line, e);
			count = 0;
			uncond = 0;
		} else if (strcmp(line, "\tmismatch of LBR data and executable") == 0) {
			L->perf_mismatch_lines++;
			count = 0;
		} else if (line[0] == '\t' && strlen(line) > 18 && line[17] == '\t' &&
		           strspn(line + 1, "0123456789abcdef") == 16) {
			count++;
			const char *jump = strstr(line + 18, "\t#");
			if (!jump) {
				uncond |= is_uncond(line + 18);
				continue;
			}
			struct entry *e = new_entry(L);
			e->branch = strtoull(line + 1, NULL, 16);
			e->insns = count;
			e->uncond_inside = uncond;
			read_cycles(jump, e);
			count = 0;
			uncond = 0;
		}
	}
}

static void free_listing(struct listing *L)
{
	free(L->e);
	free(L->s);
}

/* perf's IPC text for insns over cycles (builtin-script.c ip__fprintf_jump). */
static void perf_ipc(long insns, unsigned cycles, char *out, size_t len)
{
	snprintf(out, len, "%.2f", (double)((float)insns / (float)cycles));
}

struct tally {
	size_t entries, with_ipc, mismatches, refused, refused_without_jump, alt_minus, alt_plus;
};

/* Entry pf (perf's) against pm (pmusim's) of the same sample. */
static void compare_entry(const struct entry *pf, const struct entry *pm, struct tally *t,
                          const char *what)
{
	t->entries++;
	if (pm->refused) {
		t->refused++;
		t->refused_without_jump += !pf->uncond_inside;
		if (pf->branch != pm->branch || pf->cycles != pm->cycles ||
		    pf->total != pm->total) {
			if (t->mismatches++ < 5)
				printf("  %s: refused entry 0x%" PRIx64
				       " %u [%u] vs perf's 0x%" PRIx64 " %u [%u]\n",
				       what, pm->branch, pm->cycles, pm->total, pf->branch,
				       pf->cycles, pf->total);
		}
		return;
	}
	if (pf->branch != pm->branch || pf->insns != pm->insns || pf->cycles != pm->cycles ||
	    pf->total != pm->total || strcmp(pf->ipc, pm->ipc) != 0) {
		if (t->mismatches++ < 5)
			printf("  %s: entry 0x%" PRIx64
			       ": perf %u insns %u cycles [%u] '%s', pmusim 0x%" PRIx64
			       " %u insns %u cycles [%u] '%s'\n",
			       what, pf->branch, pf->insns, pf->cycles, pf->total, pf->ipc,
			       pm->branch, pm->insns, pm->cycles, pm->total, pm->ipc);
		return;
	}
	if (!pf->ipc[0])
		return;
	t->with_ipc++;
	char alt[16];
	perf_ipc((long)pm->insns - 1, pm->cycles, alt, sizeof(alt));
	t->alt_minus += strcmp(alt, pf->ipc) != 0;
	perf_ipc((long)pm->insns + 1, pm->cycles, alt, sizeof(alt));
	t->alt_plus += strcmp(alt, pf->ipc) != 0;
}

static void compare_sample(const struct listing *pf, const struct smp *a, const struct listing *pm,
                           const struct smp *b, struct tally *t, const char *what)
{
	if (a->ip != b->ip || a->n != b->n) {
		if (t->mismatches++ < 5)
			printf("  %s: sample %" PRIx64 " with %zu entries vs %" PRIx64
			       " with %zu\n",
			       what, a->ip, a->n, b->ip, b->n);
		return;
	}
	for (size_t j = 0; j < a->n; j++)
		compare_entry(&pf->e[a->first + j], &pm->e[b->first + j], t, what);
}

/* Runs argv with stdout to out and stderr to err; the exit status. */
static int run_to(char *const argv[], const char *out, const char *err)
{
	return run_cmd(argv, NULL, out, err);
}

/* Both listings of data; the stderr of perf, which must be empty. */
static void listings(const char *data, const char *symfs, char **perf_text, char **pm_text)
{
	const char *po = tmp_path("perf.txt"), *pe = tmp_path("perf.err"),
	           *mo = tmp_path("pmusim.txt");
	char sf[600];
	snprintf(sf, sizeof(sf), "--symfs=%s", symfs ? symfs : "");
	char *pa[] = {"perf",       "script",          "-F", "ip,brstackinsn", "-i",
	              (char *)data, symfs ? sf : NULL, NULL};
	ck_assert_int_eq(run_to(pa, po, pe), 0);
	size_t errlen = 0;
	char *err = slurp(pe, &errlen);
	ck_assert_msg(err && errlen == 0, "perf script on %s said: %s", data, err ? err : "?");
	free(err);
	char *ma[] = {(char *)pmusim(),         "script",      "-F",
	              "ip,brstackinsn",         "-i",          (char *)data,
	              symfs ? "--symfs" : NULL, (char *)symfs, NULL};
	ck_assert_int_eq(run_to(ma, mo, NULL), 0);
	*perf_text = slurp(po, NULL);
	*pm_text = slurp(mo, NULL);
	ck_assert_ptr_nonnull(*perf_text);
	ck_assert_ptr_nonnull(*pm_text);
	unlink(po);
	unlink(pe);
	unlink(mo);
}

/* The texts are the same but for perf's PLT names ("\t…@plt:" lines);
 * returns how many of those pmusim leaves out. */
static size_t same_text_but_plt(const char *a, const char *b)
{
	size_t plt = 0, line = 1;
	while (*a || *b) {
		size_t la = strcspn(a, "\n"), lb = strcspn(b, "\n");
		if (la == lb && memcmp(a, b, la) == 0) {
			a += la + (a[la] == '\n');
			b += lb + (b[lb] == '\n');
		} else if (la > 5 && a[0] == '\t' && memcmp(a + la - 5, "@plt:", 5) == 0) {
			a += la + (a[la] == '\n');
			plt++;
		} else {
			ck_abort_msg("perf's line %zu '%.*s' vs pmusim's '%.*s'", line, (int)la, a,
			             (int)lb, b);
		}
		line++;
	}
	return plt;
}

static void assert_tally(const struct tally *t, const char *what, size_t min_ipc)
{
	ck_assert_msg(t->mismatches == 0, "%s: %zu mismatches", what, t->mismatches);
	ck_assert_msg(t->with_ipc >= min_ipc, "%s: only %zu entries with an IPC", what,
	              t->with_ipc);
	/* a count off by one is seen: nearly every IPC text changes */
	ck_assert_msg(t->alt_minus * 100 >= t->with_ipc * 99 &&
	                  t->alt_plus * 100 >= t->with_ipc * 99,
	              "%s: a count off by one changes only %zu and %zu of %zu IPCs", what,
	              t->alt_minus, t->alt_plus, t->with_ipc);
}

static const struct row {
	int line;
	const char *workload, *event, *period, *extra[3];
	size_t min_ipc; /* entries with an IPC at least (the recording is deterministic) */
} rows[] = {
    {__LINE__, "loops", "br_inst_retired.near_taken", "997", {NULL}, 10000},
    {__LINE__, "switch", "br_inst_retired.near_taken", "997", {NULL}, 3000},
    {__LINE__, "recursion", "br_inst_retired.near_taken", "997", {NULL}, 1000},
    {__LINE__, "indirect", "br_inst_retired.near_taken", "997", {NULL}, 500},
    {__LINE__, "strings", "br_inst_retired.near_taken", "997", {NULL}, 50},
    {__LINE__, "callstacks", "br_inst_retired.near_taken", "997", {NULL}, 5000},
    {__LINE__, "cpi_tree", "br_inst_retired.near_taken", "997", {NULL}, 20000},
    {__LINE__, "cpi_interp", "br_inst_retired.near_taken", "997", {NULL}, 10000},
    {__LINE__, "loops.dynpie", "br_inst_retired.near_taken", "997", {NULL}, 10000},
    {__LINE__, "callstacks", "cycles", "2003", {NULL}, 10000},
    {__LINE__, "cpi_interp", "cycles", "2003", {"--skid", "3", NULL}, 50000},
    {__LINE__, "recursion", "cycles", "1009", {"--lbr-depth", "8", NULL}, 1000},
};

START_TEST(pmusim_recordings)
{
	const struct row *r = &rows[_i];
	char what[160];
	snprintf(what, sizeof(what), "%s (-e %s -c %s%s%s%s%s, line %d)", r->workload, r->event,
	         r->period, r->extra[0] ? " " : "", r->extra[0] ? r->extra[0] : "",
	         r->extra[1] ? " " : "", r->extra[1] ? r->extra[1] : "", r->line);
	const char *data = tmp_path("rec.data");
	char *ra[16] = {(char *)pmusim(),  "record", "-e", (char *)r->event, "-c",
	                (char *)r->period, "-b",     "-o", (char *)data};
	size_t k = 9;
	for (size_t i = 0; r->extra[i]; i++)
		ra[k++] = (char *)r->extra[i];
	ra[k++] = "--";
	ra[k++] = (char *)wl(r->workload);
	ra[k] = NULL;
	ck_assert_int_eq(run_cmd(ra, NULL, NULL, NULL), 0);
	char *pt, *mt;
	listings(data, NULL, &pt, &mt);
	size_t plt = same_text_but_plt(pt, mt);
	struct listing pf, pm;
	parse_listing(pt, &pf);
	parse_listing(mt, &pm);
	ck_assert_uint_eq(pf.ns, pm.ns);
	ck_assert_uint_eq(pf.perf_mismatch_lines, 0);
	struct tally t = {0};
	for (size_t i = 0; i < pf.ns; i++)
		compare_sample(&pf, &pf.s[i], &pm, &pm.s[i], &t, what);
	printf("check_brstackinsn_perf: %s: %zu samples, %zu entries, %zu with an IPC, %zu "
	       "mismatches, "
	       "%zu refused; count-1 changes %zu IPCs, count+1 %zu; %zu PLT names left out\n",
	       what, pf.ns, t.entries, t.with_ipc, t.mismatches, t.refused, t.alt_minus, t.alt_plus,
	       plt);
	ck_assert_uint_eq(t.refused, 0);
	assert_tally(&t, what, r->min_ipc);
	free_listing(&pf);
	free_listing(&pm);
	free(pt);
	free(mt);
	unlink(data);
}
END_TEST

/* Samples ordered by IP, then their entries' branches and cycles. */
static const struct listing *sort_listing;

static int cmp_smp(const void *x, const void *y)
{
	const struct smp *a = x, *b = y;
	if (a->ip != b->ip)
		return a->ip < b->ip ? -1 : 1;
	for (size_t j = 0; j < a->n && j < b->n; j++) {
		const struct entry *p = &sort_listing->e[a->first + j],
		                   *q = &sort_listing->e[b->first + j];
		if (p->branch != q->branch)
			return p->branch < q->branch ? -1 : 1;
		if (p->cycles != q->cycles)
			return p->cycles < q->cycles ? -1 : 1;
	}
	return a->n < b->n ? -1 : a->n > b->n;
}

static void sort_samples(struct listing *L)
{
	sort_listing = L;
	qsort(L->s, L->ns, sizeof(L->s[0]), cmp_smp);
}

/* The program's path as the recording's MMAP2 record names it (its README). */
#define REAL_PROG                                                                                  \
	"build/work/11ef31a2a8be9640fa8d4c917e76f0db3923/google3/blaze-out/k8-opt/genfiles/"       \
	"devtools/"                                                                                \
	"crosstool/autofdo/testdata/propeller_sample_1.bin.gen"

START_TEST(real_skylake)
{
	char data[600], bin[600], dir[600], link[3000];
	snprintf(data, sizeof(data), "%s/fixtures/real-lbr/skylake-cycles-b.perf.data",
	         shared_dir());
	snprintf(bin, sizeof(bin), "%s/fixtures/real-lbr/propeller_sample_1.bin", shared_dir());
	char *abs = realpath(bin, NULL);
	ck_assert_ptr_nonnull(abs);
	snprintf(dir, sizeof(dir), "%s", tmp_path("symfs"));
	snprintf(link, sizeof(link), "mkdir -p \"$(dirname '%s/%s')\" && ln -s '%s' '%s/%s'", dir,
	         REAL_PROG, abs, dir, REAL_PROG);
	char *sh[] = {"/bin/sh", "-c", link, NULL};
	ck_assert_int_eq(run_cmd(sh, NULL, NULL, NULL), 0);
	free(abs);
	char *pt, *mt;
	listings(data, dir, &pt, &mt);
	struct listing pf, pm;
	parse_listing(pt, &pf);
	parse_listing(mt, &pm);
	ck_assert_uint_eq(pf.ns, pm.ns);
	sort_samples(&pf);
	sort_samples(&pm);
	struct tally t = {0};
	for (size_t i = 0; i < pf.ns; i++)
		compare_sample(&pf, &pf.s[i], &pm, &pm.s[i], &t, "skylake");
	printf("check_brstackinsn_perf: real Skylake recording: %zu samples, %zu entries, %zu with "
	       "an IPC, "
	       "%zu mismatches, %zu refused (%zu without a jump inside); count-1 changes %zu IPCs, "
	       "count+1 %zu\n",
	       pf.ns, t.entries, t.with_ipc, t.mismatches, t.refused, t.refused_without_jump,
	       t.alt_minus, t.alt_plus);
	ck_assert_uint_eq(t.refused_without_jump, 0);
	assert_tally(&t, "skylake", 100000);
	free_listing(&pf);
	free_listing(&pm);
	free(pt);
	free(mt);
	char *rm[] = {"rm", "-rf", dir, NULL};
	run_cmd(rm, NULL, NULL, NULL);
}
END_TEST

/* Like perf, a recording without every taken branch is refused: one line, exit 2. */
START_TEST(needs_all_branches)
{
	const char *data = tmp_path("calls.data"), *err = tmp_path("err.txt");
	char *ra[] = {(char *)pmusim(),
	              "record",
	              "-e",
	              "br_inst_retired.near_taken",
	              "-c",
	              "997",
	              "-j",
	              "any_call",
	              "-o",
	              (char *)data,
	              "--",
	              (char *)wl("loops"),
	              NULL};
	ck_assert_int_eq(run_cmd(ra, NULL, NULL, NULL), 0);
	char *sa[] = {(char *)pmusim(), "script", "-F", "ip,brstackinsn", "-i", (char *)data, NULL};
	ck_assert_int_eq(run_cmd(sa, NULL, NULL, err), 2);
	char *text = slurp(err, NULL);
	ck_assert_ptr_nonnull(text);
	ck_assert_ptr_nonnull(strstr(text, "does not record every taken branch"));
	ck_assert_ptr_eq(strchr(text, '\n'), text + strlen(text) - 1);
	free(text);
	char *pa[] = {"perf", "script", "-F", "ip,brstackinsn", "-i", (char *)data, NULL};
	ck_assert_int_ne(run_cmd(pa, NULL, NULL, NULL), 0);
	unlink(data);
	unlink(err);
}
END_TEST

static Suite *suite(void)
{
	Suite *s = suite_create("brstackinsn");
	TCase *tc = tcase_create("perf");
	tcase_set_timeout(tc, 300);
	tcase_add_loop_test(tc, pmusim_recordings, 0, (int)(sizeof(rows) / sizeof(rows[0])));
	tcase_add_test(tc, real_skylake);
	tcase_add_test(tc, needs_all_branches);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	e2e_init();
	return run_suite(suite());
}
