/* libFuzzer harness of the BOLT fdata reader: fdata_parse_line on every line,
 * then fdata_read_edges (the truth of pmusim validate) against a real program
 * (FUZZ_DEFAULT_PROGRAM), so that "1 name off" lines can name real symbols and
 * edges fall on real code; then the overlap of the edges with themselves. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/fdata.h"
#include "profiler/binary.h"
#include "profiler/edges.h"
#include "profiler/validate.h"
#include "tests/fuzz/fuzz_file.h"
#include "tests/fuzz/fuzz_program.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct binary *bin;

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc, (void)argv;
	bin = fuzz_program_open("fuzz_fdata");
	return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	volatile double sink = 0;
	char *text = malloc(size + 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	text[size] = 0;
	for (char *line = text, *next; line; line = next) {
		next = strchr(line, '\n');
		if (next)
			*next++ = 0;
		struct fdata_line fl;
		if (fdata_parse_line(line, &fl) == 0)
			sink += fl.count + (double)fl.mispreds + (double)strlen(fl.key);
	}
	free(text);

	struct edges *e = edges_new();
	if (!e)
		return 0;
	size_t unknown;
	char msg[512];
	if (fdata_read_edges(fuzz_file(data, size), bin, e, &unknown, msg, sizeof(msg)) == 0) {
		size_t n;
		const struct edge *s = edges_sorted(e, &n);
		for (size_t i = 0; i < n; i++)
			sink += s[i].w + edge_is_taken(&s[i]) + edge_is_call(&s[i]);
		struct overlap o;
		overlap_compute(e, e, &o);
		sink += o.all + o.taken + o.calls + o.hot_max_rel_err;
	}
	edges_free(e);
	(void)sink;
	return 0;
}
