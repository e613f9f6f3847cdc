/*
 * fix_asm.S — a function written in assembly, for symfix_asm: built with
 * -g, the assembler writes its own DW_TAG_subprogram (a name and a range,
 * no DW_AT_decl_file or decl_line), as it does for glibc's string
 * functions and for OCaml's native code.  fix_asm_fn(mark) calls mark
 * ("asm") from inside itself.
 */
	.text
	.globl	fix_asm_fn
	.type	fix_asm_fn, @function
fix_asm_fn:
	pushq	%rbx			/* MARK:asm_entry */
	movq	%rdi, %rbx
	leaq	.Lfix_asm_tag(%rip), %rdi
	call	*%rbx			/* MARK:asm_call */
	popq	%rbx
	ret
	.size	fix_asm_fn, .-fix_asm_fn

	.section .rodata
.Lfix_asm_tag:
	.string	"asm"

	.section .note.GNU-stack,"",@progbits
