/* The parts the ptrace references (ptrace_edges, ptrace_rep) have in common: how a
 * tool fails, how the program is started under ptrace and how its code gets an INT3 on
 * every site. Like the tools, it shares no code with pmusim. */
#ifndef TESTS_REF_PTRACE_COMMON_H
#define TESTS_REF_PTRACE_COMMON_H

#include <stdint.h>
#include <sys/types.h>

#include "tests/ref/objdump_sites.h"

#define REF_TOOL_FAILED 125 /* the tools' exit status when they, not the program, failed */
#define REF_INT3 0xcc

/* Names the tool in ref_fatal's messages; at_fatal (may be NULL) runs before the exit,
 * to end the program when it still runs. Call once, first. */
void ref_fatal_init(const char *tool, void (*at_fatal)(void));

/* Prints "TOOL: message" and a newline to stderr, calls at_fatal, exits REF_TOOL_FAILED. */
_Noreturn void ref_fatal(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* Whether path is an ELF of type EXEC (bytes 16-17 of the header, little-endian): its
 * code runs at the addresses of the file. A PIE's would move by its load bias. */
int ref_is_fixed_exec(const char *path);

/* Forks argv[0] (with argv, this process's environment and address randomisation off),
 * attached with PTRACE_SEIZE and ptrace_opts before its execve: the exec is its first
 * stop. With one_cpu, this process and so the program are first pinned to the CPU this
 * process runs on. *pid is set as soon as the child exists (before the seize, so that
 * at_fatal can end it). ref_fatal when argv[0] is not a fixed EXEC or a step fails. */
void ref_spawn(char *const argv[], long ptrace_opts, int one_cpu, pid_t *pid);

/* Writes one byte of the program's code through mem (its /proc/PID/mem). */
void ref_poke(int mem, uint64_t addr, uint8_t byte);

/* After the program's exec: opens /proc/PID/mem read-write and puts an INT3 on every
 * site of t, each site's original byte kept in its orig. Returns the descriptor. */
int ref_instrument(pid_t pid, struct site_table *t);

/* Parses "[-o OUT] OWN -- PROG [ARG...]": 0 with *out (NULL: stdout), *own and *prog
 * (PROG's argv, NULL-terminated) set, -1 when argv is not that. */
int ref_args(int argc, char **argv, const char **out, const char **own, char ***prog);

#endif
