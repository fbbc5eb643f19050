/* JSON text: the one string writer of the code base's JSON outputs (truth,
 * reports, validate). */
#ifndef PMUSIM_COMMON_JSON_H
#define PMUSIM_COMMON_JSON_H

#include <stdio.h>

/* s as a JSON string, quotes included: '"', '\\' and control characters
 * escaped (RFC 8259, section 7); other bytes (UTF-8) as they are. */
void json_put_str(FILE *f, const char *s);

#endif
