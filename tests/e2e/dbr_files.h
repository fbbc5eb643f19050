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

#endif
