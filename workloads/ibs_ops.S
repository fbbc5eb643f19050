/* ibs_ops: every kind of operation an instruction-based op sample describes, without
 * libc, REP-free and deterministic, for checking op samples against valgrind lackey
 * (tests/e2e/lackey_ref.h) and the CPU under ptrace.
 *
 * Usage: ibs_ops [N]  (N decimal, default 232500: about 20 million instructions).
 * FACTS:
 *   stdout line 1: the initial stack pointer (RSP at _start, where argc is) as 16
 *     lowercase hex digits; a fixed-length loop prints it, so the instruction count
 *     does not depend on its value. Tests turn stack addresses into offsets from it.
 *   stdout line 2: "checksum " and 16 hex digits: the same natively, under valgrind
 *     and under pmusim (no stack address enters it).
 *   exit 0; a bad N (not 1 to 18 decimal digits): one line on stderr, exit status 2.
 *   Iteration i retires 85 instructions, 2 more when i % 4 == 1 (op1 is one longer
 *     and is called twice) and 1 more when i is odd (the parity branch falls
 *     through): 344 per 4 iterations. The whole run retires 297 + 86 N instructions
 *     without an argument (19,995,297) and 308 + 12 d + 86 N with an argument of d
 *     digits, for N a multiple of 4 (the CPU under ptrace; valgrind lackey agrees
 *     with --vex-guest-chase=no only: see tests/e2e/lackey_ref.h).
 *   The stack is never realigned (RSP at _start is 16-byte aligned by the ABI), so a
 *   stack access's offset from the initial RSP is the same in every run; only the
 *   bytes of argv[1] are read at offsets that depend on the environment.
 * Each iteration i (r13), with k = i & 3 (eax):
 *   ibs_call_direct   call leaf (direct call; leaf returns)
 *   ibs_call_mem      call [call_table + rax*8]  (table in .rodata: load of the slot,
 *                     store of the return address)
 *   ibs_call_reg      call rdx (rdx loaded from the same slot)
 *   ibs_jmp_mem       jmp [jump_table + rax*8]   (table in .data: load of the slot)
 *   ibs_jmp_reg       jmp rdx (rdx = lea of the next label)
 *   ibs_store1/2/4/8  stores of 1, 2, 4, 8 bytes to g_b1, g_w2, g_d4, g_q8 (.data)
 *   ibs_load1/2/4/8   loads of the same
 *   ibs_load16u       movdqu xmm0, [g_vec_src + 1]  (unaligned 16-byte load, .data)
 *   ibs_store16a      movaps [g_vec], xmm0           (aligned 16-byte store, .bss)
 *   ibs_load16a       movaps xmm1, [g_vec]
 *   ibs_rmw           add qword ptr [g_counter], 1   (.bss, read-modify-write)
 *   ibs_push          push r12 (then push rax, pop rdx, pop rcx)
 *   ibs_chase         mov rbx, [rbx], 4 times: a pointer chase through chase[] (.data),
 *                     each address the previous load's value; chase[j] points to
 *                     chase[(5 j + 3) mod 64], a single cycle of all 64
 *   ibs_call_frame    call frame: a frame (push rbp; sub rsp, 32) whose locals take
 *                     stores and loads of 1, 2, 4, 8 and 16 bytes and an add to memory
 *   ibs_loop_branch   jnz of a 3-iteration loop: taken, taken, not taken
 *   ibs_parity_branch jz taken when i is even, not taken when odd
 *   ibs_loop_back     jb back to the top while i < N */
	.intel_syntax noprefix
	.text
	.globl _start
	.type _start, @function
_start:
	mov r15, rsp                    /* the initial RSP: argc is at [rsp] */
	mov rax, r15
	call put_hex
	mov r14d, 232500                /* default N */
	cmp qword ptr [r15], 2
	jb .Lhave_n
	mov rsi, [r15 + 16]             /* argv[1] */
	call parse_decimal
	mov r14, rax
.Lhave_n:
	xor r12d, r12d                  /* checksum */
	xor r13d, r13d                  /* i */
	lea rbx, [rip + chase]          /* the chase's current element */
	pxor xmm1, xmm1
	test r14, r14
	jz .Ldone
	.globl ops_loop
