/* Memory system calls: brk, mmap, munmap, mprotect, mremap, madvise, with
 * Linux's semantics (mm/mmap.c, mm/mremap.c) at page granularity. File-backed
 * mappings are private copies read with pread. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "sim/linux/syscall_internal.h"
#include "sim/machine/machine.h"
#include "sim/machine/mappings.h"
#include "sim/machine/memory.h"
#include "sim/sim_state.h"

#define MAP_32BIT_F 0x40              /* uapi/asm/mman.h (x86) */
#define MAP_32BIT_LIMIT 0x80000000ULL /* mappings end within the first 2 GiB */

static void invalidate_code(struct sim *s, uint64_t addr, uint64_t len)
{
	code_invalidate(s, addr, len);
}

static int64_t do_brk(struct sim *s, uint64_t want)
{
	if (want < s->p->brk_start)
		return (int64_t)s->p->brk_cur;
	uint64_t old_top = PAGE_UP(s->p->brk_cur), new_top = PAGE_UP(want);
	if (new_top > old_top) {
		/* one pass over the areas, whatever the size asked for */
		if (mem_overlaps(s, old_top, new_top - old_top))
			return (int64_t)s->p->brk_cur;
		if (mem_map(s, old_top, new_top - old_top, UC_PROT_READ | UC_PROT_WRITE) < 0)
			return (int64_t)s->p->brk_cur;
	} else if (new_top < old_top) {
		mem_unmap(s, new_top, old_top - new_top);
	}
	s->p->brk_cur = want;
	return (int64_t)want;
}

static int fill_from_file(struct sim *s, uint64_t addr, uint64_t len, int hfd, uint64_t off)
{
	char *buf = malloc(len);
	if (!buf)
		return -ENOMEM;
	ssize_t got = 0;
	while ((uint64_t)got < len) {
		ssize_t r = pread(hfd, buf + got, len - (uint64_t)got, (off_t)(off + (uint64_t)got));
		if (r < 0) {
			free(buf);
			return -errno;
		}
		if (r == 0)
			break;
		got += r;
	}
	int err = got ? mem_write(s, addr, buf, (size_t)got) : 0;
	free(buf);
	return err;
}

static int64_t do_mmap(struct sim *s, const struct sysargs *x)
{
	uint64_t addr = x->a[0], len = x->a[1];
	int prot = (int)x->a[2], flags = (int)x->a[3];
	int64_t gfd = (int64_t)x->a[4];
	uint64_t off = x->a[5];
	if (len == 0 || (off & (GUEST_PAGE - 1)) || PAGE_UP(len) < len)
		return -EINVAL;
	len = PAGE_UP(len);
	if (prot & ~(PROT_READ | PROT_WRITE | PROT_EXEC))
		return -EINVAL;
	int hfd = -1;
	if (!(flags & MAP_ANONYMOUS)) {
		hfd = fd_host(s, (uint64_t)gfd);
		if (hfd < 0)
			return -EBADF;
		if ((flags & MAP_SHARED) && (prot & PROT_WRITE))
			sim_note_once(s, NOTE_SHARED_MMAP,
				      "shared writable file mappings are private copies (writes are not written back)");
	}
	if (flags & (MAP_FIXED | MAP_FIXED_NOREPLACE)) {
		if (addr & (GUEST_PAGE - 1))
			return -EINVAL;
		if (addr < AREAS_END && addr + len > AREAS_BASE)
			return -ENOMEM; /* reserved for the thread-stack unit */
		if ((flags & MAP_FIXED_NOREPLACE) && !(flags & MAP_FIXED) && mem_overlaps(s, addr, len))
			return -EEXIST;
		invalidate_code(s, addr, len);
		mem_unmap(s, addr, len);
	} else {
		int free_hint = addr && !(addr & (GUEST_PAGE - 1)) && addr + len > addr && addr + len <= MMAP_TOP &&
				(addr >= AREAS_END || addr + len <= AREAS_BASE) && !mem_overlaps(s, addr, len);
		if (flags & MAP_32BIT_F) /* the first 2 GiB, as Linux places it (x86-64 only) */
			addr = free_hint && addr + len <= MAP_32BIT_LIMIT ? addr : mem_find_free_below(s, len, MAP_32BIT_LIMIT);
		else
			addr = free_hint ? addr : mem_find_free(s, len);
		if (!addr)
			return -ENOMEM;
	}
	if (hfd < 0 && prot == PROT_NONE) /* a reservation: backed when made accessible */
		return mem_reserve(s, addr, len) < 0 ? -ENOMEM : (int64_t)addr;
	if (mem_map(s, addr, len, UC_PROT_READ | UC_PROT_WRITE) < 0)
		return -ENOMEM;
	if (hfd >= 0) {
		int err = fill_from_file(s, addr, len, hfd, off);
		if (err < 0) {
			mem_unmap(s, addr, len);
			return err;
		}
	}
	if (prot != (PROT_READ | PROT_WRITE))
		mem_protect(s, addr, len, prot);
	if (hfd >= 0 && (prot & PROT_EXEC))
		sim_file_exec_mapping(s, addr, len, off, prot, hfd);
	else if (prot & PROT_EXEC)
		sim_anon_exec_mapping(s, addr, len, prot);
	return (int64_t)addr;
}

