/* Whether a word is one of a separated list's (perf's --comm A,B lists, the
 * spellings of an option). */
#ifndef PMUSIM_COMMON_WORDLIST_H
#define PMUSIM_COMMON_WORDLIST_H

/* 1 when word equals one of list's items (separated by sep; empty items
 * allowed), else 0. */
int word_listed(const char *list, char sep, const char *word);

#endif
