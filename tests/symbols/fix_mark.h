/*
 * fix_mark.h — the symbolizer fixtures' marker: fix_mark(tag) prints
 * "MARK <tag> <module path> 0x<vaddr>" where vaddr is its return address
 * minus one minus the caller's load bias, i.e. exactly what the agent and
 * loader hand sym_resolve() for a caller frame.
 */
#ifndef FIX_MARK_H
#define FIX_MARK_H

typedef void (*fix_mark_fn)(const char *tag);

#endif
