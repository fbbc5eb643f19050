/* Branch-filter rules and the short-recording advice of pmusim record (see
 * record_sampling.h). perf's rules: tools/perf/util/parse-branch-options.c
 * (privilege words alone mean "any"; -b and -j may not both be given). */
#include "cli/record_sampling.h"

#include <stdio.h>
#include <string.h>

#include "pmu_model/cpu_model.h"
#include "pmu_model/lbr.h"

/* The first privilege word of spec that is not u (k, hv), of length *len. */
static const char *other_privilege(const char *spec, int *len)
{
	for (const char *p = spec; *p;) {
		int n = (int)strcspn(p, ",");
		if ((n == 1 && *p == 'k') || (n == 2 && strncmp(p, "hv", 2) == 0))
			return *len = n, p;
		p += n + (p[n] == ',');
	}
	return *len = 0, NULL;
}

int record_branch_filter(const char *cmd, const char *spec, uint32_t *filter, const char **given)
{
	const char *bad;
	int user, len;
	uint32_t f;
	if (lbr_parse_filter(spec, &f, &bad, &user) < 0) {
		fprintf(stderr, "%s: unknown branch filter '%.*s' in -j '%s'\n", cmd, (int)strcspn(bad, ","), bad,
			spec);
		return -1;
	}
	if (!user && (bad = other_privilege(spec, &len)) != NULL) {
		fprintf(stderr, "%s: branch filter '%.*s' in -j '%s' keeps %s branches only, and the model runs "
			"user code only (drop it, or add u)\n", cmd, len, bad, spec, len == 1 ? "kernel" : "hypervisor");
		return -1;
	}
	if (*given && f != *filter) {
		fprintf(stderr, "%s: -j '%s' and -j '%s' disagree: give one branch filter\n", cmd, *given, spec);
		return -1;
	}
	*filter = f;
	*given = spec;
	return 0;
}

int record_branch_any(const char *cmd, const char *j_spec, uint32_t filter)
{
	if (j_spec && filter != LBR_F_ANY) {
		fprintf(stderr, "%s: -b (= -j any) and -j '%s' disagree: give one of them\n", cmd, j_spec);
		return -1;
	}
	return 0;
}

/* 1234567 -> 1230000: three significant digits, at least 1. */
static uint64_t round3(uint64_t v)
{
	uint64_t scale = 1;
	while (v / scale >= 1000)
		scale *= 10;
	uint64_t r = v / scale * scale;
	return r ? r : 1;
}

void record_warn_few_samples(const struct eventlist *el, uint64_t freq, const struct pmu *pmu, uint64_t nsamples)
{
	if (nsamples >= RECORD_FEW_SAMPLES || el->n == 0)
		return;
	char line[1024];
	int n = snprintf(line, sizeof(line), "pmusim record: warning: only %llu sample%s;", (unsigned long long)nsamples,
			 nsamples == 1 ? "" : "s");
	if (freq) { /* about 1000 samples in the run's simulated time */
		uint64_t cyc = pmu_cycles(pmu), hz = (uint64_t)cpu_model_default()->mhz * 1000000;
		uint64_t f = round3(cyc ? (uint64_t)((unsigned __int128)hz * 1000 / cyc) : hz);
		fprintf(stderr, "%s -F %llu would give about 1000 (the run took %.6f s of simulated time)\n", line,
			(unsigned long long)f, (double)cyc / (double)hz);
		return;
	}
	for (size_t i = 0; i < el->n && n < (int)sizeof(line) - 1; i++) {
		uint64_t count = pmu_count(pmu, (uint32_t)i), period = round3(count / 1000);
		n += snprintf(line + n, sizeof(line) - (size_t)n, "%s%s%s -c %llu would give about %llu", i ? "," : "",
			      el->n > 1 ? " " : "", el->n > 1 ? el->name[i] : "", (unsigned long long)period,
			      (unsigned long long)(count / period));
	}
	fprintf(stderr, "%s (the run counted %llu %s)\n", line, (unsigned long long)pmu_count(pmu, 0), el->name[0]);
}
