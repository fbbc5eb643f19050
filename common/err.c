/* Text for pmusim's error codes, and the message that goes with a failure. */
#include "common/err.h"

#include <stdarg.h>
#include <stdio.h>

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

int pmusim_fail(char *msg, size_t msglen, int err, const char *fmt, ...)
{
	if (msg && msglen) {
		va_list ap;
		va_start(ap, fmt);
		vsnprintf(msg, msglen, fmt, ap);
		va_end(ap);
	}
	return err;
}
