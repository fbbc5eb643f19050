/* asm_branches: every branch shape the block reconstruction must get right,
 * without libc, REP-free. FACTS (exit status 7, prints "asm ok\n"; 51 instructions
 * retired, as valgrind lackey counts them too):
 *   L1  dec/jnz loop: 10 iterations (jnz taken 9, not taken 1)
 *   J1  jmp to the next instruction: taken once
 *   C1  call to the next instruction (+pop): taken once
 *   Z1  jz whose target is its own fall-through, run with ZF=1 (taken) and ZF=0 (not taken)
 *   LP1 loop instruction: 5 iterations (taken 4, not taken 1)
 *   JR1 jrcxz with rcx=0: taken once; JR2 jrcxz with rcx=1: not taken once
 *   IJ1 indirect jmp through a register: taken once to ij_target
 *   IC1 indirect call through memory to func, which returns
 *   one write(1, "asm ok\n", 7) and exit_group(7) */
	.intel_syntax noprefix
	.text
	.globl _start
_start:
	mov ecx, 10
1:	dec ecx
	jnz 1b                  /* L1 */
	jmp 2f                  /* J1 */
2:	call 3f                 /* C1 */
3:	pop rax
	xor eax, eax            /* ZF = 1 */
	jz 4f                   /* Z1 (taken) */
4:	mov eax, 1
	test eax, eax           /* ZF = 0 */
	jz 5f                   /* Z1' (not taken) */
5:	mov ecx, 5
6:	loop 6b                 /* LP1 */
	xor ecx, ecx
	jrcxz 7f                /* JR1 taken */
	nop
7:	mov ecx, 1
	jrcxz 8f                /* JR2 not taken */
8:	lea rax, [rip + ij_target]
	jmp rax                 /* IJ1 */
	ud2
ij_target:
	call [rip + fptr]       /* IC1 */
	mov eax, 1
	mov edi, 1
	lea rsi, [rip + msg]
	mov edx, 7
	syscall
	mov eax, 231
	mov edi, 7
	syscall
func:
	ret

	.section .rodata
msg:	.ascii "asm ok\n"
	.section .data
fptr:	.quad func
	.section .bss
buf:	.skip 64
