/* The map back from replacement code to the original program's retired blocks
 * (sim/dbr_map.h): each raw instruction's original, strung into the original
 * code runs one thread at a time. */
#include "sim/dbr_map.h"

#include <stdlib.h>
#include <string.h>

#include "common/arrays.h"
#include "common/err.h"

struct image {
	uint64_t base, end;
	const uint8_t *bytes; /* owned copy: added jumps are followed through it */
	struct dbr_insn *insn;
	size_t ninsn;
};

struct patch_pair {
	uint64_t addr, dest;
};

/* A thread's original run in progress. */
struct pend {
	uint32_t tid;
	const struct block_info *bi; /* NULL: none */
	uint32_t n;                  /* its instructions retired so far */
	uint8_t run_start, new_context;
	uint8_t next_start;          /* the next run starts by a transfer */
	uint8_t raw_prev_taken;      /* the thread's last raw block ended in a taken branch */
	uint8_t term_raw;            /* the terminator was its raw block's own: raw_* below hold */
	uint8_t raw_taken;           /* that raw terminator's outcome, as the original's */
	uint64_t raw_next, sp;       /* its raw next (resolved) and RSP after it */
};

/* What the map knows of one raw run (by its id): computed at its first sight. */
struct rawrun {
	uint8_t known;
	uint8_t in_image;  /* its instructions are replacement code */
	uint8_t patch;     /* it ends in a patch jump */
	uint32_t added;    /* of its instructions, those that stand for none */
	uint32_t unknown;  /* of those, instructions of replacement code no map entry names */
	uint64_t *orig;    /* in_image: per instruction its original (0: none), else NULL */
	uint8_t *inverted; /* in_image: per instruction 1 for DBR_INVERTED */
	uint8_t *sp_site;  /* in_image: per instruction 1 for a call's push or a clone's pop */
};

/* RSP after a push or pop of the replacement, noted before it ran. */
struct sp_note {
	uint64_t addr, sp;
};

struct dbr_map {
	struct dcache *dc;
	struct rawrun *raw; /* by raw run id */
	size_t capraw;
	struct block_sink sink[DBR_MAP_MAX_SINKS];
	size_t nsink;
	struct image *img;
	size_t nimg;
	struct patch_pair *patch;
	size_t npatch;
	struct pend *pend;
	size_t npend, cappend;
	uint64_t added, unknown, inside, patch_jumps, left_out;
	struct sp_note *note; /* the raw block now retiring's, in the order they ran */
	size_t nnote, capnote, note_next;
};

struct dbr_map *dbr_map_new(dcache_read_fn read, void *ctx)
{
	struct dbr_map *m = calloc(1, sizeof(*m));
	if (!m)
		return NULL;
	m->dc = dcache_new(read, ctx);
	if (!m->dc) {
		free(m);
		return NULL;
	}
	return m;
}

void dbr_map_free(struct dbr_map *m)
{
	if (!m)
		return;
	for (size_t i = 0; i < m->nimg; i++) {
		free((void *)m->img[i].bytes);
		free(m->img[i].insn);
	}
	for (size_t i = 0; i < m->capraw; i++)
		free(m->raw[i].orig), free(m->raw[i].inverted), free(m->raw[i].sp_site);
	free(m->raw);
	free(m->note);
	free(m->img);
	free(m->patch);
	free(m->pend);
	dcache_free(m->dc);
	free(m);
}

int dbr_map_add_sink(struct dbr_map *m, struct block_sink sink)
{
	if (m->nsink == DBR_MAP_MAX_SINKS)
		return PMUSIM_ERR_ARG;
	m->sink[m->nsink++] = sink;
	return 0;
}

