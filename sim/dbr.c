/* The machine's side of a dynamic binary rewriter: an arena of guest memory
 * for replacement code within reach of the program's code (a patch is a 5-byte
 * "jmp rel32": Intel SDM vol. 2, JMP, E9 cd, reaching +-2 GiB), patch jumps
 * written over the program's instructions and taken back, and the map that turns
 * the rewritten run's blocks back into the original program's for the image
 * sinks (sim/dbr_map.h). */
#include "sim/dbr.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "common/dbr_image.h"
#include "common/err.h"
#include "common/grow.h"
#include "sim/dbr_map.h"
#include "sim/machine/blockstream.h"
#include "sim/machine/machine.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define ARENA_MAX (16ULL << 20)
#define ARENA_GAP (1ULL << 20)  /* left free between the arena and the program */
#define ARENA_LOW (1ULL << 20)  /* the arena stays above the lowest megabyte */

struct dbr_patch_rec {
	uint64_t addr;
	uint8_t orig[5], jmp[5];
	int on;
};

struct sim_dbr {
	struct dbr_map *map;
	uint8_t *host;          /* the arena's bytes */
	uint64_t base, size, used;
	int patching;           /* write_code is writing a patch: the original bytes stay */
	struct dbr_patch_rec *patch;
	size_t npatch;
	uint64_t *sp_site;      /* the installed pushes of calls and pops of returns */
	size_t nsp_site, capsp_site;
	int track_sp;           /* each is hooked, its RSP noted for the map */
};

/* The program's original bytes: guest code with every patch undone. */
static size_t read_original(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct sim *s = ctx;
	size_t got = machine_read_code(s, addr, buf, len);
	for (size_t i = 0; i < s->dbr->npatch; i++) {
		const struct dbr_patch_rec *r = &s->dbr->patch[i];
		for (int k = 0; k < 5; k++)
			if (r->addr + (uint64_t)k >= addr && r->addr + (uint64_t)k < addr + got)
				((uint8_t *)buf)[r->addr + (uint64_t)k - addr] = r->orig[k];
	}
	return got;
}

/* The lowest address of the program's own code (not its interpreter's). */
static uint64_t program_low(const struct proc *p)
{
	uint64_t lo = UINT64_MAX;
	for (size_t i = 0; i < p->nexec_maps; i++)
		if (p->exec_maps[i].path == p->exe_abs && p->exec_maps[i].addr < lo)
			lo = p->exec_maps[i].addr;
	return lo;
}

int dbr_setup(struct sim *s, char *msg, size_t msglen)
{
	struct proc *p = s->procs[0];
	uint64_t lo = program_low(p);
	if (lo == UINT64_MAX || lo < ARENA_LOW + ARENA_GAP + GUEST_PAGE * 16) {
		snprintf(msg, msglen, "no room for replacement code below the program's code");
		return PMUSIM_ERR_UNSUPPORTED;
	}
	uint64_t top = PAGE_DOWN(lo) - ARENA_GAP;
	uint64_t size = top - ARENA_LOW < ARENA_MAX ? top - ARENA_LOW : ARENA_MAX;
	uint64_t base = top - size;
	struct sim_dbr *d = calloc(1, sizeof(*d));
	if (!d)
		return PMUSIM_ERR_NOMEM;
	s->dbr = d;
	if (mem_overlaps(s, base, size)) {
		snprintf(msg, msglen, "the memory below the program's code is taken: no room for replacement code");
		return PMUSIM_ERR_UNSUPPORTED;
	}
	d->host = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (d->host == MAP_FAILED) {
		d->host = NULL;
		return PMUSIM_ERR_NOMEM;
	}
	d->base = base;
	d->size = size;
	/* execute-only: the program's loads and stores there fault as in unmapped memory */
	if (uc_mem_map_ptr(p->uc, base, size, UC_PROT_EXEC, d->host) != UC_ERR_OK) {
		snprintf(msg, msglen, "cannot map replacement code memory at 0x%llx", (unsigned long long)base);
		return PMUSIM_ERR_EMU;
	}
	p->dbr_arena = 1;
	d->map = dbr_map_new(read_original, s);
	if (!d->map || bstream_add_image_sink(s->bs, dbr_map_sink(d->map)) < 0)
		return PMUSIM_ERR_NOMEM;
	return 0;
}

int dbr_arena_overlaps(const struct sim *s, uint64_t addr, uint64_t len)
{
	const struct sim_dbr *d = s->dbr;
	return d && d->host && s->p->dbr_arena && addr < d->base + d->size && addr + len > d->base;
}

size_t dbr_read_code(struct sim *s, uint64_t addr, void *buf, size_t len)
{
	struct sim_dbr *d = s->dbr;
	if (!d || !d->host || !s->p->dbr_arena || s->p->image != 0 || addr < d->base ||
	    addr >= d->base + d->size)
		return 0;
	size_t n = d->base + d->size - addr < len ? (size_t)(d->base + d->size - addr) : len;
	memcpy(buf, d->host + (addr - d->base), n);
	return n;
}

