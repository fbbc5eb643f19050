/* Test helper: a few hand-assembled bytes posing as guest memory for the
 * decode cache. Encodings checked against the Intel SDM vol. 2 (and objdump). */
#ifndef PMUSIM_TESTS_UNIT_GUEST_MEM_H
#define PMUSIM_TESTS_UNIT_GUEST_MEM_H

#include <stdint.h>
#include <string.h>

#include "common/decode.h"

#define GM_BASE 0x1000u
#define GM_SIZE 0x1000u

struct guest_mem {
	uint8_t bytes[GM_SIZE];
};

static inline size_t gm_read(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct guest_mem *m = ctx;
	if (addr < GM_BASE || addr >= GM_BASE + GM_SIZE)
		return 0;
	size_t avail = GM_BASE + GM_SIZE - addr;
	size_t n = len < avail ? len : avail;
	memcpy(buf, m->bytes + (addr - GM_BASE), n);
	return n;
}

static inline void gm_put(struct guest_mem *m, uint64_t addr, const void *code, size_t len)
{
	memcpy(m->bytes + (addr - GM_BASE), code, len);
}

#endif
