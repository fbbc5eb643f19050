/* Seeded pseudo-random generator (splitmix64 seeding a xoshiro256** state).
 * Every random choice in pmusim draws from one of these so that the same --seed
 * gives the same bytes on every host. Algorithms: Vigna, "xoshiro / xoroshiro
 * generators" (public domain reference description). */
#ifndef PMUSIM_COMMON_RNG_H
#define PMUSIM_COMMON_RNG_H

#include <stdint.h>
#include <stddef.h>

struct rng {
	uint64_t s[4];
};

/* Seed the generator; every seed (including 0) gives a valid state. */
void rng_init(struct rng *r, uint64_t seed);
uint64_t rng_next(struct rng *r);
/* Uniform integer in [0, bound] (inclusive), without modulo bias. */
uint64_t rng_uniform(struct rng *r, uint64_t bound);
/* Fill buf with len pseudo-random bytes. */
void rng_fill(struct rng *r, void *buf, size_t len);

#endif
