/* Text for pmusim's error codes, and the message that goes with a failure. */
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pmusim_strerror(int err)
{
	switch (err) {
	case PMUSIM_OK: return "success";
	case PMUSIM_ERR_NOMEM: return "out of memory";
	case PMUSIM_ERR_IO: return "input/output error";
	case PMUSIM_ERR_ELF: return "not a valid ELF file";
	case PMUSIM_ERR_ARCH: return "not an x86-64 ELF executable";
	case PMUSIM_ERR_DYNAMIC: return "dynamic programs are not supported yet";
	case PMUSIM_ERR_UNSUPPORTED: return "not supported";
	case PMUSIM_ERR_ARG: return "invalid argument";
	case PMUSIM_ERR_EMU: return "emulator error";
	case PMUSIM_ERR_DECODE: return "cannot decode guest code";
	case PMUSIM_ERR_INTERNAL: return "internal error";
	case PMUSIM_ERR_FORMAT: return "malformed input file";
	}
	return "unknown error";
}

/* raw written into msg with control characters as C escapes (\n, \t, \r,
 * \xHH), cut before an escape that would not fit. */
static void escape_into(char *msg, size_t msglen, const char *raw)
{
	size_t o = 0;
	for (const unsigned char *p = (const unsigned char *)raw; *p; p++) {
		char e[5];
		if (*p == '\n' || *p == '\t' || *p == '\r')
			snprintf(e, sizeof(e), "\\%c", *p == '\n' ? 'n' : *p == '\t' ? 't' : 'r');
		else if (*p < 0x20 || *p == 0x7f)
			snprintf(e, sizeof(e), "\\x%02x", *p);
		else
			e[0] = (char)*p, e[1] = 0;
		size_t k = strlen(e);
		if (o + k >= msglen)
			break;
		memcpy(msg + o, e, k);
		o += k;
	}
	msg[o] = 0;
}

void pmusim_one_line(char *msg, size_t msglen)
{
	if (!msg || !msglen || !strpbrk(msg, "\x01\x02\x03\x04\x05\x06\x07\x08\t\n\x0b\x0c\r\x0e\x0f\x10\x11\x12"
					  "\x13\x14\x15\x16\x17\x18\x19\x1a\x1b\x1c\x1d\x1e\x1f\x7f"))
		return;
	char *raw = strdup(msg);
	if (raw) {
		escape_into(msg, msglen, raw);
		free(raw);
		return;
	}
	for (char *p = msg; *p; p++) /* no memory for the escapes: one line all the same */
		if ((unsigned char)*p < 0x20 || *p == 0x7f)
			*p = '?';
}

int pmusim_fail(char *msg, size_t msglen, int err, const char *fmt, ...)
{
	if (msg && msglen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
		/* names from files and the guest (paths in an MMAP2 record, a program's
		 * own file name) can hold a newline: a message stays one line */
		pmusim_one_line(msg, msglen);
	}
	return err;
}
