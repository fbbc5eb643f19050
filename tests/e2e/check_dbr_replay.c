/* `pmusim run --dbr-regions R.json` against a reference that shares no code with
 * it: the program's own instruction stream on the real CPU as valgrind's lackey
 * prints it (tests/e2e/lackey_ref.h), walked here through the replacement code
 * R.json describes, by the rules of profiler/region_set.h and region_replay.h
 * written out again below over addresses only (pmusim's replay follows its
 * block stream, caches code runs and keeps per-thread states; this walks one
 * instruction list). Every figure of the replay must be equal: instructions
 * inside per region, entries per patch point, executions per copied block,
 * loop entries and header executions, every exit edge with its count.
 *
 * R.json comes from `report --regions --format json` of an op-sample recording
 * (`-c 256`) of the same program and arguments, as a user makes it. A REP string
 * instruction prints one I line per iteration in lackey's trace (lackey_ref.h);
 * repeated addresses in a row are one instruction here, as pmusim retires it
 * (no workload here has a one-instruction loop).
 *
 * The programs are static and their hot code their own, but glibc picks its string
 * functions by CPUID (IFUNCs), and valgrind's CPUID is not pmusim's model: a region
 * in memset or memmove is code the lackey run never executes (cpi_sort's regions
 * hold memmove, so cpi_sort is not here). Nor are the environments the same
 * (valgrind gives its client its own variables), and glibc's start-up reads the
 * environment: __tunables_init loops over envp (37 iterations from a shell), and a
 * region there counts what the environment makes it. cpi_tree 6 matched lackey
 * in the fresh Debian root and failed in a clone's checkout elsewhere (its third
 * region: 641,624 instructions inside by pmusim, never entered under lackey; the
 * cause not yet pinned down beyond this), so it is not here; the sanitized run,
 * whose environment differs too, replays loops only.
 *
 * Also: the estimate R.json carries (report's "replacement_share") is within 2
 * points of the replay's exact share, the figure the issue asks of the
 * estimate; a program other than the regions' is refused (exit 2, one line); a
 * malformed R.json is refused with its line and column.
 * Environment: PMUSIM, WORKLOADS as for check_e2e; valgrind on PATH. */
#include <check.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "tests/e2e/e2e_util.h"
#include "tests/e2e/lackey_ref.h"
#include "tests/unit/run_suite.h"

#define MAXR 64

struct rblock {
	uint64_t start;
	uint64_t *addr; /* its instructions' addresses */
	size_t n;
	uint32_t *succ;
	size_t nsucc;
	int leaves_for_call; /* ends in a call with no link (not inlined) */
};

struct rexit {
	uint64_t from, to, count;
	int interrupt;
};

struct rregion {
	struct rblock *b;
	size_t nb;
	uint64_t *point; /* addresses */
	uint32_t *point_block, *point_insn;
	size_t np;
	uint32_t *header; /* per loop */
	uint8_t **member; /* per loop, per block */
	size_t nloop;
	/* counted by the walk */
	uint64_t insns, entries, *point_entries, *block_execs, *loop_entries, *header_execs;
	struct rexit *ex;
	size_t nex, capex;
};

struct walk {
	struct rregion r[MAXR];
	size_t nr;
	long cur; /* region inside, -1 outside */
	uint32_t blk, next;
	uint64_t prev, last_in, total;
	int have_prev;
	long call_from; /* the region left for its call at call_at, -1 none */
	uint64_t call_at;
};

static uint64_t u64_of(const struct jv *v)
{
	uint64_t u = 0;
	ck_assert_msg(jv_u64(v, &u) == 0, "R.json: a number or address expected");
	return u;
}

