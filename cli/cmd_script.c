/* pmusim script: prints the samples of a perf.data file (pmusim's or real
 * perf's) as `perf script` does, for users without perf. Field layout follows
 * perf 6.1's builtin-script.c output: each field followed by a space ("%16s "
 * comm, "%5d " tid, "%12s: " time, "%10lu " period, the event name padded to
 * the longest one's width), then " %16lx" IPs, branch entries
 * "0xFROM/0xTO/M|P|-/X|-/A|-/CYCLES/TYPE", and last the instructions of the
 * branch stack (profiler/brstackinsn.h), read from the files each process maps
 * (profiler/proc_code.h). When the file has callchains, the
 * IP field is the callchain instead, as perf prints it: a newline, then per
 * frame (at most --max-stack) a tab, the address relative to its mapping
 * ("%16lx"), the symbol (of the address itself) and the file, and a blank line
 * after the sample; the comm is then not padded. Samples of an AMD IBS op
 * event (PMU "ibs_op") end with the op's facts decoded from their payload
 * (profiler/ibs_op.h), a field of pmusim's own: perf prints them only under
 * `perf report -D`. */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/perf_refusals.h"
#include "cli/program.h"
#include "common/err.h"
#include "common/grow.h"
#include "common/symtab.h"
#include "profiler/binary.h"
#include "profiler/brstackinsn.h"
#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"
#include "profiler/proc_code.h"
#include "profiler/symbolize.h"

static const char script_usage[] =
	"usage: pmusim script [-i FILE] [-F FIELD,...] [--max-stack N] [--symfs DIR]\n"
	"\n"
	"Prints the samples of a perf.data file as text, one line per sample (with\n"
	"callchains in the file: a block per sample, one line per frame).\n"
	"\n"
	"options:\n"
	"  -i, --input FILE   perf.data to read (default ./perf.data)\n"
	"  -F, --fields LIST  comm, tid, pid, time, period, event, addr, ip, sym, symoff,\n"
	"                     dso, brstack, brstacksym, brstackinsn, brstackdisasm, ibs\n"
	"                     (default: comm,tid,time,period,event,ip,sym,symoff,dso,ibs)\n"
	"  --max-stack N      frames printed per callchain (default 127, as perf's\n"
	"                     kernel.perf_event_max_stack)\n"
	"  --symfs DIR        look the recording's files up under DIR (/a/b as DIR/a/b)\n"
	"  -h, --help         this text\n"
	"\n"
	"\n"
	"brstackinsn prints, after each sample, the instructions its branch stack says\n"
	"retired, as perf 6.1's -F brstackinsn: per LBR entry, oldest first, the range\n"
	"from the older entry's target through the entry's branch, whose line ends\n"
	"\"# PRED\" or \"# MISPRED\", the entry's cycles, their running total in the\n"
	"sample \"[T]\" and the range's instructions (branch included) per cycle, \"%.2f\n"
	"IPC\" (no cycles: none printed); then the code from the newest target to the\n"
	"sample's IP. The instruction counts are the CPI report's (report --cpi).\n"
	"Instructions print as perf prints them without xed: \"insn: \" and their bytes\n"
	"(perf script --xed pipes that to xed); brstackdisasm prints Capstone's text\n"
	"instead (Intel syntax; later perfs' brstackdisasm is AT&T). Differences from\n"
	"perf: a range the walk of the code refuses (a jump inside it, an end that is\n"
	"no branch) prints \"# pmusim: range A-B not walked (REASON)\" and the entry's\n"
	"cycles where perf prints its bytes read straight through (a real LBR that lost\n"
	"an entry); the INTX and ABORT flags are not read; no names are made up for\n"
	"PLT entries (perf's \"name@plt\");\n"
	"code in no file (JIT code) is not printed, as perf does not. Both need a\n"
	"recording of every taken branch (record -b), as perf's do.\n"
	"\n"
	"ibs prints, after a sample of an AMD IBS op event (the ibs_op PMU: pmusim's or\n"
	"a real AMD machine's recording), the op its payload describes: \"ibs:\", then\n"
	"branch=0|1 (a branch retired), taken=, mispred=, return= (0|1, \"-\" when no\n"
	"branch), target= (the branch's target, 0x...; \"-\"), load=, store= (0|1),\n"
	"width= (bytes accessed; \"-\" unknown or none), data= (the data address;\n"
	"\"-\" when not valid), tag_to_ret= (cycles from tag to retirement),\n"
	"microcode= (0|1). Other events' samples print nothing for it.\n"
	"\n"
	"exit status: 0; 2 when the file is missing, not perf.data, or corrupt (an IBS\n"
	"op payload that is not what the kernel writes among them: one line names the\n"
	"sample), or when brstackinsn is asked of a recording without all taken branches.\n";

