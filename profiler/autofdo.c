/* AutoFDO text profile (the input of create_llvm_prof/create_gcov --profiler
 * text; AutoFDO's sample_reader TextSampleReaderWriter): three sections, each a
 * decimal count of lines then the lines, addresses in hex relative to the load
 * bias (ELF virtual addresses):
 *   <n>  then  <begin>-<end>:<count>   instruction ranges executed
 *   <n>  then  <addr>:<count>          sampled addresses (none here)
 *   <n>  then  <from>-><to>:<count>    taken branches
 * A range runs from an edge's destination to the end of the code run there. */
#include "profiler/autofdo.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>

#include "common/err.h"

struct range {
	uint64_t begin, end, count;
};

static int cmp_range(const void *a, const void *b)
{
	const struct range *x = a, *y = b;
	if (x->begin != y->begin)
		return x->begin < y->begin ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

int autofdo_write(FILE *f, struct binary *bin, const struct edge *e, size_t n)
{
	uint64_t bias = binary_bias(bin);
	struct range *r = calloc(n + 1, sizeof(*r));
	if (!r)
		return PMUSIM_ERR_NOMEM;
	size_t nr = 0, nb = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t c = (uint64_t)llround(e[i].w);
		const struct block_info *run = binary_run(bin, e[i].to);
		if (!c || !run)
			continue;
		r[nr++] = (struct range){e[i].to - bias, run->term - bias, c};
	}
	qsort(r, nr, sizeof(*r), cmp_range);
	size_t k = 0; /* merge equal ranges */
	for (size_t i = 0; i < nr; i++) {
		if (k && r[k - 1].begin == r[i].begin && r[k - 1].end == r[i].end)
			r[k - 1].count += r[i].count;
		else
			r[k++] = r[i];
	}
	fprintf(f, "%zu\n", k);
	for (size_t i = 0; i < k; i++)
		fprintf(f, "%" PRIx64 "-%" PRIx64 ":%" PRIu64 "\n", r[i].begin, r[i].end, r[i].count);
	fprintf(f, "0\n");
	for (size_t i = 0; i < n; i++)
		nb += e[i].taken && llround(e[i].w) > 0;
	fprintf(f, "%zu\n", nb);
	for (size_t i = 0; i < n; i++)
		if (e[i].taken && llround(e[i].w) > 0)
			fprintf(f, "%" PRIx64 "->%" PRIx64 ":%lld\n", e[i].from - bias, e[i].to - bias,
				(long long)llround(e[i].w));
	free(r);
	return ferror(f) ? PMUSIM_ERR_IO : 0;
}
