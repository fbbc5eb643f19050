/* Unit tests of profiler/region_cfg: hand-assembled code (each byte string
 * with its assembly), hand-made hot code, and the blocks and edges the graph
 * must have written out by hand from the x86 encodings and region_cfg.h's
 * rules, never computed by the code under test. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "profiler/region_cfg.h"
#include "tests/unit/run_suite.h"

#define N(a) (sizeof(a) / sizeof((a)[0]))

struct xblock {
	int line;
	uint64_t start, end;
	uint32_t ninsns;
	uint16_t off[6]; /* ninsns + 1 offsets */
	int kind;
	uint64_t target, callee;
	uint32_t hops;
	int flags;
	double weight;
};

struct xedge {
	int line;
	uint64_t from, to;
	int kind, out, observed;
	double weight;
};

struct hot_in {
	const struct hot_ip *ip;
	size_t nip;
	const struct hot_branch *br;
	size_t nbr;
	const struct hot_target *tg;
	size_t ntg;
};

static struct rcfg *discover(const uint8_t *code, size_t len, uint64_t base,
                             const struct hot_in *in, const struct rcfg_options *opt,
                             struct binary **bin)
{
	ck_assert_int_eq(binary_from_code(code, len, base, bin), 0);
	struct hot_code hot = {.ip = (struct hot_ip *)in->ip,
	                       .nip = in->nip,
	                       .branch = (struct hot_branch *)in->br,
	                       .nbranch = in->nbr,
	                       .target = (struct hot_target *)in->tg,
	                       .ntarget = in->ntg};
	for (size_t i = 0; i < in->nip; i++)
		hot.total += in->ip[i].weight;
	struct rcfg *g = NULL;
	char msg[256] = "";
	int err = rcfg_discover(*bin, &hot, opt, &g, msg, sizeof(msg));
	ck_assert_msg(err == 0, "rcfg_discover: %d %s", err, msg);
	ck_assert_ptr_nonnull(g);
	return g;
}

/* The graph in full when RCFG_DUMP is set (to write a failing table's rows). */
static void print_graph(const char *name, const struct rcfg *g)
{
	printf("%s: %zu blocks, %zu edges, %zu runs explored, weight %g\n", name, g->nblock,
	       g->nedge, g->runs, g->weight);
	if (!getenv("RCFG_DUMP"))
		return;
	for (size_t i = 0; i < g->nblock; i++) {
		const struct rcfg_block *b = &g->block[i];
		printf("  block %#llx-%#llx n=%u %s hops=%u flags=%#x w=%g\n",
		       (unsigned long long)b->start, (unsigned long long)b->end, b->ninsns,
		       br_kind_name(b->kind), b->hops, b->flags, b->weight);
	}
	for (size_t i = 0; i < g->nedge; i++) {
		const struct rcfg_edge *e = &g->edge[i];
		printf("  edge %#llx -> %#llx %s %s obs=%d w=%g\n",
		       (unsigned long long)g->block[e->from].start, (unsigned long long)e->to_addr,
		       rcfg_edge_kind_name(e->kind), rcfg_out_name(e->out), e->observed, e->weight);
	}
}

static void check_blocks(const struct rcfg *g, const struct xblock *xb, size_t nxb)
{
	ck_assert_msg(g->nblock == nxb, "%zu blocks, expected %zu", g->nblock, nxb);
	for (size_t i = 0; i < nxb; i++) {
		const struct rcfg_block *b = &g->block[i];
		const struct xblock *x = &xb[i];
		ck_assert_msg(b->start == x->start && b->end == x->end && b->ninsns == x->ninsns,
		              "line %d: block %#llx-%#llx n=%u", x->line,
		              (unsigned long long)b->start, (unsigned long long)b->end, b->ninsns);
		for (uint32_t k = 0; k <= x->ninsns; k++)
			ck_assert_msg(b->off[k] == x->off[k], "line %d: off[%u] %u", x->line, k,
			              b->off[k]);
		ck_assert_msg(b->kind == x->kind, "line %d: kind %s", x->line,
		              br_kind_name(b->kind));
		ck_assert_msg(b->target == x->target && b->callee == x->callee,
		              "line %d: target %#llx callee %#llx", x->line,
		              (unsigned long long)b->target, (unsigned long long)b->callee);
		ck_assert_msg(b->hops == x->hops, "line %d: hops %u", x->line, b->hops);
		ck_assert_msg(b->flags == x->flags, "line %d: flags %#x", x->line, b->flags);
		ck_assert_msg(b->weight == x->weight, "line %d: weight %g", x->line, b->weight);
		ck_assert_ptr_eq(rcfg_block_at(g, x->start), b);
	}
}