enum {
	F_COMM = 1 << 0, F_TID = 1 << 1, F_PID = 1 << 2, F_TIME = 1 << 3, F_PERIOD = 1 << 4,
	F_EVENT = 1 << 5, F_IP = 1 << 6, F_SYM = 1 << 7, F_DSO = 1 << 8, F_BRSTACK = 1 << 9,
	F_BRSTACKSYM = 1 << 10, F_SYMOFF = 1 << 11, F_BRSTACKINSN = 1 << 12,
	F_BRSTACKDISASM = 1 << 13, F_IBS = 1 << 14, F_ADDR = 1 << 15,
};

static const char *const field_names[] = {"comm", "tid", "pid", "time", "period", "event",
					  "ip", "sym", "dso", "brstack", "brstacksym", "symoff",
					  "brstackinsn", "brstackdisasm", "ibs", "addr"};

static int parse_fields(const char *spec, unsigned *out)
{
	unsigned f = 0;
	const char *p = spec;
	while (*p) {
		size_t n = strcspn(p, ","), i;
		for (i = 0; i < sizeof(field_names) / sizeof(field_names[0]); i++)
			if (strlen(field_names[i]) == n && strncmp(field_names[i], p, n) == 0)
				break;
		if (i == sizeof(field_names) / sizeof(field_names[0])) {
			fprintf(stderr, "pmusim script: unknown field '%.*s' in -F %s\n", (int)n, p, spec);
			return -1;
		}
		f |= 1u << i;
		p += n + (p[n] == ',');
	}
	*out = f;
	return 0;
}

#define COMM_LEN 16 /* TASK_COMM_LEN */

/* The command name of a thread (COMM records; a new task starts with its parent's). */
struct comm {
	uint32_t tid;
	char name[COMM_LEN];
};

struct script {
	struct perfdata *pd;
	unsigned fields;
	int use_callchain;   /* some event has callchains */
	int name_width;      /* of the longest event name */
	uint8_t *is_ibs_op;  /* per event: its PMU is an IBS op PMU */
	uint64_t max_stack;
	struct symbolizer *z; /* each process's mappings and their files' symbols */
	struct proc_code *code; /* each process's code, for brstackinsn */
	struct comm *comms;
	size_t ncomms, capcomms;
};

static struct comm *comm_of(struct script *sc, uint32_t tid, int create)
{
	for (size_t i = 0; i < sc->ncomms; i++)
		if (sc->comms[i].tid == tid)
			return &sc->comms[i];
	struct comm *nc = create ? grow_array(sc->comms, &sc->capcomms, sc->ncomms + 1, sizeof(*nc)) : NULL;
	if (!nc)
		return NULL;
	sc->comms = nc;
	nc = &sc->comms[sc->ncomms++];
	nc->tid = tid;
	snprintf(nc->name, sizeof(nc->name), ":%u", tid); /* perf's name for a task it knows nothing of */
	return nc;
}

static void set_comm(struct script *sc, uint32_t tid, const char *name)
{
	struct comm *c = comm_of(sc, tid, 1);
	if (c)
		snprintf(c->name, sizeof(c->name), "%s", name ? name : "");
}

/* Where addr is in process pid, and its function as perf names it (NULL when unknown). */
static const struct sym *place(struct script *sc, uint32_t pid, uint64_t addr, struct sym_place *p)
{
	symbolizer_place(sc->z, pid, addr, p);
	return p->sym ? symtab_perf_alias(p->st, p->sym) : NULL;
}

static void print_sym(FILE *f, struct script *sc, uint32_t pid, uint64_t addr, int with_offset)
{
	struct sym_place p;
	const struct sym *s = place(sc, pid, addr, &p);
	if (!s)
		fputs("[unknown]", f);
	else if (with_offset)
		fprintf(f, "%s+0x%llx", s->name, (unsigned long long)(addr - s->addr));
	else
		fputs(s->name, f);
}

static const char *br_type_name(uint8_t t)
{
	static const char *const names[] = {"", "COND", "UNCOND", "IND", "CALL", "IND_CALL", "RET"};
	return t < sizeof(names) / sizeof(names[0]) ? names[t] : "";
}

