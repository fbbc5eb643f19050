/* `pmusim report --regions --format dot` and `--svg DIR` read by the real Graphviz.
 * On op samples and on the truth of one run of cpi_sort 10 (`record -e
 * ibs_op/cnt_ctl=1/ -c 256 --pmu-seed 1`, as check_regions):
 *   - `dot -Tplain` reads the DOT with exit 0 and nothing on stderr, and draws as
 *     many nodes and edges as python's reading of the JSON of the same selection
 *     lists (per kept region its blocks and one exit node; its edges between blocks,
 *     its exits and the exit blocks no exit edge leaves: cli/regions_dot.c);
 *   - the DOT is the same bytes twice, on standard output and through -o;
 *   - --svg writes one SVG per kept region, region-0xSTART.svg and nothing else,
 *     each well-formed XML (xmllint) holding the red line of every patch point the
 *     JSON lists for that region, the same bytes twice;
 *   - --svg into a missing directory, into a file, where nothing can be created,
 *     without dot on PATH, and with a dot that fails after writing half an SVG: one
 *     line, exit 2, no file left in the directory.
 * Environment: PMUSIM, WORKLOADS as for check_e2e. */
#include <check.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/e2e/regions_run.h"
#include "tests/unit/run_suite.h"

/* What the DOT must draw, from the JSON: "NODES EDGES", then per kept region
 * "region 0xSTART" and a line per patch point as the drawing labels it. */
static const char drawn_py[] =
    "import json, sys\n"
    "d = json.load(open(sys.argv[1]))\n"
    "nodes = edges = 0\n"
    "lines = []\n"
    "for r in d['regions']:\n"
    "    def leaves(b):\n"
    "        return any(int(b['start'], 16) <= int(x['from'], 16) < int(b['end'], 16)\n"
    "                   for x in r['exits'])\n"
    "    blocks = {b['start']: b for b in r['blocks']}\n"
    "    nodes += len(r['blocks']) + 1\n"
    "    edges += len(r['edges']) + len(r['exits'])\n"
    "    edges += sum(1 for b in r['exit_blocks'] if not leaves(blocks[b['start']]))\n"
    "    lines.append('region ' + r['start'])\n"
    "    lines += ['patch %s (%d bytes, %s)' % (p['addr'], p['len'], p['store'])\n"
    "              for p in r['patch_points']]\n"
    "print(nodes, edges)\n"
    "print('\\n'.join(lines))\n";

/* pmusim with args into out; fails unless it exits 0. */
static void run_ok(char *const args[], const char *out)
{
	const char *e = tmp_path("run.err");
	int st = regions_pm(NULL, args, out, e);
	char *err = st ? slurp(e, NULL) : NULL;
	ck_assert_msg(st == 0, "pmusim %s %s: exit %d: %s", args[0], args[1], st, err ? err : "");
	free(err);
}

/* Whether the files a and b hold the same bytes (both readable). */
static int same_file(const char *a, const char *b)
{
	size_t la, lb;
	char *x = slurp(a, &la), *y = slurp(b, &lb);
	int same = x && y && la == lb && memcmp(x, y, la) == 0;
	free(x);
	free(y);
	return same;
}

/* The nodes and edges dot -Tplain draws from the DOT file; fails unless dot exits 0
 * and says nothing. */
static void plain_counts(const char *dot_file, long *nodes, long *edges)
{
	const char *out = tmp_path("plain.txt"), *e = tmp_path("plain.err");
	char *argv[] = {"dot", "-Tplain", (char *)dot_file, NULL};
	int st = run_cmd(argv, NULL, out, e);
	char *err = slurp(e, NULL), *t = slurp(out, NULL);
	ck_assert_msg(st == 0 && err && !*err && t, "dot -Tplain: exit %d: %s", st, err ? err : "");
	*nodes = *edges = 0;
	for (const char *l = t; *l;) {
		*nodes += strncmp(l, "node ", 5) == 0;
		*edges += strncmp(l, "edge ", 5) == 0;
		const char *nl = strchr(l, '\n');
		l = nl ? nl + 1 : l + strlen(l);
	}
	free(err);
	free(t);
}

