/* The CPUID contract: every feature bit pmusim's CPUID reports has a probe instruction
 * in workloads/cpu_probe.c, and each probe gives under pmusim the result the host CPU
 * gives natively; PDEP and PEXT (swapped operands in Unicorn 2.0.1) also give the answers
 * their definition gives, worked out by hand here. Instructions of features pmusim does
 * not report raise SIGILL instead of computing something, and a program that dies of
 * one gets a line naming the instruction, its place and whose limit it is. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

static char *probe(int simulated, const char *mode, int *status)
{
	char *n[] = {(char *)wl("cpu_probe"), (char *)mode, NULL};
	char *s[] = {(char *)pmusim(), "run", "--", (char *)wl("cpu_probe"), (char *)mode, NULL};
	return run_capture(simulated ? s : n, status);
}

/* The line of text that starts with "name: ", without its newline, or NULL. */
static char *line_of(const char *text, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
		if (strncmp(p, name, n) == 0 && p[n] == ':') {
			size_t len = strcspn(p, "\n");
			return strndup(p, len);
		}
	return NULL;
}

START_TEST(every_reported_bit_has_a_probe_with_the_hosts_result)
{
	int st;
	char *sim = probe(1, "", &st);
	ck_assert_int_eq(st, 0);
	ck_assert_msg(!strstr(sim, "UNPROBED"), "CPUID reports bits without a probe:\n%s", sim);
	char *host = probe(0, "all", &st);
	ck_assert_int_eq(st, 0);
	int rows = 0;
	for (char *p = sim; *p; p = strchr(p, '\n') + 1) {
		char name[32];
		ck_assert_int_eq(sscanf(p, "%31[^:]:", name), 1);
		char *a = line_of(sim, name), *b = line_of(host, name);
		ck_assert_msg(b, "the host has no result for %s", name);
		ck_assert_msg(strcmp(a, b) == 0, "%s differs:\npmusim: %s\nhost:   %s", name, a, b);
		free(a), free(b);
		rows++;
	}
	/* the bits of sim/machine/cpuid.c: leaf 1 ECX 6, EDX 13, leaf 7 EBX 3, 0x80000001 ECX 2, EDX 3 */
	ck_assert_int_eq(rows, 27);
	free(sim), free(host);
}
END_TEST

/* Known answers, from the definition (Intel SDM vol. 2B, PDEP/PEXT): the source's low
 * bits go to the mask's set bits, from the lowest up, and back. */
START_TEST(pdep_and_pext_known_answers)
{
	int st;
	char *sim = probe(1, "", &st);
	ck_assert_int_eq(st, 0);
	char *bmi2 = line_of(sim, "bmi2");
	ck_assert_ptr_nonnull(bmi2);
	/* pdep(0x12ab, 0xf0f0f0f0f00ff00f): nibbles b, a, 2, 1 to bits 0-3, 12-15, 16-19, 28-31 */
	ck_assert_msg(strstr(bmi2, "pdep 1002a00b "), "%s", bmi2);
	/* pext(0xf0f0f0f0f00ff00f, 0x00ff00ff00ff00ff): bytes 0f, f0, f0, f0 packed */
	ck_assert_msg(strstr(bmi2, "pext f0f00f0f "), "%s", bmi2);
	/* a memory mask 0x0000ffff0000ff00: ab to bits 8-15, 12 to bits 32-39 */
	ck_assert_msg(strstr(bmi2, "pdep-mem 120000ab00 "), "%s", bmi2);
	/* 32-bit: 0xabcd into 0xff00ff00, the upper half of the register cleared */
	ck_assert_msg(strstr(bmi2, "pdep32 ab00cd00 "), "%s", bmi2);
	free(bmi2), free(sim);
}
END_TEST

START_TEST(unreported_features_raise_sigill)
{
	static const char *const names[] = {"popcnt", "movbe", "pclmulqdq", "vaddps", "vpxor", "xgetbv"};
	int st;
	char *sim = probe(1, "absent", &st);
	ck_assert_int_eq(st, 0);
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		char *l = line_of(sim, names[i]);
		ck_assert_msg(l && strstr(l, ": SIGILL"), "%s: %s", names[i], l ? l : "(missing)");
		free(l);
	}
	free(sim);
}
END_TEST

START_TEST(a_fatal_sigill_names_the_instruction)
{
	const char *err = tmp_path("avx.err");
	char *a[] = {(char *)pmusim(), "run", "--", (char *)wl("cpu_probe"), "avx", NULL};
	ck_assert_int_eq(run_cmd(a, NULL, NULL, err), 128 + 4);
	char *e = slurp(err, NULL);
	ck_assert_ptr_nonnull(e);
	ck_assert_msg(strstr(e, "SIGILL at 0x") && strstr(e, "(a_vaddps+0x") && strstr(e, "cpu_probe+0x") &&
	                  strstr(e, "`vmovups xmm0") && strstr(e, "(AVX") &&
	                  strstr(e, "pmusim's CPUID does not report AVX") &&
	                  strchr(e, '\n') == e + strlen(e) - 1,
	              "%s", e);
	free(e);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("cpuid");
	TCase *tc = tcase_create("cpuid");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, every_reported_bit_has_a_probe_with_the_hosts_result);
	tcase_add_test(tc, pdep_and_pext_known_answers);
	tcase_add_test(tc, unreported_features_raise_sigill);
	tcase_add_test(tc, a_fatal_sigill_names_the_instruction);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
