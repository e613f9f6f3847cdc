/*
 * python_find.h — finding this image's CPython interpreter and its layout
 * at module load (python_find.c, docs/agent.md section 17).  Below the
 * module map, whose scan asks it about each module.
 */
#ifndef CBN_AGENT_PYTHON_FIND_H
#define CBN_AGENT_PYTHON_FIND_H

#include <link.h>
#include <stdatomic.h>
#include <stddef.h>
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
 * --python off).  Written once, read anywhere. */
extern _Atomic(const struct py_info *) python_info AGENT_HIDDEN;

/* cbn_pyread.h's read function for this process: agent_vmread (reads that
 * fail instead of faulting).  SIGNAL-SAFE. */
int python_read(void *ctx, void *dst, uintptr_t src, size_t n) AGENT_HIDDEN;

/* Normal context.  python_config reads CBN_PYTHON and CBN_DEPTH
 * (constructor, before the first module scan); python_module looks at one
 * module of a scan (dl_iterate_phdr's callback, mod_lock held: no
 * allocation that may need the loader, no thread made). */
void python_config(void) AGENT_HIDDEN;
void python_module(const struct dl_phdr_info *info, const char *path) AGENT_HIDDEN;
/* header.python of the image's file (again in a fork child's new one). */
void python_header_write(void) AGENT_HIDDEN;
/* SIGNAL-SAFE.  The stack budget: frames of a sample (native and Python
 * together) when an interpreter is read, CBN_MAX_FRAMES unless --depth set
 * one; else depth. */
int python_depth(int depth) AGENT_HIDDEN;

#endif