int dbr_map_add_image(struct dbr_map *m, const struct dbr_image *img)
{
	struct image *ni = realloc(m->img, (m->nimg + 1) * sizeof(*ni));
	if (!ni)
		return PMUSIM_ERR_NOMEM;
	m->img = ni;
	struct patch_pair *np = realloc(m->patch, (m->npatch + img->npatch) * sizeof(*np) + 1);
	if (!np)
		return PMUSIM_ERR_NOMEM;
	m->patch = np;
	uint8_t *bytes = malloc(img->len + 1);
	struct dbr_insn *insn = malloc(img->ninsn * sizeof(*insn) + 1);
	if (!bytes || !insn) {
		free(bytes);
		free(insn);
		return PMUSIM_ERR_NOMEM;
	}
	memcpy(bytes, img->bytes, img->len);
	arrays_copy(insn, img->insn, img->ninsn, sizeof(*insn));
	size_t at = 0; /* images by base */
	while (at < m->nimg && m->img[at].base < img->base)
		at++;
	memmove(&m->img[at + 1], &m->img[at], (m->nimg - at) * sizeof(*m->img));
	m->img[at] = (struct image){img->base, img->base + img->len, bytes, insn, img->ninsn};
	m->nimg++;
	for (size_t i = 0; i < img->npatch; i++)
		m->patch[m->npatch++] = (struct patch_pair){img->patch[i].addr, img->patch[i].dest};
	return 0;
}

void dbr_map_invalidate(struct dbr_map *m, uint64_t addr, uint64_t len)
{
	dcache_invalidate(m->dc, addr, len);
}

static const struct image *image_of(const struct dbr_map *m, uint64_t addr)
{
	size_t lo = 0, hi = m->nimg;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->img[mid].end <= addr)
			lo = mid + 1;
		else if (m->img[mid].base > addr)
			hi = mid;
		else
			return &m->img[mid];
	}
	return NULL;
}

