/*
 * linkmap.h — the loader's list of modules read without its lock
 * (linkmap.c).  Normal context; callers hold modules_lock.
 */
#ifndef CBN_AGENT_LINKMAP_H
#define CBN_AGENT_LINKMAP_H

#include <stddef.h>

#include "agent.h"

/* dl_iterate_phdr without the loader's lock: 0 when the walk was whole,
 * -EAGAIN while the loader changes the list, else the callback's value.
 * The dlclose interposer (modules.c) brackets the real call with
 * close_begin and close_end. */
struct dl_phdr_info;
int linkmap_walk(int (*cb)(struct dl_phdr_info *, size_t, void *), void *arg) AGENT_HIDDEN;
void linkmap_close_begin(void) AGENT_HIDDEN;
void linkmap_close_end(void) AGENT_HIDDEN;

#endif
