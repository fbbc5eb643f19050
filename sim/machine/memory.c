/* The guest address space: a sorted list of non-overlapping areas mirrored in
 * Unicorn's memory map, with Linux mmap/munmap/mprotect semantics on top
 * (page granularity, partial unmap/protect split areas). Anonymous PROT_NONE
 * reservations stay out of the engine's map until made accessible: Unicorn allocates
 * host memory for every mapped byte, and copies a whole area to split it. */
#include "sim/machine/memory.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/sysinfo.h>

#include "common/err.h"
#include "sim/dbr.h"
#include "sim/machine/machine.h"
#include "sim/sim_state.h"

const struct vma *mem_find(const struct sim *s, uint64_t addr)
{
	size_t lo = 0, hi = s->p->nvmas;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (s->p->vmas[mid].end <= addr)
			lo = mid + 1;
		else if (s->p->vmas[mid].start > addr)
			hi = mid;
		else
			return &s->p->vmas[mid];
	}
	return NULL;
}

int mem_is_mapped(const struct sim *s, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len;
	while (addr < end) {
		const struct vma *v = mem_find(s, addr);
		if (!v)
			return 0;
		addr = v->end;
	}
	return 1;
}

static int vma_insert(struct sim *s, uint64_t start, uint64_t end, int prot, int unbacked)
{
	if (s->p->nvmas == s->p->capvmas) {
		size_t nc = s->p->capvmas ? s->p->capvmas * 2 : 64;
		struct vma *nv = realloc(s->p->vmas, nc * sizeof(*nv));
		if (!nv)
			return PMUSIM_ERR_NOMEM;
		s->p->vmas = nv;
		s->p->capvmas = nc;
	}
	size_t i = 0;
	while (i < s->p->nvmas && s->p->vmas[i].start < start)
		i++;
	memmove(&s->p->vmas[i + 1], &s->p->vmas[i], (s->p->nvmas - i) * sizeof(*s->p->vmas));
	s->p->vmas[i] = (struct vma){start, end, prot, unbacked};
	s->p->nvmas++;
	return 0;
}

/* Splits areas so that addr is a boundary. */
static int vma_split_at(struct sim *s, uint64_t addr)
{
	const struct vma *v = mem_find(s, addr);
	if (!v || v->start == addr)
		return 0;
	uint64_t end = v->end;
	int prot = v->prot, unbacked = v->unbacked;
	((struct vma *)v)->end = addr;
	return vma_insert(s, addr, end, prot, unbacked);
}

/* Unicorn 2.0.1 aborts once an engine's memory map needs 4096 sections
 * (qemu/exec.c phys_section_add); areas past this many are refused instead. */
#define MAX_AREAS 1800
#define HOLE_COPY_BUDGET (256ULL << 20) /* about a second of copying */

static int too_many_areas(struct sim *s, size_t more)
{
	if (s->p->nvmas + more <= MAX_AREAS)
		return 0;
	sim_note_once(s, NOTE_MEM_AREAS,
		      "the program maps more separate areas than Unicorn 2.0.1 can hold; mmap and "
		      "mprotect answer ENOMEM beyond 1800");
	return 1;
}

/* Memory the engine must back: Unicorn 2.0.1 allocates every mapped byte, and after
 * an allocation it could not make, no later uc_mem_map succeeds. So nothing larger
 * than the host's memory and swap is asked for (Linux's overcommit heuristic refuses
 * the same without MAP_NORESERVE). */
static int too_big(struct sim *s, uint64_t len)
{
	static uint64_t limit;
	if (!limit) {
		struct sysinfo si;
		limit = sysinfo(&si) == 0 ? ((uint64_t)si.totalram + si.totalswap) * si.mem_unit : (1ULL << 36);
	}
	if (len <= limit)
		return 0;
	sim_note_once(s, NOTE_MEM_SIZE,
		      "the program maps more memory than this machine has; mmap, mprotect and brk answer ENOMEM");
	return 1;
}

int mem_map(struct sim *s, uint64_t addr, uint64_t len, int prot)
{
	if (len == 0 || (addr | len) & (GUEST_PAGE - 1))
		return -EINVAL;
	if (too_many_areas(s, 1) || too_big(s, len))
		return -ENOMEM;
	if (uc_mem_map(s->p->uc, addr, len, (uint32_t)prot) != UC_ERR_OK)
		return -ENOMEM;
	if (vma_insert(s, addr, addr + len, prot, 0) < 0) {
		uc_mem_unmap(s->p->uc, addr, len);
		return -ENOMEM;
	}
	return 0;
}

int mem_reserve(struct sim *s, uint64_t addr, uint64_t len)
{
	if (len == 0 || (addr | len) & (GUEST_PAGE - 1))
		return -EINVAL;
	if (too_many_areas(s, 1))
		return -ENOMEM;
	return vma_insert(s, addr, addr + len, 0, 1) < 0 ? -ENOMEM : 0;
}

