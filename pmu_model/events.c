/* Event table (see events.h). Encodings: generic events are PERF_TYPE_HARDWARE
 * with perf_hw_id configs (include/uapi/linux/perf_event.h); Intel-style events
 * are PERF_TYPE_RAW umask<<8|event with the Ice Lake BR_INST_RETIRED (0xC4)
 * umasks (Intel SDM vol. 3B, 19.5 and perfmon icelake_core.json). rep_iterations
 * has no hardware counterpart; it uses raw config 0x5250 ("RP"), named in the
 * perf.data EVENT_DESC section. */
#include "pmu_model/events.h"

#include <string.h>

#include "common/err.h"

static const struct pmu_event_desc table[EV_COUNT] = {
	[EV_INSTRUCTIONS] = {"instructions", "inst_retired.any", NULL, 0, 1,
			     "instructions retired (a REP string instruction counts once)"},
	[EV_CYCLES] = {"cycles", "cpu_clk_unhalted.thread", "cpu-cycles", 0, 0,
		       "core cycles of the timing model"},
	[EV_BRANCHES] = {"branches", "br_inst_retired.all_branches", "branch-instructions", 0, 4,
			 "branch instructions retired (conditional, jumps, calls, returns)"},
	[EV_BRANCH_MISSES] = {"branch-misses", "br_misp_retired.all_branches", NULL, 0, 5,
			      "mispredicted branches retired"},
	[EV_NEAR_TAKEN] = {"br_inst_retired.near_taken", NULL, NULL, 4, 0x20c4,
			   "taken branches retired"},
	[EV_COND] = {"br_inst_retired.cond", "br_inst_retired.conditional", NULL, 4, 0x11c4,
		     "conditional branches retired"},
	[EV_COND_TAKEN] = {"br_inst_retired.cond_taken", NULL, NULL, 4, 0x01c4,
			   "taken conditional branches retired"},
	[EV_NEAR_CALL] = {"br_inst_retired.near_call", NULL, NULL, 4, 0x02c4,
			  "near calls retired (direct and indirect)"},
	[EV_NEAR_RETURN] = {"br_inst_retired.near_return", NULL, NULL, 4, 0x08c4,
			    "near returns retired"},
	[EV_INDIRECT] = {"br_inst_retired.indirect", NULL, NULL, 4, 0x80c4,
			 "indirect jumps and calls retired (returns excluded)"},
	[EV_REP_ITERATIONS] = {"rep_iterations", NULL, NULL, 4, 0x5250,
			       "iterations of REP string instructions"},
};

const struct pmu_event_desc *pmu_event_desc(enum pmu_event ev)
{
	return (unsigned)ev < EV_COUNT ? &table[ev] : NULL;
}

static int name_is(const char *name, const char *text, size_t len)
{
	return name && strlen(name) == len && strncmp(name, text, len) == 0;
}

int pmu_event_parse(const char *text, struct pmu_event_spec *out)
{
	size_t len = strcspn(text, ":");
	memset(out, 0, sizeof(*out));
	int i;
	for (i = 0; i < EV_COUNT; i++)
		if (name_is(table[i].name, text, len) || name_is(table[i].alias, text, len) ||
		    name_is(table[i].alias2, text, len))
			break;
	if (i == EV_COUNT)
		return PMUSIM_ERR_ARG;
	out->ev = (enum pmu_event)i;
	if (text[len] == ':') {
		const char *m = text + len + 1;
		if (!*m)
			return PMUSIM_ERR_ARG;
		for (; *m; m++) {
			if (*m == 'u')
				out->user = 1;
			else if (*m == 'p' && out->precise < 3)
				out->precise++;
			else
				return PMUSIM_ERR_ARG;
		}
	}
	return 0;
}
