/* A program binary as the profiler sees it — the program and, added to it, the
 * shared libraries of its process: their function symbols and their code,
 * decoded into runs (common/decode.h) straight from the file's bytes at the load
 * bias the recording shows, so that branch records can be checked and the code
 * between them walked. No Unicorn: the bytes come from the ELF file. */
#ifndef PMUSIM_PROFILER_BINARY_H
#define PMUSIM_PROFILER_BINARY_H

#include <stddef.h>
#include <stdint.h>

#include "common/fdata.h"
#include "common/symtab.h"
#include "pmu_model/block.h"

struct binary;

/* Opens path (ELF x86-64) with its executable PT_LOAD segments placed at
 * vaddr + bias. 0, or a negative pmusim_err with a one-line reason in msg. */
int binary_open(const char *path, uint64_t bias, struct binary **out, char *msg, size_t msglen);
void binary_free(struct binary *b);

/* Adds another file mapped at bias (a shared library of the same process): its
 * code and functions join b's. 0, or a negative pmusim_err with a reason. */
int binary_add_file(struct binary *b, const char *path, uint64_t bias, char *msg, size_t msglen);

/* A binary made of len bytes of code placed at addr, without symbols (for code
 * that exists in no file, and for tests). 0 or PMUSIM_ERR_NOMEM. */
int binary_from_code(const uint8_t *code, size_t len, uint64_t addr, struct binary **out);

/* Anonymous executable memory at [addr, addr+len) of the program's process
 * (an MMAP2 record of "//anon"): a region fdata names "//anon" (binary_regions).
 * 0 or PMUSIM_ERR_NOMEM. */
int binary_add_anon(struct binary *b, uint64_t addr, uint64_t len);
/* Code bytes at addr that exist in no file (a TEXT_POKE record: code written at
 * run time); later bytes replace earlier ones, and runs decoded from changed
 * bytes are decoded again. 0 or PMUSIM_ERR_NOMEM. */
int binary_add_code(struct binary *b, uint64_t addr, const uint8_t *bytes, size_t len);
/* The mappings besides the program, in the order added: shared libraries (base
 * name, load bias, executable segments) and "//anon" memory, for fdata names. */
size_t binary_regions(const struct binary *b, const struct fdata_region **out);

/* The code run starting at addr (up to its first branch), or NULL when addr is
 * neither in an executable segment nor in code bytes added. Runs stay valid until binary_free. */
const struct block_info *binary_run(struct binary *b, uint64_t addr);
/* 1 when addr lies in an executable segment or in code bytes added. */
int binary_has_code(const struct binary *b, uint64_t addr);

/* Copies up to len code bytes from addr into buf (those of the segment or added
 * code holding addr, stopping at its end); how many, 0 when addr holds none. */
size_t binary_read(const struct binary *b, uint64_t addr, uint8_t *buf, size_t len);

/* Copies up to len bytes from addr of a segment the program cannot write (a
 * PT_LOAD without PF_W of the program or a library: .rodata, the code, and
 * what binary_add_rodata added), stopping at its end; how many, 0 when addr
 * lies in none. For data a rewriter may read ahead of time (jump tables). */
size_t binary_read_ro(const struct binary *b, uint64_t addr, uint8_t *buf, size_t len);
/* Read-only bytes at addr that exist in no file (for tests): copied. 0,
 * PMUSIM_ERR_NOMEM, or PMUSIM_ERR_ARG when there are too many. */
int binary_add_rodata(struct binary *b, uint64_t addr, const uint8_t *bytes, size_t len);

/* The instruction at addr as text ("mov rax, rbx"); 0 or a negative pmusim_err. */
int binary_disasm(struct binary *b, uint64_t addr, char *out, size_t outlen);

const struct symtab *binary_symtab(const struct binary *b);
uint64_t binary_bias(const struct binary *b);
const char *binary_path(const struct binary *b);

#endif
