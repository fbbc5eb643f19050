/* Address-space requests far larger than anything that exists: brk of +16 and +64 TiB,
 * mmap of 16 TiB readable and 64 TiB reserved, mprotect and munmap of the reservation,
 * and munmap of every other page of a large area (each hole one more area). Each must
 * be answered at once (ENOMEM, or done when it costs nothing); prints "name=result". */
#define _GNU_SOURCE
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define TIB (1ULL << 40)

static const char *res(long r)
{
	return r < 0 && errno == ENOMEM ? "ENOMEM" : r < 0 ? strerror(errno) : "done";
}

int main(void)
{
	setvbuf(stdout, NULL, _IOLBF, 0);
	unsigned long cur = (unsigned long)syscall(SYS_brk, 0);
	unsigned long got = (unsigned long)syscall(SYS_brk, cur + 16 * TIB);
	printf("brk_16TiB=%s\n", got == cur + 16 * TIB ? "done" : "refused");
	got = (unsigned long)syscall(SYS_brk, cur + 64 * TIB);
	printf("brk_64TiB=%s\n", got == cur + 64 * TIB ? "done" : "refused");
	void *p = mmap(NULL, 16 * TIB, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	printf("mmap_16TiB_readable=%s\n", p == MAP_FAILED ? res(-1) : "done");
	if (p != MAP_FAILED)
		munmap(p, 16 * TIB);
	void *r = mmap(NULL, 64 * TIB, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	printf("mmap_64TiB_reserved=%s\n", r == MAP_FAILED ? res(-1) : "done");
	if (r != MAP_FAILED) {
		errno = 0;
		printf("mprotect_64TiB=%s\n", res(mprotect(r, 64 * TIB, PROT_READ | PROT_WRITE)));
		printf("munmap_64TiB=%s\n", res(munmap(r, 64 * TIB)));
	}
	size_t pages = 16384; /* 64 MiB */
	char *a = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	printf("mmap_64MiB=%s\n", a == MAP_FAILED ? res(-1) : "done");
	size_t holes = 0;
	long last = 0;
	for (size_t i = 1; a != MAP_FAILED && i < pages; i += 2) {
		if ((last = munmap(a + i * 4096, 4096)) < 0)
			break;
		holes++;
	}
	printf("munmap_holes_until=%s\n", last < 0 ? res(last) : "all made");
	printf("holes_at_least_1000=%d\n", holes >= 1000);
	return 0;
}
