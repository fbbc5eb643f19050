/* The GNU build id of an ELF file (the NT_GNU_BUILD_ID note), as perf records it
 * in perf.data's BUILD_ID section and as perf2bolt matches binaries by it. */
#ifndef PMUSIM_COMMON_BUILDID_H
#define PMUSIM_COMMON_BUILDID_H

#include <stddef.h>
#include <stdint.h>

#define BUILD_ID_MAX 20

/* Reads path's build id into id (room for BUILD_ID_MAX bytes). Returns its
 * length (1..20), 0 when the file has none, or a negative pmusim_err. */
int elf_build_id(const char *path, uint8_t *id);

/* Lower-case hex of a build id into out (room for 2 * len + 1). */
void build_id_hex(const uint8_t *id, size_t len, char *out);

#endif
