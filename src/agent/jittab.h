/*
 * jittab.h — the ranges the program made executable outside the modules
 * (JIT regions, and files it mapped itself), in a lock-free table of 1024
 * slots (jittab.c): jitmap.c fills it from the program's mmap, mprotect and
 * munmap; the unwinding past code without CFI asks it whether a return
 * address lies in such code.  SIGNAL-SAFE: atomics only.
 */
#ifndef CBN_AGENT_JITTAB_H
#define CBN_AGENT_JITTAB_H

#include <stdint.h>

#include "agent.h"

/* Remember [start, start+len), a file's range when file is set; a full
 * table forgets it (its records are written all the same). */
void jittab_remember(uint64_t start, uint64_t len, int file) AGENT_HIDDEN;
/* 1 when pc lies in a remembered range. */
int jittab_holds(uint64_t pc) AGENT_HIDDEN;
/* The slots ever taken: the bound of a scan with jittab_slot. */
int jittab_used(void) AGENT_HIDDEN;
/* Slot i's range and whether it is a file's: 0 when the slot is free. */
int jittab_slot(int i, uint64_t *start, uint64_t *len, int *file) AGENT_HIDDEN;
/* Free slot i if it still holds the range that starts at start. */
void jittab_drop(int i, uint64_t start) AGENT_HIDDEN;

#endif