ops_loop:
	mov eax, r13d
	and eax, 3
	.globl ibs_call_direct
ibs_call_direct:
	call leaf
	.globl ibs_call_mem
ibs_call_mem:
	call qword ptr [call_table + rax*8]
	mov rdx, qword ptr [call_table + rax*8]
	.globl ibs_call_reg
ibs_call_reg:
	call rdx
	.globl ibs_jmp_mem
ibs_jmp_mem:
	jmp qword ptr [jump_table + rax*8]
	.globl after_switch
after_switch:
	lea rdx, [rip + after_jreg]
	.globl ibs_jmp_reg
ibs_jmp_reg:
	jmp rdx
	ud2                             /* never reached */
after_jreg:
	.globl ibs_store1
ibs_store1:
	mov byte ptr [g_b1], r12b
	.globl ibs_store2
ibs_store2:
	mov word ptr [g_w2], r13w
	.globl ibs_store4
ibs_store4:
	mov dword ptr [g_d4], r13d
	.globl ibs_store8
ibs_store8:
	mov qword ptr [g_q8], r12
	.globl ibs_load1
ibs_load1:
	movzx ecx, byte ptr [g_b1]
	.globl ibs_load2
ibs_load2:
	movzx edx, word ptr [g_w2]
	add ecx, edx
	.globl ibs_load4
ibs_load4:
	mov edx, dword ptr [g_d4]
	add rcx, rdx
	.globl ibs_load8
ibs_load8:
	add r12, qword ptr [g_q8]
	add r12, rcx
	.globl ibs_load16u
ibs_load16u:
	movdqu xmm0, xmmword ptr [g_vec_src + 1]
	paddq xmm0, xmm1
	.globl ibs_store16a
ibs_store16a:
	movaps xmmword ptr [g_vec], xmm0
	.globl ibs_load16a
ibs_load16a:
	movaps xmm1, xmmword ptr [g_vec]
	movq rdx, xmm1
	add r12, rdx
	.globl ibs_rmw
ibs_rmw:
	add qword ptr [g_counter], 1
	.globl ibs_push
ibs_push:
	push r12
	push rax
	pop rdx
	pop rcx
	add r12, rdx
	.globl ibs_chase
ibs_chase:
	mov rbx, qword ptr [rbx]
	mov rbx, qword ptr [rbx]
	mov rbx, qword ptr [rbx]
	mov rbx, qword ptr [rbx]
	lea rdx, [rip + chase]
	mov rcx, rbx
	sub rcx, rdx                    /* the chase's position, not an address */
	add r12, rcx
	.globl ibs_call_frame
ibs_call_frame:
	call frame
	mov ecx, 3
1:	add r12, rcx
	dec ecx
	.globl ibs_loop_branch
ibs_loop_branch:
	jnz 1b
	test r13d, 1
	.globl ibs_parity_branch
ibs_parity_branch:
	jz 2f
	add r12, 7
2:	inc r13
	cmp r13, r14
	.globl ibs_loop_back
ibs_loop_back:
	jb ops_loop
.Ldone:
	add r12, qword ptr [g_counter]
	mov eax, 1                      /* write(1, "checksum ", 9) */
	mov edi, 1
	lea rsi, [rip + checksum_msg]
	mov edx, 9
	syscall
	mov rax, r12
	call put_hex
	mov eax, 231                    /* exit_group(0) */
	xor edi, edi
	syscall
	.size _start, . - _start

/* Writes rax as 16 hex digits and a newline to stdout: always 16 rounds of the same
 * instructions, whatever the value. Clobbers rax, rcx, rdx, rsi, rdi, r11. */
	.type put_hex, @function
put_hex:
	lea rdi, [rip + hex_buf]
	mov ecx, 16
1:	rol rax, 4
	mov edx, eax
	and edx, 15
	movzx edx, byte ptr [hex_digits + rdx]
	mov byte ptr [rdi], dl
	inc rdi
	dec ecx
	jnz 1b
	mov byte ptr [rdi], 10
	mov eax, 1                      /* write(1, hex_buf, 17) */
	mov edi, 1
	lea rsi, [rip + hex_buf]
	mov edx, 17
	syscall
	ret
	.size put_hex, . - put_hex