static void load_regions(const char *path, struct walk *w)
{
	struct jv *doc;
	char msg[256];
	ck_assert_msg(json_parse_file(path, &doc, msg, sizeof(msg)) == 0, "%s: %s", path, msg);
	const struct jv *regs = jv_get(doc, "regions");
	ck_assert_ptr_nonnull(regs);
	for (size_t i = 0; i < regs->n; i++) {
		const struct jv *rep = jv_get(&regs->item[i], "replacement");
		if (!rep)
			continue;
		ck_assert_uint_lt(w->nr, MAXR);
		struct rregion *r = &w->r[w->nr++];
		const struct jv *bl = jv_get(rep, "blocks"), *pts = jv_get(rep, "points"),
		                *lps = jv_get(rep, "loops");
		r->nb = bl->n;
		r->b = calloc(r->nb, sizeof(*r->b));
		for (size_t k = 0; k < r->nb; k++) {
			const struct jv *o = &bl->item[k], *off = jv_get(o, "off"),
			                *sc = jv_get(o, "succ");
			struct rblock *b = &r->b[k];
			b->start = u64_of(jv_get(o, "start"));
			b->n = off->n - 1;
			b->addr = calloc(b->n, sizeof(uint64_t));
			for (size_t j = 0; j < b->n; j++)
				b->addr[j] = b->start + u64_of(&off->item[j]);
			b->nsucc = sc->n;
			const struct jv *kind = jv_get(o, "kind");
			ck_assert_msg(kind && kind->type == JV_STR, "R.json: a block without a kind");
			b->leaves_for_call = !sc->n && (!strcmp(kind->text, "call") || !strcmp(kind->text, "call_ind"));
			b->succ = calloc(sc->n + 1, sizeof(uint32_t));
			for (size_t j = 0; j < sc->n; j++)
				b->succ[j] = (uint32_t)u64_of(&sc->item[j]);
		}
		r->np = pts->n;
		r->point = calloc(r->np + 1, sizeof(uint64_t));
		r->point_block = calloc(r->np + 1, sizeof(uint32_t));
		r->point_insn = calloc(r->np + 1, sizeof(uint32_t));
		for (size_t k = 0; k < r->np; k++) {
			r->point[k] = u64_of(jv_get(&pts->item[k], "addr"));
			r->point_block[k] = (uint32_t)u64_of(jv_get(&pts->item[k], "block"));
			r->point_insn[k] = (uint32_t)u64_of(jv_get(&pts->item[k], "insn"));
		}
		/* a call that is a patch point is done in the replacement: it stays inside */
		for (size_t k = 0; k < r->nb; k++)
			for (size_t j = 0; j < r->np && r->b[k].leaves_for_call; j++)
				if (r->point[j] == r->b[k].addr[r->b[k].n - 1])
					r->b[k].leaves_for_call = 0;
		r->nloop = lps->n;
		r->header = calloc(r->nloop + 1, sizeof(uint32_t));
		r->member = calloc(r->nloop + 1, sizeof(uint8_t *));
		for (size_t l = 0; l < r->nloop; l++) {
			const struct jv *lb = jv_get(&lps->item[l], "blocks");
			r->header[l] = (uint32_t)u64_of(jv_get(&lps->item[l], "header"));
			r->member[l] = calloc(r->nb, 1);
			for (size_t j = 0; j < lb->n; j++)
				r->member[l][u64_of(&lb->item[j])] = 1;
		}
		r->point_entries = calloc(r->np + 1, sizeof(uint64_t));
		r->block_execs = calloc(r->nb + 1, sizeof(uint64_t));
		r->loop_entries = calloc(r->nloop + 1, sizeof(uint64_t));
		r->header_execs = calloc(r->nloop + 1, sizeof(uint64_t));
	}
	jv_free(doc);
}

static void free_regions(struct walk *w)
{
	for (size_t i = 0; i < w->nr; i++) {
		struct rregion *r = &w->r[i];
		for (size_t k = 0; k < r->nb; k++)
			free(r->b[k].addr), free(r->b[k].succ);
		for (size_t l = 0; l < r->nloop; l++)
			free(r->member[l]);
		free(r->b), free(r->point), free(r->point_block), free(r->point_insn);
		free(r->header), free(r->member), free(r->point_entries), free(r->block_execs);
		free(r->loop_entries), free(r->header_execs), free(r->ex);
	}
}

static void add_exit(struct rregion *r, uint64_t from, uint64_t to, int interrupt)
{
	for (size_t k = 0; k < r->nex; k++)
		if (r->ex[k].from == from && r->ex[k].to == to && r->ex[k].interrupt == interrupt) {
			r->ex[k].count++;
			return;
		}
	if (r->nex == r->capex) {
		r->capex = r->capex ? 2 * r->capex : 16;
		r->ex = realloc(r->ex, r->capex * sizeof(*r->ex));
		ck_assert_ptr_nonnull(r->ex);
	}
	r->ex[r->nex++] = (struct rexit){from, to, 1, interrupt};
}

/* Block b of region r entered inside, from block from (-1: at a patch point). */
static void entered(struct rregion *r, uint32_t b, long from)
{
	r->block_execs[b]++;
	for (size_t l = 0; l < r->nloop; l++) {
		if (r->header[l] == b)
			r->header_execs[l]++;
		if (r->member[l][b] && (from < 0 || !r->member[l][from]))
			r->loop_entries[l]++;
	}
}

