/*
 * linkmap.h — the loader's list of modules read without its lock
 * (linkmap.c).  Normal context; callers hold modules_lock.
 */
#ifndef CBN_AGENT_LINKMAP_H
#define CBN_AGENT_LINKMAP_H

#include <stddef.h>

#include "agent.h"

#include <link.h>

/* dl_iterate_phdr without the loader's lock: 0 when the walk was whole,
 * -EAGAIN while the loader changes the list, else the callback's value.
 * known (may be NULL) gives the program headers kept from an earlier walk
 * of the object loaded at addr with that name whose dynamic section is at
 * ld, and their count in *phnum, or NULL: a walk then reads only the nodes
 * and names of the objects it knows, not their headers' page.  The
 * dlclose interposer (modules.c) brackets the real call with close_begin
 * and close_end. */
typedef const ElfW(Phdr) *(*linkmap_known_fn)(uintptr_t addr, const char *name, uintptr_t ld,
					      ElfW(Half) *phnum, void *arg);
int linkmap_walk(int (*cb)(struct dl_phdr_info *, size_t, void *), linkmap_known_fn known,
		 void *arg) AGENT_HIDDEN;
void linkmap_close_begin(void) AGENT_HIDDEN;
void linkmap_close_end(void) AGENT_HIDDEN;

#endif
