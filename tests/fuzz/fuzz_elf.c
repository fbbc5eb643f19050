/* libFuzzer harness of the ELF loader's planning (sim/linux/elf_plan.h): the
 * checks of the ELF and program headers and the list of segments the loader
 * maps, without Unicorn. It also checks what the loader relies on: every planned
 * segment lies inside the file where it has file bytes, is not empty, and sits
 * inside the plan's page span; the interpreter path ends inside its buffer. */
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sim/linux/elf_plan.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct elf_plan plan;
	char msg[512];
	/* an exact-size copy, so that a read past the end of the file is reported */
	unsigned char *file = malloc(size ? size : 1);
	if (!file)
		return 0;
	memcpy(file, data, size);
	if (elf_plan_read(file, size, "fuzz", &plan, msg, sizeof(msg)) == 0) {
		if (strnlen(plan.interp, sizeof(plan.interp)) == sizeof(plan.interp))
			abort();
		for (size_t i = 0; i < plan.nseg; i++) {
			const struct elf_seg *sg = &plan.seg[i];
			if (sg->memsz == 0 || sg->filesz > sg->memsz || sg->offset > size ||
			    sg->filesz > size - sg->offset || sg->vaddr < plan.lo ||
			    sg->vaddr + sg->memsz > plan.hi)
				abort();
		}
		if (plan.nseg > ELF_PLAN_MAX_PHDRS || plan.phnum > ELF_PLAN_MAX_PHDRS)
			abort();
	} else if (strlen(msg) == 0) {
		abort(); /* a refusal always says why */
	}
	free(file);
	return 0;
}
