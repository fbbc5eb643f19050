/* pmusim record --tstack: the tracing application (see record_tstack.h). */
#include "cli/record_tstack.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/number.h"
#include "common/symtab.h"

#define MAX_THREADS 512

int tstack_parse_period(const char *opt, const char *arg, uint64_t *ns)
{
	char *end;
	double v = strtod(arg, &end);
	double unit = 1e6; /* milliseconds without a suffix */
	if (strcmp(end, "ns") == 0)
		unit = 1;
	else if (strcmp(end, "us") == 0)
		unit = 1e3;
	else if (strcmp(end, "ms") == 0 || *end == 0)
		unit = 1e6;
	else if (strcmp(end, "s") == 0)
		unit = 1e9;
	else
		unit = -1;
	if (end == arg || unit < 0 || !(v * unit >= 1) || v * unit > 1e15) {
		fprintf(stderr, "pmusim record: %s needs a time such as 10ms, 250us, 5000ns or 0.5 "
				"(ms), not '%s'\n", opt, arg);
		return -1;
	}
	*ns = (uint64_t)(v * unit + 0.5);
	return 0;
}

int tstack_parse_threads(const char *arg, int *which)
{
	static const char *const names[] = {"running", "all", "suspended"};
	for (int i = 0; i < 3; i++)
		if (strcmp(arg, names[i]) == 0)
			return *which = i, 0;
	fprintf(stderr, "pmusim record: --tstack-threads needs running, all or suspended, not '%s'\n", arg);
	return -1;
}

int tstack_parse_mode(const char *arg, enum tstack_mode *mode)
{
	if (strcmp(arg, "stack") == 0)
		return *mode = TSTACK_STACK, 0;
	if (strcmp(arg, "history") == 0)
		return *mode = TSTACK_HISTORY, 0;
	fprintf(stderr, "pmusim record: --tstack-mode needs stack or history, not '%s'\n", arg);
	return -1;
}

static uint64_t u64_at(const uint8_t *p)
{
	uint64_t v;
	memcpy(&v, p, 8); /* x86-64 guest memory: little-endian */
	return v;
}

/* Copies thread tid's work area out of guest memory: top entries at start. */
static int copy_area(struct tstack_recording *tr, uint32_t tid, const struct tstack_area *a,
		     struct tstack_entry **out)
{
	size_t bytes = (size_t)a->top * TSTACK_ENTRY_SIZE;
	uint8_t *nb = grow_array(tr->buf, &tr->capbuf, bytes + 1, 1);
	if (!nb)
		return PMUSIM_ERR_NOMEM;
	tr->buf = nb;
	int err = bytes ? sim_read_memory(tr->sim, tid, a->start, tr->buf, bytes) : 0;
	if (err < 0)
		return err;
	/* decode in place into entries of the same size */
	struct tstack_entry *e = (struct tstack_entry *)(void *)tr->buf;
	for (size_t i = 0; i < a->top; i++) {
		const uint8_t *p = tr->buf + i * TSTACK_ENTRY_SIZE;
		struct tstack_entry v = {u64_at(p), u64_at(p + 8), u64_at(p + 16), u64_at(p + 24)};
		e[i] = v;
	}
	*out = e;
	return 0;
}

/* History mode: the thread's records since the last wake-up, applied to the
 * stack the tracer keeps for it; the area is emptied (its top register reset). */
static int replay(struct tstack_recording *tr, uint32_t tid, const struct tstack_area *a,
		  struct tstack_area **stack)
{
	struct tstack_area *r = NULL;
	for (size_t i = 0; i < tr->nreplay; i++)
		if (tr->replay[i].tid == tid)
			r = &tr->replay[i];
	if (!r) {
		struct tstack_area *nr = grow_array(tr->replay, &tr->capreplay, tr->nreplay + 1, sizeof(*nr));
		if (!nr)
			return PMUSIM_ERR_NOMEM;
		tr->replay = nr;
		r = &nr[tr->nreplay++];
		*r = (struct tstack_area){.tid = tid};
	}
	struct tstack_entry *rec;
	int err = copy_area(tr, tid, a, &rec);
	if (err < 0 || (err = tstack_replay(r, rec, a->top)) < 0)
		return err;
	tstack_thread_reset(tr->unit, tid); /* drained: the top register back to 0 */
	*stack = r;
	return 0;
}

