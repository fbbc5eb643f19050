/* pmusim validate --regions: the regions selected from a recording's op samples
 * against those the same options select from the exact counts of the same run
 * (a truth JSON), both explored in the code the recorded process mapped, compared
 * by the instructions they cover weighted by their exact executions
 * (profiler/region_compare.h). The blocks where the two differ are listed, so a
 * low index says where the samples misled the selector. */
#include <inttypes.h>
#include <stdlib.h>

#include "cli/cli.h"
#include "cli/report_regions.h"
#include "common/arrays.h"
#include "profiler/region_compare.h"

#define DIFF_SHOWN 8 /* differing blocks listed per side, heaviest first */

/* Instructions of one selection that the other lacks, by the block holding them. */
struct diff_block {
	uint64_t start, end;
	uint32_t insns, ninsns; /* differing, in the block */
	double weight;          /* their exact weight */
};

struct diff {
	struct diff_block *b;
	size_t n, cap;
};

static int diff_add(struct diff *d, const struct rcfg *g, uint64_t ip, double w)
{
	const struct rcfg_block *b = rcfg_block_holding(g, ip);
	uint64_t start = b ? b->start : ip;
	if (d->n && d->b[d->n - 1].start == start) { /* ips come sorted: same block as the last */
		d->b[d->n - 1].insns++;
		d->b[d->n - 1].weight += w;
		return 0;
	}
	if (d->n == d->cap) {
		size_t cap = d->cap ? 2 * d->cap : 16;
		struct diff_block *nb = realloc(d->b, cap * sizeof(*nb));
		if (!nb)
			return -1;
		d->b = nb, d->cap = cap;
	}
	d->b[d->n++] = (struct diff_block){start, b ? b->end : ip + 1, 1, b ? b->ninsns : 1, w};
	return 0;
}

static int cmp_diff(const void *x, const void *y)
{
	const struct diff_block *a = x, *b = y;
	if (a->weight != b->weight)
		return a->weight > b->weight ? -1 : 1;
	return a->start < b->start ? -1 : a->start > b->start;
}

/* The instructions of a not in b, by a's blocks (g: a's graph), heaviest first. */
static int diff_of(const struct region_cover *a, const struct region_cover *b, const struct rcfg *g,
                   const struct hot_code *exact, struct diff *d)
{
	size_t j = 0;
	for (size_t i = 0; i < a->n; i++) {
		while (j < b->n && b->ip[j] < a->ip[i])
			j++;
		if (j < b->n && b->ip[j] == a->ip[i])
			continue;
		if (diff_add(d, g, a->ip[i], hot_code_weight(exact, a->ip[i])) < 0)
			return -1;
	}
	if (d->n) /* no array when nothing differs */
		arrays_sort(d->b, d->n, sizeof(*d->b), cmp_diff);
	return 0;
}

static void print_diff_text(const char *side, const struct diff *d, double total)
{
	for (size_t i = 0; i < d->n && i < DIFF_SHOWN && d->b[i].weight > 0; i++)
		printf("only in the %s selection: block 0x%" PRIx64 "..0x%" PRIx64
		       " (%u of %u instructions), "
		       "%.3f %% of execution\n",
		       side, d->b[i].start, d->b[i].end, d->b[i].insns, d->b[i].ninsns,
		       total > 0 ? 100 * d->b[i].weight / total : 0);
}

static void print_diff_json(const char *key, const struct diff *d, double total)
{
	printf(", \"%s\": [", key);
	for (size_t i = 0, k = 0; i < d->n && i < DIFF_SHOWN && d->b[i].weight > 0; i++)
		printf("%s{\"start\": \"0x%" PRIx64 "\", \"end\": \"0x%" PRIx64
		       "\", \"insns\": %u, \"share\": %.6f}",
		       k++ ? ", " : "", d->b[i].start, d->b[i].end, d->b[i].insns,
		       total > 0 ? d->b[i].weight / total : 0);
	printf("]");
}

struct verdict {
	const struct region_sel *s, *t; /* from the samples, from the exact counts */
	struct region_overlap ov;
	double est; /* the samples' share on the sampled cover (clones included) */
	struct diff only_s, only_t;
};

