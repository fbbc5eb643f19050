/* What `pmusim report --regions` and `pmusim validate --regions` share: the
 * options of hot super-region selection (docs/regions.md), the code and hot code
 * of a recording's op samples or of a truth, and the chain of the selector's
 * stages (discovery, regions, counts, selection, patch points) run on them. */
#ifndef PMUSIM_CLI_REPORT_REGIONS_H
#define PMUSIM_CLI_REPORT_REGIONS_H

#include <getopt.h>
#include <stdint.h>
#include <stdio.h>

#include "profiler/hot_code.h"
#include "profiler/proc_code.h"
#include "profiler/region_cfg.h"
#include "profiler/region_flow.h"
#include "profiler/region_graph.h"
#include "profiler/region_inline.h"
#include "profiler/region_patch.h"
#include "profiler/region_prune.h"
#include "profiler/region_set.h"

enum {
	RGN_O_MAX_HOPS = 500,
	RGN_O_COLD_FRACTION,
	RGN_O_MIN_ITERATIONS,
	RGN_O_KEEP_SHARE,
	RGN_O_MIN_INSNS,
	RGN_O_MIN_REGION_SHARE,
	RGN_O_PID,
	RGN_O_TRUTH_JSON,
	RGN_O_MIN_JACCARD,
	RGN_O_INLINE_DEPTH,
	RGN_O_INLINE_CALLEE,
	RGN_O_INLINE_BUDGET,
	RGN_O_INLINE_MIN_CALL,
	RGN_O_REENTRY,
};

/* clang-format off: one option per line */
#define REGION_LONG_OPTIONS                                                                        \
	{"max-hops", required_argument, 0, RGN_O_MAX_HOPS},                                        \
	{"cold-fraction", required_argument, 0, RGN_O_COLD_FRACTION},                              \
	{"min-iterations", required_argument, 0, RGN_O_MIN_ITERATIONS},                            \
	{"keep-share", required_argument, 0, RGN_O_KEEP_SHARE},                                    \
	{"min-insns", required_argument, 0, RGN_O_MIN_INSNS},                                      \
	{"min-region-share", required_argument, 0, RGN_O_MIN_REGION_SHARE},                        \
	{"inline-depth", required_argument, 0, RGN_O_INLINE_DEPTH},                                \
	{"inline-callee-insns", required_argument, 0, RGN_O_INLINE_CALLEE},                        \
	{"inline-region-insns", required_argument, 0, RGN_O_INLINE_BUDGET},                        \
	{"inline-min-call", required_argument, 0, RGN_O_INLINE_MIN_CALL},                          \
	{"reentry-points", required_argument, 0, RGN_O_REENTRY},                                  \
	{"pid", required_argument, 0, RGN_O_PID},                                                  \
	{"truth-json", required_argument, 0, RGN_O_TRUTH_JSON}
/* clang-format on */

#define REGION_OPTIONS_HELP                                                                        \
	"  --max-hops N         explore at most N conditional branches away from sampled\n"        \
	"                       code (default 2)\n"                                                \
	"  --cold-fraction F    a block counted below F of its region's hottest block is\n"        \
	"                       cold (0..1, default 0.01)\n"                                       \
	"  --min-iterations N   iterations per entry a loop needs to keep its region\n"            \
	"                       (default 4)\n"                                                     \
	"  --keep-share F       a region without such a loop is kept with F of the weight\n"       \
	"                       (0..1, default 0.10)\n"                                            \
	"  --min-insns N        a region keeping fewer instructions is dropped (default 8)\n"      \
	"  --min-region-share F a region keeping less than F of the weight is dropped\n"           \
	"                       (0..1, default 0.001)\n"                                           \
	"  --inline-depth N     inline hot direct calls up to N calls deep (0: none;\n"        \
	"                       default 2); a call not inlined leaves the replacement code\n"    \
	"  --inline-callee-insns N  largest callee body inlined (default 200)\n"                 \
	"  --inline-region-insns N  instructions inlined per region at most (default 1000)\n"    \
	"  --inline-min-call F  a call counted below F of its region's hottest block is\n"       \
	"                       not inlined (0..1, default 0.01)\n"                              \
	"  --reentry-points yes|no  also patch every loop entry the points cover, so that\n"    \
	"                       control back in the original code re-enters (default yes)\n"  \
	"  --pid PID            the op samples of this process (default: the one with most)\n"

/* report --regions's own lines of the usage */
#define REGION_REPORT_HELP                                                                         \
	"  --regions            hot super-regions for a binary rewriter (docs/regions.md)\n"       \
	"                       from the op samples of FILE (record -e ibs_op/cnt_ctl=1/)\n"       \
	"                       or the exact counts of --truth-json TRUTH.json: per kept\n"        \
	"                       region its share of the weight, blocks, loops with their\n"        \
	"                       iterations per entry, patch points, entries and exits;\n"          \
	"                       per dropped region why; --format text, json (with the\n"           \
	"                       edges between blocks) or dot (Graphviz: a cluster per kept\n"      \
	"                       region; --svg DIR draws each with dot -Tsvg)\n"                    \
	"  --truth-json FILE    with --regions: select from this truth, not from -i\n"

