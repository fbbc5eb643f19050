/* What a user of an installed pmusim meets: `make install DESTDIR=D PREFIX=/usr` puts
 * the binary, a man page per command and the bash completion where man and bash
 * look; man renders every page without a warning and the page holds every word of
 * the command's --help in order; the completion completes commands and each
 * command's options; `make uninstall` takes them away; `pmusim --version` prints
 * one line naming the VERSION file's version; `pmusim help CMD` prints what
 * `pmusim CMD --help` prints. Runs in the repository's root (as make test does). */
#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tests/e2e/e2e_util.h"
#include "tests/unit/run_suite.h"

/* pmusim's commands, as its README documents them */
static const char *const commands[] = {"run",    "stat",     "record",    "script",
                                       "report", "validate", "uniformity", "diff"};
#define NCOMMANDS (sizeof(commands) / sizeof(commands[0]))

/* The staging root, installed once per test process; NULL when make failed. */
static const char *root(void)
{
	static char dir[512];
	if (dir[0])
		return dir;
	/* the build whose pmusim is under test: build/MODE/pmusim */
	char mode[64] = "release";
	const char *p = pmusim(), *b = strstr(p, "build/");
	if (b && strchr(b + 6, '/') && strcmp(strchr(b + 6, '/'), "/pmusim") == 0)
		snprintf(mode, sizeof(mode), "MODE=%.*s", (int)(strchr(b + 6, '/') - (b + 6)),
		         b + 6);
	else
		snprintf(mode, sizeof(mode), "MODE=release");
	snprintf(dir, sizeof(dir), "%s", tmp_path("root"));
	char destdir[600];
	snprintf(destdir, sizeof(destdir), "DESTDIR=%s", dir);
	char *argv[] = {"make", "-s", mode, destdir, "PREFIX=/usr", "install", NULL};
	ck_assert_msg(access("Makefile", R_OK) == 0, "not in the repository's root");
	int rc = run_cmd(argv, NULL, tmp_path("make.out"), tmp_path("make.err"));
	char *err = slurp(tmp_path("make.err"), NULL);
	ck_assert_msg(rc == 0, "make install: exit %d: %s", rc, err ? err : "");
	free(err);
	return dir;
}

static const char *under_root(const char *rel)
{
	static char buf[4][700];
	static int k;
	k = (k + 1) % 4;
	snprintf(buf[k], sizeof(buf[k]), "%s/%s", root(), rel);
	return buf[k];
}

static const char *man_page(const char *cmd)
{
	static char rel[128];
	if (cmd)
		snprintf(rel, sizeof(rel), "usr/share/man/man1/pmusim-%s.1", cmd);
	else
		snprintf(rel, sizeof(rel), "usr/share/man/man1/pmusim.1");
	return under_root(rel);
}

#define COMPLETION "usr/share/bash-completion/completions/pmusim"

/* stdout of pmusim with args (NULL-terminated, at most 6); *rc its exit status */
static char *pmusim_out(int *rc, const char *a0, const char *a1, const char *a2)
{
	char *argv[] = {(char *)pmusim(), (char *)a0, (char *)a1, (char *)a2, NULL};
	*rc = run_cmd(argv, NULL, tmp_path("out"), tmp_path("err"));
	return slurp(tmp_path("out"), NULL);
}

START_TEST(install_puts_files_in_place)
{
	struct stat st;
	ck_assert_int_eq(stat(under_root("usr/bin/pmusim"), &st), 0);
	ck_assert_msg(st.st_mode & S_IXUSR, "usr/bin/pmusim is not executable");
	ck_assert_msg(access(man_page(NULL), R_OK) == 0, "no pmusim.1");
	for (size_t i = 0; i < NCOMMANDS; i++)
		ck_assert_msg(access(man_page(commands[i]), R_OK) == 0, "no man page for %s",
		              commands[i]);
	ck_assert_msg(access(under_root(COMPLETION), R_OK) == 0, "no bash completion");
	/* the installed binary is the one built */
	char *argv[] = {(char *)under_root("usr/bin/pmusim"), "--version", NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, tmp_path("v"), NULL), 0);
	int rc;
	char *want = pmusim_out(&rc, "--version", NULL, NULL), *got = slurp(tmp_path("v"), NULL);
	ck_assert_str_eq(got, want);
	free(want);
	free(got);
}
END_TEST

