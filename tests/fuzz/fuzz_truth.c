/* libFuzzer harness of the readers of pmusim's truth JSON (run --truth-json):
 * the call-stack snapshots (stack_truth_read), the CPI units by function, block
 * and instruction (cpi_truth_read), the REP sites (rep_truth_read) and the exact
 * instruction counts of hot_code_from_truth_code, which decodes the truth's
 * blocks from a real program placed as the code (FUZZ_DEFAULT_PROGRAM: the
 * corpus's truths of it fall on its instructions, mutated ones on other bytes,
 * as in a mismatched run). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/binary.h"
#include "profiler/cpi_check.h"
#include "profiler/hot_code.h"
#include "profiler/rep_report.h"
#include "profiler/stack_check.h"
#include "tests/fuzz/fuzz_file.h"
#include "tests/fuzz/fuzz_program.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct binary *bin;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	bin = fuzz_program_open("fuzz_truth");
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
