/* pmusim script: prints the samples of a perf.data file (pmusim's or real
 * perf's) as `perf script` does, for users without perf. Field layout follows
 * perf 6.1's builtin-script.c output: " %16lx" IPs, branch entries
 * "0xFROM/0xTO/M|P|-/X|-/A|-/CYCLES/TYPE". */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/elf_bias.h"
#include "cli/cli.h"
#include "common/err.h"
#include "common/symtab.h"
#include "profiler/binary.h"
#include "profiler/perfdata.h"

static const char script_usage[] =
	"usage: pmusim script [-i FILE] [-F FIELD,...]\n"
	"\n"
	"Prints the samples of a perf.data file as text, one line per sample.\n"
	"\n"
	"options:\n"
	"  -i, --input FILE   perf.data to read (default ./perf.data)\n"
	"  -F, --fields LIST  comm, tid, pid, time, period, event, ip, sym, symoff, dso,\n"
	"                     brstack, brstacksym (default: comm,tid,time,period,event,ip,\n"
	"                     sym,symoff,dso)\n"
	"  -h, --help         this text\n"
	"\n"
	"exit status: 0; 2 when the file is missing, not perf.data, or corrupt.\n";

enum {
	F_COMM = 1 << 0, F_TID = 1 << 1, F_PID = 1 << 2, F_TIME = 1 << 3, F_PERIOD = 1 << 4,
	F_EVENT = 1 << 5, F_IP = 1 << 6, F_SYM = 1 << 7, F_DSO = 1 << 8, F_BRSTACK = 1 << 9,
	F_BRSTACKSYM = 1 << 10, F_SYMOFF = 1 << 11,
};

static const char *const field_names[] = {"comm", "tid", "pid", "time", "period", "event",
					  "ip", "sym", "dso", "brstack", "brstacksym", "symoff"};

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

/* One executable mapping seen in the file, with the symbols of its file. */
struct map {
	uint32_t pid;
	uint64_t addr, len;
	char *path;
	struct symtab *syms;
};

struct script {
	struct perfdata *pd;
	unsigned fields;
	struct map *maps;
	size_t nmaps;
	char comm[64];
};

static void add_map(struct script *sc, const struct perf_record *rec)
{
	struct map *m = realloc(sc->maps, (sc->nmaps + 1) * sizeof(*m));
	if (!m)
		return;
	sc->maps = m;
	m = &sc->maps[sc->nmaps++];
	m->pid = rec->u.mmap.pid;
	m->addr = rec->u.mmap.addr;
	m->len = rec->u.mmap.len;
	m->path = strdup(rec->u.mmap.filename ? rec->u.mmap.filename : "");
	m->syms = NULL;
	uint64_t bias = elf_mapping_bias(m->path, m->addr, rec->u.mmap.pgoff);
	if (!m->path || symtab_load(m->path, bias, &m->syms) < 0)
		m->syms = NULL;
}

static const struct map *find_map(const struct script *sc, uint64_t addr)
{
	for (size_t i = sc->nmaps; i-- > 0;)
		if (addr >= sc->maps[i].addr && addr - sc->maps[i].addr < sc->maps[i].len)
			return &sc->maps[i];
	return NULL;
}

