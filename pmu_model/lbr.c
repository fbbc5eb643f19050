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

int lbr_parse_filter(const char *spec, uint32_t *filter, const char **bad, int *user)
{
	uint32_t f = 0;
	int priv_u = 0, priv_other = 0;
	static char word[32];
	const char *p = spec;
	*bad = NULL;
	while (*p) {
		size_t n = strcspn(p, ",");
		if (n == 0 || n >= sizeof(word)) {
			*bad = spec;
			return PMUSIM_ERR_ARG;
		}
		memcpy(word, p, n);
		word[n] = 0;
		size_t i, nw = sizeof(filter_words) / sizeof(filter_words[0]);
		for (i = 0; i < nw && strcmp(word, filter_words[i].word) != 0; i++)
			;
		if (i < nw)
			f |= filter_words[i].bits;
		else if (strcmp(word, "u") == 0)
			priv_u = 1;
		else if (strcmp(word, "k") == 0 || strcmp(word, "hv") == 0)
			priv_other = 1;
		else {
			*bad = word;
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
