/* The program a fuzzer's input names symbols and addresses in: $FUZZ_PROGRAM, else the
 * static musl workload that make fuzz builds (126 symbols: a lookup table per input
 * stays cheap), else the harness itself. Opened once, in LLVMFuzzerInitialize. */
#ifndef PMUSIM_TESTS_FUZZ_FUZZ_PROGRAM_H
#define PMUSIM_TESTS_FUZZ_FUZZ_PROGRAM_H

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "profiler/binary.h"

#define FUZZ_DEFAULT_PROGRAM "build/workloads/musl_hello"

/* The program, or abort (the harness cannot run without it); harness names it in the message. */
static struct binary *fuzz_program_open(const char *harness)
{
	struct binary *bin;
	char msg[512];
	const char *prog = getenv("FUZZ_PROGRAM");
	if (!prog || !prog[0])
		prog = access(FUZZ_DEFAULT_PROGRAM, R_OK) == 0 ? FUZZ_DEFAULT_PROGRAM : "/proc/self/exe";
	if (binary_open(prog, 0, &bin, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "%s: %s\n", harness, msg);
		abort();
	}
	return bin;
}

#endif