static int64_t do_mremap(struct sim *s, const struct sysargs *x)
{
	uint64_t old = x->a[0], olen = PAGE_UP(x->a[1]), nlen = PAGE_UP(x->a[2]);
	int flags = (int)x->a[3];
	if ((old & (GUEST_PAGE - 1)) || nlen == 0 || (flags & ~(MREMAP_MAYMOVE)) != 0)
		return -EINVAL;
	const struct vma *v = mem_find(s, old);
	if (!v || !mem_is_mapped(s, old, olen ? olen : GUEST_PAGE))
		return -EFAULT;
	int prot = v->prot;
	if (nlen <= olen) {
		if (nlen < olen)
			mem_unmap(s, old + nlen, olen - nlen);
		return (int64_t)old;
	}
	int grow_in_place = !mem_overlaps(s, old + olen, nlen - olen);
	if (grow_in_place && old + nlen <= MMAP_TOP) {
		if (mem_map(s, old + olen, nlen - olen, prot) < 0)
			return -ENOMEM;
		return (int64_t)old;
	}
	if (!(flags & MREMAP_MAYMOVE))
		return -ENOMEM;
	uint64_t na = mem_find_free(s, nlen);
	char *buf = malloc(olen);
	if (!na || !buf || mem_map(s, na, nlen, UC_PROT_READ | UC_PROT_WRITE) < 0) {
		free(buf);
		return -ENOMEM;
	}
	mem_read(s, old, buf, olen);
	mem_write(s, na, buf, olen);
	free(buf);
	if (prot != (PROT_READ | PROT_WRITE))
		mem_protect(s, na, nlen, prot);
	invalidate_code(s, old, olen);
	mem_unmap(s, old, olen);
	return (int64_t)na;
}

/* mprotect; anonymous memory that becomes executable gets a mapping record, as
 * the kernel reports it to perf (file mappings already have theirs). */
static int64_t do_mprotect(struct sim *s, uint64_t addr, uint64_t len, int prot)
{
	int was_exec = 1;
	for (uint64_t p = addr; p < addr + len && was_exec;) {
		const struct vma *v = mem_find(s, p);
		was_exec = v && (v->prot & UC_PROT_EXEC);
		p = v ? v->end : p;
	}
	invalidate_code(s, addr, len);
	int err = mem_protect(s, addr, len, prot);
	if (err == 0 && (prot & PROT_EXEC) && !was_exec && !sim_addr_in_file_mapping(s, addr))
		sim_anon_exec_mapping(s, addr, len, prot);
	return err;
}

static int64_t do_madvise(struct sim *s, uint64_t addr, uint64_t len, int advice)
{
	if (addr & (GUEST_PAGE - 1))
		return -EINVAL;
	len = PAGE_UP(len);
	if (!mem_is_mapped(s, addr, len))
		return -ENOMEM;
	if (advice == MADV_DONTNEED || advice == MADV_FREE) {
		/* private anonymous memory reads back as zeros afterwards */
		static const char zero[GUEST_PAGE];
		for (uint64_t p = addr; p < addr + len;) {
			const struct vma *v = mem_find(s, p);
			uint64_t end = v && v->end < addr + len ? v->end : addr + len;
			for (; v && !v->unbacked && p < end; p += GUEST_PAGE) /* reservations hold nothing */
				uc_mem_write(s->p->uc, p, zero, GUEST_PAGE);
			p = end;
		}
	}
	return 0;
}

static int sys_mem_calls(struct sim *s, const struct sysargs *x, int64_t *ret);

int sys_mem(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	int handled = sys_mem_calls(s, x, ret);
	if (handled && x->nr != SYS_brk && x->nr != SYS_madvise)
		code_watch_refresh(s);
	return handled;
}

static int sys_mem_calls(struct sim *s, const struct sysargs *x, int64_t *ret)
{
	const uint64_t *a = x->a;
	switch (x->nr) {
	case SYS_brk:
		*ret = do_brk(s, a[0]);
		return 1;
	case SYS_mmap:
		*ret = do_mmap(s, x);
		return 1;
	case SYS_munmap:
		if ((a[0] & (GUEST_PAGE - 1)) || a[1] == 0) {
			*ret = -EINVAL;
			return 1;
		}
		invalidate_code(s, a[0], PAGE_UP(a[1]));
		*ret = mem_unmap(s, a[0], PAGE_UP(a[1]));
		return 1;
	case SYS_mprotect:
		if (a[0] & (GUEST_PAGE - 1)) {
			*ret = -EINVAL;
			return 1;
		}
		*ret = a[1] ? do_mprotect(s, a[0], PAGE_UP(a[1]), (int)a[2] & 7) : 0;
		return 1;
	case SYS_mremap:
		*ret = do_mremap(s, x);
		return 1;
	case SYS_madvise:
		*ret = do_madvise(s, a[0], a[1], (int)a[2]);
		return 1;
	case SYS_mincore: /* every mapped page is resident */
		if (a[0] & (GUEST_PAGE - 1)) {
			*ret = -EINVAL;
		} else if (!mem_is_mapped(s, a[0], PAGE_UP(a[1]))) {
			*ret = -ENOMEM;
		} else {
			uint8_t one = 1;
			*ret = 0;
			for (uint64_t i = 0; i < PAGE_UP(a[1]) / GUEST_PAGE && !*ret; i++)
				*ret = mem_write(s, a[2] + i, &one, 1) < 0 ? -EFAULT : 0;
		}
		return 1;
	}
	return 0;
}
