/* Test helper for the op sampler's suites (check_pmu_op.c,
 * check_pmu_op_cycles.c): a hand-made code layout, a retired-block stream
 * over it, and the test's own walk of that stream, made while the stream is
 * generated and before any PMU sees it: every retired instruction's number
 * (1-based), address and thread, and the quarter cycle at which it retires,
 * summed from a cost table this file chooses (opf_cost) for a model without a
 * misprediction penalty or a taken-branch bubble, so that no figure depends on
 * the branch predictor. Nothing here calls the op sampler; the suites compare
 * what the PMU hands out (samples, pmu_op_next_min) against the walk. */
#ifndef PMUSIM_TESTS_UNIT_OP_FIXTURE_H
#define PMUSIM_TESTS_UNIT_OP_FIXTURE_H

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "pmu_model/pmu.h"

#define OPF_NRUNS 48
#define OPF_MAXI 40
#define OPF_BASE 0x400000ULL

/* A check inside a loop over every instruction or sample: Check's passing
 * assertions each write a progress record to the runner (millions here), so
 * only a failure reaches it. */
#define OPF_CHECK(cond, ...)                                                                       \
	do {                                                                                       \
		if (!(cond))                                                                       \
			ck_abort_msg(__VA_ARGS__);                                                 \
	} while (0)

/* Quarter cycles per class, chosen here: some classes
 * add no whole cycle at most phases (ALU, NOP), DIV is the costliest (97 q: 25
 * whole cycles when it starts 3 quarters into a cycle), several are not
 * multiples of 4 so that whole cycles per instruction vary with the phase. */
static const uint16_t opf_cost[IC_COUNT] = {
	[IC_ALU] = 1,    [IC_MUL] = 3,   [IC_DIV] = 97,     [IC_LOAD] = 2,
	[IC_STORE] = 5,  [IC_BRANCH] = 2, [IC_STRING] = 6,  [IC_SIMD] = 3,
	[IC_SYSCALL] = 41, [IC_NOP] = 1, [IC_OTHER] = 13,
};
#define OPF_REP_Q 3 /* quarter cycles per REP iteration */

/* A cpu model with the test's costs; the predictor's sizes are the default
 * model's; a misprediction and a taken branch cost nothing extra. */
static inline const struct cpu_model *opf_cpu(void)
{
	static struct cpu_model m;
	m = *cpu_model_default();
	memcpy(m.cost_q, opf_cost, sizeof(m.cost_q));
	m.rep_iter_q = OPF_REP_Q;
	m.taken_branch_q = opf_cost[IC_BRANCH];
	m.mispredict_cycles = 0;
	return &m;
}

/* The test's own generator (a 64-bit LCG, Knuth's MMIX constants), not the
 * PMU's. */
static inline uint32_t opf_rand(uint64_t *s)
{
	*s = *s * 6364136223846793005ULL + 1442695040888963407ULL;
	return (uint32_t)(*s >> 33);
}

struct opf_run {
	struct block_info bi;
	uint16_t off[OPF_MAXI + 1];
	uint8_t cls[OPF_MAXI];
};

/* A run of n instructions at start, of sizes 1..7 bytes (2 for a REP), whose
 * body classes come from rnd and whose terminator's class fits kind. */
static inline void opf_make_run(struct opf_run *r, uint32_t id, uint64_t start, uint32_t n,
                                int kind, uint64_t target, uint64_t *rnd)
{
	static const uint8_t body[] = {IC_ALU,   IC_ALU, IC_ALU,  IC_ALU,  IC_NOP, IC_LOAD, IC_LOAD,
	                               IC_STORE, IC_MUL, IC_SIMD, IC_SIMD, IC_DIV, IC_OTHER};
	uint16_t o = 0;
	for (uint32_t i = 0; i < n; i++) {
		r->off[i] = o;
		int last = i + 1 == n;
		o = (uint16_t)(o + (last && kind == BK_REP ? 2 : 1 + opf_rand(rnd) % 7));
		r->cls[i] = !last || kind == BK_NONE ? body[opf_rand(rnd) % sizeof(body)]
		            : kind == BK_REP         ? IC_STRING
		            : kind == BK_SYSCALL     ? IC_SYSCALL
		            : kind == BK_TRAP        ? IC_OTHER
		                                     : IC_BRANCH;
	}
	r->off[n] = o;
	r->bi = (struct block_info){start,
	                            start + o,
	                            start + r->off[n - 1],
	                            target,
	                            id,
	                            (uint16_t)n,
	                            (uint8_t)kind,
	                            kind == BK_COND ? CC_NE : 0,
	                            0,
	                            (uint8_t)(o - r->off[n - 1]),
	                            r->off,
	                            r->cls};
}

