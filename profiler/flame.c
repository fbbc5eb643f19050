/* Flame graph SVG (see flame.h). Layout after FlameGraph's flamegraph.pl
 * (Brendan Gregg): 1200 px wide, 16 px per frame, 12 px Verdana, text cut
 * with ".." at 0.59 font widths per character; SVG 1.1 shapes and text, and
 * the constant script of flame_script.h that zooms and searches.
 * The tree is built from the call paths sorted frame by frame, which makes
 * the nodes come out in pre-order with siblings already in name order. */
#include "profiler/flame.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"
#include "profiler/flame_script.h"
#include "profiler/keytab.h"
#include "profiler/svg.h"

#define WIDTH 1200.0
#define XPAD 10.0
#define FRAME_H 16.0
#define FONT 12.0
#define TOP 62.0 /* title and subtitle */
#define BOTTOM 10.0

struct node {
	const char *name;
	uint64_t samples;
	uint64_t x;     /* samples left of the box */
	uint64_t nextx; /* where the next child goes */
	size_t parent, depth;
};

struct tree {
	struct node *n;
	size_t count, cap;
	uint64_t total;
};

static int cmp_frames(const void *a, const void *b)
{
	const struct stackprof_path *x = *(const struct stackprof_path *const *)a;
	const struct stackprof_path *y = *(const struct stackprof_path *const *)b;
	for (size_t i = 0; i < x->depth && i < y->depth; i++) {
		int c = strcmp(x->frames[i], y->frames[i]);
		if (c)
			return c;
	}
	return x->depth < y->depth ? -1 : x->depth > y->depth;
}

static size_t common_prefix(const struct stackprof_path *a, const struct stackprof_path *b)
{
	size_t k = 0;
	while (a && k < a->depth && k < b->depth && strcmp(a->frames[k], b->frames[k]) == 0)
		k++;
	return k;
}

static int add_node(struct tree *t, const char *name, size_t parent, size_t depth)
{
	if (t->count == t->cap) {
		size_t nc = t->cap ? t->cap * 2 : 256;
		struct node *nn = realloc(t->n, nc * sizeof(*nn));
		if (!nn)
			return -1;
		t->n = nn;
		t->cap = nc;
	}
	t->n[t->count++] = (struct node){name, 0, 0, 0, parent, depth};
	return 0;
}

/* The tree of the paths under a root "all"; nodes in pre-order, positioned. */
static int build(struct tree *t, const struct stackprof *sp)
{
	size_t np, maxd = 0;
	const struct stackprof_path *p = stackprof_paths(sp, &np);
	const struct stackprof_path **sorted = malloc((np + 1) * sizeof(*sorted));
	for (size_t i = 0; i < np; i++)
		maxd = p[i].depth > maxd ? p[i].depth : maxd;
	size_t *chain =
	    malloc((maxd + 1) * sizeof(*chain)); /* node at each depth of the last path */
	int err = !sorted || !chain || add_node(t, "all", 0, 0) < 0 ? PMUSIM_ERR_NOMEM : 0;
	for (size_t i = 0; i < np && !err; i++)
		sorted[i] = &p[i];
	if (!err)
		arrays_sort(sorted, np, sizeof(*sorted), cmp_frames);
	chain[0] = 0;
	for (size_t i = 0; i < np && !err; i++) {
		const struct stackprof_path *q = sorted[i];
		for (size_t d = common_prefix(i ? sorted[i - 1] : NULL, q); d < q->depth && !err;
		     d++) {
			chain[d + 1] = t->count;
			err = add_node(t, q->frames[d], chain[d], d + 1) < 0 ? PMUSIM_ERR_NOMEM : 0;
		}
		for (size_t d = 0; d <= q->depth && !err; d++)
			t->n[chain[d]].samples += q->samples;
	}
	for (size_t i = 1; i < t->count && !err; i++) { /* children left-aligned in their parent */
		struct node *parent = &t->n[t->n[i].parent];
		t->n[i].x = t->n[i].nextx = parent->nextx;
		parent->nextx += t->n[i].samples;
	}
	t->total = t->count ? t->n[0].samples : 0;
	free(sorted);
	free(chain);
	return err;
}

static int drawn(const struct tree *t, const struct node *n)
{
	return n->samples * 1000 >= t->total * FLAME_MIN_PER_MILLE && n->samples > 0;
}

