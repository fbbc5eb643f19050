/* Runs one Check suite in fork mode, prints Check's summary line, and returns
 * the process exit status (non-zero when any test failed). */
#ifndef PMUSIM_TESTS_UNIT_RUN_SUITE_H
#define PMUSIM_TESTS_UNIT_RUN_SUITE_H

#include <check.h>
#include <stdlib.h>

static inline int run_suite(Suite *s)
{
	/* Check read its timeout settings when the test cases were made; the programs the
	 * tests run must not see them (tests/run_suites.sh sets the multiplier when
	 * suites share the processors, and any variable moves a program's stack). */
	unsetenv("CK_TIMEOUT_MULTIPLIER");
	unsetenv("CK_DEFAULT_TIMEOUT");
	SRunner *sr = srunner_create(s);
	srunner_run_all(sr, CK_NORMAL);
	int failed = srunner_ntests_failed(sr);
	srunner_free(sr);
	return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}

#endif