static struct opf_run opf_runs[OPF_NRUNS];

static inline uint64_t opf_run_start(uint32_t r)
{
	return OPF_BASE + (uint64_t)r * 0x1000;
}

/* The layout: runs of 1..40 instructions ending in every kind of terminator;
 * run 7 is a REP alone (a REP left in it retires nothing). */
static inline void opf_layout(uint64_t seed)
{
	static const uint8_t kinds[] = {BK_COND, BK_JMP,     BK_JMP_IND, BK_CALL, BK_CALL_IND,
	                                BK_RET,  BK_SYSCALL, BK_REP,     BK_COND};
	uint64_t rnd = seed;
	for (uint32_t r = 0; r < OPF_NRUNS; r++) {
		int kind = kinds[r % sizeof(kinds)];
		uint32_t n = r == 7 ? 1 : 1 + opf_rand(&rnd) % OPF_MAXI;
		int direct = kind == BK_COND || kind == BK_JMP || kind == BK_CALL;
		opf_make_run(&opf_runs[r], r, opf_run_start(r), n, kind,
		             direct ? opf_run_start((r * 5 + 3) % OPF_NRUNS) : 0, &rnd);
	}
}

/* One block of the stream. */
struct opf_step {
	const struct opf_run *run;
	uint64_t next, rep_iters;
	uint32_t tid, n;
	uint8_t kind, taken, new_context;
	uint8_t whole; /* handed over by block_sink.whole */
	uint8_t
	    rep_left;    /* the REP (last of the run) ran rep_iters iterations and did not retire */
	uint64_t base;   /* instructions retired before it */
	uint64_t q0, q1; /* the test's quarter cycles before and after it */
};

/* What the stream options ask for. */
struct opf_opts {
	uint64_t seed;
	size_t nsteps;
	int reps;     /* REP blocks (iterations 0..63, now and then 0..2999) */
	int rep_left; /* some of them left in the middle */
	int cut;      /* blocks cut short */
};

/* The stream and the test's walk of it. */
static struct opf_step *opf_steps;
static size_t opf_nsteps;
/* per retired instruction (index = number - 1): its address, the test's
 * quarter cycle before it (after any REP left before it) and after it, its thread */
static uint64_t *opf_addr, *opf_q0, *opf_q1;
static uint32_t *opf_tid;
static uint64_t opf_ninsns;

static inline void opf_free(void)
{
	free(opf_steps);
	free(opf_addr);
	free(opf_q0);
	free(opf_q1);
	free(opf_tid);
	opf_steps = NULL;
	opf_addr = opf_q0 = opf_q1 = NULL;
	opf_tid = NULL;
	opf_nsteps = 0;
	opf_ninsns = 0;
}

/* Appends an instruction to the walk. */
static inline void opf_walk_insn(uint64_t addr, uint32_t tid, uint64_t q0, uint64_t q1, size_t *cap)
{
	if (opf_ninsns == *cap) {
		*cap = *cap ? 2 * *cap : 1 << 16;
		opf_addr = realloc(opf_addr, *cap * sizeof(*opf_addr));
		opf_q0 = realloc(opf_q0, *cap * sizeof(*opf_q0));
		opf_q1 = realloc(opf_q1, *cap * sizeof(*opf_q1));
		opf_tid = realloc(opf_tid, *cap * sizeof(*opf_tid));
		ck_assert(opf_addr && opf_q0 && opf_q1 && opf_tid);
	}
	opf_addr[opf_ninsns] = addr;
	opf_q0[opf_ninsns] = q0;
	opf_q1[opf_ninsns] = q1;
	opf_tid[opf_ninsns] = tid;
	opf_ninsns++;
}

/* Walks step st (its figures but base, q0, q1 filled in): the test's clock
 * advances by each retired instruction's class cost, a retired REP's
 * iterations on the REP, a REP left's iterations after the instructions
 * before it. */