START_TEST(uninstall_removes_them)
{
	char destdir[600];
	snprintf(destdir, sizeof(destdir), "DESTDIR=%s", root());
	char *argv[] = {"make", "-s", destdir, "PREFIX=/usr", "uninstall", NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, NULL, NULL), 0);
	ck_assert_int_ne(access(under_root("usr/bin/pmusim"), F_OK), 0);
	ck_assert_int_ne(access(man_page(NULL), F_OK), 0);
	for (size_t i = 0; i < NCOMMANDS; i++)
		ck_assert_int_ne(access(man_page(commands[i]), F_OK), 0);
	ck_assert_int_ne(access(under_root(COMPLETION), F_OK), 0);
}
END_TEST

/* Words of a text for comparison: lower case, a trailing ':' dropped. */
static size_t words(char *s, char ***out)
{
	size_t n = 0, cap = 64;
	char **w = malloc(cap * sizeof(*w));
	for (char *tok = strtok(s, " \t\n\""); tok; tok = strtok(NULL, " \t\n\"")) {
		for (char *c = tok; *c; c++)
			*c = (char)tolower((unsigned char)*c);
		size_t len = strlen(tok);
		if (len > 1 && tok[len - 1] == ':')
			tok[len - 1] = 0;
		if (n == cap)
			w = realloc(w, (cap *= 2) * sizeof(*w));
		w[n++] = tok;
	}
	*out = w;
	return n;
}

/* The text of a man page's source: requests' arguments kept (section names),
 * the escapes it uses undone. */
static char *page_text(const char *path)
{
	char *src = slurp(path, NULL);
	ck_assert_ptr_nonnull(src);
	char *t = malloc(strlen(src) + 1), *o = t;
	for (char *line = strtok(src, "\n"); line; line = strtok(NULL, "\n")) {
		if (line[0] == '.') /* the request's name */
			line += strcspn(line, " ");
		for (char *c = line; *c; c++) {
			if (c[0] == '\\' && c[1] == 'f' && c[2]) /* font change */
				c += 2;
			else if (c[0] == '\\' && c[1] == '&')
				c++;
			else if (c[0] == '\\' && c[1] == '-')
				*o++ = '-', c++;
			else if (c[0] == '\\' && c[1] == 'e')
				*o++ = '\\', c++;
			else
				*o++ = *c;
		}
		*o++ = '\n';
	}
	*o = 0;
	free(src);
	return t;
}

static void check_page(const char *page, const char *cmd)
{
	/* rendered by man without a warning */
	setenv("MANWIDTH", "80", 1);
	char *argv[] = {"man", "-l", (char *)page, NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, tmp_path("man.out"), tmp_path("man.err")), 0);
	size_t out_len, err_len;
	char *out = slurp(tmp_path("man.out"), &out_len),
	     *err = slurp(tmp_path("man.err"), &err_len);
	ck_assert_msg(err_len == 0, "man -l %s: %s", page, err);
	ck_assert_msg(out_len > 200, "man -l %s printed %zu bytes", page, out_len);
	free(out);
	free(err);
	/* every word of --help, in the same order, except "usage:" */
	int rc;
	char *help =
	    cmd ? pmusim_out(&rc, cmd, "--help", NULL) : pmusim_out(&rc, "--help", NULL, NULL);
	ck_assert_int_eq(rc, 0);
	char *text = page_text(page), **hw, **pw;
	size_t nh = words(help, &hw), np = words(text, &pw), j = 0;
	ck_assert_msg(nh > 10 && strcmp(hw[0], "usage") == 0,
	              "%s --help does not start with usage:", cmd);
	for (size_t i = 1; i < nh; i++) {
		while (j < np && strcmp(pw[j], hw[i]) != 0)
			j++;
		ck_assert_msg(
		    j < np, "%s: word %zu of --help, '%s', missing from the page (or out of order)",
		    page, i, hw[i]);
		j++;
	}
	free(hw);
	free(pw);
	free(help);
	free(text);
}

START_TEST(man_pages_render_the_help_texts)
{
	check_page(man_page(NULL), NULL);
	for (size_t i = 0; i < NCOMMANDS; i++)
		check_page(man_page(commands[i]), commands[i]);
}
END_TEST

/* Completion cases: the command line up to the cursor and COMPREPLY, one word a line. */
static const struct {
	int line;
	const char *words;
	const char *reply;
} completions[] = {
    {__LINE__, "pmusim rec", "record\n"},
    {__LINE__, "pmusim u", "uniformity\n"},
    {__LINE__, "pmusim --v", "--version\n"},
    {__LINE__, "pmusim help va", "validate\n"},
    {__LINE__, "pmusim record --lbr", "--lbr-depth\n"},
    {__LINE__, "pmusim record --branch-f", "--branch-filter\n"},
    {__LINE__, "pmusim uniformity --del", "--delta\n"},
    {__LINE__, "pmusim script --max", "--max-stack\n"},
    {__LINE__, "pmusim validate --min-o", "--min-overlap\n"},
    {__LINE__, "pmusim stat -e cycles --field", "--field-separator\n"},
    {__LINE__, "pmusim record -- /bin/ls --ev", ""}, /* the program's own options */
    {__LINE__, "pmusim report --nosuch", ""},
};

