/* A baseline diff's bar chart (see profiler/baseline_svg.h). */
#include "profiler/baseline_svg.h"

#include <inttypes.h>
#include <string.h>

#include "common/err.h"
#include "profiler/svg.h"

#define W 960.0
#define ROW 22.0
#define LEFT 300.0  /* the names' column */
#define MID (LEFT + (W - LEFT) / 2)

int baseline_svg(FILE *f, const struct bl_diff *d, const char *base, const char *cur, size_t top)
{
	size_t n = 0;
	uint64_t most = 1;
	for (size_t i = 0; i < d->nfn && n < top; i++) {
		if (d->fn[i].status == BL_SAME)
			continue;
		int64_t c = bl_change(&d->fn[i].self[d->sort_kind]);
		uint64_t m = c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c;
		most = m > most ? m : most;
		n++;
	}
	char title[1200];
	snprintf(title, sizeof(title), "pmusim diff: self %s, change per function\n%.500s -> %.500s",
		 d->nkinds ? d->kind[d->sort_kind] : "cost", base, cur);
	double h = 90 + ROW * (double)(n ? n : 1) + 30;
	svg_begin(f, W, h);
	double y = svg_title(f, W, title) + 10;
	fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"/>\n", MID, y - 4, MID,
		y + ROW * (double)n + 4);
	if (!n)
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\" font-size=\"13\">no function changed</text>\n",
			W / 2, y + 15);
	size_t k = 0;
	for (size_t i = 0; i < d->nfn && k < n; i++) {
		const struct bl_func_diff *fn = &d->fn[i];
		if (fn->status == BL_SAME)
			continue;
		int64_t c = bl_change(&fn->self[d->sort_kind]);
		double len = (double)(c < 0 ? (uint64_t)0 - (uint64_t)c : (uint64_t)c) / (double)most * ((W - LEFT) / 2 - 90);
		double ry = y + ROW * (double)k++;
		double x = c < 0 ? MID - len : MID;
		fprintf(f, "<g><title>");
		svg_put_escaped(f, fn->name, strlen(fn->name));
		fprintf(f, ": %+" PRId64 " (%" PRIu64 " -> %" PRIu64 ")</title>\n", c, fn->self[d->sort_kind].base,
			fn->self[d->sort_kind].cur);
		fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"%s\"/>\n", x, ry + 3, len,
			ROW - 6, c > 0 ? "#d62728" : "#2ca02c");
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"12\" text-anchor=\"end\">", LEFT - 8, ry + 15);
		svg_put_escaped(f, fn->name, 60);
		fprintf(f, "%s</text>\n", fn->status == BL_ADDED ? " (added)" : fn->status == BL_REMOVED ? " (removed)" : "");
		fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" font-size=\"11\" text-anchor=\"%s\">%+" PRId64 "</text></g>\n",
			c < 0 ? x - 4 : x + len + 4, ry + 15, c < 0 ? "end" : "start", c);
	}
	fprintf(f, "</svg>\n");
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