static const struct dbr_insn *insn_at(const struct image *im, uint64_t addr)
{
	uint64_t off = addr - im->base;
	size_t lo = 0, hi = im->ninsn;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (im->insn[mid].off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < im->ninsn && im->insn[lo].off == off ? &im->insn[lo] : NULL;
}

static int is_patch_jump(const struct dbr_map *m, const struct block_info *bi)
{
	if (bi->kind != BK_JMP)
		return 0;
	for (size_t i = 0; i < m->npatch; i++)
		if (m->patch[i].addr == bi->term && m->patch[i].dest == bi->target)
			return 1;
	return 0;
}

/* Where an added "jmp rel32" (E9) goes. */
static uint64_t jump_target(const struct image *im, const struct dbr_insn *e)
{
	const uint8_t *p = im->bytes + e->off;
	if (e->len != 5 || p[0] != 0xe9)
		return 0;
	int32_t rel;
	memcpy(&rel, p + 1, 4);
	return im->base + e->off + 5 + (uint64_t)(int64_t)rel;
}

uint64_t dbr_map_resolve(const struct dbr_map *m, uint64_t addr)
{
	for (int hops = 0; hops < 64; hops++) {
		const struct image *im = image_of(m, addr);
		if (!im)
			return addr;
		const struct dbr_insn *e = insn_at(im, addr);
		if (!e)
			return 0;
		switch (e->what) {
		case DBR_JUMP: addr = jump_target(im, e); break;
		case DBR_CALL_HIGH: addr = im->base + e->off + e->len; break;
		default: return e->orig;
		}
	}
	return 0;
}

uint64_t dbr_map_original(const struct dbr_map *m, uint64_t ip, int *inverted)
{
	*inverted = 0;
	const struct image *im = image_of(m, ip);
	if (!im)
		return ip;
	const struct dbr_insn *e = insn_at(im, ip);
	if (!e || e->what == DBR_JUMP || e->what == DBR_CALL_HIGH)
		return 0;
	*inverted = e->what == DBR_INVERTED;
	return e->orig;
}

int64_t dbr_map_sp_off(const struct dbr_map *m, uint64_t ip)
{
	const struct image *im = image_of(m, ip);
	const struct dbr_insn *e = im ? insn_at(im, ip) : NULL;
	return e ? e->sp_off : 0;
}

uint64_t dbr_map_charge(const struct dbr_map *m, uint64_t ip)
{
	const struct image *im = image_of(m, ip);
	const struct dbr_insn *e = im ? insn_at(im, ip) : NULL;
	return !im ? ip : e ? e->orig : 0;
}

int dbr_map_branch(struct dbr_map *m, uint64_t from, uint64_t to, uint64_t *ofrom, uint64_t *oto, int *kind)
{
	const struct image *im = image_of(m, from);
	uint64_t orig = from;
	if (im) {
		const struct dbr_insn *e = insn_at(im, from);
		if (!e || e->what == DBR_INVERTED || e->what == DBR_CALL_PUSH || e->what == DBR_CALL_HIGH ||
		    e->what == DBR_RET_POP || (e->what == DBR_JUMP && !e->carries))
			return 0; /* no taken transfer of the program's */
		orig = e->orig;
	} else {
		for (size_t i = 0; i < m->npatch; i++)
			if (m->patch[i].addr == from && m->patch[i].dest == to)
				return 0; /* a patch jump */
	}
	*oto = dbr_map_resolve(m, to);
	dbr_map_static_target(m, orig, kind);
	*ofrom = orig;
	return *oto != 0 && *kind != BK_NONE;
}

uint64_t dbr_map_after(const struct dbr_map *m, uint64_t ip)
{
	const struct image *im = image_of(m, ip);
	const struct dbr_insn *e = im ? insn_at(im, ip) : NULL;
	return e ? dbr_map_resolve(m, ip + e->len) : 0;
}

uint64_t dbr_map_static_target(struct dbr_map *m, uint64_t ip, int *kind)
{
	int is_new;
	const struct block_info *bi = dcache_get(m->dc, ip, &is_new);
	*kind = bi && bi->term == ip ? bi->kind : BK_NONE;
	return *kind != BK_NONE ? bi->target : 0;
}

static struct pend *pend_of(struct dbr_map *m, uint32_t tid)
{
	for (size_t i = 0; i < m->npend; i++)
		if (m->pend[i].tid == tid)
			return &m->pend[i];
	if (m->npend == m->cappend) {
		size_t nc = m->cappend ? m->cappend * 2 : 8;
		struct pend *np = realloc(m->pend, nc * sizeof(*np));
		if (!np)
			abort(); /* out of memory in the middle of a run: the stream would be wrong */
		m->pend = np;
		m->cappend = nc;
	}
	struct pend *p = &m->pend[m->npend++];
	memset(p, 0, sizeof(*p));
	p->tid = tid;
	p->next_start = 1; /* a thread's first block starts a run */
	return p;
}

static void hand_on(struct dbr_map *m, const struct retired_block *rb)
{
	for (size_t i = 0; i < m->nsink; i++)
		m->sink[i].retire(m->sink[i].ctx, rb);
}

/* Hands on p's run: whole (its terminator retired, the program went on at next)
 * or cut after p->n instructions. rep: the raw block's REP part for a run whose
 * REP terminator it carries, or NULL. */
static void emit(struct dbr_map *m, struct pend *p, uint64_t next, const struct retired_block *rep)
{
	const struct block_info *bi = p->bi;
	struct retired_block rb = {0};
	rb.info = bi;
	rb.tid = p->tid;
	rb.ninsns = p->n;
	rb.run_start = p->run_start;
	rb.new_context = p->new_context;
	int whole = p->n == bi->ninsns && !(rep && (rep->rep_part & RB_REP_LEFT));
	rb.kind = whole ? bi->kind : BK_NONE;
	if (whole && p->term_raw)
		next = p->raw_next;
	else if (!whole)
		next = bi->start + bi->off[p->n]; /* cut: where it stopped, as the machine says */
	rb.next = next;
	if (whole && br_kind_is_branch(bi->kind)) {
		if (bi->kind != BK_COND)
			rb.taken = 1;
		else if (bi->flags & BI_COND_EQ_FT)
			rb.taken = p->term_raw && p->raw_taken;
		else
			rb.taken = next != bi->end;
		rb.sp = p->sp;
	}
	if (rep && rep->rep_part) {
		rb.rep_part = rep->rep_part;
		rb.rep_iters = rep->rep_iters;
		rb.rep_count = rep->rep_count;
		rb.rep_left = rep->rep_left;
	}
	p->next_start = rb.kind != BK_NONE; /* as the machine's: after any terminator */
	p->bi = NULL;
	hand_on(m, &rb);
}

/* The original instruction o retired on p's thread; forced: it begins a run
 * whatever came before (the raw stream started one with no branch). */
static void feed(struct dbr_map *m, struct pend *p, uint64_t o, int forced, int new_context)
{
	if (p->bi) {
		if (p->n == p->bi->ninsns) {
			emit(m, p, o, NULL);
		} else if (!forced && o == p->bi->start + p->bi->off[p->n]) {
			p->n++;
			p->term_raw = 0;
			p->sp = 0;
			return;
		} else if (!forced && p->n + 1 == p->bi->ninsns && p->bi->kind == BK_JMP &&
			   p->bi->target == o) {
			/* a direct jump the layout made a fall-through: it ran, to o */
			m->left_out++;
			p->n++;
			p->term_raw = 0;
			p->sp = 0;
			emit(m, p, o, NULL);
		} else {
			emit(m, p, o, NULL); /* cut: the stream left the run in its middle */
			p->next_start = 1;
		}
	}
	int is_new;
	p->bi = dcache_get(m->dc, o, &is_new);
	if (!p->bi)
		abort(); /* out of memory in the middle of a run */
	p->n = 1;
	p->run_start = p->next_start || forced;
	p->new_context = (uint8_t)new_context;
	p->term_raw = 0;
	p->sp = 0;
}

/* The original that raw instruction i of rb stands for, 0 for none. */
/* The raw run bi as the map sees it, worked out at its first sight (a run's
 * bytes never change under its id: code that changes is decoded again, with
 * another). Replacement code has no instruction the map does not name unless
 * something is wrong: such an instruction stands for none and is counted. */
static const struct rawrun *raw_of(struct dbr_map *m, const struct block_info *bi)
{
	if (bi->id >= m->capraw) {
		size_t nc = m->capraw ? m->capraw : 1024;
		while (nc <= bi->id)
			nc *= 2;
		struct rawrun *nr = realloc(m->raw, nc * sizeof(*nr));
		if (!nr)
			abort(); /* out of memory in the middle of a run: the stream would be wrong */
		memset(nr + m->capraw, 0, (nc - m->capraw) * sizeof(*nr));
		m->raw = nr;
		m->capraw = nc;
	}
	struct rawrun *r = &m->raw[bi->id];
	if (r->known)
		return r;
	r->known = 1;
	const struct image *im = image_of(m, bi->start);
	if (!im) {
		r->patch = is_patch_jump(m, bi);
		r->added = r->patch;
		return r;
	}
	r->in_image = 1;
	r->orig = calloc(bi->ninsns + 1u, sizeof(*r->orig));
	r->inverted = calloc(bi->ninsns + 1u, 1);
	r->sp_site = calloc(bi->ninsns + 1u, 1);
	if (!r->orig || !r->inverted || !r->sp_site)
		abort();
	for (uint32_t i = 0; i < bi->ninsns; i++) {
		const struct dbr_insn *e = insn_at(im, bi->start + bi->off[i]);
		if (!e || e->what == DBR_JUMP || e->what == DBR_CALL_HIGH) {
			r->added += e != NULL;
			r->unknown += !e;
			continue;
		}
		r->orig[i] = e->orig;
		r->inverted[i] = e->what == DBR_INVERTED;
		r->sp_site[i] = dbr_insn_notes_sp(im->insn, im->ninsn, (size_t)(e - im->insn));
	}
	return r;
}

/* The original that raw instruction i of run bi stands for, 0 for none. */
static uint64_t original_of(const struct rawrun *r, const struct block_info *bi, uint32_t i)
{
	if (r->in_image)
		return r->orig[i];
	return r->patch && i + 1 == bi->ninsns ? 0 : bi->start + bi->off[i];
}

/* The counts of rb's instructions (dbr_map_counts). */
static void count_block(struct dbr_map *m, const struct rawrun *r, const struct retired_block *rb)
{
	const struct block_info *bi = rb->info;
	uint32_t added = 0;
	if (rb->ninsns == bi->ninsns) {
		added = r->added;
	} else if (r->in_image) {
		for (uint32_t i = 0; i < rb->ninsns; i++)
			added += r->orig[i] == 0 && insn_at(image_of(m, bi->start), bi->start + bi->off[i]);
	}
	if (r->patch && rb->ninsns == bi->ninsns)
		m->patch_jumps++;
	else if (!r->in_image)
		added = 0;
	m->added += added;
	if (r->in_image) {
		m->inside += rb->ninsns;
		if (rb->ninsns == bi->ninsns)
			m->unknown += r->unknown;
		else
			for (uint32_t i = 0; i < rb->ninsns; i++)
				m->unknown += !r->orig[i] && !insn_at(image_of(m, bi->start), bi->start + bi->off[i]);
	}
}

void dbr_map_note_sp(struct dbr_map *m, uint64_t addr, uint64_t rsp)
{
	const struct image *im = image_of(m, addr);
	const struct dbr_insn *e = im ? insn_at(im, addr) : NULL;
	if (!e || !dbr_insn_notes_sp(im->insn, im->ninsn, (size_t)(e - im->insn)))
		return;
	uint64_t sp = e->what == DBR_COPY ? rsp : rsp - 8; /* an indirect jump moves no RSP; push imm32 */
	if (e->what == DBR_RET_POP) {
		/* lea rsp, [rsp + disp8 or disp32] (profiler/dbr_code.c put_pop) */
		const uint8_t *b = im->bytes + e->off;
		int32_t d32;
		memcpy(&d32, b + 4, 4);
		sp = rsp + (uint64_t)(int64_t)(e->len == 5 ? (int8_t)b[4] : d32);
	}
	if (m->nnote == m->capnote) {
		size_t nc = m->capnote ? m->capnote * 2 : 16;
		struct sp_note *nn = realloc(m->note, nc * sizeof(*nn));
		if (!nn)
			return; /* the run's RSP goes unknown (0), nothing worse */
		m->note = nn;
		m->capnote = nc;
	}
	m->note[m->nnote++] = (struct sp_note){addr, sp};
}

/* RSP after the push or pop at addr that just retired: the next note of it, 0
 * when none was taken (the sink came later, memory ran out). */
static uint64_t take_note(struct dbr_map *m, uint64_t addr)
{
	for (size_t i = m->note_next; i < m->nnote; i++)
		if (m->note[i].addr == addr) {
			m->note_next = i + 1;
			return m->note[i].sp;
		}
	return 0;
}

static void map_retire(void *ctx, const struct retired_block *rb)
{
	struct dbr_map *m = ctx;
	struct pend *p = pend_of(m, rb->tid);
	int forced = rb->run_start && !p->raw_prev_taken;
	int new_context = rb->new_context;
	const struct block_info *bi = rb->info;
	const struct rawrun *r = raw_of(m, bi);
	count_block(m, r, rb);
	if (!m->nsink) {
		m->nnote = m->note_next = 0;
		return; /* nobody reads the original stream: the counts are all */
	}
	int term_retired = rb->kind != BK_NONE && rb->ninsns == bi->ninsns;
	if (rb->rep_part && rb->ninsns == 0) {
		/* a REP left before it retired, first of its run: a part with no instruction */
		uint64_t o = original_of(r, bi, 0);
		feed(m, p, o, forced, new_context);
		p->n--; /* o, the REP, did not retire */
		emit(m, p, p->bi->end, rb);
		p->next_start = 1;
		return;
	}
	for (uint32_t i = 0; i < rb->ninsns; i++) {
		uint64_t o = original_of(r, bi, i);
		if (!o)
			continue;
		feed(m, p, o, forced, new_context);
		forced = new_context = 0;
		if (r->in_image && r->sp_site[i] && p->n == p->bi->ninsns)
			p->sp = take_note(m, bi->start + bi->off[i]);
		if (i + 1 == bi->ninsns && term_retired && p->n == p->bi->ninsns) {
			/* the original terminator is this raw block's own */
			p->term_raw = 1;
			p->raw_taken = (uint8_t)(rb->taken ^ (r->in_image && r->inverted[i]));
			p->raw_next = dbr_map_resolve(m, rb->next);
			p->sp = rb->sp;
		}
	}
	uint64_t went;
	if (term_retired && p->bi && p->n == p->bi->ninsns && !p->term_raw &&
	    br_kind_is_branch(p->bi->kind) && p->bi->kind != BK_COND &&
	    (went = dbr_map_resolve(m, rb->next)) != 0) {
		/* an inlined call or return, added jumps after it: it went where the
		 * block went, whatever runs next (a signal handler, or nothing). An
		 * indirect jump's compare chain cannot be followed so: its target is
		 * the next original instruction */
		p->term_raw = 1;
		p->raw_taken = 1;
		p->raw_next = went;
	}
	if (rb->rep_part && p->bi) {
		/* the REP at the end of the run carries the part (retired or left) */
		if ((rb->rep_part & RB_REP_LEFT) || p->n == p->bi->ninsns)
			emit(m, p, p->bi->end, rb);
	} else if (p->bi && p->n == p->bi->ninsns && !br_kind_is_branch(p->bi->kind)) {
		emit(m, p, p->bi->end, NULL); /* no branch: it goes on at the next instruction */
	} else if (p->bi && p->n == p->bi->ninsns && p->term_raw) {
		/* a branch whose outcome is known: handed on now, so that what reads
		 * the machine's state after this raw block (a sample's callchain)
		 * finds the program's stream up to it */
		emit(m, p, p->raw_next, NULL);
	}
	m->nnote = m->note_next = 0;
	p->raw_prev_taken = rb->kind != BK_NONE && br_kind_is_branch(rb->kind) && rb->taken &&
			    rb->ninsns == bi->ninsns;
}

static void map_whole(void *ctx, const struct block_info *bi, uint64_t next, uint64_t sp, uint32_t tid,
		      unsigned flags)
{
	struct retired_block rb;
	retired_block_whole(&rb, bi, next, sp, tid, flags);
	map_retire(ctx, &rb);
}

struct block_sink dbr_map_sink(struct dbr_map *m)
{
	return (struct block_sink){.retire = map_retire, .whole = map_whole, .ctx = m};
}

void dbr_map_finish(struct dbr_map *m)
{
	for (size_t i = 0; i < m->npend; i++) {
		struct pend *p = &m->pend[i];
		if (p->bi)
			emit(m, p, p->term_raw ? p->raw_next : p->bi->end, NULL);
	}
}

uint64_t dbr_map_added_insns(const struct dbr_map *m)
{
	return m->added;
}

uint64_t dbr_map_unknown_insns(const struct dbr_map *m)
{
	return m->unknown;
}

void dbr_map_counts(const struct dbr_map *m, struct dbr_counts *c)
{
	*c = (struct dbr_counts){m->inside, m->added - m->patch_jumps, m->patch_jumps, m->unknown, m->left_out};
}
