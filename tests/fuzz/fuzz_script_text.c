/* libFuzzer harness of the perf script text reader (profiler/script_text.h):
 * every record of the input, through the stream entry point. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "profiler/perfdata.h"
#include "profiler/script_text.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0; /* fmemopen refuses an empty buffer */
	FILE *f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	struct script_text *st;
	char msg[512];
	if (script_text_open_stream(f, "fuzz", &st, msg, sizeof(msg)) != 0) {
		fclose(f);
		return 0;
	}
	volatile uint64_t sink = 0;
	struct perf_record rec;
	while (script_text_next(st, &rec, msg, sizeof(msg)) > 0) {
		if (rec.type == PERF_RECORD_SAMPLE)
			for (uint64_t i = 0; i < rec.u.sample.nbr; i++)
				sink += rec.u.sample.br[i].from ^ rec.u.sample.br[i].to;
		else
			sink += strlen(rec.u.mmap.filename);
		const uint8_t *id;
		size_t n = script_text_build_id(st, &id);
		sink += n ? id[n - 1] : 0;
	}
	sink += script_text_line(st) + strlen(msg);
	script_text_close(st);
	fclose(f);
	(void)sink;
	return 0;
}
