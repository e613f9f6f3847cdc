/*
 * python.h — the agent's reading of CPython frames (docs/agent.md section 17):
 * finding the interpreter and its layout at module load (python_find.c),
 * walking the calling thread's frame chain into CBN_PYW words, signal-safe
 * (python_walk.c, declared in sigpath.h), and copying each code object's
 * names and line table once, by the thread that meets it first
 * (python_copy.c).
 * Internal to the agent.
 */
#ifndef CBN_AGENT_PYTHON_H
#define CBN_AGENT_PYTHON_H

#include <link.h>
#include <stdatomic.h>
#include <stdint.h>

#include "agent.h"
#include "cbn_pyread.h"

/* The interpreter found, published once (immutable afterwards): where it
 * is and its layout (cbn_pyread.h, shared with the launcher). */
struct py_info {
	struct cbn_py_target t;
	uintptr_t module_base;
};

/* The published interpreter, NULL until one was understood (and with
 * --python off).  Written once by python_find.c, read anywhere. */
extern _Atomic(const struct py_info *) python_info AGENT_HIDDEN;

/* python_find.c, normal context.  python_config reads CBN_PYTHON and
 * CBN_DEPTH (constructor, before the first module scan); python_module looks
 * at one module of a scan (dl_iterate_phdr's callback, mod_lock held: no
 * allocation that may need the loader, no thread made). */
void python_config(void) AGENT_HIDDEN;
void python_module(const struct dl_phdr_info *info, const char *path) AGENT_HIDDEN;
/* header.python of the image's file (again in a fork child's new one). */
void python_header_write(void) AGENT_HIDDEN;
/* The stack budget: frames of a sample (native and Python together) when an
 * interpreter is read, CBN_MAX_FRAMES unless --depth set one; else depth. */
int python_depth(int depth) AGENT_HIDDEN;

/* python_table.c: the code-object table shared by the walker and the
 * copier.  Ids 1..n (at most PY_CODES_CAP); each has the address and
 * fingerprint it was made for. */
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

/* python_find.c: cbn_pyread.h's read function for this process:
 * agent_vmread (reads that fail instead of faulting).  Signal-safe. */
int python_read(void *ctx, void *dst, uintptr_t src, size_t n) AGENT_HIDDEN;

/* python_copy.c: each code object's names, copied by the thread that meets
 * it first (python_copy_ids: sigpath.h).  Fork child: a new file, so copy
 * again what the child uses; exit: copy what is still pending. */
void python_after_fork_child(void) AGENT_HIDDEN;
void python_exit(void) AGENT_HIDDEN;

#endif