int dbr_add_image_sink(struct sim *s, struct block_sink sink)
{
	return dbr_map_add_sink(s->dbr->map, sink);
}

void dbr_free(struct sim *s)
{
	struct sim_dbr *d = s->dbr;
	if (!d)
		return;
	dbr_map_free(d->map);
	if (d->host)
		munmap(d->host, d->size);
	free(d->patch);
	free(d->sp_site);
	free(d);
	s->dbr = NULL;
}

uint64_t sim_dbr_next(const struct sim *s)
{
	return s->dbr ? s->dbr->base + s->dbr->used : 0;
}

uint64_t sim_dbr_room(const struct sim *s)
{
	return s->dbr ? s->dbr->size - s->dbr->used : 0;
}

/* Writes bytes over the program's code in its own process, and forgets what was
 * decoded of them. */
static void write_code(struct sim *s, uint64_t addr, const uint8_t *bytes, size_t len)
{
	struct proc *cur = s->p;
	s->p = s->procs[0];
	uc_mem_write(s->p->uc, addr, bytes, len);
	s->dbr->patching = 1; /* the map reads the original bytes: its runs stay */
	code_invalidate(s, addr, len);
	s->dbr->patching = 0;
	uc_ctl_remove_cache(s->p->uc, addr, addr + len);
	s->p = cur;
}

static struct dbr_patch_rec *patch_rec(struct sim_dbr *d, uint64_t addr)
{
	for (size_t i = 0; i < d->npatch; i++)
		if (d->patch[i].addr == addr)
			return &d->patch[i];
	return NULL;
}

/* Each patch of img is over bytes that are its orig now, and not over another's. */
static int patches_fit(struct sim *s, const struct dbr_image *img)
{
	for (size_t i = 0; i < img->npatch; i++) {
		uint8_t now[5];
		const struct dbr_patch *pt = &img->patch[i];
		const struct dbr_patch_rec *r = patch_rec(s->dbr, pt->addr);
		if (r && r->on)
			return 0;
		if (uc_mem_read(s->procs[0]->uc, pt->addr, now, 5) != UC_ERR_OK || memcmp(now, pt->orig, 5) != 0)
			return 0;
		for (size_t k = 0; k < s->dbr->npatch; k++)
			if (s->dbr->patch[k].on && s->dbr->patch[k].addr < pt->addr + 5 &&
			    s->dbr->patch[k].addr + 5 > pt->addr)
				return 0;
	}
	return 1;
}

/* Before a push or pop of the replacement runs: RSP for the map. */
static void hook_sp_site(uc_engine *uc, uint64_t addr, uint32_t size, void *ctx)
{
	struct sim *s = ctx;
	uint64_t rsp = 0;
	(void)size;
	if (s->p == s->procs[0] && uc_reg_read(uc, UC_X86_REG_RSP, &rsp) == UC_ERR_OK)
		dbr_map_note_sp(s->dbr->map, addr, rsp);
}

static int hook_sp_sites(struct sim *s, size_t from)
{
	struct sim_dbr *d = s->dbr;
	for (size_t i = from; d->track_sp && i < d->nsp_site; i++) {
		uc_hook h;
		uint64_t a = d->sp_site[i];
		if (uc_hook_add(s->procs[0]->uc, &h, UC_HOOK_CODE, (void *)hook_sp_site, s, a, a) != UC_ERR_OK)
			return PMUSIM_ERR_EMU;
		uc_ctl_remove_cache(s->procs[0]->uc, a, a + 1); /* translated before without the hook */
	}
	return 0;
}

int dbr_track_sp(struct sim *s)
{
	struct sim_dbr *d = s->dbr;
	if (!d || d->track_sp)
		return 0;
	d->track_sp = 1;
	bstream_image_first(s->bs);
	bstream_want_sp(s->bs);
	return hook_sp_sites(s, 0);
}

static int add_sp_sites(struct sim *s, const struct dbr_image *img)
{
	struct sim_dbr *d = s->dbr;
	size_t from = d->nsp_site;
	for (size_t i = 0; i < img->ninsn; i++) {
		if (!dbr_insn_notes_sp(img->insn, img->ninsn, i))
			continue;
		uint64_t *ns = grow_array(d->sp_site, &d->capsp_site, d->nsp_site + 1, sizeof(*ns));
		if (!ns)
			return PMUSIM_ERR_NOMEM;
		d->sp_site = ns;
		d->sp_site[d->nsp_site++] = img->base + img->insn[i].off;
	}
	return hook_sp_sites(s, from);
}

