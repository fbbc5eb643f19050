/* Event table (see events.h). Encodings: generic events are PERF_TYPE_HARDWARE
 * with perf_hw_id configs (include/uapi/linux/perf_event.h); Intel-style events
 * are PERF_TYPE_RAW umask<<8|event with the Ice Lake BR_INST_RETIRED (0xC4)
 * umasks (Intel SDM vol. 3B, 19.5 and perfmon icelake_core.json). rep_iterations
 * has no hardware counterpart; it uses raw config 0x5250 ("RP"), named in the
 * perf.data EVENT_DESC section. The AMD names are perf's for Zen 2 and 3
 * (tools/perf/pmu-events/arch/x86/amdzen3/core.json, branch.json: ex_ret_instr
 * 0xc0, ex_ret_brn 0xc2, ex_ret_brn_misp 0xc3, ex_ret_brn_tkn 0xc4,
 * ex_ret_near_ret 0xc8, ex_ret_cond 0xd1, ls_not_halted_cyc 0x76), given only
 * where they count what the model's event counts in user code; they select
 * the same event, recorded under its canonical encoding. */
#include "pmu_model/events.h"

#include <string.h>
#include <strings.h>

#include "common/err.h"

static const struct pmu_event_desc table[EV_COUNT] = {
	[EV_INSTRUCTIONS] = {"instructions", "inst_retired.any", NULL, "ex_ret_instr", 0, 1,
			     "instructions retired (a REP string instruction counts once)"},
	[EV_CYCLES] = {"cycles", "cpu_clk_unhalted.thread", "cpu-cycles", "ls_not_halted_cyc", 0, 0,
		       "core cycles of the timing model"},
	[EV_BRANCHES] = {"branches", "br_inst_retired.all_branches", "branch-instructions", "ex_ret_brn", 0, 4,
			 "branch instructions retired (conditional, jumps, calls, returns)"},
	[EV_BRANCH_MISSES] = {"branch-misses", "br_misp_retired.all_branches", NULL, "ex_ret_brn_misp", 0, 5,
			      "mispredicted branches retired"},
	[EV_NEAR_TAKEN] = {"br_inst_retired.near_taken", NULL, NULL, "ex_ret_brn_tkn", 4, 0x20c4,
			   "taken branches retired"},
	[EV_COND] = {"br_inst_retired.cond", "br_inst_retired.conditional", NULL, "ex_ret_cond", 4, 0x11c4,
		     "conditional branches retired"},
	[EV_COND_TAKEN] = {"br_inst_retired.cond_taken", NULL, NULL, NULL, 4, 0x01c4,
			   "taken conditional branches retired"},
	[EV_NEAR_CALL] = {"br_inst_retired.near_call", NULL, NULL, NULL, 4, 0x02c4,
			  "near calls retired (direct and indirect)"},
	[EV_NEAR_RETURN] = {"br_inst_retired.near_return", NULL, NULL, "ex_ret_near_ret", 4, 0x08c4,
			    "near returns retired"},
	[EV_INDIRECT] = {"br_inst_retired.indirect", NULL, NULL, NULL, 4, 0x80c4,
			 "indirect jumps and calls retired (returns excluded)"},
	[EV_REP_ITERATIONS] = {"rep_iterations", NULL, NULL, NULL, 4, 0x5250,
			       "iterations of REP string instructions (an encoding of pmusim's own: no "
			       "CPU counts this event)"},
};

const struct pmu_event_desc *pmu_event_desc(enum pmu_event ev)
{
	return (unsigned)ev < EV_COUNT ? &table[ev] : NULL;
}

/* Architectural encodings of the generic events (Intel SDM vol. 3B, table
 * "UMask and Event Select Encodings for Pre-Defined Architectural Performance
 * Events"); the Intel-style events' encodings are their raw configs above. */
static const uint64_t arch_encoding[EV_COUNT] = {
	[EV_INSTRUCTIONS] = 0x00c0, [EV_CYCLES] = 0x003c, [EV_BRANCHES] = 0x00c4, [EV_BRANCH_MISSES] = 0x00c5,
};

uint64_t pmu_event_encoding(enum pmu_event ev)
{
	if ((unsigned)ev >= EV_COUNT)
		return 0;
	return table[ev].perf_type == 4 ? table[ev].perf_config : arch_encoding[ev];
}

int pmu_event_by_encoding(uint64_t config, enum pmu_event *ev)
{
	for (int i = 0; i < EV_COUNT; i++)
		if (pmu_event_encoding((enum pmu_event)i) == config)
			return *ev = (enum pmu_event)i, 0;
	return PMUSIM_ERR_ARG;
}

static int name_is(const char *name, const char *text, size_t len)
{
	return name && strlen(name) == len && strncasecmp(name, text, len) == 0;
}

int pmu_event_lookup(const char *text, size_t len, enum pmu_event *ev)
{
	for (int i = 0; i < EV_COUNT; i++)
		if (name_is(table[i].name, text, len) || name_is(table[i].alias, text, len) ||
		    name_is(table[i].alias2, text, len) || name_is(table[i].amd, text, len))
			return *ev = (enum pmu_event)i, 0;
	return PMUSIM_ERR_ARG;
}

int pmu_event_modifiers(const char *m, struct pmu_event_spec *spec, const char **bad)
{
	for (; *m; m++) {
		if (*m == 'u')
			spec->user = 1;
		else if (*m == 'p' && spec->precise < 3)
			spec->precise++;
		else
			return *bad = m, PMUSIM_ERR_ARG;
	}
	return 0;
}

int pmu_event_parse(const char *text, struct pmu_event_spec *out)
{
	size_t len = strcspn(text, ":");
	const char *bad;
	memset(out, 0, sizeof(*out));
	if (pmu_event_lookup(text, len, &out->ev) < 0)
		return PMUSIM_ERR_ARG;
	if (text[len] == ':' && (!text[len + 1] || pmu_event_modifiers(text + len + 1, out, &bad) < 0))
		return PMUSIM_ERR_ARG;
	return 0;
}
