/* --dbr-install: reading the region set, emitting each region's replacement
 * code for the place the machine has for it, installing it. */
#include "cli/dbr_install.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/dbr_replay.h"
#include "cli/program.h"
#include "common/dbr_image.h"
#include "common/err.h"
#include "common/json_read.h"
#include "profiler/binary.h"
#include "profiler/dbr_code.h"
#include "profiler/region_set.h"
#include "sim/dbr_map.h"

int dbr_install_layout(struct dbr_install *d, const char *cmd, const char *arg)
{
	if (strcmp(arg, "identity") == 0 || strcmp(arg, "hot") == 0)
		d->identity = arg[0] == 'i', d->layout_given = 1;
	else
		return fprintf(stderr, "%s: --dbr-layout '%s': identity or hot\n", cmd, arg), -1;
	return 0;
}

int dbr_install_open(struct dbr_install *d, struct program *p)
{
	char msg[512] = "";
	struct jv *doc = NULL;
	int err = json_parse_file(d->path, &doc, msg, sizeof(msg));
	if (err < 0)
		return fprintf(stderr, "%s: %s: %s\n", p->cmd, d->path, msg), -1;
	if (!dbr_regions_of_program(doc, p->so.path)) {
		fprintf(stderr, "%s: %s: regions of another program than %s (select them from this program)\n",
			p->cmd, d->path, p->so.path);
		jv_free(doc);
		return -1;
	}
	err = rset_from_json(doc, &d->set, msg, sizeof(msg));
	jv_free(doc);
	if (err < 0)
		return fprintf(stderr, "%s: %s: %s\n", p->cmd, d->path, msg), -1;
	p->so.dbr = 1;
	return 0;
}

static int install_region(struct dbr_install *d, struct program *p, const struct rset_region *r,
			  struct binary *bin)
{
	char msg[512] = "";
	struct dbr_code *c = NULL;
	int err = dbr_code_emit(r, bin, NULL, d->identity ? DBR_IDENTITY : DBR_HOT_PATHS, sim_dbr_next(p->sim), &c, msg,
				sizeof(msg));
	if (err < 0)
		return fprintf(stderr, "%s: %s: region at 0x%llx: %s\n", p->cmd, d->path,
			       (unsigned long long)r->start, msg), -1;
	if (c->len > sim_dbr_room(p->sim)) {
		dbr_code_free(c);
		return fprintf(stderr, "%s: %s: no room left for the replacement code of region 0x%llx\n",
			       p->cmd, d->path, (unsigned long long)r->start), -1;
	}
	struct dbr_image img = dbr_code_image(c);
	err = sim_dbr_install(p->sim, &img);
	if (err < 0) {
		dbr_code_free(c);
		return fprintf(stderr, "%s: %s: region at 0x%llx cannot be installed: %s (its patch points "
			       "are not the program's bytes, or overlap another region's)\n",
			       p->cmd, d->path, (unsigned long long)r->start, pmusim_strerror(err)), -1;
	}
	d->code[d->ncode++] = c;
	d->bytes += c->len;
	return 0;
}

int dbr_install_apply(struct dbr_install *d, struct program *p)
{
	char msg[512] = "";
	struct binary *bin = NULL;
	int err = binary_open(sim_exe_path(p->sim), sim_load_bias(p->sim), &bin, msg, sizeof(msg));
	if (err < 0)
		return fprintf(stderr, "%s: %s\n", p->cmd, msg), -1;
	d->code = calloc(d->set->nregion + 1, sizeof(*d->code));
	int ret = d->code ? 0 : (fprintf(stderr, "%s: out of memory\n", p->cmd), -1);
	for (size_t i = 0; i < d->set->nregion && ret == 0; i++) {
		const struct rset_region *r = &d->set->region[i];
		if (!dbr_region_in(r, bin)) {
			d->skipped++;
			if (!p->quiet)
				fprintf(stderr, "%s: region at 0x%llx is not installed: only the program's own code "
					"is rewritten, not its libraries'\n", p->cmd, (unsigned long long)r->start);
			continue;
		}
		ret = install_region(d, p, r, bin);
	}
	binary_free(bin);
	if (ret == 0 && p->verbose)
		fprintf(stderr, "%s: --dbr-install: %zu regions installed (%llu bytes of replacement code), %zu not\n",
			p->cmd, d->ncode, (unsigned long long)d->bytes, d->skipped);
	return ret;
}

void dbr_install_tell(const struct dbr_install *d, const struct program *p)
{
	struct dbr_counts c;
	sim_dbr_counts(p->sim, &c);
	(void)d;
	if (p->verbose)
		fprintf(stderr, "%s: rewritten: %llu instructions ran in replacement code, %llu of them added "
			"jumps; %llu patch jumps; %llu jumps laid out as fall-throughs\n", p->cmd,
			(unsigned long long)c.inside, (unsigned long long)c.added_inside,
			(unsigned long long)c.patch_jumps, (unsigned long long)c.left_out);
	if (c.unknown)
		fprintf(stderr, "%s: internal error: %llu instructions of replacement code were not in its map: "
			"the truth is not the original program's\n", p->cmd, (unsigned long long)c.unknown);
}

void dbr_install_free(struct dbr_install *d)
{
	for (size_t i = 0; i < d->ncode; i++)
		dbr_code_free(d->code[i]);
	free(d->code);
	rset_free(d->set);
	memset(d, 0, sizeof(*d));
}
