/* cpi_tree: a binary search tree of short string keys — inserts that compare
 * keys with libc's strcmp, a recursive in-order walk that sums key lengths
 * with strlen — so that calls, returns, recursion and
 * libc's string code share the cycles. FACTS: prints "nodes=<n> sum=<n>"
 * (deterministic: an LCG, no system randomness); exit 0. An optional
 * argument N runs N rounds of 2000 inserts (default 4). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct tnode {
	struct tnode *l, *r;
	char key[12];
};

static struct tnode pool[2000];
static unsigned used;

__attribute__((noinline)) static struct tnode *insert(struct tnode *t, const char *key)
{
	if (!t) {
		struct tnode *n = &pool[used++];
		n->l = n->r = NULL;
		strcpy(n->key, key);
		return n;
	}
	int c = strcmp(key, t->key);
	if (c < 0)
		t->l = insert(t->l, key);
	else if (c > 0)
		t->r = insert(t->r, key);
	return t;
}

__attribute__((noinline)) static unsigned long walk(const struct tnode *t)
{
	if (!t)
		return 0;
	return walk(t->l) + strlen(t->key) + walk(t->r);
}

int main(int argc, char **argv)
{
	long rounds = argc > 1 ? strtol(argv[1], NULL, 10) : 4;
	unsigned s = 4242;
	unsigned long sum = 0;
	long nodes = 0;
	for (long r = 0; r < rounds; r++) {
		struct tnode *root = NULL;
		used = 0;
		for (int i = 0; i < 2000; i++) {
			char key[12];
			s = s * 1103515245u + 12345u;
			snprintf(key, sizeof(key), "k%u", (s >> 8) % 1000000u);
			root = insert(root, key);
		}
		nodes += used;
		sum += walk(root);
	}
	printf("nodes=%ld sum=%lu\n", nodes, sum);
	return 0;
}
