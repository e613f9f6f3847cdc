/*
 * python_table.h — the code-object table of the agent's Python reading
 * (python_table.c, docs/agent.md section 17), shared by the walker
 * (python_walk.c) and the copier (python_copy.c).  Ids 1..n (at most
 * PY_CODES_CAP); each has the address and fingerprint it was made for.
 */
#ifndef CBN_AGENT_PYTHON_TABLE_H
#define CBN_AGENT_PYTHON_TABLE_H

#include <stdatomic.h>
#include <stdint.h>

#include "agent.h"

#define PY_TABLE_SIZE (1u << 16)
#define PY_CODES_CAP (PY_TABLE_SIZE / 4 * 3)

struct py_code {
	_Atomic uint64_t addr;       /* 0 until published */
	uint64_t key;                /* fingerprint (address and header fields) */
	_Atomic uint32_t want;       /* the generation (a fork child's file) that needs it */
	_Atomic uint32_t copied;     /* the generation whose file has its PY_CODE (or whose
				      * copier claimed it), 0 */
};
extern struct py_code *python_codes AGENT_HIDDEN;
extern _Atomic uint32_t python_ncodes AGENT_HIDDEN; /* ids handed out */
extern _Atomic uint32_t python_gen AGENT_HIDDEN;    /* 1, +1 in each fork child */
extern _Atomic uint32_t python_retired AGENT_HIDDEN; /* slots retired (python_code_retire) */

/* SIGNAL-SAFE: what a cache of ids checks an entry against: the
 * generation, and the retirements since (each makes every entry stale). */
static inline uint32_t python_stamp(void)
{
	return atomic_load_explicit(&python_gen, memory_order_relaxed) ^
	       (atomic_load_explicit(&python_retired, memory_order_relaxed) << 12);
}

/* Normal context, once (python_find.c, when an interpreter is found). */
int python_table_init(void) AGENT_HIDDEN;

/* Ids a walk met first in this generation, to copy at its end. */
#define PY_FRESH 32
struct py_fresh {
	uint32_t id[PY_FRESH];
	int n;
};
/* SIGNAL-SAFE: the id of (code, key), made on first sight; 0 when the table
 * is full or the slot is being published by another thread this instant.
 * An id new to this generation goes into fresh (its names are copied). */
uint32_t python_code_id(uintptr_t code, uint64_t key, struct py_fresh *fresh) AGENT_HIDDEN;

/*
 * Normal context (--calls, under the GIL): what tells two code objects of
 * one fingerprint apart, the first line and the lengths and last 8
 * characters of the qualified name and the file name.  The
 * fingerprint holds the object's address and its constants' and names'
 * tuples, and when a module's objects all die, an allocator that hands
 * memory back last-in first-out can put another module's objects of the
 * same shape at the same addresses: two classes whose bodies are `pass`
 * (`class TestPyIndent(TestIndent, PyTest): pass` in test_json's
 * test_indent, then TestPyScanstring in test_scanstring) were counted as
 * one.  Read on the counting's slow path only.
 */
struct cbn_py_layout;
uint64_t python_code_ident(const struct cbn_py_layout *L, uintptr_t code) AGENT_HIDDEN;

/* Normal context (--calls): id's slot stops answering for key, so that the
 * next code object with that fingerprint gets an id of its own (another
 * object that took a dead one's address and tuples' addresses). */
void python_code_retire(uint64_t key, uint32_t id) AGENT_HIDDEN;

#endif
