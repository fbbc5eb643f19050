/* Profiles built from samples: the CBT edge profile (profiler/trace.h), the
 * call graph of call-only LBR recordings, and the baselines it is compared
 * with. Each method turns samples into weighted edges (profiler/edges.h):
 *
 * - cbt:    rebuilt branch traces, a window of the newest outcomes per sample,
 *           weighted so that every branch execution counts the same;
 * - taken:  raw LBR entries only, each a taken edge (no not-taken outcomes);
 * - ranges: LBR entries plus every fall-through between them, all of them,
 *           once per sample, as perf2bolt and AutoFDO count LBR ranges;
 * - ip:     plain IP sampling, no LBR: a sample at a branch instruction stands
 *           for `period` executions of it, split evenly between the two ways of
 *           a conditional branch (direction is unknown without an LBR);
 * - calls:  call-graph variant: the call entries of each sample (recorded with
 *           -j any_call or call), caller site -> callee;
 * - ibs:    op samples (ibs_op//, profiler/ibs_op.h): a sample at a branch says
 *           which way it went and where to, so its period goes to that one
 *           edge: a conditional branch's taken or fall-through edge by its
 *           recorded direction, any other branch's edge to its recorded target. */
#ifndef PMUSIM_PROFILER_PROFILE_H
#define PMUSIM_PROFILER_PROFILE_H

#include <stdint.h>

#include "profiler/binary.h"
#include "profiler/edges.h"
#include "profiler/perfdata.h"
#include "profiler/trace.h"

enum prof_method { METHOD_CBT = 0, METHOD_TAKEN, METHOD_RANGES, METHOD_IP, METHOD_CALLS, METHOD_IBS, METHOD_COUNT };

/* "cbt", "taken", "ranges", "ip", "calls", "ibs"; -1 for an unknown name. */
int prof_method_parse(const char *name);
const char *prof_method_name(int method);

/* The trigger a sampled event implies (perf_event_attr type and config as
 * pmusim and real perf write them); TRIG_CYCLES when unknown. */
int trigger_of_event(uint32_t type, uint64_t config);

struct profile_opts {
	int method;       /* enum prof_method */
	uint64_t cbt;     /* CBT size; 0: the TBT size of each sample (its entries). For
	                   * triggers counted in their own units (TRIG_COND …): events
	                   * per window (input_profile's 0: found by a census) */
	uint64_t span;    /* window of instructions or cycles for those triggers; 0: the
	                   * LBR depth (most entries of any sample so far) - 2, which
	                   * every full trace spans (input_profile's 0: found by a census) */
	int precise;      /* sample IPs are precise (the eventing instruction retired) */
	int skylake_dup;  /* a newest entry repeating the one before is one branch */
	uint64_t lbr_depth; /* the recording's LBR depth when known (a census found it), else 0:
	                   * learnt from the samples as they come */
	int census;       /* cbt: only count the trigger's events per trace (no edges), for
	                   * profile_census_window */
};

struct profile_stats {
	uint64_t samples;            /* samples offered */
	uint64_t used;               /* samples that contributed */
	uint64_t dropped;            /* samples dropped, by any reason */
	uint64_t drop[DROP_COUNT];   /* by reason (enum trace_drop) */
	uint64_t outcomes;           /* branch outcomes counted */
	uint64_t truncated;          /* cbt, cycles: samples with a full LBR whose window reached back
	                              * past the trace */
	uint64_t estimated;          /* cbt, cycles: samples whose overflow cycle was estimated (real
	                              * recordings: no pmusim payload) */
};

struct profile;

/* bin is not owned and must outlive the profile. 0 or PMUSIM_ERR_NOMEM. */
int profile_new(const struct profile_opts *o, struct binary *bin, struct profile **out);
void profile_free(struct profile *p);

/* Adds one sample taken with the given trigger. 0 or PMUSIM_ERR_NOMEM. */
int profile_add(struct profile *p, const struct perf_sample *s, int trigger);

/* After a census: the window for the trigger, in its own units: the q-quantile
 * over full traces of how far back a trace reaches (events of the trigger before
 * its newest one; instructions, or cycles, before the sample point that it covers
 * whole), at least 1, so that all but a fraction q of the samples see their whole
 * window. Reorders the census. */
uint64_t profile_census_window(struct profile *p, double q);

/* The most branch entries of any sample so far (the LBR's depth). */
uint64_t profile_depth(const struct profile *p);

/* The span given (instructions or cycles; 0: per sample, its entries - 1). */
uint64_t profile_span(const struct profile *p);

struct edges *profile_edges(struct profile *p);
const struct profile_stats *profile_stats(const struct profile *p);
struct binary *profile_binary(const struct profile *p);

#endif
