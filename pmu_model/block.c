/* Names for the retired-block stream's enums (pmu_model/block.h). */
#include "pmu_model/block.h"

const char *br_kind_name(int kind)
{
	static const char *const names[BK_COUNT] = {
		"none", "cond", "jmp", "jmp_ind", "call", "call_ind",
		"ret", "syscall", "rep", "trap",
	};
	if (kind < 0 || kind >= BK_COUNT)
		return "?";
	return names[kind];
}
