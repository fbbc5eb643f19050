/* JSON text (see json.h). */
#include "common/json.h"

#include <string.h>

void json_put_str(FILE *f, const char *s)
{
	static const char special[] =
		"\"\\\001\002\003\004\005\006\007\010\011\012\013\014\015\016\017"
		"\020\021\022\023\024\025\026\027\030\031\032\033\034\035\036\037";
	fputc('"', f);
	while (*s) {
		size_t run = strcspn(s, special); /* plain bytes at once */
		fwrite(s, 1, run, f);
		s += run;
		if (!*s)
			break;
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else
			fprintf(f, "\\u%04x", (unsigned)(unsigned char)*s);
		s++;
	}
	fputc('"', f);
}
