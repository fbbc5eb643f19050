/* Weighted Jaccard index of two instruction selections (region_compare.h):
 * one merge of the two sorted address lists, each instruction weighted by its
 * exact executions. */
#include "profiler/region_compare.h"

#include "common/err.h"

static int sorted(const struct region_cover *c)
{
	for (size_t i = 1; i < c->n; i++)
		if (c->ip[i] <= c->ip[i - 1])
			return 0;
	return 1;
}

int region_overlap_of(const struct region_cover *a, const struct region_cover *b,
		      const struct hot_code *exact, struct region_overlap *out)
{
	if (!sorted(a) || !sorted(b))
		return PMUSIM_ERR_ARG;
	struct region_overlap o = {.total = exact->total};
	size_t i = 0, j = 0;
	while (i < a->n || j < b->n) {
		int take_a = j == b->n || (i < a->n && a->ip[i] <= b->ip[j]);
		int take_b = i == a->n || (j < b->n && b->ip[j] <= a->ip[i]);
		double w = hot_code_weight(exact, take_a ? a->ip[i] : b->ip[j]);
		o.either += w;
		if (take_a)
			o.in_a += w, i++;
		if (take_b)
			o.in_b += w, j++;
		if (take_a && take_b)
			o.both += w;
	}
	o.jaccard = o.either > 0 ? o.both / o.either : 1;
	o.share_a = o.total > 0 ? o.in_a / o.total : 0;
	o.share_b = o.total > 0 ? o.in_b / o.total : 0;
	*out = o;
	return 0;
}