/* The entries of dir but . and ..; with bad set, the first not named region-*.svg. */
static size_t entries(const char *dir, char *bad, size_t len)
{
	DIR *d = opendir(dir);
	ck_assert_msg(d != NULL, "cannot open %s", dir);
	size_t n = 0;
	struct dirent *de;
	if (bad)
		bad[0] = 0;
	while ((de = readdir(d)) != NULL) {
		if (!strcmp(de->d_name, ".") || !strcmp(de->d_name, ".."))
			continue;
		n++;
		size_t l = strlen(de->d_name);
		if (bad && !bad[0] &&
		    (strncmp(de->d_name, "region-0x", 9) || l < 13 ||
		     strcmp(de->d_name + l - 4, ".svg")))
			snprintf(bad, len, "%s", de->d_name);
	}
	closedir(d);
	return n;
}

/* Every region's SVG in dir is well-formed and holds its patch points' lines (drawn:
 * drawn_py's lines past the first); dir holds nothing else. The number of SVGs. */
static size_t check_svgs(const char *dir, const char *drawn)
{
	char svg[600], line[200], bad[256];
	char *text = NULL;
	size_t n = 0, patches = 0;
	for (const char *l = strchr(drawn, '\n'); l && l[1]; l = strchr(l + 1, '\n')) {
		snprintf(line, sizeof(line), "%.*s", (int)strcspn(l + 1, "\n"), l + 1);
		if (!strncmp(line, "region ", 7)) {
			snprintf(svg, sizeof(svg), "%s/region-%s.svg", dir, line + 7);
			free(text);
			ck_assert_msg((text = slurp(svg, NULL)) != NULL, "no %s", svg);
			char *xl[] = {"xmllint", "--noout", svg, NULL};
			ck_assert_msg(run_cmd(xl, NULL, NULL, NULL) == 0, "xmllint: %s", svg);
			n++;
		} else {
			ck_assert_msg(text && strstr(text, line), "%s lacks \"%s\"", svg, line);
			patches++;
		}
	}
	free(text);
	size_t all = entries(dir, bad, sizeof(bad));
	ck_assert_msg(all == n && !bad[0], "%s: %zu files for %zu regions (%s)", dir, all, n, bad);
	fprintf(stderr, "  %zu SVGs, %zu patch points in them\n", n, patches);
	return n;
}

START_TEST(drawn_by_graphviz)
{
	char *d = regions_path("o.data"), *t = regions_path("t.json");
	regions_record(wl("cpi_sort"), "10", "1", d, t);
	for (int truth = 0; truth < 2; truth++) {
		const char *src = truth ? "truth" : "op samples";
		char *in = truth ? "--truth-json" : "-i", *file = truth ? t : d;
		char *json[] = {"report", "--regions", in, file, "--format", "json", NULL};
		char *dot[] = {"report", "--regions", in, file, "--format", "dot", NULL};
		run_ok(json, tmp_path("r.json"));
		run_ok(dot, tmp_path("r1.dot"));
		run_ok(dot, tmp_path("r2.dot"));
		ck_assert_msg(same_file(tmp_path("r1.dot"), tmp_path("r2.dot")),
		              "%s: two DOTs differ", src);

		char *py[] = {"python3", "-c", (char *)drawn_py, (char *)tmp_path("r.json"), NULL};
		ck_assert_int_eq(run_cmd(py, NULL, tmp_path("drawn.txt"), NULL), 0);
		char *drawn = slurp(tmp_path("drawn.txt"), NULL);
		long jn = -1, je = -1, pn, pe;
		ck_assert_msg(drawn && sscanf(drawn, "%ld %ld", &jn, &je) == 2, "python: %s",
		              drawn ? drawn : "");
		plain_counts(tmp_path("r1.dot"), &pn, &pe);
		fprintf(stderr, "%s: dot -Tplain %ld nodes, %ld edges; the JSON %ld and %ld\n", src,
		        pn, pe, jn, je);
		ck_assert_msg(pn == jn && pe == je,
		              "%s: dot draws %ld nodes, %ld edges; JSON %ld, %ld", src, pn, pe, jn,
		              je);

		/* --svg writes its files, then the DOT where -o says: the same DOT */
		char *s1 = regions_path(truth ? "svg.t1" : "svg.o1");
		char *s2 = regions_path(truth ? "svg.t2" : "svg.o2");
		ck_assert_int_eq(mkdir(s1, 0755), 0);
		ck_assert_int_eq(mkdir(s2, 0755), 0);
		char *o = regions_path("r3.dot");
		char *svg1[] = {"report",   "--regions", in,   file, "--svg", s1,
		                "--format", "dot",       "-o", o,    NULL};
		char *svg2[] = {"report", "--regions", in, file, "--svg", s2, NULL};
		run_ok(svg1, NULL);
		run_ok(svg2, NULL);
		ck_assert_msg(same_file(tmp_path("r1.dot"), o), "%s: -o with --svg differs", src);
		size_t n = check_svgs(s1, drawn);
		ck_assert_uint_gt(n, 0);
		char bad[256];
		ck_assert_uint_eq(entries(s2, bad, sizeof(bad)), n);
		for (const char *l = strstr(drawn, "region "); l; l = strstr(l + 1, "\nregion ")) {
			char a[700], b[700];
			const char *r = l + (*l == '\n') + 7;
			int len = (int)strcspn(r, "\n");
			snprintf(a, sizeof(a), "%s/region-%.*s.svg", s1, len, r);
			snprintf(b, sizeof(b), "%s/region-%.*s.svg", s2, len, r);
			ck_assert_msg(same_file(a, b), "%s: %s differs from the second run's", src,
			              a);
		}
		free(drawn);
	}
}
END_TEST

