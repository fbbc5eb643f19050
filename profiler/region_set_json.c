/* The region set as JSON (the "replacement" member of a region in report
 * --regions' JSON) and back, for run --dbr-regions: the layout region_set.h
 * names, every member checked on reading. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/err.h"
#include "common/json_read.h"
#include "pmu_model/block.h"
#include "profiler/region_set.h"

void rset_write_region_json(FILE *f, const struct rset_region *r)
{
	fprintf(f, "{\"est_insns\": %.17g, \"blocks\": [", r->est_insns);
	for (uint32_t b = 0; b < r->nblock; b++) {
		const struct rset_block *o = &r->block[b];
		fprintf(f,
		        "%s\n     {\"start\": \"0x%" PRIx64
		        "\", \"clone\": %u, \"kind\": \"%s\", \"off\": [",
		        b ? "," : "", o->start, o->clone, br_kind_name(o->kind));
		for (uint32_t i = 0; i <= o->ninsns; i++)
			fprintf(f, "%s%u", i ? ", " : "", o->off[i]);
		fputs("], \"succ\": [", f);
		for (uint32_t i = 0; i < o->nsucc; i++)
			fprintf(f, "%s%u", i ? ", " : "", o->succ[i]);
		fprintf(f, "], \"count\": %.10g, \"inside\": %.10g}", o->count, o->inside);
	}
	fputs("],\n    \"clones\": [", f);
	for (uint32_t k = 0; k < r->nclone; k++) {
		const struct rset_clone *cl = &r->clone[k];
		fprintf(f,
		        "%s\n     {\"call\": \"0x%" PRIx64 "\", \"ret\": \"0x%" PRIx64
		        "\", \"callee\": \"0x%" PRIx64 "\", \"parent\": %u, \"entry\": ",
		        k ? "," : "", cl->call, cl->ret, cl->callee, cl->parent);
		if (cl->entry == RSET_NONE)
			fputs("null", f);
		else
			fprintf(f, "%u", cl->entry);
		fprintf(f, ", \"scale\": %.10g}", cl->scale);
	}
	fputs("],\n    \"points\": [", f);
	for (uint32_t k = 0; k < r->npoint; k++)
		fprintf(f,
		        "%s{\"addr\": \"0x%" PRIx64 "\", \"block\": %u, \"insn\": %u, \"len\": %u}",
		        k ? ", " : "", r->point[k].addr, r->point[k].block, r->point[k].insn,
		        r->point[k].len);
	fputs("],\n    \"loops\": [", f);
	for (uint32_t l = 0; l < r->nloop; l++) {
		fprintf(f, "%s{\"header\": %u, \"blocks\": [", l ? ", " : "", r->loop[l].header);
		for (uint32_t k = 0; k < r->loop[l].nblock; k++)
			fprintf(f, "%s%u", k ? ", " : "", r->loop[l].block[k]);
		fputs("]}", f);
	}
	fputs("]}", f);
}

/* Reading. read_block gives PMUSIM_ERR_FORMAT or PMUSIM_ERR_NOMEM (which is
 * -1: no bare -1 for a format error). Each check names the member, so that a hand-edited file's
 * mistake is found. */

static int bad(char *msg, size_t msglen, size_t reg, const char *what)
{
	return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT, "regions[%zu].replacement: %s", reg,
	                   what);
}

static int get_u32(const struct jv *v, uint32_t *out)
{
	uint64_t u;
	if (!v || v->type != JV_NUM || jv_u64(v, &u) < 0 || u > UINT32_MAX)
		return -1;
	*out = (uint32_t)u;
	return 0;
}

static int kind_of(const struct jv *v, uint8_t *out)
{
	if (!v || v->type != JV_STR)
		return -1;
	for (int k = 0; k < BK_COUNT; k++)
		if (strcmp(v->text, br_kind_name(k)) == 0)
			return *out = (uint8_t)k, 0;
	return -1;
}

