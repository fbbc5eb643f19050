/* The hot code a region selector sees (profiler/region_cfg.h): the instruction
 * addresses of one process with their weights, the directions its conditional
 * branches were seen to take, and the targets its indirect branches were seen
 * to reach, merged by address. Two sources give the same record, so that one
 * selector gives both the sampled regions and the ideal ones:
 *   - op samples of a perf.data (`record -e ibs_op//`, pmusim's or a real AMD
 *     machine's): each sample adds its period to its IP, its branch facts to
 *     its branch (IbsOpBrnTaken; IbsBrTarget for indirect jumps and calls);
 *   - the exact counts of a truth JSON (`run --truth-json`): every instruction
 *     of every block its executions, every branch its exact taken and
 *     fall-through counts, every indirect transfer its count.
 * Weights are in instructions (a sample's period estimates the instructions it
 * stands for; in cycle mode, cycles), so shares compare across the sources.
 *
 * Which branches are conditional: an op's facts say branch, taken, return and
 * the target, not conditional or unconditional (IbsOpData, docs/ibs.md), and an
 * always-taken jcc looks like a jmp. So the kind comes from the code: the
 * instruction at the sample's IP is decoded from the files the process maps
 * (profiler/proc_code.h, common/decode.h: the decoder the machine and the truth
 * use). A branch sample whose instruction cannot be read (its file is not on this
 * host) still weighs on its IP, but its direction and target are not merged: it
 * is counted in `unresolved`, so that branch[] and target[] hold the same kinds
 * of branch as a truth's. Samples in kernel mode (a real machine's: IBS cannot
 * exclude the kernel) are not the process's code and are skipped. */
#ifndef PMUSIM_PROFILER_HOT_CODE_H
#define PMUSIM_PROFILER_HOT_CODE_H

#include <stddef.h>
#include <stdint.h>

/* An instruction address and the weight on it. */
struct hot_ip {
	uint64_t ip;
	double weight;
};

/* A conditional branch at ip: the weight of its executions that went each way. */
struct hot_branch {
	uint64_t ip;
	double taken, fall;
};

/* An indirect jump or call at from that went to to, with the weight of that. */
struct hot_target {
	uint64_t from, to;
	double weight;
};

struct hot_code {
	uint32_t pid;      /* the process (0 in a truth: the program pmusim started) */
	char *program;     /* its program's path as the source names it; may be NULL */
	struct hot_ip *ip; /* sorted by ip, each ip once */
	size_t nip;
	struct hot_branch *branch; /* sorted by ip, each ip once */
	size_t nbranch;
	struct hot_target *target; /* sorted by (from, to), each pair once */
	size_t ntarget;
	double total;        /* sum of the weights of ip[] */
	uint64_t samples;    /* op samples merged (0 for a truth) */
	uint64_t unresolved; /* of those, branches whose instruction could not be read,
	                      * so neither branch[] nor target[] has them (see above) */
};

/* The op samples of process pid in the perf.data at path (pid 0: the process
 * with the most op samples), merged. 0, or a negative pmusim_err with a one-line
 * reason in msg (PMUSIM_ERR_FORMAT: not a perf.data, no ibs_op event, or no op
 * sample of that process). */
int hot_code_from_ops(const char *path, uint32_t pid, struct hot_code **out, char *msg,
                      size_t msglen);

/* The exact counts of a truth JSON (pmusim run --truth-json) of the program pmusim
 * started. 0, or a negative pmusim_err with a reason in msg. total is the truth's
 * "instructions" where every execution of a block ran to its end; a block's
 * "executions" counts its entries, so an execution cut short by a fault adds the
 * instructions after the fault too (`signals`: 4 more than its 10,042,459; the JSON
 * does not say where runs were cut). A block's instructions
 * are consecutive from its start, so their addresses come from decoding the
 * program's file (the truth's "program", placed at the truth's "load_bias"; a
 * truth without one, written before it, by where its "functions" put the file's
 * symbols, which a stripped PIE does not have): PMUSIM_ERR_UNSUPPORTED
 * when a block lies outside that file (a shared library's code: give the code
 * with hot_code_from_truth_code), PMUSIM_ERR_FORMAT when a block is longer than
 * the code at its start. */
int hot_code_from_truth(const char *path, struct hot_code **out, char *msg, size_t msglen);

/* The same with the code given (not owned): a recording's process code
 * (profiler/proc_code.h) holds the shared libraries a dynamic program ran too. */
struct binary;
int hot_code_from_truth_code(const char *path, struct binary *code, struct hot_code **out,
                             char *msg, size_t msglen);

/* The code hot_code_from_truth decodes a truth's blocks from: the truth's program,
 * placed as hot_code_from_truth places it, for a selector that explores that
 * code (profiler/region_cfg.h). 0 with *out set (free with binary_free), or a
 * negative pmusim_err with a one-line reason in msg. */
int hot_code_truth_binary(const char *path, struct binary **out, char *msg, size_t msglen);

void hot_code_free(struct hot_code *h);

/* Hot code made sample by sample (a live rewriter's window of op samples; the
 * program's addresses): hot_build_sample adds one sample of weight w at ip — a
 * conditional branch (cond) that went its taken way or not, or an indirect branch
 * that went to target (0: none known) — as hot_code_from_ops merges a recording's.
 * hot_build_finish hands over the merged record (NULL when out of memory) and frees b. */
struct hot_build;
int hot_build_new(struct hot_build **out);
int hot_build_sample(struct hot_build *b, uint64_t ip, double w, int cond, int taken, uint64_t target);
uint64_t hot_build_samples(const struct hot_build *b);
struct hot_code *hot_build_finish(struct hot_build *b);
void hot_build_free(struct hot_build *b);

/* The weight on ip, 0 when none. */
double hot_code_weight(const struct hot_code *h, uint64_t ip);

#endif
