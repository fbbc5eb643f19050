/* libFuzzer harness of the readers of pmusim's truth JSON (run --truth-json):
 * the call-stack snapshots (stack_truth_read), the CPI units by function, block
 * and instruction (cpi_truth_read), the REP sites (rep_truth_read) and the exact
 * instruction counts of hot_code_from_truth_code, which decodes the truth's
 * blocks from a real program placed as the code (FUZZ_DEFAULT_PROGRAM: the
 * corpus's truths of it fall on its instructions, mutated ones on other bytes,
 * as in a mismatched run). */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "profiler/binary.h"
#include "profiler/cpi_check.h"
#include "profiler/hot_code.h"
#include "profiler/rep_report.h"
#include "profiler/stack_check.h"
#include "tests/fuzz/fuzz_file.h"

/* The program the input's names and addresses are resolved in: $FUZZ_PROGRAM, else
 * the static musl workload that make fuzz builds (126 symbols: a lookup table per
 * input stays cheap), else the harness itself. */
#define FUZZ_DEFAULT_PROGRAM "build/workloads/musl_hello"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct binary *bin;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	char msg[512];
	const char *prog = getenv("FUZZ_PROGRAM");
	if (!prog || !prog[0])
		prog = access(FUZZ_DEFAULT_PROGRAM, R_OK) == 0 ? FUZZ_DEFAULT_PROGRAM : "/proc/self/exe";
	if (binary_open(prog, 0, &bin, msg, sizeof(msg)) != 0) {
		fprintf(stderr, "fuzz_truth: %s\n", msg);
		abort();
	}
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	volatile double sink = 0;
	char msg[512];

	struct stack_set ss;
	memset(&ss, 0, sizeof(ss));
	if (stack_truth_read(path, &ss, msg, sizeof(msg)) == 0)
		sink += (double)ss.n + (double)ss.nrets;
	stack_set_free(&ss);

	static const enum cpi_unit units[] = {CPI_BY_FUNCTION, CPI_BY_BLOCK, CPI_BY_INSN};
	for (size_t u = 0; u < sizeof(units) / sizeof(units[0]); u++) {
		struct cpi_truth_unit *cu = NULL;
		size_t n = 0;
		double total = 0;
		if (cpi_truth_read(path, units[u], &cu, &n, &total, msg, sizeof(msg)) == 0) {
			for (size_t i = 0; i < n; i++)
				sink += cu[i].insns + cu[i].cycles + (double)strlen(cu[i].name);
			free(cu);
		}
	}

	struct rep_row *rows = NULL;
	size_t nrows = 0;
	if (rep_truth_read(path, &rows, &nrows, msg, sizeof(msg)) == 0) {
		for (size_t i = 0; i < nrows; i++)
			sink += (double)strlen(rows[i].symbol) + (double)strlen(rows[i].insn);
		free(rows);
	}

	struct hot_code *h;
	if (hot_code_from_truth_code(path, bin, &h, msg, sizeof(msg)) == 0)
		hot_code_free(h);
	(void)sink;
	return 0;
}
