/* The ptrace references' common part: failing, starting the program traced (fork, a
 * pipe that holds the child until the tracer is attached, execv) and planting INT3s
 * through /proc/PID/mem (proc(5)). */
#include "tests/ref/ptrace_common.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/personality.h>
#include <sys/ptrace.h>
#include <unistd.h>

static const char *fatal_tool = "ptrace";
static void (*fatal_hook)(void);

void ref_fatal_init(const char *tool, void (*at_fatal)(void))
{
	fatal_tool = tool;
	fatal_hook = at_fatal;
}

void ref_fatal(const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", fatal_tool);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	if (fatal_hook)
		fatal_hook();
	exit(REF_TOOL_FAILED);
}

int ref_is_fixed_exec(const char *path)
{
	unsigned char h[18];
	FILE *f = fopen(path, "rb");
	if (!f)
		return 0;
	size_t n = fread(h, 1, sizeof(h), f);
	fclose(f);
	return n == sizeof(h) && memcmp(h, "\177ELF", 4) == 0 && h[16] == 2 && h[17] == 0;
}

/* This process (and the children it forks) on the CPU it runs on. */
static void share_one_cpu(void)
{
	int cpu = sched_getcpu();
	cpu_set_t set;
	CPU_ZERO(&set);
	if (cpu >= 0) {
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof(set), &set); /* only speed depends on it */
	}
}

void ref_spawn(char *const argv[], long ptrace_opts, int one_cpu, pid_t *pid)
{
	if (!ref_is_fixed_exec(argv[0]))
		ref_fatal("%s: not a static non-PIE ELF program (type EXEC)", argv[0]);
	if (one_cpu)
		share_one_cpu();
	int go[2];
	if (pipe(go) < 0)
		ref_fatal("pipe: %s", strerror(errno));
	pid_t child = fork();
	if (child < 0)
		ref_fatal("fork: %s", strerror(errno));
	if (child == 0) {
		char c;
		close(go[1]);
		if (read(go[0], &c, 1) != 0) /* end of file: the tracer is attached */
			_exit(126);
		close(go[0]);
		personality((unsigned long)personality(0xffffffff) | ADDR_NO_RANDOMIZE);
		execv(argv[0], argv);
		_exit(127);
	}
	close(go[0]);
	*pid = child;
	if (ptrace(PTRACE_SEIZE, child, 0, (void *)ptrace_opts) < 0)
		ref_fatal("PTRACE_SEIZE: %s", strerror(errno));
	close(go[1]);
}

void ref_poke(int mem, uint64_t addr, uint8_t byte)
{
	if (pwrite(mem, &byte, 1, (off_t)addr) != 1)
		ref_fatal("cannot write the program's code at %#" PRIx64 ": %s", addr,
		          strerror(errno));
}

int ref_instrument(pid_t pid, struct site_table *t)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	int mem = open(path, O_RDWR | O_CLOEXEC);
	if (mem < 0)
		ref_fatal("%s: %s", path, strerror(errno));
	for (size_t i = 0; i < t->nsites; i++) {
		struct site *s = &t->sites[i];
		if (pread(mem, &s->orig, 1, (off_t)s->addr) != 1)
			ref_fatal("cannot read the program's code at %#" PRIx64, s->addr);
		ref_poke(mem, s->addr, REF_INT3);
	}
	return mem;
}

int ref_args(int argc, char **argv, const char **out, const char **own, char ***prog)
{
	int i = 1;
	*out = NULL;
	if (i + 1 < argc && strcmp(argv[i], "-o") == 0) {
		*out = argv[i + 1];
		i += 2;
	}
	if (i + 2 >= argc || strcmp(argv[i + 1], "--") != 0)
		return -1;
	*own = argv[i];
	*prog = &argv[i + 2];
	return 0;
}
