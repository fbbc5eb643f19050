/* Separated word lists (see wordlist.h). */
#include "common/wordlist.h"

#include <string.h>

int word_listed(const char *list, char sep, const char *word)
{
	const char seps[2] = {sep, 0};
	size_t n = strlen(word);
	for (const char *p = list; *p;) {
		size_t w = strcspn(p, seps);
		if (w == n && strncmp(p, word, n) == 0)
			return 1;
		p += w + (p[w] == sep);
	}
	return 0;
}
