/* Subcommands of the pmusim front end. Each parses its own options and returns
 * the process exit status. Exit statuses: the guest's own status for `run`
 * (128+signal when it dies of one), 2 for pmusim's errors (bad options, bad
 * files, unsupported programs), 1 for a failed check. */
#ifndef PMUSIM_CLI_CLI_H
#define PMUSIM_CLI_CLI_H

#define EXIT_PMUSIM_ERROR 2

/* What an option parser returns when it printed what was asked instead of a run
 * (--help, stat -e list): the command then ends with status 0. Parsers never
 * exit, so that they can be tested and fuzzed. Option callbacks return it too. */
#define CLI_HELP 2

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

/* Parse-only entry points: each command's own parser fills its options from
 * argv (argv[0] the command's name) and checks them as the command does, then
 * frees them; nothing runs, no output file is opened and no input read (only
 * the program to run is looked up in PATH and its first line read, as the
 * command does). 0, CLI_HELP (usage printed on stdout) or -1 (one line on
 * stderr). The commands parse through the same functions. */
int cmd_run_parse(int argc, char **argv);
int cmd_stat_parse(int argc, char **argv);
int cmd_record_parse(int argc, char **argv);
int cmd_script_parse(int argc, char **argv);
int cmd_report_parse(int argc, char **argv);
int cmd_validate_parse(int argc, char **argv);
int cmd_diff_parse(int argc, char **argv);
int cmd_uniformity_parse(int argc, char **argv);

#endif
