/*
 * cbn_pyread.h — reading a CPython 3.11-3.13 interpreter's structures
 * (docs/agent.md section 17) through a read function, so that the same code
 * serves the agent inside the process (its reads of its own memory that fail
 * instead of faulting) and the launcher outside it (process_vm_readv on the
 * program's pid): the layout of each version, a code object's fingerprint,
 * another thread's frame chain, and a code object's names and line table as
 * a PY_CODE record.  pyread.c; compiled into the agent and the launcher's
 * monitor.  Signal-safe when the read function is (no allocation, no lock).
 */
#ifndef CBN_PYREAD_H
#define CBN_PYREAD_H

#include <stddef.h>
#include <stdint.h>

#include "cbn_format.h"

/* Offsets of everything read, for one CPython minor version (x86-64,
 * default non-debug, non-free-threaded builds). */
struct cbn_py_layout {
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

/* An interpreter in a process: its layout and where its objects are. */
struct cbn_py_target {
	struct cbn_py_layout L;
	uintptr_t runtime;           /* &_PyRuntime */
	uintptr_t code_type;         /* &PyCode_Type */
	uintptr_t unicode_type;      /* &PyUnicode_Type */
	uintptr_t bytes_type;        /* &PyBytes_Type */
};

/* n bytes at src into dst: 0, or -1 when any of them could not be read. */
typedef int (*cbn_py_read_fn)(void *ctx, void *dst, uintptr_t src, size_t n);

/* The layout of version (PY_VERSION_HEX) of the interpreter whose
 * _PyRuntime is at runtime (3.13 reads its _Py_DebugOffsets there), or -1
 * with why. */
int cbn_py_layout_of(uintptr_t runtime, uint32_t version, cbn_py_read_fn rd, void *ctx,
		     struct cbn_py_layout *L, char *why, size_t len);

/* The fingerprint of a code object: its address and the fields of its first
 * cache line, co_consts, co_names, co_flags and its size (another code
 * object at the same address has other tuples). */
uint64_t cbn_py_code_key(uintptr_t code, uint64_t consts, uint64_t names, uint32_t flags,
			 uint64_t units);

/* One frame of a chain read from outside the thread. */
struct cbn_py_frame {
	uintptr_t code;              /* the code object */
	uint64_t key;                /* its fingerprint */
	uint32_t unit;               /* CBN_PYW unit: the instruction + 1, 0 first, UNKNOWN */
	uint16_t flags;              /* CBN_PYW_ENTRY, CBN_PYW_TRUNC */
};

/*
 * The Python frames of thread tid of the process t is in, leaf first, at
 * most max (the last one kept flagged TRUNC when the chain goes on): its
 * thread state from the interpreter's list (native_thread_id), then its
 * chain, every read a copy (the list and the chain may change under us: a
 * read fails instead of faulting, and the caller confirms the thread did not
 * move).  0 when the thread runs no Python, the runtime finalizes, or a
 * read failed.
 */
int cbn_py_frames_of(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uint32_t tid,
		     struct cbn_py_frame *out, int max);

/*
 * The interpreter's thread states, at most max: each one's native thread id
 * into tids and its address into ts, in the interpreter's order; how many
 * (0: none, the runtime finalizes, or the first read failed; a read that
 * fails later ends the list there).  With cbn_py_frames_at, a reader of many
 * threads walks the list once instead of once a thread.
 */
int cbn_py_threads(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uint32_t *tids,
		   uintptr_t *ts, int max);

/*
 * The Python frames of thread tid whose thread state was at ts (from
 * cbn_py_threads), as cbn_py_frames_of; -1 when ts no longer holds tid's
 * state (the thread ended, its state freed or reused: read the list again).
 */
int cbn_py_frames_at(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uintptr_t ts,
		     uint32_t tid, struct cbn_py_frame *out, int max);

/* The largest PY_CODE record: room to reserve for cbn_py_code_record. */
#define CBN_PY_REC_MAX                                                                             \
	CBN_REC_ALIGN(sizeof(struct cbn_rec_py_code) + 2 * (CBN_PY_NAME_MAX + 1) +                   \
		      CBN_PY_LINETABLE_MAX)

/*
 * The PY_CODE record for code (id, the fingerprint it was seen with) built
 * in r (CBN_PY_REC_MAX bytes): qualified name, file name, first line, line
 * table.  The fingerprint is checked before and after the copy; an object
 * that changed or died is recorded as gone (CBN_PYC_GONE).  Returns the
 * record's size; *gone set when it was.
 */
size_t cbn_py_code_record(const struct cbn_py_target *t, cbn_py_read_fn rd, void *ctx, uint32_t id,
			  uintptr_t code, uint64_t key, struct cbn_rec_py_code *r, int *gone);

#endif
