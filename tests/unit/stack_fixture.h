/* Test helper for the stack profile (check_stacks, check_stacks_e2e): a small C
 * program compiled here with gcc, whose functions main, mid, rec, leaf and
 * other have addresses and sizes read with nm (not with pmusim's code), its
 * executable PT_LOAD read from the program headers (<elf.h>), and perf.data
 * files written by hand with the project's writer, one sample per call stack
 * given as text: "main;mid;rec;leaf" (outermost first). A frame "@0x10" is
 * that raw address. The callchain is perf's (perf_event.h): PERF_CONTEXT_USER,
 * the ip (1 byte into the innermost function), then one return address per
 * caller, innermost first: the caller's last byte + 1 (SF_RET_END: only the
 * call site r - 1 lies in the caller) or 4 bytes into it (SF_RET_MID). */
#ifndef PMUSIM_TESTS_UNIT_STACK_FIXTURE_H
#define PMUSIM_TESTS_UNIT_STACK_FIXTURE_H

#include <elf.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/perfdata.h"

#define SF_PID 100
#define SF_MAX_CHAIN 64
enum { SF_RET_END, SF_RET_MID };

struct sf_fn {
	const char *name;
	uint64_t addr, size; /* run-time address: nm's value + the program's bias */
};

struct sf_prog {
	char path[PATH_MAX + 64];
	uint64_t bias;
	struct sf_fn fn[5];
	uint64_t map_addr, map_len, map_pgoff; /* the executable segment as mapped */
};

/* With an argument N the loop runs N rounds (for real perf record). */
static const char sf_source[] =
    "#include <stdlib.h>\n"
    "__attribute__((noinline)) int leaf(int x) { __asm__ volatile(\"\"); return x * 3 + 1; }\n"
    "__attribute__((noinline)) int rec(int n) { return n > 0 ? rec(n - 1) + leaf(n) : leaf(0); }\n"
    "__attribute__((noinline)) int mid(int n) { return rec(n) + 1; }\n"
    "__attribute__((noinline)) int other(int n) { return leaf(n) - 1; }\n"
    "int main(int argc, char **argv)\n"
    "{\n"
    "	long iters = argc > 1 ? atol(argv[1]) : 0, s = 0;\n"
    "	for (long i = 0; i < iters; i++)\n"
    "		s += mid(20 + (int)(i & 7)) + other((int)i);\n"
    "	return (int)(s & 1) + (mid(argc) + other(argc) == 0);\n"
    "}\n";

static const struct sf_fn *sf_fn(const struct sf_prog *p, const char *name)
{
	for (int i = 0; i < 5; i++)
		if (strcmp(p->fn[i].name, name) == 0)
			return &p->fn[i];
	return NULL;
}

/* The executable PT_LOAD of path placed at bias, as an MMAP2 record maps it. */
static int sf_exec_segment(struct sf_prog *p)
{
	FILE *f = fopen(p->path, "rb");
	Elf64_Ehdr eh;
	int ok =
	    f && fread(&eh, sizeof(eh), 1, f) == 1 && fseek(f, (long)eh.e_phoff, SEEK_SET) == 0;
	for (int i = 0; ok && i < eh.e_phnum; i++) {
		Elf64_Phdr ph;
		if (fread(&ph, sizeof(ph), 1, f) != 1)
			break;
		if (ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			p->map_addr = (ph.p_vaddr & ~0xfffull) + p->bias;
			p->map_pgoff = ph.p_offset & ~0xfffull;
			p->map_len = ((ph.p_vaddr + ph.p_memsz + 0xfff) & ~0xfffull) -
			             (ph.p_vaddr & ~0xfffull);
			fclose(f);
			return 0;
		}
	}
	if (f)
		fclose(f);
	return -1;
}

/* Compiles the program into dir/name (pie: -fPIE -pie, placed at bias) and reads
 * its functions; 0 or -1. */
static int sf_build(struct sf_prog *p, const char *dir, const char *name, int pie, uint64_t bias)
{
	static const char *const names[5] = {"main", "mid", "rec", "leaf", "other"};
	char src[PATH_MAX + 72], cmd[3 * PATH_MAX + 512];
	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s/%s", dir, name);
	snprintf(src, sizeof(src), "%s.c", p->path);
	FILE *f = fopen(src, "w");
	if (!f || fputs(sf_source, f) < 0 || fclose(f) != 0)
		return -1;
	snprintf(cmd, sizeof(cmd),
	         "gcc -O1 -fno-omit-frame-pointer -fno-optimize-sibling-calls %s -o %s %s",
	         pie ? "-fPIE -pie" : "-fno-pie -no-pie", p->path, src);
	if (system(cmd) != 0)
		return -1;
	p->bias = pie ? bias : 0;
	snprintf(cmd, sizeof(cmd), "nm -S -P --defined-only %s", p->path);
	FILE *nm = popen(cmd, "r");
	char line[512];
	while (nm && fgets(line, sizeof(line), nm)) {
		char sym[256], type;
		unsigned long long a, sz;
		if (sscanf(line, "%255s %c %llx %llx", sym, &type, &a, &sz) != 4)
			continue;
		for (int i = 0; i < 5; i++)
			if (strcmp(sym, names[i]) == 0)
				p->fn[i] = (struct sf_fn){names[i], a + p->bias, sz};
	}
	if (!nm || pclose(nm) != 0)
		return -1;
	for (int i = 0; i < 5; i++)
		if (!p->fn[i].name || !p->fn[i].size)
			return -1;
	return sf_exec_segment(p);
}

