/* valgrind lackey as a reference for single dynamic instructions: runs a program under
 * `valgrind --tool=lackey --trace-mem=yes --vex-guest-chase=no --vgdb=no
 * --vex-iropt-level=0`, reads its
 * trace from a pipe as it is written (never kept whole: ibs_ops' 20 million
 * instructions print 30 million lines, 432 MB) and hands out instruction records by
 * their 1-based dynamic number. It shares nothing with pmusim: Valgrind's own decoder
 * (VEX) and lackey's instrumentation decide every address and size.
 * tests/e2e/check_lackey_ref.c proves it against the CPU under ptrace on
 * workloads/ibs_ops. Speed on a 2-core EPYC VM: 1.1 million instructions per second
 * (ibs_ops' default 20 million: 18 s), under 0.1 s to start.
 *
 * Why --vex-guest-chase=no: by default VEX 3.19 chases conditional branches, running
 * the code after one speculatively and selecting its results with ITE; lackey's calls
 * for those instructions are not guarded, so their I lines (and accesses) are printed
 * whether or not they ran. On ibs_ops every 3-round loop (add, dec, jnz) printed 4
 * rounds, 3 instructions too many per iteration, lackey's own "guest instrs" count
 * agreeing with the wrong trace. Without chasing, every superblock ends at a branch
 * and the trace equals the CPU's, instruction for instruction.
 *
 * Why --vex-iropt-level=0: VEX's IR optimiser drops a load whose result is dead, and
 * lackey instruments the optimised IR, so such an access was missing from the trace:
 * ibs_ops' `pop rcx` (rcx is overwritten before it is read) printed its I line and no
 * " L" line, although the CPU reads the stack slot. At level 0 the only change to
 * ibs_ops' trace is that L line (checked on a whole run of N = 4); the speed is the
 * same.
 *
 * What lackey prints (valgrind 3.19, lackey/lk_main.c, checked on workloads/ibs_ops;
 * the trace goes to --log-fd, the program's own stdout and stderr stay its own):
 *   "I  %08lx,%lu"   an instruction: guest address (at least 8 hex digits) and length
 *   " L %08lx,%lu"   a load: address and size in bytes (1 to 512)
 *   " S %08lx,%lu"   a store
 *   " M %08lx,%lu"   a load and a store of the same size at the same address within
 *                    one instruction, merged ("add qword ptr [mem], 1", lock cmpxchg)
 *   "==PID== ..."    valgrind's messages: its banner before the trace and lackey's
 *                    counts after it (among them "guest instrs:  N", N with commas);
 *                    "--PID--" and "**PID**" lines are valgrind's too. All skipped;
 *                    the count is checked against the I lines read.
 * Each instruction's data accesses follow its I line, before the next I line, in the
 * order VEX's IR makes them; a load and a store at different addresses stay two lines,
 * the load first where the instruction reads before it writes: `call [mem]` is
 * " L slot,8" then " S rsp-8,8"; push is " S rsp-8,8"; pop, ret and leave are " L";
 * movdqu/movaps are one access of 16 bytes. Lackey prints an instruction's lines when
 * its superblock reaches a side exit or its end (they are buffered four events at a
 * time), so the order is exact but a program killed by a fault loses the lines of its
 * last few instructions. The first I line is the program's first instruction (for a
 * static program, _start: no loader runs before it); `syscall` is one instruction. A
 * REP string instruction prints an I line per iteration, with that iteration's
 * accesses, and one more without any when the count reaches 0 (rep movsb with RCX = 5:
 * 6 I lines), so lackey's numbers equal retired-instruction numbers on REP-free code
 * only (ibs_ops is REP-free).
 *
 * How an op-sampling test compares a sample of pmusim with a lackey record:
 *   ip        equal.
 *   number    record n is the n-th instruction the program retires, counted from its
 *             first instruction as pmusim counts (op sample i of period P in "op mode"
 *             without randomisation: record i * P).
 *   branch    taken iff next_ip != ip + size (for a branch instruction); its target is
 *             next_ip when taken.
 *   load      an 'L' or an 'M' access; store: an 'S' or an 'M' access.
 *   width     the access's size.
 *   address   equal for addresses outside the stack; for stack addresses, equal as
 *             offsets from the run's initial RSP (valgrind and pmusim place the stack
 *             differently): workloads/ibs_ops prints its initial RSP as its first
 *             stdout line, so each run's offset is address - that value (give
 *             lackey_pick_out a stdout_path to read lackey's run's line).
 *   inputs    the same program and arguments retire the same instructions in both,
 *             but their environments differ, so accesses to the bytes of argv and envp
 *             are at different offsets: compare samples of the program's own work. */
#ifndef PMUSIM_TESTS_E2E_LACKEY_REF_H
#define PMUSIM_TESTS_E2E_LACKEY_REF_H

#include <stddef.h>
#include <stdint.h>

/* Accesses kept per instruction (ibs_ops' instructions make at most 2; naccesses
 * counts every line lackey printed, kept or not). */
#define LACKEY_MAX_ACCESSES 8

struct lackey_access {
	uint64_t addr;
	uint32_t size; /* bytes */
	char type;     /* 'L', 'S' or 'M' */
};

struct lackey_insn {
	uint64_t n; /* dynamic number: 1 for the first I line */
	uint64_t ip;
	uint64_t next_ip;   /* ip of the next I line; 0 for the last instruction */
	uint32_t size;      /* length in bytes */
	uint32_t naccesses; /* lines lackey printed for it; access[] keeps the first 8 */
	struct lackey_access access[LACKEY_MAX_ACCESSES];
};

/* Called for every instruction in order, once its record is complete; a non-zero
 * return stops the run (valgrind is killed). */
typedef int (*lackey_visit_fn)(const struct lackey_insn *insn, void *ctx);

struct lackey_end {
	uint64_t total; /* I lines read */
	int status;     /* valgrind's exit status (the program's), 128+N when killed by signal N */
	int stopped;    /* the visitor stopped the run: total counts what was read until then */
	char stderr_line[160]; /* the first line valgrind or the program wrote to stderr */
};

/* Runs argv (NULL-terminated; argv[0] found on PATH as execvp does) under lackey with
 * the program's standard output to stdout_path (NULL: /dev/null) and calls visit (may
 * be NULL) for every instruction. Returns 0 with *end filled, or -1 with a one-line
 * reason in msg (valgrind missing or failing, a line of the trace it does not know,
 * lackey's own instruction count differing from the I lines read). A program that
 * exits non-zero is not an error here: end->status says it. */
int lackey_walk(const char *const argv[], const char *stdout_path, lackey_visit_fn visit, void *ctx,
                struct lackey_end *end, char *msg, size_t msglen);

/* Fills out[i] with the record of instruction want[i], for nwant wanted numbers in
 * ascending order (1-based; repeats allowed). Returns 0, or -1 with a reason in msg:
 * want not ascending or 0, a number past the run's last instruction, the program not
 * exiting with status 0, or any failure of lackey_walk. */
int lackey_pick(const char *const argv[], const uint64_t *want, size_t nwant,
                struct lackey_insn *out, char *msg, size_t msglen);

/* lackey_pick with the program's standard output written to stdout_path (NULL:
 * discarded), for the initial RSP that workloads/ibs_ops prints. */
int lackey_pick_out(const char *const argv[], const char *stdout_path, const uint64_t *want,
                    size_t nwant, struct lackey_insn *out, char *msg, size_t msglen);

/* The number of instructions the program retires under lackey (its exit status must
 * be 0), or -1 with a reason in msg. */
int64_t lackey_count(const char *const argv[], char *msg, size_t msglen);

#endif