static void outside(struct walk *w, uint64_t a)
{
	for (size_t i = 0; i < w->nr; i++)
		for (size_t k = 0; k < w->r[i].np; k++) {
			struct rregion *r = &w->r[i];
			if (r->point[k] != a)
				continue;
			w->cur = (long)i, w->blk = r->point_block[k],
			w->next = r->point_insn[k] + 1;
			r->entries++, r->point_entries[k]++, r->insns++;
			entered(r, w->blk, -1);
			return;
		}
}

static int visit(const struct lackey_insn *in, void *ctx)
{
	struct walk *w = ctx;
	uint64_t a = in->ip;
	if (w->have_prev && a == w->prev)
		return 0; /* a REP's next iteration: one instruction */
	w->prev = a, w->have_prev = 1, w->total++;
	if (w->call_from >= 0) { /* the instruction after a call the replacement left for */
		add_exit(&w->r[w->call_from], w->call_at, a, 0);
		w->call_from = -1;
	}
	if (w->cur >= 0) {
		struct rregion *r = &w->r[w->cur];
		struct rblock *b = &r->b[w->blk];
		if (w->next < b->n) {
			if (b->addr[w->next] == a) {
				if (w->next == b->n - 1 && b->leaves_for_call) {
					/* a call not inlined runs in the original code */
					w->call_from = w->cur, w->call_at = a, w->cur = -1;
					outside(w, a);
					return 0;
				}
				w->next++, r->insns++;
				return 0;
			}
			add_exit(r, b->addr[w->next - 1], a, 1);
		} else {
			for (size_t k = 0; k < b->nsucc; k++)
				if (r->b[b->succ[k]].start == a) {
					struct rblock *s = &r->b[b->succ[k]];
					entered(r, b->succ[k], (long)w->blk);
					w->blk = b->succ[k], w->next = 1;
					if (s->n == 1 && s->leaves_for_call) {
						w->call_from = w->cur, w->call_at = a, w->cur = -1;
						outside(w, a);
						return 0;
					}
					r->insns++;
					return 0;
				}
			add_exit(r, b->addr[b->n - 1], a, 0);
		}
		w->cur = -1;
	}
	outside(w, a);
	return 0;
}

/* opt: one report option and its value (NULL: none). */
static void record_and_select(const char *name, const char *arg, const char *rjson, const char *opt,
                              const char *val)
{
	const char *data = tmp_path("ops.data");
	char *rec[] = {(char *)pmusim(),
	               "record",
	               "-q",
	               "-e",
	               "ibs_op/cnt_ctl=1/",
	               "-c",
	               "256",
	               "--pmu-seed",
	               "1",
	               "-o",
	               (char *)data,
	               "--",
	               (char *)wl(name),
	               (char *)arg,
	               NULL};
	ck_assert_int_eq(run_cmd(rec, NULL, "/dev/null", NULL), 0);
	char *rep[] = {(char *)pmusim(), "report",    "--regions", "-i",
	               (char *)data,     "--format",  "json",      "-o",
	               (char *)rjson,    (char *)opt, (char *)val, NULL};
	ck_assert_int_eq(run_cmd(rep, NULL, NULL, NULL), 0);
}

static const struct jv *region_of(const struct jv *regs, size_t i)
{
	ck_assert_uint_lt(i, regs->n);
	return &regs->item[i];
}

static uint64_t num(const struct jv *o, const char *key)
{
	return u64_of(jv_get(o, key));
}

