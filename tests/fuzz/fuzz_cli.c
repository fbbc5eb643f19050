/* libFuzzer harness of the commands' option parsers (cli/cli.h, the parse-only
 * entry points): the first byte chooses the command, the rest, split at NUL
 * bytes, is its argv after the command's name. Each argument is a heap string of
 * its own size, freed after the parse, so that a parser that reads past one or
 * keeps a pointer into it past the parse (getopt's place in a cluster of short
 * options) is reported. Nothing runs: a program operand is only looked up. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/cli.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_ARGS 64

static const struct {
	const char *name;
	int (*parse)(int argc, char **argv);
} cmds[] = {
	{"run", cmd_run_parse},		{"stat", cmd_stat_parse},
	{"record", cmd_record_parse},	{"script", cmd_script_parse},
	{"report", cmd_report_parse},	{"validate", cmd_validate_parse},
	{"diff", cmd_diff_parse},	{"uniformity", cmd_uniformity_parse},
};

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size == 0)
		return 0;
	size_t which = data[0] % (sizeof(cmds) / sizeof(cmds[0]));
	char *argv[MAX_ARGS + 2];
	int argc = 0;
	argv[argc++] = strdup(cmds[which].name);
	for (size_t i = 1; i < size && argc <= MAX_ARGS;) {
		const uint8_t *end = memchr(data + i, 0, size - i);
		size_t n = end ? (size_t)(end - (data + i)) : size - i;
		argv[argc] = malloc(n + 1);
		if (!argv[argc])
			break;
		memcpy(argv[argc], data + i, n);
		argv[argc++][n] = 0;
		i += n + 1;
	}
	argv[argc] = NULL;
	int rc = argv[0] ? cmds[which].parse(argc, argv) : 0;
	if (rc != 0 && rc != -1 && rc != CLI_HELP)
		abort(); /* the contract: 0, CLI_HELP or -1 */
	for (int i = 0; i < argc; i++)
		free(argv[i]);
	return 0;
}
