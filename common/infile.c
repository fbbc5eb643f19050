/* Opening input files: regular files only, without blocking on a FIFO
 * (infile.h). open(2) on a FIFO with O_NONBLOCK returns at once even without
 * a writer (fifo(7)); fstat then tells what the name is. */
#include "common/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int infile_open(const char *path, const char **why)
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
	int fl = fcntl(fd, F_GETFL);
	if (!S_ISREG(st.st_mode) || fl < 0 || fcntl(fd, F_SETFL, fl & ~O_NONBLOCK) < 0) {
		int e = S_ISREG(st.st_mode) ? errno : EINVAL;
		close(fd);
		if (why)
			*why = S_ISREG(st.st_mode) ? strerror(e) : "not a regular file";
		errno = e;
		return -1;
	}
	return fd;
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