/* pmusim's replay report against the walk, figure by figure. */
static void compare(const char *name, const char *report, struct walk *w, double est_share)
{
	struct jv *doc;
	char msg[256];
	ck_assert_msg(json_parse_file(report, &doc, msg, sizeof(msg)) == 0, "%s: %s", report, msg);
	const struct jv *regs = jv_get(doc, "regions");
	ck_assert_uint_eq(regs->n, w->nr);
	uint64_t inside = 0, exits = 0, nexit = 0;
	if (getenv("DBR_DEBUG"))
		for (size_t i = 0; i < w->nr; i++) {
			struct rregion *r = &w->r[i];
			fprintf(stderr, "ref region %zu: insns %" PRIu64 " entries %" PRIu64 "\n",
			        i, r->insns, r->entries);
			for (size_t k = 0; k < r->nex; k++)
				fprintf(
				    stderr, "  exit %" PRIx64 " -> %" PRIx64 " %d: %" PRIu64 "\n",
				    r->ex[k].from, r->ex[k].to, r->ex[k].interrupt, r->ex[k].count);
			for (size_t k = 0; k < r->nb; k++)
				fprintf(stderr, "  block %zu: %" PRIu64 "\n", k, r->block_execs[k]);
		}
	for (size_t i = 0; i < w->nr; i++) {
		const struct jv *o = region_of(regs, i);
		struct rregion *r = &w->r[i];
		ck_assert_msg(num(o, "insns") == r->insns,
		              "%s region %zu: %" PRIu64 " inside, reference %" PRIu64, name, i,
		              num(o, "insns"), r->insns);
		ck_assert_uint_eq(num(o, "entries"), r->entries);
		const struct jv *pts = jv_get(o, "points"), *lps = jv_get(o, "loops"),
		                *bl = jv_get(o, "blocks"), *ex = jv_get(o, "exit_edges");
		ck_assert_uint_eq(pts->n, r->np);
		for (size_t k = 0; k < r->np; k++)
			ck_assert_uint_eq(num(&pts->item[k], "entries"), r->point_entries[k]);
		ck_assert_uint_eq(bl->n, r->nb);
		for (size_t k = 0; k < r->nb; k++)
			ck_assert_msg(
			    num(&bl->item[k], "executions") == r->block_execs[k],
			    "%s region %zu block %zu: %" PRIu64 " executions, reference %" PRIu64,
			    name, i, k, num(&bl->item[k], "executions"), r->block_execs[k]);
		ck_assert_uint_eq(lps->n, r->nloop);
		for (size_t l = 0; l < r->nloop; l++) {
			ck_assert_uint_eq(num(&lps->item[l], "entries"), r->loop_entries[l]);
			ck_assert_uint_eq(num(&lps->item[l], "header_executions"),
			                  r->header_execs[l]);
		}
		ck_assert_msg(ex->n == r->nex, "%s region %zu: %zu exit edges, reference %zu", name,
		              i, ex->n, r->nex);
		for (size_t k = 0; k < ex->n; k++) {
			const struct jv *e = &ex->item[k];
			uint64_t from = num(e, "from"), to = num(e, "to"), c = num(e, "count");
			int intr = strcmp(jv_get(e, "kind")->text, "interrupt") == 0, found = 0;
			for (size_t j = 0; j < r->nex; j++)
				if (r->ex[j].from == from && r->ex[j].to == to &&
				    r->ex[j].interrupt == intr) {
					ck_assert_msg(r->ex[j].count == c,
					              "%s: exit 0x%" PRIx64 " -> 0x%" PRIx64
					              ": %" PRIu64 ", reference %" PRIu64,
					              name, from, to, c, r->ex[j].count);
					found = 1;
				}
			ck_assert_msg(
			    found, "%s: exit 0x%" PRIx64 " -> 0x%" PRIx64 " not in the reference",
			    name, from, to);
			exits += c;
		}
		nexit += ex->n;
		inside += r->insns;
	}
	uint64_t total = num(doc, "instructions");
	double exact = (double)inside / (double)total;
	fprintf(stderr,
	        "%s: %zu regions, %" PRIu64 " of %" PRIu64
	        " instructions inside (%.3f %%), %" PRIu64 " exits over %" PRIu64
	        " edges, all equal to lackey's walk (%" PRIu64
	        " instructions); estimated %.3f %%\n",
	        name, w->nr, inside, total, 100 * exact, exits, nexit, w->total, 100 * est_share);
	ck_assert_msg(num(doc, "inside") == inside, "%s: the inside total is not the regions' sum",
	              name);
	ck_assert_msg(fabs(est_share - exact) <= 0.02,
	              "%s: estimate %.4f, exact %.4f: over 2 points", name, est_share, exact);
	jv_free(doc);
}