/* The decimal number at rsi (NUL-terminated) in rax; 1 to 18 digits, else a line on
 * stderr and exit status 2. */
	.type parse_decimal, @function
parse_decimal:
	xor eax, eax
	xor ecx, ecx                    /* digits */
1:	movzx edx, byte ptr [rsi]
	test edx, edx
	jz 2f
	sub edx, '0'
	cmp edx, 9
	ja .Lbad_n
	imul rax, rax, 10
	add rax, rdx
	inc rsi
	inc ecx
	cmp ecx, 18
	jbe 1b
	jmp .Lbad_n
2:	test ecx, ecx
	jz .Lbad_n
	ret
.Lbad_n:
	mov eax, 1                      /* write(2, usage, len) */
	mov edi, 2
	lea rsi, [rip + usage_msg]
	lea rdx, [rip + usage_end]
	sub rdx, rsi
	syscall
	mov eax, 231                    /* exit_group(2) */
	mov edi, 2
	syscall
	.size parse_decimal, . - parse_decimal

/* A direct call's target. */
	.type leaf, @function
leaf:
	lea r12, [r12 + rax + 1]
	ret
	.size leaf, . - leaf

/* The call table's four targets (k = 0..3), of different lengths. */
	.type op0, @function
op0:
	add r12, 1
	ret
	.size op0, . - op0
	.type op1, @function
op1:
	xor r12, 0x55
	rol r12, 3
	ret
	.size op1, . - op1
	.type op2, @function
op2:
	imul r12, r12, 3
	ret
	.size op2, . - op2
	.type op3, @function
op3:
	sub r12, 2
	ret
	.size op3, . - op3

/* The jump table's four targets: each jumps back to after_switch. */
	.type cases, @function
cases:
case0:	add r12, 11
	jmp after_switch
case1:	xor r12, 0x3c
	jmp after_switch
case2:	ror r12, 5
	jmp after_switch
case3:	add r12, r13
	jmp after_switch
	.size cases, . - cases

/* A function with a stack frame: its locals take one access of every width. */
	.type frame, @function
frame:
	push rbp
	mov rbp, rsp
	sub rsp, 32
	.globl ibs_local8
ibs_local8:
	mov qword ptr [rbp - 8], r12
	mov dword ptr [rbp - 12], r13d
	mov word ptr [rbp - 14], ax
	mov byte ptr [rbp - 15], al
	.globl ibs_local16
ibs_local16:
	movdqu xmmword ptr [rbp - 32], xmm0
	movdqu xmm2, xmmword ptr [rbp - 32]
	movq rdx, xmm2
	movzx ecx, byte ptr [rbp - 15]
	add rdx, rcx
	movzx ecx, word ptr [rbp - 14]
	add rdx, rcx
	mov ecx, dword ptr [rbp - 12]
	add rdx, rcx
	.globl ibs_local_rmw
ibs_local_rmw:
	add qword ptr [rbp - 8], 1
	add rdx, qword ptr [rbp - 8]
	add r12, rdx
	leave
	ret
	.size frame, . - frame

	.section .rodata
	.p2align 3
call_table:
	.quad op0, op1, op2, op3
hex_digits:
	.ascii "0123456789abcdef"
checksum_msg:
	.ascii "checksum "
usage_msg:
	.ascii "ibs_ops: N must be 1 to 18 decimal digits\n"
usage_end:

	.data
	.p2align 4
jump_table:
	.quad case0, case1, case2, case3
g_vec_src:
	.quad 0x0123456789abcdef, 0x0fedcba987654321, 0x1111111111111111
	.globl g_q8
g_q8:	.quad 0
	.globl g_d4
g_d4:	.long 0
	.globl g_w2
g_w2:	.short 0
	.globl g_b1
g_b1:	.byte 0
	.p2align 3
	.globl chase
chase:
	.set .Lj, 0
	.rept 64
	.quad chase + 8 * ((5 * .Lj + 3) % 64)
	.set .Lj, .Lj + 1
	.endr

	.bss
	.p2align 4
	.globl g_vec
g_vec:	.skip 16
	.globl g_counter
g_counter:
	.skip 8
hex_buf:
	.skip 17
	.section .note.GNU-stack,"",@progbits
