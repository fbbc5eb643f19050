/* libFuzzer harness of the perf.data reader (profiler/perfdata.h): opens the
 * input, reads the features and every record to the end, going on after a
 * corrupt record as perfdata_next allows; then the readers built on it that take
 * a recording's path: the REP report (rep_report_read) and the call-stack
 * snapshots (stack_recording_read). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "profiler/perfdata.h"
#include "profiler/rep_report.h"
#include "profiler/stack_check.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Touches what a sample points at, so that a pointer past the file is reported. */
static uint64_t touch_sample(const struct perf_sample *s)
{
	uint64_t sum = 0;
	for (uint64_t i = 0; i < s->nbr; i++)
		sum += s->br[i].from ^ s->br[i].to;
	for (uint64_t i = 0; i < s->nchain; i++)
		sum += s->chain[i];
	for (uint32_t i = 0; i < s->raw_size; i++)
		sum += s->raw[i];
	for (uint64_t i = 0; i < s->stack_dyn && i < s->stack_size; i++)
		sum += s->stack[i];
	return sum;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_file(data, size);
	struct perfdata *pd;
	char msg[512];
	if (perfdata_open(path, &pd, msg, sizeof(msg)) != 0)
		return 0;
	volatile uint64_t sink = 0;
	for (size_t i = 0; i < perfdata_nevents(pd); i++) {
		const struct perfdata_event *ev = perfdata_event(pd, i);
		sink += ev->sample_type + (ev->name ? ev->name[0] : 0);
		sink += (uint64_t)perfdata_event_of_id(pd, ev->id);
		const char *pmu = perfdata_pmu_name(pd, ev->type);
		sink += pmu ? (uint64_t)pmu[0] : 0;
	}
	for (size_t i = 0; i < perfdata_nbuild_ids(pd); i++) {
		const uint8_t *id;
		size_t idlen;
		const char *file;
		if (perfdata_build_id(pd, i, &id, &idlen, &file) == 0)
			sink += (idlen ? id[idlen - 1] : 0) + (uint64_t)file[0];
	}
	const char *h = perfdata_hostname(pd), *v = perfdata_version(pd);
	sink += (h ? (uint64_t)h[0] : 0) + (v ? (uint64_t)v[0] : 0);
	struct perf_record rec;
	int rc, errors = 0;
	/* after an error the reader goes on; a bounded number keeps a run short */
	while ((rc = perfdata_next(pd, &rec, msg, sizeof(msg))) != 0) {
		if (rc < 0) {
			if (++errors > 64)
				break;
			continue;
		}
		if (rec.type == PERF_RECORD_SAMPLE)
			sink += touch_sample(&rec.u.sample);
		else if (rec.type == PERF_RECORD_COMM)
			sink += strlen(rec.u.comm.comm);
		else if (rec.type == PERF_RECORD_MMAP || rec.type == PERF_RECORD_MMAP2)
			sink += strlen(rec.u.mmap.filename);
		else if (rec.type == PERF_RECORD_TEXT_POKE && rec.u.poke.len)
			sink += rec.u.poke.bytes[rec.u.poke.len - 1];
	}
	perfdata_close(pd);

	struct rep_row *rows = NULL;
	size_t nrows = 0;
	int mode;
	if (rep_report_read(path, &rows, &nrows, &mode, msg, sizeof(msg)) == 0) {
		for (size_t i = 0; i < nrows; i++)
			sink += strlen(rows[i].symbol) + rows[i].site;
		free(rows);
	}
	struct stack_set ss;
	memset(&ss, 0, sizeof(ss));
	if (stack_recording_read(path, &ss, msg, sizeof(msg)) == 0)
		sink += ss.n + ss.nrets;
	stack_set_free(&ss);
	(void)sink;
	return 0;
}
