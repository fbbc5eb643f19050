/* run --dbr-regions: reading the region set, the replay's sink, its report. */
#include "cli/dbr_replay.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/json_read.h"

/* The set's program and the run's are one file (the addresses are its). */
static int same_program(const char *a, const char *b)
{
	char ra[PATH_MAX], rb[PATH_MAX];
	if (realpath(a, ra) && realpath(b, rb))
		return strcmp(ra, rb) == 0;
	return strcmp(a, b) == 0;
}

int dbr_regions_of_program(const struct jv *doc, const char *path)
{
	const struct jv *prog = jv_get(doc, "program");
	return !(prog && prog->type == JV_STR && prog->len && !same_program(prog->text, path));
}

int dbr_replay_open(struct dbr_replay *d, struct program *p)
{
	char msg[512] = "";
	struct jv *doc = NULL;
	int err = json_parse_file(d->regions, &doc, msg, sizeof(msg));
	if (err < 0)
		return fprintf(stderr, "%s: %s: %s\n", p->cmd, d->regions, msg), -1;
	const struct jv *prog = jv_get(doc, "program");
	if (!dbr_regions_of_program(doc, p->so.path)) {
		fprintf(stderr,
		        "%s: %s: regions of %s, not of %s (select them from this program)\n",
		        p->cmd, d->regions, prog->text, p->so.path);
		jv_free(doc);
		return -1;
	}
	err = rset_from_json(doc, &d->set, msg, sizeof(msg));
	jv_free(doc);
	if (err < 0)
		return fprintf(stderr, "%s: %s: %s\n", p->cmd, d->regions, msg), -1;
	if (d->report && !(d->out = outputs_open(&p->outs, "--dbr-report", d->report)))
		return -1;
	return 0;
}

int dbr_replay_attach(struct dbr_replay *d, struct program *p)
{
	if (rreplay_new(d->set, &d->rp) < 0 || sim_add_image_sink(p->sim, rreplay_sink(d->rp)) < 0)
		return fprintf(stderr, "%s: out of memory\n", p->cmd), -1;
	return 0;
}

int dbr_replay_write(struct dbr_replay *d, struct program *p)
{
	if (!d->rp)
		return 0;
	int err = rreplay_finish(d->rp);
	if (err < 0)
		return fprintf(stderr, "%s: the replay ran out of memory: no report\n", p->cmd), -1;
	if (!d->out) {
		fflush(stdout);
		return rreplay_write_text(stderr, d->rp) < 0 ? -1 : 0;
	}
	err = rreplay_write_json(d->out->f, d->rp);
	if (err < 0)
		return fprintf(stderr, "%s: cannot write %s: %s\n", p->cmd, d->report,
		               pmusim_strerror(err)),
		       -1;
	return outputs_commit(&p->outs, d->out);
}

void dbr_replay_free(struct dbr_replay *d)
{
	rreplay_free(d->rp);
	rset_free(d->set);
	memset(d, 0, sizeof(*d));
}
