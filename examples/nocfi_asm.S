/*
 * nocfi_asm.S — a function written in assembly without .cfi directives, as in
 * many BLAS and codec kernels: the assembler emits no unwind information for
 * it (examples/nocfi.c).  asm_spin(n) saves two registers, reserves a little
 * stack, and counts n down.
 */
	.text
	.globl	asm_spin
	.type	asm_spin, @function
asm_spin:
	pushq	%rbx
	pushq	%r13
	subq	$40, %rsp
1:	decq	%rdi
	jnz	1b
	addq	$40, %rsp
	popq	%r13
	popq	%rbx
	ret
	.size	asm_spin, .-asm_spin
	.section .note.GNU-stack,"",@progbits
