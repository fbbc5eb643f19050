/* cpi_chase: a hash table of chained nodes probed with keys that hit and
 * miss, and a pointer chase through a shuffled linked list: dependent loads,
 * unpredictable branches, short calls. FACTS: prints "found=<n> walked=<n>"
 * (deterministic); exit 0. An optional argument N runs N rounds (default 4). */
#include <stdio.h>
#include <stdlib.h>

#define NODES 4096
#define BUCKETS 1024

struct node {
	struct node *next;
	unsigned key;
};

static struct node pool[NODES];
static struct node *table[BUCKETS];
static unsigned order[NODES];

static unsigned hash(unsigned k)
{
	k ^= k >> 13;
	k *= 0x5bd1e995u;
	return k ^ (k >> 15);
}

__attribute__((noinline)) static int lookup(unsigned key)
{
	for (const struct node *n = table[hash(key) % BUCKETS]; n; n = n->next)
		if (n->key == key)
			return 1;
	return 0;
}

__attribute__((noinline)) static unsigned long walk(const struct node *n)
{
	unsigned long steps = 0;
	for (; n; n = n->next)
		steps += n->key & 1 ? 3 : 1;
	return steps;
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
	unsigned s = 777;
	for (unsigned i = 0; i < NODES; i++) {
		pool[i].key = i * 2654435761u;
		struct node **b = &table[hash(pool[i].key) % BUCKETS];
		pool[i].next = *b;
		*b = &pool[i];
		order[i] = i;
	}
	long found = 0;
	unsigned long walked = 0;
	for (long r = 0; r < rounds; r++) {
		for (unsigned i = 0; i < 4 * NODES; i++) {
			s = s * 1664525u + 1013904223u;
			found += lookup(s & 1 ? (s >> 20) * 2654435761u : s);
		}
		/* a list in shuffled order (Fisher-Yates over the LCG), chased whole */
		for (unsigned i = NODES - 1; i > 0; i--) {
			s = s * 1664525u + 1013904223u;
			unsigned j = (s >> 8) % (i + 1), t = order[i];
			order[i] = order[j];
			order[j] = t;
		}
		for (unsigned i = 0; i + 1 < NODES; i++)
			pool[order[i]].next = &pool[order[i + 1]];
		pool[order[NODES - 1]].next = NULL;
		walked += walk(&pool[order[0]]);
		for (unsigned i = 0; i < BUCKETS; i++)
			table[i] = NULL;
		for (unsigned i = 0; i < NODES; i++) {
			struct node **b = &table[hash(pool[i].key) % BUCKETS];
			pool[i].next = *b;
			*b = &pool[i];
		}
	}
	printf("found=%ld walked=%lu\n", found, walked);
	return 0;
}