/* The callchain of a stack text into chain (at most SF_MAX_CHAIN); its length.
 * kernel: two kernel addresses under PERF_CONTEXT_KERNEL first, as perf
 * records a sample taken in the kernel. */
static size_t sf_chain(const struct sf_prog *p, const char *stack, int ret, int kernel,
                       uint64_t *chain)
{
	const char *name[SF_MAX_CHAIN];
	size_t n = 0, k = 0;
	char buf[1024];
	snprintf(buf, sizeof(buf), "%s", stack);
	for (char *save, *t = strtok_r(buf, ";", &save); t && n < SF_MAX_CHAIN - 4;
	     t = strtok_r(NULL, ";", &save))
		name[n++] = t;
	if (kernel) {
		chain[k++] = (uint64_t)-128; /* PERF_CONTEXT_KERNEL */
		chain[k++] = 0xffffffff81000010ull;
		chain[k++] = 0xffffffff81000020ull;
	}
	chain[k++] = PERF_CONTEXT_USER;
	for (size_t i = n; i-- > 0;) { /* innermost first: the ip, then return addresses */
		const struct sf_fn *f = name[i][0] == '@' ? NULL : sf_fn(p, name[i]);
		if (!f)
			chain[k++] = strtoull(name[i] + 1, NULL, 16);
		else if (i + 1 == n)
			chain[k++] = f->addr + 1;
		else
			chain[k++] = ret == SF_RET_END ? f->addr + f->size : f->addr + 4;
	}
	return k;
}

/* The usual event: pmusim_tstack with IP, TID, TIME, CALLCHAIN and PERIOD. */
static struct perfdata_event sf_event(const char *name, uint64_t id, int callchain)
{
	return (struct perfdata_event){.name = name,
	                               .type = PERF_TYPE_RAW,
	                               .config = 0x6b747374,
	                               .sample_period = 10,
	                               .sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
	                                              PERF_SAMPLE_TIME | PERF_SAMPLE_PERIOD |
	                                              PERF_SAMPLE_IDENTIFIER |
	                                              (callchain ? PERF_SAMPLE_CALLCHAIN : 0),
	                               .id = id};
}

/* Opens path with the events, a COMM (comm, when not NULL) and the MMAP2 of
 * the program for SF_PID; NULL on failure. */
static struct perfdata_writer *sf_open(const char *path, const struct sf_prog *p,
                                       const struct perfdata_event *ev, size_t nev,
                                       const char *comm)
{
	struct perfdata_writer *w;
	char msg[256];
	if (perfdata_writer_open(&w, path, ev, nev, NULL, msg, sizeof(msg)) < 0)
		return NULL;
	if ((comm && perfdata_write_comm(w, SF_PID, SF_PID, comm, 1) < 0) ||
	    perfdata_write_mmap2(w, SF_PID, SF_PID, p->map_addr, p->map_len, p->map_pgoff, 5, 2,
	                         p->path, 2) < 0) {
		perfdata_writer_abort(w);
		return NULL;
	}
	return w;
}

/* The time of the next sample sf_put writes (one more each): other records written
 * between samples take theirs from here, so that file order and time order agree. */
static uint64_t sf_time = 100;

/* One sample of event id with the stack's callchain; 0 or a negative pmusim_err. */
static int sf_put(struct perfdata_writer *w, const struct sf_prog *p, uint64_t id, uint32_t pid,
                  uint32_t tid, uint64_t period, const char *stack, int ret, int kernel)
{
	uint64_t chain[SF_MAX_CHAIN];
	struct perf_sample s = {.id = id,
	                        .time = sf_time++,
	                        .pid = pid,
	                        .tid = tid,
	                        .period = period,
	                        .misc = PERF_RECORD_MISC_USER};
	s.nchain = stack ? sf_chain(p, stack, ret, kernel, chain) : 0;
	s.chain = chain;
	s.ip = s.nchain > 1 ? chain[1] : 0x1234; /* the kernel's or the user's ip */
	return perfdata_write_sample(w, &s);
}

#endif
