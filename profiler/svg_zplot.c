/* z against exact count (see svg_zplot.h): SVG 1.1 shapes and text only, like
 * profiler/svg.c, whose title and edge colours it shares. */
#include "profiler/svg_zplot.h"

#include <math.h>

#include "common/err.h"
#include "profiler/svg.h"

#define LEFT 84.0
#define PLOT_W 460.0
#define PLOT_H 360.0
#define RIGHT 28.0
#define WIDTH (LEFT + PLOT_W + RIGHT)
#define INF_GAP 18.0 /* from the axis' end to the rows of infinite z */

struct zframe {
	int lo, hi;  /* decades of x */
	double ymax; /* asinh of the largest |z| shown on the axis */
	double top;  /* y of the plot's upper edge */
};

static double zx(const struct zframe *fr, double v)
{
	return LEFT + (log10(v) - fr->lo) / (fr->hi - fr->lo) * PLOT_W;
}

/* y of z: the middle of the plot is 0; infinite z on the rows outside. */
static double zy(const struct zframe *fr, double z)
{
	double mid = fr->top + INF_GAP + PLOT_H / 2;
	if (isinf(z))
		return z > 0 ? fr->top : fr->top + 2 * INF_GAP + PLOT_H;
	return mid - asinh(z) / fr->ymax * PLOT_H / 2;
}

static void frame_of(const struct zplot_point *p, size_t n, double crit, struct zframe *fr)
{
	double mn = 0, mx = 0, zmax = 4;
	for (size_t i = 0; i < n; i++) {
		if (p[i].exact > 0) {
			mn = mn == 0 || p[i].exact < mn ? p[i].exact : mn;
			mx = p[i].exact > mx ? p[i].exact : mx;
		}
		if (!isinf(p[i].z) && fabs(p[i].z) > zmax)
			zmax = fabs(p[i].z);
	}
	svg_decades(mn, mx, &fr->lo, &fr->hi);
	if (!isinf(crit) && crit * 1.25 > zmax)
		zmax = crit * 1.25;
	fr->ymax = asinh(zmax) * 1.04;
}

/* Ticks at 0, +-1, 2, 5, 10, 20, 50 ... within the axis. */
static void put_y_axis(FILE *f, const struct zframe *fr)
{
	static const double m[] = {1, 2, 5};
	fputs("<g font-size=\"12\" text-anchor=\"end\">\n", f);
	for (double d = 1; asinh(d) <= fr->ymax; d *= 10)
		for (int i = 0; i < 3 && asinh(d * m[i]) <= fr->ymax; i++)
			for (int s = -1; s <= 1; s += 2) {
				double v = s * d * m[i], y = zy(fr, v);
				fprintf(f,
				        "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" "
				        "stroke=\"#000\"/>",
				        LEFT - 5, y, LEFT, y);
				fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">%g</text>\n", LEFT - 8,
				        y + 4, v);
			}
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">0</text>\n", LEFT - 8, zy(fr, 0) + 4);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">+\u221e</text>\n", LEFT - 8, zy(fr, INFINITY) + 4);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">\u2212\u221e</text>\n</g>\n", LEFT - 8,
	        zy(fr, -INFINITY) + 4);
}

static void put_axes(FILE *f, const struct zframe *fr, double crit)
{
	double y0 = fr->top + INF_GAP, bottom = fr->top + 2 * INF_GAP + PLOT_H;
	fputs("<g stroke=\"#ddd\" stroke-width=\"1\">\n", f);
	for (int d = fr->lo; d <= fr->hi; d++)
		fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\"/>\n",
		        zx(fr, pow(10, d)), fr->top, zx(fr, pow(10, d)), bottom);
	fputs("</g>\n", f);
	fprintf(f,
	        "<rect x=\"%.2f\" y=\"%.2f\" width=\"%.2f\" height=\"%.2f\" fill=\"none\" "
	        "stroke=\"#000\"/>\n",
	        LEFT, y0, PLOT_W, PLOT_H);
	fprintf(f, "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#000\"/>\n",
	        LEFT, zy(fr, 0), LEFT + PLOT_W, zy(fr, 0));
	for (int s = -1; s <= 1 && !isinf(crit); s += 2)
		fprintf(f,
		        "<line x1=\"%.2f\" y1=\"%.2f\" x2=\"%.2f\" y2=\"%.2f\" stroke=\"#d62728\" "
		        "stroke-dasharray=\"6,4\"/>\n",
		        LEFT, zy(fr, s * crit), LEFT + PLOT_W, zy(fr, s * crit));
	fputs("<g font-size=\"12\" text-anchor=\"middle\">\n", f);
	for (int d = fr->lo; d <= fr->hi; d++)
		fprintf(f,
		        "<text x=\"%.2f\" y=\"%.2f\">10<tspan dy=\"-6\" "
		        "font-size=\"9\">%d</tspan></text>\n",
		        zx(fr, pow(10, d)), bottom + 18, d);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">exact executions (mean over the runs)</text>\n",
	        LEFT + PLOT_W / 2, bottom + 40);
	fprintf(f,
	        "<text transform=\"translate(%.2f,%.2f) rotate(-90)\">z = (mean estimate \u2212 "
	        "exact) / "
	        "standard error</text>\n</g>\n",
	        18.0, y0 + PLOT_H / 2);
	put_y_axis(f, fr);
}

int svg_zplot(FILE *f, const char *title, const struct zplot_point *p, size_t n, double crit)
{
	struct zframe fr;
	frame_of(p, n, crit, &fr);
	int lines = svg_title_lines(title);
	fr.top = 26 + 20 + 17 * (lines > 1 ? lines - 1 : 0) + 10;
	double height = fr.top + 2 * INF_GAP + PLOT_H + 40 + 40;
	svg_begin(f, WIDTH, height);
	svg_title(f, WIDTH, title);
	put_axes(f, &fr, crit);
	fputs("<g fill-opacity=\"0.7\">\n", f);
	for (size_t i = 0; i < n; i++) {
		if (!(p[i].exact > 0))
			continue;
		double x = zx(&fr, p[i].exact), y = zy(&fr, p[i].z);
		fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"3\" fill=\"%s\"/>\n", x, y,
		        svg_edge_color(p[i].kind, p[i].taken));
		if (p[i].biased)
			fprintf(f,
			        "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"5.5\" fill=\"none\" "
			        "stroke=\"#d62728\"/>\n",
			        x, y);
	}
	fputs("</g>\n<g font-size=\"11\">\n", f);
	double x = svg_edge_legend(f, LEFT, height - 14);
	fprintf(f, "<circle cx=\"%.2f\" cy=\"%.2f\" r=\"5.5\" fill=\"none\" stroke=\"#d62728\"/>",
	        x + 6, height - 18);
	fprintf(f, "<text x=\"%.2f\" y=\"%.2f\">biased</text>\n</g>\n", x + 16, height - 14);
	fputs("</svg>\n", f);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
