/* posix_spawn as make and Python use it: glibc's child shares its parent's memory
 * (clone CLONE_VM|CLONE_VFORK) and reports a failed exec there. Facts a test relies on:
 * the output is the same natively and under pmusim (ENOENT reported, echo spawned). */
#include <spawn.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
extern char **environ;
int main(void) {
  pid_t pid; char *argv[] = {"x", NULL};
  int r = posix_spawn(&pid, "/nonexistent/prog", NULL, NULL, argv, environ);
  printf("spawn /nonexistent: %s\n", r ? strerror(r) : "0");
  char *argv2[] = {"/bin/echo", "spawned echo", NULL};
  r = posix_spawn(&pid, "/bin/echo", NULL, NULL, argv2, environ);
  int st = 0; waitpid(pid, &st, 0);
  printf("spawn echo: %d, status %d\n", r, WEXITSTATUS(st));
  r = posix_spawnp(&pid, "no-such-command-here", NULL, NULL, argv, environ);
  printf("spawnp: %s\n", r ? strerror(r) : "0");
  return 0; }