static int read_block(const struct jv *v, struct rset_block *o, uint32_t nblock)
{
	const struct jv *off = jv_get(v, "off"), *succ = jv_get(v, "succ");
	double d;
	if (jv_u64(jv_get(v, "start"), &o->start) < 0 ||
	    get_u32(jv_get(v, "clone"), &o->clone) < 0 ||
	    kind_of(jv_get(v, "kind"), &o->kind) < 0 || !off || off->type != JV_ARR || off->n < 2 ||
	    off->n > 65536 || !succ || succ->type != JV_ARR || succ->n > nblock)
		return PMUSIM_ERR_FORMAT;
	o->ninsns = (uint32_t)off->n - 1;
	o->off = malloc(off->n * sizeof(uint16_t));
	o->succ = malloc((succ->n + 1) * sizeof(uint32_t));
	if (!o->off || !o->succ)
		return PMUSIM_ERR_NOMEM;
	for (size_t i = 0; i < off->n; i++) {
		uint32_t u;
		if (get_u32(&off->item[i], &u) < 0 || u > UINT16_MAX || (i == 0 && u != 0) ||
		    (i > 0 && u <= o->off[i - 1]))
			return PMUSIM_ERR_FORMAT;
		o->off[i] = (uint16_t)u;
	}
	for (size_t i = 0; i < succ->n; i++)
		if (get_u32(&succ->item[i], &o->succ[i]) < 0 || o->succ[i] >= nblock)
			return PMUSIM_ERR_FORMAT;
	o->nsucc = (uint32_t)succ->n;
	if (jv_num(jv_get(v, "count"), &d) == 0)
		o->count = d;
	if (jv_num(jv_get(v, "inside"), &d) == 0)
		o->inside = d;
	return 0;
}

static int read_points(const struct jv *pts, struct rset_region *r, char *msg, size_t ml, size_t ri)
{
	if (!pts || pts->type != JV_ARR)
		return bad(msg, ml, ri, "\"points\" is not an array");
	if (!(r->point = calloc(pts->n + 1, sizeof(*r->point))))
		return PMUSIM_ERR_NOMEM;
	for (size_t k = 0; k < pts->n; k++) {
		struct rset_point *p = &r->point[k];
		uint32_t len;
		if (jv_u64(jv_get(&pts->item[k], "addr"), &p->addr) < 0 ||
		    get_u32(jv_get(&pts->item[k], "block"), &p->block) < 0 ||
		    get_u32(jv_get(&pts->item[k], "insn"), &p->insn) < 0 ||
		    get_u32(jv_get(&pts->item[k], "len"), &len) < 0 || p->block >= r->nblock ||
		    p->insn >= r->block[p->block].ninsns || r->block[p->block].clone != 0 ||
		    p->addr != r->block[p->block].start + r->block[p->block].off[p->insn] ||
		    len > 15 || (k > 0 && p->addr <= r->point[k - 1].addr))
			return bad(msg, ml, ri,
			           "a point is not an instruction of its own-code block (or not by "
			           "address)");
		p->len = (uint8_t)len;
		r->npoint++;
	}
	return 0;
}

static int read_loops(const struct jv *lps, struct rset_region *r, char *msg, size_t ml, size_t ri)
{
	if (!lps || lps->type != JV_ARR)
		return bad(msg, ml, ri, "\"loops\" is not an array");
	if (!(r->loop = calloc(lps->n + 1, sizeof(*r->loop))))
		return PMUSIM_ERR_NOMEM;
	for (size_t l = 0; l < lps->n; l++) {
		struct rset_loop *o = &r->loop[l];
		const struct jv *bl = jv_get(&lps->item[l], "blocks");
		if (get_u32(jv_get(&lps->item[l], "header"), &o->header) < 0 ||
		    o->header >= r->nblock || !bl || bl->type != JV_ARR || bl->n > r->nblock)
			return bad(msg, ml, ri, "a loop's header or blocks are out of range");
		if (!(o->block = malloc((bl->n + 1) * sizeof(uint32_t))))
			return PMUSIM_ERR_NOMEM;
		r->nloop++;
		for (size_t k = 0; k < bl->n; k++) {
			if (get_u32(&bl->item[k], &o->block[k]) < 0 || o->block[k] >= r->nblock)
				return bad(msg, ml, ri, "a loop's blocks are out of range");
			o->nblock++;
		}
	}
	return 0;
}

