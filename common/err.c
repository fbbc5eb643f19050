/* Text for pmusim's error codes. */
#include "common/err.h"

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