START_TEST(svg_refused)
{
	char *d = regions_path("o.data"), *t = regions_path("t.json");
	regions_record(wl("cpi_interp"), "4000", "1", d, t);
	char *dir = regions_path("svgs"), *nodot = regions_path("nodot"),
	     *fake = regions_path("fakebin"), *fake_dot = regions_path("fakebin/dot");
	ck_assert_int_eq(mkdir(dir, 0755), 0);
	ck_assert_int_eq(mkdir(nodot, 0755), 0);
	ck_assert_int_eq(mkdir(fake, 0755), 0);
	/* a dot that reads its input, writes half an SVG, complains and fails */
	FILE *f = fopen(fake_dot, "w");
	ck_assert_ptr_nonnull(f);
	fputs("#!/bin/sh\ncat >/dev/null\necho '<svg width=\"1pt\"'\n"
	      "echo 'Error: <stdin>: syntax error in line 1' >&2\necho more >&2\nexit 1\n",
	      f);
	fclose(f);
	ck_assert_int_eq(chmod(fake_dot, 0755), 0);
	/* nothing can be created there, whoever runs the test (root writes in a 0555
	 * directory; /proc takes no new file from anyone) */
	char *ro = geteuid() == 0 ? "/proc" : regions_path("ro");
	if (geteuid() != 0)
		ck_assert_int_eq(mkdir(ro, 0555), 0);
	char path_fake[1200];
	snprintf(path_fake, sizeof(path_fake), "%s:/usr/local/bin:/usr/bin:/bin", fake);
	char *missing = regions_path("svgs/missing");
	char *a1[] = {"report", "--regions", "-i", d, "--svg", missing, NULL};
	char *a2[] = {"report", "--regions", "-i", d, "--svg", d, NULL};
	char *a3[] = {"report", "--regions", "-i", d, "--svg", ro, NULL};
	char *a4[] = {"report", "--regions", "-i", d, "--svg", dir, NULL};
	char *a5[] = {"report", "-i", d, "--format", "dot", NULL};
	regions_refused(NULL, a1, "--svg a missing directory");
	regions_refused(NULL, a2, "--svg a file");
	regions_refused(NULL, a3, "--svg where nothing can be created");
	regions_refused(nodot, a4, "--svg without dot on PATH");
	regions_refused(path_fake, a4, "--svg with a dot that fails");
	regions_refused(NULL, a5, "--format dot without --regions");
	ck_assert_msg(entries(dir, NULL, 0) == 0, "a failed --svg left files in %s", dir);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("regions_dot");
	TCase *tc = tcase_create("regions_dot");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, drawn_by_graphviz);
	tcase_add_test(tc, svg_refused);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
