/* pmusim list: the modelled events, as `perf list` prints its events. */
#include <stdio.h>
#include <string.h>

#include "cli/cli.h"
#include "cli/eventlist.h"

int cmd_list(int argc, char **argv)
{
	if (argc > 1 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		puts("usage: pmusim list\n\nPrints the events -e takes (perf list's layout): names, raw encodings and\n"
		     "what each counts.");
		return 0;
	}
	if (argc > 1) {
		fprintf(stderr, "pmusim list: unexpected argument '%s' (pmusim lists all its events; "
			"there are few)\n", argv[1]);
		return EXIT_PMUSIM_ERROR;
	}
	eventlist_print_known(stdout);
	return 0;
}
