/* The fuzzer's input as a file, for readers that take a path: one memfd per
 * process, rewritten for each input and named by its /proc/self/fd path (a
 * regular file, as the readers require). */
#ifndef PMUSIM_TESTS_FUZZ_FUZZ_FILE_H
#define PMUSIM_TESTS_FUZZ_FUZZ_FILE_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

static const char *fuzz_file(const uint8_t *data, size_t size)
{
	static int fd = -1;
	static char path[64];
	if (fd < 0) {
		fd = memfd_create("fuzz-input", MFD_CLOEXEC);
		if (fd < 0) {
			perror("memfd_create");
			abort(); /* the harness cannot run at all */
		}
		snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	}
	if (ftruncate(fd, 0) != 0)
		abort();
	for (size_t done = 0; done < size;) {
		ssize_t n = pwrite(fd, data + done, size - done, (off_t)done);
		if (n <= 0)
			abort();
		done += (size_t)n;
	}
	return path;
}

#endif