static void print_sym(FILE *f, const struct script *sc, uint64_t addr, int with_offset)
{
	const struct map *m = find_map(sc, addr);
	const struct sym *s = m && m->syms ? symtab_perf_alias(m->syms, symtab_lookup(m->syms, addr)) : NULL;
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

static void print_branches(FILE *f, const struct script *sc, const struct perf_sample *s, int sym)
{
	for (uint64_t i = 0; i < s->nbr; i++) {
		const struct perf_branch *b = &s->br[i];
		if (sym) {
			print_sym(f, sc, b->from, 1);
			fputc('/', f);
			print_sym(f, sc, b->to, 1);
		} else {
			fprintf(f, " 0x%llx/0x%llx", (unsigned long long)b->from, (unsigned long long)b->to);
		}
		fprintf(f, "/%c/-/-/%u/%s ", b->mispred ? 'M' : b->predicted ? 'P' : '-', b->cycles,
			br_type_name(b->type));
	}
}

static void print_sample(FILE *f, const struct script *sc, const struct perf_record *rec)
{
	const struct perf_sample *s = &rec->u.sample;
	unsigned fl = sc->fields;
	if (fl & F_COMM)
		fprintf(f, "%16s", sc->comm);
	if ((fl & F_PID) && (fl & F_TID))
		fprintf(f, " %5u/%-5u", s->pid, s->tid);
	else if (fl & (F_PID | F_TID))
		fprintf(f, " %5u", (fl & F_PID) ? s->pid : s->tid);
	if (fl & F_TIME)
		fprintf(f, " %5llu.%06llu:", (unsigned long long)(s->time / 1000000000ULL),
			(unsigned long long)(s->time % 1000000000ULL / 1000));
	if (fl & F_PERIOD)
		fprintf(f, " %10llu", (unsigned long long)s->period);
	if (fl & F_EVENT) {
		int e = perfdata_event_of_id(sc->pd, s->id);
		const struct perfdata_event *ev = perfdata_event(sc->pd, e < 0 ? 0 : (size_t)e);
		fprintf(f, " %s: ", ev && ev->name ? ev->name : "unknown");
	}
	if (fl & F_IP)
		fprintf(f, " %16llx", (unsigned long long)s->ip);
	if (fl & F_SYM) {
		fputc(' ', f);
		print_sym(f, sc, s->ip, (fl & F_SYMOFF) != 0);
	}
	if (fl & F_DSO) {
		const struct map *m = find_map(sc, s->ip);
		fprintf(f, " (%s)", m ? m->path : "[unknown]");
	}
	if (fl & F_BRSTACK)
		print_branches(f, sc, s, 0);
	if (fl & F_BRSTACKSYM)
		print_branches(f, sc, s, 1);
	fputc('\n', f);
}

static int parse_args(int argc, char **argv, const char **in, unsigned *fields)
{
	static const struct option opts[] = {{"input", required_argument, 0, 'i'},
					     {"fields", required_argument, 0, 'F'},
					     {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
	optind = 1;
	opterr = 0;
	int c;
	while ((c = getopt_long(argc, argv, "hi:F:", opts, NULL)) != -1) {
		switch (c) {
		case 'i': *in = optarg; break;
		case 'F':
			if (parse_fields(optarg, fields) < 0)
				return -1;
			break;
		case 'h': fputs(script_usage, stdout); exit(0);
		default:
			fprintf(stderr, "pmusim script: unknown or incomplete option '%s' (see pmusim script --help)\n",
				argv[optind - 1]);
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
		if (rec.type == PERF_RECORD_COMM)
			snprintf(sc->comm, sizeof(sc->comm), "%s", rec.u.comm.comm ? rec.u.comm.comm : "");
		else if ((rec.type == PERF_RECORD_MMAP || rec.type == PERF_RECORD_MMAP2) &&
			 (rec.type == PERF_RECORD_MMAP || (rec.u.mmap.prot & 4 /* PROT_EXEC */)))
			add_map(sc, &rec);
		else if (rec.type == PERF_RECORD_SAMPLE)
			print_sample(stdout, sc, &rec);
	}
	if (r < 0)
		fprintf(stderr, "pmusim script: %s\n", msg[0] ? msg : pmusim_strerror(r));
	return r;
}

int cmd_script(int argc, char **argv)
{
	const char *in = "perf.data";
	struct script sc = {.fields = F_COMM | F_TID | F_TIME | F_PERIOD | F_EVENT | F_IP | F_SYM | F_SYMOFF | F_DSO};
	if (parse_args(argc, argv, &in, &sc.fields) < 0)
		return EXIT_PMUSIM_ERROR;
	char msg[512] = "";
	int err = perfdata_open(in, &sc.pd, msg, sizeof(msg));
	if (err < 0) {
		fprintf(stderr, "pmusim script: %s\n", msg[0] ? msg : pmusim_strerror(err));
		return EXIT_PMUSIM_ERROR;
	}
	err = dump(&sc);
	fflush(stdout);
	for (size_t i = 0; i < sc.nmaps; i++) {
		symtab_free(sc.maps[i].syms);
		free(sc.maps[i].path);
	}
	free(sc.maps);
	perfdata_close(sc.pd);
	return err < 0 ? EXIT_PMUSIM_ERROR : 0;
}