static void print_branches(FILE *f, struct script *sc, const struct perf_sample *s, int sym)
{
	for (uint64_t i = 0; i < s->nbr; i++) {
		const struct perf_branch *b = &s->br[i];
		if (sym) {
			print_sym(f, sc, s->pid, b->from, 1);
			fputc('/', f);
			print_sym(f, sc, s->pid, b->to, 1);
		} else {
			fprintf(f, " 0x%llx/0x%llx", (unsigned long long)b->from, (unsigned long long)b->to);
		}
		fprintf(f, "/%c/-/-/%u/%s ", b->mispred ? 'M' : b->predicted ? 'P' : '-', b->cycles,
			br_type_name(b->type));
	}
}

/* perf's callchain lines: per user address (context markers skipped), a tab,
 * the address relative to its mapping, " sym+0xoff" and " (file)". */
static void print_callchain(FILE *f, struct script *sc, const struct perf_sample *s)
{
	unsigned fl = sc->fields;
	uint64_t n = 0;
	for (uint64_t i = 0; i < s->nchain && n < sc->max_stack; i++) {
		uint64_t a = s->chain[i];
		if (a >= PERF_CONTEXT_MAX)
			continue;
		struct sym_place p;
		place(sc, s->pid, a, &p);
		fprintf(f, "\t%16llx", (unsigned long long)(p.path ? p.file_off : a));
		if (fl & F_SYM) {
			fputc(' ', f);
			print_sym(f, sc, s->pid, a, (fl & F_SYMOFF) != 0);
		}
		if (fl & F_DSO)
			fprintf(f, " (%s)", p.path ? p.path : "[unknown]");
		fputc('\n', f);
		n++;
	}
}

/* brstackinsn's names: the sample's process's functions as perf names them. */
struct sym_ctx {
	struct script *sc;
	uint32_t pid;
};

static const struct sym *sym_of(void *ctx, uint64_t addr)
{
	struct sym_ctx *c = ctx;
	struct sym_place p;
	return place(c->sc, c->pid, addr, &p);
}

/* The ibs field: the op an IBS op sample's payload describes (script_usage). */
static int print_ibs(FILE *f, const struct perf_record *rec, char *msg, size_t msglen)
{
	const struct perf_sample *s = &rec->u.sample;
	struct ibs_op op;
	char why[160];
	if (ibs_op_problem(s->raw, s->raw_size, why, sizeof(why)) || ibs_op_decode(s->raw, s->raw_size, &op))
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                   "perf.data: IBS op sample at %#llx: payload of %u bytes: %s",
		                   (unsigned long long)rec->offset, s->raw_size, why);
	fprintf(f, " ibs: branch=%u", op.branch);
	if (op.branch)
		fprintf(f, " taken=%u mispred=%u return=%u target=%#llx", op.taken, op.mispredicted,
		        op.ret, (unsigned long long)op.br_target);
	else
		fputs(" taken=- mispred=- return=- target=-", f);
	fprintf(f, " load=%u store=%u", op.load, op.store);
	if (op.width)
		fprintf(f, " width=%u", op.width);
	else
		fputs(" width=-", f);
	if (op.addr_valid)
		fprintf(f, " data=%#llx", (unsigned long long)op.data_addr);
	else
		fputs(" data=-", f);
	fprintf(f, " tag_to_ret=%u microcode=%u", op.tag_to_ret, op.microcoded);
	return 0;
}

