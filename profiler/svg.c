/* SVG log-log scatter of a profile's edge weights against the exact counts (see
 * svg.h): SVG 1.1 (W3C, "Scalable Vector Graphics 1.1", shapes, text and
 * transforms only), written with fixed two-decimal coordinates so that the same
 * edges give the same file on every run. */
#include "profiler/svg.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/symtab.h"
#include "pmu_model/block.h"

#define PLOT_LEFT 84.0
#define PLOT_SIZE 460.0
#define PLOT_RIGHT 28.0
#define WIDTH (PLOT_LEFT + PLOT_SIZE + PLOT_RIGHT)
#define TITLE_MAX_LINES 4
#define ZERO_GAP 18.0 /* from the lowest decade down to the "0" row */

enum cat { CAT_COND, CAT_FALL, CAT_CALL, CAT_OTHER, CAT_COUNT };

static const char *const cat_color[CAT_COUNT] = {"#1f77b4", "#ff7f0e", "#2ca02c", "#9467bd"};
static const char *const cat_label[CAT_COUNT] = {"conditional, taken", "fall-through", "call",
                                                 "jump or return"};

struct point {
	double x, y; /* y == 0: absent from the profile */
	enum cat cat;
	uint64_t from, to;
};

struct frame {
	int lo, hi; /* decades spanned by both axes */
	double top; /* y of the plot's upper edge */
};

static enum cat cat_of(int kind, int taken)
{
	if (!taken)
		return CAT_FALL;
	if (kind == BK_CALL || kind == BK_CALL_IND)
		return CAT_CALL;
	return kind == BK_COND ? CAT_COND : CAT_OTHER;
}

static double pos(const struct frame *fr, double v)
{
	return (log10(v) - fr->lo) / (fr->hi - fr->lo) * PLOT_SIZE;
}

static double px(const struct frame *fr, double v)
{
	return PLOT_LEFT + pos(fr, v);
}

static double py(const struct frame *fr, double v)
{
	return v > 0 ? fr->top + PLOT_SIZE - pos(fr, v) : fr->top + PLOT_SIZE + ZERO_GAP;
}

void svg_put_escaped(FILE *f, const char *s, size_t n)
{
	for (size_t i = 0; i < n && s[i]; i++) {
		switch (s[i]) {
		case '&':
			fputs("&amp;", f);
			break;
		case '<':
			fputs("&lt;", f);
			break;
		case '>':
			fputs("&gt;", f);
			break;
		case '"':
			fputs("&quot;", f);
			break;
		default:
			fputc(s[i], f);
		}
	}
}

void svg_begin(FILE *f, double width, double height)
{
	fprintf(f,
	        "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
	        "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"%.0f\" "
	        "height=\"%.0f\" "
	        "viewBox=\"0 0 %.0f %.0f\" font-family=\"sans-serif\">\n"
	        "<rect width=\"100%%\" height=\"100%%\" fill=\"#fff\"/>\n",
	        width, height, width, height);
}

int svg_title_lines(const char *s)
{
	int n = 0;
	for (; s && *s && n < TITLE_MAX_LINES; n++)
		s += strcspn(s, "\n"), s += *s == '\n';
	return n;
}

double svg_title(FILE *f, double width, const char *title)
{
	double y = 26;
	const char *s = title ? title : "";
	for (int line = 0; line < TITLE_MAX_LINES && *s; line++) {
		size_t n = strcspn(s, "\n");
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"%d\"%s>",
		        width / 2, y, line ? 12 : 15,
		        line ? " fill=\"#333\"" : " font-weight=\"bold\"");
		svg_put_escaped(f, s, n);
		fputs("</text>\n", f);
		y += line ? 17 : 20;
		s += n + (s[n] == '\n');
	}
	return y;
}

