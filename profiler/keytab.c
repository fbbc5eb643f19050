/* Interning table (see keytab.h): keys in one pool, 8-byte aligned; a slot
 * array of entry numbers + 1 (0: empty) at most half full. */
#include "profiler/keytab.h"

#include <stdlib.h>
#include <string.h>

struct entry {
	uint64_t hash;
	size_t off, len;
};

struct keytab {
	struct entry *e;
	size_t n, ecap;
	uint32_t *slot; /* entry number + 1 */
	size_t scap;    /* a power of two */
	unsigned char *pool;
	size_t used, pcap;
};

uint64_t keytab_hash(const void *key, size_t len)
{
	const unsigned char *p = key;
	uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a 64: offset basis, then prime */
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

struct keytab *keytab_new(void)
{
	struct keytab *t = calloc(1, sizeof(*t));
	if (t && !(t->slot = calloc(t->scap = 64, sizeof(*t->slot)))) {
		free(t);
		t = NULL;
	}
	return t;
}

void keytab_free(struct keytab *t)
{
	if (!t)
		return;
	free(t->e);
	free(t->slot);
	free(t->pool);
	free(t);
}

size_t keytab_count(const struct keytab *t)
{
	return t->n;
}

const void *keytab_key(const struct keytab *t, size_t i, size_t *len)
{
	if (len)
		*len = t->e[i].len;
	return t->pool + t->e[i].off;
}

/* The slot holding the key, or the empty slot where it would go. */
static size_t probe(const struct keytab *t, const void *key, size_t len, uint64_t h)
{
	size_t i = (size_t)h & (t->scap - 1);
	for (; t->slot[i]; i = (i + 1) & (t->scap - 1)) {
		const struct entry *e = &t->e[t->slot[i] - 1];
		if (e->hash == h && e->len == len && memcmp(t->pool + e->off, key, len) == 0)
			break;
	}
	return i;
}

long keytab_find(const struct keytab *t, const void *key, size_t len)
{
	size_t i = probe(t, key, len, keytab_hash(key, len));
	return t->slot[i] ? (long)t->slot[i] - 1 : -1;
}

static int rehash(struct keytab *t)
{
	size_t nc = t->scap * 2;
	uint32_t *ns = calloc(nc, sizeof(*ns));
	if (!ns)
		return -1;
	for (size_t k = 0; k < t->n; k++) {
		size_t i = (size_t)t->e[k].hash & (nc - 1);
		while (ns[i])
			i = (i + 1) & (nc - 1);
		ns[i] = (uint32_t)k + 1;
	}
	free(t->slot);
	t->slot = ns;
	t->scap = nc;
	return 0;
}

/* Room for one more entry and need more pool bytes; 0 or -1. */
static int reserve(struct keytab *t, size_t need)
{
	if (t->n == t->ecap) {
		size_t nc = t->ecap ? t->ecap * 2 : 64;
		struct entry *ne = realloc(t->e, nc * sizeof(*ne));
		if (!ne)
			return -1;
		t->e = ne;
		t->ecap = nc;
	}
	if (t->used + need > t->pcap) {
		size_t nc = t->pcap ? t->pcap : 1024;
		while (nc < t->used + need)
			nc *= 2;
		unsigned char *np = realloc(t->pool, nc);
		if (!np)
			return -1;
		t->pool = np;
		t->pcap = nc;
	}
	return 0;
}

long keytab_put(struct keytab *t, const void *key, size_t len, int *added)
{
	uint64_t h = keytab_hash(key, len);
	size_t i = probe(t, key, len, h);
	if (added)
		*added = 0;
	if (t->slot[i])
		return (long)t->slot[i] - 1;
	size_t padded = (len + 7) & ~(size_t)7;
	if (t->n >= UINT32_MAX - 1 || reserve(t, padded ? padded : 8) < 0)
		return -1;
	if (2 * (t->n + 1) > t->scap) {
		if (rehash(t) < 0)
			return -1;
		i = probe(t, key, len, h);
	}
	if (len)
		memcpy(t->pool + t->used, key, len);
	t->e[t->n] = (struct entry){h, t->used, len};
	t->used += padded ? padded : 8;
	t->slot[i] = (uint32_t)++t->n;
	if (added)
		*added = 1;
	return (long)t->n - 1;
}
