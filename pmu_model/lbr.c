/* LBR ring buffer and LBR_SELECT-style filtering (see lbr.h). Filter names are
 * perf record's -j/--branch-filter words (tools/perf/Documentation/perf-record.txt). */
#include "pmu_model/lbr.h"

#include <string.h>

#include "common/err.h"

int lbr_init(struct lbr *l, uint32_t depth, uint32_t filter)
{
	memset(l, 0, sizeof(*l));
	if (depth != 4 && depth != 8 && depth != 16 && depth != 32 && depth != 64)
		return PMUSIM_ERR_ARG;
	l->depth = depth;
	l->mask = 2 * depth - 1;
	l->filter = filter;
	l->head = l->mask;
	return 0;
}

uint32_t lbr_read(const struct lbr *l, struct lbr_entry *out)
{
	for (uint32_t i = 0; i < l->count; i++)
		out[i] = l->ring[(l->head - i) & l->mask];
	return l->count;
}

static const struct {
	const char *word;
	uint32_t bits;
} filter_words[] = {
	{"any", LBR_F_ANY},          {"any_call", LBR_F_ANY_CALL}, {"any_ret", LBR_F_RET},
	{"ind_call", LBR_F_IND_CALL}, {"ind_jmp", LBR_F_IND_JMP},   {"call", LBR_F_CALL},
	{"cond", LBR_F_COND},
};

/* 1 when the n bytes at p are the word w. */
static int word_is(const char *p, size_t n, const char *w)
{
	return strlen(w) == n && strncmp(p, w, n) == 0;
}

int lbr_parse_filter(const char *spec, uint32_t *filter, const char **bad, int *user)
{
	uint32_t f = 0;
	int priv_u = 0, priv_other = 0;
	const char *p = spec;
	*bad = NULL;
	while (*p) {
		size_t n = strcspn(p, ","), i, nw = sizeof(filter_words) / sizeof(filter_words[0]);
		for (i = 0; i < nw && !word_is(p, n, filter_words[i].word); i++)
			;
		if (i < nw)
			f |= filter_words[i].bits;
		else if (word_is(p, n, "u"))
			priv_u = 1;
		else if (word_is(p, n, "k") || word_is(p, n, "hv"))
			priv_other = 1;
		else {
			*bad = p; /* the word runs to the next comma */
			return PMUSIM_ERR_ARG;
		}
		p += n;
		if (*p == ',')
			p++;
	}
	if (f == 0) /* perf: privilege words alone mean "any" */
		f = LBR_F_ANY;
	*user = priv_u || !priv_other;
	*filter = *user ? f : 0;
	return 0;
}