int tstack_dump_stack(struct tstack_recording *tr, uint32_t tid, uint64_t ip, uint64_t at, uint32_t size,
		      struct perf_sample *s, uint64_t *regs)
{
	uint64_t all[24];
	int err = sim_thread_user_regs(tr->sim, tid, all);
	if (err < 0)
		return err;
	all[8] = ip;
	all[7] -= (uint64_t)sim_dbr_sp_off(tr->sim, at);
	size_t k = 0;
	for (int i = 0; i < 24; i++)
		if (TSTACK_REGS_MASK >> i & 1)
			regs[k++] = all[i];
	if (size > tr->capstack) {
		uint8_t *nb = realloc(tr->stack, size);
		if (!nb)
			return PMUSIM_ERR_NOMEM;
		tr->stack = nb;
		tr->capstack = size;
	}
	uint64_t sp = all[7], got = 0;
	while (got < size) {
		uint64_t page_end = ((sp + got) | 4095) + 1, n = page_end - (sp + got);
		if (n > size - got)
			n = size - got;
		if (sim_read_memory(tr->sim, tid, sp + got, tr->stack + got, n) < 0)
			break; /* the end of the stack's mapping */
		got += n;
	}
	s->regs_abi = PERF_SAMPLE_REGS_ABI_64;
	s->regs = regs;
	s->stack_size = size;
	s->stack = tr->stack;
	s->stack_dyn = got;
	s->nchain = 0;
	return 0;
}

/* An entry's return address. A signal frame's is where the interrupted code
 * goes on: the saved RIP in the frame the OS built, at the entry's RSP field,
 * which the handler may have changed since (a SIGILL handler skipping the
 * instruction); the OS's tracer reads it there, as perf's unwinder does. */
static uint64_t frame_return(struct tstack_recording *tr, uint32_t tid, const struct tstack_entry *e)
{
	uint8_t b[8];
	if ((e->stamp & TSTACK_SIGNAL_BIT) && e->sp && sim_read_memory(tr->sim, tid, e->sp, b, 8) == 0) {
		/* a rewritten run interrupted in replacement code: the program's instruction */
		uint64_t at = sim_dbr_resolve(tr->sim, u64_at(b));
		return at ? at : u64_at(b);
	}
	return e->ret;
}

int tstack_recording_chain(struct tstack_recording *tr, uint32_t tid, uint64_t ip, size_t *n_out)
{
	const struct tstack_area *a = tstack_area(tr->unit, tid);
	struct tstack_entry *e = NULL;
	uint64_t n = 0;
	int err = 0;
	if (a && tr->opt.mode == TSTACK_HISTORY) {
		struct tstack_area *st;
		if ((err = replay(tr, tid, a, &st)) < 0)
			return err;
		e = st->mem, n = st->top;
	} else if (a) {
		if ((err = copy_area(tr, tid, a, &e)) < 0)
			return err;
		n = a->top;
	}
	uint64_t *nc = grow_array(tr->chain, &tr->capchain, (size_t)n + 2, sizeof(*nc));
	if (!nc)
		return PMUSIM_ERR_NOMEM;
	tr->chain = nc;
	size_t k = 0;
	tr->chain[k++] = PERF_CONTEXT_USER;
	tr->chain[k++] = ip;
	for (uint64_t i = n; i > 0 && k < PERFDATA_MAX_CHAIN; i--)
		if (e[i - 1].ret) /* frames a "call" marker entered have no return address */
			tr->chain[k++] = frame_return(tr, tid, &e[i - 1]);
	*n_out = k;
	return 0;
}

int tstack_recording_truth(struct tstack_recording *tr, uint32_t tid, uint32_t pid, uint64_t ip)
{
	size_t got; /* the truth's own reading, in the chain's memory (written already) */
	uint64_t *nc = grow_array(tr->chain, &tr->capchain, 2 + (1u << 16), sizeof(*nc));
	if (!nc)
		return PMUSIM_ERR_NOMEM;
	tr->chain = nc;
	uint64_t *rets = tr->chain + 2;
	int err = sim_true_stack(tr->sim, tid, rets, 1u << 16, &got);
	return err < 0 ? err : truth_add_stack(tr->truth, tid, pid, ip, rets, got);
}