static inline void opf_walk_step(struct opf_step *st, uint64_t *q, size_t *cap)
{
	const struct block_info *bi = &st->run->bi;
	st->base = opf_ninsns;
	st->q0 = *q;
	for (uint32_t i = 0; i < st->n; i++) {
		uint64_t q0 = *q;
		*q += opf_cost[bi->cls[i]];
		if (i + 1 == st->n && st->kind == BK_REP)
			*q += st->rep_iters * OPF_REP_Q;
		opf_walk_insn(bi->start + bi->off[i], st->tid, q0, *q, cap);
	}
	if (st->rep_left)
		*q += st->rep_iters * OPF_REP_Q;
	st->q1 = *q;
}

/* Makes the walk of the steps already in opf_steps[0 .. opf_nsteps). */
static inline void opf_walk_all(void)
{
	size_t cap = 0;
	uint64_t q = 0;
	opf_ninsns = 0;
	for (size_t k = 0; k < opf_nsteps; k++)
		opf_walk_step(&opf_steps[k], &q, &cap);
}

/* A random stream over opf_layout's runs: three threads with a context switch
 * now and then (and, rarely, a new context on the same thread: an execve),
 * whole blocks handed over by whole() or retire(), conditional branches taken
 * or not, indirect targets anywhere. */
static inline void opf_stream(const struct opf_opts *o)
{
	uint64_t rnd = o->seed ^ 0x5eedULL;
	opf_free();
	opf_layout(o->seed);
	opf_steps = calloc(o->nsteps, sizeof(*opf_steps));
	ck_assert_ptr_nonnull(opf_steps);
	uint32_t tid = 100;
	for (size_t k = 0; k < o->nsteps; k++) {
		struct opf_step *st = &opf_steps[k];
		const struct opf_run *r;
		do
			r = &opf_runs[opf_rand(&rnd) % OPF_NRUNS];
		while (r->bi.kind == BK_REP && !o->reps);
		const struct block_info *bi = &r->bi;
		uint32_t d = opf_rand(&rnd) % 200;
		st->new_context = d < 5 || k == 0;
		if (d < 4)
			tid = 100 + (tid - 100 + 1 + d % 2) % 3;
		st->run = r;
		st->tid = tid;
		st->n = bi->ninsns;
		st->kind = bi->kind;
		if (bi->kind == BK_REP) {
			uint32_t big = opf_rand(&rnd) % 20 == 0;
			st->rep_iters = opf_rand(&rnd) % (big ? 3000 : 64);
			if (o->rep_left && opf_rand(&rnd) % 3 == 0) {
				st->rep_left = 1;
				st->n = bi->ninsns - 1;
				st->kind = BK_NONE;
			}
			st->next = st->rep_left ? bi->term : bi->end;
			continue;
		}
		if (o->cut && bi->ninsns > 1 && opf_rand(&rnd) % 8 == 0) {
			st->n = 1 + opf_rand(&rnd) % (bi->ninsns - 1u);
			st->kind = BK_NONE;
			st->next = bi->start + r->off[st->n];
			continue;
		}
		st->whole = opf_rand(&rnd) % 3 != 0;
		st->taken =
		    br_kind_is_branch(bi->kind) && (bi->kind != BK_COND || opf_rand(&rnd) % 2);
		int indirect =
		    bi->kind == BK_JMP_IND || bi->kind == BK_CALL_IND || bi->kind == BK_RET;
		st->next = !st->taken ? bi->end
		           : indirect ? opf_run_start(opf_rand(&rnd) % OPF_NRUNS)
		                      : bi->target;
	}
	opf_nsteps = o->nsteps;
	opf_walk_all();
}

/* What the op sampler handed out, with the test's number of the instruction
 * at the sample's ip in the block being fed. */
struct opf_got {
	struct pmu_op_sample s;
	uint64_t insn; /* the test's number (1-based) */
	size_t step;
};

static struct opf_got *opf_got;
static size_t opf_ngot, opf_capgot;
static size_t opf_cur;    /* the step being fed */
static uint64_t *opf_nm;  /* pmu_op_next_min before each step */
static uint64_t opf_pmis; /* the counters' samples */

/* Memory facts the op_memory callback makes up from the instruction number
 * (addr set even when not valid: the PMU must clear it). */
