/* syscalls: file I/O (only on a path given as argv[1]), lseek, fstat, uname,
 * clock_gettime, mmap/munmap/mprotect, malloc (brk and mmap), getrandom.
 * FACTS: prints a fixed summary (no times, pids or random values); exit 0. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	struct utsname u;
	uname(&u);
	printf("sysname=%s\n", u.sysname);
	struct timespec t1, t2;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	clock_gettime(CLOCK_MONOTONIC, &t2);
	printf("monotonic=%s\n", (t2.tv_sec > t1.tv_sec || (t2.tv_sec == t1.tv_sec && t2.tv_nsec >= t1.tv_nsec)) ? "yes" : "no");
	char *m = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	m[12345] = 7;
	printf("mmap=%d protect=%d\n", m[12345], mprotect(m, 4096, PROT_READ));
	printf("munmap=%d\n", munmap(m, 1 << 20));
	char *small = malloc(100), *large = malloc(1 << 22);
	memset(large, 3, 1 << 22);
	printf("malloc=%d\n", small && large && large[(1 << 22) - 1] == 3);
	free(large);
	free(small);
	unsigned char r[32];
	printf("random=%zd\n", getrandom(r, sizeof r, 0));
	if (argc > 1) {
		int fd = open(argv[1], O_CREAT | O_TRUNC | O_RDWR, 0600);
		write(fd, "hello file\n", 11);
		struct stat st;
		fstat(fd, &st);
		lseek(fd, 6, SEEK_SET);
		char buf[16] = {0};
		read(fd, buf, 4);
		close(fd);
		unlink(argv[1]);
		printf("size=%ld read=%s\n", (long)st.st_size, buf);
	}
	return 0;
}
