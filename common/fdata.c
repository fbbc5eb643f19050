/* BOLT fdata text (see fdata.h). */
#include "common/fdata.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/number.h"

void fdata_loc_text(const struct fdata_namer *nm, uint64_t addr, char *buf, size_t len)
{
	const struct sym *s = symtab_lookup(nm->st, addr);
	if (s) {
		char name[512];
		symtab_bolt_name(s, name, sizeof(name));
		snprintf(buf, len, "1 %s %" PRIx64, name, addr - s->addr);
		return;
	}
	for (size_t i = nm->nregions; i-- > 0;) {
		const struct fdata_region *r = &nm->regions[i];
		if (addr >= r->start && addr < r->end) {
			snprintf(buf, len, "0 %s %" PRIx64, r->name, addr - r->bias);
			return;
		}
	}
	snprintf(buf, len, "0 %s %" PRIx64, nm->dso, addr - nm->bias);
}

int fdata_region_resolve(const struct fdata_region *r, size_t n, const char *name, uint64_t off,
			 uint64_t *addr)
{
	const struct fdata_region *named = NULL;
	for (size_t i = n; i-- > 0;) {
		if (strcmp(r[i].name, name) != 0)
			continue;
		if (!named)
			named = &r[i];
		if (r[i].bias + off >= r[i].start && r[i].bias + off < r[i].end) {
			named = &r[i];
			break;
		}
	}
	if (named)
		*addr = named->bias + off;
	return named != NULL;
}

void fdata_write_loc(FILE *f, const struct fdata_namer *nm, uint64_t addr)
{
	char buf[600];
	fdata_loc_text(nm, addr, buf, sizeof(buf));
	fputs(buf, f);
}

void fdata_write_line(FILE *f, const struct fdata_namer *nm, uint64_t from, uint64_t to,
		      uint64_t mispreds, uint64_t count)
{
	fdata_write_loc(f, nm, from);
	fputc(' ', f);
	fdata_write_loc(f, nm, to);
	fprintf(f, " %" PRIu64 " %" PRIu64 "\n", mispreds, count);
}

int fdata_parse_line(const char *text, struct fdata_line *out)
{
	char f[6][512];
	char mis[64], cnt[64];
	int n = sscanf(text, "%511s %511s %511s %511s %511s %511s %63s %63s", f[0], f[1], f[2], f[3], f[4],
		       f[5], mis, cnt);
	if (n != 8 || (strcmp(f[0], "0") != 0 && strcmp(f[0], "1") != 0) ||
	    (strcmp(f[3], "0") != 0 && strcmp(f[3], "1") != 0))
		return -1;
	char *end;
	out->mispreds = strtoull(mis, &end, 10);
	if (*end)
		return -1;
	if (number_parse_real(cnt, &out->count) != NUMBER_OK || out->count < 0)
		return -1;
	int k = snprintf(out->key, sizeof(out->key), "%s %s %s %s %s %s", f[0], f[1], f[2], f[3], f[4], f[5]);
	return k > 0 && (size_t)k < sizeof(out->key) ? 0 : -1;
}
