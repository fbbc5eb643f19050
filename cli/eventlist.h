/* -e EV[,EV...] as perf takes it (perf-list(1), tools/perf/util/parse-events.y),
 * for the modelled events (pmu_model/events.h), the option repeatable:
 *   NAME[:MODS]                 a generic or Intel-style name, in any case
 *   rUUEE[:MODS]                raw: umask UU, event select EE (hex)
 *   cpu/event=E,umask=U[,period=N][,name=S]/[MODS]   (or config=C, or an event
 *                               name as a term: cpu/br_inst_retired.cond/)
 *   NAME/period=N[,name=S]/[MODS]
 *   ibs_op/[cnt_ctl=1][,period=N][,name=S]/[MODS]   op sampling (AMD IBS op)
 *   {EV,EV,...}[:MODS]          a group: accepted, every event counted on its own
 *                               counter (pmusim never multiplexes: counts are exact)
 * MODS: u (user; the only level there is) and p, pp, ppp. Every raw encoding must
 * be one the model implements. */
#ifndef PMUSIM_CLI_EVENTLIST_H
#define PMUSIM_CLI_EVENTLIST_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "pmu_model/pmu.h"

#define EVENTLIST_NAME_MAX 128

struct eventlist {
	struct pmu_event_spec spec[PMU_MAX_COUNTERS];
	char name[PMU_MAX_COUNTERS][EVENTLIST_NAME_MAX]; /* as given ("cycles:u", "rc4"), or name= */
	uint32_t perf_type[PMU_MAX_COUNTERS];  /* the encoding a perf.data attr gets: as */
	uint64_t perf_config[PMU_MAX_COUNTERS];/* given for raw forms, else the table's */
	uint64_t period[PMU_MAX_COUNTERS];     /* a period= term; 0: the command's */
	size_t n;
	/* ibs_op/TERMS/ (AMD's op sampling PMU; pmu_config.op, not a counter):
	 * terms cnt_ctl=0|1 (1: count retired instructions, else cycles), config=
	 * (bit 19 is cnt_ctl, the only bit modelled), period=, name= */
	int op;                                /* given (at most once) */
	int op_cnt_ctl;
	uint64_t op_period;                    /* a period= term; 0: the command's */
	char op_name[EVENTLIST_NAME_MAX];
};

/* perf_event_attr.config bit of ibs_op's cnt_ctl (Linux arch/x86/events/amd/ibs.c:
 * format "cnt_ctl" is config:19, IBS_OP_CNT_CTL). */
#define IBS_OP_CNT_CTL_BIT 19

/* Appends the events of arg; 0, or -1 with one line naming cmd and the part of
 * arg that is wrong printed. */
int eventlist_add(struct eventlist *el, const char *arg, const char *cmd);
/* Prints the modelled events as `perf list` does (for `pmusim list`, -e list). */
void eventlist_print_known(FILE *f);

#endif
