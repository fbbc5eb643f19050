/* Subcommands of the pmusim front end. Each parses its own options and returns
 * the process exit status. Exit statuses: the guest's own status for `run`
 * (128+signal when it dies of one), 2 for pmusim's errors (bad options, bad
 * files, unsupported programs), 1 for a failed check. */
#ifndef PMUSIM_CLI_CLI_H
#define PMUSIM_CLI_CLI_H

#define EXIT_PMUSIM_ERROR 2

int cmd_run(int argc, char **argv);
int cmd_stat(int argc, char **argv);
int cmd_diff(int argc, char **argv);
int cmd_record(int argc, char **argv);
int cmd_script(int argc, char **argv);
int cmd_report(int argc, char **argv);
int cmd_validate(int argc, char **argv);
int cmd_uniformity(int argc, char **argv);
int cmd_list(int argc, char **argv);

/* Checks a `pmusim record` command line (argv[0] "record", options, PROG and
 * its arguments) without running anything: 0, or -1 with one line printed on
 * stderr that names cmd. */
int record_check_args(int argc, char **argv, const char *cmd);

#endif