/* at: where the thread stands (a rewritten run's raw address) */
static int snapshot_thread(struct tstack_recording *tr, const struct sim_thread_info *ti, uint64_t at,
			   uint64_t now)
{
	uint64_t ip = sim_dbr_where(tr->sim, at);
	size_t k;
	int err = tstack_recording_chain(tr, ti->tid, ip, &k);
	if (err < 0)
		return err;
	struct perf_sample s = {
		.id = tr->id, .ip = ip, .time = now, .period = tr->opt.period_ns, .pid = ti->pid,
		.tid = ti->tid, .misc = PERF_RECORD_MISC_USER, .nchain = k, .chain = tr->chain,
	};
	uint64_t regs[24];
	if (tr->opt.dwarf_stack && (err = tstack_dump_stack(tr, ti->tid, ip, at, tr->opt.dwarf_stack, &s, regs)) < 0)
		return err;
	if (tr->w && (err = perfdata_write_sample(tr->w, &s)) < 0)
		return err;
	tr->snapshots++;
	tr->frames += k - 2;
	return tr->truth ? tstack_recording_truth(tr, ti->tid, ti->pid, ip) : 0;
}

static void set_next_cycle(struct tstack_recording *tr)
{
	/* now_ns >= next_ns  <=>  cycles * 1000 >= next_ns * mhz */
	uint64_t m = tr->clock_mhz;
	tr->next_cycle = m ? (tr->next_ns * m + 999) / 1000 : 0;
}

/* The handler: once per period of simulated time, a snapshot of every thread
 * of interest (the block just retired belongs to the running one). */
static void tracer_retire(void *ctx, const struct retired_block *rb)
{
	struct tstack_recording *tr = ctx;
	tr->insns += rb->ninsns;
	if (!tr->started) {
		if (tr->insns < tr->opt.start)
			return;
		/* the control bit: from the next block on */
		tstack_enable(tr->unit, 1);
		sim_true_stacks_start(tr->sim);
		tr->started = 1;
	}
	uint64_t now = tr->now_ns(tr->ctx);
	if (now < tr->next_ns || tr->err)
		return;
	while (tr->next_ns <= now)
		tr->next_ns += tr->opt.period_ns;
	set_next_cycle(tr);
	struct sim_thread_info ti[MAX_THREADS];
	size_t n = sim_threads(tr->sim, ti, MAX_THREADS);
	for (size_t i = 0; i < n && !tr->err; i++) {
		int running = ti[i].tid == rb->tid;
		if ((tr->opt.threads == TSTACK_RUNNING && !running) || (tr->opt.threads == TSTACK_SUSPENDED && running))
			continue;
		tr->err = snapshot_thread(tr, &ti[i], running ? rb->next : ti[i].pc, now);
	}
}

/* tracer_retire for a whole block: nothing to do until the next snapshot's cycle
 * (the count of instructions matters only before the control bit is set). */
static void tracer_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
			 unsigned flags)
{
	struct tstack_recording *tr = ctx;
	if (tr->started && tr->clock && (tr->err || pmu_cycles(tr->clock) < tr->next_cycle))
		return;
	struct retired_block rb;
	retired_block_whole(&rb, bi, next, sp, tid, flags);
	tracer_retire(tr, &rb);
}