static void check_edges(const struct rcfg *g, const struct xedge *xe, size_t nxe)
{
	ck_assert_msg(g->nedge == nxe, "%zu edges, expected %zu", g->nedge, nxe);
	for (size_t i = 0; i < nxe; i++) {
		const struct rcfg_edge *e = &g->edge[i];
		const struct xedge *x = &xe[i];
		ck_assert_msg(g->block[e->from].start == x->from && e->to_addr == x->to &&
		                  e->kind == x->kind,
		              "line %d: edge %#llx -> %#llx %s", x->line,
		              (unsigned long long)g->block[e->from].start,
		              (unsigned long long)e->to_addr, rcfg_edge_kind_name(e->kind));
		ck_assert_msg(e->out == x->out, "line %d: out %s", x->line, rcfg_out_name(e->out));
		if (x->out == RCFG_IN)
			ck_assert_msg(e->to < g->nblock && g->block[e->to].start == x->to,
			              "line %d: to", x->line);
		else
			ck_assert_msg(e->to == RCFG_NO_BLOCK, "line %d: to a block", x->line);
		ck_assert_msg(e->observed == x->observed && e->weight == x->weight,
		              "line %d: obs %d w %g", x->line, e->observed, e->weight);
	}
	/* each block's out-edges are the run of edges from it */
	for (size_t i = 0; i < g->nblock; i++)
		for (size_t k = 0; k < g->block[i].nedge; k++)
			ck_assert_uint_eq(g->edge[g->block[i].first_edge + k].from, i);
}

#define CHECK_GRAPH(g, xb, xe)                                                                     \
	do {                                                                                       \
		print_graph(__func__, g);                                                          \
		check_blocks(g, xb, N(xb));                                                        \
		check_edges(g, xe, N(xe));                                                         \
	} while (0)

#define BLK(start, end, n, ...) __LINE__, start, end, n, __VA_ARGS__

/* A loop whose sampled instructions are not its head: the back edge's target
 * starts the block, and the samples inside it start none.
 * 1000: 31 c0       xor eax, eax
 * 1002: 48 ff c0    inc rax          <- loop head
 * 1005: 48 39 c8    cmp rax, rcx
 * 1008: 75 f8       jne 1002
 * 100a: c3          ret */
static const uint8_t loop_code[] = {0x31, 0xc0, 0x48, 0xff, 0xc0, 0x48,
                                    0x39, 0xc8, 0x75, 0xf8, 0xc3};
static const struct hot_ip loop_ip[] = {{0x1005, 10}, {0x1008, 10}};
static const struct hot_branch loop_br[] = {{0x1008, 9, 1}};
static const struct xblock loop_blocks[] = {
    {BLK(0x1002, 0x100a, 3, {0, 3, 6, 8}, BK_COND, 0x1002, 0, 0, RCFG_SAMPLED, 20)},
    {BLK(0x100a, 0x100b, 1, {0, 1}, BK_RET, 0, 0, 1, RCFG_EXIT, 0)},
};
static const struct xedge loop_edges[] = {
    {__LINE__, 0x1002, 0x100a, RCFG_FALL, RCFG_IN, 1, 1},
    {__LINE__, 0x1002, 0x1002, RCFG_TAKEN, RCFG_IN, 1, 9},
};

