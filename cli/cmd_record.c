/* pmusim record: runs a program with sampling counters and an LBR and writes
 * what the modelled PMU produced as perf.data (perf record's file), with COMM
 * and MMAP2 records for the program and its build id, so that perf script,
 * perf report and perf2bolt read it. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <elf.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include "cli/cli.h"
#include "cli/eventlist.h"
#include "cli/program.h"
#include "cli/record_callgraph.h"
#include "cli/record_ibs.h"
#include "cli/record_rep.h"
#include "cli/record_sampling.h"
#include "cli/record_tstack.h"
#include "common/buildid.h"
#include "common/elf_bias.h"
#include "common/err.h"
#include "profiler/perfdata.h"

#define DEFAULT_PERIOD 100003

static const char record_usage[] =
	"usage: pmusim record [-e EV,...] [-c PERIOD | -F FREQ] [--delta D] [-b | -j FILTER,...]\n"
	"                     [-g | --call-graph MODE] [--lbr-depth N] [--skid N[c]] [--refill A]\n"
	"                     [--reload overflow|interrupt] [-o FILE]\n"
	"                     [options] [--] PROG [ARGS...]\n"
	"\n"
	"Runs PROG with the modelled PMU sampling: each event's counter raises an\n"
	"overflow interrupt every PERIOD events, and each interrupt writes a sample\n"
	"(IP, TID, TIME, PERIOD and, with -b/-j, the LBR newest first) to perf.data.\n"
	"\n"
	"options:\n"
	"  -e, --event EV,...   events to sample (default cycles; `pmusim list`): names in\n"
	"                       any case, rUUEE, cpu/event=0xEE,umask=0xUU/, EV/period=N/,\n"
	"                       {EV,EV} groups (no multiplexing: every event has its own\n"
	"                       counter and every count is exact)\n"
	"  -c, --count PERIOD   sampling period in events (default 100003; 100k, 1e6 and\n"
	"                       0x1f are numbers too: k, M, G multiply by 10^3, 10^6, 10^9)\n"
	"  -F, --freq FREQ      samples per second of simulated time (the model's cycles\n"
	"                       at its clock), as perf's -F: the period starts at the\n"
	"                       clock's cycles per 1/FREQ s and after every sample moves\n"
	"                       1/8 of the way to the period the last interval's event\n"
	"                       rate asks for (Linux's perf_adjust_period); for cycles\n"
	"                       at the 2000 MHz clock -F 1000 is a period of 2,000,000.\n"
	"                       Not with -c or --delta\n"
	"  --delta D            add a random 0..D to every period, drawn afresh for each\n"
	"                       period from the counter's own stream (seeded by --pmu-seed,\n"
	"                       the event and its index among that event's counters: with\n"
	"                       --skid 0 and --refill 0 an event samples as it does alone)\n"
	"  --pmu-seed N         seed of the PMU's random choices (the period deltas);\n"
	"                       default --seed's value. Another --pmu-seed with the same\n"
	"                       --seed runs the same program with other sample points\n"
	"  -b, --branch-any     sample the LBR: every taken branch (= -j any)\n"
	"  -j, --branch-filter FILTER,...  LBR filter: any, any_call, any_ret, ind_call,\n"
	"                       ind_jmp, call, cond, and u (k or hv without u is refused:\n"
	"                       the model runs user code only); -b with another -j is\n"
	"                       refused as perf refuses it\n"
	"  -g                   a callchain in every sample, exact, from the thread-stack\n"
	"                       unit (= --call-graph tstack; perf's -g is fp)\n"
	"  --call-graph MODE    tstack: the thread-stack unit's stacks (exact);\n"
	"                       dwarf[,SIZE]: registers and SIZE bytes of stack (default\n"
	"                       8192) that perf unwinds itself, as perf record writes;\n"
	"                       fp: the kernel's frame-pointer walk (wrong where code\n"
	"                       keeps no frame pointer). The chain is taken where the\n"
	"                       interrupt is: after the block of the sample's instruction\n"
	"  --lbr-depth N        LBR entries: 4, 8, 16, 32 or 64 (default 32)\n"
	"  --skid N[c]          the interrupt lands N instructions (Nc: N cycles) after\n"
	"                       the overflowing instruction (default 0: at the eventing\n"
	"                       instruction)\n"
	"  --refill A           cycles charged after each interrupt (pipeline refill)\n"
	"  --reload WHEN        when a sampling counter starts its next period P + R:\n"
	"                       overflow (default): at the overflow; it counts on through\n"
	"                       the skid and the refill, so a cycles counter's program\n"
	"                       cycles between overflows are P + R - A (A = --refill);\n"
	"                       interrupt: in the interrupt handler, as Linux's x86\n"
	"                       handler does: stopped from the overflow to the interrupt,\n"
	"                       then reloaded, the refill counted in the new period:\n"
	"                       P + R + S - A, S = cycles from the overflow to the interrupt\n"
	"  --ibs-fixed          ibs_op//: every interval is the period (no random low bits)\n"
	"  --ibs-window ON/EVERY  ibs_op//: sample only ON out of every EVERY of simulated\n"
	"                       time (e.g. 1ms/10ms), a fresh interval in each window\n"
	"  -o, --output FILE    perf.data to write (default ./perf.data; an existing\n"
	"                       recording becomes FILE.old, as with perf record)\n"
	"  --rep MODE           trace REP string instructions with the REP unit: first,\n"
	"                       last, buffer, membuffer or counter; or patch (software:\n"
	"                       one REP at a time patched with a trap); each REP record\n"
	"                       is a sample of the event pmusim_rep (see README)\n"
	"  --rep-buffer N       instruction-information buffer entries (default 64)\n"
	"  --rep-tbe            the buffer records taken branches too (branch stack)\n"
	"  --rep-sse            single-step: one more record per REP iteration\n"
	"  --tstack             track every thread's call stack with the thread-stack unit\n"
	"                       and sample the stacks (event pmusim_tstack, callchains)\n"
	"  --tstack-period T    simulated time between samples: 10ms (default), 250us,\n"
	"                       5000ns, 1s; a plain number is milliseconds\n"
	"  --tstack-threads W   whose stacks each sample takes: running (default), all,\n"
	"                       or suspended (those not running)\n"
	"  --tstack-area N      entries of a new work area (default 256; it grows on overflow)\n"
	"  --tstack-mode M      stack (push/pop, default) or history (entry/exit records\n"
	"                       the tracer drains and replays)\n"
	"  --tstack-start N     set the unit's control bit once N instructions retired:\n"
	"                       calls already in progress are not in its stacks\n"
	"  --tstack-mark K:WHERE  treat the instruction at WHERE (an address, or SYM or\n"
	"                       SYM+OFF in the program) as a call or a return: K is call\n"
	"                       or return (repeatable; e.g. the ret of a retpoline thunk)\n"
	"  --tstack-dwarf SIZE  the DWARF baseline: snapshots carry the registers and SIZE\n"
	"                       bytes of stack instead of the work area (perf record\n"
	"                       --call-graph dwarf,SIZE), and perf unwinds them itself\n" PROG_OPTIONS_HELP
	"  -h, --help           this text\n"
	"\n"
	"exit status: the program's; 124 when --max-insns stopped it; 125 when every thread\n"
	"waits forever (deadlock); 2 on pmusim errors.\n"
	"The file is complete even when the program crashes or pmusim is interrupted.\n"
	"Fewer than 100 samples: a warning names the -c that would give about 1000.\n";

enum {
	O_DELTA = PROG_OPT_END, O_LBR_DEPTH, O_SKID, O_REFILL, O_REP, O_REP_BUFFER, O_REP_TBE, O_REP_SSE,
	O_TSTACK, O_TSTACK_PERIOD, O_TSTACK_THREADS, O_TSTACK_AREA, O_TSTACK_MODE, O_TSTACK_MARK, O_TSTACK_DWARF,
	O_TSTACK_START, O_PMU_SEED, O_CALL_GRAPH, O_RELOAD, O_IBS_FIXED, O_IBS_WINDOW
};

struct record_args {
	const char *cmd;     /* for messages */
	struct eventlist el;
	uint64_t period, delta, skid, refill, depth;
	uint64_t freq;       /* -F: samples per simulated second (0: -c's period) */
	int c_given;
	uint64_t pmu_seed;
	int pmu_seed_given;  /* else the PMU draws from --seed */
	int skid_cycles, lbr;
	int reload;          /* enum pmu_reload */
	uint32_t filter;
	int b_given;         /* -b: perf's rule, it is -j any and may not disagree with -j */
	const char *j_spec;  /* the -j given, for messages */
	const char *out;
	int rep_mode;        /* enum rep_mode, -1 without --rep */
	uint64_t rep_entries;
	int rep_tbe, rep_sse;
	struct tstack_options ts;
	struct callgraph_options cg;
	struct ibs_options ibs;
	int ibs_opts;        /* an --ibs-* option was given */
};

