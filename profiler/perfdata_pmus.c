/* Dynamic PMUs in the perf.data writer (profiler/perfdata.h): the PMU_MAPPINGS
 * feature, which tells perf which PMU a dynamic attr.type belongs to, and the attr
 * of an IBS op event. Layout: tools/perf/Documentation/perf.data-file-format.txt
 * (HEADER_PMU_MAPPINGS: u32 nr, then per PMU u32 type and a perf_header_string),
 * as tools/perf/util/header.c write_pmu_mappings writes it. */
#include <stdio.h>
#include <string.h>

#include "common/err.h"
#include "profiler/ibs_op.h"
#include "profiler/perfdata.h"
#include "profiler/perfdata_write_internal.h"

#define MAX_PMUS 32u

struct pmu_map {
	uint32_t type;
	const char *name;
};

/* PMUs every x86 Linux registers under the fixed types (kernel/events/core.c
 * "software", "tracepoint", "breakpoint"; arch/x86/events/core.c "cpu"). */
static const struct pmu_map fixed_pmus[] = {
    {PERF_TYPE_SOFTWARE, "software"},
    {PERF_TYPE_TRACEPOINT, "tracepoint"},
    {PERF_TYPE_RAW, "cpu"},
    {PERF_TYPE_BREAKPOINT, "breakpoint"},
};

static int is_ibs_op(const struct perfdata_event *ev)
{
	return ev->pmu && strcmp(ev->pmu, IBS_OP_PMU_NAME) == 0;
}

int perfdata_check_pmus(const struct perfdata_event *ev, size_t nev,
                        const struct perfdata_info *info, char *msg, size_t msglen)
{
	int ibs = 0;
	for (size_t i = 0; i < nev; i++) {
		if ((ev[i].type >= PERF_TYPE_MAX) != (ev[i].pmu != NULL) ||
		    (ev[i].pmu && !ev[i].pmu[0]))
			return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
			                   "perf.data: event %zu: type %u %s", i, ev[i].type,
			                   ev[i].type >= PERF_TYPE_MAX ? "needs a PMU name"
			                                               : "takes no PMU name");
		for (size_t j = 0; j < i && ev[i].pmu; j++)
			if (ev[j].pmu &&
			    (ev[j].type == ev[i].type) != !strcmp(ev[j].pmu, ev[i].pmu))
				return pmusim_fail(msg, msglen, PMUSIM_ERR_ARG,
				                   "perf.data: events %zu and %zu map PMU types "
				                   "and names differently",
				                   j, i);
		if (is_ibs_op(&ev[i]) && !(ev[i].sample_type & PERF_SAMPLE_RAW))
			return pmusim_fail(
			    msg, msglen, PMUSIM_ERR_ARG,
			    "perf.data: event %zu: ibs_op samples need PERF_SAMPLE_RAW", i);
		ibs |= is_ibs_op(&ev[i]);
	}
	if (ibs && (!info || !info->cpuid || strncmp(info->cpuid, "AuthenticAMD", 12) != 0))
		return pmusim_fail(
		    msg, msglen, PMUSIM_ERR_ARG,
		    "perf.data: ibs_op events need an AMD cpuid (%s), perf decodes them only then",
		    PERFDATA_IBS_CPUID);
	return 0;
}

static void add_pmu(struct pmu_map *m, size_t *n, uint32_t type, const char *name)
{
	for (size_t i = 0; i < *n; i++)
		if (m[i].type == type)
			return;
	if (*n < MAX_PMUS)
		m[(*n)++] = (struct pmu_map){type, name};
}

void perfdata_build_pmu_mappings(struct perfdata_writer *w, const struct perfdata_event *ev)
{
	struct pmu_map m[MAX_PMUS];
	size_t n = 0, named = 0;
	for (size_t i = 0; i < sizeof(fixed_pmus) / sizeof(fixed_pmus[0]); i++)
		add_pmu(m, &n, fixed_pmus[i].type, fixed_pmus[i].name);
	for (size_t i = 0; i < w->nev; i++) {
		if (!ev[i].pmu)
			continue;
		named++;
		add_pmu(m, &n, ev[i].type, ev[i].pmu);
		/* perf 6.1's IBS decoder takes an event whose type is ibs_fetch_type for an
		 * IBS fetch event, and that type is 0 (PERF_TYPE_HARDWARE) unless mapped */
		if (is_ibs_op(&ev[i]))
			add_pmu(m, &n, IBS_FETCH_PMU_TYPE, IBS_FETCH_PMU_NAME);
	}
	if (!named)
		return;                /* recordings of the fixed types only stay as they were */
	for (size_t i = 1; i < n; i++) /* by type: the same events give the same bytes */
		for (size_t j = i; j > 0 && m[j - 1].type > m[j].type; j--) {
			struct pmu_map t = m[j];
			m[j] = m[j - 1];
			m[j - 1] = t;
		}
	struct bbuf *b = &w->feat[FEAT_PMU_MAPPINGS];
	put_u32(b, (uint32_t)n);
	for (size_t i = 0; i < n; i++) {
		put_u32(b, m[i].type);
		perfdata_put_string(b, m[i].name);
	}
	w->featmask |= 1u << FEAT_PMU_MAPPINGS;
}

int perfdata_ibs_op_event(struct perfdata_event *ev, uint64_t period, int cnt_ctl, uint64_t id,
                          const char *name)
{
	if (period < 16 || period % 16 || period > IBS_OP_MAX_CNT_LIMIT ||
	    (cnt_ctl != 0 && cnt_ctl != 1) || id == 0)
		return PMUSIM_ERR_ARG;
	*ev = (struct perfdata_event){
	    .name = name      ? name
	            : cnt_ctl ? "ibs_op/cnt_ctl=1/"
	                      : "ibs_op//",
	    .type = IBS_OP_PMU_TYPE,
	    .pmu = IBS_OP_PMU_NAME,
	    .config = cnt_ctl ? IBS_OP_CONFIG_CNT_CTL : 0,
	    .sample_period = period,
	    .sample_type = PERFDATA_IBS_OP_SAMPLE_TYPE,
	    .id = id,
	};
	return 0;
}
