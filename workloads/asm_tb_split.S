/* asm_tb_split: a 700-instruction straight-line run (longer than the emulator's
 * translation-block limit) inside a loop run 3 times, and a run that straddles
 * a 4 KiB page boundary. FACTS: exit status 0, no output;
 * instructions retired = 2 + 3 * (700 + 2) + 1 + 300 + 3 = 2412. */
	.intel_syntax noprefix
	.text
	.globl _start
_start:
	xor eax, eax
	mov ecx, 3
1:
	.rept 700
	add rax, 1
	.endr
	dec ecx
	jnz 1b
	jmp straddle
	.balign 4096
	.skip 4096 - 600
straddle:
	.rept 300
	add rax, 3
	.endr
	mov eax, 231
	xor edi, edi
	syscall
