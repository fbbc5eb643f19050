/* perf's options that pmusim refuses on purpose, each with its reason and
 * what to do instead, so that a perf user's habit gets one line that says why
 * rather than "unknown option". */
#ifndef PMUSIM_CLI_PERF_REFUSALS_H
#define PMUSIM_CLI_PERF_REFUSALS_H

/* Prints, for an option getopt did not take (arg: argv's word, e.g. "-a",
 * "--cpu=0", "-C0") of command cmd ("pmusim record"), one line to stderr: the
 * reason when it is one of perf's options pmusim refuses, else "unknown or
 * incomplete option". */
void cli_unknown_option(const char *cmd, const char *arg);

/* The reason perf's option arg is refused by cmd, or NULL when it is not one. */
const char *perf_refusal(const char *cmd, const char *arg);

#endif