struct region_args {
	int on;            /* --regions */
	int given;         /* a region option was on the command line */
	const char *truth; /* --truth-json */
	uint32_t pid;      /* --pid; 0: the process with the most op samples */
	struct rcfg_options cfg;
	struct rprune_options prune;
	struct rinline_options inl; /* its cold_fraction is prune's */
	double min_jaccard; /* validate --regions */
	int reentry;        /* --reentry-points: rpatch_add_reentry after rpatch_find */
};

void region_args_init(struct region_args *a);
/* Handles a region option: 0 handled, -1 bad value (one line printed), 1 not one. */
int region_args_option(struct region_args *a, int code, const char *arg, const char *cmd);

/* The code a selection explores, and whatever owns it. */
struct region_code {
	struct binary *bin; /* the process's code; owned by pc when pc is set */
	struct symbolizer *z;
	struct proc_code *pc;
	struct binary *own; /* a truth's program, opened here */
};

/* The stages' results for one hot code. */
struct region_sel {
	struct hot_code *hot;
	struct rcfg *g;
	struct rgraph *rg;
	struct rflow *f;
	struct rprune *p;
	struct rpatch **patch; /* per region; NULL for a dropped one */
	struct rinline *inl;   /* the kept regions' calls, inlined or exits */
	size_t *order;         /* the kept regions, hottest first (ties by address) */
	size_t norder;
	struct rset *set;      /* their replacement code (profiler/region_set.h) */
	size_t *set_of;        /* per region: its index in set, SIZE_MAX when it has none */
	const char *source;    /* "op samples of FILE" / "truth FILE", for the header */
	const struct region_args *args;
};

/* The hot code of the op samples at path (process a->pid) and the code that
 * process maps at the end of the recording. 0, or -1 with one line printed. */
int region_load_ops(const struct region_args *a, const char *path, struct hot_code **hot,
                    struct region_code *code, const char *cmd);
/* The hot code of a truth JSON; with code->bin set (a recording's), decoded from
 * that code, else from the truth's program, opened into code. 0 or -1 (printed). */
int region_load_truth(const char *path, struct hot_code **hot, struct region_code *code,
                      const char *cmd);
void region_code_fini(struct region_code *c);

/* Runs the stages on hot (taken over: freed with the selection) in code.
 * 0 with *out set, or -1 with one line printed. */
int region_select(const struct region_args *a, struct binary *code, struct hot_code *hot,
                  const char *source, struct region_sel **out, const char *cmd);
void region_sel_free(struct region_sel *s);

/* The selection as text or JSON (cli/regions_out.c): 0 or a negative pmusim_err. */
int region_sel_write_text(FILE *f, const struct region_sel *s);
int region_sel_write_json(FILE *f, const struct region_sel *s);
/* The selection as Graphviz DOT (cli/regions_dot.c, where the drawing is described):
 * every kept region, one cluster each, or only region ri (a kept one) as a graph of its
 * own. 0 or a negative pmusim_err. */
int region_sel_write_dot(FILE *f, const struct region_sel *s);
int region_sel_write_dot_region(FILE *f, const struct region_sel *s, size_t ri);
/* One SVG per kept region, dir/region-0xSTART.svg, drawn by Graphviz's dot -Tsvg
 * (cli/regions_svg.c). 0, or -1 with one line printed. */
int region_sel_write_svgs(const struct region_sel *s, const char *dir, const char *cmd);
/* Fails early, before a selection is made, when --svg cannot work: no dot on PATH or dir
 * not a directory this process may write in. 0, or -1 with one line printed. */
int region_svg_check(const char *dir, const char *cmd);

/* The kept regions' indices, hottest first (ties by address); NULL when out of memory
 * (n = 0 is fine). The caller frees. */
size_t *region_sel_kept_order(const struct region_sel *s, size_t *n);
/* The start of region r: its first block's. */
uint64_t region_sel_start(const struct region_sel *s, size_t r);

enum region_format { REGION_TEXT, REGION_JSON, REGION_DOT };

/* pmusim report --regions: selects from a->truth when set, else from the op
 * samples of input (named name in the output); with svg_dir (NULL: none) writes an SVG
 * per kept region there first (region_sel_write_svgs), then the text, JSON or DOT
 * (format: enum region_format) through write, which sends fn's output where -o says (0
 * or -1 with a line printed). The exit status: 0, or 2 on errors (one line printed). */
int region_report(const struct region_args *a, const char *input, const char *name, int format,
                  const char *svg_dir, int (*write)(int (*fn)(FILE *f, void *ctx), void *ctx));

/* pmusim validate --regions on recording input against a->truth; the exit status
 * (0, 1 below --min-jaccard with a FAIL: line, 2 on errors). */
int region_validate(const struct region_args *a, const char *input, int json);

#endif