static double est_share_of(const char *rjson)
{
	struct jv *doc;
	char msg[256];
	double v = NAN;
	ck_assert_msg(json_parse_file(rjson, &doc, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(jv_num(jv_get(doc, "replacement_share"), &v), 0);
	jv_free(doc);
	return v;
}

static void replay_one(const char *name, const char *arg, const char *opt, const char *val)
{
	const char *rjson = tmp_path("R.json"), *report = tmp_path("replay.json");
	record_and_select(name, arg, rjson, opt, val);
	char *run[] = {(char *)pmusim(), "run",         "-q",
	               "--dbr-regions",  (char *)rjson, "--dbr-report",
	               (char *)report,   "--",          (char *)wl(name),
	               (char *)arg,      NULL};
	ck_assert_int_eq(run_cmd(run, NULL, "/dev/null", NULL), 0);
	static struct walk w;
	memset(&w, 0, sizeof(w));
	w.cur = -1, w.call_from = -1;
	load_regions(rjson, &w);
	ck_assert_msg(w.nr > 0, "%s: no region with patch points", name);
	const char *argv[] = {wl(name), arg, NULL};
	struct lackey_end end;
	char msg[256];
	ck_assert_msg(lackey_walk(argv, NULL, visit, &w, &end, msg, sizeof(msg)) == 0, "%s", msg);
	ck_assert_int_eq(end.status, 0);
	compare(name, report, &w, est_share_of(rjson));
	free_regions(&w);
}

START_TEST(loops)
{
	/* its outer loop's blocks run exactly 1 % of the inner's, on the default
	 * cold fraction (check_regions): off the coincidence */
	replay_one("loops", NULL, "--cold-fraction", "0.005");
}
END_TEST

START_TEST(cpi_chase)
{
	replay_one("cpi_chase", NULL, NULL, NULL);
}
END_TEST

START_TEST(cpi_interp)
{
	replay_one("cpi_interp", "4000", NULL, NULL);
}
END_TEST

START_TEST(switch_wl)
{
	replay_one("switch", "100000", NULL, NULL);
}
END_TEST

START_TEST(cpi_matrix)
{
	replay_one("cpi_matrix", "30", NULL, NULL);
}
END_TEST

/* The regions of one program applied to another: refused, nothing run. */
START_TEST(other_program)
{
	const char *rjson = tmp_path("R.json");
	record_and_select("loops", NULL, rjson, NULL, NULL);
	char *run[] = {(char *)pmusim(),
	               "run",
	               "--dbr-regions",
	               (char *)rjson,
	               "--",
	               (char *)wl("switch"),
	               "10",
	               NULL};
	const char *err = tmp_path("err");
	ck_assert_int_eq(run_cmd(run, NULL, "/dev/null", err), 2);
	char *t = slurp(err, NULL);
	ck_assert_msg(t && strstr(t, "regions of ") && strchr(t, '\n') == t + strlen(t) - 1,
	              "one line naming the programs expected: %s", t ? t : "");
	free(t);
}
END_TEST

/* A malformed R.json: its line and column, exit 2, no report file. */
START_TEST(malformed)
{
	const char *rjson = tmp_path("bad.json"), *err = tmp_path("err"),
	           *rep = tmp_path("rep.json");
	FILE *f = fopen(rjson, "w");
	ck_assert_ptr_nonnull(f);
	fputs("{\"regions\": [\n  {\"start\": \"0x1\", }]}\n", f);
	fclose(f);
	char *run[] = {(char *)pmusim(), "run", "--dbr-regions",     (char *)rjson, "--dbr-report",
	               (char *)rep,      "--",  (char *)wl("loops"), NULL};
	ck_assert_int_eq(run_cmd(run, NULL, "/dev/null", err), 2);
	char *t = slurp(err, NULL);
	ck_assert_msg(t && strstr(t, "line 2, column"), "line and column expected: %s", t ? t : "");
	free(t);
	ck_assert_ptr_null(fopen(rep, "r"));
	/* well-formed JSON that is no region set */
	f = fopen(rjson, "w");
	fputs("{\"regions\": [{\"start\": \"0x1\", \"replacement\": {\"blocks\": 3}}], \"total\": "
	      "1}\n",
	      f);
	fclose(f);
	ck_assert_int_eq(run_cmd(run, NULL, "/dev/null", err), 2);
	t = slurp(err, NULL);
	ck_assert_msg(t && strstr(t, "regions[0].replacement"), "the member expected: %s",
	              t ? t : "");
	free(t);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("dbr_replay");
	TCase *tc = tcase_create("lackey");
	tcase_set_timeout(tc, 600);
	tcase_add_test(tc, loops);
	/* under ASan one workload sees every code path of the replay; the figures are
	 * the release run's (the sanitized run's environment differs: other samples,
	 * other regions, see the opening comment on IFUNCs) */
	if (!e2e_sanitized()) {
		tcase_add_test(tc, cpi_chase);
		tcase_add_test(tc, cpi_interp);
		tcase_add_test(tc, switch_wl);
		tcase_add_test(tc, cpi_matrix);
	}
	tcase_add_test(tc, other_program);
	tcase_add_test(tc, malformed);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