/* Decade grid, ticks and labels of both axes, the "0" row and the diagonal. */
static void put_axes(FILE *f, const struct frame *fr)
{
	double x0 = PLOT_LEFT, x1 = PLOT_LEFT + PLOT_SIZE, y0 = fr->top + PLOT_SIZE, y1 = fr->top;
	double yz = py(fr, 0);
	fprintf(f, "<g stroke=\"#ddd\" stroke-width=\"1\">\n");
	for (int d = fr->lo; d <= fr->hi; d++) {
		double v = pow(10, d);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", px(fr, v),
		        y1, px(fr, v), yz);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x0,
		        py(fr, v), x1, py(fr, v));
	}
	fputs("</g>\n<g stroke=\"#000\" stroke-width=\"1\">\n", f);
	for (int d = fr->lo; d < fr->hi; d++) /* minor ticks at 2..9 x 10^d */
		for (int m = 2; m <= 9 && fr->hi - fr->lo <= 10; m++) {
			double v = m * pow(10, d);
			fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
			        px(fr, v), yz, px(fr, v), yz + 3);
			fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
			        x0 - 3, py(fr, v), x0, py(fr, v));
		}
	for (int d = fr->lo; d <= fr->hi; d++) {
		double v = pow(10, d);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", px(fr, v),
		        yz, px(fr, v), yz + 6);
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x0 - 6,
		        py(fr, v), x0, py(fr, v));
	}
	fprintf(f, "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\"/>\n",
	        x0, y1, PLOT_SIZE, PLOT_SIZE);
	fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n", x0, y0, x0, yz);
	fprintf(
	    f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke-dasharray=\"3,3\"/>\n",
	    x0, yz, x1, yz);
	fputs("</g>\n<g font-size=\"12\">\n", f);
	for (int d = fr->lo; d <= fr->hi; d++) {
		double v = pow(10, d);
		fprintf(f,
		        "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">10<tspan dy=\"-6\" "
		        "font-size=\"9\">%d</tspan></text>\n",
		        px(fr, v), yz + 21, d);
		fprintf(f,
		        "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">10<tspan dy=\"-6\" "
		        "font-size=\"9\">%d</tspan></text>\n",
		        x0 - 14, py(fr, v) + 4, d);
	}
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"end\">0</text>\n", x0 - 14, yz + 4);
	fprintf(
	    f,
	    "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\">exact executions (truth)</text>\n",
	    x0 + PLOT_SIZE / 2, yz + 42);
	fprintf(f,
	        "<text transform=\"translate(%.2f,%.2f) rotate(-90)\" "
	        "text-anchor=\"middle\">sampled weight, scaled to the truth's total</text>\n",
	        22.0, y1 + PLOT_SIZE / 2);
	fputs("</g>\n", f);
	fprintf(f,
	        "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#888\" "
	        "stroke-dasharray=\"6,4\"/>\n",
	        x0, y0, x1, y1);
}

const char *svg_edge_color(int kind, int taken)
{
	return cat_color[cat_of(kind, taken)];
}

double svg_edge_legend(FILE *f, double x, double y)
{
	for (int c = 0; c < CAT_COUNT; c++) {
		fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"4\" fill=\"%s\"/>", x + 4, y - 4,
		        cat_color[c]);
		fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%s</text>\n", x + 12, y, cat_label[c]);
		x += 12 + 6.0 * (double)strlen(cat_label[c]) + 14;
	}
	return x;
}

static void put_legend(FILE *f, double y)
{
	fputs("<g font-size=\"11\">\n", f);
	double x = svg_edge_legend(f, PLOT_LEFT, y);
	fprintf(f,
	        "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#888\" "
	        "stroke-dasharray=\"6,4\"/>",
	        x, y - 4, x + 18, y - 4);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">y = x</text>\n</g>\n", x + 22, y);
}

/* The truth's points in `in` (sorted by edge), scaled profile weights. */
static struct point *collect(struct edges *profile, struct edges *truth,
                             int (*in)(const struct edge *), size_t *npts, size_t *absent,
                             size_t *extra)
{
	size_t np, nq;
	const struct edge *pe = edges_sorted(profile, &np);
	double P = 0, Q = 0;
	*extra = *absent = *npts = 0;
	for (size_t i = 0; i < np; i++)
		if (!in || in(&pe[i])) {
			P += pe[i].w;
			*extra += pe[i].w > 0 && edges_weight(truth, pe[i].from, pe[i].to) <= 0;
		}
	const struct edge *qe = edges_sorted(truth, &nq);
	struct point *pt = malloc((nq + 1) * sizeof(*pt));
	if (!pt || (np && !pe) || (nq && !qe)) {
		free(pt);
		return NULL;
	}
	for (size_t i = 0; i < nq; i++)
		if ((!in || in(&qe[i])) && qe[i].w > 0)
			Q += qe[i].w;
	for (size_t i = 0; i < nq; i++) {
		if ((in && !in(&qe[i])) || qe[i].w <= 0)
			continue;
		double w = edges_weight(profile, qe[i].from, qe[i].to);
		pt[*npts] = (struct point){qe[i].w, P > 0 && w > 0 ? w * Q / P : 0,
		                           cat_of(qe[i].kind, qe[i].taken), qe[i].from, qe[i].to};
		*absent += pt[*npts].y <= 0;
		(*npts)++;
	}
	return pt;
}