static int parse_filter(struct record_args *a, const char *spec, const char *cmd)
{
	if (record_branch_filter(cmd, spec, &a->filter, &a->j_spec) < 0)
		return -1;
	a->lbr = 1;
	return 0;
}

static int parse_num(const char *arg, uint64_t *v, const char *opt, const char *cmd)
{
	return option_u64(cmd, opt, arg, v);
}

static int record_option(void *ctx, int c, char *arg)
{
	struct record_args *a = ctx;
	const char *cmd = a->cmd;
	switch (c) {
	case 'e': return eventlist_add(&a->el, arg, cmd);
	case 'c':
		a->c_given = 1;
		return option_positive(cmd, "-c", arg, &a->period);
	case 'F': return option_positive(cmd, "-F", arg, &a->freq);
	case O_DELTA: return parse_num(arg, &a->delta, "--delta", cmd);
	case O_PMU_SEED: a->pmu_seed_given = 1; return parse_num(arg, &a->pmu_seed, "--pmu-seed", cmd);
	case 'b': a->b_given = 1; return 0;
	case 'j': return parse_filter(a, arg, cmd);
	case O_LBR_DEPTH: return parse_num(arg, &a->depth, "--lbr-depth", cmd);
	case O_REFILL: return parse_num(arg, &a->refill, "--refill", cmd);
	case O_RELOAD:
		if (strcmp(arg, "overflow") == 0)
			a->reload = PMU_RELOAD_OVERFLOW;
		else if (strcmp(arg, "interrupt") == 0)
			a->reload = PMU_RELOAD_INTERRUPT;
		else
			return fprintf(stderr, "%s: --reload needs overflow or interrupt, not '%s'\n", cmd, arg), -1;
		return 0;
	case 'o': a->out = arg; return 0;
	case O_IBS_FIXED: a->ibs.fixed = a->ibs_opts = 1; return 0;
	case O_IBS_WINDOW: a->ibs_opts = 1; return ibs_parse_window(cmd, arg, &a->ibs);
	case 'g': a->cg = (struct callgraph_options){CG_TSTACK, 0}; return 0;
	case O_CALL_GRAPH: return callgraph_parse(cmd, arg, &a->cg);
	case O_REP:
		if ((a->rep_mode = rep_mode_parse(arg)) < 0)
			return fprintf(stderr, "%s: --rep needs first, last, buffer, membuffer, counter or patch, not '%s'\n",
				       cmd, arg), -1;
		return 0;
	case O_REP_BUFFER:
		if (parse_num(arg, &a->rep_entries, "--rep-buffer", cmd) < 0 || a->rep_entries == 0 ||
		    a->rep_entries > (1u << 20))
			return fprintf(stderr, "%s: --rep-buffer needs 1 to 1048576 entries\n", cmd), -1;
		return 0;
	case O_REP_TBE: a->rep_tbe = 1; return 0;
	case O_REP_SSE: a->rep_sse = 1; return 0;
	case O_TSTACK: a->ts.on = 1; return 0;
	case O_TSTACK_PERIOD: a->ts.on = 1; return tstack_parse_period("--tstack-period", arg, &a->ts.period_ns);
	case O_TSTACK_THREADS: a->ts.on = 1; return tstack_parse_threads(arg, &a->ts.threads);
	case O_TSTACK_MODE: a->ts.on = 1; return tstack_parse_mode(arg, &a->ts.mode);
	case O_TSTACK_AREA:
		a->ts.on = 1;
		if (parse_num(arg, &a->ts.area_entries, "--tstack-area", cmd) < 0 || a->ts.area_entries == 0 ||
		    a->ts.area_entries > (1u << 24))
			return fprintf(stderr, "%s: --tstack-area needs 1 to 16777216 entries\n", cmd), -1;
		return 0;
	case O_TSTACK_START: a->ts.on = 1; return parse_num(arg, &a->ts.start, "--tstack-start", cmd);
	case O_TSTACK_DWARF: {
		uint64_t v;
		a->ts.on = 1;
		if (parse_num(arg, &v, "--tstack-dwarf", cmd) < 0 || v == 0 || v % 8 || v > TSTACK_DWARF_MAX)
			return fprintf(stderr, "%s: --tstack-dwarf needs a multiple of 8 from 8 to %u bytes\n", cmd,
				       TSTACK_DWARF_MAX), -1;
		a->ts.dwarf_stack = (uint32_t)v;
		return 0;
	}
	case O_TSTACK_MARK:
		a->ts.on = 1;
		if (a->ts.nmarks == sizeof(a->ts.marks) / sizeof(a->ts.marks[0]))
			return fprintf(stderr, "%s: at most 64 --tstack-mark\n", cmd), -1;
		a->ts.marks[a->ts.nmarks++] = arg;
		return 0;
	case O_SKID: {
		size_t n = strlen(arg);
		if (n > 1 && arg[n - 1] == 'c') {
			a->skid_cycles = 1;
			arg[n - 1] = 0;
		}
		return parse_num(arg, &a->skid, "--skid", cmd);
	}
	default: return 1;
	}
}

