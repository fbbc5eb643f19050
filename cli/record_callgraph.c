/* pmusim record -g / --call-graph (see record_callgraph.h). */
#include "cli/record_callgraph.h"

#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "common/grow.h"
#include "common/number.h"

int callgraph_parse(const char *cmd, const char *spec, struct callgraph_options *o)
{
	const char *comma = strchr(spec, ',');
	size_t len = comma ? (size_t)(comma - spec) : strlen(spec);
	*o = (struct callgraph_options){CG_NONE, 0};
	if (len == 6 && strncmp(spec, "tstack", 6) == 0)
		o->mode = CG_TSTACK;
	else if (len == 5 && strncmp(spec, "dwarf", 5) == 0)
		o->mode = CG_DWARF, o->dwarf_size = CG_DWARF_DEFAULT;
	else if (len == 2 && strncmp(spec, "fp", 2) == 0)
		o->mode = CG_FP;
	else if (len == 3 && strncmp(spec, "lbr", 3) == 0)
		return fprintf(stderr, "%s: --call-graph lbr: the modelled LBR has no call-stack mode; "
				       "--call-graph tstack (or -g) gives exact call chains\n", cmd), -1;
	else
		return fprintf(stderr, "%s: --call-graph needs tstack, dwarf[,SIZE] or fp, not '%s'\n", cmd, spec),
		       -1;
	if (!comma)
		return 0;
	uint64_t v;
	if (o->mode != CG_DWARF)
		return fprintf(stderr, "%s: --call-graph %.*s takes no size (dwarf,SIZE does)\n", cmd, (int)len, spec),
		       -1;
	/* perf's rule (parse_user_stack_size): rounded up to a multiple of 8, at
	 * most 65528; the kernel then cuts the dump to what fits a sample record
	 * beside the registers (perf_sample_ustack_size), TSTACK_DWARF_MAX here */
	if (number_parse(comma + 1, &v) != NUMBER_OK || v == 0 || v > 65528)
		return fprintf(stderr, "%s: --call-graph dwarf,SIZE needs a size from 1 to 65528 bytes, not '%s'\n",
			       cmd, comma + 1), -1;
	v = (v + 7) / 8 * 8;
	if (v > TSTACK_DWARF_MAX)
		v = TSTACK_DWARF_MAX;
	o->dwarf_size = (uint32_t)v;
	return 0;
}

uint64_t callgraph_sample_type(const struct callgraph_options *o)
{
	switch (o->mode) {
	case CG_TSTACK:
	case CG_FP: return PERF_SAMPLE_CALLCHAIN;
	case CG_DWARF: return PERF_SAMPLE_CALLCHAIN | PERF_SAMPLE_REGS_USER | PERF_SAMPLE_STACK_USER;
	default: return 0;
	}
}

/* The kernel's user frame-pointer walk from the registers rip, rbp. */
static int fp_chain(struct tstack_recording *tr, uint32_t tid, uint64_t rip, uint64_t rbp, size_t *n)
{
	uint64_t *nc = grow_array(tr->chain, &tr->capchain, CG_FP_MAX_STACK + 1, sizeof(*nc));
	if (!nc)
		return PMUSIM_ERR_NOMEM;
	tr->chain = nc;
	size_t k = 0;
	nc[k++] = PERF_CONTEXT_USER;
	nc[k++] = rip;
	uint64_t fp = rbp;
	while (k - 1 < CG_FP_MAX_STACK) {
		uint64_t frame[2]; /* the saved RBP, then the return address */
		if (fp > UINT64_MAX - 16 || sim_read_memory(tr->sim, tid, fp, frame, sizeof(frame)) < 0)
			break;
		nc[k++] = frame[1];
		fp = frame[0];
	}
	*n = k;
	return 0;
}

int callgraph_fill(const struct callgraph_options *o, struct tstack_recording *tr, uint32_t tid, uint32_t pid,
		   uint64_t at, struct perf_sample *s, uint64_t *regs)
{
	if (o->mode == CG_NONE)
		return 0;
	uint64_t ip = sim_dbr_where(tr->sim, at);
	int err = tr->truth ? tstack_recording_truth(tr, tid, pid, ip) : 0;
	size_t n = 0;
	if (err < 0)
		return err;
	if (o->mode == CG_DWARF)
		return tstack_dump_stack(tr, tid, ip, at, o->dwarf_size, s, regs);
	if (o->mode == CG_TSTACK) {
		err = tstack_recording_chain(tr, tid, ip, &n);
	} else {
		/* perf_regs.h order: ... BP 6 ...; the engine's IP is not kept up to
		 * date between blocks: ip is where the thread is */
		uint64_t all[24];
		if ((err = sim_thread_user_regs(tr->sim, tid, all)) == 0)
			err = fp_chain(tr, tid, ip, all[6], &n);
	}
	if (err < 0)
		return err;
	s->nchain = n;
	s->chain = tr->chain;
	return 0;
}
