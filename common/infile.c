/* Opening input files: regular files only, without blocking on a FIFO
 * (infile.h). open(2) on a FIFO with O_NONBLOCK returns at once even without
 * a writer (fifo(7)); fstat then tells what the name is. */
#include "common/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static int open_typed(const char *path, const char **why, int pipes)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) != 0) {
		int e = errno;
		if (fd >= 0)
			close(fd);
		if (why)
			*why = strerror(e);
		errno = e;
		return -1;
	}
	int ok = S_ISREG(st.st_mode) || (pipes && S_ISFIFO(st.st_mode));
	int fl = ok ? fcntl(fd, F_GETFL) : -1;
	if (!ok || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = ok ? errno : EINVAL;
		close(fd);
		if (why)
			*why = ok ? strerror(e) : pipes ? "not a regular file or pipe" : "not a regular file";
		errno = e;
		return -1;
	}
	return fd;
}

int infile_open(const char *path, const char **why)
{
	return open_typed(path, why, 0);
}

int infile_open_or_pipe(const char *path, const char **why)
{
	return open_typed(path, why, 1);
}

FILE *infile_fopen(const char *path, const char **why)
{
	int fd = infile_open(path, why);
	if (fd < 0)
		return NULL;
	FILE *f = fdopen(fd, "r");
	if (!f) {
		int e = errno;
		close(fd);
		if (why)
			*why = strerror(e);
		errno = e;
	}
	return f;
}
