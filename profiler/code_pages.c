/* Sparse code bytes (see code_pages.h): pages sorted by address, each with a
 * bitmap of its known bytes. */
#include "profiler/code_pages.h"

#include <stdlib.h>
#include <string.h>

#include "common/err.h"

#define PAGE 4096u

struct page {
	uint64_t base;
	uint8_t bytes[PAGE];
	uint8_t known[PAGE / 8];
};

struct code_pages {
	struct page **pages; /* sorted by base */
	size_t n, cap;
};

struct code_pages *code_pages_new(void)
{
	return calloc(1, sizeof(struct code_pages));
}

void code_pages_free(struct code_pages *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < c->n; i++)
		free(c->pages[i]);
	free(c->pages);
	free(c);
}

/* Index of the first page whose base is >= base. */
static size_t lower_bound(const struct code_pages *c, uint64_t base)
{
	size_t lo = 0, hi = c->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (c->pages[mid]->base < base)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

static struct page *find(const struct code_pages *c, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(PAGE - 1);
	size_t i = lower_bound(c, base);
	return i < c->n && c->pages[i]->base == base ? c->pages[i] : NULL;
}

static struct page *find_or_add(struct code_pages *c, uint64_t addr)
{
	uint64_t base = addr & ~(uint64_t)(PAGE - 1);
	size_t i = lower_bound(c, base);
	if (i < c->n && c->pages[i]->base == base)
		return c->pages[i];
	if (c->n == c->cap) {
		size_t cap = c->cap ? 2 * c->cap : 16;
		struct page **np = realloc(c->pages, cap * sizeof(*np));
		if (!np)
			return NULL;
		c->pages = np;
		c->cap = cap;
	}
	struct page *p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->base = base;
	memmove(c->pages + i + 1, c->pages + i, (c->n - i) * sizeof(*c->pages));
	c->pages[i] = p;
	c->n++;
	return p;
}

static int bit(const struct page *p, size_t off)
{
	return (p->known[off / 8] >> (off % 8)) & 1;
}

int code_pages_put(struct code_pages *c, uint64_t addr, const uint8_t *bytes, size_t len)
{
	int changed = 0;
	for (size_t i = 0; i < len;) {
		struct page *p = find_or_add(c, addr + i);
		if (!p)
			return PMUSIM_ERR_NOMEM;
		size_t off = (size_t)((addr + i) - p->base);
		for (; off < PAGE && i < len; off++, i++) {
			if (bit(p, off) && p->bytes[off] != bytes[i])
				changed = 1;
			p->bytes[off] = bytes[i];
			p->known[off / 8] |= (uint8_t)(1u << (off % 8));
		}
	}
	return changed;
}

size_t code_pages_read(const struct code_pages *c, uint64_t addr, void *buf, size_t len)
{
	uint8_t *out = buf;
	size_t n = 0;
	while (n < len) {
		const struct page *p = find(c, addr + n);
		if (!p)
			break;
		size_t off = (size_t)((addr + n) - p->base);
		for (; off < PAGE && n < len && bit(p, off); off++)
			out[n++] = p->bytes[off];
		if (off < PAGE && n < len)
			break; /* an unknown byte */
	}
	return n;
}

int code_pages_known(const struct code_pages *c, uint64_t addr)
{
	const struct page *p = find(c, addr);
	return p && bit(p, (size_t)(addr - p->base));
}
