/* Which file runs for `pmusim run -- NAME ARGS`, as execvp(3) and the kernel's execve
 * decide: a NAME without a slash is looked up in the program's PATH; only a regular file
 * with execute permission runs; a "#!" script runs through its interpreter with the
 * script's path as an argument (interpreters of interpreters up to 4 deep). */
#ifndef PMUSIM_CLI_PROGRAM_PATH_H
#define PMUSIM_CLI_PROGRAM_PATH_H

/* The file to load and the argv it gets, resolved from argv[0] (as given) and the
 * program's environment envp (its PATH; "/bin:/usr/bin" without one, as glibc).
 * 0, with *path and *out_argv allocated (free with program_path_free); or an errno
 * value (ENOENT, EACCES, ENOEXEC, ELOOP, ENOMEM) for the message. */
int program_path_resolve(char *const *argv, char *const *envp, char **path, char ***out_argv);
void program_path_free(char *path, char **argv);

#endif