static int parse_args(int argc, char **argv, struct program *p, struct record_args *a)
{
	a->cmd = p->cmd;
	static const struct option opts[] = {
		PROG_LONG_OPTIONS, {"event", required_argument, 0, 'e'}, {"count", required_argument, 0, 'c'},
		{"freq", required_argument, 0, 'F'},
		{"delta", required_argument, 0, O_DELTA}, {"branch-any", no_argument, 0, 'b'},
		{"branch-filter", required_argument, 0, 'j'}, {"lbr-depth", required_argument, 0, O_LBR_DEPTH},
		{"skid", required_argument, 0, O_SKID}, {"refill", required_argument, 0, O_REFILL},
		{"reload", required_argument, 0, O_RELOAD},
		{"output", required_argument, 0, 'o'}, {"rep", required_argument, 0, O_REP},
		{"rep-buffer", required_argument, 0, O_REP_BUFFER}, {"rep-tbe", no_argument, 0, O_REP_TBE},
		{"rep-sse", no_argument, 0, O_REP_SSE}, {"tstack", no_argument, 0, O_TSTACK},
		{"tstack-period", required_argument, 0, O_TSTACK_PERIOD},
		{"tstack-threads", required_argument, 0, O_TSTACK_THREADS},
		{"tstack-area", required_argument, 0, O_TSTACK_AREA}, {"tstack-mode", required_argument, 0, O_TSTACK_MODE},
		{"tstack-mark", required_argument, 0, O_TSTACK_MARK}, {"tstack-dwarf", required_argument, 0, O_TSTACK_DWARF},
		{"tstack-start", required_argument, 0, O_TSTACK_START}, {"pmu-seed", required_argument, 0, O_PMU_SEED},
		{"call-graph", required_argument, 0, O_CALL_GRAPH}, {"ibs-fixed", no_argument, 0, O_IBS_FIXED},
		{"ibs-window", required_argument, 0, O_IBS_WINDOW}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	int rc = program_parse(p, argc, argv, "+he:c:F:bgj:o:" PROG_SHORT_OPTIONS, opts, record_usage, record_option, a);
	if (rc)
		return rc;
	if (a->el.n == 0 && !a->el.op && eventlist_add(&a->el, "cycles", p->cmd) < 0)
		return -1;
	if (a->el.op) {
		a->ibs.on = 1;
		a->ibs.cnt_ctl = a->el.op_cnt_ctl;
		a->ibs.period = a->el.op_period ? a->el.op_period : a->c_given ? a->period : IBS_DEFAULT_PERIOD;
		if (ibs_check(p->cmd, &a->ibs) < 0)
			return -1;
		if (a->freq && !a->el.op_period)
			return fprintf(stderr, "%s: ibs_op// samples at a period (-c or period=), not at -F's frequency\n",
				       p->cmd), -1;
	} else if (a->ibs_opts) {
		return fprintf(stderr, "%s: --ibs-fixed and --ibs-window go with -e ibs_op//\n", p->cmd), -1;
	}
	if (a->b_given && record_branch_any(p->cmd, a->j_spec, a->filter) < 0)
		return -1;
	if (a->b_given)
		a->lbr = 1, a->filter = LBR_F_ANY;
	if (a->freq && a->c_given)
		return fprintf(stderr, "%s: -F (a frequency) and -c (a period) exclude each other: give one\n", p->cmd),
		       -1;
	if (a->freq && a->delta)
		return fprintf(stderr, "%s: --delta goes with -c, not -F (the period already varies)\n", p->cmd), -1;
	if (a->freq > (uint64_t)cpu_model_default()->mhz * 1000000)
		return fprintf(stderr, "%s: -F %llu is above the clock (%u MHz): at most one sample per cycle\n", p->cmd,
			       (unsigned long long)a->freq, cpu_model_default()->mhz), -1;
	if (strcmp(a->out, "-") == 0)
		return fprintf(stderr, "%s: -o -: perf's pipe mode (perf.data as a stream) is not written; give a "
				       "file, then perf script -i FILE or pmusim report -i FILE\n", p->cmd), -1;
	if (a->cg.mode == CG_DWARF && a->ts.dwarf_stack)
		return fprintf(stderr, "%s: --call-graph dwarf and --tstack-dwarf both dump stacks: give one\n", p->cmd),
		       -1;
	if (a->rep_sse && (a->rep_mode < 0 || a->rep_mode == REP_PATCH))
		return fprintf(stderr, "%s: --rep-sse goes with a --rep mode of the REP unit\n", p->cmd), -1;
	if ((p->dbr.path || p->live.on) && (a->ts.on || a->cg.mode != CG_NONE) && p->truth_json)
		return fprintf(stderr, "%s: a rewritten run (--dbr, --dbr-install) does not keep the truth's "
				       "stacks: a call graph or --tstack goes without --truth-json there\n", p->cmd), -1;
	if ((p->dbr.path || p->live.on) && a->ts.nmarks)
		return fprintf(stderr, "%s: --tstack-mark names instructions of the program that replacement code "
				       "copies: not with --dbr or --dbr-install\n", p->cmd), -1;
	if ((p->dbr.path || p->live.on) && a->rep_mode == REP_PATCH)
		return fprintf(stderr, "%s: --rep patch rewrites the program's REP instructions itself: not with "
				       "--dbr or --dbr-install (the other --rep modes are)\n", p->cmd), -1;
	if ((a->rep_tbe || a->rep_entries != 64) && a->rep_mode != REP_BUFFER && a->rep_mode != REP_MEMBUFFER)
		return fprintf(stderr, "%s: --rep-buffer and --rep-tbe go with --rep buffer or membuffer\n", p->cmd),
		       -1;
	return 0;
}

/* The filter's perf_event.h bits. TYPE_SAVE too: every entry carries its
 * branch type (what the kernel fills in only when asked, -j save_type). */
static uint64_t branch_sample_type(uint32_t f)
{
	uint64_t t = PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_TYPE_SAVE;
	if ((f & LBR_F_ANY) == LBR_F_ANY)
		return t | PERF_SAMPLE_BRANCH_ANY;
	if ((f & LBR_F_ANY_CALL) == LBR_F_ANY_CALL)
		t |= PERF_SAMPLE_BRANCH_ANY_CALL;
	else if (f & LBR_F_CALL)
		t |= PERF_SAMPLE_BRANCH_CALL;
	else if (f & LBR_F_IND_CALL)
		t |= PERF_SAMPLE_BRANCH_IND_CALL;
	if (f & LBR_F_RET)
		t |= PERF_SAMPLE_BRANCH_ANY_RETURN;
	if (f & LBR_F_COND)
		t |= PERF_SAMPLE_BRANCH_COND;
	if (f & LBR_F_IND_JMP)
		t |= PERF_SAMPLE_BRANCH_IND_JUMP;
	return t;
}

static uint8_t perf_br_type(int kind)
{
	switch (kind) {
	case BK_COND: return PERF_BR_COND;
	case BK_JMP: return PERF_BR_UNCOND;
	case BK_JMP_IND: return PERF_BR_IND;
	case BK_CALL: return PERF_BR_CALL;
	case BK_CALL_IND: return PERF_BR_IND_CALL;
	case BK_RET: return PERF_BR_RET;
	default: return PERF_BR_UNKNOWN;
	}
}

struct recorder {
	struct perfdata_writer *w;
	const struct cpu_model *cpu;
	const struct pmu *pmu;
	uint32_t pid;
	uint32_t *task_pid;  /* process of thread pid + i */
	uint32_t ntask;
	int err;
	struct rep_recording rep;
	struct tstack_recording ts; /* --tstack's tracer; -g's unit, machine and buffers */
	struct callgraph_options cg;
	struct perf_branch br[LBR_MAX_DEPTH];
	uint64_t pmu_samples;  /* samples of the -e events (not REP or stack records) */
	char *files[SIM_MAX_MAPPINGS]; /* files whose build id is written (copies: the
	                                * machine frees a process's paths with its image) */
	size_t nfiles;
	int data_maps;       /* the file's other segments too (perf record -d): DWARF unwinding reads them */
	int lbr_raw;         /* samples with a branch stack carry pmusim's payload
	                      * (perfdata.h PERFDATA_RAW_LBR_TAG) */
	struct outfile *out; /* the recording's temporary, opened before anything runs */
	const struct ibs_options *ibs;
	uint64_t op_id;      /* the ibs_op event's sample id */
	struct sim *sim;     /* the data addresses of op samples */
	int dbr;             /* a rewritten run: IPs in replacement code mapped back */
};

static uint64_t now_ns(const struct recorder *r)
{
	return pmu_cycles(r->pmu) * 1000 / r->cpu->mhz;
}

/* The process of a thread (threads of the program's processes get ids in
 * order from the first pid on). */
static uint32_t pid_of(const struct recorder *r, uint32_t tid)
{
	return tid >= r->pid && tid - r->pid < r->ntask ? r->task_pid[tid - r->pid] : r->pid;
}

static void set_pid_of(struct recorder *r, uint32_t tid, uint32_t pid)
{
	if (tid < r->pid)
		return;
	uint32_t i = tid - r->pid;
	if (i >= r->ntask) {
		uint32_t n = i + 64;
		uint32_t *np = realloc(r->task_pid, n * sizeof(*np));
		if (!np) {
			r->err = PMUSIM_ERR_NOMEM;
			return;
		}
		for (uint32_t k = r->ntask; k < n; k++)
			np[k] = r->pid;
		r->task_pid = np;
		r->ntask = n;
	}
	r->task_pid[i] = pid;
}

static void on_sample(void *ctx, const struct pmu_sample *s)
{
	struct recorder *r = ctx;
	uint32_t nbr = 0;
	for (uint32_t i = 0; i < s->nbr; i++) {
		uint64_t from = s->br[i].from, to = s->br[i].to;
		int kind = s->br[i].kind;
		/* a rewritten run's: the program's taken branches, as the program's */
		if (r->dbr && !sim_dbr_branch(r->sim, s->br[i].from, s->br[i].to, &from, &to, &kind))
			continue;
		r->br[nbr++] = (struct perf_branch){
			.from = from, .to = to, .cycles = s->br[i].cycles,
			.mispred = s->br[i].mispred, .predicted = !s->br[i].mispred,
			.type = perf_br_type(kind),
		};
	}
	struct perf_sample ps = {
		.id = s->counter + 1, .ip = r->dbr ? sim_dbr_sample_ip(r->sim, s->ip) : s->ip,
		.time = s->cycle * 1000 / r->cpu->mhz,
		.period = s->period, .pid = pid_of(r, s->tid), .tid = s->tid, .misc = PERF_RECORD_MISC_USER,
		.nbr = nbr, .br = r->br,
	};
	uint8_t raw[PERFDATA_RAW_LBR_SIZE];
	if (r->lbr_raw && nbr) {
		uint32_t tag = PERFDATA_RAW_LBR_TAG, flags = s->ip_after_newest ? PERFDATA_RAW_IP_AFTER : 0;
		memcpy(raw, &tag, 4); /* x86-64: the file's byte order is the host's */
		memcpy(raw + 4, &flags, 4);
		memcpy(raw + 8, &s->ovf_after_newest, 8);
		ps.raw = raw;
		ps.raw_size = sizeof(raw);
	}
	uint64_t regs[24];
	if (r->cg.mode != CG_NONE && !r->err)
		r->err = callgraph_fill(&r->cg, &r->ts, s->tid, ps.pid, s->next, &ps, regs);
	r->pmu_samples++;
	if (!r->err)
		r->err = perfdata_write_sample(r->w, &ps);
}

/* An op sample of ibs_op// (the model's sampler; the machine noted its memory access). */
/* An op sample of a rewritten run as the program's instruction: its IP the
 * original's, a copied jcc's direction the original's (an inverted one's
 * flipped), a branch target the first original instruction it reaches. 0 for an
 * instruction the rewriter added: no instruction of the program, no sample (in
 * op mode every instruction of the program stays as likely to be tagged as any
 * other; charged to a neighbour, added jumps would weigh on it). */
static int map_op_sample(struct recorder *r, struct pmu_op_sample *s)
{
	int inverted;
	uint64_t orig = sim_dbr_original(r->sim, s->ip, &inverted);
	if (!orig)
		return 0;
	int kind;
	uint64_t raw_ip = s->ip;
	uint64_t target = sim_dbr_static_target(r->sim, orig, &kind);
	s->ip = orig;
	if (s->branch && s->kind == BK_COND) {
		/* taken or not, IBS gives a jcc's static target: the original's */
		s->taken ^= (uint8_t)inverted;
		s->target = target;
	} else if (!s->branch && kind == BK_CALL) {
		/* the push that stands for a direct call: the call, taken to its callee */
		s->branch = s->taken = 1;
		s->kind = BK_CALL;
		s->target = target;
	} else if (!s->branch && kind == BK_RET && (target = sim_dbr_after(r->sim, raw_ip)) != 0) {
		/* the lea that stands for a clone's return: the return, to its return point */
		s->branch = s->taken = s->ret = 1;
		s->kind = BK_RET;
		s->target = target;
	} else if (s->target) {
		s->target = sim_dbr_resolve(r->sim, s->target);
	}
	return 1;
}

static void on_op_sample(void *ctx, const struct pmu_op_sample *s0)
{
	struct recorder *r = ctx;
	struct pmu_op_sample mapped = *s0;
	const struct pmu_op_sample *s = s0;
	if (r->dbr) {
		if (!map_op_sample(r, &mapped))
			return;
		s = &mapped;
	}
	uint8_t raw[IBS_OP_RAW_SIZE];
	struct perf_sample ps = {
		.id = r->op_id, .time = s->cycle * 1000 / r->cpu->mhz, .pid = pid_of(r, s->tid), .tid = s->tid,
		.misc = PERF_RECORD_MISC_USER,
	};
	if (!r->err)
		r->err = ibs_perf_sample(r->ibs, s, &ps, raw);
	r->pmu_samples++;
	if (!r->err)
		r->err = perfdata_write_sample(r->w, &ps);
}

static void on_op_memory(void *ctx, uint64_t insn, uint64_t ip, struct pmu_op_mem *m)
{
	struct recorder *r = ctx;
	sim_op_memory(r->sim, insn, ip, m);
}

/* Simulated time, for the REP recording and the stack tracer. */
static uint64_t now_ns_of(void *ctx)
{
	return now_ns(ctx);
}

static uint32_t rep_pid(void *ctx, uint32_t tid)
{
	return pid_of(ctx, tid);
}

/* The perf.data header: events, and what the file says about the recording
 * (fixed texts: the same inputs give the same bytes on every host). */
static int open_output(struct recorder *r, const struct record_args *a, struct program *p,
		       int argc, char **argv)
{
	struct perfdata_event ev[PMU_MAX_COUNTERS + 2];
	uint64_t st = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD;
	size_t nop = a->ibs.on != 0, nev = a->el.n + nop + (a->rep_mode >= 0) + (a->ts.on != 0);
	if (a->lbr || a->rep_tbe)
		st |= PERF_SAMPLE_BRANCH_STACK;
	if (nev > 1)
		st |= PERF_SAMPLE_IDENTIFIER;
	if (a->rep_mode >= 0)
		st |= PERF_SAMPLE_RAW;
	r->lbr_raw = a->lbr && a->el.n > 0;
	if (r->lbr_raw)
		st |= PERF_SAMPLE_RAW;
	if (a->ts.on)
		st |= PERF_SAMPLE_CALLCHAIN;
	if (nop)
		st |= PERFDATA_IBS_OP_SAMPLE_TYPE;
	if (a->ts.dwarf_stack)
		st |= PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	st |= callgraph_sample_type(&a->cg);
	for (size_t i = 0; i < a->el.n; i++) {
		ev[i] = (struct perfdata_event){
			.name = a->el.name[i], .type = a->el.perf_type[i], .config = a->el.perf_config[i],
			.sample_period = a->el.period[i] ? a->el.period[i] : a->freq ? a->freq : a->period,
			.freq = !a->el.period[i] && a->freq, .sample_type = st,
			.branch_sample_type = a->lbr ? branch_sample_type(a->filter) : 0, .id = i + 1,
			.precise_ip = a->skid == 0 ? 3 : a->el.spec[i].precise,
		};
	}
	if (nop && perfdata_ibs_op_event(&ev[a->el.n], a->ibs.period, a->ibs.cnt_ctl, a->el.n + 1,
					 a->el.op_name) < 0)
		return fprintf(stderr, "%s: cannot describe ibs_op's event\n", p->cmd), -1;
	if (nop) {
		ev[a->el.n].sample_type = st;
		ev[a->el.n].branch_sample_type = a->lbr ? branch_sample_type(a->filter) : 0;
	}
	if (a->rep_mode >= 0) /* the REP unit's records: an event of their own */
		ev[a->el.n + nop] = (struct perfdata_event){
			.name = REP_EVENT_NAME, .type = PERF_TYPE_RAW, .config = 0x7265702e, /* "rep." */
			.sample_period = 1, .sample_type = st,
			.branch_sample_type = a->rep_tbe ? PERF_SAMPLE_BRANCH_USER | PERF_SAMPLE_BRANCH_ANY : 0,
			.id = a->el.n + nop + 1,
		};
	if (a->ts.on) /* the tracer's snapshots: an event of their own */
		ev[nev - 1] = (struct perfdata_event){
			.name = TSTACK_EVENT_NAME, .type = PERF_TYPE_RAW, .config = 0x6b747374, /* "tstk" */
			.sample_period = a->ts.period_ns, .sample_type = st, .id = nev,
		};
	uint32_t dump = a->ts.dwarf_stack ? a->ts.dwarf_stack : a->cg.mode == CG_DWARF ? a->cg.dwarf_size : 0;
	for (size_t i = 0; i < nev && dump; i++) {
		ev[i].sample_regs_user = TSTACK_REGS_MASK;
		ev[i].sample_stack_user = dump;
	}
	char cpuid[64];
	/* perf decodes IBS payloads only in an AMD machine's recording */
	snprintf(cpuid, sizeof(cpuid), "%s", nop ? PERFDATA_IBS_CPUID : "GenuineIntel,6,85,4");
	struct perfdata_info info = {
		.hostname = "pmusim", .os_release = "pmusim", .version = "pmusim 0.1", .arch = "x86_64",
		.cpudesc = r->cpu->desc, .cpuid = cpuid, .nr_cpus = 1, .total_mem_kb = 0,
		.cmdline = (const char *const *)argv, .ncmdline = (size_t)argc,
	};
	char msg[512] = "";
	outputs_hand_over(&p->outs, r->out);
	int err = perfdata_writer_open_file(&r->w, r->out, ev, nev, &info, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", p->cmd, a->out, msg[0] ? msg : pmusim_strerror(err));
		return -1;
	}
	r->rep.w = r->w;
	r->rep.id = a->el.n + nop + 1;
	r->op_id = a->el.n + 1;
	r->ts.w = r->w;
	r->ts.id = nev;
	return 0;
}

/* An MMAP2 record of one executable mapping and the build id of its file (once
 * per file), as perf record writes them. */
static int describe_mapping(struct recorder *r, const struct sim_mapping *m)
{
	int err = perfdata_write_mmap2(r->w, m->pid, m->pid, m->addr, m->len, m->pgoff, (uint32_t)m->prot,
				       0x2 /* MAP_PRIVATE */, m->path, r->pmu ? now_ns(r) : 0);
	if (sim_mapping_is_anon(m)) /* no file: no segments, no build id */
		return err;
	struct elf_segment seg[16];
	size_t nseg = r->data_maps ? elf_load_segments(m->path, seg, 16) : 0;
	uint64_t bias = nseg ? elf_mapping_bias(m->path, m->addr, m->pgoff) : 0;
	for (size_t i = 0; i < nseg && err >= 0; i++) {
		if (seg[i].flags & PF_X)
			continue;
		uint64_t lo = seg[i].vaddr & ~0xfffULL, hi = (seg[i].vaddr + seg[i].filesz + 0xfff) & ~0xfffULL;
		uint32_t prot = PROT_READ | (seg[i].flags & PF_W ? PROT_WRITE : 0);
		if (hi > lo)
			err = perfdata_write_mmap2(r->w, m->pid, m->pid, bias + lo, hi - lo, seg[i].offset & ~0xfffULL,
						   prot, 0x2, m->path, r->pmu ? now_ns(r) : 0);
	}
	for (size_t i = 0; i < r->nfiles; i++)
		if (strcmp(r->files[i], m->path) == 0)
			return err;
	uint8_t id[BUILD_ID_MAX];
	int idlen = elf_build_id(m->path, id);
	if (r->nfiles < sizeof(r->files) / sizeof(r->files[0]) && (r->files[r->nfiles] = strdup(m->path)) != NULL)
		r->nfiles++;
	if (err >= 0 && idlen > 0)
		err = perfdata_add_build_id(r->w, m->path, id, (size_t)idlen);
	return err;
}

/* A shared library mapped while the program runs (the machine tells). */
static void on_mapping(void *ctx, const struct sim_mapping *m)
{
	struct recorder *r = ctx;
	if (!r->err)
		r->err = describe_mapping(r, m);
	if (r->ts.unit && !sim_mapping_is_anon(m)) /* its functions, for the tail-call heuristic */
		tstack_recording_add_functions(&r->ts, m->path, elf_mapping_bias(m->path, m->addr, m->pgoff));
}

/* Code in anonymous memory, as it first runs: the profiler has no file to read it
 * from, so the recording carries it. */
static void on_code(void *ctx, uint32_t pid, uint64_t addr, const uint8_t *bytes, size_t len)
{
	struct recorder *r = ctx;
	if (!r->err)
		r->err = perfdata_write_text_poke(r->w, pid, pid, addr, bytes, len, r->pmu ? now_ns(r) : 0);
}

/* Tasks as perf record writes them with inheritance: FORK for a new thread or
 * process (its comm is its parent's until it renames itself or executes a
 * program), COMM with the exec flag for execve, EXIT when a process ends. */
static void on_fork(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct recorder *r = ctx;
	set_pid_of(r, tid, pid);
	if (!r->err)
		r->err = perfdata_write_task(r->w, PERF_RECORD_FORK, pid, ppid, tid, ptid, now_ns(r));
}

static void on_exec(void *ctx, uint32_t pid, uint32_t tid, const char *comm)
{
	struct recorder *r = ctx;
	if (!r->err)
		r->err = perfdata_write_comm_exec(r->w, pid, tid, comm, now_ns(r));
}

static void on_exit_task(void *ctx, uint32_t pid, uint32_t ppid, uint32_t tid, uint32_t ptid)
{
	struct recorder *r = ctx;
	if (!r->err)
		r->err = perfdata_write_task(r->w, PERF_RECORD_EXIT, pid, ppid, tid, ptid, now_ns(r));
}

/* COMM and MMAP2 records of the program (and its interpreter) and their build
 * ids, as perf record writes them for a program it starts (before any sample). */
static int describe_process(struct recorder *r, const struct program *p)
{
	const char *exe = sim_exe_path(p->sim);
	const char *base = strrchr(exe, '/') ? strrchr(exe, '/') + 1 : exe;
	char comm[16];
	snprintf(comm, sizeof(comm), "%s", base); /* TASK_COMM_LEN 16 */
	int err = perfdata_write_comm(r->w, r->pid, r->pid, comm, 0);
	const struct sim_mapping *m;
	size_t n = sim_exec_mappings(p->sim, &m);
	for (size_t i = 0; i < n && err >= 0; i++)
		err = describe_mapping(r, &m[i]);
	sim_set_mapping_listener(p->sim, on_mapping, r);
	sim_set_code_listener(p->sim, on_code, r);
	struct sim_task_listener tl = {on_fork, on_exec, on_exit_task, r};
	sim_set_task_listener(p->sim, &tl);
	return err;
}

/* The REP unit on the retired blocks. A rewritten run's REP instructions may run in
 * replacement code: the unit then reads the original program's blocks (an image
 * sink, sim/dbr_map.h), so its sites, counts and instruction indices are the
 * program's; an image sink sees the program pmusim started and not its children. */
static int rep_unit_attach(struct recorder *r, const struct program *p)
{
	struct block_sink k = rep_unit_sink(r->rep.unit);
	return p->so.dbr ? sim_add_image_sink(p->sim, k) : sim_add_sink(p->sim, k);
}


static int setup(struct program *p, struct record_args *a, struct recorder *r, struct pmu **pmu,
		 int argc, char **argv)
{
	struct pmu_config cfg = {
		.nctr = (uint32_t)a->el.n, .delta = a->delta, .skid = a->skid,
		.skid_in_cycles = a->skid_cycles, .refill_cycles = (uint32_t)a->refill,
		.reload = (enum pmu_reload)a->reload,
		.lbr_depth = a->lbr ? (uint32_t)a->depth : 0, .lbr_filter = a->filter,
		.seed = a->pmu_seed_given ? a->pmu_seed : p->so.seed,
		.op = ibs_pmu_config(&a->ibs, cpu_model_default()->mhz),
	};
	for (size_t i = 0; i < a->el.n; i++)
		cfg.ctr[i] = (struct pmu_counter_config){a->el.spec[i].ev, a->el.period[i] ? a->el.period[i] : a->period,
							 a->el.period[i] ? 0 : a->freq};
	r->cpu = cpu_model_default();
	/* before the program runs: a path that cannot be written fails at once */
	if (!(r->out = outputs_open(&p->outs, "-o", a->out)))
		return -1;
	r->out->keep_old = 1; /* an existing recording becomes FILE.old, as perf record does */
	char msg[256] = "";
	struct pmu_sample_sink sink = {.sample = on_sample, .ctx = r};
	if (a->ibs.on)
		sink.op_sample = on_op_sample, sink.op_memory = on_op_memory;
	r->ibs = &a->ibs;
	if (pmu_new(&cfg, sink, pmu, msg, sizeof(msg)) < 0) {
		fprintf(stderr, "pmusim record: %s\n", msg[0] ? msg : "out of memory");
		return -1;
	}
	if (program_use_pmu(p, *pmu) < 0 || program_load(p) < 0)
		return -1;
	r->sim = p->sim;
	r->dbr = p->so.dbr;
	/* the unit sees each block before the PMU, so that a sample's callchain is
	 * the stack after the block the sample's instruction is in */
	r->cg = a->cg;
	r->ts.opt = a->ts;
	r->ts.now_ns = now_ns_of, r->ts.ctx = r;
	r->ts.clock_mhz = r->cpu->mhz;
	if ((a->ts.on || a->cg.mode == CG_TSTACK) && tstack_recording_init(&r->ts, p->sim, p->t) < 0)
		return -1;
	if (!r->ts.unit && a->cg.mode != CG_NONE) { /* fp, dwarf: the machine, the truth's stacks */
		r->ts.sim = p->sim, r->ts.truth = p->t;
		if (p->t && sim_track_true_stacks(p->sim) < 0)
			return fprintf(stderr, "pmusim record: out of memory\n"), -1;
	}
	if (sim_add_sink(p->sim, pmu_block_sink(*pmu)) < 0 || (a->ibs.on && sim_watch_ops(p->sim, *pmu) < 0))
		return -1;
	r->ts.clock = *pmu;
	if (a->rep_mode >= 0) {
		r->rep.now_ns = now_ns_of, r->rep.pid_of = rep_pid, r->rep.ctx = r;
		if (rep_recording_init(&r->rep, a->rep_mode, (uint32_t)a->rep_entries, a->rep_tbe, a->rep_sse) < 0 ||
		    (r->rep.unit && rep_unit_attach(r, p) < 0) ||
		    (a->rep_mode == REP_PATCH && sim_rep_patch(p->sim, rep_recording_patched, &r->rep) < 0)) {
			fprintf(stderr, "pmusim record: out of memory\n");
			return -1;
		}
	}
	if (a->ts.on && tstack_recording_trace(&r->ts) < 0)
		return -1;
	r->pid = sim_pid(p->sim);
	r->pmu = *pmu;
	r->data_maps = a->ts.dwarf_stack != 0 || a->cg.mode == CG_DWARF;
	if (open_output(r, a, p, argc, argv) < 0)
		return -1;
	if (describe_process(r, p) < 0) {
		fprintf(stderr, "pmusim: cannot write %s\n", a->out);
		return -1;
	}
	return 0;
}

#define RECORD_ARGS_DEFAULTS                                                                          \
	{.period = DEFAULT_PERIOD, .depth = 32, .out = "perf.data", .rep_mode = -1, .rep_entries = 64, \
	 .ts = {.period_ns = 10000000, .area_entries = 256}}

int record_check_args(int argc, char **argv, const char *cmd)
{
	struct program p;
	struct record_args a = RECORD_ARGS_DEFAULTS;
	int ok = program_init(&p, cmd, argc) == 0 && parse_args(argc, argv, &p, &a) == 0;
	program_free(&p);
	return ok ? 0 : -1;
}

int cmd_record_parse(int argc, char **argv)
{
	struct program p;
	struct record_args a = RECORD_ARGS_DEFAULTS;
	int rc = program_init(&p, "pmusim record", argc) == 0 ? parse_args(argc, argv, &p, &a) : -1;
	program_free(&p);
	return rc;
}

static uint64_t progress_samples(void *ctx)
{
	const struct recorder *r = ctx;
	return r->w ? perfdata_writer_samples(r->w) : 0;
}

static uint64_t progress_bytes(void *ctx)
{
	const struct recorder *r = ctx;
	return r->w ? perfdata_writer_bytes(r->w) : 0;
}

/* -v: what the PMU was set up to do. */
static void tell_setup(const struct record_args *a, const char *cmd)
{
	for (size_t i = 0; i < a->el.n; i++)
		fprintf(stderr, "%s: event %s, a sample every %llu events%s\n", cmd, a->el.name[i],
			(unsigned long long)a->period, a->delta ? " + a random 0..--delta" : "");
	if (a->reload == PMU_RELOAD_INTERRUPT)
		fprintf(stderr, "%s: each period starts at the interrupt (--reload interrupt)\n", cmd);
	if (a->lbr)
		fprintf(stderr, "%s: LBR of %llu entries, branch_sample_type 0x%llx\n", cmd,
			(unsigned long long)a->depth, (unsigned long long)branch_sample_type(a->filter));
	if (a->rep_mode >= 0)
		fprintf(stderr, "%s: REP unit on (event " REP_EVENT_NAME ")\n", cmd);
	if (a->ts.on)
		fprintf(stderr, "%s: thread-stack unit on, a snapshot every %llu ns of simulated time\n", cmd,
			(unsigned long long)a->ts.period_ns);
}

int cmd_record(int argc, char **argv)
{
	struct program p;
	struct record_args a = RECORD_ARGS_DEFAULTS;
	struct recorder r = {0};
	struct pmu *pmu = NULL;
	int status = EXIT_PMUSIM_ERROR;
	int rc = program_init(&p, "pmusim record", argc) < 0 ? -1 : parse_args(argc, argv, &p, &a);
	if (rc == CLI_HELP)
		status = 0;
	if (rc || setup(&p, &a, &r, &pmu, argc, argv) < 0)
		goto out;
	if (p.verbose)
		tell_setup(&a, p.cmd);
	p.progress = (struct progress){.samples = progress_samples, .bytes = progress_bytes, .ctx = &r};
	program_run(&p);
	status = program_status(&p);
	if (a.rep_mode >= 0) {
		rep_recording_finish(&r.rep); /* what is left in the buffer, the last branch records */
		if (r.rep.err && !r.err)
			r.err = r.rep.err;
	}
	if (r.ts.err && !r.err)
		r.err = r.ts.err;
	uint64_t nsamples = perfdata_writer_samples(r.w);
	int err = perfdata_writer_close(r.w);
	r.w = NULL;
	if (err < 0) {
		fprintf(stderr, "pmusim: cannot write %s: %s\n", a.out, pmusim_strerror(err));
		status = EXIT_PMUSIM_ERROR;
	} else if (!p.quiet) {
		struct stat stt;
		char size[48] = ""; /* a device or a pipe has no size to tell */
		if (stat(a.out, &stt) == 0 && S_ISREG(stt.st_mode))
			snprintf(size, sizeof(size), "%.3f MB ", (double)stt.st_size / (1024.0 * 1024.0));
		fprintf(stderr, "[ pmusim record: Captured and wrote %s%s (%llu samples)%s ]\n", size, a.out,
			(unsigned long long)nsamples, r.err ? ", cut short by a write error" : "");
		record_warn_few_samples(&a.el, a.freq, pmu, nsamples);
		if (a.ts.on)
			fprintf(stderr, "[ pmusim record: %llu stack snapshots, %llu frames, %llu work-area overflows ]\n",
				(unsigned long long)r.ts.snapshots, (unsigned long long)r.ts.frames,
				(unsigned long long)tstack_overflows(r.ts.unit));
		if (a.ts.on && !r.ts.snapshots)
			fprintf(stderr, "[ pmusim record: the program ran %.3f ms of simulated time; a shorter "
				"--tstack-period takes snapshots ]\n", (double)now_ns(&r) / 1e6);
	}
	if (r.err)
		status = EXIT_PMUSIM_ERROR;
	if (program_write_truth(&p) < 0)
		status = EXIT_PMUSIM_ERROR;
out:
	if (r.w)
		perfdata_writer_abort(r.w);
	pmu_free(pmu);
	rep_recording_free(&r.rep);
	tstack_recording_free(&r.ts);
	free(r.task_pid);
	for (size_t i = 0; i < r.nfiles; i++)
		free(r.files[i]);
	program_free(&p);
	return status;
}
