/*
 * python_counts.h — where --calls keeps each function's counts
 * (python_counts.c): in the session file itself, so that a process killed by
 * a signal keeps every call counted before it died.
 */
#ifndef CBN_AGENT_PYTHON_COUNTS_H
#define CBN_AGENT_PYTHON_COUNTS_H

#include <stdint.h>

#include "agent.h"

/* Blocks of CBN_PY_CALLS_BATCH entries by id; NULL until the first count
 * of an id in the block (python_counts_block). */
extern struct cbn_py_call_count *python_count_blocks[] AGENT_HIDDEN;

/* Normal context, under the GIL.  The block of ids block * BATCH onwards:
 * a PY_CALLS record in the session file, whose entries the callers count
 * in place (the file is mapped shared: a reader sees them whether or not
 * the process ends well), or private memory when the file has no room left
 * (written by python_counts_flush).  Never NULL. */
struct cbn_py_call_count *python_counts_block(uint32_t block, uint16_t flags) AGENT_HIDDEN;

/* Id's entry: its calls and primitive calls, counted in place. */
static inline struct cbn_py_call_count *python_count_of(uint32_t id, uint16_t flags)
{
	struct cbn_py_call_count *b = python_count_blocks[id / CBN_PY_CALLS_BATCH];

	if (__builtin_expect(!b, 0))
		b = python_counts_block(id / CBN_PY_CALLS_BATCH, flags);
	return &b[id % CBN_PY_CALLS_BATCH];
}

/* Normal context, under the GIL: a record of head->size bytes in the
 * table's chunk of the session file (never reused by a ring), zeroed, head
 * (head_size bytes) copied in and committed: filled and counted in place
 * by the caller after.  NULL when the file has no room left.  The builtins'
 * table (python_ccalls.c) takes its blocks here too. */
void *python_counts_record(const struct cbn_rec *head, uint32_t head_size) AGENT_HIDDEN;

/* Id's calls so far (0: never counted). */
uint64_t python_counts_calls(uint32_t id) AGENT_HIDDEN;

/* Under the GIL: the flags every block in the file carries from now on
 * (a flag set during the run, CBN_PYCALLS_SWITCHED, is in the file even if
 * the process is killed). */
void python_counts_flags(uint16_t flags) AGENT_HIDDEN;

/* Normal context.  _flush writes the counts of the blocks that are not in
 * the file as PY_CALLS records (then zero), and a record of state and flags
 * alone; _after_fork_child forgets the parent's blocks (a child counts into
 * its own file from zero). */
void python_counts_flush(uint32_t state, uint16_t flags) AGENT_HIDDEN;
void python_counts_after_fork_child(void) AGENT_HIDDEN;

#endif
