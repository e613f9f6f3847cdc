/*
 * unwind_nocfi.h — the parts of unwind.c that unwind_nocfi.c uses: libunwind's
 * unwind tables and cursor, and reads of the unwound stack.  All SIGNAL-SAFE,
 * between unwind_begin and unwind_end.
 */
#ifndef CBN_AGENT_UNWIND_NOCFI_H
#define CBN_AGENT_UNWIND_NOCFI_H

#include <stdint.h>
#include <ucontext.h>

/* 1 when libunwind has unwind information (an FDE) for pc. */
int unwind_has_cfi(uint64_t pc) __attribute__((visibility("hidden")));
/* libunwind's cursor (c: an unw_cursor_t): init from uc (signal_frame: its
 * pc is exact, not a return address), step, read a register. */
int unwind_cursor_init(void *c, const ucontext_t *uc, int signal_frame)
	__attribute__((visibility("hidden")));
int unwind_cursor_step(void *c) __attribute__((visibility("hidden")));
int unwind_cursor_reg(void *c, int reg, uint64_t *v) __attribute__((visibility("hidden")));
/* A word of memory at addr (8-aligned), 0 or -1. */
int unwind_word(uintptr_t addr, uint64_t *v) __attribute__((visibility("hidden")));

#endif
