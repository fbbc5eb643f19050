/* The "#!" line of a script as the kernel reads it (fs/binfmt_script.c): the
 * interpreter's path, then at most one argument, the rest of the line with its outer
 * blanks removed. */
#ifndef PMUSIM_COMMON_SHEBANG_H
#define PMUSIM_COMMON_SHEBANG_H

#include <stddef.h>

/* The first n bytes of a file, h (NUL-terminated at h[n], which it may write): 1 with
 * interp and arg (possibly empty) filled, 0 when it does not start with "#!", or -1
 * when the line is unusable (no newline in the bytes read, no interpreter, too long:
 * the kernel's ENOEXEC). */
int shebang_parse(char *h, size_t n, char *interp, size_t ilen, char *arg, size_t alen);

#endif