static int print_sample(FILE *f, struct script *sc, const struct perf_record *rec, char *msg,
			size_t msglen)
{
	const struct perf_sample *s = &rec->u.sample;
	unsigned fl = sc->fields;
	int e = perfdata_event_of_id(sc->pd, s->id);
	const struct perfdata_event *ev = perfdata_event(sc->pd, e < 0 ? 0 : (size_t)e);
	int chain = sc->use_callchain && ev && (ev->sample_type & PERF_SAMPLE_CALLCHAIN) && (fl & F_IP);
	int ibs = (fl & F_IBS) && e >= 0 && sc->is_ibs_op[e];
	if (fl & F_COMM) {
		const struct comm *c = comm_of(sc, s->tid, 1);
		fprintf(f, chain ? "%s " : "%16s ", c ? c->name : "");
	}
	if ((fl & F_PID) && (fl & F_TID))
		fprintf(f, "%5u/%-5u ", s->pid, s->tid);
	else if (fl & (F_PID | F_TID))
		fprintf(f, "%5u ", (fl & F_PID) ? s->pid : s->tid);
	if (fl & F_TIME) {
		char t[48];
		snprintf(t, sizeof(t), "%llu.%06llu", (unsigned long long)(s->time / 1000000000ULL),
			 (unsigned long long)(s->time % 1000000000ULL / 1000));
		fprintf(f, "%12s: ", t);
	}
	if (fl & F_PERIOD)
		fprintf(f, "%10llu ", (unsigned long long)s->period);
	if (fl & F_EVENT)
		fprintf(f, "%*s: ", sc->name_width, ev && ev->name ? ev->name : "unknown");
	if (fl & F_ADDR) /* perf_sample__fprintf_addr: no space after it, the IP's comes before */
		fprintf(f, "%16llx", (unsigned long long)s->addr);
	if (chain) {
		if (ibs && print_ibs(f, rec, msg, msglen) < 0)
			return PMUSIM_ERR_FORMAT;
		fputc('\n', f);
		print_callchain(f, sc, s);
	} else {
		if (fl & F_IP)
			fprintf(f, " %16llx", (unsigned long long)s->ip);
		if (fl & F_SYM) {
			fputc(' ', f);
			print_sym(f, sc, s->pid, s->ip, (fl & F_SYMOFF) != 0);
		}
		if (fl & F_DSO) {
			struct sym_place p;
			place(sc, s->pid, s->ip, &p);
			fprintf(f, " (%s)", p.path ? p.path : "[unknown]");
		}
		if (ibs && print_ibs(f, rec, msg, msglen) < 0)
			return PMUSIM_ERR_FORMAT;
	}
	if (fl & F_BRSTACK)
		print_branches(f, sc, s, 0);
	if (fl & F_BRSTACKSYM)
		print_branches(f, sc, s, 1);
	if (fl & (F_BRSTACKINSN | F_BRSTACKDISASM)) {
		struct sym_ctx c = {sc, s->pid};
		struct brstackinsn_src src = {proc_code_of(sc->code, s->pid), sym_of, &c,
					      (fl & F_BRSTACKDISASM) != 0};
		int err = brstackinsn_print(f, s, &src);
		if (err < 0)
			return err;
	}
	fputc('\n', f);
	return 0;
}

static int parse_args(int argc, char **argv, const char **in, unsigned *fields, uint64_t *max_stack,
		      const char **symfs)
{
	static const struct option opts[] = {{"input", required_argument, 0, 'i'},
					     {"fields", required_argument, 0, 'F'},
					     {"max-stack", required_argument, 0, 'm'},
					     {"symfs", required_argument, 0, 's'},
					     {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	optind = 0; /* a fresh parse (program_parse) */
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "hi:F:", opts, NULL)) != -1) {
		switch (c) {
		case 'i': *in = optarg; break;
		case 'F':
			if (parse_fields(optarg, fields) < 0)
				return -1;
			break;
		case 'm':
			if (option_u64("pmusim script", "--max-stack", optarg, max_stack) < 0)
				return -1;
			break;
		case 's': *symfs = optarg; break;
		case 'h': fputs(script_usage, stdout); return CLI_HELP;
		default:
			cli_unknown_option("pmusim script", argv[optind - 1]);
			return -1;
		}
	}
	if (optind < argc)
		return fprintf(stderr, "pmusim script: unexpected argument '%s'\n", argv[optind]), -1;
	return 0;
}

static int dump(struct script *sc)
{
	struct perf_record rec;
	char msg[256] = "";
	int r;
	while ((r = perfdata_next(sc->pd, &rec, msg, sizeof(msg))) > 0) {
		if (rec.type == PERF_RECORD_SAMPLE) {
			if ((r = print_sample(stdout, sc, &rec, msg, sizeof(msg))) < 0)
				break;
			continue;
		}
		if (rec.type == PERF_RECORD_COMM)
			set_comm(sc, rec.u.comm.tid, rec.u.comm.comm);
		else if (rec.type == PERF_RECORD_FORK) {
			const struct comm *parent = comm_of(sc, rec.u.task.ptid, 0);
			if (parent) {
				char name[COMM_LEN];
				memcpy(name, parent->name, sizeof(name));
				set_comm(sc, rec.u.task.tid, name);
			}
		}
		symbolizer_record(sc->z, &rec); /* mappings, forks, execs */
	}
	if (r < 0)
		fprintf(stderr, "pmusim script: %s\n", msg[0] ? msg : pmusim_strerror(r));
	return r;
}