static int read_clones(const struct jv *cls, struct rset_region *r, char *msg, size_t ml, size_t ri)
{
	if (!cls || cls->type != JV_ARR || cls->n >= UINT32_MAX)
		return bad(msg, ml, ri, "\"clones\" is not an array");
	if (!(r->clone = calloc(cls->n + 1, sizeof(*r->clone))))
		return PMUSIM_ERR_NOMEM;
	for (size_t k = 0; k < cls->n; k++) {
		struct rset_clone *o = &r->clone[k];
		const struct jv *v = &cls->item[k], *e = jv_get(v, "entry");
		double sc;
		if (jv_u64(jv_get(v, "call"), &o->call) < 0 ||
		    jv_u64(jv_get(v, "ret"), &o->ret) < 0 ||
		    jv_u64(jv_get(v, "callee"), &o->callee) < 0 ||
		    get_u32(jv_get(v, "parent"), &o->parent) < 0 || o->parent > k ||
		    jv_num(jv_get(v, "scale"), &sc) < 0)
			return bad(msg, ml, ri, "a clone lacks call, ret, callee, parent or scale");
		o->scale = sc;
		o->entry = RSET_NONE;
		if (e && e->type != JV_NULL && (get_u32(e, &o->entry) < 0 || o->entry >= r->nblock))
			return bad(msg, ml, ri, "a clone's entry is out of range");
		r->nclone++;
	}
	return 0;
}

static int read_region(const struct jv *reg, const struct jv *rep, struct rset_region *r, char *msg,
                       size_t ml, size_t ri)
{
	const struct jv *bl = jv_get(rep, "blocks");
	double d;
	if (jv_u64(jv_get(reg, "start"), &r->start) < 0)
		return bad(msg, ml, ri, "the region has no \"start\"");
	if (rep->type != JV_OBJ || !bl || bl->type != JV_ARR || bl->n >= UINT32_MAX)
		return bad(msg, ml, ri, "\"blocks\" is not an array");
	if (jv_num(jv_get(rep, "est_insns"), &d) < 0)
		return bad(msg, ml, ri, "\"est_insns\" is not a number");
	r->est_insns = d;
	if (!(r->block = calloc(bl->n + 1, sizeof(*r->block))))
		return PMUSIM_ERR_NOMEM;
	for (size_t b = 0; b < bl->n; b++) {
		int err = read_block(&bl->item[b], &r->block[b], (uint32_t)bl->n);
		r->nblock++;
		if (err == PMUSIM_ERR_NOMEM)
			return err;
		if (err < 0)
			return bad(msg, ml, ri,
			           "a block lacks start, clone, kind, ascending offsets from 0 or "
			           "links in range");
	}
	int err = read_clones(jv_get(rep, "clones"), r, msg, ml, ri);
	if (!err)
		err = read_points(jv_get(rep, "points"), r, msg, ml, ri);
	if (!err)
		err = read_loops(jv_get(rep, "loops"), r, msg, ml, ri);
	for (uint32_t b = 0; !err && b < r->nblock; b++)
		if (r->block[b].clone > r->nclone)
			err = bad(msg, ml, ri, "a block's clone is out of range");
	return err;
}

int rset_from_json(const struct jv *doc, struct rset **out, char *msg, size_t msglen)
{
	const struct jv *regs = jv_get(doc, "regions");
	double total;
	if (!regs || regs->type != JV_ARR)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT,
		                   "no \"regions\" array (not the JSON of report --regions)");
	if (jv_num(jv_get(doc, "total"), &total) < 0)
		return pmusim_fail(msg, msglen, PMUSIM_ERR_FORMAT, "no \"total\" number");
	struct rset *s = calloc(1, sizeof(*s));
	if (!s || !(s->region = calloc(regs->n + 1, sizeof(*s->region)))) {
		rset_free(s);
		return pmusim_fail(msg, msglen, PMUSIM_ERR_NOMEM, "out of memory");
	}
	int err = 0;
	for (size_t i = 0; !err && i < regs->n; i++) {
		const struct jv *rep = jv_get(&regs->item[i], "replacement");
		if (!rep)
			continue;
		err = read_region(&regs->item[i], rep, &s->region[s->nregion++], msg, msglen, i);
		s->est_insns += s->region[s->nregion - 1].est_insns;
	}
	if (err) {
		if (err == PMUSIM_ERR_NOMEM)
			pmusim_fail(msg, msglen, err, "out of memory");
		rset_free(s);
		return err;
	}
	s->total = total;
	s->est_share = total > 0 ? s->est_insns / total : 0;
	*out = s;
	return 0;
}
