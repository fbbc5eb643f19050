/* The modelled events: names (perf's generic names, Intel-style and AMD names, with
 * an optional ":u"/":p" modifier), their perf_event_attr encoding, and what each
 * counts in a retired block. The table is data (events.c). */
#ifndef PMUSIM_PMU_MODEL_EVENTS_H
#define PMUSIM_PMU_MODEL_EVENTS_H

#include <stddef.h>
#include <stdint.h>

enum pmu_event {
	EV_INSTRUCTIONS = 0, /* instructions retired (a REP string instruction once) */
	EV_CYCLES,           /* core cycles of the timing model */
	EV_BRANCHES,         /* branch instructions retired: cond, jmp, call, ret, indirect */
	EV_BRANCH_MISSES,    /* mispredicted branches retired */
	EV_NEAR_TAKEN,       /* taken branches retired */
	EV_COND,             /* conditional branches retired */
	EV_COND_TAKEN,       /* taken conditional branches retired */
	EV_NEAR_CALL,        /* direct and indirect near calls retired */
	EV_NEAR_RETURN,      /* near returns retired */
	EV_INDIRECT,         /* indirect jumps and indirect calls retired (not returns) */
	EV_REP_ITERATIONS,   /* iterations performed by REP string instructions */
	EV_COUNT
};

struct pmu_event_desc {
	const char *name;       /* canonical name */
	const char *alias;      /* Intel-style name, or NULL */
	const char *alias2;     /* another accepted name, or NULL */
	const char *amd;        /* the AMD Zen name of the same count, or NULL */
	uint32_t perf_type;     /* PERF_TYPE_HARDWARE (0) or PERF_TYPE_RAW (4) */
	uint64_t perf_config;
	const char *what;       /* one line for --help and `pmusim stat -e list` */
};

const struct pmu_event_desc *pmu_event_desc(enum pmu_event ev);

/* A parsed event name. */
struct pmu_event_spec {
	enum pmu_event ev;
	uint8_t precise;  /* number of 'p' modifiers */
	uint8_t user;     /* ':u' given */
};

/* Parses "cycles", "cycles:u", "br_inst_retired.near_taken:upp" (names in any
 * case: "CYCLES"). Returns 0, or PMUSIM_ERR_ARG for an unknown name or modifier
 * (":k" is refused: the model sees user code only). */
int pmu_event_parse(const char *text, struct pmu_event_spec *out);

/* The event named by the len bytes at name (any case); 0 or PMUSIM_ERR_ARG. */
int pmu_event_lookup(const char *name, size_t len, enum pmu_event *ev);

/* Applies perf's modifier letters ("u", "pp", "upp") to spec; 0, or
 * PMUSIM_ERR_ARG with *bad pointing at the first letter refused. */
int pmu_event_modifiers(const char *mods, struct pmu_event_spec *spec, const char **bad);

/* The event whose Intel encoding (perf's raw config: umask << 8 | event
 * select, no other bits) is config: the BR_INST_RETIRED umasks of the table,
 * and the architectural encodings of the generic events (Intel SDM vol. 3B,
 * "Pre-defined Architectural Performance Events": 0x3c cycles, 0xc0
 * instructions, 0xc4 branches, 0xc5 branch misses). 0 or PMUSIM_ERR_ARG. */
int pmu_event_by_encoding(uint64_t config, enum pmu_event *ev);
/* That Intel encoding of ev (what rNNNN selects it with). */
uint64_t pmu_event_encoding(enum pmu_event ev);

#endif