int sim_dbr_install(struct sim *s, const struct dbr_image *img)
{
	struct sim_dbr *d = s->dbr;
	if (!d || s->procs[0]->image != 0 || img->base != d->base + d->used || img->len > d->size - d->used ||
	    !patches_fit(s, img))
		return PMUSIM_ERR_ARG;
	struct dbr_patch_rec *np = realloc(d->patch, (d->npatch + img->npatch) * sizeof(*np) + 1);
	if (!np)
		return PMUSIM_ERR_NOMEM;
	d->patch = np;
	int err = dbr_map_add_image(d->map, img);
	if (err < 0 || (err = add_sp_sites(s, img)) < 0)
		return err;
	memcpy(d->host + d->used, img->bytes, img->len);
	uc_ctl_remove_cache(s->procs[0]->uc, img->base, img->base + img->len);
	d->used += (img->len + 15) & ~(uint64_t)15;
	if (d->used > d->size)
		d->used = d->size;
	for (size_t i = 0; i < img->npatch; i++) {
		const struct dbr_patch *pt = &img->patch[i];
		struct dbr_patch_rec *r = patch_rec(d, pt->addr);
		if (!r) {
			r = &d->patch[d->npatch++];
			r->addr = pt->addr;
			memcpy(r->orig, pt->orig, 5);
		}
		memcpy(r->jmp, pt->jmp, 5);
		r->on = 1;
		write_code(s, pt->addr, pt->jmp, 5);
	}
	return 0;
}

int sim_dbr_unpatch(struct sim *s, const struct dbr_image *img)
{
	if (!s->dbr || s->procs[0]->image != 0)
		return PMUSIM_ERR_ARG;
	for (size_t i = 0; i < img->npatch; i++) {
		struct dbr_patch_rec *r = patch_rec(s->dbr, img->patch[i].addr);
		if (!r || !r->on)
			continue;
		r->on = 0;
		write_code(s, r->addr, r->orig, 5);
	}
	return 0;
}

void dbr_restore_in(struct sim *s, struct proc *child)
{
	if (!s->dbr || child->image != 0)
		return;
	/* the same code (it only grows): a thread that forks from replacement code, or
	 * a signal frame that returns into it, goes on there in the child */
	if (s->dbr->host && uc_mem_map_ptr(child->uc, s->dbr->base, s->dbr->size, UC_PROT_EXEC, s->dbr->host) ==
				    UC_ERR_OK)
		child->dbr_arena = 1;
	for (size_t i = 0; i < s->dbr->npatch; i++)
		if (s->dbr->patch[i].on)
			uc_mem_write(child->uc, s->dbr->patch[i].addr, s->dbr->patch[i].orig, 5);
}

void dbr_code_changed(struct sim *s, uint64_t addr, uint64_t len)
{
	if (s->dbr && !s->dbr->patching && s->p == s->procs[0] && s->p->image == 0)
		dbr_map_invalidate(s->dbr->map, addr, len);
}

void dbr_run_end(struct sim *s)
{
	if (s->dbr)
		dbr_map_finish(s->dbr->map);
}

int sim_dbr_program_running(const struct sim *s)
{
	return s->dbr && s->p == s->procs[0] && s->p->image == 0;
}

int sim_dbr_usable(const struct sim *s)
{
	return s->dbr && s->procs[0]->image == 0;
}

uint64_t sim_dbr_original(const struct sim *s, uint64_t ip, int *inverted)
{
	*inverted = 0;
	return sim_dbr_program_running(s) ? dbr_map_original(s->dbr->map, ip, inverted) : ip;
}

uint64_t sim_dbr_sample_ip(const struct sim *s, uint64_t ip)
{
	return sim_dbr_program_running(s) ? dbr_map_charge(s->dbr->map, ip) : ip;
}

int64_t sim_dbr_sp_off(const struct sim *s, uint64_t ip)
{
	return sim_dbr_program_running(s) ? dbr_map_sp_off(s->dbr->map, ip) : 0;
}

uint64_t sim_dbr_where(const struct sim *s, uint64_t ip)
{
	uint64_t o = sim_dbr_resolve(s, ip);
	return o ? o : sim_dbr_sample_ip(s, ip);
}

uint64_t sim_dbr_resolve(const struct sim *s, uint64_t ip)
{
	return sim_dbr_program_running(s) ? dbr_map_resolve(s->dbr->map, ip) : ip;
}

int sim_dbr_branch(const struct sim *s, uint64_t from, uint64_t to, uint64_t *ofrom, uint64_t *oto, int *kind)
{
	*ofrom = from, *oto = to, *kind = 0;
	return sim_dbr_program_running(s) ? dbr_map_branch(s->dbr->map, from, to, ofrom, oto, kind) : 1;
}

uint64_t sim_dbr_after(const struct sim *s, uint64_t ip)
{
	return sim_dbr_program_running(s) ? dbr_map_after(s->dbr->map, ip) : 0;
}

uint64_t sim_dbr_static_target(const struct sim *s, uint64_t ip, int *kind)
{
	*kind = 0;
	/* decoded from the program's bytes: another process's would be cached as its */
	return sim_dbr_program_running(s) ? dbr_map_static_target(s->dbr->map, ip, kind) : 0;
}

void sim_dbr_counts(const struct sim *s, struct dbr_counts *c)
{
	if (s->dbr)
		dbr_map_counts(s->dbr->map, c);
	else
		memset(c, 0, sizeof(*c));
}
