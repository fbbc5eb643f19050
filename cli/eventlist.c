/* Parsing of -e lists (see eventlist.h). */
#include "cli/eventlist.h"

#include <stdio.h>
#include <string.h>

int eventlist_add(struct eventlist *el, const char *arg, const char *cmd)
{
	const char *p = arg;
	for (;;) {
		size_t n = strcspn(p, ",");
		char word[64];
		if (n == 0 || n >= sizeof(word)) {
			fprintf(stderr, "%s: bad event list '%s'\n", cmd, arg);
			return -1;
		}
		memcpy(word, p, n);
		word[n] = 0;
		if (el->n == PMU_MAX_COUNTERS) {
			fprintf(stderr, "%s: too many events (at most %d)\n", cmd, PMU_MAX_COUNTERS);
			return -1;
		}
		if (pmu_event_parse(word, &el->spec[el->n]) < 0) {
			fprintf(stderr, "%s: unknown event or modifier '%s' (pmusim stat -e list shows the events; "
				"only :u and :p modifiers are accepted)\n", cmd, word);
			return -1;
		}
		memcpy(el->name[el->n++], word, n + 1);
		p += n;
		if (!*p)
			return 0;
		p++;
	}
}

void eventlist_print_known(void)
{
	printf("events (generic or Intel-style name, optional :u / :p modifiers):\n");
	for (int i = 0; i < EV_COUNT; i++) {
		const struct pmu_event_desc *d = pmu_event_desc((enum pmu_event)i);
		char names[128];
		snprintf(names, sizeof(names), "%s%s%s%s%s", d->name, d->alias ? ", " : "",
			 d->alias ? d->alias : "", d->alias2 ? ", " : "", d->alias2 ? d->alias2 : "");
		printf("  %-58s %s\n", names, d->what);
	}
}
