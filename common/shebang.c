/* Parsing "#!" lines (see common/shebang.h). */
#include "common/shebang.h"

#include <string.h>

int shebang_parse(char *h, size_t n, char *interp, size_t ilen, char *arg, size_t alen)
{
	interp[0] = arg[0] = 0;
	if (n < 2 || h[0] != '#' || h[1] != '!')
		return 0;
	h[n] = 0;
	char *line = h + 2, *nl = strchr(line, '\n');
	if (!nl)
		return -1;
	*nl = 0;
	line += strspn(line, " \t");
	size_t k = strcspn(line, " \t");
	if (k == 0 || k >= ilen)
		return -1;
	memcpy(interp, line, k);
	interp[k] = 0;
	line += k;
	line += strspn(line, " \t");
	size_t e = strlen(line);
	while (e > 0 && (line[e - 1] == ' ' || line[e - 1] == '\t'))
		e--;
	if (e >= alen)
		return -1;
	memcpy(arg, line, e);
	arg[e] = 0;
	return 1;
}
