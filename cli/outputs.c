/* Output files opened together before the work (see cli/outputs.h). */
#include "cli/outputs.h"

#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "common/err.h"

void outputs_init(struct outputs *s, const char *cmd)
{
	memset(s, 0, sizeof(*s));
	s->cmd = cmd;
}

/* The file path ends up as when it is a regular file or a new name: the real path of
 * its directory and its last component, links followed. NULL for anything written in
 * place (devices, FIFOs, "-"), which two outputs may share. */
static char *final_file(const char *path)
{
	struct stat st;
	if (strcmp(path, "-") == 0 || (stat(path, &st) == 0 && !S_ISREG(st.st_mode)))
		return NULL;
	char *real = realpath(path, NULL);
	if (real)
		return real;
	char *d = strdup(path), *b = strdup(path), *out = NULL;
	char *dir = d ? realpath(dirname(d), NULL) : NULL;
	if (dir && b) {
		size_t n = strlen(dir) + strlen(b) + 2;
		if ((out = malloc(n)))
			snprintf(out, n, "%s/%s", dir, basename(b));
	}
	free(dir), free(d), free(b);
	return out;
}

struct outfile *outputs_open(struct outputs *s, const char *opt, const char *path)
{
	if (s->n == OUTPUTS_MAX) {
		fprintf(stderr, "%s: too many output files\n", s->cmd);
		return NULL;
	}
	struct output *o = &s->o[s->n];
	memset(o, 0, sizeof(*o));
	o->opt = opt;
	o->path = path;
	o->same = final_file(path);
	for (size_t i = 0; i < s->n && o->same; i++)
		if (s->o[i].same && strcmp(s->o[i].same, o->same) == 0) {
			fprintf(
			    stderr,
			    "%s: %s and %s both name %s (each output needs a file of its own)\n",
			    s->cmd, s->o[i].opt, opt, path);
			free(o->same);
			return NULL;
		}
	int err = outfile_open(&o->f, path);
	if (err < 0) {
		fprintf(stderr, "%s: cannot create %s: %s\n", s->cmd, path,
		        err == PMUSIM_ERR_IO ? strerror(errno) : pmusim_strerror(err));
		free(o->same);
		return NULL;
	}
	o->open = 1;
	o->renamed = o->f.tmp != NULL;
	s->n++;
	return &o->f;
}

static struct output *output_of(struct outputs *s, struct outfile *f)
{
	for (size_t i = 0; i < s->n; i++)
		if (&s->o[i].f == f)
			return &s->o[i];
	return NULL;
}

int outputs_commit(struct outputs *s, struct outfile *f)
{
	struct output *o = output_of(s, f);
	if (!o || !o->open)
		return -1;
	o->open = 0;
	errno = 0;
	int err = outfile_commit(f);
	if (err < 0) {
		fprintf(stderr, "%s: cannot write %s: %s\n", s->cmd, o->path,
		        err == PMUSIM_ERR_IO && errno ? strerror(errno) : pmusim_strerror(err));
		return -1;
	}
	return 0;
}

void outputs_hand_over(struct outputs *s, struct outfile *f)
{
	struct output *o = output_of(s, f);
	if (o)
		o->open = 0;
}

void outputs_fini(struct outputs *s)
{
	for (size_t i = 0; i < s->n; i++) {
		if (s->o[i].open)
			outfile_abort(&s->o[i].f);
		free(s->o[i].same);
	}
	s->n = 0;
}
