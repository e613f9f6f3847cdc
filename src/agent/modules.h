/*
 * modules.h — the module map the launcher symbolizes against, and the
 * snapshot of the loader's list the unwinder walks (modules.c).  Normal
 * context, except the modules_snap_* readers.  Lock order: modules_lock,
 * then the writer's locks.
 */
#ifndef CBN_AGENT_MODULES_H
#define CBN_AGENT_MODULES_H

#include <link.h>
#include <stddef.h>
#include <stdint.h>

#include "agent.h"

/* The first scan (0, or -1 when no module was found); a scan (force: write
 * the records and publish the snapshot even if nothing changed); a scan if
 * a dlopen was entered since the last one (modules_pending), at a scan
 * point (dlsym, a thread start, a stack taken outside the handler). */
int modules_init(void) AGENT_HIDDEN;
void modules_scan(int force) AGENT_HIDDEN;
void modules_refresh(void) AGENT_HIDDEN;
int modules_pending(void) AGENT_HIDDEN;
/* Held around a fork (the agent's fork handlers). */
void modules_lock(void) AGENT_HIDDEN;
void modules_unlock(void) AGENT_HIDDEN;
/* 1 when taken at once (pthread_mutex_trylock) */
int modules_trylock(void) AGENT_HIDDEN;
/* A fork child's new file: the map replayed. */
void modules_after_fork_child(void) AGENT_HIDDEN;
/* A module whose file name starts with prefix is loaded. */
int modules_have(const char *basename_prefix) AGENT_HIDDEN;

/* SIGNAL-SAFE (between unwind_begin and unwind_end): dl_iterate_phdr over
 * the published module snapshot (what our libunwind calls instead of the
 * loader's), and whether a range lies in a readable segment of a known
 * module. */
int modules_snap_iterate(int (*cb)(struct dl_phdr_info *, size_t, void *), void *data)
	AGENT_HIDDEN;
int modules_snap_readable(uintptr_t addr, size_t len) AGENT_HIDDEN;
/* SIGNAL-SAFE.  addr lies in an executable segment of a snapshot module. */
int modules_snap_exec(uintptr_t addr) AGENT_HIDDEN;
unsigned modules_snap_seq(void) AGENT_HIDDEN;
/* SIGNAL-SAFE (between unwind_begin and unwind_end).  The .eh_frame_hdr of
 * the module whose code holds addr and the span of its readable segments;
 * -1 when none. */
int modules_snap_cfi(uintptr_t addr, uintptr_t *hdr, uintptr_t *lo, uintptr_t *hi) AGENT_HIDDEN;

#endif
