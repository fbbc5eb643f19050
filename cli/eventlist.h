/* -e EV[,EV...] as perf takes it: event names (pmu_model/events.h) separated by
 * commas, the option repeatable. */
#ifndef PMUSIM_CLI_EVENTLIST_H
#define PMUSIM_CLI_EVENTLIST_H

#include <stddef.h>

#include "pmu_model/pmu.h"

struct eventlist {
	struct pmu_event_spec spec[PMU_MAX_COUNTERS];
	char name[PMU_MAX_COUNTERS][64]; /* as given, for output ("cycles:u") */
	size_t n;
};

/* Appends the events of arg; 0, or -1 with a message naming cmd printed. */
int eventlist_add(struct eventlist *el, const char *arg, const char *cmd);
/* Prints the table of events (for -e list / --help). */
void eventlist_print_known(void);

#endif
