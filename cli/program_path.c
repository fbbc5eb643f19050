/* Finding the program to run (see cli/program_path.h). The "#!" line's layout is the
 * kernel's (fs/binfmt_script.c): interpreter, then at most one argument, the rest of the
 * line; the script's path follows, then the original arguments after argv[0]. */
#include "cli/program_path.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/infile.h"
#include "common/shebang.h"

#define MAX_INTERP_DEPTH 4

/* 0 when path is a regular file this user may execute, else the kernel's errno. */
static int executable(const char *path)
{
	struct stat st;
	if (stat(path, &st) != 0)
		return errno;
	if (!S_ISREG(st.st_mode) || access(path, X_OK) != 0)
		return EACCES;
	return 0;
}

/* execvp's search: the first executable candidate; EACCES when one exists but cannot
 * run and none can, else ENOENT. */
static int search_path(const char *name, char *const *envp, char *out, size_t len)
{
	const char *path = "/bin:/usr/bin";
	for (char *const *e = envp; e && *e; e++)
		if (strncmp(*e, "PATH=", 5) == 0)
			path = *e + 5;
	int seen_eacces = 0;
	for (const char *p = path;; p += strcspn(p, ":") + 1) {
		size_t n = strcspn(p, ":");
		/* an empty entry is the current directory */
		snprintf(out, len, "%.*s%s%s", (int)n, p, n ? "/" : "", name);
		int e = executable(out);
		if (e == 0)
			return 0;
		seen_eacces |= e == EACCES;
		if (!p[n])
			break;
	}
	return seen_eacces ? EACCES : ENOENT;
}

/* The "#!" line of path (common/shebang.h): 1 with interp and arg filled, 0 for none,
 * or -errno. */
static int shebang(const char *path, char *interp, size_t ilen, char *arg, size_t alen)
{
	int fd = infile_open(path, NULL);
	if (fd < 0)
		return -errno;
	char h[256];
	ssize_t n = read(fd, h, sizeof(h) - 1);
	close(fd);
	if (n < 0)
		return -EIO;
	int script = shebang_parse(h, (size_t)n, interp, ilen, arg, alen);
	return script < 0 ? -ENOEXEC : script;
}

static char **copy_argv(char *const *argv, size_t extra_front)
{
	size_t n = 0;
	while (argv[n])
		n++;
	char **v = calloc(n + extra_front + 1, sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (!(v[extra_front + i] = strdup(argv[i]))) {
			program_path_free(NULL, v);
			return NULL;
		}
	return v;
}

int program_path_resolve(char *const *argv, char *const *envp, char **path, char ***out_argv)
{
	char file[PATH_MAX];
	*path = NULL;
	*out_argv = NULL;
	int e = strchr(argv[0], '/') ? executable(argv[0]) : search_path(argv[0], envp, file, sizeof(file));
	if (e)
		return e;
	if (strchr(argv[0], '/'))
		snprintf(file, sizeof(file), "%s", argv[0]);
	char **v = copy_argv(argv, 0);
	if (!v)
		return ENOMEM;
	for (int depth = 0;; depth++) {
		char interp[PATH_MAX], arg[PATH_MAX];
		int r = shebang(file, interp, sizeof(interp), arg, sizeof(arg));
		if (r < 0) {
			program_path_free(NULL, v);
			return -r;
		}
		if (r == 0)
			break;
		if (depth == MAX_INTERP_DEPTH || (e = executable(interp)) != 0) {
			program_path_free(NULL, v);
			return depth == MAX_INTERP_DEPTH ? ELOOP : e;
		}
		/* interp [arg] script args-after-argv[0] */
		size_t front = arg[0] ? 3 : 2;
		char **nv = copy_argv(v + 1, front);
		if (!nv || !(nv[0] = strdup(interp)) || (arg[0] && !(nv[1] = strdup(arg))) ||
		    !(nv[front - 1] = strdup(file))) {
			program_path_free(NULL, nv);
			program_path_free(NULL, v);
			return ENOMEM;
		}
		program_path_free(NULL, v);
		v = nv;
		snprintf(file, sizeof(file), "%s", interp);
	}
	if (!(*path = strdup(file))) {
		program_path_free(NULL, v);
		return ENOMEM;
	}
	*out_argv = v;
	return 0;
}

void program_path_free(char *path, char **argv)
{
	free(path);
	for (size_t i = 0; argv && argv[i]; i++)
		free(argv[i]);
	free(argv);
}
