/* Code bytes that exist in no file (written at run time, e.g. by a JIT
 * compiler), known only where a recording carried them: a sparse store of
 * bytes by address, page by page, that remembers which bytes are known. */
#ifndef PMUSIM_PROFILER_CODE_PAGES_H
#define PMUSIM_PROFILER_CODE_PAGES_H

#include <stddef.h>
#include <stdint.h>

struct code_pages;

/* An empty store; NULL when out of memory. */
struct code_pages *code_pages_new(void);
void code_pages_free(struct code_pages *c);

/* Stores len bytes at addr (later bytes replace earlier ones). 1 when a byte
 * that was known before changed (code decoded from it is stale), 0 when not,
 * PMUSIM_ERR_NOMEM (the store keeps what it had). */
int code_pages_put(struct code_pages *c, uint64_t addr, const uint8_t *bytes, size_t len);

/* Copies the known bytes from addr on, up to len, stopping at the first unknown
 * one; returns how many. */
size_t code_pages_read(const struct code_pages *c, uint64_t addr, void *buf, size_t len);

/* 1 when the byte at addr is known. */
int code_pages_known(const struct code_pages *c, uint64_t addr);

#endif