static void print_verdict(const struct verdict *v, int json, double min)
{
	const struct rprune *ps = v->s->p, *pt = v->t->p;
	if (json) {
		printf("{\"jaccard\": %.6f, \"min_jaccard\": %.6f, \"est_share\": %.6f, "
		       "\"exact_share\": %.6f, "
		       "\"ideal_share\": %.6f, \"sample_regions\": %zu, \"sample_insns\": %zu, "
		       "\"truth_regions\": %zu, "
		       "\"truth_insns\": %zu, \"samples\": %" PRIu64,
		       v->ov.jaccard, min, v->est, v->ov.share_a, v->ov.share_b,
		       ps->nkept_region, ps->nip, pt->nkept_region, pt->nip, v->s->hot->samples);
		print_diff_json("only_sampled", &v->only_s, v->ov.total);
		print_diff_json("only_ideal", &v->only_t, v->ov.total);
		printf("}\n");
		return;
	}
	printf("regions from %" PRIu64
	       " op samples: %zu kept of %zu, %zu instructions; from the exact counts: "
	       "%zu kept of %zu, %zu instructions\n",
	       v->s->hot->samples, ps->nkept_region, ps->nregion, ps->nip, pt->nkept_region,
	       pt->nregion, pt->nip);
	printf("weighted Jaccard index: %.4f (min %.4f)\n", v->ov.jaccard, min);
	printf("share of execution in the sampled selection: %.3f %% estimated from the samples, "
	       "%.3f %% exact\n",
	       100 * v->est, 100 * v->ov.share_a);
	printf("share of execution in the ideal selection: %.3f %% exact\n", 100 * v->ov.share_b);
	print_diff_text("sampled", &v->only_s, v->ov.total);
	print_diff_text("ideal", &v->only_t, v->ov.total);
}

/* Selects from both sources and compares; the exit status. */
static int compare(const struct region_args *a, const char *input, int json,
                   struct region_code *code, struct hot_code *hs, struct hot_code *ht)
{
	const char *cmd = "pmusim validate";
	struct region_sel *s = NULL, *t = NULL;
	int status = EXIT_PMUSIM_ERROR;
	if (region_select(a, code->bin, hs, input, &s, cmd) < 0) {
		hot_code_free(ht);
		return status;
	}
	if (region_select(a, code->bin, ht, a->truth, &t, cmd) < 0) {
		region_sel_free(s);
		return status;
	}
	struct verdict v = {.s = s, .t = t};
	struct region_cover cs = rinline_cover(s->inl), ct = rinline_cover(t->inl);
	struct region_overlap self;
	if (region_overlap_of(&cs, &ct, t->hot, &v.ov) < 0 ||
	    region_overlap_of(&cs, &cs, s->hot, &self) < 0 ||
	    diff_of(&cs, &ct, s->g, t->hot, &v.only_s) < 0 ||
	    diff_of(&ct, &cs, t->g, t->hot, &v.only_t) < 0) {
		fprintf(stderr, "%s: out of memory\n", cmd);
	} else {
		v.est = self.share_a;
		print_verdict(&v, json, a->min_jaccard);
		status = v.ov.jaccard >= a->min_jaccard ? 0 : 1;
		if (status == 1)
			fprintf(stderr, "FAIL: weighted Jaccard index %.4f < min %.4f\n",
			        v.ov.jaccard, a->min_jaccard);
	}
	free(v.only_s.b);
	free(v.only_t.b);
	region_sel_free(s);
	region_sel_free(t);
	return status;
}

int region_validate(const struct region_args *a, const char *input, int json)
{
	const char *cmd = "pmusim validate";
	struct region_code code;
	struct hot_code *hs, *ht;
	if (region_load_ops(a, input, &hs, &code, cmd) < 0)
		return EXIT_PMUSIM_ERROR;
	if (region_load_truth(a->truth, &ht, &code, cmd) < 0) {
		hot_code_free(hs);
		region_code_fini(&code);
		return EXIT_PMUSIM_ERROR;
	}
	int status = compare(a, input, json, &code, hs, ht);
	region_code_fini(&code);
	return status;
}