/* "call:WHERE" or "return:WHERE", WHERE an address or a function of the program. */
static int add_mark(struct tstack_recording *tr, const char *spec, const struct symtab *st)
{
	const char *colon = strchr(spec, ':');
	enum tstack_marker kind;
	if (colon && colon - spec == 4 && strncmp(spec, "call", 4) == 0)
		kind = TSTACK_MARK_CALL;
	else if (colon && colon - spec == 6 && strncmp(spec, "return", 6) == 0)
		kind = TSTACK_MARK_RETURN;
	else
		return fprintf(stderr, "pmusim record: --tstack-mark needs call:WHERE or return:WHERE, not '%s'\n",
			       spec), -1;
	const char *where = colon + 1;
	uint64_t addr;
	if (number_parse(where, &addr) != NUMBER_OK) {
		/* SYM or SYM+OFF (an address or offset: 0x hex or decimal) */
		const char *plus = strrchr(where, '+');
		size_t len = plus ? (size_t)(plus - where) : strlen(where);
		uint64_t off = 0;
		int ns = plus ? number_parse(plus + 1, &off) : NUMBER_OK;
		if (ns != NUMBER_OK)
			return fprintf(stderr, "pmusim record: --tstack-mark: the offset '%s' in '%s' %s\n", plus + 1,
				       where, number_strerror(ns)), -1;
		addr = 0;
		for (size_t i = 0; st && i < symtab_count(st) && !addr; i++)
			if (strlen(symtab_at(st, i)->name) == len && strncmp(symtab_at(st, i)->name, where, len) == 0)
				addr = symtab_at(st, i)->addr + off;
		if (!addr)
			return fprintf(stderr, "pmusim record: --tstack-mark: no function '%.*s' in the program\n",
				       (int)len, where), -1;
	}
	if (sim_tstack_mark(tr->sim, addr, kind) < 0)
		return fprintf(stderr, "pmusim record: cannot mark 0x%llx for the thread-stack unit\n",
			       (unsigned long long)addr), -1;
	return 0;
}

int tstack_recording_init(struct tstack_recording *tr, struct sim *sim, struct truth *truth)
{
	struct tstack_config cfg = {tr->opt.mode, tr->opt.area_entries, tr->opt.start == 0};
	tr->sim = sim;
	tr->truth = truth;
	tr->next_ns = tr->opt.period_ns;
	set_next_cycle(tr);
	tr->started = tr->opt.start == 0; /* on from the first instruction */
	if (truth && sim_track_true_stacks(sim) < 0)
		return fprintf(stderr, "pmusim record: out of memory\n"), -1;
	if (sim_tstack_new(sim, &cfg, &tr->unit) < 0)
		return fprintf(stderr, "pmusim record: cannot set up the thread-stack unit\n"), -1;
	const struct symtab *st = sim_symtab(sim);
	for (size_t i = 0; st && i < symtab_count(st); i++)
		if (tstack_add_function(tr->unit, symtab_at(st, i)->addr) < 0)
			return fprintf(stderr, "pmusim record: out of memory\n"), -1;
	for (size_t i = 0; i < tr->opt.nmarks; i++)
		if (add_mark(tr, tr->opt.marks[i], st) < 0)
			return -1;
	return 0;
}

int tstack_recording_trace(struct tstack_recording *tr)
{
	/* the machine's blocks, after the unit (in a rewritten run, the map before
	 * them: sim/dbr.h dbr_track_sp) */
	struct block_sink k = {.retire = tracer_retire, .ctx = tr, .whole = tracer_whole};
	if (sim_add_sink(tr->sim, k) < 0)
		return fprintf(stderr, "pmusim record: too many block consumers\n"), -1;
	return 0;
}

void tstack_recording_add_functions(struct tstack_recording *tr, const char *path, uint64_t bias)
{
	/* every fork maps the same files again: each placement once */
	for (size_t i = 0; i < tr->nplaced; i++)
		if (tr->placed[i].bias == bias && strcmp(tr->placed[i].path, path) == 0)
			return;
	struct placed *np = grow_array(tr->placed, &tr->capplaced, tr->nplaced + 1, sizeof(*np));
	if (!np || !(np[tr->nplaced].path = strdup(path)))
		return;
	tr->placed = np;
	tr->placed[tr->nplaced++].bias = bias;
	struct symtab *st;
	if (!tr->unit || symtab_load(path, bias, &st) < 0)
		return;
	for (size_t i = 0; i < symtab_count(st); i++)
		tstack_add_function(tr->unit, symtab_at(st, i)->addr);
	symtab_free(st);
}

void tstack_recording_free(struct tstack_recording *tr)
{
	for (size_t i = 0; i < tr->nreplay; i++)
		free(tr->replay[i].mem);
	free(tr->replay);
	free(tr->chain);
	free(tr->buf);
	free(tr->stack);
	for (size_t i = 0; i < tr->nplaced; i++)
		free(tr->placed[i].path);
	free(tr->placed);
	tr->unit = NULL; /* the machine's */
}
