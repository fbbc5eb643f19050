/* libFuzzer harness of the JSON reader (common/json_read.h) and what reads
 * JSON documents: json_parse on the exact bytes (not NUL-terminated, so a read
 * past the end is reported), a walk of the tree through the accessors, the
 * region set of report --regions JSON (rset_from_json) and the stat baseline
 * reader of pmusim diff (baseline_read: JSON or JSON lines). */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/json_read.h"
#include "profiler/baseline_diff.h"
#include "profiler/region_set.h"
#include "tests/fuzz/fuzz_file.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static double walk(const struct jv *v, int depth)
{
	double s = 0, d;
	uint64_t u;
	if (jv_u64(v, &u) == 0)
		s += (double)u;
	if (jv_num(v, &d) == 0 && d == d)
		s += 1;
	if (v->type == JV_STR)
		s += (double)strlen(v->text) + (double)v->len;
	if (depth > 64)
		return s;
	for (size_t i = 0; i < v->n; i++) {
		s += walk(&v->item[i], depth + 1);
		if (v->type == JV_OBJ) {
			const struct jv *got = jv_get(v, v->key[i]);
			s += got ? 1 : 0;
		}
	}
	return s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	volatile double sink = 0;
	char *text = malloc(size ? size : 1);
	if (!text)
		return 0;
	memcpy(text, data, size);
	struct jv *doc;
	char msg[512];
	if (json_parse(text, size, &doc, msg, sizeof(msg)) == 0) {
		sink += walk(doc, 0);
		struct rset *rs;
		if (rset_from_json(doc, &rs, msg, sizeof(msg)) == 0)
			rset_free(rs);
		jv_free(doc);
	}
	free(text);

	struct baseline b;
	memset(&b, 0, sizeof(b));
	if (baseline_read(fuzz_file(data, size), &b, msg, sizeof(msg)) == 0)
		sink += (double)b.nev + (double)b.nfn;
	baseline_free(&b);
	(void)sink;
	return 0;
}