START_TEST(loop_back_edge)
{
	struct hot_in in = {loop_ip, N(loop_ip), loop_br, N(loop_br), NULL, 0};
	struct binary *bin;
	struct rcfg *g = discover(loop_code, sizeof(loop_code), 0x1000, &in, NULL, &bin);
	CHECK_GRAPH(g, loop_blocks, loop_edges);
	ck_assert_ptr_eq(rcfg_block_holding(g, 0x1005), &g->block[0]);
	ck_assert_ptr_null(rcfg_block_at(g, 0x1000)); /* before the loop: nothing reaches it */
	ck_assert_ptr_null(rcfg_block_holding(g, 0x1000));
	ck_assert(g->weight == 20 && !g->partial);
	/* the block's offsets are its own copy, not the decode cache's */
	ck_assert_ptr_ne(g->block[0].off, binary_run(bin, 0x1002)->off);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* An if/else diamond; the else arm's run goes on into the join, which the then
 * arm's jump targets, so it is cut there.
 * 2000: 48 39 c8    cmp rax, rcx
 * 2003: 74 05       je 200a
 * 2005: 83 c0 01    add eax, 1
 * 2008: eb 03       jmp 200d
 * 200a: 83 c0 02    add eax, 2
 * 200d: c3          ret */
static const uint8_t diamond_code[] = {0x48, 0x39, 0xc8, 0x74, 0x05, 0x83, 0xc0,
                                       0x01, 0xeb, 0x03, 0x83, 0xc0, 0x02, 0xc3};
static const struct hot_ip diamond_ip[] = {{0x2000, 5}, {0x2005, 3}};
static const struct hot_branch diamond_br[] = {{0x2003, 2, 3}};
static const struct xblock diamond_blocks[] = {
    {BLK(0x2000, 0x2005, 2, {0, 3, 5}, BK_COND, 0x200a, 0, 0, RCFG_SAMPLED, 5)},
    {BLK(0x2005, 0x200a, 2, {0, 3, 5}, BK_JMP, 0x200d, 0, 0, RCFG_SAMPLED, 3)},
    {BLK(0x200a, 0x200d, 1, {0, 3}, BK_NONE, 0, 0, 1, 0, 0)},
    /* 0 hops: the sampled then arm jumps to it unconditionally */
    {BLK(0x200d, 0x200e, 1, {0, 1}, BK_RET, 0, 0, 0, RCFG_EXIT, 0)},
};
static const struct xedge diamond_edges[] = {
    {__LINE__, 0x2000, 0x2005, RCFG_FALL, RCFG_IN, 1, 3},
    {__LINE__, 0x2000, 0x200a, RCFG_TAKEN, RCFG_IN, 1, 2},
    {__LINE__, 0x2005, 0x200d, RCFG_TAKEN, RCFG_IN, 0, 0},
    {__LINE__, 0x200a, 0x200d, RCFG_FALL, RCFG_IN, 0, 0},
};

START_TEST(if_else_diamond)
{
	struct hot_in in = {diamond_ip, N(diamond_ip), diamond_br, N(diamond_br), NULL, 0};
	struct binary *bin;
	struct rcfg *g = discover(diamond_code, sizeof(diamond_code), 0x2000, &in, NULL, &bin);
	CHECK_GRAPH(g, diamond_blocks, diamond_edges);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* A jump into its own last byte: the displacement ff is the opcode of another
 * instruction, so two blocks share byte 3001.
 * 3000: eb ff       jmp 3001
 * 3001:    ff c0    inc eax    (second stream, from the jmp's displacement)
 * 3003: 48 ff c0    inc rax
 * 3006: c3          ret */
static const uint8_t jmpself_code[] = {0xeb, 0xff, 0xc0, 0x48, 0xff, 0xc0, 0xc3};
static const struct hot_ip jmpself_ip[] = {{0x3000, 1}, {0x3003, 2}};
static const struct xblock jmpself_blocks[] = {
    {BLK(0x3000, 0x3002, 1, {0, 2}, BK_JMP, 0x3001, 0, 0, RCFG_SAMPLED, 1)},
    {BLK(0x3001, 0x3007, 3, {0, 2, 5, 6}, BK_RET, 0, 0, 0, RCFG_SAMPLED | RCFG_EXIT, 2)},
};
static const struct xedge jmpself_edges[] = {
    {__LINE__, 0x3000, 0x3001, RCFG_TAKEN, RCFG_IN, 0, 0},
};

START_TEST(jump_into_own_displacement)
{
	struct hot_in in = {jmpself_ip, N(jmpself_ip), NULL, 0, NULL, 0};
	struct binary *bin;
	struct rcfg *g = discover(jmpself_code, sizeof(jmpself_code), 0x3000, &in, NULL, &bin);
	CHECK_GRAPH(g, jmpself_blocks, jmpself_edges);
	ck_assert_ptr_eq(rcfg_block_holding(g, 0x3001), &g->block[1]);
	ck_assert_ptr_null(rcfg_block_holding(g, 0x3002)); /* c0: inside inc eax */
	ck_assert_ptr_eq(rcfg_block_holding(g, 0x3003), &g->block[1]);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* A mov whose immediate holds two instructions: the back edge enters it, and
 * the two streams meet again at 4005, which starts a block of its own.
 * 4000: b8 48 ff c0 90   mov eax, 0x90c0ff48
 * 4001:    48 ff c0      inc rax   (second stream, inside the immediate)
 * 4004:             90   nop
 * 4005: 48 39 c8         cmp rax, rcx
 * 4008: 75 f7            jne 4001
 * 400a: c3               ret */
static const uint8_t imm_code[] = {0xb8, 0x48, 0xff, 0xc0, 0x90, 0x48,
                                   0x39, 0xc8, 0x75, 0xf7, 0xc3};
static const struct hot_ip imm_ip[] = {{0x4000, 1}, {0x4008, 4}};
static const struct hot_branch imm_br[] = {{0x4008, 3, 1}};
static const struct xblock imm_blocks[] = {
    {BLK(0x4000, 0x4005, 1, {0, 5}, BK_NONE, 0, 0, 0, RCFG_SAMPLED, 1)},
    /* 0 hops: it runs straight into the sampled jne */
    {BLK(0x4001, 0x4005, 2, {0, 3, 4}, BK_NONE, 0, 0, 0, 0, 0)},
    {BLK(0x4005, 0x400a, 2, {0, 3, 5}, BK_COND, 0x4001, 0, 0, RCFG_SAMPLED, 4)},
    {BLK(0x400a, 0x400b, 1, {0, 1}, BK_RET, 0, 0, 1, RCFG_EXIT, 0)},
};
static const struct xedge imm_edges[] = {
    {__LINE__, 0x4000, 0x4005, RCFG_FALL, RCFG_IN, 0, 0},
    {__LINE__, 0x4001, 0x4005, RCFG_FALL, RCFG_IN, 0, 0},
    {__LINE__, 0x4005, 0x400a, RCFG_FALL, RCFG_IN, 1, 1},
    {__LINE__, 0x4005, 0x4001, RCFG_TAKEN, RCFG_IN, 1, 3},
};

START_TEST(jump_into_immediate)
{
	struct hot_in in = {imm_ip, N(imm_ip), imm_br, N(imm_br), NULL, 0};
	struct binary *bin;
	struct rcfg *g = discover(imm_code, sizeof(imm_code), 0x4000, &in, NULL, &bin);
	CHECK_GRAPH(g, imm_blocks, imm_edges);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* Calls are boundaries: each goes on at its return point, the callee (5010)
 * is not entered; a syscall falls through; ud2 ends the graph.
 * 5000: e8 0b 00 00 00   call 5010
 * 5005: 48 ff c0         inc rax
 * 5008: ff d0            call rax
 * 500a: 0f 05            syscall
 * 500c: 0f 0b            ud2
 * 500e: 90 90            nop; nop
 * 5010: c3               ret */
static const uint8_t call_code[] = {0xe8, 0x0b, 0x00, 0x00, 0x00, 0x48, 0xff, 0xc0, 0xff,
                                    0xd0, 0x0f, 0x05, 0x0f, 0x0b, 0x90, 0x90, 0xc3};
static const struct hot_ip call_ip[] = {{0x5000, 2}, {0x5005, 1}};
static const struct hot_target call_tg[] = {{0x5008, 0x5010, 1}};
static const struct xblock call_blocks[] = {
    {BLK(0x5000, 0x5005, 1, {0, 5}, BK_CALL, 0x5010, 0x5010, 0, RCFG_SAMPLED | RCFG_CALL, 2)},
    {BLK(0x5005, 0x500a, 2, {0, 3, 5}, BK_CALL_IND, 0, 0, 0, RCFG_SAMPLED | RCFG_CALL, 1)},
    {BLK(0x500a, 0x500c, 1, {0, 2}, BK_SYSCALL, 0, 0, 0, 0, 0)},
    {BLK(0x500c, 0x500e, 1, {0, 2}, BK_TRAP, 0, 0, 0, RCFG_EXIT, 0)},
};
static const struct xedge call_edges[] = {
    {__LINE__, 0x5000, 0x5005, RCFG_CALL_RETURN, RCFG_IN, 0, 0},
    {__LINE__, 0x5005, 0x500a, RCFG_CALL_RETURN, RCFG_IN, 0, 0},
    {__LINE__, 0x500a, 0x500c, RCFG_FALL, RCFG_IN, 0, 0},
};

START_TEST(call_and_return)
{
	struct hot_in in = {call_ip, N(call_ip), NULL, 0, call_tg, N(call_tg)};
	struct binary *bin;
	struct rcfg *g = discover(call_code, sizeof(call_code), 0x5000, &in, NULL, &bin);
	CHECK_GRAPH(g, call_blocks, call_edges);
	ck_assert_ptr_null(rcfg_block_at(g, 0x5010));
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* Indirect jumps: one with recorded targets (one of them outside the code),
 * one without any (an exit, no edge).
 * 6000: ff e0       jmp rax
 * 6002: c3          ret
 * 6003: 48 ff c0    inc rax
 * 6006: ff e1       jmp rcx
 * 6008: c3          ret */
static const uint8_t ind_code[] = {0xff, 0xe0, 0xc3, 0x48, 0xff, 0xc0, 0xff, 0xe1, 0xc3};
static const struct hot_ip ind_ip[] = {{0x6000, 5}, {0x6003, 1}};
static const struct hot_target ind_tg[] = {
    {0x6000, 0x6002, 4}, {0x6000, 0x6003, 1}, {0x6000, 0x9000, 0.5}};
static const struct xblock ind_blocks[] = {
    {BLK(0x6000, 0x6002, 1, {0, 2}, BK_JMP_IND, 0, 0, 0, RCFG_SAMPLED | RCFG_EXIT, 5)},
    {BLK(0x6002, 0x6003, 1, {0, 1}, BK_RET, 0, 0, 0, RCFG_EXIT, 0)},
    {BLK(0x6003, 0x6008, 2, {0, 3, 5}, BK_JMP_IND, 0, 0, 0, RCFG_SAMPLED | RCFG_EXIT, 1)},
};
static const struct xedge ind_edges[] = {
    {__LINE__, 0x6000, 0x6002, RCFG_INDIRECT, RCFG_IN, 1, 4},
    {__LINE__, 0x6000, 0x6003, RCFG_INDIRECT, RCFG_IN, 1, 1},
    {__LINE__, 0x6000, 0x9000, RCFG_INDIRECT, RCFG_OUT_NOCODE, 1, 0.5},
};

START_TEST(indirect_jumps)
{
	struct hot_in in = {ind_ip, N(ind_ip), NULL, 0, ind_tg, N(ind_tg)};
	struct binary *bin;
	struct rcfg *g = discover(ind_code, sizeof(ind_code), 0x6000, &in, NULL, &bin);
	CHECK_GRAPH(g, ind_blocks, ind_edges);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* A chain of conditional jumps away from the one sampled block.
 * 7000: 74 02   je 7004        (0 hops: sampled)
 * 7002: eb fc   jmp 7000       (1)
 * 7004: 74 02   je 7008        (1)
 * 7006: c3      ret            (2)
 * 7007: 90      nop            (padding, not reached)
 * 7008: 74 02   je 700c        (2)
 * 700a: c3      ret            (3)
 * 700b: 90      nop
 * 700c: 74 02   je 7010        (3)
 * 700e: c3      ret            (4)
 * 700f: 90      nop
 * 7010: c3      ret            (4) */
static const uint8_t chain_code[] = {0x74, 0x02, 0xeb, 0xfc, 0x74, 0x02, 0xc3, 0x90, 0x74,
                                     0x02, 0xc3, 0x90, 0x74, 0x02, 0xc3, 0x90, 0xc3};
static const struct hot_ip chain_ip[] = {{0x7000, 1}};

static const struct xblock chain0_blocks[] = {
    {BLK(0x7000, 0x7002, 1, {0, 2}, BK_COND, 0x7004, 0, 0, RCFG_SAMPLED | RCFG_EXIT, 1)},
};
static const struct xedge chain0_edges[] = {
    {__LINE__, 0x7000, 0x7002, RCFG_FALL, RCFG_OUT_HOPS, 0, 0},
    {__LINE__, 0x7000, 0x7004, RCFG_TAKEN, RCFG_OUT_HOPS, 0, 0},
};

static const struct xblock chain2_blocks[] = {
    {BLK(0x7000, 0x7002, 1, {0, 2}, BK_COND, 0x7004, 0, 0, RCFG_SAMPLED, 1)},
    {BLK(0x7002, 0x7004, 1, {0, 2}, BK_JMP, 0x7000, 0, 1, 0, 0)},
    {BLK(0x7004, 0x7006, 1, {0, 2}, BK_COND, 0x7008, 0, 1, 0, 0)},
    {BLK(0x7006, 0x7007, 1, {0, 1}, BK_RET, 0, 0, 2, RCFG_EXIT, 0)},
    {BLK(0x7008, 0x700a, 1, {0, 2}, BK_COND, 0x700c, 0, 2, RCFG_EXIT, 0)},
};
static const struct xedge chain2_edges[] = {
    {__LINE__, 0x7000, 0x7002, RCFG_FALL, RCFG_IN, 0, 0},
    {__LINE__, 0x7000, 0x7004, RCFG_TAKEN, RCFG_IN, 0, 0},
    {__LINE__, 0x7002, 0x7000, RCFG_TAKEN, RCFG_IN, 0, 0},
    {__LINE__, 0x7004, 0x7006, RCFG_FALL, RCFG_IN, 0, 0},
    {__LINE__, 0x7004, 0x7008, RCFG_TAKEN, RCFG_IN, 0, 0},
    {__LINE__, 0x7008, 0x700a, RCFG_FALL, RCFG_OUT_HOPS, 0, 0},
    {__LINE__, 0x7008, 0x700c, RCFG_TAKEN, RCFG_OUT_HOPS, 0, 0},
};

/* max_blocks 1: only the sampled run is explored; the rest is cut by the guard */
static const struct xedge chain_limit_edges[] = {
    {__LINE__, 0x7000, 0x7002, RCFG_FALL, RCFG_OUT_LIMIT, 0, 0},
    {__LINE__, 0x7000, 0x7004, RCFG_TAKEN, RCFG_OUT_LIMIT, 0, 0},
};

START_TEST(max_hops_chain)
{
	struct hot_in in = {chain_ip, N(chain_ip), NULL, 0, NULL, 0};
	struct binary *bin;
	struct rcfg_options opt;
	rcfg_options_init(&opt);
	ck_assert_uint_eq(opt.max_hops, 2);
	opt.max_hops = 0;
	struct rcfg *g = discover(chain_code, sizeof(chain_code), 0x7000, &in, &opt, &bin);
	CHECK_GRAPH(g, chain0_blocks, chain0_edges);
	rcfg_free(g);
	binary_free(bin);

	/* the default options: 2 hops */
	g = discover(chain_code, sizeof(chain_code), 0x7000, &in, NULL, &bin);
	CHECK_GRAPH(g, chain2_blocks, chain2_edges);
	ck_assert(!g->partial);
	rcfg_free(g);
	binary_free(bin);

	opt.max_hops = 3;
	g = discover(chain_code, sizeof(chain_code), 0x7000, &in, &opt, &bin);
	print_graph("max_hops_chain(3)", g);
	ck_assert_uint_eq(g->nblock, 7); /* 700a and 700c join, at 3 hops */
	ck_assert_uint_eq(rcfg_block_at(g, 0x700c)->hops, 3);
	ck_assert_ptr_null(rcfg_block_at(g, 0x700e));
	rcfg_free(g);
	binary_free(bin);

	opt.max_hops = 2;
	opt.max_blocks = 1;
	g = discover(chain_code, sizeof(chain_code), 0x7000, &in, &opt, &bin);
	CHECK_GRAPH(g, chain0_blocks, chain_limit_edges);
	ck_assert(g->partial && g->runs == 1);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* A sampled straight run split by an edge found later, from a block one hop
 * away, that lands on an instruction boundary inside it.
 * 8000: 48 ff c0   inc rax
 * 8003: 48 ff c0   inc rax
 * 8006: 48 39 c8   cmp rax, rcx     <- target of the je below
 * 8009: 75 f5      jne 8000
 * 800b: 74 f9      je 8006
 * 800d: c3         ret */
static const uint8_t split_code[] = {0x48, 0xff, 0xc0, 0x48, 0xff, 0xc0, 0x48,
                                     0x39, 0xc8, 0x75, 0xf5, 0x74, 0xf9, 0xc3};
static const struct hot_ip split_ip[] = {{0x8000, 1}, {0x8003, 1}, {0x8009, 1}};
static const struct xblock split_blocks[] = {
    {BLK(0x8000, 0x8006, 2, {0, 3, 6}, BK_NONE, 0, 0, 0, RCFG_SAMPLED, 2)},
    {BLK(0x8006, 0x800b, 2, {0, 3, 5}, BK_COND, 0x8000, 0, 0, RCFG_SAMPLED, 1)},
    {BLK(0x800b, 0x800d, 1, {0, 2}, BK_COND, 0x8006, 0, 1, 0, 0)},
    {BLK(0x800d, 0x800e, 1, {0, 1}, BK_RET, 0, 0, 2, RCFG_EXIT, 0)},
};
static const struct xedge split_edges[] = {
    {__LINE__, 0x8000, 0x8006, RCFG_FALL, RCFG_IN, 0, 0},
    {__LINE__, 0x8006, 0x800b, RCFG_FALL, RCFG_IN, 0, 0},
    {__LINE__, 0x8006, 0x8000, RCFG_TAKEN, RCFG_IN, 0, 0},
    {__LINE__, 0x800b, 0x800d, RCFG_FALL, RCFG_IN, 0, 0},
    {__LINE__, 0x800b, 0x8006, RCFG_TAKEN, RCFG_IN, 0, 0},
};

START_TEST(split_by_later_edge)
{
	struct hot_in in = {split_ip, N(split_ip), NULL, 0, NULL, 0};
	struct binary *bin;
	struct rcfg *g = discover(split_code, sizeof(split_code), 0x8000, &in, NULL, &bin);
	CHECK_GRAPH(g, split_blocks, split_edges);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* Jumps out of the code, and a sample outside it (JIT code, say): the edges
 * leave, the sample joins no block.
 * 9000: 48 39 c8            cmp rax, rcx
 * 9003: 0f 84 f7 0f 00 00   je a000
 * 9009: e9 f2 1f 00 00      jmp b000 */
static const uint8_t out_code[] = {0x48, 0x39, 0xc8, 0x0f, 0x84, 0xf7, 0x0f,
                                   0x00, 0x00, 0xe9, 0xf2, 0x1f, 0x00, 0x00};
static const struct hot_ip out_ip[] = {{0x9000, 1}, {0xc000, 7}};
static const struct xblock out_blocks[] = {
    {BLK(0x9000, 0x9009, 2, {0, 3, 9}, BK_COND, 0xa000, 0, 0, RCFG_SAMPLED | RCFG_EXIT, 1)},
    {BLK(0x9009, 0x900e, 1, {0, 5}, BK_JMP, 0xb000, 0, 1, RCFG_EXIT, 0)},
};
static const struct xedge out_edges[] = {
    {__LINE__, 0x9000, 0x9009, RCFG_FALL, RCFG_IN, 0, 0},
    {__LINE__, 0x9000, 0xa000, RCFG_TAKEN, RCFG_OUT_NOCODE, 0, 0},
    {__LINE__, 0x9009, 0xb000, RCFG_TAKEN, RCFG_OUT_NOCODE, 0, 0},
};

START_TEST(jump_outside_code)
{
	struct hot_in in = {out_ip, N(out_ip), NULL, 0, NULL, 0};
	struct binary *bin;
	struct rcfg *g = discover(out_code, sizeof(out_code), 0x9000, &in, NULL, &bin);
	CHECK_GRAPH(g, out_blocks, out_edges);
	ck_assert(g->weight == 1); /* of 8: the sample at c000 is not in the graph */
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

/* The same facts in another order give the same graph: the overlapping-code
 * case, whose block starts depend most on what was seen first. */
START_TEST(input_order)
{
	const struct hot_ip ip[] = {{0x4008, 4}, {0x4000, 1}};
	struct hot_in in = {ip, N(ip), imm_br, N(imm_br), NULL, 0};
	struct binary *bin;
	struct rcfg *g = discover(imm_code, sizeof(imm_code), 0x4000, &in, NULL, &bin);
	CHECK_GRAPH(g, imm_blocks, imm_edges);
	rcfg_free(g);
	binary_free(bin);

	const struct hot_target tg[] = {
	    {0x6000, 0x9000, 0.5}, {0x6000, 0x6003, 1}, {0x6000, 0x6002, 4}};
	const struct hot_ip ip2[] = {{0x6003, 1}, {0x6000, 5}};
	struct hot_in in2 = {ip2, N(ip2), NULL, 0, tg, N(tg)};
	g = discover(ind_code, sizeof(ind_code), 0x6000, &in2, NULL, &bin);
	CHECK_GRAPH(g, ind_blocks, ind_edges);
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

START_TEST(bad_options_and_empty_input)
{
	struct binary *bin;
	ck_assert_int_eq(binary_from_code(loop_code, sizeof(loop_code), 0x1000, &bin), 0);
	struct hot_code hot = {0};
	struct rcfg_options opt = {.max_hops = 2, .max_blocks = 0};
	struct rcfg *g = (struct rcfg *)1;
	char msg[128] = "";
	ck_assert_int_eq(rcfg_discover(bin, &hot, &opt, &g, msg, sizeof(msg)), PMUSIM_ERR_ARG);
	ck_assert_ptr_null(g);
	ck_assert_msg(strstr(msg, "max_blocks") != NULL, "%s", msg);
	ck_assert_int_eq(rcfg_discover(bin, &hot, NULL, &g, msg, sizeof(msg)), 0);
	ck_assert_uint_eq(g->nblock, 0);
	ck_assert_uint_eq(g->nedge, 0);
	ck_assert_ptr_null(rcfg_block_holding(g, 0x1002));
	rcfg_free(g);
	binary_free(bin);
}
END_TEST

static Suite *region_cfg_suite(void)
{
	Suite *s = suite_create("region_cfg");
	TCase *tc = tcase_create("discover");
	tcase_add_test(tc, loop_back_edge);
	tcase_add_test(tc, if_else_diamond);
	tcase_add_test(tc, jump_into_own_displacement);
	tcase_add_test(tc, jump_into_immediate);
	tcase_add_test(tc, call_and_return);
	tcase_add_test(tc, indirect_jumps);
	tcase_add_test(tc, max_hops_chain);
	tcase_add_test(tc, split_by_later_edge);
	tcase_add_test(tc, jump_outside_code);
	tcase_add_test(tc, input_order);
	tcase_add_test(tc, bad_options_and_empty_input);
	suite_add_tcase(s, tc);
	return s;
}

int main(void)
{
	return run_suite(region_cfg_suite());
}