static void frame_of(const struct point *pt, size_t n, struct frame *fr)
{
	double mn = 0, mx = 0;
	for (size_t i = 0; i < n; i++)
		for (int k = 0; k < 2; k++) {
			double v = k ? pt[i].y : pt[i].x;
			if (v <= 0)
				continue;
			mn = mn == 0 || v < mn ? v : mn;
			mx = v > mx ? v : mx;
		}
	svg_decades(mn, mx, &fr->lo, &fr->hi);
}

void svg_decades(double mn, double mx, int *lo, int *hi)
{
	if (mx <= 0)
		mn = mx = 1;
	*lo = (int)floor(log10(mn) + 1e-9);
	*hi = (int)ceil(log10(mx) - 1e-9);
	if (*hi <= *lo)
		*hi = *lo + 1;
}

/* An address as "sym+0xoff" (the function holding it; "sym" at its start), else "0xaddr". */
static void put_place(FILE *f, const struct symtab *syms, uint64_t addr)
{
	const struct sym *s = syms ? symtab_lookup(syms, addr) : NULL;
	if (!s) {
		fprintf(f, "0x%llx", (unsigned long long)addr);
		return;
	}
	svg_put_escaped(f, s->name, strlen(s->name));
	if (addr != s->addr)
		fprintf(f, "+0x%llx", (unsigned long long)(addr - s->addr));
}

/* A dot and its tooltip: the edge, its kind and both counts. */
static void put_dot(FILE *f, const struct frame *fr, const struct point *p,
                    const struct symtab *syms)
{
	fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"2.5\" fill=\"%s\"><title>", px(fr, p->x),
	        py(fr, p->y), cat_color[p->cat]);
	put_place(f, syms, p->from);
	fputs(" -&gt; ", f);
	put_place(f, syms, p->to);
	fprintf(f, " (%s): exact %.0f, ", cat_label[p->cat], p->x);
	if (p->y > 0)
		fprintf(f, "profile %.2f</title></circle>\n", p->y);
	else
		fputs("not in the profile</title></circle>\n", f);
}

int svg_scatter(FILE *f, const char *title, struct edges *profile, struct edges *truth,
                int (*in)(const struct edge *), const struct symtab *syms)
{
	size_t n, absent, extra;
	struct point *pt = collect(profile, truth, in, &n, &absent, &extra);
	if (!pt)
		return PMUSIM_ERR_NOMEM;
	struct frame fr;
	frame_of(pt, n, &fr);
	int lines = svg_title_lines(title);
	fr.top = 26 + 20 + 17 * (lines > 1 ? lines - 1 : 0) + 30; /* put_title, subtitle */
	double height = fr.top + PLOT_SIZE + ZERO_GAP + 42 + 30 + 16;
	svg_begin(f, WIDTH, height);
	double y = svg_title(f, WIDTH, title);
	fprintf(f,
	        "<text x=\"%.2f\" y=\"%.2f\" text-anchor=\"middle\" font-size=\"11\" fill=\"#555\">"
	        "%zu truth edges, %zu of them absent from the profile (row 0); "
	        "%zu profile edges not in the truth</text>\n",
	        WIDTH / 2, y, n, absent, extra);
	put_axes(f, &fr);
	fputs("<g fill-opacity=\"0.6\">\n", f);
	for (size_t i = 0; i < n; i++)
		put_dot(f, &fr, &pt[i], syms);
	fputs("</g>\n", f);
	put_legend(f, fr.top + PLOT_SIZE + ZERO_GAP + 42 + 26);
	fputs("</svg>\n", f);
	free(pt);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
