/* xoshiro256** seeded through splitmix64; see common/rng.h. */
#include "common/rng.h"

#include <string.h>

static uint64_t splitmix64(uint64_t *x)
{
	uint64_t z = (*x += 0x9e3779b97f4a7c15ULL);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

void rng_init(struct rng *r, uint64_t seed)
{
	for (int i = 0; i < 4; i++)
		r->s[i] = splitmix64(&seed);
}

static uint64_t rotl(uint64_t x, int k)
{
	return (x << k) | (x >> (64 - k));
}

uint64_t rng_next(struct rng *r)
{
	uint64_t *s = r->s;
	uint64_t result = rotl(s[1] * 5, 7) * 9;
	uint64_t t = s[1] << 17;
	s[2] ^= s[0];
	s[3] ^= s[1];
	s[1] ^= s[2];
	s[0] ^= s[3];
	s[2] ^= t;
	s[3] = rotl(s[3], 45);
	return result;
}

uint64_t rng_uniform(struct rng *r, uint64_t bound)
{
	if (bound == UINT64_MAX)
		return rng_next(r);
	uint64_t n = bound + 1;
	uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
	uint64_t v;
	do
		v = rng_next(r);
	while (v >= limit);
	return v % n;
}

void rng_fill(struct rng *r, void *buf, size_t len)
{
	unsigned char *p = buf;
	while (len > 0) {
		uint64_t v = rng_next(r);
		size_t n = len < 8 ? len : 8;
		memcpy(p, &v, n);
		p += n;
		len -= n;
	}
}