static inline struct pmu_op_mem opf_mem_of(uint64_t insn)
{
	return (struct pmu_op_mem){.load = insn & 1,
	                           .store = (insn >> 1) & 1,
	                           .width = (uint8_t)(1u << (insn % 4)),
	                           .addr_valid = insn % 3 != 0,
	                           .addr = 0xdead0000ULL + insn * 8};
}

static uint64_t opf_mem_calls;            /* op_memory calls */
static uint64_t opf_mem_insn, opf_mem_ip; /* the last one's arguments */
static int opf_mem_on;                    /* op_memory is set: check each sample follows its call */

static inline void opf_on_memory(void *ctx, uint64_t insn, uint64_t ip, struct pmu_op_mem *m)
{
	(void)ctx;
	opf_mem_calls++;
	opf_mem_insn = insn;
	opf_mem_ip = ip;
	*m = opf_mem_of(insn);
}

/* The branch facts the sample of instruction j of step st carries (all but
 * the misprediction, which the predictor decides): its run's kind, branch or
 * not, taken, return, REP, target, when it is the retired terminator; none
 * otherwise. */
static inline int opf_facts_ok(const struct pmu_op_sample *s, const struct opf_step *st, uint32_t j)
{
	int term = j + 1 == st->n && st->kind != BK_NONE;
	int branch = term && (st->kind == BK_COND || st->kind == BK_JMP || st->kind == BK_JMP_IND ||
	                      st->kind == BK_CALL || st->kind == BK_CALL_IND || st->kind == BK_RET);
	uint64_t target = !branch               ? 0
	                  : st->taken           ? st->next
	                  : st->kind == BK_COND ? st->run->bi.target
	                                        : 0;
	return s->kind == (term ? st->kind : BK_NONE) && s->branch == branch &&
	       s->taken == (branch && st->taken) && s->ret == (term && st->kind == BK_RET) &&
	       s->microcoded == (term && st->kind == BK_REP) && s->target == target &&
	       (branch || !s->mispredicted);
}

static inline void opf_on_op(void *ctx, const struct pmu_op_sample *s)
{
	(void)ctx;
	const struct opf_step *st = &opf_steps[opf_cur];
	const struct opf_run *r = st->run;
	uint32_t j = 0;
	while (j < st->n && r->bi.start + r->off[j] != s->ip)
		j++;
	OPF_CHECK(j < st->n,
	          "op sample at %#llx, not an instruction of block %zu (%#llx, %u retired)",
	          (unsigned long long)s->ip, opf_cur, (unsigned long long)r->bi.start, st->n);
	OPF_CHECK(opf_facts_ok(s, st, j),
	          "op sample at %#llx (block %zu, instruction %u of %u): kind %u branch %u taken "
	          "%u mispredicted %u ret %u "
	          "microcoded %u target %#llx",
	          (unsigned long long)s->ip, opf_cur, j, st->n, s->kind, s->branch, s->taken,
	          s->mispredicted, s->ret, s->microcoded, (unsigned long long)s->target);
	if (opf_mem_on) /* asked once for this sample, just before it */
		OPF_CHECK(opf_mem_calls == opf_ngot + 1 && opf_mem_insn == s->insn &&
		              opf_mem_ip == s->ip,
		          "op sample %zu (insn %llu at %#llx): %llu op_memory calls, the last for "
		          "%llu at %#llx",
		          opf_ngot, (unsigned long long)s->insn, (unsigned long long)s->ip,
		          (unsigned long long)opf_mem_calls, (unsigned long long)opf_mem_insn,
		          (unsigned long long)opf_mem_ip);
	if (opf_ngot == opf_capgot) {
		opf_capgot = opf_capgot ? 2 * opf_capgot : 4096;
		opf_got = realloc(opf_got, opf_capgot * sizeof(*opf_got));
		ck_assert_ptr_nonnull(opf_got);
	}
	opf_got[opf_ngot++] = (struct opf_got){*s, st->base + j + 1, opf_cur};
}

static inline void opf_on_pmi(void *ctx, const struct pmu_sample *s)
{
	(void)ctx;
	(void)s;
	opf_pmis++;
}

/* A PMU of cfg with the capturing sink (op_memory when mem); NULL and the
 * message in msg when pmu_new refuses cfg. */