/* flamegraph.pl's "hot" colours: red 205..255, green 0..230, blue 0..55. */
static void color_of(const char *name, unsigned rgb[3])
{
	uint64_t h = keytab_hash(name, strlen(name));
	rgb[0] = 205 + (unsigned)((h >> 16) & 0xff) * 50 / 255;
	rgb[1] = (unsigned)(h & 0xff) * 230 / 255;
	rgb[2] = (unsigned)((h >> 8) & 0xff) * 55 / 255;
}

/* The name cut to what fits in width px: "" below 3 characters, else the
 * name or its start and "..", not splitting a UTF-8 sequence. */
static void put_label(FILE *f, const char *name, double width)
{
	double fit = (width - 6) / (FONT * 0.59);
	size_t chars = fit > 0 ? (size_t)fit : 0, len = strlen(name);
	if (chars < 3)
		return;
	if (len <= chars) {
		svg_put_escaped(f, name, len);
		return;
	}
	size_t cut = chars - 2;
	while (cut > 0 && ((unsigned char)name[cut] & 0xc0) == 0x80)
		cut--;
	svg_put_escaped(f, name, cut);
	fputs("..", f);
}

static void put_box(FILE *f, const struct tree *t, const struct node *n, double height)
{
	double scale = (WIDTH - 2 * XPAD) / (double)t->total;
	double x = XPAD + (double)n->x * scale, w = (double)n->samples * scale;
	double y = height - BOTTOM - (double)(n->depth + 1) * FRAME_H;
	unsigned rgb[3];
	color_of(n->name, rgb);
	fputs("<g><title>", f);
	svg_put_escaped(f, n->name, strlen(n->name));
	fprintf(f, " (%llu samples, %.2f%%)</title>", (unsigned long long)n->samples,
	        100.0 * (double)n->samples / (double)t->total);
	fprintf(f,
	        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"rgb(%u,%u,%u)\" "
	        "rx=\"2\" ry=\"2\"/>",
	        x, y, w, FRAME_H - 1, rgb[0], rgb[1], rgb[2]);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">", x + 3, y + 10.5);
	put_label(f, n->name, w);
	fputs("</text></g>\n", f);
}

int flame_svg(FILE *f, const struct stackprof *sp, const char *title, size_t *boxes)
{
	struct tree t = {0};
	int err = build(&t, sp);
	size_t maxd = 0, nbox = 0;
	for (size_t i = 0; i < t.count && !err; i++)
		if (drawn(&t, &t.n[i])) {
			maxd = t.n[i].depth > maxd ? t.n[i].depth : maxd;
			nbox++;
		}
	if (err || !t.total) {
		free(t.n);
		return err ? err : PMUSIM_ERR_ARG;
	}
	double height = TOP + (double)(maxd + 1) * FRAME_H + BOTTOM;
	const struct stackprof_summary *s = stackprof_summary(sp);
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
	        "height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" font-family=\"Verdana, sans-serif\" "
	        "font-size=\"%.0f\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"#f8f8f8\"/>\n",
	        WIDTH, height, WIDTH, height, FONT);
	fprintf(f, "<text x=\"%.2f\" y=\"24\" text-anchor=\"middle\" font-size=\"17\">", WIDTH / 2);
	if (title)
		svg_put_escaped(f, title, strcspn(title, "\n"));
	fprintf(f,
	        "</text>\n<text x=\"%.2f\" y=\"44\" text-anchor=\"middle\" fill=\"#555\">"
	        "%llu samples, %zu threads; %zu boxes, %zu under 0.1%% left out</text>\n",
	        WIDTH / 2, (unsigned long long)s->samples, s->threads, nbox, t.count - nbox);
	/* the controls flame_script.h finds by id */
	fprintf(
	    f,
	    "<text id=\"reset\" x=\"%.2f\" y=\"24\" fill=\"#06c\" cursor=\"pointer\" "
	    "display=\"none\">Reset zoom</text>\n"
	    "<text id=\"search\" x=\"%.2f\" y=\"24\" text-anchor=\"end\" fill=\"#06c\" "
	    "cursor=\"pointer\">Search</text>\n"
	    "<text id=\"matched\" x=\"%.2f\" y=\"44\" text-anchor=\"end\" fill=\"#555\"></text>\n",
	    XPAD, WIDTH - XPAD, WIDTH - XPAD);
	for (size_t i = 0; i < t.count; i++)
		if (drawn(&t, &t.n[i]))
			put_box(f, &t, &t.n[i], height);
	fprintf(f, "<script type=\"text/ecmascript\"><![CDATA[\n%s]]></script>\n</svg>\n",
	        flame_script);
	free(t.n);
	if (boxes)
		*boxes = nbox;
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
