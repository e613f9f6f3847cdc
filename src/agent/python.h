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

/*
 * Offsets of everything the agent reads, for one CPython minor version (x86-64,
 * default non-debug, non-free-threaded builds): a built-in table for 3.11 and
 * 3.12, _Py_DebugOffsets for 3.13 (python_find.c).
 */
struct py_layout {
	uint32_t version;            /* PY_VERSION_HEX */
	/* _PyRuntime */
	uint32_t rt_tss;             /* the gilstate TSS key (Py_tss_t: int, pthread_key_t) */
	uint32_t rt_finalizing;      /* _finalizing: non-NULL while the runtime finalizes */
	uint32_t rt_interp_head;     /* interpreters.head */
	/* PyInterpreterState, PyThreadState, _PyStackChunk */
	uint32_t is_threads_head;
	uint32_t ts_next, ts_native_tid, ts_datastack;
	int32_t ts_cframe;           /* tstate->cframe (3.11, 3.12), -1: none */
	uint32_t cf_current;         /* _PyCFrame.current_frame, or tstate->current_frame (3.13) */
	/* _PyInterpreterFrame */
	uint32_t fr_code, fr_previous, fr_instr, fr_owner, fr_size;
	int32_t fr_is_entry;         /* 3.11: is_entry (bool), -1: none */
	uint32_t owner_marker;       /* owner >= this: a C entry frame, not the program's
				      * (3.12+: FRAME_OWNED_BY_CSTACK = 3); 256 in 3.11 */
	int instr_prev;              /* 1: fr_instr is prev_instr (3.11, 3.12), 0: instr_ptr */
	/* PyObject, PyCodeObject */
	uint32_t ob_type, ob_size;
	uint32_t co_consts, co_names;    /* in the header's first cache line: the fingerprint */
	uint32_t co_flags, co_firstlineno, co_filename, co_name, co_qualname, co_linetable, co_code;
	uint32_t co_header;          /* bytes of the code object's header read by the copier */
	/* str and bytes (for the copier) */
	uint32_t uni_length, uni_state, uni_ascii_size, uni_compact_size;
	uint32_t bytes_size, bytes_sval;
};

/* The interpreter found, published once (immutable afterwards). */
struct py_info {
	struct py_layout L;
	uintptr_t runtime;           /* &_PyRuntime */
	uintptr_t code_type;         /* &PyCode_Type */
	uintptr_t unicode_type;      /* &PyUnicode_Type */
	uintptr_t bytes_type;        /* &PyBytes_Type */
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

/* python_walk.c: the code-object table shared by the walker and the copier.
 * Ids 1..n; each has the address and fingerprint it was made for. */
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
/* n bytes at src into dst, or -1 when any is unmapped (process_vm_readv on
 * our own pid; probe and read where that is refused).  Signal-safe. */
int python_vmread(void *dst, uintptr_t src, size_t n) AGENT_HIDDEN;
/* Normal context (the off-CPU sampler): another thread's Python frames, as
 * python_stack's, read by copies; 0 when it runs none or a read failed. */
int python_stack_of(uint32_t tid, uint64_t *out, int max) AGENT_HIDDEN;
/* The fingerprint of a code object (walker and copier): its address and the
 * fields of its first cache line, co_consts, co_names, co_flags and its size
 * (another code object at the same address has other tuples). */
uint64_t python_code_key(uintptr_t code, uint64_t consts, uint64_t names, uint32_t flags,
			 uint64_t units) AGENT_HIDDEN;

/* python_copy.c: each code object's names, copied by the thread that meets
 * it first (python_copy_ids: sigpath.h).  Fork child: a new file, so copy
 * again what the child uses; exit: copy what is still pending. */
void python_after_fork_child(void) AGENT_HIDDEN;
void python_exit(void) AGENT_HIDDEN;

#endif
