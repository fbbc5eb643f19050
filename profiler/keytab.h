/* A hash table of byte strings, each numbered in order of insertion (0, 1, 2,
 * ...): the stack profile interns function names, call paths (arrays of name
 * numbers) and thread ids with it, so that equal keys get one number and
 * everything else is kept in plain arrays indexed by that number. Keys are
 * copied into the table. Open addressing with linear probing over FNV-1a
 * hashes (Fowler, Noll, Vo: the FNV-1a 64-bit parameters). */
#ifndef PMUSIM_PROFILER_KEYTAB_H
#define PMUSIM_PROFILER_KEYTAB_H

#include <stddef.h>
#include <stdint.h>

struct keytab;

/* An empty table; NULL when out of memory. */
struct keytab *keytab_new(void);
void keytab_free(struct keytab *t);

/* The number of the len-byte key: its own when present, else the next number
 * (keytab_count() before the call), with *added set to 1 (0 otherwise; added
 * may be NULL). -1 when out of memory (nothing added). key must not point
 * into the table (keytab_key). */
long keytab_put(struct keytab *t, const void *key, size_t len, int *added);
/* The number of the key, or -1 when absent. */
long keytab_find(const struct keytab *t, const void *key, size_t len);

size_t keytab_count(const struct keytab *t);
/* Key number i (i < keytab_count), aligned to 8 bytes, its length in *len
 * (len may be NULL). Valid until the next keytab_put or keytab_free. */
const void *keytab_key(const struct keytab *t, size_t i, size_t *len);

/* FNV-1a 64-bit hash of len bytes (also the flame graph's colours). */
uint64_t keytab_hash(const void *key, size_t len);

#endif