static inline struct pmu *opf_pmu(const struct pmu_config *cfg, int mem, char *msg, size_t ml)
{
	struct pmu *p = NULL;
	opf_ngot = 0;
	opf_pmis = 0;
	opf_mem_calls = 0;
	struct pmu_sample_sink sink = {
	    .sample = opf_on_pmi, .op_sample = opf_on_op, .op_memory = mem ? opf_on_memory : NULL};
	int r = pmu_new(cfg, sink, &p, msg, ml);
	return r == 0 ? p : NULL;
}

/* Feeds the steps [from, to) to p, noting pmu_op_next_min before each. */
static inline void opf_feed_range(struct pmu *p, size_t from, size_t to)
{
	struct block_sink sk = pmu_block_sink(p);
	if (!opf_nm) {
		opf_nm = calloc(opf_nsteps, sizeof(*opf_nm));
		ck_assert_ptr_nonnull(opf_nm);
	}
	for (size_t k = from; k < to; k++) {
		const struct opf_step *st = &opf_steps[k];
		opf_cur = k;
		opf_nm[k] = pmu_op_next_min(p);
		if (st->whole &&
		    sk.whole) { /* a consumer without whole() gets every block by retire() */
			unsigned flags = (st->taken ? RB_WHOLE_TAKEN : 0) | RB_WHOLE_RUN_START |
			                 (st->new_context ? RB_WHOLE_NEW_CONTEXT : 0);
			sk.whole(sk.ctx, &st->run->bi, st->next, 0, st->tid, flags);
			continue;
		}
		struct retired_block rb = {
		    .info = &st->run->bi,
		    .next = st->next,
		    .rep_iters = st->rep_iters,
		    .tid = st->tid,
		    .ninsns = st->n,
		    .kind = st->kind,
		    .taken = st->taken,
		    .run_start = 1,
		    .new_context = st->new_context,
		};
		if (st->run->bi.kind == BK_REP && (st->kind == BK_REP || st->rep_left)) {
			rb.rep_part = (uint8_t)(RB_REP_RAN | (st->rep_left ? RB_REP_LEFT : 0));
			rb.rep_count = st->rep_iters + 5;
			rb.rep_left = st->rep_left ? 5 : 0;
		}
		sk.retire(sk.ctx, &rb);
	}
}

static inline void opf_feed(struct pmu *p)
{
	free(opf_nm);
	opf_nm = NULL;
	opf_feed_range(p, 0, opf_nsteps);
}

/* pmu_op_next_min before every block against the next tag's number T (the
 * test's, from the first sample at or after the block): at most T, equal when
 * exact. pmu.h allows one exception where the bound counts cycles (cycle
 * mode, windows): a REP's iterations may bring the tag earlier, so with
 * rep_excuse a value is excused when REP iterations ran between it and the
 * tag (a REP retired or left in the middle in a block before the tag's, or
 * the tagged REP itself); *excused counts those that needed it. Blocks after
 * the last tag are not checked. */
static inline void opf_check_next_min(int exact, int rep_excuse, size_t *excused, const char *what)
{
	size_t i = 0;
	*excused = 0;
	for (size_t k = 0; k < opf_nsteps; k++) {
		while (i < opf_ngot && opf_got[i].step < k)
			i++;
		if (i == opf_ngot)
			break;
		uint64_t t = opf_got[i].insn;
		if (exact ? opf_nm[k] == t : opf_nm[k] <= t)
			continue;
		int rep = 0;
		for (size_t u = k; rep_excuse && u <= opf_got[i].step; u++)
			rep |= opf_steps[u].rep_iters &&
			       (u < opf_got[i].step
			            ? opf_steps[u].rep_left || opf_steps[u].kind == BK_REP
			            : opf_got[i].s.microcoded);
		OPF_CHECK(rep,
		          "%s: before block %zu (after insn %llu), next_min %llu; the next tag is "
		          "insn %llu "
		          "(block %zu)",
		          what, k, (unsigned long long)opf_steps[k].base,
		          (unsigned long long)opf_nm[k], (unsigned long long)t, opf_got[i].step);
		++*excused;
	}
}

/* The retirement cycle of instruction number k (1-based) on the test's clock. */
static inline uint64_t opf_cycle(uint64_t k)
{
	return opf_q1[k - 1] >> 2;
}

/* Whole cycles instruction number k adds on the test's clock. */
static inline uint64_t opf_whole(uint64_t k)
{
	return (opf_q1[k - 1] >> 2) - (opf_q0[k - 1] >> 2);
}

#endif
