/* What the end-to-end suites of the rewriter (check_dbr_install, check_dbr_live)
 * share: paths that stay valid, and byte-for-byte comparison of two files as a
 * libcheck assertion. */
#ifndef PMUSIM_TESTS_E2E_DBR_FILES_H
#define PMUSIM_TESTS_E2E_DBR_FILES_H

#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"

/* A path in the test's temporary directory that stays valid (tmp_path keeps its
 * last 8); the few bytes are the test process's until it ends. */
static inline const char *tp(const char *name)
{
	char *p = strdup(tmp_path(name));
	ck_assert_ptr_nonnull(p);
	return p;
}

static inline void same_file(const char *what, const char *a, const char *b)
{
	size_t na, nb;
	char *x = slurp(a, &na), *y = slurp(b, &nb);
	ck_assert_msg(x && y, "%s: cannot read %s or %s", what, a, b);
	ck_assert_msg(na == nb && memcmp(x, y, na) == 0, "%s: %s (%zu bytes) differs from %s (%zu bytes)", what,
		      a, na, b, nb);
	free(x);
	free(y);
}

/* A truth JSON without its program cycles: every `"cycles...": N` member with the
 * separator before it on its line, or its own line (the model's cycles of a
 * rewritten run are the replacement code's; the rest must be the program's). */
static inline char *truth_without_cycles(const char *path)
{
	char *t = slurp(path, NULL);
	ck_assert_ptr_nonnull(t);
	char *w = t;
	for (const char *r = t; *r;) {
		if (strncmp(r, "\"cycles", 7) == 0) {
			const char *q = strchr(r + 1, '"');
			ck_assert_ptr_nonnull(q);
			q++;
			while (*q == ':' || *q == ' ' || (*q >= '0' && *q <= '9'))
				q++;
			/* a line of its own ("  "cycles": N,\n"): the line goes */
			char *line = w;
			while (line > t && line[-1] == ' ')
				line--;
			if ((line == t || line[-1] == '\n') && *q == ',' && q[1] == '\n') {
				w = line;
				r = q + 2;
				continue;
			}
			if (w - t >= 2 && w[-2] == ',' && w[-1] == ' ') /* ", "cycles": N" in a row */
				w -= 2;
			r = q;
			continue;
		}
		*w++ = *r++;
	}
	*w = 0;
	return t;
}

/* Two truth JSONs equal but for their cycles. */
static inline void same_truth_json(const char *what, const char *a, const char *b)
{
	char *x = truth_without_cycles(a), *y = truth_without_cycles(b);
	size_t i = 0;
	while (x[i] && x[i] == y[i])
		i++;
	ck_assert_msg(x[i] == y[i], "%s: %s and %s differ at byte %zu: ...%.80s... / ...%.80s...", what, a, b, i,
		      x + (i > 40 ? i - 40 : 0), y + (i > 40 ? i - 40 : 0));
	free(x);
	free(y);
}

#endif