/* perf's check (builtin-script.c evsel__check_attr): instructions between
 * branch records mean something only when every taken branch is recorded. */
static int all_branches(const struct perfdata *pd)
{
	uint64_t bt = 0;
	for (size_t i = 0; i < perfdata_nevents(pd); i++)
		bt |= perfdata_event(pd, i)->branch_sample_type;
	return (bt & PERF_SAMPLE_BRANCH_ANY) != 0;
}

/* The command's defaults: the fields perf script prints by default, and IBS. */
#define SCRIPT_DEFAULTS                                                                                   \
	{.fields = F_COMM | F_TID | F_TIME | F_PERIOD | F_EVENT | F_IP | F_SYM | F_SYMOFF | F_DSO | F_IBS,   \
	 .max_stack = 127}

int cmd_script_parse(int argc, char **argv)
{
	const char *in = "perf.data", *symfs = NULL;
	struct script sc = SCRIPT_DEFAULTS;
	return parse_args(argc, argv, &in, &sc.fields, &sc.max_stack, &symfs);
}

int cmd_script(int argc, char **argv)
{
	const char *in = "perf.data", *symfs = NULL;
	struct script sc = SCRIPT_DEFAULTS;
	int rc = parse_args(argc, argv, &in, &sc.fields, &sc.max_stack, &symfs);
	if (rc)
		return rc == CLI_HELP ? 0 : EXIT_PMUSIM_ERROR;
	char msg[512] = "";
	int err = perfdata_open(in, &sc.pd, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "pmusim script: %s\n", msg[0] ? msg : pmusim_strerror(err));
		return EXIT_PMUSIM_ERROR;
	}
	if ((sc.fields & (F_BRSTACKINSN | F_BRSTACKDISASM)) && !all_branches(sc.pd)) {
		fprintf(stderr, "pmusim script: %s does not record every taken branch: -F brstackinsn "
				"needs a recording made with -b (or -j any)\n", in);
		perfdata_close(sc.pd);
		return EXIT_PMUSIM_ERROR;
	}
	for (size_t i = 0; (sc.fields & F_ADDR) && i < perfdata_nevents(sc.pd); i++) {
		const struct perfdata_event *ev = perfdata_event(sc.pd, i);
		if (!(ev->sample_type & PERF_SAMPLE_ADDR)) { /* perf's evsel__check_attr line */
			fprintf(stderr, "pmusim script: Samples for '%s' event do not have ADDR attribute set. "
					"Cannot print 'addr' field.\n", ev->name ? ev->name : "unknown");
			perfdata_close(sc.pd);
			return EXIT_PMUSIM_ERROR;
		}
	}
	sc.is_ibs_op = calloc(perfdata_nevents(sc.pd), 1);
	for (size_t i = 0; sc.is_ibs_op && i < perfdata_nevents(sc.pd); i++) {
		const struct perfdata_event *ev = perfdata_event(sc.pd, i);
		/* perf's test (amd-sample-raw.c evlist__has_amd_ibs): the PMU's name starts so;
		 * without PERF_SAMPLE_RAW the samples carry no registers to print */
		sc.is_ibs_op[i] = ev->pmu && strncmp(ev->pmu, IBS_OP_PMU_NAME, strlen(IBS_OP_PMU_NAME)) == 0 &&
				  (ev->sample_type & PERF_SAMPLE_RAW);
		int w = (int)strlen(ev->name ? ev->name : "unknown");
		sc.name_width = w > sc.name_width ? w : sc.name_width;
		sc.use_callchain |= (ev->sample_type & PERF_SAMPLE_CALLCHAIN) != 0;
	}
	err = PMUSIM_ERR_NOMEM;
	if (sc.is_ibs_op && (sc.z = symbolizer_new()) && symbolizer_set_symfs(sc.z, symfs) == 0 &&
	    (sc.code = proc_code_new(sc.z)))
		err = dump(&sc);
	fflush(stdout);
	proc_code_free(sc.code);
	symbolizer_free(sc.z);
	free(sc.comms);
	free(sc.is_ibs_op);
	perfdata_close(sc.pd);
	return err < 0 ? EXIT_PMUSIM_ERROR : 0;
}