int mem_unmap(struct sim *s, uint64_t addr, uint64_t len)
{
	uint64_t end = addr + len;
	/* a hole in the middle of an area makes one more (Linux: ENOMEM past max_map_count) */
	const struct vma *a = mem_find(s, addr), *b = mem_find(s, end);
	if (a && a == b && a->start < addr && too_many_areas(s, 1))
		return -ENOMEM;
	/* and Unicorn copies the whole area to split it: holes punched one by one into a
	 * large area would cost without bound, so their copying has a budget */
	if (a && a == b && a->start < addr && !a->unbacked) {
		if (s->p->hole_bytes + (a->end - a->start) > HOLE_COPY_BUDGET) {
			sim_note_once(s, NOTE_MEM_HOLES,
				      "the program unmaps many holes inside large areas; Unicorn copies an area to "
				      "split it, so munmap answers ENOMEM past 256 MiB of such copies");
			return -ENOMEM;
		}
		s->p->hole_bytes += a->end - a->start;
	}
	if (vma_split_at(s, addr) < 0 || vma_split_at(s, end) < 0)
		return -ENOMEM;
	size_t w = 0;
	for (size_t i = 0; i < s->p->nvmas; i++) {
		struct vma *v = &s->p->vmas[i];
		if (v->start >= addr && v->end <= end) {
			if (v->prot & UC_PROT_EXEC)
				uc_ctl_remove_cache(s->p->uc, v->start, v->end);
			if (!v->unbacked)
				uc_mem_unmap(s->p->uc, v->start, v->end - v->start);
			continue;
		}
		s->p->vmas[w++] = *v;
	}
	s->p->nvmas = w;
	return 0;
}

int mem_protect(struct sim *s, uint64_t addr, uint64_t len, int prot)
{
	uint64_t end = addr + len;
	if (!mem_is_mapped(s, addr, len))
		return -ENOMEM;
	if (too_many_areas(s, 2) || vma_split_at(s, addr) < 0 || vma_split_at(s, end) < 0)
		return -ENOMEM;
	for (size_t i = 0; i < s->p->nvmas; i++) {
		struct vma *v = &s->p->vmas[i];
		if (v->start >= addr && v->end <= end) {
			if (v->prot & UC_PROT_EXEC)
				uc_ctl_remove_cache(s->p->uc, v->start, v->end);
			if (v->unbacked) { /* made accessible: backed now, zero-filled as Linux's */
				if (prot && too_big(s, v->end - v->start))
					return -ENOMEM;
				if (prot && uc_mem_map(s->p->uc, v->start, v->end - v->start, (uint32_t)prot) != UC_ERR_OK)
					return -ENOMEM;
				v->unbacked = !prot;
			} else if (uc_mem_protect(s->p->uc, v->start, v->end - v->start, (uint32_t)prot) != UC_ERR_OK) {
				return -ENOMEM;
			}
			v->prot = prot;
		}
	}
	return 0;
}

uint64_t mem_next_area(const struct sim *s, uint64_t addr)
{
	for (size_t i = 0; i < s->p->nvmas; i++)
		if (s->p->vmas[i].start >= addr)
			return s->p->vmas[i].start;
	return UINT64_MAX;
}

int mem_overlaps(const struct sim *s, uint64_t addr, uint64_t len)
{
	if (dbr_arena_overlaps(s, addr, len))
		return 1; /* replacement code's: in no area, but taken */
	for (size_t i = 0; i < s->p->nvmas; i++)
		if (s->p->vmas[i].start < addr + len && s->p->vmas[i].end > addr)
			return 1;
	return 0;
}

/* The highest free range of len bytes inside [lo, hi), or 0. */
static uint64_t find_gap(const struct sim *s, uint64_t len, uint64_t lo, uint64_t hi)
{
	uint64_t top = hi;
	for (size_t i = s->p->nvmas; i-- > 0;) {
		const struct vma *v = &s->p->vmas[i];
		if (v->start >= top)
			continue;
		if (v->end <= top && top - v->end >= len && top - len >= lo)
			return top - len;
		top = v->start;
		if (top < lo || top - lo < len)
			return 0;
	}
	return top >= lo && top - lo >= len ? top - len : 0;
}

uint64_t mem_find_free_below(struct sim *s, uint64_t len, uint64_t limit)
{
	return find_gap(s, len, GUEST_PAGE * 16, limit); /* never the lowest pages */
}

uint64_t mem_find_free(struct sim *s, uint64_t len)
{
	/* from MMAP_TOP down, around the thread-stack unit's range, above the heap's room */
	uint64_t a = find_gap(s, len, AREAS_END, MMAP_TOP);
	return a ? a : find_gap(s, len, PAGE_UP(s->p->brk_cur) + (1ULL << 30), AREAS_BASE);
}

int mem_read(struct sim *s, uint64_t addr, void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (addr + len < addr || !mem_is_mapped(s, PAGE_DOWN(addr), PAGE_UP(addr + len) - PAGE_DOWN(addr)))
		return -EFAULT;
	return uc_mem_read(s->p->uc, addr, buf, len) == UC_ERR_OK ? 0 : -EFAULT;
}

int mem_write(struct sim *s, uint64_t addr, const void *buf, size_t len)
{
	if (len == 0)
		return 0;
	if (addr + len < addr || !mem_is_mapped(s, PAGE_DOWN(addr), PAGE_UP(addr + len) - PAGE_DOWN(addr)))
		return -EFAULT;
	if (s->p->dc)
		code_invalidate(s, addr, len);
	return uc_mem_write(s->p->uc, addr, buf, len) == UC_ERR_OK ? 0 : -EFAULT;
}

int mem_read_str(struct sim *s, uint64_t addr, char *buf, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		if (mem_read(s, addr + i, &buf[i], 1) < 0)
			return -EFAULT;
		if (buf[i] == 0)
			return 0;
	}
	return -ENAMETOOLONG;
}