START_TEST(completion_completes_commands_and_options)
{
	/* the completion function, as the file registers it */
	char script[1200];
	snprintf(script, sizeof(script), "source '%s' && complete -p pmusim",
	         under_root(COMPLETION));
	char *argv[] = {"bash", "-c", script, NULL};
	ck_assert_int_eq(run_cmd(argv, NULL, tmp_path("c.out"), NULL), 0);
	char *spec = slurp(tmp_path("c.out"), NULL), *f = strstr(spec, "-F ");
	ck_assert_msg(f, "no completion function: %s", spec);
	char fn[64];
	ck_assert_int_eq(sscanf(f + 3, "%63s", fn), 1);
	free(spec);
	for (size_t i = 0; i < sizeof(completions) / sizeof(completions[0]); i++) {
		snprintf(script, sizeof(script),
		         "source '%s' && COMP_WORDS=(%s) && COMP_CWORD=$((${#COMP_WORDS[@]} - 1)) "
		         "&& %s && "
		         "{ [ ${#COMPREPLY[@]} -eq 0 ] || printf '%%s\\n' \"${COMPREPLY[@]}\"; }",
		         under_root(COMPLETION), completions[i].words, fn);
		ck_assert_int_eq(run_cmd(argv, NULL, tmp_path("c.out"), NULL), 0);
		char *got = slurp(tmp_path("c.out"), NULL);
		ck_assert_msg(strcmp(got, completions[i].reply) == 0,
		              "line %d: '%s' completes to '%s', not '%s'", completions[i].line,
		              completions[i].words, got, completions[i].reply);
		free(got);
	}
}
END_TEST

START_TEST(version_is_one_line)
{
	int rc;
	char *out = pmusim_out(&rc, "--version", NULL, NULL), *err = slurp(tmp_path("err"), NULL);
	ck_assert_int_eq(rc, 0);
	ck_assert_str_eq(err, "");
	char *version = slurp("VERSION", NULL), want[128];
	ck_assert_ptr_nonnull(version);
	version[strcspn(version, "\n")] = 0;
	snprintf(want, sizeof(want), "pmusim %s\n", version);
	ck_assert_str_eq(out, want);
	free(out);
	free(err);
	free(version);
}
END_TEST

START_TEST(help_cmd_is_cmd_help)
{
	int rc;
	for (size_t i = 0; i < NCOMMANDS; i++) {
		char *a = pmusim_out(&rc, "help", commands[i], NULL);
		ck_assert_int_eq(rc, 0);
		char *b = pmusim_out(&rc, commands[i], "--help", NULL);
		ck_assert_int_eq(rc, 0);
		ck_assert_msg(strncmp(b, "usage: pmusim ", 14) == 0, "%s --help: %.40s",
		              commands[i], b);
		ck_assert_str_eq(a, b);
		free(a);
		free(b);
	}
	char *a = pmusim_out(&rc, "help", NULL, NULL), *b = pmusim_out(&rc, "--help", NULL, NULL);
	ck_assert_str_eq(a, b);
	free(a);
	free(b);
	a = pmusim_out(&rc, "help", "nosuch", NULL);
	ck_assert_int_eq(rc, 2);
	ck_assert_str_eq(a, "");
	char *err = slurp(tmp_path("err"), NULL);
	ck_assert_msg(strchr(err, '\n') == err + strlen(err) - 1, "not one line: %s", err);
	ck_assert_ptr_nonnull(strstr(err, "nosuch"));
	free(a);
	free(err);
}
END_TEST

int main(void)
{
	e2e_init();
	Suite *s = suite_create("install");
	TCase *tc = tcase_create("install");
	tcase_set_timeout(tc, 300);
	tcase_add_test(tc, install_puts_files_in_place);
	tcase_add_test(tc, man_pages_render_the_help_texts);
	tcase_add_test(tc, completion_completes_commands_and_options);
	tcase_add_test(tc, uninstall_removes_them);
	tcase_add_test(tc, version_is_one_line);
	tcase_add_test(tc, help_cmd_is_cmd_help);
	suite_add_tcase(s, tc);
	return run_suite(s);
}
