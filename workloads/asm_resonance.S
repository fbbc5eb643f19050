/* asm_resonance: a loop of exactly 8 cycles per iteration in the timing model
 * (pmu_model/cpu_model.c: imul 4 quarter cycles, nop and dec 1, a taken branch
 * 4), split 2 + 6 between two blocks, without libc:
 *   part_a: imul, jmp part_b                       8 quarters = 2 cycles
 *   part_b: 4 imul, 3 nop, dec, jnz part_a          24 quarters = 6 cycles
 * so a cycles counter sampled with a period that is a multiple of 8 overflows
 * at the same place of every iteration (the method's resonance), and part_a
 * holds exactly 25 % of the loop's cycles. The misprediction penalty (16
 * cycles) keeps the phase too. FACTS: 3,000,000 iterations; exit status 0. */
	.intel_syntax noprefix
	.text
	.globl _start
_start:
	mov ecx, 3000000
	mov eax, 3
	mov edx, 5
	.globl part_a
	.type part_a, @function
part_a:
	imul eax, edx
	jmp part_b
	.size part_a, . - part_a
	.globl part_b
	.type part_b, @function
part_b:
	imul edx, eax
	imul edx, eax
	imul edx, eax
	imul edx, eax
	nop
	nop
	nop
	dec ecx
	jnz part_a
	.size part_b, . - part_b
	mov eax, 231 /* exit_group(0) */
	xor edi, edi
	syscall
	.section .note.GNU-stack,"",@progbits
